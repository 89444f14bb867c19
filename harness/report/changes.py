"""What changed against the baseline: tonight's reply beside the accepted one, grouped by kind.

A case is shown when one of its ``baseline.*`` evidence items failed or is soft (docs/CASES.md
"Baseline checks"). Its changes come from results.json ``cases[].baseline.changes`` (each with
``turn``, ``kind``, ``change``, ``expected``, ``observed``, ``claim_expected``, ``claim_observed``)
and, for a case without that block, from the evidence itself (the kind read from the check's
name and its reason). The accepted reply comes from ``cases[].baseline.turns[].text``, else
from the base run the reports were given (``RunContext.base``: the accepted baseline with its
per-case acceptances), else it is not known and said so.

``baseline_changes(results, base)`` returns the groups, largest first: one group per kind of
change ("12 cases: a number changed", "3 cases: replies split into more messages"), each case
listed once in a group with the turns concerned and the facts to mark (``Pair.spans``).
report.html, summary.md and the PR comment render these; nothing here writes or escapes. The
facts marked in the texts: marks.py.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any, Mapping, Sequence

from harness.report.marks import Mark, excerpt, mark_spans

log = logging.getLogger("harness.report.changes")


#: Kinds whose expected/observed are words of the reply (marked in the texts); the other
#: kinds are counts, bands and sets, shown beside the texts but not searched in them.
TEXT_KINDS = ("number", "unit", "year", "date", "name", "hedge", "negation", "direction", "links", "facts")

#: Kinds shown with the two replies side by side; the others (tokens, latency, tools, llm_calls,
#: state) are figures about the turn, shown as their expected -> observed line alone.
REPLY_KINDS = (*TEXT_KINDS, "replies", "post", "length", "language")

#: Group key -> what the heading says after "N cases:".
TITLES = {
    "number": "a number changed", "unit": "a unit changed", "year": "a year changed", "date": "a date changed",
    "name": "a name changed", "hedge": "a hedge changed (“may reduce” → “reduces”)",
    "negation": "a negation flipped", "direction": "a direction reversed", "facts": "a fact changed",
    "dropped": "a fact of every accepted night is missing", "new": "a fact no accepted night said",
    "split": "replies split into more messages", "merged": "fewer messages than every accepted night",
    "replies": "the replies changed (kinds, buttons or parse mode)", "post": "the post changed",
    "tools": "other tools, or another order", "llm_calls": "another number of LLM calls",
    "tokens": "tokens per turn outside the accepted band", "state": "other state keys",
    "length": "reply length outside the accepted band", "language": "another language", "links": "the links changed",
    "latency": "slower than the accepted nights", "latency_trend": "later cases slower (a run-level trend)",
}
#: Words of a ``baseline.facts`` reason that tell its kind, when results.json has no changes block.
_REASON_KINDS = (("hedge", "hedge"), ("modal", "hedge"), ("negat", "negation"), ("direction", "direction"),
                 ("unit", "unit"), ("percentage point", "unit"), ("year", "year"), ("date", "date"),
                 ("name", "name"), ("number", "number"), ("digit", "number"))


@dataclass(frozen=True)
class Change:
    """One thing that differs from the accepted nights, on one turn (or the whole case)."""

    turn: int | None
    """The turn (None: the whole case, e.g. latency)."""
    kind: str
    """``number``, ``hedge``, ``replies``, ``tokens``... (docs/CASES.md ``changes[].kind``)."""
    change: str
    """``contradicted`` (fails), ``dropped`` / ``new`` (soft), ``changed`` (a structural invariant broke)."""
    expected: str
    """What the accepted nights showed."""
    observed: str
    """Tonight's value."""
    claim_expected: str = ""
    """The accepted claim sentence the fact sits in (facts only)."""
    claim_observed: str = ""
    """Tonight's aligned claim sentence."""
    reason: str = ""
    """The evidence's reason, when the change was read from evidence."""

    @property
    def group(self) -> str:
        return group_of(self)


@dataclass(frozen=True)
class Pair:
    """One turn: the accepted reply beside tonight's, with the facts to mark in each."""

    turn: int | None
    baseline: tuple[str, ...] | None
    """The accepted messages (one string when results.json keeps them joined); None: not known."""
    tonight: tuple[str, ...]
    """Tonight's messages, one string each (a photo without caption shows as ``[photo]``)."""
    mark_baseline: tuple[Mark, ...] = ()
    mark_tonight: tuple[Mark, ...] = ()

    def spans(self, text: str, side: str) -> list[tuple[str, bool]]:
        """``text`` cut into (segment, marked) pieces for ``side`` ``baseline`` or ``tonight``."""
        return mark_spans(text, self.mark_baseline if side == "baseline" else self.mark_tonight)


