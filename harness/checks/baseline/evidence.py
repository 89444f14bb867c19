"""Tonight's attempt against what held on every accepted night: ``baseline.<kind>`` evidence.

``case_evidence(inv, tonight, kinds)`` is pure: the learned ``CaseInvariants``, tonight's
``CaseSample`` (``samples.from_observation``) and the kinds the case is held to
(``BaselineModel.kinds_for``) in; the evidence items and the structured changes
(results.json ``cases[].baseline.changes``) out. A kind without an invariant (it varied, or
too few nights) produces no evidence: never a pass on nothing. The rule of each kind:
docs/CASES.md "Baseline checks".
"""

from __future__ import annotations

from typing import Any

from harness.checks.base import clip
from harness.checks.baseline import factcheck
from harness.checks.baseline.learn import LANGUAGE_MIN_CHARS, Band, CaseInvariants, TurnInvariants, language_of
from harness.checks.provider import ProviderCalls, explained
from harness.checks.baseline.samples import CaseSample, TurnSample, hosts, links, state_keys, tool_order
from harness.types import Evidence

EVAL = "baseline@1"


def _nights(inv: CaseInvariants) -> str:
    return f"held on {inv.samples} of {inv.samples} accepted sample(s)"


def _ev(check: str, turn: int | None, passed: bool | None, expected: str, observed: str, reason: str,
        score: float | None = None) -> Evidence:
    return Evidence(check=check, turn=turn, availability="ready", passed=passed, score=score,
                    expected=clip(expected), observed=clip(observed), reason=clip(reason, 600), evaluator=EVAL)


def _span(r: tuple[int, int]) -> str:
    return str(r[0]) if r[0] == r[1] else f"{r[0]}..{r[1]}"


def _structure(t: TurnInvariants, x: TurnSample, kinds: frozenset[str], n: str,
               changes: list[dict]) -> list[Evidence]:
    out = []
    i = t.index

    def add(kind: str, ok: bool, expected: str, observed: str, reason: str) -> None:
        out.append(_ev(f"baseline.{kind}", i, ok, f"{expected} ({n})", observed, reason))
        if not ok:
            changes.append({"turn": i, "kind": kind, "change": "changed", "expected": expected,
                            "observed": observed, "claim_expected": "", "claim_observed": ""})

    if "replies" in kinds and t.replies is not None:
        parts, seen = [f"{_span(t.replies)} repl(ies)"], [f"{len(x.texts)} repl(ies)"]
        bad = []
        if not t.replies[0] <= len(x.texts) <= t.replies[1]:
            bad.append(f"{len(x.texts)} replies where the accepted nights sent {_span(t.replies)}")
        for name, want, got in (("kinds", t.kinds, x.kinds), ("buttons", t.buttons, x.buttons),
                                ("parse_mode", t.parse_modes, x.parse_modes)):
            if want is None:
                continue
            parts.append(f"{name} {list(want)}")
            seen.append(f"{name} {list(got)}")
            if tuple(got) != tuple(want) and (len(got) == len(want) or not bad):  # a count change says it all
                bad.append(f"{name} {list(got)} where the accepted nights had {list(want)}")
        add("replies", not bad, ", ".join(parts), ", ".join(seen),
            "; ".join(bad) if bad else "the replies have the accepted shape")
    if "post" in kinds and t.posts is not None:
        ok = t.posts[0] <= x.posts <= t.posts[1]
        add("post", ok, f"{_span(t.posts)} post(s)", f"{x.posts} post(s)",
            "posts as on the accepted nights" if ok else f"{x.posts} post(s) where the accepted nights sent "
                                                        f"{_span(t.posts)}")
    if "tools" in kinds and t.tools is not None:
        got = tool_order(x.tools)
        ok = got == t.tools
        why = ("the same tools in the same order" if ok else
               f"tools {list(got)}, the accepted nights called {list(t.tools)}"
               + (" (same tools, another order)" if set(got) == set(t.tools) else ""))
        add("tools", ok, f"tools {list(t.tools)} in this order", f"{list(got)}", why)
    if "llm_calls" in kinds and t.llm_calls is not None:
        ok = t.llm_calls[0] <= x.llm_calls <= t.llm_calls[1]
        add("llm_calls", ok, f"{_span(t.llm_calls)} LLM call(s)", f"{x.llm_calls}",
            "LLM calls as on the accepted nights" if ok else
            f"{x.llm_calls} LLM calls where the accepted nights made {_span(t.llm_calls)}")
    if "state" in kinds and t.state is not None:
        got = state_keys(x.state)
        ok = got == t.state
        if got is None:
            why = "the state probe gave nothing this turn"
        elif ok:
            why = "the same state keys"
        else:
            why = (f"state keys added {sorted(got - t.state)}, removed {sorted(t.state - got)}")
        add("state", ok, f"state keys {sorted(t.state)}", str(sorted(got)) if got is not None else "no state", why)
    return out


def _banded(kind: str, t: TurnInvariants, value: float, b: Band, n: str, unit: str, what: str,
            changes: list[dict]) -> Evidence:
    ok = b.holds(value)
    reason = (f"{what} {value:.0f}{unit} within {b.shown(unit)}" if ok else
              f"{what} {value:.0f}{unit} outside {b.shown(unit)}"
              + (f": {value / b.seen_hi:.1f}x the most any accepted night had" if b.seen_hi and value > b.hi else ""))
    if not ok:
        changes.append({"turn": t.index, "kind": kind, "change": "changed", "expected": b.shown(unit),
                        "observed": f"{value:.0f}{unit}", "claim_expected": "", "claim_observed": ""})
    return _ev(f"baseline.{kind}", t.index, ok, f"{what} {b.shown(unit)} ({n})", f"{value:.0f}{unit}", reason)


