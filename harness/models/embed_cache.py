"""The embedding model's disk cache: one vector per text, kept between runs (``_DiskCache``), at most
``DISK_TEXTS`` (the least recently used removed at a run's end), and what the last run needed of the
model (``last_run``: the next run loads the model ahead only when it had new texts)."""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from typing import Any

#: The most vectors ``<cache_dir>/embeddings/`` keeps (~1.6 kB each, a 4 kB block on most
#: disks: ~80 MB); past it, those read or written longest ago are removed at the run's end.
DISK_TEXTS = 20_000
#: What the last run that used the embedder needed of the model (``_DiskCache.record_run``).
LAST_RUN = "last-run.json"


class _DiskCache:
    """``<dir>/<sha256(model + text)>.npy``: one small file per text, written atomically; a hit
    refreshes its file's time (``prune`` removes the least recently used)."""

    def __init__(self, directory: Path | None, model: str):
        self.dir = directory
        self.model = model
        self.writes = 0

    def _path(self, text: str) -> Path:
        digest = hashlib.sha256(f"{self.model}\0{text}".encode("utf-8")).hexdigest()
        return self.dir / digest[:2] / f"{digest}.npy"  # type: ignore[operator]

    def get(self, text: str):
        if self.dir is None:
            return None
        import numpy as np

        path = self._path(text)
        try:
            vector = np.load(path)
        except (OSError, ValueError, EOFError):
            return None
        try:
            os.utime(path)
        except OSError:  # read-only cache: still a hit
            pass
        return vector

    def put(self, text: str, vector) -> None:
        if self.dir is None:
            return
        import numpy as np

        path = self._path(text)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
            with open(tmp, "wb") as fh:
                np.save(fh, vector)
            os.replace(tmp, path)
            self.writes += 1
        except OSError:  # a full or read-only disk: the vector is still used, only not kept
            pass

    def prune(self, keep: int = DISK_TEXTS) -> int:
        """Remove the least recently used vectors past ``keep``; how many were removed."""
        if self.dir is None or not self.dir.is_dir():
            return 0
        files = []
        for sub in os.scandir(self.dir):
            if sub.is_dir():
                try:
                    files += [(f.stat().st_mtime, f.path) for f in os.scandir(sub.path) if f.name.endswith(".npy")]
                except OSError:
                    continue
        if len(files) <= keep:
            return 0
        files.sort()
        gone = 0
        for _mtime, path in files[:len(files) - keep]:
            try:
                os.remove(path)
                gone += 1
            except OSError:
                pass
        return gone

    def record_run(self, stats: Any) -> None:
        """Write what this run needed of the model (``last_run`` reads it)."""
        if self.dir is None:
            return
        import json

        body = {"model": self.model, "texts_encoded": stats.texts_encoded, "cache_hits": stats.cache_hits,
                "load_s": round(stats.load_s, 3)}
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            tmp = self.dir / f"{LAST_RUN}.{os.getpid()}.tmp"
            tmp.write_text(json.dumps(body), encoding="utf-8")
            os.replace(tmp, self.dir / LAST_RUN)
        except OSError:
            pass


def last_run(cache_dir: Path | None) -> dict[str, Any] | None:
    """What the last run that used the embedder with this cache needed of the model
    (``{"texts_encoded": ..., "cache_hits": ...}``), or None (no such run, an unreadable record)."""
    if cache_dir is None:
        return None
    import json

    try:
        body = json.loads((Path(cache_dir) / "embeddings" / LAST_RUN).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(body, dict) or not all(isinstance(body.get(k), int) and not isinstance(body.get(k), bool)
                                             for k in ("texts_encoded", "cache_hits")):
        return None
    return body
