"""What lingua said of a text, kept between runs (``reply.language``, the baseline's language).

lingua's models take seconds to load (3.7 s here, holding the interpreter's lock: the run loads
them before its first case, harness/run/warm.py), and the same text always gets the same answer
from the same lingua and the same languages. So each answer is kept by the text's digest in
``<cache_dir>/language/memo.json``; a text seen by an earlier run is answered from there, and a
run whose last run found every text there does not load the models ahead (``needs_detector``).
A text that is new after all loads them when it is first asked about: a stall of seconds that
the run's loop-stall guard sees (a latency over its bound within a stall is unavailable, never a
pass), and the next run loads them ahead again.

The memo keeps at most ``MEMO_TEXTS`` answers: those this run asked for first, then the others,
newest first. An unreadable memo is ignored (and written anew), never an error.
"""

from __future__ import annotations

import hashlib
import json
import sys
import threading
from pathlib import Path
from typing import Any

from harness.checks import form
from harness.checks.form import LANGUAGES, NEIGHBOURS

#: The most answers the memo keeps (~60 bytes each on disk).
MEMO_TEXTS = 50_000
FILE = Path("language") / "memo.json"

_lock = threading.Lock()
_state: dict[str, Any] = {"path": None, "key": "", "entries": {}, "used": set(), "misses": 0, "hits": 0,
                          "last_misses": None}


def _detector_key() -> str:
    """What an answer depends on besides the text: lingua's version and the languages told apart."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        lingua = version("lingua-language-detector")
    except PackageNotFoundError:  # pragma: no cover - a runtime dependency
        lingua = "missing"
    return f"lingua-{lingua}:{','.join(LANGUAGES + NEIGHBOURS)}"


def use(cache_dir: str | Path | None) -> None:
    """Answer from (and keep answers in) ``<cache_dir>/language/memo.json``; None: no memo."""
    with _lock:
        path = Path(cache_dir) / FILE if cache_dir is not None else None
        if path == _state["path"]:  # the same memo (calibration's runs): the run's counts start again
            _state.update(used=set(), misses=0, hits=0)
            return
        key = _detector_key() if path is not None else ""
        entries, last = {}, None
        if path is not None:
            try:
                body = json.loads(path.read_text(encoding="utf-8"))
                if isinstance(body, dict) and body.get("key") == key and isinstance(body.get("entries"), dict):
                    entries = {k: v for k, v in body["entries"].items() if _valid(v)}
                    last = body.get("last_run_misses") if isinstance(body.get("last_run_misses"), int) else None
            except (OSError, ValueError):
                pass
        _state.update(path=path, key=key, entries=entries, used=set(), misses=0, hits=0, last_misses=last)
        form._MEMO = sys.modules[__name__] if path is not None else None  # detect_language asks it first


def _valid(value: Any) -> bool:
    return (isinstance(value, list) and len(value) == 2 and (value[0] is None or isinstance(value[0], str))
            and isinstance(value[1], (int, float)) and not isinstance(value[1], bool))


def _digest(text: str) -> str:
    return hashlib.sha256(f"{_state['key']}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()[:32]


def get(text: str) -> tuple[str | None, float] | None:
    """The kept answer for ``text``, or None (no memo in use, or a text not seen)."""
    if _state["path"] is None:
        return None
    digest = _digest(text)
    with _lock:
        found = _state["entries"].get(digest)
        if found is None:
            _state["misses"] += 1
            return None
        _state["used"].add(digest)
        _state["hits"] += 1
    return found[0], float(found[1])


def put(text: str, answer: tuple[str | None, float]) -> None:
    if _state["path"] is None:
        return
    digest = _digest(text)
    with _lock:
        _state["entries"][digest] = [answer[0], float(answer[1])]
        _state["used"].add(digest)


def needs_detector() -> bool:
    """Should the run load lingua's models ahead? Not when a memo is in use and the last run that
    wrote it found every text there."""
    return _state["path"] is None or _state["last_misses"] is None or _state["last_misses"] > 0


def counts() -> dict[str, int]:
    """This run's answers from the memo and texts it did not hold."""
    return {"hits": _state["hits"], "misses": _state["misses"]}


def save(record: bool = True) -> None:
    """Write the memo (this run's answers first, then the others up to ``MEMO_TEXTS``), merged
    with what another run wrote meanwhile; a disk that refuses it leaves the run as it was.
    ``record``: this run's misses become what the next run reads (``needs_detector``); False
    for work unlike a nightly (calibrate's seeded regressions), which keeps the last record."""
    from harness.fileio import atomic_write_text

    with _lock:
        path = _state["path"]
        if path is None or (not _state["used"] and not _state["misses"]):
            return
        entries = dict(_state["entries"])
        used = set(_state["used"])
        if record:  # what the next run in this process reads too
            _state["last_misses"] = _state["misses"]
        misses = _state["last_misses"]
        key = _state["key"]
    try:
        other = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(other, dict) and other.get("key") == key and isinstance(other.get("entries"), dict):
            for k, v in other["entries"].items():
                if _valid(v):
                    entries.setdefault(k, v)
    except (OSError, ValueError):
        pass
    order = [k for k in entries if k in used] + [k for k in reversed(list(entries)) if k not in used]
    kept = {k: entries[k] for k in order[:MEMO_TEXTS]}
    try:
        body = {"key": key, "entries": kept}
        if misses is not None:
            body["last_run_misses"] = misses
        atomic_write_text(path, json.dumps(body, separators=(",", ":")))
    except OSError:
        pass
