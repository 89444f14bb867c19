"""The run's report (``Reporting``, a part of the ``Runner``): the summary, the layers' metrics,
the baseline's and the sandbox's notes."""

from __future__ import annotations

import logging
import socket
from dataclasses import replace
from datetime import datetime, timezone
from typing import Sequence

from harness import __version__
from harness import layer as layer_registry
from harness.checks.baseline import unchecked
from harness.models.settings import soft_budget
from harness.run.aggregate import apply_soft_budget, exit_code, summarize
from harness.run.perf import BUDGET_EXIT
from harness.types import SOURCE_DOUBLE, Case, CaseResult, RunReport

log = logging.getLogger("harness.run.runner")


def unattributed_notes(events: Sequence, cases_from: float, concurrency: int) -> list[str]:
    """The run's notes on calls no case could claim: those before the first case are the
    target's start-up (getMe, setWebhook), not an attribution failure."""
    notes = []
    startup = [e for e in events if e.at < cases_from]
    later = [e for e in events if e.at >= cases_from]
    if startup:
        notes.append(f"{len(startup)} boundary call(s) during target start-up, before the first case "
                     f"({', '.join(sorted({e.name for e in startup}))}): attributed to \"target start-up\"")
    if later:
        notes.append(f"{len(later)} boundary call(s) could not be attributed to a case "
                     f"({', '.join(sorted({e.name for e in later}))})"
                     + ("; run with --concurrency 1 to attribute every call" if concurrency > 1 else
                        ": made while no case was running"))
    return notes


def double_notes(gateway, scripts=None) -> list[str]:
    """The run's notes on the model double: how many LLM calls it answered, scripted or not,
    and how many calls could not be tied to a scripted turn."""
    n = getattr(gateway, "double_calls", 0) if gateway is not None else 0
    notes = []
    if n:
        scripted = gateway.double_scripted
        notes.append(f"the model double answered {n} LLM call(s) ({scripted} from the cases' model: scripts, "
                     f"{n - scripted} with its default answer: no script and no upstream for them); their "
                     f"evidence is labelled source {SOURCE_DOUBLE}")
    unmatched = getattr(scripts, "unmatched", 0)
    if unmatched:
        notes.append(f"{unmatched} LLM call(s) came while scripted turns ran but carried nothing that ties them "
                     f"to a case (no user field, no document token), so no model: script answered them; run "
                     f"with --concurrency 1 to give each call the script of the turn in flight")
    return notes



class Reporting:
    """The runner's report (mixed into ``Runner``)."""

    def _report(self, cases: Sequence[Case], results: list[CaseResult], started: datetime) -> RunReport:
        planned: dict[str, int] = {}
        for c in cases:
            planned[c.layer] = planned.get(c.layer, 0) + 1
        summary, layers = summarize(results, planned)
        budget = soft_budget(self.config)  # too many soft errors fail the run (harness/soft.py)
        summary, layers, soft_notes = apply_soft_budget(summary, layers, budget.soft_max_fraction_per_layer,
                                                        budget.soft_max_per_run)
        service_models, service_notes = self.services.describe()
        cost_notes, perf, breached = self.meter.report_parts(results, list(layers))
        perf["summary"]["quiet_window"] = self.quiet.describe()  # results.json summary.quiet_window
        perf["summary"]["baseline"] = self._baseline_summary()
        perf["summary"]["machine"] = self.machine.describe()  # results.json summary.machine (machine.py)
        machine_note = self.machine.note()
        code = BUDGET_EXIT if breached else exit_code(summary)
        if breached:
            summary = replace(summary, verdict="budget")
        t = self.config.target
        return RunReport(run_id=self.run_id, started_at=started.isoformat(timespec="seconds"),
                         finished_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                         harness_version=__version__,
                         target={"name": t.name, "version": self.endpoints.version or t.version or "unknown",
                                 "host": socket.gethostname()},
                         golden_version=self.options.golden_version or "none",
                         models={"embedder": "none", "critic": "none", **service_models},
                         summary=summary, layers=layers, cases=tuple(results), exit_code=code,
                         notes=tuple(self._notes + cost_notes + service_notes + soft_notes + self._baseline_notes()
                                     + ([machine_note] if machine_note else [])), perf=perf,
                         layer_metrics=self._layer_metrics(results, perf, {"critic": "none", **service_models}))

    def _baseline_notes(self) -> list[str]:
        """A baseline that exists but could not be used tonight is worth a line (not "none accepted")."""
        note = self.options.baseline_note
        if self.options.baseline is None and note and not note.startswith(("no accepted baseline", "baseline checks are off")):
            return [note]
        trend = self._trend
        return [f"baseline: {len(trend.affected)} case(s) slower the later they ran (rho {trend.rho:.2f})"] \
            if trend is not None and trend.leak else []

    def _baseline_summary(self) -> dict:
        """results.json ``summary.baseline`` (docs/CASES.md "Baseline checks")."""
        baseline = self.options.baseline
        if baseline is None:
            return unchecked(self.options.baseline_note or "no baseline given to this run")
        out = baseline.summary()
        out["trend"] = self._trend.as_dict() if self._trend is not None else {"checked": False, "note": "not run"}
        return out

    def _layer_metrics(self, results: list[CaseResult], perf: dict, models: dict) -> dict[str, dict]:
        """Each layer's summary metrics (``Layer.metrics``), for results.json ``layers.<name>``."""
        context = {"perf": perf, "models": models, "out_dir": self.options.out_dir,
                   "reports_dir": self.config.resolve("reports")}
        out: dict[str, dict] = {}
        for name in dict.fromkeys(r.layer for r in results):
            layer = layer_registry.get(name)
            if layer is None:
                continue
            try:
                m = layer.metrics([r for r in results if r.layer == name], context)
            except Exception as exc:  # a layer's metrics bug must not lose the run's report
                log.exception("layer %s metrics failed", name)
                m = {"metrics_error": f"{type(exc).__name__}: {exc}"}
            if m:
                out[name] = m
        return out
