"""Learning what held on every accepted night (pure: results.json dicts in, invariants out).

``learn(runs, settings)`` takes the accepted nights' results.json dicts, the accepted run
first, and returns per case id a ``CaseInvariants``: for each turn what every sample
(each passing attempt of the case on each night) had in common. A quantity that was the
same on every sample is held exactly; one that varied is held to the band it varied in
(counts) or widened by a tolerance (length, tokens); a set that varied (kinds, buttons,
tools, links, state keys) is no invariant at all. Facts are learned per claim, claims
aligned one to one across the samples with the accepted run's claims as anchors
(``facts.align``): a fact is held when every sample's aligned claim had it, and "seen"
when any sample said it anywhere in the turn.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from harness.checks.provider import ProviderCalls, profile
from harness.checks.baseline import facts as F
from harness.checks.baseline.samples import (CaseSample, TurnSample, from_case_dict, hosts, links, state_keys,
                                             tool_order)
from harness.schema.models import BASELINE_STRUCTURE as STRUCTURE
from harness.schema.models import BASELINE_VARYING as VARYING
from harness.schema.models import BaselineModel
from harness.checks.form import detect_language

#: Function words needed on every night before a language counts as known.
#: A reply tells its language when it has this many characters and lingua is this sure of it.
LANGUAGE_MIN_CHARS = 20
LANGUAGE_MIN_CONFIDENCE = 0.5
LANGUAGE_MIN_HITS = LANGUAGE_MIN_CHARS  # the old name (function-word hits, before lingua)


@dataclass(frozen=True)
class Band:
    """A learned range: what the nights showed (``seen_lo..seen_hi``) and the limits tonight is held to."""

    lo: float
    hi: float
    seen_lo: float
    seen_hi: float

    def holds(self, value: float) -> bool:
        return self.lo <= value <= self.hi

    def shown(self, unit: str = "") -> str:
        seen = f"{self.seen_lo:.0f}{unit}" if self.seen_lo == self.seen_hi else \
            f"{self.seen_lo:.0f}..{self.seen_hi:.0f}{unit}"
        return f"{max(self.lo, 0):.0f}..{self.hi:.0f}{unit} (nights: {seen})"


@dataclass(frozen=True)
class ClaimInvariant:
    """A claim every sample made (aligned to the accepted run's ``anchor``)."""

    anchor: F.Claim
    held: Mapping[str, frozenset[str]]
    """Facts by kind that every sample's aligned claim had."""
    seen: Mapping[str, frozenset[str]]
    """Facts by kind that any sample's aligned claim had."""
    hedged: bool
    """Hedged on every sample."""
    negations: int | None
    """The same number of negation cues on every sample (None: it varied)."""
    direction: frozenset[str] | None
    """One direction (``up`` or ``down``) on every sample (None: none, both, or it varied)."""


@dataclass(frozen=True)
class TurnInvariants:
    """What held on one turn of a case; None: no invariant (it varied, or too few nights)."""

    index: int
    text: str = ""
    """The accepted run's reply text (what a report shows beside tonight's)."""
    replies: tuple[int, int] | None = None
    kinds: tuple[str, ...] | None = None
    buttons: tuple[tuple[str, ...], ...] | None = None
    parse_modes: tuple[str, ...] | None = None
    posts: tuple[int, int] | None = None
    tools: tuple[str, ...] | None = None
    """Distinct tools in first-call order."""
    llm_calls: tuple[int, int] | None = None
    state: frozenset[str] | None = None
    tokens_in: Band | None = None
    tokens_out: Band | None = None
    length: Band | None = None
    language: str | None = None
    links: frozenset[str] | None = None
    hosts: frozenset[str] | None = None
    claims: tuple[ClaimInvariant, ...] | None = None
    turn_held: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Facts by kind in the whole turn on every sample."""
    turn_seen: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Facts by kind in the whole turn on any sample."""
    capitalised: frozenset[str] = frozenset()
    """Every capitalised word any sample wrote (a name is new only when it is not among them)."""
    known: frozenset[str] = frozenset()
    """Names any sample wrote mid-sentence (so a sentence-initial one counts as a name too)."""


@dataclass(frozen=True)
class CaseInvariants:
    """What one case did on every accepted sample."""

    case_id: str
    samples: int
    runs: tuple[str, ...]
    turns: tuple[TurnInvariants, ...] = ()
    latency: Band | None = None
    latency_median: float | None = None
    skipped: Mapping[str, str] = field(default_factory=dict)
    """Kinds not learned, and why (too few nights)."""


def _same(values: Sequence[Any]) -> Any:
    return values[0] if values and all(v == values[0] for v in values) else None


def _range(values: Sequence[int]) -> tuple[int, int]:
    return min(values), max(values)


def band(values: Sequence[float], tolerance: float, slack: float) -> Band:
    lo, hi = min(values), max(values)
    return Band(lo=lo / (1 + tolerance) - slack, hi=hi * (1 + tolerance) + slack, seen_lo=lo, seen_hi=hi)


def _language(sample: TurnSample) -> str | None:
    return language_of(sample.text)


def language_of(text: str) -> str | None:
    """The reply's language (ISO 639-1) when it says enough to tell, else None."""
    if len(text.strip()) < LANGUAGE_MIN_CHARS:
        return None
    code, confidence = detect_language(text)
    return code if code is not None and confidence >= LANGUAGE_MIN_CONFIDENCE else None


def _learn_claims(samples: Sequence[TurnSample], known: frozenset[str]) -> tuple[ClaimInvariant, ...]:
    per = [F.reply_claims(s.text, known) for s in samples]
    anchors = per[0]
    aligned = [F.align(anchors, other) for other in per[1:]]
    out = []
    for i, anchor in enumerate(anchors):
        if not all(i in m for m in aligned):
            continue
        group = [anchor] + [per[j + 1][m[i]] for j, m in enumerate(aligned)]
        held = {k: frozenset.intersection(*(c.facts(k) for c in group)) for k in F.FACT_KINDS}
        seen = {k: frozenset().union(*(c.facts(k) for c in group)) for k in F.FACT_KINDS}
        negs = _same([c.negations for c in group])
        dirs = _same([c.direction for c in group])
        out.append(ClaimInvariant(anchor=anchor, held=held, seen=seen, hedged=all(c.hedged for c in group),
                                  negations=negs, direction=dirs if dirs and len(dirs) == 1 else None))
    return tuple(out)


def learn_turn(index: int, samples: Sequence[TurnSample], settings: BaselineModel,
               structure: bool, varying: bool) -> TurnInvariants:
    """Invariants of one turn from its samples (the accepted run's first)."""
    s = settings
    kw: dict[str, Any] = {"index": index, "text": samples[0].text}
    if structure:
        kw.update(replies=_range([len(x.texts) for x in samples]), kinds=_same([x.kinds for x in samples]),
                  buttons=_same([x.buttons for x in samples]), parse_modes=_same([x.parse_modes for x in samples]),
                  posts=_range([x.posts for x in samples]), tools=_same([tool_order(x.tools) for x in samples]),
                  llm_calls=_range([x.llm_calls for x in samples]),
                  state=_same([state_keys(x.state) for x in samples]))
    if varying:
        kw.update(length=band([len(x.text) for x in samples], s.length_tolerance, s.length_slack_chars),
                  language=_same([_language(x) for x in samples]),
                  links=_same([links(x.text) for x in samples]))
        kw["hosts"] = hosts(kw["links"]) if kw["links"] is not None else _same([hosts(links(x.text)) for x in samples])
        if any(x.llm_calls for x in samples):
            # a model's verbosity varies more than its prompt: output tokens get twice the tolerance
            kw.update(tokens_in=band([x.tokens_in for x in samples], s.tokens_tolerance, s.tokens_slack),
                      tokens_out=band([x.tokens_out for x in samples], 2 * s.tokens_tolerance, s.tokens_slack))
        known = frozenset().union(*(F.mid_sentence_names(x.text) for x in samples))
        whole = [F.extract(x.text, known) for x in samples]
        kw.update(claims=_learn_claims(samples, known), known=known,
                  turn_held={k: frozenset.intersection(*(w[i] for w in whole)) for i, k in enumerate(F.FACT_KINDS)},
                  turn_seen={k: frozenset().union(*(w[i] for w in whole)) for i, k in enumerate(F.FACT_KINDS)},
                  capitalised=frozenset().union(*(F.capitalised(x.text) for x in samples)))
    return TurnInvariants(**kw)


def learn_case(case_id: str, samples: Sequence[CaseSample], settings: BaselineModel) -> CaseInvariants | None:
    """A case's invariants from its samples (the accepted run's first); None without any sample."""
    if not samples:
        return None
    n = len(samples)
    structure = n >= settings.min_nights_structure
    varying = n >= settings.min_nights
    skipped = {}
    for kinds, ok, need in ((STRUCTURE, structure, settings.min_nights_structure),
                            (VARYING, varying, settings.min_nights)):
        if not ok:
            skipped.update({k: f"{n} accepted sample(s), {need} needed" for k in kinds})
    counts = {len(x.turns) for x in samples}
    turns = []
    if structure or varying:
        for i in range(min(counts)):
            turns.append(learn_turn(i, [x.turns[i] for x in samples], settings, structure, varying))
    latency = median = None
    lat = [x.latency_ms for x in samples if isinstance(x.latency_ms, (int, float))]
    if varying and len(lat) == n:
        slowest = max(lat)
        limit = max(slowest * settings.latency_ratio, slowest + settings.latency_min_ms)
        latency = Band(lo=0.0, hi=limit, seen_lo=min(lat), seen_hi=slowest)
        median = float(statistics.median(lat))
    elif varying:
        skipped["latency"] = skipped["latency_trend"] = "a sample had no reply, so no latency"
    return CaseInvariants(case_id=case_id, samples=n, runs=tuple(dict.fromkeys(x.run_id for x in samples)),
                          turns=tuple(turns), latency=latency, latency_median=median, skipped=skipped)


def passed(case: Mapping[str, Any]) -> bool:
    """The case passed, or failed (or was soft) only on ``baseline.*`` evidence: accepting a night
    accepts what its cases did, also where that broke an older baseline."""
    if case.get("status") == "pass":
        return True
    if case.get("status") not in ("fail", "soft") or case.get("error"):
        return False
    other = [e for e in case.get("evidence") or () if isinstance(e, Mapping)
             and not str(e.get("check", "")).startswith("baseline.")]
    return bool(other) and all(e.get("passed") is True for e in other)


def case_samples(runs: Sequence[Mapping[str, Any]]) -> dict[str, list[CaseSample]]:
    """Per case id, every passing attempt in ``runs`` (in the order of ``runs``)."""
    out: dict[str, list[CaseSample]] = {}
    for run in runs:
        run_id = str(run.get("run_id", ""))
        for case in run.get("cases") or ():
            if isinstance(case, Mapping) and case.get("id") and passed(case):
                out.setdefault(str(case["id"]), []).extend(from_case_dict(run_id, case))
    return out


def learn(runs: Sequence[Mapping[str, Any]], settings: BaselineModel) -> dict[str, CaseInvariants]:
    """Per case id, what held on every passing attempt of ``runs`` (the accepted run first)."""
    out = {}
    for case_id, samples in case_samples(runs).items():
        inv = learn_case(case_id, samples, settings)
        if inv is not None:
            out[case_id] = inv
    return out


def provider_of(runs: Sequence[Mapping[str, Any]]) -> ProviderCalls | None:
    """The LLM calls of every passing attempt in ``runs``, run-wide (``checks/provider.py``)."""
    return profile(d for samples in case_samples(runs).values() for x in samples for d in x.llm_ms)
