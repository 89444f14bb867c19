"""History: earlier runs, read back from where they are kept, as per-run and per-case records.

A *run source* lists run ids (oldest first) and loads one run's results.json dict:

    RunSource            the interface (``run_ids()``, ``load(run_id)``, ``name``)
    ├── LocalRunSource     run folders under the reports directory (always there)
    ├── RemoteRunSource    object storage, through ``harness.night.storage`` (its index.json)
    └── CombinedRunSource  both: local first, remote for the nights this machine lacks

Everything here is plain Python (the dashboard is drawn from ``run_records`` during every
``harness run``, which must not pay for pandas); ``cases_frame`` / ``runs_frame`` build the
pandas tables for ``harness history`` and the parquet export and import pandas on first use.

Rates are honest: a layer's pass rate is passed / decidable and is None (shown "n/a") when
nothing was decidable, never 100% of nothing.
"""

from __future__ import annotations

import json
import logging
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Protocol, Sequence

log = logging.getLogger("harness.night.history")

RESULTS = "results.json"
SCHEMA = "harness.results/1"
#: The statuses that say something about the agent (skipped / unavailable do not).
DECIDED = ("pass", "soft", "fail", "error")
GOOD = ("pass", "soft")
BAD = ("fail", "error")
#: Letters of the per-case status strip in ``harness history``.
STRIP = {"pass": ".", "soft": "s", "fail": "F", "error": "E", "unavailable": "u", "skipped": "-", None: " "}


class RunSource(Protocol):
    """Where runs are kept. ``run_ids`` is oldest first; ``load`` raises on an unreadable run."""

    name: str

    def run_ids(self) -> list[str]: ...

    def load(self, run_id: str) -> dict[str, Any]: ...


def read_results(path: Path) -> dict[str, Any]:
    """One results.json as a dict; ValueError when it is not a harness results file."""
    return checked_results(json.loads(path.read_text(encoding="utf-8")))


def checked_results(data: Any) -> dict[str, Any]:
    """``data`` if it is a results.json dict of the shape ``harness run`` writes; else ValueError
    saying what is not (a run edited by hand is skipped with that reason, never a crash)."""
    from harness.report.jsonread import results_problem

    if not isinstance(data, dict) or data.get("schema") != SCHEMA or not isinstance(data.get("cases"), list):
        raise ValueError(f"not a {SCHEMA} file")
    problem = results_problem(data)
    if problem:
        raise ValueError(f"not as `harness run` wrote it: {problem}")
    return data


class LocalRunSource:
    """Run folders (``<reports>/<run_id>/results.json``) on this machine. ``digests``: a folder
    where each run's record is kept (``night/records.py``)."""

    def __init__(self, reports_dir: str | os.PathLike[str], digests: str | os.PathLike[str] | None = None):
        self.root = Path(reports_dir)
        self.name = f"local:{self.root}"
        self.digests = Path(digests) if digests is not None else None

    def run_ids(self) -> list[str]:
        if not self.root.is_dir():
            return []
        # Run ids start with their UTC start time (YYYYMMDD-HHMMSS-xxxx): name order is time order.
        return sorted(p.name for p in self.root.iterdir() if (p / RESULTS).is_file())

    def load(self, run_id: str) -> dict[str, Any]:
        return read_results(self.root / run_id / RESULTS)


class RemoteRunSource:
    """Runs in object storage (``harness.night.storage``): listed from its ``index.json``, each
    loaded from ``<prefix>/runs/YYYY/MM/DD/<run_id>/results.json``. The index is read once."""

    def __init__(self, store: Any):
        from harness.night.store import describe

        self.store = store
        self.name = describe(store.sc)
        self._entries: dict[str, Mapping[str, Any]] | None = None

    def _index(self) -> dict[str, Mapping[str, Any]]:
        if self._entries is None:
            from harness.night.runindex import read_index

            self._entries = {str(e.get("run_id")): e for e in read_index(self.store).get("runs") or ()
                             if isinstance(e, Mapping) and e.get("run_id") and e.get("prefix")}
        return self._entries

    def run_ids(self) -> list[str]:
        return sorted(self._index())

    def load(self, run_id: str) -> dict[str, Any]:
        entry = self._index().get(run_id)
        raw = self.store.get(f"{entry['prefix']}/{RESULTS}") if entry else None
        if raw is None:
            raise ValueError("results.json is not in storage (yet)")
        return checked_results(json.loads(raw))


class CombinedRunSource:
    """Local runs and remote ones together; a run kept in both is read locally (no download).

    When the remote cannot be listed (storage down) the local runs still come back and
    the problem is logged and kept in ``warnings``.
    """

    def __init__(self, local: RunSource, remote: RunSource):
        self.local, self.remote = local, remote
        self.name = f"{local.name} + {remote.name}"
        self.warnings: list[str] = []
        self._local_ids: set[str] = set()

    def run_ids(self) -> list[str]:
        self._local_ids = set(self.local.run_ids())
        try:
            remote = set(self.remote.run_ids())
        except Exception as exc:  # StorageError, a bad index: history goes on with what is here
            msg = f"remote runs not listed ({self.remote.name}): {type(exc).__name__}: {exc}"
            log.warning(msg)
            self.warnings.append(msg)
            remote = set()
        return sorted(self._local_ids | remote)

    def load(self, run_id: str) -> dict[str, Any]:
        if run_id in self._local_ids or run_id in self.local.run_ids():
            return self.local.load(run_id)
        try:
            return self.remote.load(run_id)
        except (OSError, ValueError):
            raise
        except Exception as exc:  # StorageError is not an OSError; skipping needs one of those
            raise OSError(f"{type(exc).__name__}: {exc}") from exc


