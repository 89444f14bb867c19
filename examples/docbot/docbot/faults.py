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


# -- issue 22: changes only the accepted nights' own replies reveal ------------------------------
#
# - remove_hedges (hedges_removed): a "make it confident" rewrite of model output.
# - split_long (replies_split): a reply over 700 characters goes out as several messages.
# - swap_digits (digit_swap): the first number with two different digits gets them swapped.
# - swap_names (name_swap): the first two distinct mid-sentence names trade places.

_MODAL = re.compile(r"\b(?:may|might|could)\s+(?:be\s+able\s+to\s+)?([a-z]+)\b")
_ABOUT = re.compile(r"\b(?:about|around|approximately|roughly|nearly|up to)\s+(?=[$€£]?\d)", re.I)
_SUGGESTS = re.compile(r"\b(suggest|suggests|suggested)\b")


def _third_person(verb: str) -> str:
    if verb in ("be",):
        return "is"
    if verb in ("have",):
        return "has"
    if verb.endswith(("s", "sh", "ch", "x", "z")):
        return verb + "es"
    if verb.endswith("y") and len(verb) > 2 and verb[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def remove_hedges(text: str) -> str:
    """'may reduce' -> 'reduces', 'about 30' -> '30', 'suggests' -> 'shows'."""
    text = _MODAL.sub(lambda m: _third_person(m.group(1)), text)
    text = _ABOUT.sub("", text)
    return _SUGGESTS.sub(lambda m: {"suggest": "show", "suggests": "shows", "suggested": "showed"}[m.group(1)], text)


def split_long(text: str, limit: int = 700) -> list[str]:
    """Chunks of at most ``limit`` characters, cut at a line or sentence end where one is near."""
    if len(text) <= limit:
        return [text]
    parts, rest = [], text
    while len(rest) > limit:
        cut = max(rest.rfind("\n", 0, limit), rest.rfind(". ", 0, limit) + 1)
        cut = cut if cut > limit // 3 else limit
        parts.append(rest[:cut].strip())
        rest = rest[cut:].strip()
    return parts + ([rest] if rest else [])


_DIGITS = re.compile(r"(?<![\w/.:-])\d[\d,.]*\d(?![\w/-])")


def swap_digits(text: str) -> str:
    """The first number with two different digits has its first two different digits swapped."""
    for m in _DIGITS.finditer(text):
        s = m.group(0)
        idx = [i for i, c in enumerate(s) if c.isdigit()]
        for a, b in zip(idx, idx[1:]):
            if s[a] != s[b]:
                new = s[:a] + s[b] + s[a + 1:b] + s[a] + s[b + 1:]
                return text[:m.start()] + new + text[m.end():]
    return text


_NAME = re.compile(r"(?<=[a-z,;] )([A-Z][a-z]{2,})\b")
_SENTENCE = re.compile(r"[^.!?\n]+")


def swap_names(text: str) -> str:
    """The first mid-sentence names of the first two sentences that have different ones trade places everywhere."""
    found: list[str] = []
    for sentence in _SENTENCE.finditer(text):
        m = _NAME.search(sentence.group(0))
        if m and m.group(1) not in found:
            found.append(m.group(1))
        if len(found) == 2:
            break
    if len(found) < 2:
        return text
    a, b = found
    return re.sub(rf"\b({a}|{b})\b", lambda m: b if m.group(1) == a else a, text)


# - percentage_points (percent_points): "percent" and "%" become "percentage points".
# - shift_year (year_shift): the first year (1900-2099) is one later.

_PERCENT = re.compile(r"(\d)\s*(?:%|percent\b|per cent\b)")
_YEAR = re.compile(r"(?<![\d,.])(19|20)(\d\d)(?!\d|,\d)")


def percentage_points(text: str) -> str:
    """'12 percent' / '12%' -> '12 percentage points' (a unit renamed, the number kept)."""
    return _PERCENT.sub(lambda m: f"{m.group(1)} percentage points", text)


def shift_year(text: str) -> str:
    """The first year of the text, one later."""
    m = _YEAR.search(text)
    if not m:
        return text
    year = int(m.group(0)) + 1
    return text[:m.start()] + str(year) + text[m.end():]
