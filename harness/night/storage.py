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

boto3 is imported on first use: a run without ``[storage]`` never loads it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import mimetypes
import os
import random
import re
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from harness.models.retry import RetryPolicy, is_transient, server_retry_after
from harness.redact import active
from harness.errors import ConfigError, StorageError

log = logging.getLogger("harness.night.storage")

INDEX_SCHEMA = "harness.index/1"
PENDING_DIR = ".pending"
#: Files of a run directory never uploaded (SQLite's transient side files).
SKIP_SUFFIXES = ("-wal", "-shm", "-journal", ".tmp")
#: results.json goes last: its presence in the bucket means the run's other files are there.
LAST = "results.json"
ADDRESSING = ("auto", "path", "virtual")


@dataclass(frozen=True)
class StorageConfig:
    """The ``[storage]`` section."""

    url: str
    """``s3://bucket/prefix``."""
    bucket: str
    prefix: str
    """Without leading or trailing slash; may be empty."""
    endpoint_url: str = ""
    """Empty: AWS S3. OCI: ``https://<namespace>.compat.objectstorage.<region>.oraclecloud.com``."""
    region: str = ""
    addressing_style: str = "auto"
    """``path`` for OCI and MinIO; ``virtual`` or ``auto`` for AWS."""
    retries: int = 3
    """Tries per object before the upload is left in the spool."""
    retry_backoff_s: float = 1.0
    """Wait before the second try; doubled before each next one."""
    timeout_s: float = 30.0
    """Connect and read timeout of one request."""

    def key(self, *parts: str) -> str:
        return "/".join(p.strip("/") for p in (self.prefix, *parts) if p and p.strip("/"))


_KEYS = {"url", "endpoint_url", "region", "addressing_style", "retries", "retry_backoff_s", "timeout_s"}


def storage_config(config: Any) -> StorageConfig | None:
    """The parsed ``[storage]`` section of a Config, or None when there is none (local only)."""
    table = dict((getattr(config, "sections", None) or {}).get("storage") or {})
    file = str(getattr(config, "path", "") or "")
    if not table or not table.get("url"):
        if table:
            raise ConfigError("[storage] has no url", file=file, fix='url = "s3://bucket/prefix"')
        return None
    unknown = set(table) - _KEYS
    if unknown:
        raise ConfigError(f"[storage] unknown key {sorted(unknown)[0]!r}", file=file,
                          fix=f"known keys: {', '.join(sorted(_KEYS))}")
    url = str(table["url"])
    m = re.fullmatch(r"s3://([^/]+)/?(.*)", url)
    if not m:
        raise ConfigError(f"[storage] url {url!r} is not s3://bucket/prefix", file=file,
                          fix='url = "s3://nightly-evals/chatbot"')
    style = str(table.get("addressing_style") or "auto")
    if style not in ADDRESSING:
        raise ConfigError(f"[storage] addressing_style {style!r}", file=file, fix=f"one of {', '.join(ADDRESSING)}")
    try:
        retries = int(table.get("retries", 3))
        backoff = float(table.get("retry_backoff_s", 1.0))
        timeout = float(table.get("timeout_s", 30.0))
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"[storage] {exc}", file=file) from None
    return StorageConfig(url=url, bucket=m.group(1), prefix=m.group(2).strip("/"),
                         endpoint_url=str(table.get("endpoint_url") or ""), region=str(table.get("region") or ""),
                         addressing_style=style, retries=max(1, retries), retry_backoff_s=max(0.0, backoff),
                         timeout_s=timeout)


# --------------------------------------------------------------------------- the store


