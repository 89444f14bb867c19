"""What a run's reports get from the nights before it: the trend history and tonight's diff.

``run_context(source, reports_dir, run)`` gathers both for one results.json dict:
the last ``HISTORY_RUNS`` runs up to and including it (for report.html's charts) and its
diff against the accepted baseline or else the previous nightly run (for report.html, summary.md
and diff.json). The run itself need not be in the source yet: ``harness run`` calls this
before results.json is written.

A broken history never breaks a report: problems become a warning and the report is
written without that part.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from harness.night.baseline import acceptance_note, choose_base, load_base
from harness.night.diff import diff_runs
from harness.night.history import LocalRunSource, RunSource, run_records
from harness.night.records import load_records
from harness.run.kind import NIGHTLY
from harness.schema.models import BudgetModel

log = logging.getLogger("harness.night.context")

#: How many nights the dashboard's charts cover.
HISTORY_RUNS = 30


@dataclass
class RunContext:
    history: list[dict[str, Any]] = field(default_factory=list)
    """Run records (``history.run_record``), oldest first, ending with this run."""
    diff: dict[str, Any] | None = None
    """This run against its base (``diff.diff_runs``), None when there is nothing to compare."""
    base: dict[str, Any] | None = None
    """The results dict the diff compared with: the accepted baseline (with its per-case
    acceptances, ``baseline.baseline_results``) or the run before; the reports put its replies
    beside tonight's where ``baseline.*`` evidence failed."""
    warnings: list[str] = field(default_factory=list)


def run_context(run: Mapping[str, Any], reports_dir: str | os.PathLike[str], *, source: RunSource | None = None,
                thresholds: BudgetModel | None = None, last: int = HISTORY_RUNS,
                kind: str | None = NIGHTLY, against: str | None = None) -> RunContext:
    """History and diff for ``run`` from the runs kept in ``reports_dir`` (or ``source``): the
    runs of ``kind`` before it (default the full nightly runs; None: every run). ``against``: the
    run to diff with (``harness run --against RUN``) instead of the baseline or the previous night."""
    source = source or LocalRunSource(reports_dir)
    ctx = RunContext()
    run_id = str(run.get("run_id", ""))
    t = thresholds or BudgetModel()
    try:
        # the nights: full nightly runs only (harness.run.kind); tonight's point whatever its kind
        # the newest nights whole (the diff's recent ones), the older ones' records from digests
        hist = load_records(source, max(last, t.drift_flaky_nights), whole=t.drift_flaky_nights + 1, until=run_id,
                            kind=kind)
        ctx.warnings += hist.warnings
        earlier = [(rid, rec, whole) for rid, rec, whole in hist.entries if rid != run_id and rid < run_id]
        ctx.history = ([rec for _, rec, _ in earlier] + run_records([run]))[-last:]
        runs = [whole for _, _, whole in earlier if whole is not None]
        runs.append(dict(run))
        if against:
            from harness.night.baseline import resolve_run_id

            base_id, why = resolve_run_id(source, against), "named with --against"
        else:
            base_id, why = choose_base(source, reports_dir, run_id, kind=kind)
        if base_id is not None:
            loaded = next((r for r in runs[:-1] if r.get("run_id") == base_id), None)
            base = load_base(source, reports_dir, base_id, loaded)
            ctx.base = base
            ctx.diff = diff_runs(base, run, recent=runs[-t.drift_flaky_nights:], thresholds=t, base_reason=why)
            if base.get("baseline_record"):
                ctx.diff["baseline"] = acceptance_note(base["baseline_record"])
    except Exception as exc:  # a report without trends beats no report
        msg = f"history/diff left out of the report: {type(exc).__name__}: {exc}"
        log.warning(msg)
        ctx.warnings.append(msg)
    return ctx


def nights_around(results: Mapping[str, Any], reports_dir: Path
                  ) -> tuple[list[dict[str, Any]], dict[str, Any] | None, dict[str, Any] | None]:
    """``harness.report.render``'s context: the history, diff and base (``RunContext.base``)
    of a finished run."""
    ctx = run_context(results, reports_dir)
    return ctx.history, ctx.diff, ctx.base
