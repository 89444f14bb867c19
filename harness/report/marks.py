"""The facts to mark in a reply: a ``Mark`` (a claim's text, or only its changed words), where
it falls in a text (whitespace-tolerant, case ignored), the text cut into (segment, marked)
pieces, and an excerpt around the first mark. Used by changes.py's pairs and its Markdown;
plain data, nothing here escapes."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence, Union


#: Characters of a reply shown around the first marked fact (summary.md, the PR comment).
EXCERPT_CHARS = 240


@dataclass(frozen=True)
class Mark:
    """Something to mark in a reply: every occurrence of ``text`` (whitespace-tolerant, case
    ignored), the whole of it, or only its words at ``words`` (indices into ``text.split()``:
    the words of a claim that differ from its aligned claim on the other side)."""

    text: str
    words: tuple[int, ...] | None = None


MarkLike = Union[Mark, str]


def _pattern(m: Mark) -> str | None:
    words = m.text.split()
    if not words:
        return None
    return ((r"(?<!\w)" if words[0][0].isalnum() else "") + r"\s+".join(f"({re.escape(w)})" for w in words)
            + (r"(?!\w)" if words[-1][-1].isalnum() else ""))


def _find(text: str, mark: MarkLike) -> "re.Match[str] | None":
    m = mark if isinstance(mark, Mark) else Mark(str(mark))
    pattern = _pattern(m)
    return re.search(pattern, text, flags=re.IGNORECASE) if pattern else None


def _ranges(text: str, mark: MarkLike) -> list[tuple[int, int]]:
    """Where ``mark`` marks ``text``: (start, end) character ranges."""
    m = mark if isinstance(mark, Mark) else Mark(str(mark))
    pattern = _pattern(m)
    if pattern is None:
        return []
    words = m.text.split()
    out: list[tuple[int, int]] = []
    for hit in re.finditer(pattern, text, flags=re.IGNORECASE):
        if m.words is None:
            out.append((hit.start(), hit.end()))
            continue
        for i in sorted(set(m.words)):
            if 0 <= i < len(words):
                start, end = hit.span(i + 1)
                if out and i - 1 in m.words and not text[out[-1][1]:start].strip():
                    out[-1] = (out[-1][0], end)  # neighbouring changed words: one mark
                else:
                    out.append((start, end))
    return out


def mark_spans(text: str, marks: Sequence[MarkLike]) -> list[tuple[str, bool]]:
    """``text`` as (segment, marked) pieces: every case-insensitive occurrence of a mark
    (whitespace-tolerant; whole words where it starts or ends with a letter or digit), all of it
    or only its ``words``; overlaps merged."""
    hits = sorted(r for m in marks for r in _ranges(text, m))
    merged: list[list[int]] = []
    for start, end in hits:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    out: list[tuple[str, bool]] = []
    at = 0
    for start, end in merged:
        if start > at:
            out.append((text[at:start], False))
        out.append((text[start:end], True))
        at = end
    if at < len(text) or not out:
        out.append((text[at:], False))
    return out


def excerpt(text: str, marks: Sequence[MarkLike], limit: int = EXCERPT_CHARS) -> list[tuple[str, bool]]:
    """One line of ``text`` (whitespace collapsed) around its first mark, at most ``limit``
    characters, as ``mark_spans`` pieces; an ellipsis where it was cut."""
    flat = " ".join(str(text).split())
    spans = mark_spans(flat, marks)
    if len(flat) <= limit:
        return spans
    first, pos = None, 0
    for seg, marked in spans:
        if marked:
            first = pos
            break
        pos += len(seg)
    if first is None:  # nothing marked on this side: show where its claim is
        places = [hit.start() for m in marks for hit in [_find(flat, m)] if hit is not None]
        first = min(places, default=0)
    start = max(0, min(first - limit // 3, len(flat) - limit))
    stop = start + limit
    pieces: list[tuple[str, bool]] = [("…", False)] if start > 0 else []
    pos = 0
    for seg, marked in spans:  # the pieces of the whole text, cut to the window
        a, b = max(pos, start), min(pos + len(seg), stop)
        if a < b:
            pieces.append((flat[a:b], marked))
        pos += len(seg)
    if stop < len(flat):
        pieces.append(("…", False))
    return pieces
