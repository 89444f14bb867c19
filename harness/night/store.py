"""The object store: ``[storage]`` read into a ``StorageConfig``, and ``S3Store`` (put, head,
get, conditional put, list) over boto3, every remote call through the one retry policy.
What is stored and how a run gets there: storage.py; the index of runs: runindex.py.

boto3 is imported on first use: a run without ``[storage]`` never loads it.
"""

from __future__ import annotations

import logging
import re
import time
import os
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from harness.models.retry import RetryPolicy, is_transient, server_retry_after
from harness.redact import active
from harness.errors import ConfigError, StorageError

log = logging.getLogger("harness.night.storage")


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


#: The longest wait between two tries, also when the store's Retry-After asks for more.
MAX_WAIT_S = 60.0


def policy(sc: StorageConfig) -> RetryPolicy:
    """The one retry policy (harness.models.retry) with the [storage] numbers."""
    return RetryPolicy(attempts=sc.retries, backoff_s=sc.retry_backoff_s, max_wait_s=MAX_WAIT_S)


def describe(sc: StorageConfig) -> str:
    """Where runs go, for humans (never any credential)."""
    where = f"s3://{sc.bucket}/{sc.prefix}" if sc.prefix else f"s3://{sc.bucket}"
    return where + (f" at {sc.endpoint_url}" if sc.endpoint_url else "") + (f" ({sc.region})" if sc.region else "")
