"""``baseline.facts``: tonight's claims against the claims every accepted night made.

Tonight's claims are aligned one to one with the turn's invariant claims (``facts.align``).
For each kind of discrete fact (numbers with units, years, dates, names) a held fact that
tonight's turn no longer says anywhere is *missing*, and a fact of tonight's claim that no
accepted night said anywhere in the turn is *new*. A missing fact and a new one of the same
kind on the same aligned claim (or, for claims that found no partner, in the same turn) are
one **contradiction**: another number (or the same number with another unit) in its place,
another year, date or name. On an aligned pair also: the hedge removed (every night hedged,
tonight does not), negation flipped (another count of cues), the direction reversed (up on
every night, down tonight, or the reverse). Contradictions fail; a fact only missing
(dropped) or only new is soft; nothing changed passes.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.checks.baseline import facts as F
from harness.checks.baseline.learn import ClaimInvariant, TurnInvariants

#: Scores of the three outcomes (soft sits in the soft band: harness/soft.py).
PASS, SOFT, FAIL = 1.0, 0.65, 0.0
KIND_OF = {"numbers": "number", "years": "year", "dates": "date", "names": "name"}


@dataclass(frozen=True)
class Change:
    """One fact that differs from the accepted nights."""

    kind: str
    """number | unit | year | date | name | hedge | negation | direction | caveat (a hedged or
    negated claim every night made, gone tonight)."""
    change: str
    """contradicted (fails) | dropped | new (soft)."""
    expected: str
    observed: str
    claim_expected: str = ""
    claim_observed: str = ""

    def as_dict(self, turn: int) -> dict:
        return {"turn": turn, "kind": self.kind, "change": self.change, "expected": self.expected,
                "observed": self.observed, "claim_expected": self.claim_expected,
                "claim_observed": self.claim_observed}


def _show(kind: str, fact: str) -> str:
    return F.show_number(fact) if kind == "numbers" else fact


def _pair(kind: str, missing: list[str], new: list[str], a: str, b: str) -> list[Change]:
    """Missing and new facts of one kind: paired into contradictions, the rest dropped / new."""
    out = []
    missing, new = sorted(missing), sorted(new)
    if kind == "numbers":  # the same value with another unit pairs first: a unit renamed
        for m in list(missing):
            value, _, unit = m.partition("|")
            twin = next((n for n in new if n.partition("|")[0] == value), None)
            if twin is not None:
                out.append(Change("unit", "contradicted", F.show_number(m), F.show_number(twin), a, b))
                missing.remove(m)
                new.remove(twin)
    while missing and new:
        m, n = missing.pop(0), new.pop(0)
        out.append(Change(KIND_OF[kind], "contradicted", _show(kind, m), _show(kind, n), a, b))
    out += [Change(KIND_OF[kind], "dropped", _show(kind, m), "", a, b) for m in missing]
    out += [Change(KIND_OF[kind], "new", "", _show(kind, n), a, b) for n in new]
    return out


def compare_turn(turn: TurnInvariants, text: str) -> list[Change]:
    """Every fact of tonight's ``text`` that differs from what the turn's accepted nights held."""
    if turn.claims is None:
        return []
    known = turn.known | F.mid_sentence_names(text)
    tonight = F.reply_claims(text, known)
    whole = dict(zip(F.FACT_KINDS, F.extract(text, known)))
    caps = F.capitalised(text)
    invariants = list(turn.claims)
    pairs = F.align([c.anchor for c in invariants], tonight)
    changes: list[Change] = []

    def present(kind: str, fact: str) -> bool:  # said anywhere in tonight's turn
        return fact in whole[kind] or (kind == "names" and fact in caps)

    def is_new(kind: str, fact: str) -> bool:
        return fact not in turn.turn_seen.get(kind, frozenset()) and not (kind == "names" and fact in turn.capitalised)

    loose_missing: dict[str, list[str]] = {k: [] for k in F.FACT_KINDS}
    for i, inv in enumerate(invariants):
        j = pairs.get(i)
        if j is None:
            for kind in F.FACT_KINDS:
                loose_missing[kind] += [f for f in inv.held[kind] if not present(kind, f)]
            if inv.hedged or inv.negations:  # a caveat every night made ("may not generalise") is gone
                changes.append(Change("caveat", "dropped", inv.anchor.text, "", inv.anchor.text, ""))
            continue
        mine = tonight[j]
        a, b = inv.anchor.text, mine.text
        for kind in F.FACT_KINDS:
            # Held but not in this claim, and new in this claim: the one took the other's place, even
            # when the old fact is still said elsewhere in the turn. Held and said nowhere: dropped.
            # A fact this claim never had on any night is new *to the claim* (a swap may bring in a
            # name or number the turn says elsewhere); only one no night said anywhere is soft-new.
            missing = [f for f in inv.held[kind] if f not in mine.facts(kind)]
            new = [f for f in mine.facts(kind) if f not in inv.seen[kind]]
            paired = _pair(kind, missing, new, a, b)
            changes += [c for c in paired if c.change == "contradicted"
                        or (c.change == "dropped" and not present(kind, _raw(kind, c.expected, missing)))
                        or (c.change == "new" and is_new(kind, _raw(kind, c.observed, new)))]
        changes += _modality(inv, mine)
    paired = set(pairs.values())
    loose_new: dict[str, list[str]] = {k: [] for k in F.FACT_KINDS}
    for j, c in enumerate(tonight):
        if j in paired:
            continue
        for kind in F.FACT_KINDS:
            loose_new[kind] += [f for f in c.facts(kind) if is_new(kind, f) and f not in loose_new[kind]]
    held_anywhere = {k: [f for f in turn.turn_held.get(k, ()) if not present(k, f)] for k in F.FACT_KINDS}
    for kind in F.FACT_KINDS:
        missing = sorted(set(loose_missing[kind]) | set(held_anywhere[kind]))
        already = {c.expected for c in changes if c.kind in (KIND_OF[kind], "unit")}
        missing = [m for m in missing if _show(kind, m) not in already]
        changes += _pair(kind, missing, loose_new[kind], "", "")
    return changes


def _raw(kind: str, shown: str, facts: list[str]) -> str:
    """The fact string behind a shown one (numbers are shown without their ``|``)."""
    return next((f for f in facts if _show(kind, f) == shown), shown)


def _modality(inv: ClaimInvariant, mine: F.Claim) -> list[Change]:
    a, b = inv.anchor.text, mine.text
    out = []
    if inv.hedged and not mine.hedged:
        out.append(Change("hedge", "contradicted", "hedged on every night", "stated without a hedge", a, b))
    if inv.negations is not None and mine.negations != inv.negations:
        out.append(Change("negation", "contradicted", f"{inv.negations} negation cue(s)",
                          f"{mine.negations} negation cue(s)", a, b))
    if inv.direction is not None and mine.direction and inv.direction.isdisjoint(mine.direction):
        out.append(Change("direction", "contradicted", "/".join(sorted(inv.direction)),
                          "/".join(sorted(mine.direction)), a, b))
    return out


def verdict(changes: list[Change]) -> tuple[bool | None, float]:
    """(passed, score): a contradiction fails, a dropped or new fact is soft, nothing passes."""
    if any(c.change == "contradicted" for c in changes):
        return False, FAIL
    if changes:
        return None, SOFT
    return True, PASS


def describe(changes: list[Change], limit: int = 4) -> str:
    parts = []
    for c in changes[:limit]:
        if c.change == "contradicted" and c.kind in ("hedge", "negation", "direction"):
            parts.append(f"{c.kind}: {c.expected} -> {c.observed} in {c.claim_observed[:160]!r} "
                         f"(accepted: {c.claim_expected[:160]!r})")
        elif c.change == "contradicted":
            parts.append(f"{c.kind} {c.expected!r} -> {c.observed!r}")
        elif c.change == "dropped" and c.kind == "caveat":
            parts.append(f"caveat dropped: {c.expected[:160]!r}")
        elif c.change == "dropped":
            parts.append(f"{c.kind} {c.expected!r} dropped")
        else:
            parts.append(f"new {c.kind} {c.observed!r}")
    more = f" (+{len(changes) - limit} more)" if len(changes) > limit else ""
    return "; ".join(parts) + more
