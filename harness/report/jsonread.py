"""results.json read back: ``load_report`` (a file or a run directory, refused clearly when it
is not one) and the inverse of jsonfile.py's ``*_to_dict``: ``case_from_dict`` turns a journal
line or a stored case back into a ``CaseResult`` (``--resume``, shards, a killed run's journal),
``report_from_dict`` a whole run."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Mapping

from harness.errors import UsageError
from harness.report.jsonfile import COUNT_FIELDS, SCHEMA, STATUSES
from harness.types import CHANNELS, SOURCE_REAL, CaseResult, Counts, Evidence, RunReport, Tokens


def load_report(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read results.json (or a run directory holding one) back into its dict form.

    Raises ``UsageError`` (exit 2) for a missing, unparsable or foreign file, because the
    only caller that can hit it is a person pointing ``harness report`` at the wrong place.
    """
    from harness.fileio import read_regular_bytes

    path = Path(path)
    if path.is_dir():
        path = path / "results.json"
    fix = "point at a run directory written by `harness run` (its results.json is rewritten by it)"
    try:
        text = read_regular_bytes(path).decode("utf-8")
    except FileNotFoundError:
        raise UsageError("no results.json here", file=str(path),
                         fix="point at a run directory written by `harness run`") from None
    except OSError as exc:  # a FIFO, a folder, no permission: never a hang or a traceback
        raise UsageError(f"results.json {exc.strerror or exc}", file=str(path), fix=fix) from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"results.json is not UTF-8 (byte offset {exc.start})", file=str(path), fix=fix) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"results.json is not valid JSON ({exc.msg})", file=str(path),
                         line=exc.lineno, fix=fix) from None
    except RecursionError:
        raise UsageError("results.json nests deeper than any results file", file=str(path), fix=fix) from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        found = data.get("schema") if isinstance(data, dict) else type(data).__name__
        raise UsageError(f"not a {SCHEMA} file (schema: {found!r})", file=str(path), fix=fix)
    if not isinstance(data.get("cases"), list) or not isinstance(data.get("summary"), dict):
        raise UsageError("results.json lacks 'cases' or 'summary'", file=str(path), fix=fix)
    problem = results_problem(data)
    if problem:
        raise UsageError(f"results.json is not as `harness run` wrote it: {problem}", file=str(path),
                         fix="restore the file (it was edited by hand or by another program), or run again")
    return data


_TABLES = ("summary", "target", "models", "layers", "manifest", "run")
_CASE_TEXT = ("id", "status", "layer", "channel")
_CASE_LISTS = ("evidence", "turns", "tags", "transcript")
_CASE_NUMBERS = ("latency_ms", "cost_usd", "attempts", "passes", "llm_calls")


def results_problem(data: Mapping[str, Any]) -> str | None:
    """What in a results.json dict is not of the shape ``harness run`` writes (None when all is):
    the shapes every reader (report, history, diff, baseline, golden) relies on, so a file edited
    by hand is refused with the place named instead of crashing a renderer (issue 24)."""
    for key in _TABLES:
        if key in data and data[key] is not None and not isinstance(data[key], dict):
            return f"{key} is {type(data[key]).__name__}, not an object"
    if "notes" in data and not (isinstance(data["notes"], list) and all(isinstance(n, str) for n in data["notes"])):
        return "notes is not a list of texts"
    for key in ("run_id", "started_at", "finished_at"):
        if key in data and data[key] is not None and not isinstance(data[key], str):
            return f"{key} is {type(data[key]).__name__}, not text"
    if not isinstance(data.get("cases"), list):
        return "cases is not a list"
    for name, block in [("summary", data.get("summary"))] + [(f"layers.{k}", v) for k, v in
                                                             (data.get("layers") or {}).items()]:
        if block is None:
            continue
        if not isinstance(block, dict):
            return f"{name} is {type(block).__name__}, not an object"
        for key in COUNT_FIELDS:  # the counts every table, history row and diff adds up
            value = block.get(key)
            if key == "verdict":
                if value is not None and not isinstance(value, str):
                    return f"{name}.verdict is {value!r}, not text"
            elif value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                        or not math.isfinite(value)):
                return f"{name}.{key} is {value!r}, not a number"
    for i, case in enumerate(data["cases"]):
        where = f"cases[{i}]"
        if not isinstance(case, dict):
            return f"{where} is {type(case).__name__}, not an object"
        if "id" not in case:
            return f"{where} lacks 'id'"
        for key in _CASE_TEXT:
            if key in case and not isinstance(case[key], str) or key == "id" and not case["id"]:
                return f"{where}.{key} is {case.get(key)!r}, not {'an id' if key == 'id' else 'text'}"
        for key in _CASE_LISTS:
            if key in case and case[key] is not None and not isinstance(case[key], list):
                return f"{where}.{key} is {type(case[key]).__name__}, not a list"
        for key in ("evidence", "turns"):
            bad = next((j for j, item in enumerate(case.get(key) or ()) if not isinstance(item, dict)), None)
            if bad is not None:
                return f"{where}.{key}[{bad}] is not an object"
        for key in _CASE_NUMBERS:
            value = case.get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                      or not math.isfinite(value)):
                return f"{where}.{key} is {value!r}, not a number"
        if "tokens" in case and case["tokens"] is not None and not isinstance(case["tokens"], dict):
            return f"{where}.tokens is not an object"
    return None


