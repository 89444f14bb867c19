"""Selecting cases the way pytest users expect: ``-k EXPR`` and ``--lf`` (``harness run``)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Callable, Iterable

from harness.errors import UsageError

_TOKEN = re.compile(r"\s*(\(|\)|[^\s()]+)")
_OPERATORS = {"and", "or", "not"}


def keyword_filter(expr: str) -> Callable[[str, Iterable[str]], bool]:
    """A predicate on (case id, tags) for a ``-k`` expression: words joined with and/or/not and
    parentheses; a word matches when it is part of the id or equals a tag (case-insensitive)."""
    if len(expr or "") > 4000:
        raise UsageError(f"-k is {len(expr):,} characters long; the limit is 4,000",
                         fix="select with --case GLOB or tags, or a shorter -k expression")
    tokens = _TOKEN.findall(expr or "")
    if not tokens or "".join(tokens).strip() == "":
        raise UsageError("-k needs an expression", fix="-k url, -k 'url and not malformed'")
    words = [t for t in tokens if t not in _OPERATORS and t not in "()"]
    if not words:
        raise UsageError(f"-k {expr!r} names no word to match", fix="-k url, -k 'url and not malformed'")

    for a, b in zip(tokens, tokens[1:]):
        if b == "(" and a not in _OPERATORS and a != "(":
            raise UsageError(f"-k {expr!r}: {a!r} is followed by '(' (a word is no function)",
                             fix="-k 'url and not malformed', -k '(cost or latency) and not slow'")

    def match(case_id: str, tags: Iterable[str]) -> bool:
        low_id, low_tags = case_id.lower(), {t.lower() for t in tags}
        out = []
        for t in tokens:
            if t in _OPERATORS or t in "()":
                out.append(t)
            else:
                out.append(str(t.lower() in low_id or t.lower() in low_tags))
        try:  # only True/False, and, or, not and parentheses are left: nothing else can be evaluated
            return bool(eval(" ".join(out), {"__builtins__": {}}, {}))  # noqa: S307
        except (SyntaxError, TypeError, RecursionError, MemoryError):  # `url (x)`; `not not ... x` 5,000 deep
            raise UsageError(f"-k {expr!r} is not an expression of words with and/or/not",
                             fix="-k 'url and not malformed', -k '(cost or latency) and not slow'") from None

    match("", ())  # a malformed expression is refused before anything runs
    return match


def last_failed(out: Path) -> tuple[set[str], str]:
    """The ids that did not pass in the newest run under ``out`` (results.json), and a line saying
    what was found. No earlier run, or nothing failed: an empty set (run everything, as pytest's
    ``--lf`` does)."""
    runs = sorted((p for p in Path(out).glob("*/results.json") if p.is_file()), key=lambda p: p.stat().st_mtime)
    for path in reversed(runs):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
            continue
        bad = {str(c.get("id")) for c in data["cases"] if isinstance(c, dict)
               and c.get("status") in ("fail", "error", "soft", "unavailable")}
        run = data.get("run_id") or path.parent.name
        if bad:
            return bad, f"running the {len(bad)} case(s) that did not pass in run {run}"
        return set(), f"every case passed in run {run}: running the whole selection"
    return set(), f"no earlier run in {out}: running the whole selection"
