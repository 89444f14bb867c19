"""The accepted baseline: the run that later diffs compare with.

``harness baseline accept RUN_ID`` writes ``<reports>/baseline.json``:
``{"schema": "harness.baseline/1", "run_id", "accepted_by", "accepted_at", "note"}``.
Who accepted it comes from ``$USER`` (or ``git config user.name`` when USER is unset);
nothing else about the person is recorded.

``choose_base`` picks what a diff compares with: the named run, else the accepted
baseline (when it is not the run being compared), else the run just before.
"""

from __future__ import annotations

import json
import os
import subprocess
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping

from harness.errors import UsageError
from harness.night.history import RunSource

FILE = "baseline.json"
SCHEMA = "harness.baseline/1"


def _who() -> str:
    user = os.environ.get("USER") or os.environ.get("LOGNAME")
    if user:
        return user
    try:
        name = subprocess.run(["git", "config", "user.name"], capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        name = ""
    return name or "unknown"


def read_baseline(reports_dir: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The accepted baseline record, or None when none was accepted (or the file is unreadable)."""
    path = Path(reports_dir) / FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("run_id") else None


def accept_baseline(reports_dir: str | os.PathLike[str], source: RunSource, run_id: str,
                    note: str = "") -> dict[str, Any]:
    """Bless ``run_id`` (it must be a readable run of ``source``); returns the record written."""
    run_id = resolve_run_id(source, run_id)
    record = {"schema": SCHEMA, "run_id": run_id, "accepted_by": _who(),
              "accepted_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), "note": note}
    from harness.fileio import atomic_write_text

    atomic_write_text(Path(reports_dir) / FILE, json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    return record


def resolve_run_id(source: RunSource, ref: str) -> str:
    """A run id from what a person typed: an id, a unique id prefix, a run folder path, or ``latest``."""
    ids = source.run_ids()
    if not ids:
        raise UsageError(f"no runs found in {source.name}", fix="run `harness run` first, or pass --reports DIR")
    if ref in ("latest", "last"):
        return ids[-1]
    name = Path(ref.rstrip("/")).name if ("/" in ref or ref.endswith("results.json")) else ref
    if name == "results.json":
        name = Path(ref).parent.name
    if name in ids:
        return name
    matches = [i for i in ids if i.startswith(name)]
    if len(matches) == 1:
        return matches[0]
    hint = "several runs match" if matches else "no such run"
    raise UsageError(f"{hint}: {ref!r} in {source.name}", fix=f"latest runs: {', '.join(ids[-3:])}")


def load_run(source: RunSource, run_id: str) -> dict[str, Any]:
    try:
        return source.load(run_id)
    except (OSError, ValueError) as exc:
        raise UsageError(f"run {run_id} is unreadable: {exc}", fix="pick another run (harness history lists them)") \
            from None


def choose_base(source: RunSource, reports_dir: str | os.PathLike[str], new_run_id: str) -> tuple[str | None, str]:
    """(base run id, why) for a diff of ``new_run_id``: the accepted baseline, else the run
    before it; (None, reason) when there is nothing to compare with."""
    record = read_baseline(reports_dir)
    ids = source.run_ids()
    if record and record["run_id"] != new_run_id and record["run_id"] in ids:
        return record["run_id"], f"accepted baseline, by {record.get('accepted_by', '?')}"
    earlier = [i for i in ids if i < new_run_id]
    if earlier:
        why = "previous run" + (" (the accepted baseline is this run)" if record and record["run_id"] == new_run_id
                                else "")
        return earlier[-1], why
    return None, "no earlier run to compare with"


def render_baseline(record: Mapping[str, Any] | None) -> str:
    if not record:
        return "no baseline accepted; diffs compare with the previous run\n"
    note = f"\n  note: {record['note']}" if record.get("note") else ""
    return (f"baseline: {record.get('run_id')}\n  accepted by {record.get('accepted_by')} "
            f"at {record.get('accepted_at')}{note}\n")