# --------------------------------------------------------------------------- from dict


def _require(d: Mapping[str, Any], key: str, what: str) -> Any:
    if key not in d:
        raise ValueError(f"{what} lacks {key!r}")
    return d[key]


def evidence_from_dict(d: Mapping[str, Any]) -> Evidence:
    """Inverse of ``evidence_to_dict``; raises ValueError on a malformed item."""
    availability = d.get("availability", "ready")
    if availability not in ("ready", "unavailable"):
        raise ValueError(f"evidence availability {availability!r} is not ready|unavailable")
    return Evidence(
        check=str(_require(d, "check", "evidence")),
        turn=d.get("turn"),
        availability=availability,
        passed=d.get("passed"),
        score=d.get("score"),
        expected=d.get("expected") or "",
        observed=d.get("observed") or "",
        reason=d.get("reason") or "",
        evaluator=d.get("evaluator") or "",
        source=d.get("source") or SOURCE_REAL,
    )


def case_from_dict(d: Mapping[str, Any]) -> CaseResult:
    """Rebuild a ``CaseResult`` from a journal line or a results.json case.

    Evidence and counters come back whole; the observation does not (it is None), since
    the dict keeps only a transcript. Raises ValueError on a malformed case (a value of another
    type, a number that is none: a line edited by hand, never a crash of the resume).
    """
    if not isinstance(d, Mapping):
        raise ValueError(f"a case must be an object, not {type(d).__name__}")
    problem = results_problem({"cases": [dict(d)]})
    if problem:
        raise ValueError(problem.replace("cases[0]", "the case"))
    try:
        return _case_from_dict(d)
    except (TypeError, AttributeError, OverflowError, KeyError) as exc:
        raise ValueError(f"a malformed case ({type(exc).__name__}: {exc})") from None


def _case_from_dict(d: Mapping[str, Any]) -> CaseResult:
    status = _require(d, "status", "case")
    if status not in STATUSES:
        raise ValueError(f"case status {status!r} is not one of {', '.join(STATUSES)}")
    channel = _require(d, "channel", "case")
    if channel not in CHANNELS:
        raise ValueError(f"case channel {channel!r} is not one of {', '.join(CHANNELS)}")
    tokens = d.get("tokens") or {}
    return CaseResult(
        id=str(_require(d, "id", "case")),
        layer=str(_require(d, "layer", "case")),
        channel=channel,
        status=status,
        evidence=tuple(evidence_from_dict(e) for e in d.get("evidence") or ()),
        attempts=int(d.get("attempts", 1)),
        passes=int(d.get("passes", 0)),
        pass_at_k=d.get("pass_at_k"),
        pass_hat_k=d.get("pass_hat_k"),
        latency_ms=d.get("latency_ms"),
        llm_calls=int(d.get("llm_calls", 0)),
        tokens=Tokens(input=int(tokens.get("input", 0)), output=int(tokens.get("output", 0))),
        cost_usd=d.get("cost_usd", 0.0),
        error=d.get("error") or "",
        file=d.get("file") or "",
        tags=tuple(d.get("tags") or ()),
        observation=None,
        flaky=bool(d.get("flaky", False)),
        pass_rate_ci=tuple(d["pass_rate_ci"]) if d.get("pass_rate_ci") else None,
        quarantined=bool(d.get("quarantined", False)),
        baseline=dict(d["baseline"]) if isinstance(d.get("baseline"), Mapping) else None,
        machine=d.get("machine") if isinstance(d.get("machine"), dict) else None,
    )


def counts_from_dict(d: Mapping[str, Any]) -> Counts:
    """Inverse of ``counts_to_dict`` (missing fields take their defaults)."""
    known = {k: d[k] for k in COUNT_FIELDS if k in d}
    return Counts(**known)


def report_from_dict(d: Mapping[str, Any]) -> RunReport:
    """Inverse of ``report_to_dict`` (observations are not rebuilt)."""
    return RunReport(
        run_id=d.get("run_id", ""),
        started_at=d.get("started_at", ""),
        finished_at=d.get("finished_at", ""),
        harness_version=d.get("harness_version", ""),
        target=dict(d.get("target") or {}),
        golden_version=d.get("golden_version", ""),
        models=dict(d.get("models") or {}),
        summary=counts_from_dict(d.get("summary") or {}),
        layers={k: counts_from_dict(v) for k, v in (d.get("layers") or {}).items()},
        cases=tuple(case_from_dict(c) for c in d.get("cases") or ()),
        exit_code=int(d.get("exit_code", 0)),
        notes=tuple(d.get("notes") or ()),
    )