@dataclass(frozen=True)
class CaseChange:
    """A case in one group: its changes of that group's kind and the turns they are on."""

    id: str
    layer: str
    status: str
    changes: tuple[Change, ...]
    pairs: tuple[Pair, ...]
    accepted_from: str = ""
    """The run its accepted record comes from, when it was accepted on its own (``--case``)."""


@dataclass(frozen=True)
class Group:
    """The cases that changed in one way."""

    key: str
    title: str
    cases: tuple[CaseChange, ...]

    @property
    def heading(self) -> str:
        n = len(self.cases)
        return f"{n} case{'s' if n != 1 else ''}: {self.title}"


def _is_baseline(e: Mapping[str, Any]) -> bool:
    return str(e.get("check") or "").startswith("baseline.")


def flagged(e: Mapping[str, Any]) -> bool:
    """Failing or soft ``baseline.*`` evidence (unavailable is neither)."""
    return (_is_baseline(e) and e.get("availability", "ready") == "ready"
            and (e.get("passed") is False or e.get("passed") is None))


def _first_int(text: str) -> int | None:
    m = re.search(r"-?\d+", text or "")
    return int(m.group()) if m else None


def group_of(c: Change) -> str:
    """The group a change is shown in: a fact's kind, ``dropped`` / ``new`` for soft facts, a
    reply count that grew is ``split``, one that shrank ``merged``; else the kind itself."""
    if c.change in ("dropped", "new"):
        return c.change
    if c.kind == "replies":
        before, after = _first_int(c.expected), _first_int(c.observed)
        if before is not None and after is not None and after != before:
            return "split" if after > before else "merged"
    return c.kind


def _turn(value: Any) -> int | None:
    """A turn index as results.json should have it; anything else is the whole case."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _from_evidence(e: Mapping[str, Any]) -> Change:
    kind = str(e.get("check"))[len("baseline."):] or "facts"
    reason = str(e.get("reason") or "")
    change = "changed"
    if kind == "facts":
        low = reason.lower()
        kind = next((k for word, k in _REASON_KINDS if word in low), "facts")
        change = "contradicted"
        if e.get("passed") is None:
            change = "new" if re.search(r"\bnew\b", low) else "dropped"
    return Change(turn=_turn(e.get("turn")), kind=kind, change=change, expected=str(e.get("expected") or ""),
                  observed=str(e.get("observed") or ""), reason=reason)


def case_changes(case: Mapping[str, Any]) -> list[Change]:
    """The changes of one case: its ``baseline.changes`` when results.json has them, else read
    from its failing and soft ``baseline.*`` evidence. Empty when no such evidence is flagged."""
    flagged_items = [e for e in case.get("evidence") or () if isinstance(e, Mapping) and flagged(e)]
    if not flagged_items:
        return []
    block = case.get("baseline") if isinstance(case.get("baseline"), Mapping) else {}
    changes = block.get("changes") if isinstance(block.get("changes"), (list, tuple)) else ()
    listed = [x for x in changes if isinstance(x, Mapping) and x.get("kind")]
    if listed:
        return [Change(turn=_turn(x.get("turn")), kind=str(x["kind"]), change=str(x.get("change") or "changed"),
                       expected=str(x.get("expected") or ""), observed=str(x.get("observed") or ""),
                       claim_expected=str(x.get("claim_expected") or ""),
                       claim_observed=str(x.get("claim_observed") or "")) for x in listed]
    return [_from_evidence(e) for e in flagged_items]


def _turn_index(t: Mapping[str, Any], position: int) -> int:
    index = _turn(t.get("index"))
    return position if index is None else index


def _messages(turn: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(str(r.get("text") or f"[{r.get('kind') or 'message'}]") for r in turn.get("replies") or ()
                 if isinstance(r, Mapping))


def _turns(case: Mapping[str, Any] | None) -> dict[int, tuple[str, ...]]:
    return {_turn_index(t, i): _messages(t) for i, t in enumerate((case or {}).get("turns") or ())
            if isinstance(t, Mapping)}


def _accepted_turns(case: Mapping[str, Any], base_case: Mapping[str, Any] | None,
                    base_is_baseline: bool) -> dict[int, tuple[str, ...]]:
    """Turn -> the accepted messages. The accepted baseline's own run (each message apart, each
    case from the run it was accepted from) comes first; the learner's copy in results.json
    (one joined text per turn) fills in, and comes first when the base is only the run before."""
    block = case.get("baseline") if isinstance(case.get("baseline"), Mapping) else {}
    turns = block.get("turns") if isinstance(block.get("turns"), (list, tuple)) else ()
    kept = {t["index"]: (str(t.get("text") or ""),) for t in turns
            if isinstance(t, Mapping) and _turn(t.get("index")) is not None}
    base_turns = _turns(base_case)
    return {**kept, **base_turns} if base_is_baseline else {**base_turns, **kept}


def _norm(word: str) -> str:
    return re.sub(r"^\W+|\W+$", "", word.lower())


def claim_diff(before: str, after: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The words of two aligned claims that differ: (indices in ``before.split()``, indices in
    ``after.split()``), compared case- and punctuation-blind, like a word diff."""
    a, b = before.split(), after.split()
    left: list[int] = []
    right: list[int] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, [_norm(w) for w in a], [_norm(w) for w in b],
                                               autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            left += range(i1, i2)
        if tag in ("replace", "insert"):
            right += range(j1, j2)
    return tuple(left), tuple(right)


