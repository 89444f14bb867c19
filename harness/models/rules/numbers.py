"""Numbers bound to what they count.

Every number of the claim is looked up where the source says it, with the words around it
(side-aware context windows): a number whose every occurrence in the source is about something
else was moved from another finding; two numbers whose contexts cross were swapped; a number in
another scale or told as percent where the source gives an amount was rescaled; the whole of
"two of its eleven factories" said as the part. Roundings ("about 4" for 4.2) and totals of two
amounts one sentence gives side by side are the source's numbers too.
"""

from __future__ import annotations

from harness.models.rules.dates import _other_year, _year_clash
from harness.models.rules.pair import rule, SourceIndex, Twin
from harness.models.rules.text import (
    _APPROX, C_clip, _CLAUSE_WORDS, context, Finding, _flat, _num_kind, number_uses, NumberUse, _overlap, _swapped,
    Tok,
)
from harness.models.rules.units import _unit_clash


def approximate_values(toks: list[Tok]) -> set[str]:
    """Numbers the claim gives as approximate ("about 4 degrees", "more than 300 homes")."""
    return {t.value for i, t in enumerate(toks) if t.kind == "num" and i > 0 and toks[i - 1].low in _APPROX}


def rounds_to(claim_value: str, source_value: str) -> bool:
    """True when the claim's number is the source's number rounded (4.2 -> 4, 14,500 -> 15,000,
    310 -> 300): a coarser figure within 10 percent, never a finer or a different one."""
    try:
        c, v = float(claim_value), float(source_value)
    except ValueError:
        return False
    if c == v or v == 0 or abs(c - v) / abs(v) > 0.1:
        return False
    for step in (0.1, 0.5, 1, 5, 10, 50, 100, 500, 1000, 5000, 10000, 50000, 100000, 500000, 1000000):
        if step < abs(v) and abs(round(v / step) * step - c) < 1e-9:
            return True
    return False


def rounded_in(value: str, src: "SourceIndex", sentences: list[int]) -> bool:
    """The value is a rounding of a number of one of these source sentences."""
    return any(rounds_to(value, u.value) for k in sentences for u in src.uses[k])


def _clause_mates(toks: list[Tok], u: NumberUse, uses: list[NumberUse]) -> set[str]:
    """The other numbers of u's clause (clauses end at , ; : and but/while/..., and at "and"
    before a number): "91 percent of its capacity after 2,000 cycles" binds 91 and 2,000."""
    ids, c = [], 0
    for i, t in enumerate(toks):
        if (t.kind == "punct" and t.text in ",;:") or t.low in _CLAUSE_WORDS \
                or (t.low == "and" and i + 1 < len(toks) and toks[i + 1].kind == "num"):
            c += 1
        ids.append(c)
    return {x.value for x in uses if x.index != u.index and ids[x.index] == ids[u.index] and x.value != u.value}


def _whole_of_fraction(u: NumberUse, occ: list[tuple[int, NumberUse]], src: "SourceIndex", values: set[str]) -> str:
    """The source says the number only as the whole of "N of M" ("two of its eleven
    factories") and the claim says M without N: it counts the whole as the part."""
    parts = []
    for k, su in occ:
        toks = src.toks[k]
        part = next((toks[i] for i in range(max(0, su.index - 3), su.index)
                     if toks[i].kind == "num" and _fraction_pair(toks, i, su.index)), None)
        if part is None:
            return ""
        parts.append((k, part.value))
    if parts and all(p not in values for _, p in parts):
        k, p = parts[0]
        return f"the claim says {u.value} where the source says {p} of {u.value}: \"{C_clip(src.sentences[k])}\""
    return ""


def sums_to(value: str, src: "SourceIndex", sentences: list[int]) -> bool:
    """The value is the total of two amounts one source sentence gives side by side ("twelve
    restored marshes and six natural marshes" -> 18 marshes)."""
    try:
        v = float(value)
    except ValueError:
        return False
    for k in sentences:
        amounts = [u for u in src.uses[k] if u.unit != "percent" and _num_kind(u.value) == "amount"]
        for x in range(len(amounts)):
            for y in range(x + 1, len(amounts)):
                if abs(float(amounts[x].value) + float(amounts[y].value) - v) < 1e-9:
                    return True
    return False


