"""Anomalies against history: a case that got much dearer, chattier or slower than usual.

Applies to every case of every layer (each is metered at the sandbox), unless ``[budget]
anomaly_layers`` names fewer layers. The baseline of a case is taken from earlier
``harness run`` nights in the same reports folder, against the same target name, in which
that case passed (a night where it failed, e.g. with a seeded regression on, is no baseline),
and only from nights run like tonight: the same concurrency and the same settings
fingerprint (``basis``: a hash of ``[target]`` but its ``version``, ``[sandbox]``,
``[critic]`` and ``[embeddings]``), recorded in each results.json as ``summary.anomaly_basis``. A case is
compared only once it has at least ``anomaly_min_runs`` (default 5) such earlier passing
runs within the last ``anomaly_window`` (default 7). When too few earlier nights were run
like tonight, the check is skipped for the whole run and ``summary.anomalies.note`` (and the
run's notes) say why, naming the concurrency or config that differs.

A figure is an anomaly only when all three hold:

- it is above ``anomaly_ratio`` (1.5) x the baseline median;
- it is above the median by more than ``anomaly_mad_k`` (3) robust spreads
  (1.4826 x the median absolute deviation of the baseline values: a case whose latency
  wanders night to night needs a bigger jump);
- it is above the median by at least the metric's minimum absolute change:
  ``anomaly_min_latency_ms`` (1000), ``anomaly_min_tokens`` (50),
  ``anomaly_min_llm_calls`` (1), ``anomaly_min_cost_usd`` (0).

A latency over its limit only by what the case's rare slow LLM calls explain, measured
against the same earlier nights' calls run-wide, is no anomaly (``checks/provider.py``: the
provider's slow spell), unless tonight's calls so far are slower across the run.

Metrics: ``tokens`` (input + output), ``llm_calls``, ``cost_usd``, ``latency_ms``. A zero
baseline has no ratio and is skipped. Failing evidence is ``anomaly.<metric>`` on the case.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from harness.checks.provider import ProviderCalls, call_durations, explained, observed_durations, profile
from harness.fileio import kept_digest, prune_kept
from harness.types import CaseResult, Evidence
from harness.run.kind import NIGHTLY, kind_of

log = logging.getLogger("harness.run.anomaly")
EVAL = "anomaly@2"
METRICS = ("tokens", "llm_calls", "cost_usd", "latency_ms")
MAD_SCALE = 1.4826  # MAD x this estimates the standard deviation of normal data
#: The config sections whose change makes earlier nights incomparable (the agent and the sandbox).
BASIS_SECTIONS = ("target", "sandbox", "critic", "embeddings")


#: Run ids ``harness run`` gives (UTC time first). Labelled runs (calibration's "clean",
#: "regression-x") are neither compared nor used as a baseline.
NIGHTLY_ID = re.compile(r"^\d{8}-\d{6}-")


def is_nightly_id(run_id: str) -> bool:
    return bool(NIGHTLY_ID.match(run_id or ""))


@dataclass(frozen=True)
class Thresholds:
    """When a jump is an anomaly (``[budget] anomaly_*``; see the module docstring)."""

    ratio: float = 1.5
    window: int = 7
    min_runs: int = 5
    mad_k: float = 3.0
    min_change: Mapping[str, float] = field(default_factory=lambda: {
        "latency_ms": 1000.0, "tokens": 50.0, "llm_calls": 1.0, "cost_usd": 0.0})


def basis(config: Any, concurrency: int) -> dict[str, Any]:
    """What tonight's figures depend on besides the agent: concurrency and the settings' hash."""
    sections = getattr(config, "sections", {}) or {}
    picked = {k: sections.get(k) for k in BASIS_SECTIONS if sections.get(k)}
    if isinstance(picked.get("target"), Mapping):  # a new agent version is what the check is for
        picked["target"] = {k: v for k, v in picked["target"].items() if k != "version"}
    canonical = json.dumps(picked, sort_keys=True, separators=(",", ":"), default=str)
    return {"concurrency": int(concurrency), "config": "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()[:16]}


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
class HistoryRun:
    """One earlier night: its id, its basis ({} when it recorded none) and its passing cases' figures."""

    run_id: str
    basis: Mapping[str, Any]
    passed: dict[str, dict[str, float]]
    calls_ms: tuple[float, ...] = ()
    """Every LLM call's duration in the night's passing cases (``checks/provider.py``)."""


