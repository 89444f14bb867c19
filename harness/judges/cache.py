"""Content-hash cache of judged texts: an unchanged suite costs nothing the second time.

The key of a verdict covers everything it depends on: the case's judged checks and their
parameters, the reply and post texts, the source document, every golden file, the judges'
and checks' code, and the embedding / critic settings. Stored as one JSON file
(``<cache_dir>/judges/verdicts.json``), written atomically at the end of a run.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import harness

FORMAT = 1


def digest(*parts: Any) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(json.dumps(p, sort_keys=True, default=str, ensure_ascii=False).encode())
        h.update(b"\x1e")
    return h.hexdigest()


def files_digest(paths) -> str:
    h = hashlib.sha256()
    for p in sorted(Path(x) for x in paths):
        if p.is_file():
            h.update(str(p.name).encode())
            h.update(p.read_bytes())
    return h.hexdigest()


def code_digest() -> str:
    """The code a verdict depends on: checks, models (embedder, critic), judges, soft."""
    root = Path(harness.__file__).parent
    paths = [*root.glob("checks/*.py"), *root.glob("models/*.py"), *root.glob("judges/*.py"), root / "soft.py",
             *root.glob("data/*")]
    return files_digest(paths)


class VerdictCache:
    def __init__(self, directory: Path | None):
        self.path = directory / "judges" / "verdicts.json" if directory else None
        self.data: dict[str, Any] = {}
        self.hits = 0
        self.misses = 0
        if self.path and self.path.is_file():
            try:
                raw = json.loads(self.path.read_text(encoding="utf-8"))
                if raw.get("format") == FORMAT:
                    self.data = raw.get("entries", {})
            except (OSError, ValueError):
                self.data = {}
        self._used: set[str] = set()

    def get(self, key: str) -> Any:
        """The kept value of ``key``; always None without a directory (``--no-cache``: every
        verdict is judged, even one the run judged already)."""
        if self.path is not None and key in self.data:
            self.hits += 1
            self._used.add(key)
            return self.data[key]
        self.misses += 1
        return None

    def has(self, key: str) -> bool:
        """Would ``get`` answer ``key`` (not counted as a hit or a miss)?"""
        return self.path is not None and key in self.data

    def put(self, key: str, value: Any) -> None:
        self.data[key] = value
        self._used.add(key)

    def save(self) -> None:
        """Keep only the entries this run used (the cache does not grow without bound)."""
        if not self.path:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        entries = {k: v for k, v in self.data.items() if k in self._used}
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".verdicts-")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"format": FORMAT, "entries": entries}, f, ensure_ascii=False)
        os.replace(tmp, self.path)
