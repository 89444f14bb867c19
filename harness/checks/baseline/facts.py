"""The facts of a reply, claim by claim, and claims aligned one to one (baseline.facts).

A claim is a sentence that asserts something (``harness.models.claims.claims``). Its facts:

- ``numbers``: (value, unit) pairs, the value normalised (``1,200`` = ``1200``, ``3.50`` =
  ``3.5``, number words two..ninety as digits), the unit from a closed list of measures
  (``%`` = ``percent`` = ``per cent``; ``percentage points`` is ``pp``, another unit), a
  currency sign in front kept (``$ million``). A noun after a number is no unit ("120
  participants" = "120 subjects"), so a paraphrase does not change it;
- ``years`` (1800-2100, no unit), ``dates`` (``march 5``, ``5 march``, ``2024-03-05``);
- ``names``: capitalised words that are not sentence-initial function words
  (``claims.names``, with the names the accepted nights wrote mid-sentence as ``known``), and
  weekdays and months written mid-sentence;
- ``hedged``: a hedge or modal word (``may``, ``might``, ``could``, ``suggests``, ``likely`` ...;
  ``about``, ``around``, ``up to``, ``nearly`` ... only right before a number);
- ``negations``: how many negation cues (``claims.negations``);
- ``direction``: ``up`` / ``down`` words (rise, increase, more, higher / fall, drop, less, lower,
  reduce ...).

``align`` pairs two lists of claims one to one, greedily by score (shared content-word stems,
and shared facts, Dice coefficients; a small bonus for the same position), above ``ALIGN_MIN``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Sequence

from harness.models.claims import claims as claim_sentences
from harness.models.claims import names as claim_names
from harness.models.claims import negations

#: Kinds of discrete facts (each a set of strings on a claim).
FACT_KINDS = ("numbers", "years", "dates", "names")
ALIGN_MIN = 0.3
POSITION_BONUS = 0.1

_SCALES = {"thousand": "thousand", "k": "thousand", "million": "million", "m": "million", "mn": "million",
           "billion": "billion", "bn": "billion", "b": "billion", "trillion": "trillion"}
_UNITS = {
    "%": "percent", "percent": "percent", "pct": "percent", "pp": "pp", "ms": "ms",
    "second": "s", "sec": "s", "s": "s", "minute": "min", "min": "min", "hour": "h", "hr": "h", "h": "h",
    "day": "day", "week": "week", "month": "month", "year": "year", "decade": "decade",
    "mm": "mm", "cm": "cm", "km": "km", "metre": "m", "meter": "m", "mile": "mile", "inch": "inch", "foot": "ft",
    "feet": "ft", "ft": "ft", "mg": "mg", "g": "g", "gram": "g", "kg": "kg", "kilogram": "kg", "tonne": "t",
    "ton": "t", "lb": "lb", "ml": "ml", "litre": "l", "liter": "l", "l": "l",
    "kwh": "kwh", "mwh": "mwh", "gwh": "gwh", "twh": "twh", "kw": "kw", "mw": "mw", "gw": "gw", "w": "w",
    "watt": "w", "degree": "deg", "°c": "degc", "°f": "degf", "c": "degc", "f": "degf", "x": "x", "times": "x",
    "dollar": "usd", "usd": "usd", "euro": "eur", "eur": "eur", "pound": "gbp", "gbp": "gbp", "yen": "jpy",
    "people": "", "point": "",
}
_CURRENCY = {"$": "usd", "€": "eur", "£": "gbp", "¥": "jpy"}
_WORD_NUMBERS = {
    "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8", "nine": "9",
    "ten": "10", "eleven": "11", "twelve": "12", "fifteen": "15", "twenty": "20", "thirty": "30", "forty": "40",
    "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80", "ninety": "90", "hundred": "100",
}
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_NUMBER = re.compile(
    rf"(?P<cur>[$€£¥])?\s?(?<![\w.:/])(?P<n>{_NUM}|{'|'.join(_WORD_NUMBERS)})\b(?!\.\d)"
    r"(?P<tail>\s?(?:%|per\s?cent\b|percentage\s+points?\b|°[cf]\b)|[ \-]?(?P<w1>[a-z°]+)(?:\s(?P<w2>[a-z]+))?)?",
    re.I)
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_DATE = re.compile(rf"\b(?:({'|'.join(_MONTHS)})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b|(\d{{1,2}})(?:st|nd|rd|th)?\s+"
                   rf"(?:of\s+)?({'|'.join(_MONTHS)})\b)", re.I)
_HEDGES = re.compile(r"\b(?:may|might|could|possibly|perhaps|likely|unlikely|probably|potentially|suggests?|"
                     r"suggested|suggesting|appears?|appeared|seems?|seemed|estimated|reportedly|tends?|"
                     r"preliminary|uncertain|can\s+help)\b", re.I)
_NUMBER_HEDGES = re.compile(rf"\b(?:about|around|roughly|approximately|nearly|almost|up\s+to|some|over|under|"
                            rf"more\s+than|less\s+than|fewer\s+than|at\s+least|at\s+most|~)\s*[$€£¥]?\s?(?:{_NUM})",
                            re.I)
_UP = re.compile(r"\b(?:increas\w*|ris(?:e|es|ing|en)|rose|grow\w*|grew|higher|highest|more|greater|gain\w*|"
                 r"boost\w*|improv\w*|rais\w*|climb\w*|surg\w*|doubl\w*|tripl\w*|expand\w*|up|better|faster|"
                 r"larger|longer|above)\b", re.I)
_DOWN = re.compile(r"\b(?:decreas\w*|drop\w*|fell|fall\w*|declin\w*|lower\w*|less|fewer|reduc\w*|cut|cuts|"
                   r"shrink\w*|shrank|down|halv\w*|worse\w*|los(?:e|es|ing|s)|lost|slower|smaller|shorter|below|"
                   r"lessen\w*|diminish\w*)\b", re.I)
_WORD = re.compile(r"[^\W\d_]+")
_STOP = frozenset("""the and for with that this from into over under than then they them their there these those
was were are is be been being has have had its it's not but also which who whom what when where while will
would shall should can our your you we he she his her him about after before more less most such very just only
some any each other all both into onto per via upon out off""".split())


@dataclass(frozen=True)
class Claim:
    """One claim sentence and the facts in it."""

    text: str
    stems: frozenset[str]
    """Content words, lower-cased, cut to 5 letters (what alignment compares)."""
    numbers: frozenset[str] = frozenset()
    """``value|unit`` strings (unit '' when none)."""
    years: frozenset[str] = frozenset()
    dates: frozenset[str] = frozenset()
    names: frozenset[str] = frozenset()
    hedged: bool = False
    negations: int = 0
    direction: frozenset[str] = field(default_factory=frozenset)
    """``up`` and/or ``down``."""

    def facts(self, kind: str) -> frozenset[str]:
        return getattr(self, kind)


def _norm_value(raw: str) -> str:
    raw = raw.lower()
    if raw in _WORD_NUMBERS:
        return _WORD_NUMBERS[raw]
    n = raw.replace(",", "")
    if "." in n:
        n = n.rstrip("0").rstrip(".")
    return n


def _unit(m: re.Match) -> str:
    tail = (m.group("tail") or "").strip().lower()
    if tail.startswith("%") or tail.startswith("per"):
        unit = "percent" if not tail.startswith("percentage") else "pp"
        if tail.startswith("percentage"):
            unit = "pp"
        return unit
    if tail.startswith("°"):
        return _UNITS.get(tail.replace(" ", ""), "deg")
    parts = [w for w in (m.group("w1"), m.group("w2")) if w]
    unit = ""
    if parts:
        first = parts[0].lower()
        single = first[:-1] if first.endswith("s") and first[:-1] in _UNITS else first
        if single in _SCALES:
            unit = _SCALES[single]
            if len(parts) > 1:
                second = parts[1].lower().rstrip("s")
                if second in _UNITS and _UNITS[second]:
                    unit += " " + _UNITS[second]
        elif single in _UNITS:
            unit = _UNITS[single]
        elif first == "percentage" and len(parts) > 1 and parts[1].lower().startswith("point"):
            unit = "pp"
    cur = _CURRENCY.get(m.group("cur") or "")
    return f"{cur} {unit}".strip() if cur else unit


@functools.lru_cache(maxsize=8192)  # the same reply comes back night after night
def extract(text: str, known: frozenset[str] = frozenset()) -> tuple[frozenset[str], frozenset[str],
                                                                     frozenset[str], frozenset[str]]:
    """(numbers, years, dates, names) of a text (a claim, or a whole reply)."""
    numbers: set[str] = set()
    years: set[str] = set()
    dates: set[str] = set()
    taken: list[tuple[int, int]] = []
    for m in _ISO_DATE.finditer(text):
        dates.add(f"{m.group(2)}-{m.group(3)}")
        years.add(m.group(1))
        taken.append(m.span())
    for m in _DATE.finditer(text):
        month = (m.group(1) or m.group(4)).lower()
        day = str(int(m.group(2) or m.group(3)))
        dates.add(f"{_MONTHS.index(month) + 1:02d}-{int(day):02d}")
        taken.append(m.span())
    for m in _NUMBER.finditer(text):
        start = m.start("n")
        if any(a <= start < b for a, b in taken):
            continue
        value = _norm_value(m.group("n"))
        unit = _unit(m)
        # a year is written without a thousands separator: "2,100 adults" is a number
        if (not unit and re.fullmatch(r"1[89]\d\d|20\d\d|2100", value) and not m.group("cur")
                and "," not in m.group("n") and "." not in m.group("n")):
            years.add(value)
            continue
        numbers.add(f"{value}|{unit}")
    return frozenset(numbers), frozenset(years), frozenset(dates), _names(text, known)


#: A capital after a colon or a dash starts a sentence of its own ("The document says: Put simply, ...").
_LEAD = re.compile(r"(?<=\w)\s*[:–—]\s+(?=[A-Z])")


#: A weekday or month written mid-sentence ("voted on Tuesday", "in March"): ``claims.names`` leaves
#: them out (they start headings), but a day or month is as much a fact of the claim as a name: a
#: swap "on Tuesday" -> "on City" (a bad entity linker) must pair the two.
_CALENDAR = re.compile(r"(?<=[\w,;)’'\"] )(Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|January|February|"
                       r"March|April|May|June|July|August|September|October|November|December)\b")


def _names(text: str, known: frozenset[str] = frozenset()) -> frozenset[str]:
    """``claims.names`` with a clause after a colon read as a sentence of its own: its first word
    is sentence-initial (a paraphrase's lead-in "Put simply," is no name); and the weekdays and
    months written mid-sentence (``_CALENDAR``)."""
    text = _LEAD.sub(".\n", text or "")
    return frozenset(claim_names(text, set(known))) | {m.group(1).lower() for m in _CALENDAR.finditer(text)}


def stems(text: str) -> frozenset[str]:
    return frozenset(w.lower()[:5] for w in _WORD.findall(text) if len(w) >= 3 and w.lower() not in _STOP)


def direction(text: str) -> frozenset[str]:
    out = set()
    if _UP.search(text):
        out.add("up")
    if _DOWN.search(text):
        out.add("down")
    return frozenset(out)


def hedged(text: str) -> bool:
    return bool(_HEDGES.search(text) or _NUMBER_HEDGES.search(text))


def claim(text: str, known: frozenset[str] = frozenset()) -> Claim:
    numbers, years, dates, found = extract(text, known)
    nots, nos = negations(text)
    return Claim(text=text, stems=stems(text), numbers=numbers, years=years, dates=dates, names=found,
                 hedged=hedged(text), negations=nots + nos, direction=direction(text))


@functools.lru_cache(maxsize=4096)
def reply_claims(text: str, known: frozenset[str] = frozenset()) -> tuple[Claim, ...]:
    """The claims of a turn's reply text, with their facts."""
    return tuple(claim(s, known) for s in claim_sentences(text or ""))


def capitalised(text: str) -> frozenset[str]:
    """Every capitalised word of a text, in any position, lower-cased: a name tonight is "new"
    only when no accepted night wrote that word capitalised anywhere."""
    return frozenset(w.lower() for w in _WORD.findall(text or "") if w[:1].isupper())


@functools.lru_cache(maxsize=4096)
def mid_sentence_names(text: str) -> frozenset[str]:
    """Names the text writes mid-sentence (known names for the sentence-initial ones)."""
    return _names(text)


def _dice(a: frozenset[str], b: frozenset[str]) -> float:
    return 2 * len(a & b) / (len(a) + len(b)) if (a or b) else 0.0


def score(a: Claim, b: Claim) -> float:
    """How alike two claims are: shared content stems, and shared facts when either has any."""
    fa = frozenset().union(*(a.facts(k) for k in FACT_KINDS))
    fb = frozenset().union(*(b.facts(k) for k in FACT_KINDS))
    words = _dice(a.stems, b.stems)
    if not (fa or fb):
        return words
    return 0.65 * words + 0.35 * _dice(fa, fb)


def align(left: Sequence[Claim], right: Sequence[Claim], minimum: float = ALIGN_MIN) -> dict[int, int]:
    """One-to-one pairs ``{left index: right index}``, best-scoring first, each at least ``minimum``."""
    # A claim in the same place gets a small bonus: a paraphrase keeps the order more often than not.
    pairs = sorted(((score(a, b) + (POSITION_BONUS if i == j else 0.0), i, j)
                    for i, a in enumerate(left) for j, b in enumerate(right)),
                   key=lambda p: (-p[0], p[1], p[2]))
    out: dict[int, int] = {}
    used: set[int] = set()
    for s, i, j in pairs:
        if s < minimum:
            break
        if i in out or j in used:
            continue
        out[i] = j
        used.add(j)
    return out


def show_number(fact: str) -> str:
    value, _, unit = fact.partition("|")
    return f"{value} {unit}".strip()