class S3Store:
    """The few object operations the harness needs, over boto3 (the one real implementation).

    Errors from botocore are translated into ``StorageError`` here, with the secret key
    scrubbed from the message in case an endpoint ever echoes it.
    """

    def __init__(self, sc: StorageConfig, environ: Mapping[str, str] | None = None,
                 sleep: Callable[[float], Any] = time.sleep):
        environ = os.environ if environ is None else environ
        self.sc = sc
        self.sleep = sleep
        """The wait between two tries (tests inject one that records)."""
        key_id = environ.get("AWS_ACCESS_KEY_ID", "")
        secret = environ.get("AWS_SECRET_ACCESS_KEY", "")
        if not key_id or not secret:
            raise StorageError("storage credentials are missing",
                               fix="set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment")
        self._secrets = tuple(s for s in (secret, environ.get("AWS_SESSION_TOKEN", "")) if s)
        try:
            import boto3
            from botocore.config import Config as BotoConfig
        except ImportError as exc:  # pragma: no cover - boto3 is a runtime dependency
            raise StorageError("boto3 is not installed", fix="pip install boto3") from exc
        boto_config = BotoConfig(
            region_name=sc.region or None,
            s3={"addressing_style": sc.addressing_style},
            # OCI's S3 compatibility API rejects the flexible checksums boto3 sends by default.
            request_checksum_calculation="when_required",
            response_checksum_validation="when_required",
            connect_timeout=sc.timeout_s, read_timeout=sc.timeout_s,
            # The one retry policy (harness.models.retry, with the spool behind it) decides alone:
            # one request per try (botocore's "max_attempts" counts retries, so 2 meant 3 requests).
            retries={"total_max_attempts": 1, "mode": "standard"},
        )
        session = boto3.session.Session(aws_access_key_id=key_id, aws_secret_access_key=secret,
                                         aws_session_token=environ.get("AWS_SESSION_TOKEN") or None,
                                         region_name=sc.region or None)
        self.client = session.client("s3", endpoint_url=sc.endpoint_url or None, config=boto_config)

    def _error(self, what: str, exc: Exception) -> StorageError:
        """The botocore error as a StorageError that keeps what the retry policy needs: whether
        it is worth another try (unreachable, timeout, 429, 5xx, SlowDown) and the Retry-After."""
        text = f"{type(exc).__name__}: {exc}"
        for s in self._secrets:
            text = text.replace(s, "***")
        err = StorageError(f"{what}: {text}")
        err.transient = is_transient(exc)  # type: ignore[attr-defined]
        err.retry_after = server_retry_after(exc)  # type: ignore[attr-defined]
        return err

    def _retried(self, what: str, call: Callable[[], Any]) -> Any:
        """``call()`` through the one retry policy: transient failures tried again, a 403 or a
        missing bucket at once final. Every request to the store goes through here."""
        def logged(attempt: int, exc: BaseException, wait: float) -> None:
            log.warning("storage: %s failed (try %d of %d): %s; again in %.2fs", what, attempt, self.sc.retries,
                        getattr(exc, "message", exc), wait)

        return policy(self.sc).call(call, what=f"storage {what}", sleep=self.sleep, on_retry=logged)

    def head(self, key: str) -> dict[str, Any] | None:
        """Size, ETag and metadata of an object, or None when it is not there."""
        from botocore.exceptions import ClientError

        def once() -> dict[str, Any] | None:
            try:
                r = self.client.head_object(Bucket=self.sc.bucket, Key=key)
            except ClientError as exc:
                code = str(exc.response.get("Error", {}).get("Code", ""))
                if code in ("404", "NoSuchKey", "NotFound"):
                    return None
                raise self._error(f"head {key}", exc) from None
            except Exception as exc:
                raise self._error(f"head {key}", exc) from None
            return {"size": r.get("ContentLength"), "etag": str(r.get("ETag", "")).strip('"'),
                    "metadata": r.get("Metadata") or {}}

        return self._retried(f"head {key}", once)

    def put(self, key: str, data: bytes, content_type: str = "application/octet-stream",
            metadata: Mapping[str, str] | None = None) -> None:
        # put_object, not the multipart transfer manager: run files are small, and one
        # request per object keeps "done" unambiguous. Every object leaves redacted
        # (harness.redact): this is the one place anything is put into storage.
        data = active().binary(data)

        def once() -> None:
            try:
                self.client.put_object(Bucket=self.sc.bucket, Key=key, Body=data, ContentType=content_type,
                                       Metadata=dict(metadata or {}))
            except Exception as exc:
                raise self._error(f"put {key}", exc) from None

        self._retried(f"put {key}", once)

    def get_tagged(self, key: str) -> tuple[bytes | None, str]:
        """An object's bytes and its ETag (None and '' when it is not there)."""
        from botocore.exceptions import ClientError

        def once() -> tuple[bytes | None, str]:
            try:
                r = self.client.get_object(Bucket=self.sc.bucket, Key=key)
                return r["Body"].read(), str(r.get("ETag", ""))
            except ClientError as exc:
                if str(exc.response.get("Error", {}).get("Code", "")) in ("404", "NoSuchKey", "NotFound"):
                    return None, ""
                raise self._error(f"get {key}", exc) from None
            except Exception as exc:
                raise self._error(f"get {key}", exc) from None

        return self._retried(f"get {key}", once)

    def put_if(self, key: str, data: bytes, etag: str, content_type: str = "application/json") -> bool | None:
        """Put ``key`` only if it is still the version read (``etag``; '' = only if it is still
        missing): True written, False someone else wrote first (412), None the endpoint does not
        do conditional writes (OCI's compatibility API, older MinIO): the caller falls back."""
        from botocore.exceptions import ClientError

        data = active().binary(data)
        cond = {"IfMatch": etag} if etag else {"IfNoneMatch": "*"}

        def once() -> bool | None:
            try:
                self.client.put_object(Bucket=self.sc.bucket, Key=key, Body=data, ContentType=content_type, **cond)
                return True
            except ClientError as exc:
                code = str(exc.response.get("Error", {}).get("Code", ""))
                status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
                if code in ("PreconditionFailed", "ConditionalRequestConflict") or status in (409, 412):
                    return False
                if code in ("NotImplemented", "InvalidArgument", "InvalidRequest") or status in (400, 501):
                    return None
                raise self._error(f"put {key}", exc) from None
            except Exception as exc:
                raise self._error(f"put {key}", exc) from None

        return self._retried(f"put {key}", once)

    def get(self, key: str) -> bytes | None:
        """An object's bytes (None when it is not there)."""
        return self.get_tagged(key)[0]

    def list(self, prefix: str) -> list[str]:
        def once() -> list[str]:
            keys: list[str] = []
            try:
                for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=self.sc.bucket,
                                                                                  Prefix=prefix):
                    keys.extend(o["Key"] for o in page.get("Contents") or ())
            except Exception as exc:
                raise self._error(f"list {prefix}", exc) from None
            return keys

        return self._retried(f"list {prefix}", once)


