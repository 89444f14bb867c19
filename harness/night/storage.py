"""Object storage: a run's files in S3-compatible storage, an index of runs, a pending spool.

Layout under ``[storage] url = "s3://BUCKET/PREFIX"``::

    PREFIX/index.json                                  every run, newest last (read-modify-write)
    PREFIX/runs/YYYY/MM/DD/RUN_ID/results.json ...     one run's files (report.html, summary.md,
                                                       junit.xml, results.jsonl, manifest.json, logs)
    PREFIX/runs/YYYY/MM/DD/RUN_ID/shards/I-of-N/...    one shard's files; once all N are there the
                                                       merged report is written at the run's level

Works against AWS S3, MinIO and OCI Object Storage's S3 compatibility API: the region and
the addressing style come from the config (OCI and MinIO want ``path``), and boto3's newer
default checksums are switched to ``when_required`` (OCI rejects the trailing checksums
otherwise). Credentials come only from ``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY``
(optionally ``AWS_SESSION_TOKEN``) in the environment and are never printed.

Nothing lost, nothing twice: before a run's upload starts, the files it will put are
written to a spool file (``<reports>/.pending/<run>.json``); each object put removes its
line; the spool is deleted when the index is updated. A put that failed for a transient
reason (unreachable, timeout, 429, 5xx, SlowDown) is retried by the one retry policy
(``harness.models.retry``: 3 tries, exponential backoff with jitter, Retry-After honoured); a
403 or another final answer is not asked again. Then the upload stops and the spool stays for ``harness upload
--pending`` or the next run. An object already in the bucket with the same size and MD5
(its ETag, or the ``md5`` metadata we set, since OCI's ETags are not MD5s) is not put again.

boto3 is imported on first use: a run without ``[storage]`` never loads it. The store itself:
store.py; the index of runs: runindex.py.
"""
from __future__ import annotations

import hashlib
import json
import logging
import mimetypes
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping

from harness.redact import active
from harness.errors import StorageError
from harness.night.runindex import get_results, index_entry, read_index, update_index
from harness.night.spool_shape import spool_problem
from harness.night.store import LAST, S3Store, StorageModel, storage_config

log = logging.getLogger("harness.night.storage")


PENDING_DIR = ".pending"
#: Files of a run directory never uploaded (SQLite's transient side files).
SKIP_SUFFIXES = ("-wal", "-shm", "-journal", ".tmp")


# --------------------------------------------------------------------------- keys and plans


def run_date(run_id: str, started_at: str = "") -> tuple[str, str, str]:
    """YYYY, MM, DD of a run: from a ``YYYYMMDD-`` run id, else its start time, else today (UTC)."""
    m = re.match(r"(\d{4})(\d{2})(\d{2})-", run_id)
    if m and 1 <= int(m.group(2)) <= 12 and 1 <= int(m.group(3)) <= 31:
        return m.group(1), m.group(2), m.group(3)
    try:
        d = datetime.fromisoformat(started_at).astimezone(timezone.utc)
    except (TypeError, ValueError):
        d = datetime.now(timezone.utc)
    return f"{d.year:04d}", f"{d.month:02d}", f"{d.day:02d}"


def run_key_prefix(sc: StorageModel, run_id: str, started_at: str = "") -> str:
    """``PREFIX/runs/YYYY/MM/DD/RUN_ID`` (no trailing slash)."""
    return sc.key("runs", *run_date(run_id, started_at), run_id)


def _md5(path: Path) -> str:
    h = hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _run_files(run_dir: Path) -> list[Path]:
    root = Path(run_dir).resolve()
    files = [p for p in sorted(run_dir.rglob("*")) if p.is_file()
             and not any(part.startswith(".") for part in p.relative_to(run_dir).parts)
             and not p.name.endswith(SKIP_SUFFIXES)
             and root in p.resolve().parents]  # a link out of the run folder is never carried away
    files.sort(key=lambda p: p.name == LAST)  # stable: results.json last
    return files


