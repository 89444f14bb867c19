"""Antonyms: the direction and antonym word pairs (rose/fell, longer/shorter, kept/lost, before/after,
coated/uncoated, "at least"/"up to") read against the aligned source clause, and plain opposites
of the weather and the body's sense of it (hot/cold, wet/dry) the source never uses in any form.
"""

from __future__ import annotations

import functools

from harness.models import claims as C
from harness.models.rules.negation import _neg_cues
from harness.models.rules.pair import rule, SourceIndex, Twin
from harness.models.rules.text import (
    _best_clause_of, C_clip, clauses, comparable, _COMPARATIVE_Q, _content, Finding, _quantity, _RELATIONAL, stem,
    tokenize, _words,
)


# Direction and antonym groups: a claim word of one side against its aligned source clause.
_UP = ("longer larger bigger rise rose risen rising rises increase increased increases increasing grew grow grows growing grown up gain "
       "gained gains boost boosted raise raised raises lift lifts lifted climbed jumped higher more doubled double "
       "expanded widened greater extend extended extends add added adding doubling widening expanding climbing "
       "jumping raising lifting boosting gaining growth increases surge surged soared")


_DOWN = ("shorter smaller fall fell fallen falling falls decrease decreased decreases decreasing decline declined declines "
         "declining drop dropped drops down shrank shrink shrunk cut cuts reduce reduced reduces reducing lower "
         "lowered lowers less fewer halve halved halves narrowed narrow narrowing narrows slowed slowing smaller saving "
         "saved save shrinking dropping lowering cutting halving reduction reductions remove removed removing "
         "slump slumped plunged plummeted")


ANTONYMS: list[tuple[frozenset[str], frozenset[str]]] = [
    (frozenset(_UP.split()), frozenset(_DOWN.split())),
    (frozenset({"longer"}), frozenset({"shorter"})),
    (frozenset({"unchanged", "steady", "maintained"}),
     frozenset({"cut", "raised", "reduced", "increased", "lowered", "slashed", "changed", "rose", "fell"})),
    (frozenset({"larger", "bigger"}), frozenset({"smaller"})),
    (frozenset({"largest", "biggest"}), frozenset({"smallest"})),
    (frozenset({"highest"}), frozenset({"lowest"})),
    (frozenset({"most"}), frozenset({"least", "fewest"})),
    (frozenset({"before"}), frozenset({"after"})),
    (frozenset({"earlier", "early", "earliest", "sooner"}), frozenset({"later", "late", "latest"})),
    (frozenset({"cheaper", "cheap", "cheapest"}), frozenset({"dearer", "costlier", "expensive"})),
    (frozenset({"warmer", "hotter", "warm", "hot"}), frozenset({"cooler", "colder", "cool", "cold"})),
    (frozenset({"faster", "quicker", "fast", "quickly"}), frozenset({"slower", "slow", "slowly"})),
    (frozenset({"kept", "keep", "keeps", "retained", "retain", "retains"}), frozenset({"lost", "lose", "loses"})),
    (frozenset({"above", "over", "exceeded", "exceeds"}), frozenset({"below", "under", "within"})),
    # "about a third above" where the source says "about a third lower than"
    (frozenset({"above", "higher", "more", "greater"}), frozenset({"below", "lower", "less", "fewer"})),
    (frozenset({"first"}), frozenset({"last"})),
    (frozenset({"best"}), frozenset({"worst"})),
    (frozenset({"better", "improve", "improved", "improves"}), frozenset({"worse", "worsened", "worsen"})),
    (frozenset({"overestimate", "overestimated", "overestimates"}),
     frozenset({"underestimate", "underestimated", "underestimates"})),
    (frozenset({"maximum"}), frozenset({"minimum"})),
    (frozenset({"welcomed", "supported", "backed", "praised"}), frozenset({"opposed", "criticised", "criticized"})),
    (frozenset({"approved", "accepted"}), frozenset({"rejected", "refused"})),
    (frozenset({"helped", "help", "helps", "benefited", "benefit", "benefits"}),
     frozenset({"hurt", "hurts", "harmed", "harm", "harms"})),
    (frozenset({"easy", "easier", "simple"}), frozenset({"difficult", "hard", "harder"})),
    (frozenset({"stronger", "strong"}), frozenset({"weaker", "weak", "weaken"})),
    (frozenset({"allowed", "permitted"}), frozenset({"forbidden", "banned", "prohibited"})),
    (frozenset({"success", "succeeded", "passed"}), frozenset({"failure", "failed"})),
    (frozenset({"profit"}), frozenset({"loss"})),
    (frozenset({"survived", "survive", "survives", "survival", "lived"}), frozenset({"died", "die", "dies", "killed"})),
    (frozenset({"warmer", "hotter", "higher"}), frozenset({"cooler", "colder", "lower"})),
    (frozenset({"completed", "complete", "completion", "finished", "finish"}),
     frozenset({"abandoned", "abandon", "quit", "stopped", "incomplete"})),
    (frozenset({"inside", "indoor", "indoors"}), frozenset({"outside", "outdoor", "outdoors"})),
    (frozenset({"double", "doubled", "twice"}), frozenset({"halve", "halved", "half"})),
    (frozenset({"gained", "gain", "gains", "gaining", "won", "win", "wins"}),
     frozenset({"lost", "lose", "loses", "losing"})),
    (frozenset({"abundant", "plentiful"}), frozenset({"scarce", "scarcer", "rare", "rarer"})),
    (frozenset({"clockwise"}), frozenset({"anticlockwise", "counterclockwise", "counter-clockwise"})),
    (frozenset({"surplus"}), frozenset({"deficit"})),
    (frozenset({"majority"}), frozenset({"minority"})),
]


