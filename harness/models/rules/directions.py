"""Directions said of a thing: a number's direction word ("23 percent fewer" told as "23 percent
more"), and a direction word said of the same thing as an opposite word of the source
("attendance went down" where the source says "attendance rose").
"""

from __future__ import annotations

import functools
import re

from harness.models import claims as C
from harness.models.rules.antonyms import ANTONYMS, _POLAR_WORDS
from harness.models.rules.pair import rule, SourceIndex, Twin
from harness.models.rules.text import (
    C_clip, _CLAUSE_WORDS, clauses, _COMPARATIVE_Q, _content, context, Finding, _flat, lemma, _LIGHT, _LIGHT_STEMS,
    _NEG_CUES, _num_kind, number_uses, _overlap, _PERCENT, _quantity, _RELATIONAL, stem, _STOP, Tok, tokenize,
    _words,
)


#: Direction words that take what follows them as their own ("later school start"): an anchor
#: scan stops there. Nouns of the pairs ("profit", "success") do not steer.
_STEERING = ANTONYMS[0][0] | ANTONYMS[0][1] | frozenset(
    "earlier early later late warmer cooler hotter colder faster slower quicker cheaper dearer better worse".split())


def _directions_near(toks: list[Tok], i: int, reach: int = 2) -> set[str]:
    """Direction words said of the number at token i: up to ``reach`` content words on each side,
    within its clause and before any other number ("kept 91 percent", "44 percent fewer",
    "a reduction of 44 percent"); "more than 40 percent" states a quantity, not a direction."""
    out: set[str] = set()
    for step in (-1, 1):
        j, d = i + step, 0
        while 0 <= j < len(toks) and d < reach:
            t = toks[j]
            if t.kind == "num" or (t.kind == "punct" and t.text in ",;:.!?()") or t.low in _CLAUSE_WORDS \
                    or t.low == "and":
                break
            if t.kind == "word" and t.low not in _STOP and t.low not in _RELATIONAL - {"up", "down", "over", "under",
                                                                                      "above", "below"}:
                d += 1
                if t.low in _POLAR_WORDS and not (t.low in _COMPARATIVE_Q and _quantity(toks, j)):
                    out.add(t.low)
            j += step
    return out


@rule("number-direction", lambda p: (p.toks, p.index))
def check_number_direction(claim_toks: list[Tok], src: SourceIndex) -> list[Finding]:
    """A number whose direction the source states: "23 percent fewer trips" told as "23 percent
    more", "kept 91 percent" as "lost 91 percent". Every place the source says the number (in the
    same unit) is read; the claim's direction word is wrong when the source puts only opposite
    words by that number and never one of the claim's side."""
    for u in number_uses(claim_toks):
        if _num_kind(u.value) != "amount":
            continue
        mine_words = _directions_near(claim_toks, u.index)
        if not mine_words:
            continue
        near: set[str] = set()
        ctx = _flat(context(claim_toks, u.index, width=6))
        places = [(k, su) for k, su in src.occurrences(u.value)
                  if not (u.unit and su.unit and u.unit != su.unit and "?" not in u.unit + su.unit)]
        fits = [_overlap(ctx, _flat(context(src.toks[k], su.index, width=6))) for k, su in places]
        for (k, su), fit in zip(places, fits):  # where the source says this number of the same thing
            if fit >= max(fits) - 0.25:
                near |= _directions_near(src.toks[k], su.index)
        if not near:
            continue
        for a, b in ANTONYMS:
            for mine, theirs in ((a, b), (b, a)):
                hit = mine_words & mine
                if hit and (near & theirs) and not (near & mine) and not (mine_words & theirs):
                    return [Finding("polarity", f"{sorted(hit)[0]!r} {u.value} where the source says "
                                                f"{sorted(near & theirs)[0]!r} {u.value}")]
    return []


def _anchors(toks: list[Tok], i: int, reach: int = 2, heading: bool = False) -> set[str]:
    """What a direction word at token i is said of: the nearest ``reach`` content words before it
    (its subject: "attendance went down", "organic sales growth") and after it (its object: "cut
    its forecast", "falling steel prices"), within its clause; light verbs and other direction
    words skipped."""
    out: set[str] = set()
    for rng in (range(i - 1, -1, -1), range(i + 1, len(toks))):
        taken = 0
        for j in rng:
            x = toks[j]
            if (x.kind == "punct" and x.text in ",;:.!?()") or x.low in ("and", "or") or x.low in _CLAUSE_WORDS:
                break  # "colony growth and queen production": growth is not said of queens
            if x.kind == "word" and x.low in _STEERING and j != i and not (x.low in _COMPARATIVE_Q and _quantity(toks, j)):
                break  # "earlier studies of later school starts": what follows "later" is said of "later"
            if x.kind == "word" and _content(x) and x.low not in _RELATIONAL and x.low not in _LIGHT \
                    and x.low not in _POLAR_WORDS and x.low not in _CLAUSE_WORDS and x.low not in _PERCENT:
                if x.text[:1].isupper() and j > 0 and not heading:
                    continue  # a name ("Lumen Foods grew" / "Shares in Lumen Foods fell"): a company does many things
                out.add(lemma(x.low))
                taken += 1
                if taken >= reach:
                    break
    return out  # numbers are no anchor here: check_number_direction reads them, with their units


def _direction_uses(text: str, words: frozenset[str]) -> list[set[str]]:
    return [anchors for _, anchors in _direction_words(text, words)]