def _fraction_pair(toks: list[Tok], a: int, b: int) -> bool:
    """Tokens a and b are the two numbers of "a of (the|its|their) b" ("nine of the twelve
    schools", "two of its eleven factories"): both count the same thing."""
    lo, hi = min(a, b), max(a, b)
    between = [t.low for t in toks[lo + 1:hi]]
    return 1 <= len(between) <= 2 and between[0] == "of" and all(w in ("of", "the", "its", "their", "our", "his",
                                                                     "her", "all", "these", "those")
                                                                 for w in between)


@rule("number-bound", lambda p: (p.toks, p.index, p.aligned))
def check_numbers(claim_toks: list[Tok], src: SourceIndex, aligned: list[int]) -> list[Finding]:
    """Numbers against where the source says them: moved, rescaled, or swapped."""
    found: list[Finding] = []
    uses = number_uses(claim_toks)
    bound: dict[int, tuple[int, NumberUse]] = {}
    values = {u.value for u in uses}
    # a sentence holding two of the claim's numbers is where the claim comes from, aligned or not
    holds = [k for k, su in enumerate(src.uses) if len(values & {x.value for x in su}) >= 2]
    approx = approximate_values(claim_toks)
    for u in uses:
        occ = src.occurrences(u.value)
        if not occ:
            # a year no sentence of the source says (only a reference or a heading has it): the year
            # the aligned sentence gives the same thing ("a 2019 survey" / "In a 2021 survey")
            other = _other_year(u, claim_toks, src, aligned[:2]) if _num_kind(u.value) == "year" else ""
            if other:
                found.append(Finding("date", other))
            continue  # a number the source lacks: the caller reports it
        if u.value in approx and rounded_in(u.value, src, aligned[:3]):
            continue  # "about 4 degrees" where the aligned sentence says 4.2 degrees
        ctx = _flat(context(claim_toks, u.index, width=6))
        best, best_score = None, -1.0
        for k, su in occ:
            score = _overlap(ctx, _flat(context(src.toks[k], su.index, width=6)))
            if k in aligned[:3]:
                score += 0.25
            if score > best_score:
                best, best_score = (k, su), score
        assert best is not None
        if best_score < 0.3 and best[0] not in aligned[:2] and best[0] not in holds and ctx:
            found.append(Finding("number", f"number {u.value} occurs in the source, but not with what the claim "
                                           f"says it counts (there: \"{C_clip(src.sentences[best[0]])}\")"))
            continue
        whole = _whole_of_fraction(u, occ, src, values)
        if whole:
            found.append(Finding("number", whole))
            continue
        mates = _clause_mates(claim_toks, u, uses)
        moved = _rebound(u, claim_toks, src, aligned[:2], occ, mates)
        if moved:
            found.append(Finding("number", moved))
            continue
        # the unit where the source says the number of the same things ("1 percent by weight of aluminium
        # phosphate" for "1 kilogram of aluminium phosphate"), or where it says it at all
        clash = (_unit_clash(u, [best[1]]) if best_score >= 1.0 else "") or _unit_clash(u, [su for _, su in occ]) \
            or _year_clash(u, claim_toks, occ, src)
        if clash:
            found.append(Finding("number", clash))
            continue
        bound[u.index] = best
    found += _crossings(claim_toks, src, bound)
    return found