#: "high" and "low" carry a direction too ("high literacy" where the source says people could not
#: read well), though they are too common to pair ("low doses", "high share" are said of anything)
_POLAR_WORDS = frozenset().union(*(a | b for a, b in ANTONYMS)) | {"high", "low"}


_MULTI_ANTONYMS = [(("at", "least"), ("up", "to")), (("at", "least"), ("at", "most")),
                   (("more", "likely"), ("less", "likely")), (("more", "than"), ("less", "than")),
                   (("more", "than"), ("fewer", "than"))]


def _pwords(text: str) -> set[str]:
    """Words that can carry polarity: capitalised words inside a sentence are names ("Lower
    Ashford"), except in a headline, where every word is capitalised. "more than 800 metres",
    "up to three days" state a quantity, not a direction (the multi-word pairs compare them)."""
    words = C._WORD.findall(text)
    heading = C.is_heading(text)
    out = set()
    for i, w in enumerate(words):
        low = w.lower().strip("'’")
        if low in _COMPARATIVE_Q and _quantity(words, i):
            continue
        if heading or i == 0 or not w[0].isupper():
            out.add(low)
    return out


def _bound(claim: str, mine: frozenset[str], clause: str, theirs: frozenset[str]) -> bool:
    """A direction word of the claim and an opposite word of the source clause are about the
    same thing: the same nearest content word before them (what rose or fell), or a number
    near both ("up 18 percent" / "rose by 18 percent")."""
    def ctxs(text: str, words: frozenset[str]) -> list[tuple[str, set[str]]]:
        toks = tokenize(text)
        out = []
        for i, t in enumerate(toks):
            if t.kind == "word" and t.low in words:
                left = next((stem(x.low) for x in reversed(toks[:i]) if _content(x) and x.low not in _RELATIONAL
                             and x.low not in _POLAR_WORDS), "")
                nums = {x.value for x in toks[max(0, i - 3):i + 4] if x.kind == "num"}
                out.append((left, nums))
        return out
    return any((la and la == lb) or (na & nb) for la, na in ctxs(claim, mine) for lb, nb in ctxs(clause, theirs))


def _neighbours(text: str, word: str) -> set[str]:
    """The nearest content word on each side of ``word`` (stems), and the numbers within three tokens."""
    toks = tokenize(text)
    out: set[str] = set()
    for i, t in enumerate(toks):
        if t.low != word:
            continue
        for rng in (range(i - 1, -1, -1), range(i + 1, len(toks))):
            for j in rng:
                x = toks[j]
                if x.kind == "punct" and x.text in ";:.!?":
                    break
                if x.kind == "word" and _content(x) and x.low not in _RELATIONAL:
                    out.add(stem(x.low))
                    break
        out |= {"#" + x.value for x in toks[max(0, i - 3):i + 4] if x.kind == "num"}
    return out


def _neighbours_bound(claim: str, word: str, clause: str, other: str) -> bool:
    """"coated cathode" / "uncoated cathode": the two words stand by the same word or number, so
    they say opposite things of one thing ("seeds had been treated" is not "untreated fields")."""
    return bool(_neighbours(claim, word) & _neighbours(clause, other))


