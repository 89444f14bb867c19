"""The cost layer's part of ``harness run``: the budget message on stderr and the alerts.

Kept out of cli.py so the command line only gains a few hook lines.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from harness.night.alerts import notify, run_alerts, start_failed_alert
from harness.report.jsonfile import jsonable, report_to_dict
from harness.types import RunReport


def after_run(config, report: RunReport, run_dir: Path, d: dict | None = None) -> RunReport:
    """Say a budget breach loudly (stderr), send the run's alerts, note them in the report.

    ``d`` is ``report``'s results.json dict when the caller has it already; the alerts' notes
    are added to its ``notes`` too, so it stays the dict of the report returned."""
    if d is None:
        d = report_to_dict(report)
    budget = (d.get("summary") or {}).get("budget") or {}
    if budget.get("breached"):
        names = ", ".join(f"{b['id']} (${b['cost_usd']:.4f})" for b in budget.get("spent_by", [])[:10])
        print(f"harness: COST BUDGET EXCEEDED: {budget.get('reason')}; {budget.get('skipped', 0)} cases not "
              f"started; spent by: {names or '(no priced case)'}"
              + (" [SIMULATED spend]" if d["summary"].get("simulated") else ""), file=sys.stderr)
    notes = notify(config, run_alerts(d, str(Path(run_dir).resolve() / "report.html")))
    if not notes:
        return report
    report = replace(report, notes=tuple(report.notes) + tuple(notes))
    d["notes"] = jsonable(list(report.notes))  # as report_to_dict writes them
    return report


def start_failed(config, exc: Exception) -> None:
    """A run that could not bring up its target or sandbox: alert (never raises)."""
    name = getattr(getattr(config, "target", None), "name", "target")
    for line in notify(config, [start_failed_alert(name, f"{type(exc).__name__}: {exc}")]):
        print(f"harness: {line}", file=sys.stderr)
