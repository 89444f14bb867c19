"""Roles: two words (names, groups) trading places within the aligned sentence, and two people's
titles traded ("the captain Ada Lund" where the source's captain is Piotr Nowak).
"""

from __future__ import annotations

import re

from harness.models.rules.antonyms import _POLAR_WORDS
from harness.models.rules.pair import rule, SourceIndex, Twin
from harness.models.rules.text import C_clip, _content, context, Finding, _RELATIONAL, _STOP, _swapped, Tok


@rule("words-trade-places", lambda p: (p.toks, p.index, p.aligned))
def check_word_swaps(claim_toks: list[Tok], src: SourceIndex, aligned: list[int]) -> list[Finding]:
    """Two content words (names, groups, antonym pairs) that trade places within the aligned
    sentence: 'coated ... 19 percent, uncoated ... 6 percent' told the other way round."""
    if not aligned:
        return []
    k = aligned[0]
    stoks = src.toks[k]
    s_index: dict[str, list[int]] = {}
    for i, t in enumerate(stoks):
        if _content(t) and t.low not in _RELATIONAL:
            s_index.setdefault(t.low, []).append(i)
    c_index: dict[str, list[int]] = {}
    for i, t in enumerate(claim_toks):
        if _content(t) and t.low not in _RELATIONAL:
            c_index.setdefault(t.low, []).append(i)
    def label(w: str) -> bool:  # a name, or a word a number is said of ("coated ... 91 percent")
        i = s_index[w][0]
        if w in src.names or stoks[i].text[:1].isupper() and i > 0:
            return True
        near = [t for t in stoks[max(0, i - 3):i + 4] if t.kind == "num" or _content(t)]
        return any(t.kind == "num" for t in near)
    # direction words ("later", "longer") are read by the polarity check, never as labels trading places
    shared = [w for w in c_index if w in s_index and len(s_index[w]) == 1 and len(c_index[w]) == 1
              and w not in _POLAR_WORDS and label(w)]
    found = []
    for x in range(len(shared)):
        for y in range(x + 1, len(shared)):
            a, b = shared[x], shared[y]
            sa, sb = s_index[a][0], s_index[b][0]
            if abs(sa - sb) < 4:
                continue
            if _swapped(context(claim_toks, c_index[a][0], 3), context(claim_toks, c_index[b][0], 3),
                        context(stoks, sa, 3), context(stoks, sb, 3), margin=0.9):
                found.append(Finding("entity", f"{a!r} and {b!r} trade places: the source says "
                                               f"\"{C_clip(src.sentences[k])}\""))
                return found
    return found


def _titled(toks: list[Tok]) -> dict[str, str]:
    """Names with the common noun right before them ("the violinist Zoë Müller", "chief executive
    Marta Lindgren"): {first word of the name, lower case: the noun}."""
    out: dict[str, str] = {}
    for i in range(1, len(toks)):
        t, before = toks[i], toks[i - 1]
        if t.kind == "word" and t.text[:1].isupper() and before.kind == "word" and before.text.islower() \
                and _content(before) and before.low not in _RELATIONAL and before.low not in _STOP \
                and before.low not in _POLAR_WORDS and len(before.low) > 3:
            out.setdefault(t.low, before.low)
    return out


@rule("titles-traded", lambda p: (p.toks, p.index))
def check_title_swap(claim_toks: list[Tok], src: SourceIndex) -> list[Finding]:
    """Two people's titles traded: "the cellist Zoë Müller and the violinist Søren Ærø" where the
    source says "the violinist Zoë Müller and the cellist Søren Ærø": the source gives the name
    another title, and gives the claim's title to another name."""
    mine = _titled(claim_toks)
    if not mine:
        return []
    theirs: dict[str, set[str]] = {}
    for toks in src.toks:
        for name, title in _titled(toks).items():
            theirs.setdefault(name, set()).add(title)
    holders: dict[str, set[str]] = {}
    for name, titles in theirs.items():
        for title in titles:
            holders.setdefault(title, set()).add(name)
    for name, title in mine.items():
        said = theirs.get(name)
        if said and title not in said and holders.get(title, set()) - {name}:
            other = sorted(holders[title] - {name})[0]
            return [Finding("entity", f"{title!r} {name!r}: the source calls {name!r} {sorted(said)[0]!r} and "
                                      f"{other!r} {title!r}")]
    return []


#: Wrong claims this module's rules must flag, each with the right twin they must pass.
TWINS = (
    Twin("titles-traded", "The ferry company hired the engineer Ada Lund and the captain Piotr Nowak in March.",
         wrong="The company hired the captain Ada Lund and the engineer Piotr Nowak.",
         right="The company hired the engineer Ada Lund and the captain Piotr Nowak."),
    Twin("words-trade-places", "In the trial, Oslo recorded 19 percent more cyclists, while Bergen saw 6 percent "
                               "fewer.",
         wrong="In the trial, Bergen recorded 19 percent more cyclists, while Oslo saw 6 percent fewer.",
         right="In the trial, Oslo recorded 19 percent more cyclists, while Bergen saw 6 percent fewer."),
)
