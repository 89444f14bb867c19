"""The runner's baseline seam: each attempt's ``baseline.*`` evidence, and the run's latency trend.

The invariants come down as a value (``RunOptions.baseline``, built by ``harness.night.learned``);
everything here calls the pure functions of ``harness.checks.baseline``.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Sequence

from harness.checks.baseline import Baseline, attempt_evidence
from harness.checks.baseline.evidence import latency_evidence
from harness.checks.baseline.samples import from_observation
from harness.checks.baseline.trend import Point, Trend, latency_trend
from harness.checks.provider import observed_durations, shifted
from harness.soft import is_soft, reevaluate
from harness.types import Case, CaseResult, Evidence, Observation

log = logging.getLogger("harness.run.held")


async def with_baseline(baseline: Baseline | None, case: Case, obs: Observation, latency: float | None,
                        evidence: list[Evidence]) -> tuple[list[Evidence], dict | None]:
    """``evidence`` plus the attempt's ``baseline.*`` evidence (a soft one re-evaluated once,
    like every soft verdict), and results.json's ``cases[].baseline``."""
    if baseline is None:
        return evidence, None
    try:
        extra, info = attempt_evidence(baseline, case, obs, latency)
    except Exception as exc:  # a bug of ours must neither pass nor crash the case
        log.exception("baseline checks crashed on case %s", case.id)
        return evidence + [Evidence(check="baseline.replies", turn=None, availability="unavailable", passed=None,
                                    reason=f"the baseline checks crashed: {type(exc).__name__}: {exc}",
                                    evaluator="baseline@1")], None
    out = []
    for e in extra:
        if is_soft(e):
            async def again(e: Evidence = e) -> Evidence:
                redo, _ = attempt_evidence(baseline, case, obs, latency)
                return next(x for x in redo if (x.check, x.turn) == (e.check, e.turn))
            e = await reevaluate(e, again)
        out.append(e)
    return evidence + out, info


def apply_trend(baseline: Baseline, cases: Sequence[Case], results: list[CaseResult]) -> tuple[Trend, list[int]]:
    """Run ``trend.latency_trend`` over the finished cases; failing evidence goes on the cases it
    names (``results`` is updated in place). Returns the trend and the indices changed."""
    s = baseline.settings
    by_id = {c.id: c for c in cases}
    points = []
    for r in results:
        inv, case, obs = baseline.cases.get(r.id), by_id.get(r.id), r.observation
        if inv is None or case is None or obs is None or inv.latency_median is None or r.latency_ms is None \
                or "latency_trend" not in s.kinds_for(case.layer, case.baseline):
            continue
        points.append(Point(r.id, obs.started_at, float(r.latency_ms), inv.latency_median))
    trend = latency_trend(points, min_cases=s.trend_min_cases, min_rho=s.trend_min_rho, min_ms=s.trend_min_ms)
    changed = _provider_shift(baseline, results, trend)
    for i, r in enumerate(results):
        found = trend.affected.get(r.id)
        if found is None:
            continue
        info = dict(r.baseline or {})
        info["changes"] = list(info.get("changes") or ()) + [{
            "turn": None, "kind": "latency_trend", "change": "changed", "expected": found.expected,
            "observed": found.observed, "claim_expected": "", "claim_observed": ""}]
        results[i] = replace(r, evidence=r.evidence + (found,), status="fail", baseline=info)
        changed.append(i)
    return trend, sorted(set(changed))


def _provider_shift(baseline: Baseline, results: list[CaseResult], trend: Trend) -> list[int]:
    """A ``baseline.latency`` passed only because a slow LLM call explained it fails after all
    when tonight's calls are slower across the run (``checks/provider.py`` ``shifted``): that is
    the bot on a slower model, not a rare spell. ``results`` is updated in place; returns the
    indices changed, and records tonight's calls in ``trend.provider``."""
    p = baseline.provider
    tonight = [d for r in results for d in observed_durations(r.observation)]
    shift = shifted(p, tonight)
    trend.provider.update({"checked": p is not None, "accepted_calls": p.calls if p else 0,
                           "typical_ms": round(p.typical_ms) if p else None,
                           "slowest_ms": round(p.slowest_ms) if p else None,
                           "accepted_slow_share": round(p.slow_share, 3) if p else None,
                           "tonight_calls": len(tonight),
                           "tonight_slow_share": (round(sum(d > p.typical_ms for d in tonight) / len(tonight), 3)
                                                  if p and tonight else None),
                           "shifted": shift})
    if not shift:
        return []
    changed = []
    for i, r in enumerate(results):
        inv = baseline.cases.get(r.id)
        if inv is None or inv.latency is None or r.latency_ms is None or r.latency_ms <= inv.latency.hi:
            continue
        at = next((j for j, e in enumerate(r.evidence) if e.check == "baseline.latency" and e.passed is True), None)
        if at is None:
            continue
        sample = from_observation(r.observation, r.latency_ms) if r.observation is not None else None
        if sample is None:
            continue
        info = dict(r.baseline or {})
        changes: list[dict] = list(info.get("changes") or ())
        redo = latency_evidence(inv, sample, p, changes=changes, shift=shift)
        info["changes"] = changes
        evidence = r.evidence[:at] + (redo,) + r.evidence[at + 1:]
        results[i] = replace(r, evidence=evidence, status="fail" if redo.passed is False else r.status, baseline=info)
        changed.append(i)
    return changed
