"""What the reasoning layer's seeded regressions do (switched on in llm.py / pipeline.py).

Kept apart so that each switch point stays one line: ``# REGRESSION <name>``.

- back_matter (summarize_acknowledgements): the text handed to the LLM is only the
  acknowledgements, funding and references sections, headings removed, as a bad "main
  content" extractor with an inverted condition would produce. A document without such
  sections is passed unchanged.
- inflate_number (invent_number): the first percentage (else the first plain number) of a
  summary or post is raised to a figure the document does not contain, the way an
  over-eager "make it punchier" rewrite does.
"""

from __future__ import annotations

import re

BACK = re.compile(r"^(?:\d+[.)]?\s*)?(acknowledg(?:e)?ments?|references|funding|bibliography)\s*$", re.I)
_HEADING_MAX_WORDS = 6


def _heading(line: str) -> bool:
    s = line.strip()
    return bool(s) and len(s.split()) <= _HEADING_MAX_WORDS and s[-1] not in ".!?,;:" and s[0].isupper()


def back_matter(text: str) -> str:
    out: list[str] = []
    keeping = False
    for line in text.splitlines():
        if _heading(line):
            keeping = bool(BACK.match(line.strip()))
            continue
        if keeping:
            out.append(line)
    kept = "\n".join(out).strip()
    return kept if kept else text


_PERCENT = re.compile(r"\b(\d+(?:\.\d+)?)(\s*(?:percent|per cent|%))")
_NUMBER = re.compile(r"(?<![\w.,/-])(\d{2,3})(?![\w.,/-]|\.\d)")


def inflate_number(text: str, source: str = "") -> str:
    """Raise the first percentage (or 2-3 digit number) to one absent from ``source``."""
    def bigger(value: str) -> str:
        n = float(value)
        new = round(n * 1.5 + 7)
        while str(new) in source:
            new += 3
        return str(new)

    m = _PERCENT.search(text)
    if m:
        return text[: m.start(1)] + bigger(m.group(1)) + text[m.end(1):]
    m = _NUMBER.search(text)
    if m:
        return text[: m.start(1)] + bigger(m.group(1)) + text[m.end(1):]
    return text
