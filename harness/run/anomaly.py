"""Anomalies against history: a case that got much dearer, chattier or slower than usual.

The baseline of a case is the median of its metrics over the last ``anomaly_window`` earlier
runs in the same reports folder where the same case id ran against the same target name
and passed (a run in which the case failed, e.g. with a seeded regression on, is no
baseline). A current figure above ``anomaly_ratio`` x baseline is a regression, reported as
failing evidence ``anomaly.<metric>`` on the case even when the absolute threshold holds.

Metrics: ``tokens`` (input + output), ``llm_calls``, ``cost_usd``, ``latency_ms``. A zero
baseline has no ratio and is skipped; latency must also rise by at least
``anomaly_min_latency_ms`` (scheduling noise on a busy machine is not a regression).

Reads earlier runs' ``results.json`` directly (small and local; harness.night.history may offer
the same later).
"""

from __future__ import annotations

import json
import logging
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from harness.types import CaseResult, Evidence

log = logging.getLogger("harness.run.anomaly")
EVAL = "anomaly@1"
METRICS = ("tokens", "llm_calls", "cost_usd", "latency_ms")


#: Run ids ``harness run`` gives (UTC time first). Labelled runs (calibration's "clean",
#: "regression-x") are neither compared nor used as a baseline.
NIGHTLY_ID = re.compile(r"^\d{8}-\d{6}-")


def is_nightly_id(run_id: str) -> bool:
    return bool(NIGHTLY_ID.match(run_id or ""))


def case_figures(case: Mapping[str, Any]) -> dict[str, float]:
    """The comparable figures of one results.json case entry (missing ones left out)."""
    out: dict[str, float] = {}
    tokens = case.get("tokens") or {}
    if isinstance(tokens.get("input"), (int, float)) and isinstance(tokens.get("output"), (int, float)):
        out["tokens"] = float(tokens["input"] + tokens["output"])
    for key in ("llm_calls", "cost_usd", "latency_ms"):
        v = case.get(key)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out[key] = float(v)
    return out


@dataclass
class History:
    """Per case id: figures from earlier passing runs, newest first."""

    runs: list[str] = field(default_factory=list)
    by_case: dict[str, list[dict[str, float]]] = field(default_factory=dict)

    def baseline(self, case_id: str, metric: str, window: int) -> tuple[float, int] | None:
        values = [f[metric] for f in self.by_case.get(case_id, []) if metric in f][:window]
        if not values:
            return None
        return float(statistics.median(values)), len(values)


def load_history(reports: Path, target_name: str, exclude_run: str = "", window: int = 7,
                 max_runs: int = 60) -> History:
    """Earlier runs' results.json under ``reports`` (newest first by run id, which starts with
    the UTC time), for ``target_name``; unreadable files are skipped with a log line."""
    hist = History()
    if not reports.is_dir():
        return hist
    dirs = sorted((p for p in reports.iterdir() if p.is_dir() and p.name != exclude_run and is_nightly_id(p.name)
                   and (p / "results.json").is_file()), key=lambda p: p.name, reverse=True)
    for run in dirs[:max_runs]:
        try:
            data = json.loads((run / "results.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            log.info("history: skipping %s: %s", run, exc)
            continue
        if not isinstance(data, dict) or (data.get("target") or {}).get("name") != target_name:
            continue
        hist.runs.append(run.name)
        for case in data.get("cases") or ():
            if not isinstance(case, dict) or case.get("status") != "pass" or not case.get("id"):
                continue
            figures = case_figures(case)
            lst = hist.by_case.setdefault(str(case["id"]), [])
            if len(lst) < window:
                lst.append(figures)
    return hist


def _current(result: CaseResult) -> dict[str, float]:
    out = {"tokens": float(result.tokens.input + result.tokens.output), "llm_calls": float(result.llm_calls)}
    if result.cost_usd is not None:
        out["cost_usd"] = float(result.cost_usd)
    if result.latency_ms is not None:
        out["latency_ms"] = float(result.latency_ms)
    return out


def anomalies(result: CaseResult, history: History, *, ratio: float = 1.5, window: int = 7,
              min_latency_ms: float = 1000.0) -> list[Evidence]:
    """Failing ``anomaly.<metric>`` evidence for each metric that jumped over ``ratio`` x baseline."""
    if result.status == "skipped" or result.attempts < 1:
        return []
    out = []
    now = _current(result)
    for metric in METRICS:
        if metric not in now:
            continue
        base = history.baseline(result.id, metric, window)
        if base is None or base[0] <= 0:
            continue
        median, n = base
        value = now[metric]
        if value <= ratio * median:
            continue
        if metric == "latency_ms" and value - median < min_latency_ms:
            continue
        unit = {"cost_usd": "$", "latency_ms": "ms"}.get(metric, "")
        shown = (lambda v: f"${v:.6f}") if unit == "$" else (lambda v: f"{v:.0f}{unit}")
        out.append(Evidence(
            check=f"anomaly.{metric}", turn=None, availability="ready", passed=False,
            expected=f"<= {ratio:g} x baseline {shown(median)} (median of last {n} passing runs) = "
                     f"{shown(ratio * median)}",
            observed=shown(value),
            reason=f"{metric} {shown(value)} is {value / median:.2f}x the baseline {shown(median)} "
                   f"(median of {n} earlier passing runs; threshold {ratio:g}x = {shown(ratio * median)})",
            evaluator=EVAL))
    return out
