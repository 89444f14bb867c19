"""The runner's cost-layer companion: measures each case, guards the budget, compares with history.

The runner calls it at four points (a few lines each in runner.py):

- ``gate(case)`` before a case starts: a ``skipped`` result when the budget forbids it;
- ``measure(result)`` after each attempt: latency, calls, tokens and spend (``CaseMetrics``);
- ``finish(case, attempts, result)`` once a case is done: spend summed over attempts,
  ``budget.case_usd`` and ``anomaly.<metric>`` evidence, the budget guard updated;
- ``report_parts(results, layers)`` at the end: notes, ``perf`` for results.json, the exit code.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import Sequence

from harness.checks.provider import ProviderCalls, observed_durations, shifted
from harness.run import cost as costs
from harness.run.aggregate import case_status
from harness.run.anomaly import History, anomalies, basis, comparable, is_nightly_id, load_history
from harness.models.settings import cache_subdir
from harness.run.budget import BudgetGuard, anomaly_thresholds, budget_settings
from harness.types import Case, CaseResult, Evidence

log = logging.getLogger("harness.run.perf")
BUDGET_EXIT = 3


class RunMeter:
    def __init__(self, config, out_dir: Path, run_id: str, budget_usd: float | None = None,
                 concurrency: int | None = None):
        self.config = config
        self.settings = budget_settings(config, budget_usd)
        self.out_dir = Path(out_dir)
        self.run_id = run_id
        self.guard = BudgetGuard(self.settings.run_usd, 0)
        self.history = History()
        self.all_history = History()
        # Anomalies compare only with nights run like this one (run/anomaly.py basis).
        self.basis = basis(config, concurrency or config.sandbox.concurrency)
        self.anomaly_note = ""
        self.provider: ProviderCalls | None = None
        self.tonight_calls: list[float] = []

    def start(self, cases: Sequence[Case]) -> None:
        costs.HARNESS_SPEND.reset()
        self.guard = BudgetGuard(self.settings.run_usd, len(cases))
        if self.settings.anomalies and is_nightly_id(self.run_id):  # calibration's labelled runs: no history
            try:
                self.all_history = load_history(self.out_dir, self.config.target.name, exclude_run=self.run_id,
                                                window=self.settings.anomaly_window,
                                                cache=cache_subdir(self.config, "history"))
            except OSError as exc:  # history is an extra; never a reason not to run
                log.warning("history unreadable: %s", exc)
            self.history, self.anomaly_note = comparable(self.all_history, self.basis, self.settings.anomaly_min_runs)
            if self.anomaly_note:
                self.history = History()
            self.provider = self.history.provider()

    def gate(self, case: Case) -> CaseResult | None:
        why = self.guard.may_start(case.id)
        if not why:
            return None
        return CaseResult(id=case.id, layer=case.layer, channel=case.channel, status="skipped", evidence=(),
                          attempts=0, cost_usd=0.0, error=why, file=case.file, tags=case.tags,
                          metrics=None)

    def measure(self, result: CaseResult) -> CaseResult:
        return costs.apply(result, costs.measure(result.observation))

    def finish(self, case: Case, attempts: Sequence[CaseResult], result: CaseResult) -> CaseResult:
        metrics = [a.metrics for a in attempts if a.metrics is not None]
        if metrics:
            result = costs.apply(result, costs.combine(metrics))
        extra: list[Evidence] = []
        unclaimed = _unattributed_llm(attempts)
        if self.settings.case_usd is not None and unclaimed:
            n, running = unclaimed
            extra.append(Evidence(
                check="budget.case_usd", turn=None, availability="unavailable", passed=None,
                expected=f"at most ${self.settings.case_usd:.4f} per case ([budget] case_usd)",
                reason=(f"{n} LLM call{'s' if n != 1 else ''} during this case could not be attributed to a case "
                        f"while {running} ran: its spend is not known"), evaluator="budget@1"))
        elif self.settings.case_usd is not None and result.cost_usd is not None:
            limit = self.settings.case_usd
            ok = result.cost_usd <= limit
            extra.append(Evidence(
                check="budget.case_usd", turn=None, availability="ready", passed=ok,
                expected=f"at most ${limit:.4f} per case ([budget] case_usd)", observed=f"${result.cost_usd:.6f}",
                reason=(f"case cost ${result.cost_usd:.6f} {'<=' if ok else '>'} budget ${limit:.4f}"),
                evaluator="budget@1"))
        layers = self.settings.anomaly_layers
        self.tonight_calls += [d for a in attempts for d in observed_durations(a.observation)]
        if self.settings.anomalies and self.history.entries and (not layers or case.layer in layers):
            off = {name for t in case.turns for name in t.disabled}  # anomaly: false in the case
            extra += [e for e in anomalies(result, self.history, thresholds=anomaly_thresholds(self.settings),
                                           provider=self.provider, shift=shifted(self.provider, self.tonight_calls))
                      if e.check not in off]
        if extra:
            evidence = tuple(result.evidence) + tuple(extra)
            status = result.status
            if any(e.passed is False for e in extra):
                status = "fail"
            elif result.attempts <= 1:
                status = case_status(evidence, result.error)
            result = replace(result, evidence=evidence, status=status)
        self.guard.finished_case(case.id, result.cost_usd)
        return result

    def report_parts(self, results: Sequence[CaseResult], layers: Sequence[str]) -> tuple[list[str], dict, bool]:
        """(notes, perf for results.json, budget breached)."""
        perf = costs.run_perf(results, layers)
        perf["summary"]["budget"] = self.guard.report()
        perf["summary"]["prices_version"] = _prices_version(self.settings.prices, self.config)
        perf["summary"]["history_runs"] = len(self.history.runs)
        perf["summary"]["anomaly_basis"] = self.basis
        perf["summary"]["anomalies"] = {
            "checked": bool(self.settings.anomalies and self.history.entries), "baseline_runs": len(self.history.runs),
            "earlier_runs": len(self.all_history.runs), "min_runs": self.settings.anomaly_min_runs,
            "note": self.anomaly_note if self.settings.anomalies else "anomaly checks off ([budget] anomalies = false)"}
        notes = []
        if self.settings.anomalies and self.anomaly_note and self.all_history.entries:
            notes.append(self.anomaly_note)
        if self.guard.breached:
            notes.append(self.guard.message())
        if perf["summary"]["simulated"]:
            notes.append("SIMULATED spend: the LLM answers came from the agent's offline model on loopback or "
                         "the model double; calls are "
                         "priced at the models they name (list prices, prices "
                         f"{perf['summary']['prices_version']}), nothing was billed")
        unpriced = perf["summary"]["cost_unavailable"]
        if unpriced:
            notes.append(f"cost unavailable for {unpriced} case(s) (unknown model or no token count): "
                         + ", ".join(perf["summary"]["cost_unavailable_cases"][:10]))
        note = replay_miss_note(results)
        if note:
            notes.append(note)
        replayed = perf["summary"]["replayed_cases"]
        if replayed:
            notes.append(f"{replayed} case(s) ran on replayed LLM answers (cassette; no spend)")
        return notes, perf, self.guard.breached


def _unattributed_llm(attempts: Sequence[CaseResult]) -> tuple[int, int] | None:
    """(LLM calls no case could claim, most cases running) over the attempts' turns, or None."""
    n = running = 0
    for a in attempts:
        for t in (a.observation.own().turns if a.observation is not None else ()):
            n += int(t.unattributed_calls.get("llm") or 0)
            running = max(running, int(t.unattributed_calls.get("running") or 0))
    return (n, running) if n else None

def replay_miss_note(results: Sequence[CaseResult]) -> str:
    """The run's note on LLM calls a replay cassette had no recording for ('' when none)."""
    missed = [(r.id, r.metrics.replay_misses) for r in results if r.metrics is not None and r.metrics.replay_misses]
    if not missed:
        return ""
    total = sum(n for _, n in missed)
    listed = ", ".join(f"{cid} ({n})" for cid, n in missed[:10]) + (" ..." if len(missed) > 10 else "")
    return (f"REPLAY MISSES: {total} LLM call(s) in {len(missed)} case(s) had no recording in the cassette "
            f"(answered 502 cassette_miss; their metered checks fail): {listed}; re-record with "
            f"llm_mode = \"record\"")


def _prices_version(path: str, config) -> str:
    from harness.models.prices import load_prices

    try:
        return load_prices(str(config.resolve(path)) if path else None).version
    except OSError:
        return "unreadable"
