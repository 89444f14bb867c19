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


# -- issue 11: regressions that hide where the first suite did not look -------------------------
#
# - ascii_only (non_ascii_stripped): model output "sanitised" by encoding it to ASCII with
#   errors ignored, meant to drop stray control tokens; accents, non-Latin scripts and emoji go too.
# - round_decimals (numbers_rounded): a "humanize numbers" step meant for big counts also
#   rounds every decimal to a whole number (12.5% -> 13%, 3.75 million -> 4 million).
# - shift_dates (dates_shifted): dates in replies are "localised" through a midnight UTC
#   datetime converted to a zone west of UTC, so each one comes out a day early.

def ascii_only(text: str) -> str:
    return text.encode("ascii", "ignore").decode("ascii")


_DECIMAL = re.compile(r"(?<![\w.:/])(\d+)\.(\d+)(?!\.?\d|\w)")


def round_decimals(text: str) -> str:
    """Every decimal number (not IP addresses, versions in links) rounded half up to a whole."""
    def whole(m: re.Match) -> str:
        return str(int(float(m.group(0)) + 0.5))
    return _DECIMAL.sub(whole, text)


_MONTHS = ("January February March April May June July August September October November "
           "December").split()
_DATE_DMY = re.compile(r"\b(\d{1,2}) (" + "|".join(_MONTHS) + r") (\d{4})\b")
_DATE_MDY = re.compile(r"\b(" + "|".join(_MONTHS) + r") (\d{1,2}), (\d{4})\b")
_DATE_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")


def shift_dates(text: str) -> str:
    """Each date (14 March 2026, March 14, 2026, 2026-03-14) moved one day earlier."""
    from datetime import date, timedelta

    def day_before(y: int, m: int, d: int):
        try:
            return date(y, m, d) - timedelta(days=1)
        except ValueError:
            return None

    def dmy(mt: re.Match) -> str:
        new = day_before(int(mt.group(3)), _MONTHS.index(mt.group(2)) + 1, int(mt.group(1)))
        return f"{new.day} {_MONTHS[new.month - 1]} {new.year}" if new else mt.group(0)

    def mdy(mt: re.Match) -> str:
        new = day_before(int(mt.group(3)), _MONTHS.index(mt.group(1)) + 1, int(mt.group(2)))
        return f"{_MONTHS[new.month - 1]} {new.day}, {new.year}" if new else mt.group(0)

    def iso(mt: re.Match) -> str:
        new = day_before(int(mt.group(1)), int(mt.group(2)), int(mt.group(3)))
        return new.isoformat() if new else mt.group(0)

    return _DATE_ISO.sub(iso, _DATE_MDY.sub(mdy, _DATE_DMY.sub(dmy, text)))