def open_store(config: Any, environ: Mapping[str, str] | None = None) -> S3Store | None:
    """The configured store, or None when ``[storage]`` is absent."""
    sc = storage_config(config)
    return S3Store(sc, environ) if sc else None


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


def run_key_prefix(sc: StorageConfig, run_id: str, started_at: str = "") -> str:
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
        return cls(run_id=d["run_id"], run_dir=d["run_dir"], key_prefix=d["key_prefix"], files=list(d["files"]),
                   index=d.get("index"), shard=d.get("shard"), attempts=int(d.get("attempts", 0)),
                   last_error=d.get("last_error", ""), created_at=d.get("created_at", ""),
                   done=list(d.get("done") or ()))


#: The summary fields the index keeps (the full summary is in the run's results.json).
_INDEX_COUNTS = ("planned", "executed", "decidable", "passed", "soft", "failed", "errored", "unavailable",
                 "skipped", "cost_usd", "verdict")


def index_entry(results: Mapping[str, Any], key_prefix: str) -> dict[str, Any]:
    """What the index keeps of one run (enough to list and pick runs without opening them)."""
    manifest = results.get("manifest") or {}
    return {"run_id": results.get("run_id", ""), "prefix": key_prefix,
            "started_at": results.get("started_at", ""), "finished_at": results.get("finished_at", ""),
            "verdict": (results.get("summary") or {}).get("verdict", ""), "exit_code": results.get("exit_code"),
            "summary": {k: v for k, v in (results.get("summary") or {}).items() if k in _INDEX_COUNTS},
            "target": results.get("target") or {},
            "golden_version": results.get("golden_version", ""),
            "config_hash": manifest.get("config_hash", ""),
            "layers": sorted((results.get("layers") or {}).keys())}