def _clean(value: str) -> str:
    return re.sub(r"\s*\((?:\d+ of \d+|every|all) [^)]*\)\s*$", "", value or "").strip()


def _marks(changes: Sequence[Change], side: str) -> tuple[Mark, ...]:
    """What to mark on one side: where both aligned claims are known, the words that differ
    between them; else the fact itself, and a claim known on this side only as a whole."""
    out: list[Mark] = []
    for c in changes:
        if c.kind not in TEXT_KINDS:
            continue
        mine, other = (c.claim_expected, c.claim_observed) if side == "baseline" else (c.claim_observed,
                                                                                       c.claim_expected)
        fact = _clean(c.expected if side == "baseline" else c.observed)
        if mine.strip() and other.strip():
            left, right = claim_diff(c.claim_expected, c.claim_observed)
            # no changed word on this side (a pure deletion on the other): the claim still places
            # the excerpt, with nothing marked in it
            marks = [Mark(mine.strip(), left if side == "baseline" else right)]
        else:
            marks = [Mark(fact)] if fact else []
            if mine.strip():
                marks.append(Mark(mine.strip()))
        out += [m for m in marks if m not in out]
    return tuple(out)


def _pairs(changes: Sequence[Change], tonight: Mapping[int, tuple[str, ...]],
           accepted: Mapping[int, tuple[str, ...]] | None) -> tuple[Pair, ...]:
    changes = [c for c in changes if c.kind in REPLY_KINDS]
    turns = sorted({c.turn for c in changes if isinstance(c.turn, int)})
    if any(c.turn is None for c in changes) and not turns:
        turns = sorted(tonight) or sorted(accepted or {})
    pairs = []
    for t in turns:
        mine = [c for c in changes if c.turn == t or c.turn is None]
        pairs.append(Pair(turn=t, baseline=(accepted or {}).get(t) if accepted else None,
                          tonight=tonight.get(t, ()), mark_baseline=_marks(mine, "baseline"),
                          mark_tonight=_marks(mine, "tonight")))
    return tuple(pairs)


def baseline_changes(results: Mapping[str, Any], base: Mapping[str, Any] | None = None) -> list[Group]:
    """The groups of changed cases, largest first (then by kind); each case once per group."""
    base_cases = {str(c.get("id")): c for c in (base or {}).get("cases") or () if isinstance(c, Mapping)}
    grouped: dict[str, list[CaseChange]] = {}
    for case in results.get("cases") or ():
        if not isinstance(case, Mapping):
            continue
        changes = case_changes(case)
        if not changes:
            continue
        cid = str(case.get("id"))
        tonight = _turns(case)
        accepted = _accepted_turns(case, base_cases.get(cid), bool((base or {}).get("baseline_record"))) or None
        by_group: dict[str, list[Change]] = {}
        for c in changes:
            by_group.setdefault(c.group, []).append(c)
        for key, mine in by_group.items():
            grouped.setdefault(key, []).append(CaseChange(
                id=cid, layer=str(case.get("layer") or ""), status=str(case.get("status") or ""),
                changes=tuple(mine), pairs=_pairs(mine, tonight, accepted),
                accepted_from=str((base_cases.get(cid) or {}).get("accepted_from") or "")))
    groups = [Group(key=k, title=TITLES.get(k, f"baseline.{k} changed"), cases=tuple(v)) for k, v in grouped.items()]
    return sorted(groups, key=lambda g: (-len(g.cases), g.key))