def _load_results(run_dir: Path) -> dict[str, Any]:
    try:
        data = json.loads((run_dir / LAST).read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


@dataclass
class Pending:
    """One run's upload that is not finished: what is left, as kept in the spool file."""

    run_id: str
    run_dir: str
    key_prefix: str
    """Where the files go (fixed when the upload is planned, so a retry puts them in the same place)."""
    files: list[dict[str, Any]]
    """Left to put: ``{"rel", "key", "size", "md5"}``."""
    index: dict[str, Any] | None
    """The index entry still to write (None once written)."""
    shard: dict[str, int] | None = None
    """``{"index": i, "count": n}`` for a shard: the run's merge is tried after the index."""
    attempts: int = 0
    last_error: str = ""
    created_at: str = ""
    done: list[str] = field(default_factory=list)
    """Keys put so far (kept for the report of what happened)."""

    @property
    def name(self) -> str:
        return self.run_id + (f".shard-{self.shard['index']}-of-{self.shard['count']}" if self.shard else "")

    def to_dict(self) -> dict[str, Any]:
        return {"schema": "harness.pending/1", "run_id": self.run_id, "run_dir": self.run_dir,
                "key_prefix": self.key_prefix, "files": self.files, "index": self.index, "shard": self.shard,
                "attempts": self.attempts, "last_error": self.last_error, "created_at": self.created_at,
                "done": self.done}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Pending":
        """The spool entry ``d``; ValueError when it is not as the harness wrote it (a hand edit, or
        another program's file): the entry is then left alone and said, never a crash of the upload,
        and never a file outside its run folder put in the bucket."""
        problem = spool_problem(d)
        if problem:
            raise ValueError(problem)
        return cls(run_id=d["run_id"], run_dir=d["run_dir"], key_prefix=d["key_prefix"], files=list(d["files"]),
                   index=d.get("index"), shard=d.get("shard"), attempts=int(d.get("attempts", 0)),
                   last_error=d.get("last_error", ""), created_at=d.get("created_at", ""),
                   done=list(d.get("done") or ()))


def plan_upload(sc: StorageModel, run_dir: Path, store: S3Store | None = None) -> Pending:
    """What uploading ``run_dir`` means: every file, its key, its size and MD5, and the index entry."""
    run_dir = Path(run_dir).resolve()
    results = _load_results(run_dir)
    run_id = str(results.get("run_id") or run_dir.name)
    shard = results.get("shard") if isinstance(results.get("shard"), dict) else None
    shard = {"index": int(shard["index"]), "count": int(shard["count"])} if shard and "index" in shard else None
    base = None
    if shard and store is not None:
        # Shards of one run may start on either side of midnight: the first to reach the
        # index fixes the run's folder for all of them.
        base = next((e.get("prefix") for e in read_index(store)["runs"] if e.get("run_id") == run_id), None)
    base = base or run_key_prefix(sc, run_id, str(results.get("started_at", "")))
    where = f"{base}/shards/{shard['index']}-of-{shard['count']}" if shard else base
    files = []
    for p in _run_files(run_dir):
        rel = p.relative_to(run_dir).as_posix()
        files.append({"rel": rel, "key": f"{where}/{rel}", "size": p.stat().st_size, "md5": _md5(p)})
    entry = index_entry(results, base) if results else None
    if entry is not None and shard:
        entry = {"run_id": run_id, "prefix": base, "shard": shard,
                 "shard_entry": index_entry(results, where)}
    return Pending(run_id=run_id, run_dir=str(run_dir), key_prefix=base, files=files, index=entry, shard=shard,
                   created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"))


# --------------------------------------------------------------------------- the spool


def spool_dir(out_dir: Path) -> Path:
    return Path(out_dir) / PENDING_DIR


def _spool_path(out_dir: Path, pending: Pending) -> Path:
    return spool_dir(out_dir) / f"{pending.name}.json"


def _save_spool(out_dir: Path, pending: Pending) -> None:
    from harness.fileio import atomic_write_text

    # redacted like every sink: its last error may quote the endpoint URL with its userinfo password
    atomic_write_text(_spool_path(out_dir, pending), active().text(json.dumps(pending.to_dict(), indent=1)))


def list_pending(out_dir: Path, problems: list[str] | None = None) -> list[Pending]:
    """Every upload left in the spool, oldest first; a spool file that cannot be read is left as
    it is, logged, and said in ``problems`` when a list is given."""
    folder = spool_dir(out_dir)
    found = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
        try:
            found.append(Pending.from_dict(json.loads(path.read_text(encoding="utf-8"))))
        except (OSError, ValueError, KeyError, RecursionError) as exc:
            log.warning("unreadable spool file %s (left as it is): %s", path, exc)
            if problems is not None:
                problems.append(f"{path} is not a pending upload the harness wrote ({exc}); left as it is")
    return sorted(found, key=lambda p: p.created_at)


# --------------------------------------------------------------------------- uploading


@dataclass
class UploadResult:
    run_id: str
    key_prefix: str
    put: int = 0
    """Objects written by this call."""
    skipped: int = 0
    """Objects already there with the same content (not written again)."""
    complete: bool = False
    """Every file and the index entry are in storage (the spool entry is gone)."""
    error: str = ""
    merged: bool = False
    """A shard upload that completed its run: the merged report was written."""

    def line(self) -> str:
        state = "uploaded" if self.complete else "PENDING"
        text = f"{state} {self.run_id} -> {self.key_prefix}/ ({self.put} put, {self.skipped} already there)"
        if self.merged:
            text += "; shards merged"
        return text + (f"; {self.error}" if self.error else "")


def _same(head: Mapping[str, Any] | None, item: Mapping[str, Any]) -> bool:
    if not head or head.get("size") != item["size"]:
        return False
    return head.get("etag") == item["md5"] or (head.get("metadata") or {}).get("md5") == item["md5"]


def _content_type(name: str) -> str:
    if name.endswith(".jsonl"):
        return "application/x-ndjson"
    if name.endswith(".md"):
        return "text/markdown; charset=utf-8"
    guess = mimetypes.guess_type(name)[0] or "application/octet-stream"
    return guess + ("; charset=utf-8" if guess.startswith("text/") or guess.endswith(("json", "xml")) else "")


def push(store: S3Store, pending: Pending, out_dir: Path) -> UploadResult:
    """Carry one pending upload as far as storage lets it; the spool is kept up to date.

    Each object is checked first (HEAD) and not put again when the same content is there,
    so a retry after a crash between a put and the spool update writes nothing twice.
    """
    result = UploadResult(run_id=pending.run_id, key_prefix=pending.key_prefix)
    pending.attempts += 1
    _save_spool(out_dir, pending)
    run_dir = Path(pending.run_dir)
    try:
        if Path(out_dir).resolve() not in run_dir.resolve().parents:  # a spool entry edited to point away
            raise StorageError(f"{run_dir} is outside the reports folder {Path(out_dir).resolve()}; not uploaded",
                               fix="remove that entry from the pending spool")
        while pending.files:
            item = pending.files[0]
            path = run_dir / item["rel"]
            if not path.is_file():
                raise StorageError(f"{path} is gone; it cannot be uploaded", fix="remove the spool entry")
            if _same(store.head(item["key"]), item):
                result.skipped += 1
            else:
                data = path.read_bytes()
                if len(data) != item["size"] or hashlib.md5(data, usedforsecurity=False).hexdigest() != item["md5"]:
                    # Rewritten since planned (e.g. a re-rendered report): put what is there now.
                    item = {**item, "size": len(data), "md5": hashlib.md5(data, usedforsecurity=False).hexdigest()}
                store.put(item["key"], data, _content_type(item["rel"]), {"md5": item["md5"]})
                result.put += 1
            pending.done.append(item["key"])
            pending.files.pop(0)
            _save_spool(out_dir, pending)
        if pending.index is not None:
            update_index(store, pending.index)
            pending.index = None
            _save_spool(out_dir, pending)
        if pending.shard:
            merged = merge_shards(store, pending.run_id, pending.key_prefix, pending.shard["count"])
            result.merged = merged is not None
    except StorageError as exc:
        pending.last_error = exc.message
        _save_spool(out_dir, pending)
        result.error = exc.message
        return result
    _spool_path(out_dir, pending).unlink(missing_ok=True)
    try:
        spool_dir(out_dir).rmdir()  # only when empty: the reports folder holds only runs again
    except OSError:
        pass
    result.complete = True
    return result


def upload_run(config: Any, run_dir: Path, out_dir: Path, store: S3Store | None = None) -> UploadResult:
    """Plan (into the spool) and push one finished run directory."""
    sc = storage_config(config)
    if sc is None:
        raise StorageError("no [storage] section: nothing to upload to",
                           fix='add [storage] url = "s3://bucket/prefix" to the config')
    run_dir = Path(run_dir)
    try:
        store = store or S3Store(sc)
        pending = plan_upload(sc, run_dir, store)
    except StorageError as exc:
        # Not even the plan could be made with storage's help: spool the plain plan.
        pending = plan_upload(sc, run_dir, None)
        pending.last_error = exc.message
        _save_spool(out_dir, pending)
        return UploadResult(run_id=pending.run_id, key_prefix=pending.key_prefix, error=exc.message)
    _save_spool(out_dir, pending)
    return push(store, pending, out_dir)


def upload_pending(config: Any, out_dir: Path, store: S3Store | None = None) -> list[UploadResult]:
    """Retry every upload in the spool (oldest first); stops at the first that still fails."""
    sc = storage_config(config)
    items = list_pending(out_dir)
    if sc is None or not items:
        return []
    results = []
    try:
        store = store or S3Store(sc)
    except StorageError as exc:
        return [UploadResult(run_id=p.run_id, key_prefix=p.key_prefix, error=exc.message) for p in items]
    for pending in items:
        res = push(store, pending, out_dir)
        results.append(res)
        if not res.complete:  # storage is still away: leave the rest for next time
            results += [UploadResult(run_id=p.run_id, key_prefix=p.key_prefix, error="not tried: storage failing")
                        for p in items[len(results):]]
            break
    return results


# --------------------------------------------------------------------------- shards


def merge_shards(store: S3Store, run_id: str, key_prefix: str, count: int | None = None,
                 force: bool = False) -> dict[str, Any] | None:
    """Merge the shards of a run stored under ``key_prefix`` into one report at the run's level.

    Done when every one of the N shards has its results.json in storage (or with ``force``,
    with whatever is there, noting the missing shards). Idempotent: whichever shard finishes
    last does it, and doing it twice writes the same report. Returns the merged dict or None
    when shards are still missing.
    """
    from harness.night.shards import merge_results

    shard_results: dict[int, dict[str, Any]] = {}
    total = count
    for key in store.list(f"{key_prefix}/shards/"):
        m = re.search(r"/shards/(\d+)-of-(\d+)/results\.json$", key)
        if not m:
            continue
        data = get_results(store, key)
        if data is None:
            continue
        shard_results[int(m.group(1))] = data
        total = total or int(m.group(2))
    if not shard_results or total is None:
        return None
    if len(shard_results) < total and not force:
        return None
    merged = merge_results([shard_results[i] for i in sorted(shard_results)], total)
    import tempfile

    from harness.report import write_all

    with tempfile.TemporaryDirectory(prefix="harness-merge-") as tmp:
        files = write_all(merged, Path(tmp))
        order = sorted(files.values(), key=lambda p: p.name == LAST)
        for path in order:
            store.put(f"{key_prefix}/{path.name}", path.read_bytes(), _content_type(path.name))
    entry = index_entry(merged, key_prefix)
    entry["shard_count"] = total
    update_index(store, entry)
    return merged


__all__ = (
    "Pending", "UploadResult", "list_pending", "merge_shards", "plan_upload", "push", "run_key_prefix",
    "upload_pending", "upload_run",
)
