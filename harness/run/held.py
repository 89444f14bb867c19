"""The runner's baseline seam: each attempt's ``baseline.*`` evidence, and the run's latency trend.

The invariants come down as a value (``RunOptions.baseline``, built by ``harness.night.learned``);
everything here calls the pure functions of ``harness.checks.baseline``.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Sequence

from harness.checks.baseline import Baseline, attempt_evidence
from harness.checks.baseline.trend import Point, Trend, latency_trend
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
    changed = []
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
    return trend, changed
