"""Files written whole or not at all: the one write path for reports, caches and storage spools."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` so readers see the old file or the new one, never half of one."""
    path = Path(path)
    make_folder(path.parent)
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


def make_folder(folder: Path) -> None:
    """``folder`` and its parents, created if missing. A file (or a link to one, or to nothing) an
    agent left where the run's own folder goes is moved aside (``<name>.not-a-folder``), so the
    run's reports still land where readers look."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        return
    except FileExistsError:
        if folder.is_dir() or not os.path.lexists(folder) or not os.path.lexists(folder.parent):
            raise
    for n in range(100):
        aside = folder.with_name(f"{folder.name}.not-a-folder" + (f".{n}" if n else ""))
        if not os.path.lexists(aside):
            os.replace(folder, aside)
            break
    folder.mkdir(parents=True, exist_ok=True)


def open_append(path: Path):
    """``path`` opened to append bytes, created if missing. What is not a regular file there (a
    folder or a link an agent put in its place) is moved aside first (``_clear_squatter``); a FIFO
    slipped in after that is refused (OSError) instead of blocking the open forever."""
    import stat

    make_folder(path.parent)
    _clear_squatter(path)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
                 | getattr(os, "O_NOFOLLOW", 0), 0o666)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(22, "is not a regular file", str(path))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "ab")
    except BaseException:
        os.close(fd)
        raise


def _clear_squatter(path: Path) -> None:
    """Something that is not a file where a report goes (an agent that made ``results.json`` a
    folder, a symlink to elsewhere) is moved aside, never written through: the report still lands
    where readers look, and what was there is kept under ``<name>.not-a-file[.N]``."""
    if not os.path.lexists(path) or (os.path.isfile(path) and not os.path.islink(path)):
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


#: Digests ``kept_digest`` keeps in one folder (``prune_kept``), those written longest ago removed first.
KEPT_DIGESTS = 2000


def kept_digest(path: Path, folder: Path | None, version: int, compute, valid=None) -> dict:
    """``compute()`` (a JSON-able dict derived from the file at ``path``), kept in ``folder`` by the
    file's resolved path, size and modification time and ``version``: the file unchanged, the kept
    one is read instead of the file (a file rewritten in place is digested again). ``folder``
    None: computed every time. ``valid``: what a kept digest must satisfy to be used. A folder
    that cannot be written is only a cache that does not keep (logged)."""
    import hashlib
    import json
    import logging

    if folder is None:
        return compute()
    st = path.stat()
    key = hashlib.sha256(f"{version}\0{path.resolve()}\0{st.st_size}\0{st.st_mtime_ns}".encode())
    entry = folder / f"{key.hexdigest()[:32]}.json"
    try:
        kept = json.loads(entry.read_text(encoding="utf-8"))
        if (isinstance(kept, dict) and kept.get("version") == version and isinstance(kept.get("digest"), dict)
                and (valid is None or valid(kept["digest"]))):
            return kept["digest"]
    except (OSError, ValueError):
        pass
    digest = compute()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write_text(entry, json.dumps({"version": version, "digest": digest}, separators=(",", ":")))
    except OSError as exc:
        logging.getLogger("harness.fileio").info("digest of %s not kept: %s", path, exc)
    return digest


def prune_kept(folder: Path, keep: int = KEPT_DIGESTS) -> None:
    """At most ``keep`` digests in ``folder`` (``kept_digest``): those written longest ago go first."""
    try:
        files = sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime)
    except OSError:
        return
    for old in files[:max(0, len(files) - keep)]:
        try:
            old.unlink()
        except OSError:
            pass