@dataclass
class History:
    """Runs loaded from a source, oldest first, plus what could not be read."""

    runs: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    left_out: int = 0
    """Runs passed over for their kind (``load_history(kind=...)``)."""

    @property
    def run_ids(self) -> list[str]:
        return [str(r.get("run_id")) for r in self.runs]


def load_history(source: RunSource, last: int | None = None, *, until: str | None = None,
                 kind: str | None = None) -> History:
    """The last ``last`` readable runs of ``source`` (all when None), up to and including ``until``;
    with ``kind`` (``harness.run.kind``: ``nightly``...) only the runs of that kind, ``until`` itself
    always (``left_out`` counts the others).

    An unreadable run is skipped with a warning (logged and kept in ``warnings``): one
    corrupt night must not hide every other.
    """
    from harness.run.kind import kind_of

    def whole(run_id: str, _taken: int) -> tuple[str, dict[str, Any]]:
        run = source.load(run_id)
        return kind_of(run), run

    runs, warnings, left_out = select_runs(source, last, until=until, kind=kind, read=whole)
    return History(runs=runs, warnings=warnings, left_out=left_out)


def select_runs(source: RunSource, last: int | None, *, until: str | None, kind: str | None,
                read: Callable[[str, int], tuple[str, Any]]) -> tuple[list[Any], list[str], int]:
    """``load_history``'s selection, whatever is read of each run: newest first, ``read(run_id,
    taken)`` gives (the run's kind, what to keep of it) until ``last`` are kept (``taken``: how
    many so far); an unreadable run is skipped with a warning, one of another ``kind`` than
    asked (``until`` itself excepted) is left out. (kept oldest first, warnings, left out)."""
    from harness.run.kind import ANY

    kept: list[Any] = []
    warnings: list[str] = []
    left_out = 0
    ids = source.run_ids()
    if until is not None and until in ids:
        ids = ids[: ids.index(until) + 1]
    for run_id in reversed(ids):
        if last is not None and len(kept) >= last:
            break
        try:
            run_kind, value = read(run_id, len(kept))
        except (OSError, ValueError) as exc:  # JSONDecodeError is a ValueError
            msg = f"skipped run {run_id} ({source.name}): {type(exc).__name__}: {exc}"
            log.warning(msg)
            warnings.append(msg)
            continue
        if run_id != until and kind not in (None, ANY) and run_kind != kind:  # an ad-hoc run is no night
            left_out += 1
            continue
        kept.append(value)
    kept.reverse()
    return kept, list(getattr(source, "warnings", [])) + warnings, left_out


# --------------------------------------------------------------------------- plain metrics


def p95(values: Iterable[float | None]) -> float | None:
    """95th percentile by nearest rank (an observed value, no interpolation); None when empty."""
    xs = sorted(float(v) for v in values if isinstance(v, (int, float)) and math.isfinite(v))
    if not xs:
        return None
    return xs[max(0, math.ceil(0.95 * len(xs)) - 1)]


def mean(values: Iterable[float | None]) -> float | None:
    xs = [float(v) for v in values if isinstance(v, (int, float)) and math.isfinite(v)]
    return sum(xs) / len(xs) if xs else None


def is_similarity(evidence: Mapping[str, Any]) -> bool:
    return str(evidence.get("check", "")).split(".")[0] == "similarity"


def case_similarity(case: Mapping[str, Any]) -> float | None:
    """Mean score of a case's ready similarity evidence (None: it has none)."""
    return mean(e.get("score") for e in case.get("evidence") or ()
                if is_similarity(e) and e.get("availability", "ready") == "ready")


def rate(passed: int, decidable: int) -> float | None:
    """passed / decidable; None when nothing was decidable."""
    return passed / decidable if decidable > 0 else None


def case_row(run: Mapping[str, Any], case: Mapping[str, Any]) -> dict[str, Any]:
    """One case of one run, flat (a row of the long table)."""
    tokens = case.get("tokens") or {}
    return {
        "run_id": str(run.get("run_id", "")),
        "started_at": str(run.get("started_at", "")),
        "case_id": str(case.get("id", "")),
        "layer": str(case.get("layer", "")),
        "channel": str(case.get("channel", "")),
        "status": str(case.get("status", "")),
        "quarantined": bool(case.get("quarantined", False)),
        "attempts": int(case.get("attempts") or 1),
        "passes": int(case.get("passes") or 0),
        "latency_ms": case.get("latency_ms"),
        "llm_calls": int(case.get("llm_calls") or 0),
        "tokens_in": int(tokens.get("input") or 0),
        "tokens_out": int(tokens.get("output") or 0),
        "cost_usd": case.get("cost_usd"),
        "similarity": case_similarity(case),
    }


