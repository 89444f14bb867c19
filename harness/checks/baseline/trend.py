"""``baseline.latency_trend``: later cases slower than the same cases on the accepted nights (a leak).

Per case with a latency baseline, tonight's *excess* is its latency minus its median on the
accepted nights. Ordered by when each case started tonight, a leak makes the excess grow
with the order. The run fails the check when all hold:

- at least ``trend_min_cases`` cases have a latency baseline and a latency tonight;
- Spearman's rank correlation of start order and excess is at least ``trend_min_rho``;
- the median excess of the last third is above the first third's by ``trend_min_ms``.

Then each case of the last third whose excess is that far above the first third's median
gets failing evidence; ``summary.baseline.trend`` keeps the figures either way. Pure: values
in, a ``Trend`` out.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Sequence

from harness.types import Evidence

EVAL = "baseline-trend@1"


@dataclass(frozen=True)
class Point:
    case_id: str
    order: float
    """When the case started tonight (any increasing clock)."""
    latency_ms: float
    baseline_ms: float
    """The case's median latency on the accepted nights."""

    @property
    def excess(self) -> float:
        return self.latency_ms - self.baseline_ms


@dataclass(frozen=True)
class Trend:
    checked: bool
    note: str = ""
    cases: int = 0
    rho: float | None = None
    first_excess_ms: float | None = None
    last_excess_ms: float | None = None
    leak: bool = False
    affected: dict[str, Evidence] = field(default_factory=dict)
    provider: dict = field(default_factory=dict)
    """Tonight's LLM calls against the accepted nights' (``checks/provider.py``), set by the runner's seam."""

    def as_dict(self) -> dict:
        return {"checked": self.checked, "note": self.note, "cases": self.cases,
                "rho": None if self.rho is None else round(self.rho, 3),
                "first_third_excess_ms": None if self.first_excess_ms is None else round(self.first_excess_ms),
                "last_third_excess_ms": None if self.last_excess_ms is None else round(self.last_excess_ms),
                "leak": self.leak, "affected": sorted(self.affected), "provider": dict(self.provider)}


def _ranks(values: Sequence[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's rho (Pearson on ranks, ties averaged); None when either side is constant."""
    rx, ry = _ranks(x), _ranks(y)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    sx = sum((a - mx) ** 2 for a in rx) ** 0.5
    sy = sum((b - my) ** 2 for b in ry) ** 0.5
    if not sx or not sy:
        return None
    return sum((a - mx) * (b - my) for a, b in zip(rx, ry)) / (sx * sy)


def latency_trend(points: Sequence[Point], *, min_cases: int = 12, min_rho: float = 0.5,
                  min_ms: float = 750.0) -> Trend:
    """Whether tonight's cases grow slower against their baseline the later they start."""
    pts = sorted(points, key=lambda p: (p.order, p.case_id))
    if len(pts) < min_cases:
        return Trend(False, f"{len(pts)} case(s) with a latency baseline, {min_cases} needed", cases=len(pts))
    rho = spearman([p.order for p in pts], [p.excess for p in pts])
    third = max(1, len(pts) // 3)
    first = statistics.median(p.excess for p in pts[:third])
    last = statistics.median(p.excess for p in pts[-third:])
    leak = rho is not None and rho >= min_rho and last - first >= min_ms
    affected = {}
    if leak:
        for p in pts[-third:]:
            if p.excess - first >= min_ms:
                affected[p.case_id] = Evidence(
                    check="baseline.latency_trend", turn=None, availability="ready", passed=False,
                    expected=f"later cases no slower against their baseline than earlier ones (rho < {min_rho:g} "
                             f"or the last third's median excess within {min_ms:.0f}ms of the first third's)",
                    observed=f"{p.latency_ms:.0f}ms against a baseline median of {p.baseline_ms:.0f}ms "
                             f"(+{p.excess:.0f}ms)",
                    reason=f"the run grew slower case after case (Spearman rho {rho:.2f} over {len(pts)} cases; "
                           f"median excess {first:+.0f}ms in the first third, {last:+.0f}ms in the last): "
                           f"this case started late and is {p.excess - first:.0f}ms slower than the first "
                           "third's excess",
                    evaluator=EVAL)
    return Trend(True, "", len(pts), rho, first, last, leak, affected)
