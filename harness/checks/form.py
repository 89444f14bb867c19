"""``reply.bullets``, ``reply.language``, ``reply.json``: the form of what the agent said.

Comparisons in the shape of ``checks/text.py`` (``(text, params, messages) -> (ok, expected,
reason)``), offered on replies and posts by the registry.
"""

from __future__ import annotations

import json
import re
import threading
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field

from harness.checks.params import AtLeastOne, Count, Params, examples

BULLET_RE = re.compile(r"^\s*(?:[-*•‣◦]|\d{1,3}[.)])\s+\S", re.M)
WORD_RE = re.compile(r"[^\W\d_]+", re.U)

#: The languages ``reply.language`` accepts (ISO 639-1).
LANGUAGES = ("en", "es", "fr", "de", "pt", "it")
#: Also told apart, so a reply in a close neighbour is named as such instead of passing for
#: one of the six (Dutch for German, Catalan for Spanish...). bench/bench_language.py measured
#: the set: with these six, 12 of 15 neighbour replies are named right, against 0 without.
NEIGHBOURS = ("nl", "ca", "ro", "da", "sv", "pl")

_DETECTOR = None
_MEMO = None
"""The memo of lingua's answers (``harness.checks.langmemo``, which sets it when a run uses it)."""
_BUILDING = threading.Lock()


def _detector():
    """lingua's detector over the six and their neighbours, built once, on first use (a few
    seconds and about 300 MB: ``harness --help`` and a run without a language check never
    load it)."""
    global _DETECTOR
    with _BUILDING:
        if _DETECTOR is None:
            try:
                from lingua import IsoCode639_1, LanguageDetectorBuilder
            except ImportError as exc:  # pragma: no cover - a runtime dependency
                raise RuntimeError("reply.language needs lingua: pip install lingua-language-detector") from exc
            codes = [getattr(IsoCode639_1, c.upper()) for c in LANGUAGES + NEIGHBOURS]
            _DETECTOR = LanguageDetectorBuilder.from_iso_codes_639_1(*codes).build()
    return _DETECTOR


def detect_language(text: str) -> tuple[str | None, float]:
    """(ISO 639-1 code or None when the text has no letters to tell by, lingua's confidence 0..1)."""
    if not WORD_RE.search(text):
        return None, 0.0
    memo = _MEMO  # checks/langmemo.py, once a run uses it: what lingua said of this text in an earlier run
    kept = memo.get(text) if memo is not None else None
    if kept is not None:
        return kept
    detector = _detector()
    found = detector.detect_language_of(text)
    answer = (None, 0.0) if found is None else \
        (found.iso_code_639_1.name.lower(), detector.compute_language_confidence(text, found))
    if memo is not None:
        memo.put(text, answer)
    return answer


def bullets(text: str, params: dict, _messages):
    n = len(BULLET_RE.findall(text))
    lo, hi = params.get("min", 1), params.get("max")
    want = f"{lo} to {hi} bullet lines" if hi is not None else f"at least {lo} bullet lines"
    ok = n >= lo and (hi is None or n <= hi)
    return ok, want, f"{n} bullet lines, wanted {want}"


class Bullets(AtLeastOne):
    """How many bullet lines (``- ``, ``* ``, ``•``, ``1.`` / ``1)`` at a line start)."""

    model_config = ConfigDict(json_schema_extra=examples({"min": 3, "max": 6}))
    min: Count = Field(None, description="at least this many (default 1)")
    max: Count = Field(None, description="at most this many")


def language(text: str, code: str, _messages):
    got, confidence = detect_language(text)
    if got is None:
        return False, f"written in {code}", "no words to tell the language by"
    ok = got == code
    return ok, f"written in {code}", f"looks like {got} (lingua, confidence {confidence:.2f})" + (
        "" if ok else f", wanted {code}")


Language = Annotated[Literal[LANGUAGES], Field(description="the language code (ISO 639-1) the text is written in",
                                               json_schema_extra=examples("en"))]


FENCE_RE = re.compile(r"```(?:json)?\s*\n(.*?)```", re.S)


def parse_json(text: str) -> tuple[Any, str]:
    """The JSON value of a reply (bare, or in a ```json fence); (None, why) when there is none."""
    candidates = [m.group(1) for m in FENCE_RE.finditer(text)] or [text]
    last = ""
    for candidate in candidates:
        try:
            return json.loads(candidate.strip()), ""
        except (ValueError, RecursionError) as exc:
            last = str(exc)
    return None, f"not JSON: {last}" if text.strip() else "empty reply"


def json_check(text: str, params: Any, _messages):
    value, why = parse_json(text)
    required = params.get("required", []) if isinstance(params, dict) else []
    want = "valid JSON" + (f" with keys {required}" if required else "")
    if why:
        return False, want, why
    if required:
        if not isinstance(value, dict):
            return False, want, f"JSON {type(value).__name__}, not an object with keys {required}"
        missing = [k for k in required if k not in value]
        if missing:
            return False, want, f"JSON object lacks keys {missing}"
    return True, want, "valid JSON" + (f" with keys {required}" if required else "")


class JsonKeys(Params):
    """The reply is a JSON object holding these keys."""

    required: list[str] = Field(default_factory=list, description="keys the JSON object must hold")


Json = Annotated[Literal[True] | JsonKeys, Field(description="true: valid JSON; {required: [...]}: an object with "
                                                             "those keys", json_schema_extra=examples(
                                                                 True, {"required": ["summary", "platform"]}))]