def plan_upload(sc: StorageConfig, run_dir: Path, store: S3Store | None = None) -> Pending:
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


def list_pending(out_dir: Path) -> list[Pending]:
    """Every upload left in the spool, oldest first."""
    folder = spool_dir(out_dir)
    found = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
        try:
            found.append(Pending.from_dict(json.loads(path.read_text(encoding="utf-8"))))
        except (OSError, ValueError, KeyError) as exc:
            log.warning("unreadable spool file %s: %s", path, exc)
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


#: The longest wait between two tries, also when the store's Retry-After asks for more.
MAX_WAIT_S = 60.0


def policy(sc: StorageConfig) -> RetryPolicy:
    """The one retry policy (harness.models.retry) with the [storage] numbers."""
    return RetryPolicy(attempts=sc.retries, backoff_s=sc.retry_backoff_s, max_wait_s=MAX_WAIT_S)


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


# --------------------------------------------------------------------------- the index


def read_index(store: S3Store) -> dict[str, Any]:
    """The stored index (a new, empty one only when there is none)."""
    return _parse_index(store, store.get(store.sc.key("index.json")))


def _parse_index(store: S3Store, raw: bytes | None) -> dict[str, Any]:
    """``raw`` as the index. Anything that is there but is not an index (a proxy's or captive
    portal's HTML page answered with 200, a truncated body) is refused: starting a new index
    over it would drop every earlier night from history, diff and the baseline."""
    if raw is None:
        return {"schema": INDEX_SCHEMA, "runs": []}
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        data = None
    if (not isinstance(data, dict) or not isinstance(data.get("runs"), list)
            or not all(isinstance(e, dict) for e in data["runs"])):
        from harness.redact import inert

        start = inert(raw[:80].decode("utf-8", "replace")).replace("\n", " ")
        raise StorageError(
            f"{store.sc.url}/index.json is not a harness index (it starts {start!r}); refusing to write a new "
            "index over it, which would drop every earlier night",
            fix="check [storage] endpoint_url (a proxy or captive portal may be answering in its place); "
                "if the object is really damaged, `harness upload --reindex` rebuilds it from the stored runs")
    return data


def _upsert(index: dict[str, Any], entry: Mapping[str, Any]) -> None:
    runs = index["runs"]
    existing = next((e for e in runs if e.get("run_id") == entry["run_id"]), None)
    if "shard_entry" in entry:  # a shard reports into its run's entry
        if existing is None:
            existing = {"run_id": entry["run_id"], "prefix": entry["prefix"], "verdict": "incomplete",
                        "started_at": entry["shard_entry"].get("started_at", "")}
            runs.append(existing)
        shard = entry["shard"]
        existing.setdefault("shards", {})[f"{shard['index']}/{shard['count']}"] = entry["shard_entry"]
        existing["shard_count"] = shard["count"]
    elif existing is None:
        runs.append(dict(entry))
    else:
        shards = existing.get("shards")
        existing.clear()
        existing.update(entry)
        if shards:
            existing["shards"] = shards
    runs.sort(key=lambda e: (str(e.get("started_at", "")), str(e.get("run_id", ""))))


def _holds(index: Mapping[str, Any], entry: Mapping[str, Any]) -> bool:
    found = next((e for e in index.get("runs", ()) if e.get("run_id") == entry["run_id"]), None)
    if found is None:
        return False
    if "shard_entry" in entry:
        s = entry["shard"]
        return f"{s['index']}/{s['count']}" in (found.get("shards") or {})
    return found.get("prefix") == entry.get("prefix") and found.get("finished_at") == entry.get("finished_at")


