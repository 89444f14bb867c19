"""Record and replay of LLM calls at the gateway (``[sandbox] llm_mode`` and ``cassette``).

- ``live`` (default): forward to the upstream, record nothing.
- ``record``: forward, and append each successful upstream answer to the cassette (JSONL),
  keyed by a hash of the normalized request.
- ``replay``: answer from the cassette only; no upstream call, no spend, deterministic. A
  request with no recording is answered 502 with a message saying so (recorded as an
  error call, ``replay_miss`` in its meta), never forwarded.

The request is normalized before hashing: ``model``, ``messages`` and the sampling
parameters count; ``user``, ``stream`` and the run's loopback addresses do not (each run
has its own ports and per-case document tokens, so ``http://127.0.0.1:<port>/c/<token>``
becomes ``{docs}``, and any other loopback port becomes ``{port}``). The same
substitution is undone in a replayed answer, so a post quoting the document link quotes
this run's link.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from pathlib import Path
from typing import Any

from harness.redact import active
from harness.errors import ConfigError

MODES = ("live", "record", "replay")
#: Request keys that do not change the answer (or change every run).
IGNORED_KEYS = {"user", "stream", "stream_options", "metadata", "store", "n_ignored"}
DOCS_RE = re.compile(r"http://127\.0\.0\.1:\d+/c/[a-z0-9]{8,32}")
PORT_RE = re.compile(r"(127\.0\.0\.1|localhost):\d+")
DOCS_MARK = "{docs}"


def _normalize_text(text: str) -> str:
    return PORT_RE.sub(r"\1:{port}", DOCS_RE.sub(DOCS_MARK, text))


def _normalize(value: Any) -> Any:
    if isinstance(value, str):
        return _normalize_text(value)
    if isinstance(value, list):
        return [_normalize(v) for v in value]
    if isinstance(value, dict):
        return {k: _normalize(v) for k, v in sorted(value.items())}
    return value


def request_key(body: dict) -> str:
    """sha256 of the normalized request (model + messages + parameters)."""
    kept = {k: v for k, v in body.items() if k not in IGNORED_KEYS}
    text = json.dumps(_normalize(kept), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    # surrogatepass: a lone surrogate (a JSON "\ud800" the agent sent) hashes too, never a 500
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _docs_base(body: dict) -> str | None:
    found = DOCS_RE.search(json.dumps(body.get("messages") or [], ensure_ascii=False))
    return found.group(0) if found else None


class Cassette:
    """One JSONL cassette file; thread-safe appends, loaded once."""

    def __init__(self, path: Path, mode: str):
        if mode not in MODES:
            raise ConfigError(f"[sandbox] llm_mode must be one of {', '.join(MODES)}, got {mode!r}")
        self.path = Path(path)
        self.mode = mode
        self._lock = threading.Lock()
        self._entries: dict[str, dict] = {}
        if self.path.is_file():
            for n, line in enumerate(self.path.read_text(encoding="utf-8").splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    entry = json.loads(line)
                    self._entries[entry["key"]] = entry
                except (ValueError, KeyError) as exc:
                    raise ConfigError(f"cassette line {n} is not a recording: {exc}", file=str(self.path),
                                      line=n, fix="re-record it with llm_mode = \"record\"") from None
        elif mode == "replay":
            raise ConfigError("[sandbox] llm_mode = \"replay\" but the cassette does not exist", file=str(self.path),
                              fix="record it first: llm_mode = \"record\"")

    @property
    def replaying(self) -> bool:
        return self.mode == "replay"

    def __len__(self) -> int:
        return len(self._entries)

    def replay(self, body: dict) -> tuple[int, dict, str, dict]:
        """(status, response JSON, error, extra meta) for ``body``; a miss is a 502."""
        key = request_key(body)
        entry = self._entries.get(key)
        if entry is None:
            msg = (f"cassette miss: no recorded response for this request (key {key[:12]}, model "
                   f"{body.get('model', '')!r}) in {self.path}; re-record with llm_mode = \"record\"")
            return 502, {"error": {"message": msg, "type": "cassette_miss", "code": 502}}, msg, \
                {"replayed": False, "replay_miss": True, "cassette_key": key[:12]}
        response = entry["response"]
        base = _docs_base(body)
        if base:
            response = json.loads(json.dumps(response, ensure_ascii=False).replace(DOCS_MARK, base))
        return int(entry.get("status", 200)), response, "", {"replayed": True, "cassette_key": key[:12]}

    def store(self, body: dict, status: int, parsed: dict | None) -> None:
        """Record an upstream answer (record mode; only 2xx JSON answers are kept)."""
        if self.mode != "record" or parsed is None or not 200 <= status < 300:
            return
        key = request_key(body)
        response = _normalize(parsed)
        entry = {"key": key, "model": body.get("model", ""), "status": status, "recorded_at": time.time(),
                 "response": response}
        with self._lock:
            if key in self._entries:
                return
            self._entries[key] = entry
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a", encoding="utf-8") as fh:
                # a cassette is committed with the project: an upstream that echoes a key must not
                # put it there (harness/redact.py)
                # (ASCII-escaped: a lone surrogate in the answer is written as \udXXX, not a crash)
                fh.write(active().text(json.dumps(entry)) + "\n")


def cassette_from_config(config) -> Cassette | None:
    sb = config.sandbox
    mode = getattr(sb, "llm_mode", "live") or "live"
    path = getattr(sb, "cassette", "") or ""
    if mode not in MODES:
        raise ConfigError(f"[sandbox] llm_mode must be one of {', '.join(MODES)}, got {mode!r}",
                          file=str(config.path or ""))
    if mode == "live":
        return None
    if not path:
        raise ConfigError(f"[sandbox] llm_mode = {mode!r} needs a cassette path", file=str(config.path or ""),
                          fix='cassette = "cassettes/<name>.jsonl"')
    return Cassette(config.resolve(path), mode)