@dataclass
class History:
    """Earlier nights of one target, newest first."""

    entries: list[HistoryRun] = field(default_factory=list)
    window: int = 7

    @property
    def runs(self) -> list[str]:
        return [e.run_id for e in self.entries]

    @property
    def by_case(self) -> dict[str, list[dict[str, float]]]:
        """Per case id: its figures in the last ``window`` nights where it passed, newest first."""
        out: dict[str, list[dict[str, float]]] = {}
        for entry in self.entries:
            for case_id, figures in entry.passed.items():
                lst = out.setdefault(case_id, [])
                if len(lst) < self.window:
                    lst.append(figures)
        return out

    def provider(self) -> ProviderCalls | None:
        """The LLM calls of the last ``window`` nights, run-wide: what a provider's slow spell looks like."""
        return profile(d for e in self.entries[:self.window] for d in e.calls_ms)

    def like(self, tonight: Mapping[str, Any]) -> "History":
        """Only the nights run with ``tonight``'s basis (same concurrency and settings)."""
        return History([e for e in self.entries if dict(e.basis) == dict(tonight)], self.window)

    def values(self, case_id: str, metric: str, window: int | None = None) -> list[float]:
        cap = window or self.window
        out = []
        for entry in self.entries:
            figures = entry.passed.get(case_id)
            if figures is not None and metric in figures:
                out.append(figures[metric])
                if len(out) >= cap:
                    break
        return out

    def baseline(self, case_id: str, metric: str, window: int) -> tuple[float, int] | None:
        values = self.values(case_id, metric, window)
        if not values:
            return None
        return float(statistics.median(values)), len(values)


#: What a digest holds changed: digests of another version are computed again.
DIGEST_VERSION = 1


def night_digest(data: Mapping[str, Any]) -> dict[str, Any]:
    """What ``load_history`` reads of one results.json: its target, kind, basis, the passing
    cases' figures and their LLM calls' durations (a few kB of a file of megabytes)."""
    summary, target = data.get("summary"), data.get("target")
    run_basis = summary.get("anomaly_basis") if isinstance(summary, dict) else None
    passed = {str(c["id"]): case_figures(c) for c in data.get("cases") or ()
              if isinstance(c, dict) and c.get("status") == "pass" and c.get("id")}
    calls = [d for c in data.get("cases") or () if isinstance(c, dict) and str(c.get("id")) in passed
             for d in call_durations(c.get("turns") or ())]
    return {"target": target.get("name") if isinstance(target, dict) else None, "kind": kind_of(data),
            "basis": run_basis if isinstance(run_basis, dict) else {}, "passed": passed, "calls": calls}


