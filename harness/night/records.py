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

import hashlib
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from harness.night.history import RESULTS, RunSource, run_record

log = logging.getLogger("harness.night.records")

#: What a digest holds changed: digests of another version are computed again.
VERSION = 1
#: Digests kept in a folder, those written longest ago removed first.
KEEP = 2000


def record_digest(run: Mapping[str, Any]) -> dict[str, Any]:
    """What a later run's history needs of this one: its run id (as the file says), its kind
    (``harness.run.kind``) and its ``run_record``."""
    from harness.run.kind import kind_of

    return {"version": VERSION, "run_id": str(run.get("run_id", "")), "kind": kind_of(run), "record": run_record(run)}


def _kept(source: Any, run_id: str) -> dict[str, Any]:
    """A local source's digest, from its ``digests`` folder when the file was digested before."""
    path = Path(source.root) / run_id / RESULTS
    st = path.stat()
    key = hashlib.sha256(f"{VERSION}\0{path.resolve()}\0{st.st_size}\0{st.st_mtime_ns}".encode())
    entry = source.digests / f"{key.hexdigest()[:32]}.json"
    try:
        kept = json.loads(entry.read_text(encoding="utf-8"))
        if isinstance(kept, dict) and kept.get("version") == VERSION and isinstance(kept.get("record"), dict):
            return kept
    except (OSError, ValueError):
        pass
    digest = record_digest(source.load(run_id))
    try:
        from harness.fileio import atomic_write_text

        source.digests.mkdir(parents=True, exist_ok=True)
        atomic_write_text(entry, json.dumps(digest, separators=(",", ":")))
    except OSError as exc:  # a read-only cache: read again next time
        log.info("history digest not kept: %s", exc)
    return digest


def record_of(source: RunSource, run_id: str) -> dict[str, Any]:
    """``record_digest`` of ``run_id`` in ``source``: kept digests for local runs where the source
    has a ``digests`` folder (a combined source's local runs too), else the run read whole."""
    local = getattr(source, "local", None)
    if local is not None and run_id in local.run_ids():
        return record_of(local, run_id)
    if getattr(source, "digests", None) is not None and getattr(source, "root", None) is not None:
        return _kept(source, run_id)
    return record_digest(source.load(run_id))


def prune(folder: Path, keep: int = KEEP) -> None:
    """At most ``keep`` digests in ``folder``: those written longest ago go first."""
    try:
        files = sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime)
    except OSError:
        return
    for old in files[:max(0, len(files) - keep)]:
        try:
            old.unlink()
        except OSError:
            pass


@dataclass
class Records:
    """``load_records``: per run oldest first, (its file's run id, its ``run_record``, the whole
    run or None), plus what could not be read."""

    entries: list[tuple[str, dict[str, Any], dict[str, Any] | None]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def load_records(source: RunSource, last: int, *, whole: int, until: str | None = None,
                 kind: str | None = None) -> Records:
    """``history.load_history``'s runs as records: the same runs (the last ``last`` readable ones of
    ``kind`` up to ``until``, ``until`` itself whatever its kind), the newest ``whole`` of them
    read whole, the older ones' records from their digests (``record_of``)."""
    from harness.run.kind import ANY

    out = Records()
    ids = source.run_ids()
    if until is not None and until in ids:
        ids = ids[: ids.index(until) + 1]
    for run_id in reversed(ids):
        if len(out.entries) >= last:
            break
        try:
            if len(out.entries) < whole:
                run: dict[str, Any] | None = source.load(run_id)
                digest = record_digest(run)
            else:
                run, digest = None, record_of(source, run_id)
        except (OSError, ValueError) as exc:  # JSONDecodeError is a ValueError
            msg = f"skipped run {run_id} ({source.name}): {type(exc).__name__}: {exc}"
            log.warning(msg)
            out.warnings.append(msg)
            continue
        if run_id != until and kind not in (None, ANY) and digest.get("kind") != kind:
            continue  # an ad-hoc run is no night (harness.run.kind)
        out.entries.append((str(digest.get("run_id", "")), digest["record"], run))
    out.entries.reverse()
    out.warnings = list(getattr(source, "warnings", [])) + out.warnings
    folder = getattr(getattr(source, "local", source), "digests", None)
    if folder is not None:
        prune(folder)
    return out
