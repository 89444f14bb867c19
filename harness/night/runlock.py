"""One run at a time: an advisory file lock on ``<reports>/.harness.lock``.

Taken by ``harness run`` and by each ``harness schedule`` cycle, so the daemon, a crontab
line and a person at a terminal cannot overlap on the same reports folder. ``flock`` is
released by the kernel when the holder dies (even by SIGKILL), so a stale lock file never
blocks the next night; a clean release removes the file, so the reports folder holds only
runs afterwards. The file holds the holder's pid, start time and command, which is
what the refused run prints.

Reentrant within one process: a schedule cycle holds the lock and runs ``harness run``
in the same process, which takes it again without blocking itself.
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
from datetime import datetime, timezone
from pathlib import Path

from harness.errors import RunLocked

__all__ = ["LOCK_NAME", "RunLock", "RunLocked", "lock_path"]

LOCK_NAME = ".harness.lock"

_held: dict[str, tuple[int, int]] = {}  # resolved path -> (fd, depth)
_guard = threading.Lock()


def lock_path(out_dir: str | os.PathLike[str]) -> Path:
    return Path(out_dir) / LOCK_NAME


def _holder(fd: int) -> dict:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        data = json.loads(os.read(fd, 4096).decode("utf-8") or "{}")
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


class RunLock:
    """``with RunLock(out_dir, command):`` — raises RunLocked when another process holds it."""

    def __init__(self, out_dir: str | os.PathLike[str], command: str = ""):
        self.path = lock_path(out_dir)
        self.command = command
        self._key = ""

    def acquire(self) -> "RunLock":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        key = str(self.path.resolve())
        with _guard:
            if key in _held:
                fd, depth = _held[key]
                _held[key] = (fd, depth + 1)
                self._key = key
                return self
            fd = self._open_locked(key)
            record = {"pid": os.getpid(), "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                      "command": self.command}
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, json.dumps(record).encode("utf-8"))
            _held[key] = (fd, 1)
            self._key = key
        return self

    @staticmethod
    def _open_locked(key: str) -> int:
        # The holder removes the file when it is done, so a lock taken on a file that has
        # meanwhile been removed (or replaced) is no lock: check the inode, else try again.
        for _ in range(20):
            # O_RDWR without O_TRUNC: opening must not erase the holder's details.
            fd = os.open(key, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _holder(fd)
                os.close(fd)
                pid = holder.get("pid", "?")
                since = holder.get("started_at", "?")
                raise RunLocked(f"another harness run (pid {pid}, started {since}) holds the lock {key}; "
                                "not starting a second one", fix="wait for it to finish (or end that process)") \
                    from None
            try:
                same = os.stat(key).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                return fd
            os.close(fd)
        raise RunLocked(f"could not take the lock {key}: it keeps being replaced")  # pragma: no cover

    def release(self) -> None:
        with _guard:
            if not self._key or self._key not in _held:
                return
            fd, depth = _held[self._key]
            if depth > 1:
                _held[self._key] = (fd, depth - 1)
            else:
                del _held[self._key]
                # Removed while still locked: a process that opened it meanwhile finds, after
                # its flock, that the path no longer names its file, and opens it afresh.
                try:
                    os.unlink(self._key)
                except FileNotFoundError:
                    pass
                fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)
            self._key = ""

    def __enter__(self) -> "RunLock":
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()
