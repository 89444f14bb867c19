"""results.jsonl: one line per finished case, durable as soon as it is written.

The runner appends each case as it finishes, so a run killed at case 37 of 40 still has
36 verdicts on disk (``--resume`` skips them, ``case_from_dict`` rebuilds them). Every
line is flushed and fsync'd before ``append`` returns: a crash loses nothing already
appended, at most the line being written, and the reader skips such a torn line.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any, Mapping

from harness.redact import active
from harness.report.jsonfile import case_to_dict, jsonable
from harness.types import CaseResult


class Journal:
    """Append-only, crash-safe writer of ``results.jsonl``.

    Opening an existing journal (a resumed run) appends to it. If the previous process
    died mid-line, a newline is written first, so the torn line stays one bad line instead
    of swallowing the next good one.
    """

    def __init__(self, path: str | os.PathLike[str]):
        from harness.fileio import open_append

        self.path = Path(path)
        # A lock because the runner may finish cases from worker threads (in-process
        # targets); appends are tiny, contention is irrelevant.
        self._lock = threading.Lock()
        # a folder, link or FIFO an agent put there is moved aside or refused: never a hang
        self._fh = open_append(self.path)
        if self._fh.tell() > 0 and not _ends_with_newline(self.path):
            self._write(b"\n")

    def append(self, result: CaseResult | Mapping[str, Any]) -> dict[str, Any]:
        """Write one finished case as one line; returns the dict that was written."""
        record = case_to_dict(result) if isinstance(result, CaseResult) else jsonable(result)
        # redacted (harness.redact) as one line: no secret reaches the disk, not even for a moment
        line = active().text(json.dumps(record, ensure_ascii=False, allow_nan=False, separators=(",", ":")))
        # json.dumps never emits a raw newline (they are escaped in strings), so one
        # record is always exactly one line.
        with self._lock:
            self._write(line.encode("utf-8") + b"\n")
        return record

    def _write(self, data: bytes) -> None:
        if self._fh.closed:
            raise ValueError(f"journal {self.path} is closed")
        self._fh.write(data)
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        """Close the file (appends are already durable; this only frees the handle)."""
        with self._lock:
            if not self._fh.closed:
                self._fh.close()

    @property
    def closed(self) -> bool:
        return self._fh.closed

    def __enter__(self) -> "Journal":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as fh:
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) == b"\n"


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def read_journal(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every complete case record in the journal, in the order written.

    A line that does not parse as a JSON object (the torn last line of a killed run, or
    one left in the middle by a resume) is skipped: that case simply counts as not
    finished and is run again. A missing journal means no case finished: ``[]``.
    """
    from harness.fileio import read_regular_bytes

    path = Path(path)
    try:
        raw = read_regular_bytes(path)  # a FIFO left in its place raises instead of blocking
    except FileNotFoundError:
        return []
    records: list[dict[str, Any]] = []
    for line in raw.split(b"\n"):
        if not line.strip():
            continue
        try:  # NaN / Infinity are no JSON the harness writes; nesting past the parser is no record either
            record = json.loads(line.decode("utf-8"), parse_constant=_no_constant)
        except (UnicodeDecodeError, ValueError, RecursionError):
            continue
        if isinstance(record, dict):
            records.append(record)
    return records
