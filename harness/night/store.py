"""The object store: ``[storage]`` read into a ``StorageModel``, and ``S3Store`` (put, head,
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
from harness.config import config_section
from harness.errors import StorageError
from harness.schema.models import StorageModel

log = logging.getLogger("harness.night.storage")


#: results.json goes last: its presence in the bucket means the run's other files are there.
LAST = "results.json"


def storage_config(config: Any) -> StorageModel | None:
    """``[storage]`` of a Config (validated when it was loaded), or None when there is none (local only)."""
    return config_section(config, "storage")


# --------------------------------------------------------------------------- the store


class S3Store:
    """The few object operations the harness needs, over boto3 (the one real implementation).

    Errors from botocore are translated into ``StorageError`` here, with the secret key
    scrubbed from the message in case an endpoint ever echoes it.
    """

    def __init__(self, sc: StorageModel, environ: Mapping[str, str] | None = None,
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


def policy(sc: StorageModel) -> RetryPolicy:
    """The one retry policy (harness.models.retry) with the [storage] numbers."""
    return RetryPolicy(attempts=sc.retries, backoff_s=sc.retry_backoff_s, max_wait_s=MAX_WAIT_S)


def describe(sc: StorageModel) -> str:
    """Where runs go, for humans (never any credential)."""
    where = f"s3://{sc.bucket}/{sc.prefix}" if sc.prefix else f"s3://{sc.bucket}"
    return where + (f" at {sc.endpoint_url}" if sc.endpoint_url else "") + (f" ({sc.region})" if sc.region else "")
