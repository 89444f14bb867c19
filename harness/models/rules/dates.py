"""Dates and years: a day and month, or a month and year, must occur together in the source.

Also the year readings numbers.py uses: a year told as an amount ("2025 percent") or an amount
told as a year ("in 11"), and the year an aligned sentence gives where the claim gives another.
"""

from __future__ import annotations

import re

from harness.models import claims as C
from harness.models.rules.pair import rule, SourceIndex, Twin
from harness.models.rules.text import C_clip, context, Finding, _flat, _num_kind, NumberUse, _overlap, Tok


_MONTH_RE = "|".join(C._MONTHS)


_DATE = re.compile(rf"(?:\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?)?\b({_MONTH_RE})\b(?:\s+(\d{{1,2}})(?!\d)(?:st|nd|rd|th)?,?)?"
                   rf"(?:\s+(?:of\s+)?(\d{{4}}))?", re.I)


_ORDINAL_DAYS = {"first": "1", "second": "2", "third": "3", "fourth": "4", "fifth": "5", "tenth": "10",
                 "fifteenth": "15", "twentieth": "20"}


def _dates(text: str) -> list[tuple[str | None, str, str | None]]:
    out = []
    for m in _DATE.finditer(text):
        day = m.group(1) or m.group(3)
        out.append((day, m.group(2).lower(), m.group(4)))
    for m in re.finditer(rf"\b(first|second|third|fourth|fifth|tenth|fifteenth|twentieth) of ({_MONTH_RE})\b",
                         text, re.I):
        out.append((_ORDINAL_DAYS[m.group(1).lower()], m.group(2).lower(), None))
    return out


def source_dates(src: SourceIndex) -> list[tuple[str | None, str, str | None]]:
    """Every date the source writes (day, month, year), read once per source."""
    return src.memo("dates", lambda s: _dates("\n".join(s.sentences)))


@rule("date-together", lambda p: (p.claim, p.index))
def check_dates(claim: str, src: SourceIndex) -> list[Finding]:
    """A date the claim gives must occur whole in the source: its day with its month, its month
    with its year ("1 March 2027" where the source says "1 March 2026" and "31 March 2027");
    "March 2022" is not held by a source that says "March" alone."""
    found = []
    for day, month, year in _dates(claim):
        ok = False
        for sd, sm, sy in source_dates(src):
            if sm != month:
                continue
            if day and sd != day:
                continue
            if year and sy and sy != year:
                continue
            if year and not sy and not day:
                continue  # "March" alone in the source does not say "March 2022"
            ok = True
            break
        if not ok:
            shown = " ".join(x for x in (day, month.capitalize(), year) if x)
            found.append(Finding("date", f"the date {shown!r} does not occur in the source"))
    return found


_YEAR_LEAD = {"in", "since", "until", "during"} | set(C._MONTHS)


def _as_year(toks: list[Tok], i: int) -> bool:
    """The number at token i stands where a year stands: after "in/since/by/..." or a month,
    and not followed by a word it counts ("in 2025," vs "in 11 districts")."""
    before = toks[i - 1].low if i > 0 else ""
    after = toks[i + 1] if i + 1 < len(toks) else None
    return before in _YEAR_LEAD and (after is None or (after.kind == "punct" and after.text in ",.;:!?"))


def _year_clash(u: NumberUse, claim_toks: list[Tok], occ: list[tuple[int, NumberUse]], src: "SourceIndex") -> str:
    """A year told as an amount ("2025 percent") or an amount told as a year ("in 11"): the source
    uses the number only the other way."""
    year_shaped = _num_kind(u.value) == "year"
    here = _as_year(claim_toks, u.index)
    there = [_as_year(src.toks[k], su.index) or (_num_kind(su.value) == "year" and not su.unit) for k, su in occ]
    if year_shaped and (u.unit == "percent" or u.scale) and not here and all(there):
        return f"{u.value} as an amount where the source's {u.value} is a year"
    if not year_shaped and here and not any(there):
        return f"{u.value} as a year where the source's {u.value} is an amount"
    return ""


def _other_year(u: NumberUse, claim_toks: list[Tok], src: "SourceIndex", aligned: list[int]) -> str:
    """The year an aligned sentence gives where the claim gives ``u``, said of the same things."""
    ctx = _flat(context(claim_toks, u.index, width=4))
    for k in aligned:
        for su in src.uses[k]:
            if _num_kind(su.value) == "year" and su.value != u.value \
                    and _overlap(ctx, _flat(context(src.toks[k], su.index, width=4))) >= 0.8:
                return f"{u.value} where the source says {su.value}: \"{C_clip(src.sentences[k])}\""
    return ""


#: Wrong claims this module's rules must flag, each with the right twin they must pass.
TWINS = (
    Twin("date-together", "The policy takes effect on 1 March 2026 and will be reviewed by 31 March 2027.",
         wrong="It takes effect on 1 March 2027.", right="It takes effect on 1 March 2026.",
         note="the day kept, the year of another date"),
    Twin("date-together", "The policy takes effect on 1 March 2026 and will be reviewed by 31 March 2027.",
         wrong="The policy takes effect on 31 March 2026.", right="The policy takes effect on 1 March 2026.",
         note="the day of another date"),
)