@functools.lru_cache(maxsize=1 << 16)
def _direction_words(text: str, words: frozenset[str]) -> tuple[tuple[str, frozenset[str]], ...]:
    """Each direction word of ``words`` in ``text`` with what it is said of (its anchors).
    Cached: check_bound_direction reads every source sentence for each antonym pair and claim."""
    toks = tokenize(text)
    heading = C.is_heading(text)
    out = []
    for i, t in enumerate(toks):
        if t.kind != "word" or t.low not in words or (t.text[:1].isupper() and i > 0 and not heading):
            continue
        if t.low in _COMPARATIVE_Q and _quantity(toks, i):
            continue  # "more than 800 metres": a quantity
        if any(x.low in _NEG_CUES or x.low.endswith(("n't", "n’t")) for x in toks[max(0, i - 3):i]):
            continue  # "did not die": a negated direction is the negation checks' business
        out.append((t.low, frozenset(_anchors(toks, i, heading=heading))))
    return tuple(out)


_PLACE_WORDS = frozenset({"before", "after", "over", "under", "above", "below", "within", "first", "last", "exceeds",
                          "exceeded", "inside", "outside", "indoor", "indoors", "outdoor", "outdoors"})


_SIZE_WORDS = frozenset({"longer", "shorter", "larger", "bigger", "smaller", "wider", "narrower", "narrow", "widened",
                         "narrowed", "extend", "extended", "extends"})


@rule("direction-of-thing", lambda p: (p.claim, p.texts(p.aligned + p.held), p.index.sentences))
def check_bound_direction(claim: str, sentences: list[str], everywhere: list[str] | None = None) -> list[Finding]:
    """A direction word said of the same thing as an opposite word of the source: "attendance went
    down" where the source says "attendance rose". Only when the source never says the claim's
    direction of that thing and the claim does not say both (each word about its own thing)."""
    # a headline states facts too ("... but Cuts Margin Forecast"): its words are read like a sentence's
    # the same direction of that thing anywhere in the document clears it (the opposite is read in
    # the aligned sentences only: "revenue grew" is not about "shares fell")
    anywhere = list(everywhere or []) or sentences
    pool = list(sentences)
    for a, b in ANTONYMS:
        generic = a is ANTONYMS[0][0]
        if generic:  # "fewer trips" is not opposite to "trips ... longer": sizes have their own pairs
            a, b = a - _SIZE_WORDS, b - _SIZE_WORDS
        # "sleep after a later start" / "schools start before...": places in time or space, not directions
        a, b = a - _PLACE_WORDS, b - _PLACE_WORDS
        if not a or not b:
            continue
        for mine, theirs in ((a, b), (b, a)):
            for said, anchors in _direction_words(claim, mine):
                if not anchors:
                    continue
                # and any sentence that shares three content words (all of them, if fewer) with the
                # claim's clause of that word
                part = next((c for c in clauses(claim) if re.search(rf"\b{said}\b", c.lower())), claim)
                words = {stem(w) for w in _words(part) if w not in _STOP and w not in _POLAR_WORDS and len(w) > 2
                         and w not in _LIGHT and stem(w) not in _LIGHT_STEMS}
                need = max(2, min(3, len(words)))
                # ... or whose own direction word is said of two of the same things ("earlier school
                # start" / "earlier studies of later school start times"), or, for a pair of its own
                # ("faster"/"slower", not the many words of up and down), of everything the claim's is
                # said of ("Faster foraging" / "Slower foraging rather than extra deaths")
                pool = list(sentences) + [x for x in anywhere if x not in sentences
                                          and (len(words & {stem(w) for w in _words(x)}) >= need
                                               or any(len(anchors & o) >= 2 or (not generic and anchors <= o)
                                                      for o in _direction_uses(x, theirs)))]
                if any(anchors & other for other in _direction_uses(claim, theirs)):
                    continue
                opposite = [x for x in pool if any(anchors & o for o in _direction_uses(x, theirs))]
                # the source saying the claim's direction of that thing clears it, unless the opposite is
                # said of more of it ("Trees Reduce Pedestrian Heat Stress" against "heatwaves are more
                # frequent and pedestrians feel the heat far more")
                bind_opp = max((len(anchors & o) for x in opposite for o in _direction_uses(x, theirs)), default=0)
                bind_same = max((len(anchors & o) for x in anywhere for o in _direction_uses(x, mine)), default=0)
                if opposite and bind_opp > bind_same and (not bind_same or bind_opp >= 3):
                    return [Finding("polarity", f"{said!r} said of what the source says the "
                                                f"opposite of: \"{C_clip(opposite[0])}\"")]
    return []


_STEEL = ("Steel prices rose sharply in 2022, adding about 38 million pounds to the cost. "
          "A shortage of welders held the work back.")
_FERRIES = ("Slower ferries were the main complaint of islanders this winter: storms cancelled 40 sailings. "
            "Each crossing took on average 12 percent longer, 74 minutes against 66 minutes.")

#: Wrong claims this module's rules must flag, each with the right twin they must pass.
TWINS = (
    Twin("direction-of-thing", _STEEL, wrong="Delays came from falling steel prices and a shortage of welders.",
         right="Delays came from rising steel prices and a shortage of welders.", note="bound two words deep"),
    Twin("direction-of-thing", "Lumen Foods Lifts Revenue 14 Percent but Cuts Margin Forecast on Cocoa Costs",
         wrong="Revenue grew, but it lifted its profit margin forecast because of cocoa.",
         right="Revenue grew, but it cut its profit margin forecast because of cocoa.", note="read in a headline"),
    Twin("direction-of-thing", _FERRIES, wrong="Faster ferries (crossings 12 percent longer)",
         right="Slower ferries (crossings 12 percent longer)", aligned=(1,),
         note="a pair of its own is read anywhere in the source"),
    Twin("number-direction", "Car-free Sundays led to 23 percent fewer car trips in the centre.",
         wrong="Car-free Sundays led to 23 percent more car trips in the centre.",
         right="Car-free Sundays led to 23 percent fewer car trips in the centre."),
)
