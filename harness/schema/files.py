"""Reading an input file (case file, harness.toml) without surprises.

``read_text`` refuses, as an ``InputProblem`` with a fix, what would otherwise be a
traceback or a hang: a path that is a folder, a symlink loop, something that is not a
regular file (a FIFO would block the read), a file over ``MAX_BYTES``, bytes that are not
UTF-8 (the problem names the byte offset and the line). ``output_dir_problem`` does the
same for the reports folder a run writes to.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

#: Largest input file read (bytes). The biggest bundled case file is about 40 kB.
MAX_BYTES = 2_000_000


class InputProblem(Exception):
    """One reason an input was refused; ``line`` when known, and a ``fix``."""

    def __init__(self, message: str, *, line: int | None = None, fix: str = ""):
        self.message = message
        self.line = line
        self.fix = fix
        super().__init__(message)


def read_text(path: str | os.PathLike) -> str:
    """The text of a regular, readable, UTF-8 file of at most MAX_BYTES (else InputProblem)."""
    try:
        info = os.stat(path)  # follows symlinks: a loop is ELOOP
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InputProblem("is a symlink loop", fix="point the link at a real file") from None
        if exc.errno == errno.ENOENT:
            raise InputProblem("does not exist (or is a broken link)", fix="correct the path") from None
        raise InputProblem(f"cannot be read: {exc.strerror}", fix="check the file's permissions") from None
    if stat.S_ISDIR(info.st_mode):
        raise InputProblem("is a folder, not a file", fix="name a file (a folder may not end in .yaml, .yml or .toml)")
    if not stat.S_ISREG(info.st_mode):
        raise InputProblem("is not a regular file", fix="inputs are plain text files")
    if info.st_size > MAX_BYTES:
        raise InputProblem(f"is {info.st_size:,} bytes; the limit is {MAX_BYTES:,}", fix="split it into several files")
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_BYTES + 1)
    except OSError as exc:
        raise InputProblem(f"cannot be read: {exc.strerror}", fix="check the file's permissions") from None
    return decode(data)


def decode(data: bytes) -> str:
    """UTF-8 (a leading BOM allowed); a bad byte is an InputProblem naming its offset and line."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputProblem(f"is not UTF-8: byte 0x{data[exc.start]:02x} at byte offset {exc.start} ({exc.reason})",
                           line=line, fix="save the file as UTF-8") from None


def output_dir_problem(path: str | os.PathLike, lock_name: str = ".harness.lock") -> str | None:
    """Why ``path`` cannot be a run's output folder (None if it can): it is a file, a link
    loop, or its lock file is a folder."""
    p = Path(path)
    try:
        if os.path.lexists(p) and not p.exists():
            return f"--out {str(p)!r} is a symlink to nothing ({os.readlink(p)!r})"
        if p.exists() and not p.is_dir():
            return f"--out {str(p)!r} is a file, not a folder"
        full = p.resolve()
        if full == Path(full.anchor):
            return f"--out {str(p)!r} is the root of the file system"
        if full.parts[1:2] in (("proc",), ("sys",), ("dev",)):
            return f"--out {str(p)!r} is on the kernel's /{full.parts[1]} file system, where no report can be written"
        lock = p / lock_name
        if lock.is_dir():
            return f"the run lock {str(lock)!r} is a folder"
        existing = next((a for a in (full, *full.parents) if a.exists()), None)
        if existing is not None and not existing.is_dir():
            return f"--out {str(p)!r} cannot be created: {str(existing)!r} is a file"
        if existing is not None and not os.access(existing, os.W_OK | os.X_OK):
            return f"--out {str(p)!r} cannot be written: {str(existing)!r} is read-only"
    except OSError as exc:  # ELOOP and friends
        return f"--out {str(p)!r} cannot be used: {exc.strerror or exc}"
    return None
