"""Units: the same number in another unit of its kind ("52 hours" for "52 minutes") is another amount;
percent against an absolute amount, million against billion (numbers.py asks ``_unit_clash``).
"""

from __future__ import annotations

from harness.models.rules.pair import rule, SourceIndex, Twin
from harness.models.rules.text import Finding, number_uses, NumberUse, Tok


#: Units of one kind: a number told in another unit of its kind says another amount.
_UNIT_FAMILIES = [frozenset(g.split()) for g in (
    "second seconds sec secs minute minutes min mins hour hours hr hrs day days week weeks month months year years",
    "nanogram nanograms ng microgram micrograms milligram milligrams mg gram grams kilogram kilograms kg tonne "
    "tonnes ton tons",
    "millimetre millimetres millimeter millimeters mm centimetre centimetres centimeter centimeters cm metre metres "
    "meter meters kilometre kilometres kilometer kilometers km mile miles",
    "euro euros dollar dollars pound pounds",
    "watt watts kilowatt kilowatts megawatt megawatts gigawatt gigawatts",
    "millilitre millilitres litre litres liter liters cubic gallon gallons",
)]


_UNIT_BASE = {"secs": "second", "sec": "second", "mins": "minute", "min": "minute", "hr": "hour", "hrs": "hour",
              "ng": "nanogram", "mg": "milligram", "kg": "kilogram", "mm": "millimetre", "cm": "centimetre",
              "km": "kilometre", "ton": "tonne", "meter": "metre", "liter": "litre"}


def _unit_word(toks: list[Tok], u: NumberUse) -> str:
    """The unit word said right after a number (past its scale word): 'minutes', 'kg'."""
    j = u.index + 1 + (1 if u.scale else 0)
    if j < len(toks) and toks[j].kind == "word":
        w = toks[j].low.strip("'’")  # "four weeks' notice"
        w = _UNIT_BASE.get(w, w)
        w = _UNIT_BASE.get(w.rstrip("s"), w.rstrip("s")) if w not in ("hours", "days") else w[:-1]
        return w
    return ""


def _family(word: str) -> int:
    for k, fam in enumerate(_UNIT_FAMILIES):
        if word in fam or word + "s" in fam:
            return k
    return -1


@rule("unit-of-kind", lambda p: (p.toks, p.index))
def check_unit_words(claim_toks: list[Tok], src: SourceIndex) -> list[Finding]:
    """"52 hours" where every place the source says 52 says "52 minutes": the same number in
    another unit of the same kind (time, mass, length, money, power, volume) is another amount."""
    for u in number_uses(claim_toks):
        mine = _unit_word(claim_toks, u)
        fam = _family(mine) if mine else -1
        if fam < 0:
            continue
        theirs = {_unit_word(src.toks[k], su) for k, su in src.occurrences(u.value)}
        same_kind = {w for w in theirs if _family(w) == fam}
        if same_kind and mine not in same_kind and not (theirs - same_kind - {""}) and "" not in theirs:
            return [Finding("number", f"{u.value} {mine}s where the source says {u.value} "
                                      f"{sorted(same_kind)[0]}s")]
    return []


def _unit_clash(claim_use: NumberUse, src_uses: list[NumberUse]) -> str:
    same = [u for u in src_uses if u.value == claim_use.value]
    if not same:
        return ""
    if claim_use.scale and all(u.scale != claim_use.scale for u in same) and any(u.scale or u.unit for u in same):
        return (f"{claim_use.value} {claim_use.scale} where the source says "
                f"{claim_use.value} {same[0].scale or same[0].unit or '(no scale)'}")
    if claim_use.unit == "percent" and all(u.unit == "absolute" for u in same):
        return f"{claim_use.value} percent where the source's {claim_use.value} is an absolute amount"
    if claim_use.unit == "absolute" and all(u.unit == "percent" for u in same):
        return f"{claim_use.value} as an absolute amount where the source says {claim_use.value} percent"
    return ""


_POLLEN = "Foraging trips lasted 52 minutes on average. Pollen held 5 nanograms per gram of the compound."
_PUMP = "The pump moves 310 cubic metres of water per hour. Timetables change with four weeks' notice."

#: Wrong claims this module's rules must flag, each with the right twin they must pass.
TWINS = (
    Twin("unit-of-kind", _POLLEN, wrong="Trips lasted 52 hours.", right="Trips lasted 52 minutes."),
    Twin("unit-of-kind", _POLLEN, wrong="Pollen held 5 micrograms per gram.", right="Pollen held 5 nanograms per gram."),
    Twin("unit-of-kind", _PUMP, wrong="The pump moves 310 litres of water per hour.",
         right="The pump moves 310 cubic metres of water per hour."),
    Twin("unit-of-kind", _PUMP, wrong="Timetables change with four days' notice.",
         right="Timetables change with four weeks' notice."),
)