def update_index(store: S3Store, entry: Mapping[str, Any], tries: int = 6) -> None:
    """Read-modify-write ``index.json`` with one run's entry, then read it back to check.

    Object storage has no portable compare-and-swap (OCI's compatibility API lacks
    conditional puts), so concurrent writers (shards finishing together) are handled by
    verifying after writing and writing again, after a random pause, when another writer's
    version replaced ours. ``harness upload --reindex`` rebuilds the index from the runs.
    """
    key = store.sc.key("index.json")
    for attempt in range(tries):
        raw, etag = store.get_tagged(key)
        index = _parse_index(store, raw)
        if raw is None and store.list(store.sc.key("runs") + "/"):
            # no index, yet runs are stored (deleted, or a 404 from whatever answered): tonight
            # alone would drop them from history, diff and the baseline; rebuilt from them first
            index = rebuild_index(store, write=False)
        _upsert(index, entry)
        index["schema"] = INDEX_SCHEMA
        index["updated_at"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
        body = json.dumps(index, indent=1).encode("utf-8")
        # a conditional write where the endpoint has one (S3, recent MinIO): written only over
        # the version read; otherwise the write is checked by reading it back
        written = store.put_if(key, body, etag, "application/json; charset=utf-8")
        if written is False:
            time.sleep(random.uniform(0.05, 0.3))
            continue
        if written is None:
            store.put(key, body, "application/json; charset=utf-8")
        time.sleep(random.uniform(0.05, 0.2) if attempt else 0.0)
        if _holds(read_index(store), entry):
            return
        time.sleep(random.uniform(0.1, 0.5))
    raise StorageError("index.json kept being overwritten by concurrent writers",
                       fix="harness upload --reindex rebuilds it from the stored runs")


def _get_json(store: S3Store, key: str) -> Any:
    """A stored JSON object, or None when it is missing or not JSON (skipped, not fatal)."""
    try:
        return json.loads(store.get(key) or b"")
    except ValueError:
        return None


def rebuild_index(store: S3Store, write: bool = True) -> dict[str, Any]:
    """Build ``index.json`` again from every stored results.json (run level and shard level);
    written unless ``write`` is False."""
    index: dict[str, Any] = {"schema": INDEX_SCHEMA, "runs": []}
    for key in store.list(store.sc.key("runs") + "/"):
        if not key.endswith("/" + LAST):
            continue
        results = _get_json(store, key)
        if results is None:
            continue
        where = key[: -len(LAST) - 1]
        m = re.search(r"^(.*)/shards/(\d+)-of-(\d+)$", where)
        if m:
            shard = {"index": int(m.group(2)), "count": int(m.group(3))}
            _upsert(index, {"run_id": results.get("run_id", ""), "prefix": m.group(1), "shard": shard,
                            "shard_entry": index_entry(results, where)})
        else:
            _upsert(index, index_entry(results, where))
    index["updated_at"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    if write and not index["runs"]:
        try:
            kept = len(_parse_index(store, store.get(store.sc.key("index.json")))["runs"])
        except StorageError:
            kept = 0
        if kept:  # a wrong prefix, an endpoint answering for another bucket: never an empty index over N runs
            raise StorageError(f"--reindex found no stored run under {store.sc.url}/runs/, yet index.json lists "
                               f"{kept}; refusing to replace it with an empty index",
                               fix="check [storage] url and endpoint_url point at the bucket and prefix the runs "
                                   "were uploaded to")
    if write:
        store.put(store.sc.key("index.json"), json.dumps(index, indent=1).encode("utf-8"),
                  "application/json; charset=utf-8")
    return index


def load_run(store: S3Store, run_id: str) -> dict[str, Any] | None:
    """One stored run's results.json (the merged one for a sharded run), found through the index."""
    entry = next((e for e in read_index(store)["runs"] if e.get("run_id") == run_id), None)
    if entry is None:
        return None
    raw = store.get(f"{entry['prefix']}/{LAST}")
    return json.loads(raw) if raw else None


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
        data = _get_json(store, key)
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


def describe(sc: StorageConfig) -> str:
    """Where runs go, for humans (never any credential)."""
    where = f"s3://{sc.bucket}/{sc.prefix}" if sc.prefix else f"s3://{sc.bucket}"
    return where + (f" at {sc.endpoint_url}" if sc.endpoint_url else "") + (f" ({sc.region})" if sc.region else "")


__all__: Sequence[str] = (
    "Pending", "S3Store", "StorageConfig", "UploadResult", "describe", "list_pending", "load_run",
    "merge_shards", "open_store", "plan_upload", "push", "read_index", "rebuild_index", "run_key_prefix",
    "storage_config", "update_index", "upload_pending", "upload_run",
)
