"""The history of a run's end without parsing every earlier night (``load_records``).

A run's end (``night/context.run_context``) shows the last ``HISTORY_RUNS`` nights (their
``history.run_record``: a few kB each) and diffs tonight with its base and the last few nights
(whole). Parsing every night's results.json for its record made the end of a run grow with
the reports folder: 30 nights of 3.4 MB took 1.42 s instead of 0.53 s. Here the newest nights
are read whole, as the diff needs them, and the older ones' records come from digests kept in
``<cache_dir>/history-records`` by the file's path, size and modification time (a night
rewritten in place is read again).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from harness.fileio import kept_digest, prune_kept
from harness.night.history import RESULTS, RunSource, run_record, select_runs

#: What a digest holds changed: digests of another version are computed again.
VERSION = 1


def record_digest(run: Mapping[str, Any]) -> dict[str, Any]:
    """What a later run's history needs of this one: its run id (as the file says), its kind
    (``harness.run.kind``) and its ``run_record``."""
    from harness.run.kind import kind_of

    return {"run_id": str(run.get("run_id", "")), "kind": kind_of(run), "record": run_record(run)}


def record_of(source: RunSource, run_id: str) -> dict[str, Any]:
    """``record_digest`` of ``run_id`` in ``source``: kept digests for local runs where the source
    has a ``digests`` folder (a combined source's local runs too), else the run read whole."""
    local = getattr(source, "local", None)
    if local is not None and run_id in local.run_ids():
        return record_of(local, run_id)
    folder, root = getattr(source, "digests", None), getattr(source, "root", None)
    if folder is not None and root is not None:
        return kept_digest(Path(root) / run_id / RESULTS, folder, VERSION, lambda: record_digest(source.load(run_id)),
                           valid=lambda d: isinstance(d.get("record"), dict))
    return record_digest(source.load(run_id))


@dataclass
class Records:
    """``load_records``: per run oldest first, (its file's run id, its ``run_record``, the whole
    run or None), plus what could not be read."""

    entries: list[tuple[str, dict[str, Any], dict[str, Any] | None]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def load_records(source: RunSource, last: int, *, whole: int, until: str | None = None,
                 kind: str | None = None) -> Records:
    """``history.load_history``'s runs as records: the same runs (``history.select_runs``), the
    newest ``whole`` of them read whole, the older ones' records from their digests (``record_of``)."""

    def read(run_id: str, taken: int) -> tuple[str, tuple[str, dict[str, Any], dict[str, Any] | None]]:
        run = source.load(run_id) if taken < whole else None
        digest = record_digest(run) if run is not None else record_of(source, run_id)
        return digest.get("kind"), (str(digest.get("run_id", "")), digest["record"], run)

    entries, warnings, _ = select_runs(source, last, until=until, kind=kind, read=read)
    folder = getattr(getattr(source, "local", source), "digests", None)
    if folder is not None:
        prune_kept(folder)
    return Records(entries, warnings)
