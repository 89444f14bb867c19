"""``reply.bullets``, ``reply.language``, ``reply.json``: the form of what the agent said.

Comparisons in the shape of ``checks/text.py`` (``(text, params, messages) -> (ok, expected,
reason)``), offered on replies and posts by the registry.
"""

from __future__ import annotations

import json
import re
from typing import Any

from harness.checks.base import bounds_error

BULLET_RE = re.compile(r"^\s*(?:[-*•‣◦]|\d{1,3}[.)])\s+\S", re.M)

# Frequent function words per language: enough to tell the languages users write to these
# bots in from one another in a sentence or two. No dependency, no model download.
STOPWORDS: dict[str, frozenset[str]] = {
    "en": frozenset("the and of to in is that for it with as was on are be this by not or have from but "
                    "you they we his her at an which their can will would there".split()),
    "es": frozenset("el la de que y en los las un una por con para es del se no al lo como más pero sus "
                    "le ya o este sí porque esta entre cuando muy sin sobre también puedes este".split()),
    "fr": frozenset("le la les de des et en un une du est que qui dans pour pas sur au avec ce se plus "
                    "par sont mais ou il elle nous vous ils ne cette aux".split()),
    "de": frozenset("der die das und ist nicht ein eine zu den mit von sich des auf für im dem es auch "
                    "als an wie aus bei nach wird sind oder einer kann".split()),
    "pt": frozenset("o a os as de que e do da em um uma para com não por mais dos das se na no ao mas "
                    "como foi ele ela isso você".split()),
    "it": frozenset("il lo la gli le di che e è un una per con non si del della dei in da al sono ma come "
                    "anche più questo questa".split()),
}
WORD_RE = re.compile(r"[^\W\d_]+", re.U)


def detect_language(text: str) -> tuple[str | None, float, int]:
    """(language code or None, share of stop-word hits won by it, stop-word hits in total)."""
    words = [w.lower() for w in WORD_RE.findall(text)]
    hits = {code: sum(1 for w in words if w in stops) for code, stops in STOPWORDS.items()}
    total = sum(hits.values())
    if total == 0:
        return None, 0.0, 0
    code = max(hits, key=hits.get)
    return code, hits[code] / total, total


def bullets(text: str, params: dict, _messages):
    n = len(BULLET_RE.findall(text))
    lo, hi = params.get("min", 1), params.get("max")
    want = f"{lo} to {hi} bullet lines" if hi is not None else f"at least {lo} bullet lines"
    ok = n >= lo and (hi is None or n <= hi)
    return ok, want, f"{n} bullet lines, wanted {want}"


def bullets_error(value: Any) -> str | None:
    return bounds_error(value, ("min", "max"))


def language(text: str, code: str, _messages):
    got, share, hits = detect_language(text)
    if got is None:
        return False, f"written in {code}", "no words to tell the language by"
    ok = got == code
    return ok, f"written in {code}", f"looks like {got} ({share:.0%} of {hits} function words)" + (
        "" if ok else f", wanted {code}")


def language_error(value: Any) -> str | None:
    if value not in STOPWORDS:
        return f"expects a language code, one of {', '.join(sorted(STOPWORDS))}; got {value!r}"
    return None


FENCE_RE = re.compile(r"```(?:json)?\s*\n(.*?)```", re.S)


def parse_json(text: str) -> tuple[Any, str]:
    """The JSON value of a reply (bare, or in a ```json fence); (None, why) when there is none."""
    candidates = [m.group(1) for m in FENCE_RE.finditer(text)] or [text]
    last = ""
    for candidate in candidates:
        try:
            return json.loads(candidate.strip()), ""
        except ValueError as exc:
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


def json_error(value: Any) -> str | None:
    if value is True:
        return None
    if isinstance(value, dict) and set(value) <= {"required"} and all(
            isinstance(k, str) for k in value.get("required", [])):
        return None
    return "expects true or {required: [key, ...]}"
