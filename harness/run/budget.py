"""Cost budgets: ``[budget]`` settings and the guard that stops a run before it overspends.

``[budget]`` is ``harness.schema.models.BudgetModel`` (also the soft budget's and the diff's
drift keys); its cost and anomaly keys (all optional):

    run_usd = 1.00          hard budget for the whole run (``--budget-usd`` overrides it)
    case_usd = 0.05         a case that spends more fails (``budget.case_usd`` evidence)
    prices = "harness/data/prices.toml"   price table (default: the bundled one)
    simulated = "auto"      true / false / "auto": a loopback LLM upstream is priced, not billed
    anomaly_ratio = 1.5     a case metric this many times its history baseline is a regression
    anomaly_window = 7      baseline = median of the case's last N passing runs
    anomaly_min_runs = 5    ...and only once it has at least this many (run/anomaly.py)
    anomaly_mad_k = 3.0     ...and the jump exceeds this many robust spreads (1.4826 x MAD)
    anomaly_min_latency_ms = 1000   minimum absolute changes: latency (noise floor),
    anomaly_min_tokens = 50         tokens,
    anomaly_min_llm_calls = 1       LLM calls,
    anomaly_min_cost_usd = 0.0      money
    anomaly_layers = []     the layers whose cases are compared (empty: all)
    anomalies = true        false: do not compare with history

The guard projects the run's cost as it goes: spent so far + average cost of a finished
case x cases not finished yet. Once the projection (or the spend itself) crosses the hard
budget, no new case starts; those cases are ``skipped`` with the reason, and the run
exits 3 naming the cases that spent the money.
"""

from __future__ import annotations

import threading

from harness.config import config_section
from harness.errors import ConfigError
from harness.schema.models import BudgetModel


def anomaly_thresholds(settings: BudgetModel):
    """The ``anomaly_*`` keys of ``[budget]`` as run/anomaly.py's Thresholds."""
    from harness.run.anomaly import Thresholds

    return Thresholds(ratio=settings.anomaly_ratio, window=settings.anomaly_window, min_runs=settings.anomaly_min_runs,
                      mad_k=settings.anomaly_mad_k,
                      min_change={"latency_ms": settings.anomaly_min_latency_ms, "tokens": settings.anomaly_min_tokens,
                                  "llm_calls": settings.anomaly_min_llm_calls,
                                  "cost_usd": settings.anomaly_min_cost_usd})


def budget_settings(config, budget_usd: float | None = None) -> BudgetModel:
    """``[budget]`` (validated when the config was loaded); ``budget_usd`` (the CLI flag) overrides ``run_usd``."""
    settings = config_section(config, "budget")
    if budget_usd is not None:
        if budget_usd < 0:
            raise ConfigError("--budget-usd must not be negative")
        settings = settings.model_copy(update={"run_usd": float(budget_usd)})
    return settings


class BudgetGuard:
    """Tracks spend as cases finish and decides whether the next case may start."""

    def __init__(self, limit_usd: float | None, planned: int):
        self.limit = limit_usd
        self.planned = planned
        self.spent = 0.0
        self.finished = 0
        self.priced = 0
        self.spenders: dict[str, float] = {}
        self.stopped_reason = ""
        self.skipped: list[str] = []
        self._lock = threading.Lock()

    def projection(self) -> float | None:
        """Spent + average priced case cost x cases not finished (None before any priced case)."""
        if not self.priced:
            return None
        return self.spent + (self.spent / self.priced) * max(0, self.planned - self.finished)

    def may_start(self, case_id: str) -> str:
        """'' when the case may start, else why not (and the case is counted as skipped)."""
        if self.limit is None:
            return ""
        with self._lock:
            if not self.stopped_reason:
                proj = self.projection()
                if self.spent > self.limit:
                    self.stopped_reason = f"spent ${self.spent:.4f} > budget ${self.limit:.4f}"
                elif proj is not None and proj > self.limit:
                    self.stopped_reason = (f"projected run cost ${proj:.4f} (spent ${self.spent:.4f} + "
                                           f"${self.spent / self.priced:.4f}/case x {self.planned - self.finished} "
                                           f"unfinished) > budget ${self.limit:.4f}")
            if self.stopped_reason:
                self.skipped.append(case_id)
                return f"not started: {self.stopped_reason}"
            return ""

    def finished_case(self, case_id: str, cost_usd: float | None) -> None:
        with self._lock:
            self.finished += 1
            if cost_usd is not None:
                self.priced += 1
                self.spent += cost_usd
                if cost_usd > 0:
                    self.spenders[case_id] = self.spenders.get(case_id, 0.0) + cost_usd

    @property
    def breached(self) -> bool:
        return self.limit is not None and (bool(self.stopped_reason) or self.spent > self.limit)

    def top_spenders(self, n: int = 10) -> list[tuple[str, float]]:
        return sorted(self.spenders.items(), key=lambda kv: (-kv[1], kv[0]))[:n]

    def report(self) -> dict:
        return {"limit_usd": self.limit, "spent_usd": round(self.spent, 8), "breached": self.breached,
                "reason": self.stopped_reason or (f"spent ${self.spent:.4f} > budget ${self.limit:.4f}"
                                                  if self.breached else ""),
                "skipped": len(self.skipped), "skipped_cases": self.skipped[:50],
                "spent_by": [{"id": k, "cost_usd": round(v, 8)} for k, v in self.top_spenders()]}

    def message(self) -> str:
        if not self.breached:
            return ""
        names = ", ".join(f"{k} (${v:.4f})" for k, v in self.top_spenders(5)) or "(no priced case)"
        return (f"cost budget exceeded: {self.report()['reason']}; {len(self.skipped)} of {self.planned} "
                f"cases not started; spent by: {names}")
