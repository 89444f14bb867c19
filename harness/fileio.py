"""Files written whole or not at all: the one write path for reports, caches and storage spools."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` so readers see the old file or the new one, never half of one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    _clear_squatter(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fchmod(fh.fileno(), 0o666 & ~_umask())  # mkstemp makes 0600: readable as the umask says
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path


def _clear_squatter(path: Path) -> None:
    """Something that is not a file where a report goes (an agent that made ``results.json`` a
    folder, a symlink to elsewhere) is moved aside, never written through: the report still lands
    where readers look, and what was there is kept under ``<name>.not-a-file[.N]``."""
    if not os.path.lexists(path) or (path.is_file() and not path.is_symlink()):
        return
    for n in range(100):
        aside = path.with_name(f"{path.name}.not-a-file" + (f".{n}" if n else ""))
        if not os.path.lexists(aside):
            os.replace(path, aside) if not path.is_dir() or path.is_symlink() else os.rename(path, aside)
            return
    raise IsADirectoryError(f"{path} is not a file and could not be moved aside")


def _umask() -> int:
    """The process's umask: from /proc on Linux (reading it with ``os.umask`` means setting it,
    which another thread creating a file at that moment would see)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def read_regular_bytes(path: str | os.PathLike[str]) -> bytes:
    """The bytes of a regular file. Anything else an agent or a person may have left there (a
    FIFO, a device, a socket) raises OSError(EINVAL) instead of blocking the read forever; a
    folder raises IsADirectoryError, a missing file FileNotFoundError."""
    import errno
    import stat

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "is a folder, not a file", str(path))
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, "is not a regular file (a FIFO, a device or a socket)", str(path))
        with os.fdopen(fd, "rb", closefd=True) as fh:
            fd = -1
            return fh.read()
    finally:
        if fd >= 0:
            os.close(fd)