def _rebound(u: NumberUse, claim_toks: list[Tok], src: SourceIndex, aligned: list[int],
             occ: list[tuple[int, NumberUse]], others: set[str] = frozenset()) -> str:
    """The aligned sentence says another number where the claim puts this one: what the
    claim's number is bound to (its side-aware context) fits that other number clearly
    better than any place the source uses the claim's own number. The claim's other numbers
    bind too: a source sentence that holds the claim's number together with another number
    of the claim is where the claim comes from ("91 percent ... after 2,000 cycles"); and in
    "nine of the twelve schools" both numbers count schools, so neither replaces the other."""
    ctx = context(claim_toks, u.index)
    if not ctx:
        return ""

    def company(k: int) -> float:  # the sentence also holds another number of the claim's clause
        return 1.0 if others & {x.value for x in src.uses[k]} else 0.0

    own = max((_overlap(ctx, context(src.toks[k], su.index)) + company(k) for k, su in occ), default=0.0)
    claim_uses = number_uses(claim_toks)
    best_alt, alt_at = 0.0, None
    for k in aligned:
        own_here = [x.index for x in src.uses[k] if x.value == u.value]
        for su in src.uses[k]:
            if su.value == u.value or (u.unit and su.unit and u.unit != su.unit and "?" not in su.unit + u.unit):
                continue
            if any(i < su.index and _fraction_pair(src.toks[k], i, su.index) for i in own_here):
                continue  # the claim's number is the part in "two of its eleven factories"
            if _num_kind(su.value) != _num_kind(u.value):
                continue  # a clock time is not a count, a year not an amount
            score = _overlap(ctx, context(src.toks[k], su.index)) + company(k)
            theirs = context(src.toks[k], su.index)
            if any(_overlap(_flat(context(claim_toks, x.index)), _flat(theirs)) >= _overlap(ctx, theirs)
                   for x in claim_uses if x.value == su.value and x.index != u.index):
                continue  # the claim says that number too, where it belongs: reordered, not replaced
            if score > best_alt:
                best_alt, alt_at = score, (k, su)
    if alt_at and best_alt >= 0.8 and best_alt >= own + 0.5:
        k, su = alt_at
        return (f"the claim says {u.value} where the source says {su.value}: \"{C_clip(src.sentences[k])}\"")
    return ""


def _crossings(claim_toks: list[Tok], src: SourceIndex, bound: dict[int, tuple[int, NumberUse]]) -> list[Finding]:
    """Two numbers of one source sentence whose contexts are crossed in the claim: swapped."""
    by_sentence: dict[int, list[tuple[int, NumberUse]]] = {}
    for ci, (k, su) in bound.items():
        by_sentence.setdefault(k, []).append((ci, su))
    found = []
    for k, pairs in by_sentence.items():
        values = {su.value for _, su in pairs}
        if len(values) < 2:
            continue
        for x in range(len(pairs)):
            for y in range(x + 1, len(pairs)):
                (ca, sa), (cb, sb) = pairs[x], pairs[y]
                if sa.value == sb.value:
                    continue
                if _swapped(context(claim_toks, ca), context(claim_toks, cb),
                            context(src.toks[k], sa.index), context(src.toks[k], sb.index)):
                    found.append(Finding("number", f"numbers {sa.value} and {sb.value} are swapped: the source "
                                                   f"says \"{C_clip(src.sentences[k])}\""))
    return found


_FERRY_REPORT = ("Island Ferries 2025\nA yearly report.\nEach hull was coated with 1 percent by weight of zinc "
                 "phosphate using a spray process. The fleet had 1 spare engine.")

#: Wrong claims this module's rules must flag, each with the right twin they must pass.
TWINS = (
    Twin("number-bound", "In a 2021 survey of the islands, only 23 percent of crews said they slept eight hours.\n"
                         "Berg, A. (2019). Ferry crews.",
         wrong="In a 2019 survey of the islands, only 23 percent of crews slept eight hours.",
         right="In a 2021 survey of the islands, only 23 percent of crews slept eight hours.", aligned=(0,),
         note="a year only a reference has is not the sentence's year"),
    Twin("number-bound", _FERRY_REPORT,
         wrong="Each hull received a coating of 1 kilogram of zinc phosphate, applied by a spray process.",
         right="Each hull received a coating of 1 percent by weight of zinc phosphate, applied by a spray process.",
         aligned=(2,), note="a unit read where the number is said of the same things"),
    Twin("number-bound", "Treatment completion was 87 percent in the reminder group and 71 percent in the usual "
                         "care group.",
         wrong="Treatment completion was 71 percent in the reminder group and 87 percent in the usual care group.",
         right="Treatment completion was 87 percent in the reminder group and 71 percent in the usual care group.",
         note="two numbers swapped"),
    Twin("number-bound", "Managers must respond within 10 working days. An employee whose request is refused may "
                         "appeal within 15 working days.",
         wrong="Managers must respond within 15 working days.", right="Managers must respond within 10 working days.",
         note="a number moved from another sentence"),
)