def group_metrics(cases: Sequence[Mapping[str, Any]], counts: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Metrics of a group of cases (a layer, or the whole run).

    Counts come from the run's own summary when given (planned is only known there);
    the rest is computed from the cases.
    """
    by: dict[str, int] = {}
    for c in cases:
        by[str(c.get("status"))] = by.get(str(c.get("status")), 0) + 1
    decidable = by.get("pass", 0) + by.get("soft", 0) + by.get("fail", 0)
    counts = counts or {}
    passed = int(counts.get("passed", by.get("pass", 0)))
    decidable = int(counts.get("decidable", decidable))
    costs = [c.get("cost_usd") for c in cases if isinstance(c.get("cost_usd"), (int, float))]
    return {
        "planned": int(counts.get("planned", len(cases))),
        "executed": int(counts.get("executed", len(cases) - by.get("skipped", 0))),
        "decidable": decidable,
        "passed": passed,
        "soft": int(counts.get("soft", by.get("soft", 0))),
        "failed": int(counts.get("failed", by.get("fail", 0))),
        "errored": int(counts.get("errored", by.get("error", 0))),
        "unavailable": int(counts.get("unavailable", by.get("unavailable", 0))),
        "pass_rate": rate(passed, decidable),
        "cost_usd": float(counts["cost_usd"]) if isinstance(counts.get("cost_usd"), (int, float))
        else (sum(costs) if costs else None),
        "tokens": sum(int((c.get("tokens") or {}).get("input") or 0) + int((c.get("tokens") or {}).get("output") or 0)
                      for c in cases),
        "latency_p95_ms": p95(c.get("latency_ms") for c in cases),
        "similarity": mean(case_similarity(c) for c in cases),
    }


def run_record(run: Mapping[str, Any]) -> dict[str, Any]:
    """One run as the dashboard and ``harness history`` see it: identity, references, and
    metrics for the whole run (``total``) and per layer (``layers``)."""
    cases = [c for c in run.get("cases") or () if isinstance(c, Mapping)]
    layers = {}
    names = list((run.get("layers") or {}).keys()) + sorted({str(c.get("layer")) for c in cases})
    for name in dict.fromkeys(names):
        layers[name] = group_metrics([c for c in cases if c.get("layer") == name], (run.get("layers") or {}).get(name))
    target = run.get("target") or {}
    return {
        "run_id": str(run.get("run_id", "")),
        "started_at": str(run.get("started_at", "")),
        "verdict": str((run.get("summary") or {}).get("verdict", "")),
        "target": f"{target.get('name', '')} {target.get('version', '')}".strip(),
        "golden_version": str(run.get("golden_version", "")),
        "models": dict(run.get("models") or {}),
        "total": group_metrics(cases, run.get("summary")),
        "layers": layers,
    }


def run_records(runs: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [run_record(r) for r in runs]


def status_matrix(runs: Sequence[Mapping[str, Any]]) -> dict[str, list[str | None]]:
    """case id -> its status in each run (None where the case did not run), runs oldest first."""
    matrix: dict[str, list[str | None]] = {}
    for i, run in enumerate(runs):
        for c in run.get("cases") or ():
            row = matrix.setdefault(str(c.get("id")), [None] * len(runs))
            row[i] = str(c.get("status"))
    return matrix


# --------------------------------------------------------------------------- pandas


def _pandas():
    try:
        import pandas as pd
    except ImportError as exc:  # pragma: no cover - pandas is a runtime dependency
        raise ImportError("harness history needs pandas: pip install 'pandas>=2' pyarrow") from exc
    return pd


def cases_frame(runs: Sequence[Mapping[str, Any]]):
    """The long table: one row per (run, case) with status and metrics (pandas DataFrame)."""
    pd = _pandas()
    rows = [case_row(r, c) for r in runs for c in r.get("cases") or () if isinstance(c, Mapping)]
    columns = list(case_row({}, {}).keys())
    return pd.DataFrame(rows, columns=columns)


def runs_frame(runs: Sequence[Mapping[str, Any]]):
    """One row per (run, layer) plus a ``total`` row per run (pandas DataFrame)."""
    pd = _pandas()
    rows = []
    for rec in run_records(runs):
        for layer, m in [*rec["layers"].items(), ("total", rec["total"])]:
            rows.append({"run_id": rec["run_id"], "started_at": rec["started_at"], "layer": layer, **m})
    frame = pd.DataFrame(rows)
    if not frame.empty:
        frame["pass_rate"] = frame["pass_rate"].astype("float64")  # None -> NaN, never 1.0
    return frame


def write_parquet(runs: Sequence[Mapping[str, Any]], path: str | os.PathLike[str]) -> Path:
    """Export the per-case long table to parquet (pyarrow)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    cases_frame(runs).to_parquet(path, index=False)
    return path