def _parsed_digest(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError("not a results.json object")
    return night_digest(data)


def load_history(reports: Path, target_name: str, exclude_run: str = "", window: int = 7,
                 max_runs: int = 60, cache: Path | None = None) -> History:
    """Earlier runs' results.json under ``reports`` (newest first by run id, which starts with
    the UTC time), for ``target_name``; unreadable files are skipped with a log line. ``cache``:
    a folder where each file's digest is kept (``night_digest``), so a reports folder of many
    nights is not parsed whole before every run's first case (30 nights of 3.4 MB: 0.47 s)."""
    hist = History(window=window)
    if not reports.is_dir():
        return hist
    dirs = sorted((p for p in reports.iterdir() if p.is_dir() and p.name != exclude_run and is_nightly_id(p.name)
                   and (p / "results.json").is_file()), key=lambda p: p.name, reverse=True)
    for run in dirs[:max_runs]:
        try:
            path = run / "results.json"
            digest = kept_digest(path, cache, DIGEST_VERSION, lambda: _parsed_digest(path))
        except (OSError, ValueError) as exc:
            log.info("history: skipping %s: %s", run, exc)
            continue
        if digest.get("target") != target_name:
            continue
        if digest.get("kind") != NIGHTLY:  # a --case, -k or --repeat run is no night (harness.run.kind)
            continue
        hist.entries.append(HistoryRun(run.name, digest.get("basis") or {}, digest.get("passed") or {},
                                       tuple(digest.get("calls") or ())))
    if cache is not None:
        prune_kept(cache)
    return hist


def comparable(history: History, tonight: Mapping[str, Any], min_runs: int) -> tuple[History, str]:
    """The nights to compare with, and a note when the check is skipped for the whole run."""
    like = history.like(tonight)
    if len(like.entries) >= min_runs:
        return like, ""
    if not history.entries:
        return like, f"anomaly checks skipped: no earlier night of this target yet ({min_runs} needed)"
    others = [e for e in history.entries if dict(e.basis) != dict(tonight)][:history.window]
    why = ""
    if others:
        conc = sorted({str(e.basis.get("concurrency", "unknown")) for e in others})
        differs = []
        if any(e.basis.get("concurrency") != tonight.get("concurrency") for e in others):
            differs.append(f"tonight's concurrency {tonight.get('concurrency')} differs from theirs "
                           f"({', '.join(conc)})")
        if any(e.basis.get("config") != tonight.get("config") for e in others):
            differs.append("tonight's [target]/[sandbox]/[critic]/[embeddings] settings differ from theirs"
                           if any(e.basis for e in others) else "they recorded no concurrency or settings")
        why = f"; {len(others)} other earlier night(s) are not comparable: " + " and ".join(differs)
    return like, (f"anomaly checks skipped: {len(like.entries)} earlier night(s) ran like tonight, "
                  f"{min_runs} needed{why}")


def _current(result: CaseResult) -> dict[str, float]:
    """Tonight's figures per attempt: a ``--repeat K`` case's spend is the sum of its K attempts
    (run/cost.combine), the nights' are one attempt's; its latency is the last attempt's."""
    k = float(max(int(result.attempts or 1), 1))
    out = {"tokens": float(result.tokens.input + result.tokens.output) / k, "llm_calls": float(result.llm_calls) / k}
    if result.cost_usd is not None:
        out["cost_usd"] = float(result.cost_usd) / k
    if result.latency_ms is not None:
        out["latency_ms"] = float(result.latency_ms)
    return out


def _shown(metric: str, v: float) -> str:
    if metric == "cost_usd":
        return f"${v:.6f}"
    return f"{v:.0f}ms" if metric == "latency_ms" else f"{v:.0f}"


def anomalies(result: CaseResult, history: History, *, ratio: float = 1.5, window: int = 7,
              min_latency_ms: float = 1000.0, thresholds: Thresholds | None = None,
              provider: ProviderCalls | None = None, shift: str = "") -> list[Evidence]:
    """Failing ``anomaly.<metric>`` evidence for each metric that jumped (see the module docstring).
    ``provider``: the earlier nights' LLM calls; a latency over its limit only by what the case's
    rare slow calls explain is no anomaly, unless ``shift`` says tonight's calls are slower across the run."""
    th = thresholds or Thresholds(ratio=ratio, window=window,
                                  min_change={**Thresholds().min_change, "latency_ms": min_latency_ms})
    if result.status == "skipped" or result.attempts < 1:
        return []
    out = []
    now = _current(result)
    for metric in METRICS:
        if metric not in now:
            continue
        values = history.values(result.id, metric, th.window)
        if len(values) < th.min_runs:
            continue
        median = float(statistics.median(values))
        if median <= 0:
            continue
        spread = MAD_SCALE * float(statistics.median(abs(v - median) for v in values))
        value, n = now[metric], len(values)
        floor = max(th.min_change.get(metric, 0.0), th.mad_k * spread)
        limit = max(th.ratio * median, median + floor)
        if value <= limit or value - median < th.min_change.get(metric, 0.0):
            continue
        why = explained(None if shift or metric != "latency_ms" else provider, observed_durations(result.observation))
        if why.ms and value - why.ms <= limit:
            continue  # a rare slow call of the provider, not the agent (checks/provider.py)
        shown = lambda v: _shown(metric, v)  # noqa: E731
        extra = ""
        if metric == "latency_ms" and shift:
            extra = f"; no slow call is excused: {shift}"
        elif why.ms:
            extra = f"; {why.shown(provider)}, not enough"
        out.append(Evidence(
            check=f"anomaly.{metric}", turn=None, availability="ready", passed=False,
            expected=f"<= {shown(limit)}: the larger of {th.ratio:g} x baseline {shown(median)} and baseline + "
                     f"{shown(floor)} (median of the last {n} passing runs; spread {shown(spread)})",
            observed=shown(value),
            reason=f"{metric} {shown(value)} is {value / median:.2f}x the baseline {shown(median)} "
                   f"(median of {n} earlier passing runs; threshold {shown(limit)}){extra}",
            evaluator=EVAL))
    return out