@rule("antonym-in-clause", lambda p: (p.claim, p.texts(p.aligned)))
def check_antonyms(claim: str, aligned_sentences: list[str]) -> list[Finding]:
    """A direction word or antonym of the claim ("rose", "longer", "kept", "coated", "at least")
    where its aligned source clause says the opposite word ("fell", "shorter", "lost",
    "uncoated", "up to") and not the claim's."""
    aligned_sentences = comparable(claim, aligned_sentences)
    if not aligned_sentences:
        return []
    found = []
    region = " ".join(aligned_sentences[:2])
    region_words = set(_words(region))
    claim_words = _words(claim)
    cw = _pwords(claim)
    claim_clauses = clauses(claim) or [claim]
    for cl in claim_clauses:
        clause, score = _best_clause_of(cl, aligned_sentences[:3])
        if score <= 0.5:
            continue  # the claim's clause is not about this source clause
        clause_words = _pwords(clause)
        cl_words = _pwords(cl)
        for a, b in ANTONYMS:
            for mine, theirs in ((a, b), (b, a)):
                hit = cw & mine
                if not hit or not (cl_words & mine):
                    continue
                if (cl_words & theirs) and not _bound(cl, mine, clause, theirs):
                    continue  # "savings fell as prices rose": each word about its own thing
                if (clause_words & theirs) and not (clause_words & mine):
                    found.append(Finding("polarity", f"{sorted(hit)[0]!r} where the source says "
                                                     f"{sorted(clause_words & theirs)[0]!r}: \"{C_clip(clause)}\""))
                    break
            if found:
                return found
        # "un-" antonyms: coated/uncoated, treated/untreated
        clause_negated = {t for _, t in _neg_cues(clause)}
        claim_negated = {t for _, t in _neg_cues(cl)}
        for w in set(_words(cl)):
            if w.startswith("un") and stem(w[2:]) in clause_negated:
                continue  # "untested" where the source says "not tested"
            if ("un" + w) in clause_words and stem(w) in claim_negated:
                continue
            if w.startswith("un") and w[2:] in clause_words and w not in region_words \
                    and _neighbours_bound(cl, w, clause, w[2:]):
                return [Finding("polarity", f"{w!r} where the source says {w[2:]!r}: \"{C_clip(clause)}\"")]
            if ("un" + w) in clause_words and w not in clause_words and w not in region_words \
                    and _neighbours_bound(cl, w, clause, "un" + w):
                return [Finding("polarity", f"{w!r} where the source says {'un' + w!r}: \"{C_clip(clause)}\"")]
    joined = " ".join(claim_words)
    rjoined = " ".join(_words(aligned_sentences[0]))
    for mine, theirs in _MULTI_ANTONYMS:
        for m1, t1 in ((mine, theirs), (theirs, mine)):
            if " ".join(m1) in joined and " ".join(t1) in rjoined and " ".join(m1) not in rjoined:
                return [Finding("polarity", f"{' '.join(m1)!r} where the source says {' '.join(t1)!r}")]
    return found


#: Plain opposites of one word each: a claim word the source never uses, whose opposite it does
#: use, says the opposite of the source ("on very cold days" in a study of a heatwave, where the
#: body feels "how hot").
#: Only words of the weather and the body's sense of it: they are said literally. Words said of
#: rates and chances ("1.6 times faster" where the source has "slowly" of something else, "sleep
#: late" where it has "later") are paraphrased too freely for this.
_OPPOSITES = {a: b for x, y in (("hot", "cold"), ("warm", "cool"), ("wet", "dry"))
              for a, b in ((x, y), (y, x))}


@functools.lru_cache(maxsize=1 << 14)
def _opposite_base(word: str) -> str | None:
    """The plain word of an opposites pair a form belongs to: "colder" -> "cold", "drier" -> "dry"."""
    if word in _OPPOSITES:
        return word
    for base in _OPPOSITES:
        stem_ = base[:-1] if base.endswith("y") else base
        if word.startswith(stem_) and word[len(stem_):] in ("r", "st", "er", "est", "ly", "ier", "iest", "ily", "ter",
                                                             "test", "ness", "th"):
            return base
    return None


@rule("opposite-word", lambda p: (p.claim, p.index))
def check_opposite_word(claim: str, src: SourceIndex) -> list[Finding]:
    """A claim word of a plain opposites pair that the source never uses in any form, where it uses
    the opposite: "cold streets" against a source that speaks of "how hot the body feels" and
    "cooler" streets, never of cold ones."""
    used = src.memo("opposite-bases", lambda s: {f for lw in s.lows for w in lw if (f := _opposite_base(w))})
    for w in _words(claim):
        base = _opposite_base(w)
        if base and base not in used and _OPPOSITES[base] in used:
            return [Finding("polarity", f"{w!r}: the source never says {base!r} in any form, only "
                                        f"{_OPPOSITES[base]!r}")]
    return []


#: Wrong claims this module's rules must flag, each with the right twin they must pass.
TWINS = (
    Twin("antonym-in-clause", "Over the last century the islands lost half of their ferry piers to storms.",
         wrong="Over the last century the islands gained half of their ferry piers.",
         right="Over the last century the islands lost half of their ferry piers."),
    Twin("antonym-in-clause", "Ferry traffic has grown quickly on the northern route.",
         wrong="Ferry traffic has been falling on the northern route.",
         right="Ferry traffic has been rising on the northern route.", note="grown is a direction"),
    Twin("opposite-word", "Streets with trees felt 4 degrees cooler during the heatwave, when pavements were hot to "
                          "touch.",
         wrong="On cold days, streets with trees feel cooler.", right="On hot days, streets with trees feel cooler."),
    Twin("opposite-word", "Streets with trees felt 4 degrees cooler during the heatwave, when pavements were hot to "
                          "touch.",
         wrong="Tree-lined streets were 4 degrees warmer.", right="Tree-lined streets were 4 degrees cooler.",
         note="warm in no form, cool in one"),
)