def changes_line(groups: Sequence[Group], limit: int = 4) -> str:
    """One line for the end of ``harness run``: ``changed against the baseline: 12 cases (11: a
    hedge changed; 2: replies split into more messages); see report.html``; '' when none."""
    if not groups:
        return ""
    total = len({cc.id for g in groups for cc in g.cases})
    parts = "; ".join(f"{len(g.cases)}: {g.title}" for g in groups[:limit]) + ("; …" if len(groups) > limit else "")
    return f"changed against the baseline: {total} case{'s' if total != 1 else ''} ({parts})"


def changes_or_note(results: Mapping[str, Any], base: Mapping[str, Any] | None = None) -> tuple[list[Group], str]:
    """``baseline_changes``, or no groups and a sentence saying why: a malformed results.json
    (or a bug here) must not lose the rest of the report."""
    try:
        return baseline_changes(results, base), ""
    except Exception as exc:
        log.warning("the changes against the baseline were left out: %s: %s", type(exc).__name__, exc)
        return [], f"the changes against the baseline could not be drawn: {type(exc).__name__}: {exc}"


def distinct(changes: Sequence[Change]) -> list[tuple[Change, int]]:
    """The changes with identical (turn, kind, expected, observed, change) folded, with their count
    (three claims that each lost their hedge read once, "x3")."""
    out: dict[tuple[Any, ...], list[Any]] = {}
    for c in changes:
        key = (c.turn, c.kind, c.expected, c.observed, c.change)
        if key in out:
            out[key][1] += 1
        else:
            out[key] = [c, 1]
    return [(c, n) for c, n in out.values()]


def fact_line(c: Change) -> str:
    """``hedge: may reduce -> reduces (contradicted)``: one change in words, unescaped."""
    what = f"{c.expected or '-'} -> {c.observed or '-'}"
    return f"{c.kind}: {what} ({c.change})"


# --------------------------------------------------------------------------- Markdown


def markdown_lines(groups: Sequence[Group], *, max_cases: int = 10, texts: bool = True,
                   heading: str = "###") -> list[str]:
    """summary.md's (and the PR comment's) section: a heading per group, each case once under
    it with its changes, and (``texts``) the accepted and tonight's replies around the first
    changed fact, the facts in bold. Everything untrusted is escaped (``format.md_span``)."""
    from harness.report.format import code, md, md_span

    if not groups:
        return []

    def line(pair: Pair, side: str, messages: tuple[str, ...] | None) -> str:
        if messages is None:
            return "not known here (the baseline run is not readable from this machine)"
        if not messages:
            return "_no reply_"
        marks = pair.mark_baseline if side == "baseline" else pair.mark_tonight
        shown = []
        for m in messages[:3]:
            shown.append("".join(f"**{md_span(seg)}**" if marked and seg.strip() else md_span(seg)
                                 for seg, marked in excerpt(m, marks)))
        more = f" … (+{len(messages) - 3} more)" if len(messages) > 3 else ""
        count = f"({len(messages)} messages) " if len(messages) > 1 else ""
        return count + " ⏎ ".join(shown) + more

    total = len({cc.id for g in groups for cc in g.cases})
    out = [f"{heading} Changed against the baseline ({total} case{'s' if total != 1 else ''})", ""]
    for g in groups:
        out += [f"{heading}# {md(g.heading, 200)}", ""]
        for cc in g.cases[:max_cases]:
            folded = distinct(cc.changes)
            facts = "; ".join(f"{'turn ' + str(c.turn) if c.turn is not None else 'case'} {md(c.kind, 30)} "
                              f"{code(c.expected or '-', 80)} → {code(c.observed or '-', 80)}"
                              + (f" ×{n}" if n > 1 else "") for c, n in folded[:4])
            more = f" (+{len(folded) - 4} more)" if len(folded) > 4 else ""
            out.append(f"- {code(cc.id)} ({md(cc.layer, 30)}): {facts}{more}")
            if texts:
                for pair in cc.pairs[:2]:
                    where = f" (turn {pair.turn})" if len(cc.pairs) > 1 else ""
                    out.append(f"  - accepted{where}: {line(pair, 'baseline', pair.baseline)}")
                    out.append(f"  - tonight{where}: {line(pair, 'tonight', pair.tonight)}")
        if len(g.cases) > max_cases:
            out.append(f"- … and {len(g.cases) - max_cases} more (report.html)")
        out.append("")
    return out