def _varying(t: TurnInvariants, x: TurnSample, kinds: frozenset[str], n: str, changes: list[dict]) -> list[Evidence]:
    out = []
    i = t.index
    if "length" in kinds and t.length is not None:
        out.append(_banded("length", t, len(x.text), t.length, n, " chars", "reply length", changes))
    if "tokens" in kinds and t.tokens_in is not None and t.tokens_out is not None:
        a = _banded("tokens", t, x.tokens_in, t.tokens_in, n, "", "input tokens", changes)
        b = _banded("tokens", t, x.tokens_out, t.tokens_out, n, "", "output tokens", changes)
        ok = a.passed and b.passed
        out.append(_ev("baseline.tokens", i, ok, f"{a.expected}; {b.expected}", f"in {a.observed}, out {b.observed}",
                       f"{a.reason}; {b.reason}"))
    code = language_of(x.text) if "language" in kinds and t.language is not None else None
    if code is not None:  # a reply too short to tell its language by is not judged on it
        ok = code == t.language
        why = f"written in {t.language}" if ok else f"looks like {code} (lingua), the accepted nights wrote {t.language}"
        out.append(_ev("baseline.language", i, ok, f"written in {t.language} ({n}, replies of {LANGUAGE_MIN_CHARS}+ "
                                                   "characters)", str(code), why))
        if not ok:
            changes.append({"turn": i, "kind": "language", "change": "changed", "expected": t.language,
                            "observed": str(code), "claim_expected": "", "claim_observed": ""})
    if "links" in kinds and (t.links is not None or t.hosts is not None):
        got = links(x.text)
        if t.links is not None:
            ok, want, seen = got == t.links, sorted(t.links), sorted(got)
        else:
            ok, want, seen = hosts(got) == t.hosts, sorted(t.hosts or ()), sorted(hosts(got))
        out.append(_ev("baseline.links", i, ok, f"links {want} ({n})", str(seen),
                       "the same links" if ok else f"links {seen}, the accepted nights linked {want}"))
        if not ok:
            changes.append({"turn": i, "kind": "links", "change": "changed", "expected": ", ".join(want),
                            "observed": ", ".join(seen), "claim_expected": "", "claim_observed": ""})
    if "facts" in kinds and t.claims is not None and (t.claims or any(t.turn_held.values())):
        found = factcheck.compare_turn(t, x.text)
        passed, score = factcheck.verdict(found)
        held = sum(len(c.anchor.stems) > 0 for c in t.claims)
        reason = ("the same facts as every accepted night" if passed else
                  ("contradicts the accepted nights: " if passed is False else "facts dropped or new: ")
                  + factcheck.describe(found))
        out.append(_ev("baseline.facts", i, passed, f"{held} claim(s) and their facts ({n})",
                       clip(x.text, 300), reason, score=score))
        changes += [c.as_dict(i) for c in found]
    return out


def case_evidence(inv: CaseInvariants, tonight: CaseSample, kinds: frozenset[str],
                  provider: ProviderCalls | None = None) -> tuple[list[Evidence], list[dict[str, Any]]]:
    """Every ``baseline.*`` evidence item of one attempt, and its changes (results.json form).
    ``provider``: the accepted nights' LLM calls, run-wide (``checks/provider.py``), which may
    explain a latency over the band by a rare slow call."""
    evidence: list[Evidence] = []
    changes: list[dict[str, Any]] = []
    n = _nights(inv)
    for t in inv.turns:
        if t.index >= len(tonight.turns):
            continue  # a turn tonight never reached: the case's own checks say why
        x = tonight.turns[t.index]
        evidence += _structure(t, x, kinds, n, changes)
        evidence += _varying(t, x, kinds, n, changes)
    if "latency" in kinds and inv.latency is not None and tonight.latency_ms is not None:
        evidence.append(latency_evidence(inv, tonight, provider, n, changes))
    return evidence, changes


def latency_evidence(inv: CaseInvariants, tonight: CaseSample, provider: ProviderCalls | None, n: str = "",
                     changes: list[dict[str, Any]] | None = None, *, shift: str = "") -> Evidence:
    """``baseline.latency``: within the band, or over it only by what the provider's rare slow
    calls explain (none when ``shift`` says tonight's calls are slower across the run)."""
    b, value, n = inv.latency, float(tonight.latency_ms), n or _nights(inv)
    assert b is not None
    why = explained(None if shift else provider, tonight.llm_ms)
    ok = value <= b.hi or value - why.ms <= b.hi
    if value <= b.hi:
        reason = f"latency {value:.0f}ms within {b.hi:.0f}ms"
    elif ok:
        reason = (f"latency {value:.0f}ms > {b.hi:.0f}ms, but {why.shown(provider)}: "
                  f"{value - why.ms:.0f}ms without them, within {b.hi:.0f}ms")
    else:
        reason = (f"latency {value:.0f}ms > {b.hi:.0f}ms: {value / b.seen_hi:.1f}x the slowest accepted night "
                  f"({b.seen_hi:.0f}ms)")
        if shift:
            reason += f"; no slow call is excused: {shift}"
        elif why.ms:
            reason += f"; {why.shown(provider)}, not enough"
    if not ok and changes is not None:
        changes.append({"turn": None, "kind": "latency", "change": "changed", "expected": f"<= {b.hi:.0f}ms",
                        "observed": f"{value:.0f}ms", "claim_expected": "", "claim_observed": ""})
    return _ev("baseline.latency", None, ok, f"<= {b.hi:.0f}ms (accepted nights {b.seen_lo:.0f}.."
                                             f"{b.seen_hi:.0f}ms; {n})", f"{value:.0f}ms", reason)
