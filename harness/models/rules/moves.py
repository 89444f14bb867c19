"""Moves and comparisons: the level a number moved to ("rose to 18 euros" where the source says
"18 euros, down from 21"), a claim against its own figures ("fell from 21 to 39 percent",
"dearer: 38 versus 61"), and a multiple above one told as less ("1.6 times slower").
"""

from __future__ import annotations

import re

from harness.models.rules.antonyms import _DOWN, _UP
from harness.models.rules.pair import rule, SourceIndex, Twin
from harness.models.rules.text import _APPROX, C_clip, _CLAUSE_WORDS, Finding, _num, number_uses, Tok


_TIMES_DOWN = r"(?:slower|less|lower|fewer|smaller|shorter|weaker|cheaper|worse)"


_TIMES_UP = r"(?:the|as|that|faster|more|higher|greater|larger|longer|stronger|bigger|better)"


@rule("times-above-one", lambda p: (p.claim, p.index))
def check_times(claim: str, src: SourceIndex) -> list[Finding]:
    """"1.6 times slower" where the source says "1.6 times the rate": a multiple above one
    is more, never less."""
    for m in re.finditer(rf"\b(\d+(?:\.\d+)?)\s+times\s+{_TIMES_DOWN}\b", claim, re.I):
        n = m.group(1)
        if float(n) <= 1:
            continue
        for k, x in enumerate(src.sentences):
            if re.search(rf"\b{re.escape(n)}\s+times\s+{_TIMES_UP}\b", x, re.I) \
                    and not re.search(rf"\b{re.escape(n)}\s+times\s+{_TIMES_DOWN}\b", x, re.I):
                return [Finding("polarity", f"{m.group(0)!r} where the source says a multiple above one: "
                                            f"\"{C_clip(x)}\"")]
    return []


#: Which way a direction word moves a number: "rose to 310", "cheaper: 38 versus 61".
_SIGN: dict[str, int] = {**{w: 1 for w in _UP.split()}, **{w: -1 for w in _DOWN.split()},
                         **{w: 1 for w in "dearer costlier pricier warmer hotter higher more greater".split()},
                         **{w: -1 for w in "cheaper cooler colder lower less fewer".split()}}


for _w in ("saving", "saved", "save", "cut", "cuts", "remove", "removed", "removing", "add", "added", "adding",
           "up", "down", "extend", "extended", "extends", "narrow"):
    _SIGN.pop(_w, None)  # "saved 310 euros", "cut 12 jobs", "added 38 million": an amount, not a level


_VERSUS = {"versus", "vs", "against"}


def _moves(toks: list[Tok]) -> dict[str, int]:
    """Which way the text says a number moved, as the level it ended at: "fell to 310", "from 450 to
    310", "310 euros, down from 450" (numbers compared by size where both are given)."""
    out: dict[str, int] = {}
    uses = number_uses(toks)
    for k, u in enumerate(uses):
        i = u.index
        before = [t for t in toks[max(0, i - 3):i] if t.kind == "word"]
        # "from 450 to 310", "from 21 percent to 39 percent"
        if k > 0 and toks[i - 1].low == "to" and any(t.low == "from" for t in toks[uses[k - 1].index - 1:uses[k - 1].index]) \
                and i - uses[k - 1].index <= 4:
            a, b = _num(uses[k - 1].value), _num(u.value)
            if a is not None and b is not None and a != b:
                out.setdefault(u.value, 1 if b > a else -1)
                continue
        # "fell to about 310", "rose to 39 percent"
        if before and before[-1].low in _APPROX | {"to"}:
            words = [t.low for t in before]
            if "to" in words:
                verb = words[:words.index("to")]
                if verb and verb[-1] in _SIGN:
                    out.setdefault(u.value, _SIGN[verb[-1]])
                    continue
        # "310 euros a year ..., down from 450 euros"
        for j in range(i + 1, min(len(toks), i + 16)):
            t = toks[j]
            if t.kind == "num" or (t.kind == "punct" and t.text in ";.!?") or t.low in _CLAUSE_WORDS:
                break
            if t.low in ("up", "down") and j + 2 < len(toks) and toks[j + 1].low == "from" and toks[j + 2].kind == "num":
                a, b = _num(toks[j + 2].value), _num(u.value)
                if a is not None and b is not None and a != b:
                    out.setdefault(u.value, 1 if b > a else -1)
                break
    return out


@rule("level-moved", lambda p: (p.toks, p.index))
def check_moves(claim_toks: list[Tok], src: SourceIndex) -> list[Finding]:
    """A level the claim says a number moved to the other way from the source: "savings rose to
    about 310 euros" where the source says "310 euros, down from 450"; and a claim whose direction
    word goes against its own numbers ("fell from 21 to 39 percent")."""
    mine = _moves(claim_toks)
    if not mine:
        return []
    uses = number_uses(claim_toks)
    for k, u in enumerate(uses[1:], 1):  # the claim against itself: "fell from 21 to 39 percent"
        if u.value not in mine or claim_toks[u.index - 1].low != "to":
            continue
        before = [t.low for t in claim_toks[max(0, uses[k - 1].index - 3):uses[k - 1].index] if t.kind == "word"]
        at = before.index("from") if "from" in before else 0
        if at > 0 and _SIGN.get(before[at - 1], mine[u.value]) != mine[u.value]:
            return [Finding("polarity", f"{before[at - 1]!r} from {uses[k - 1].value} to {u.value}")]
    theirs: dict[str, set[int]] = {}
    for toks in src.toks:
        for value, sign in _moves(toks).items():
            theirs.setdefault(value, set()).add(sign)
    for value, sign in mine.items():
        said = theirs.get(value, set())
        if said and sign not in said:
            return [Finding("polarity", f"the claim has {value} as a {'rise' if sign > 0 else 'fall'}; the source "
                                        f"says it {'fell' if sign > 0 else 'rose'} to {value}")]
    return []


@rule("versus-own-figures", lambda p: (p.toks,))
def check_versus(claim_toks: list[Tok]) -> list[Finding]:
    """A comparison that goes against its own figures: "Dearer than lithium iron phosphate: 38
    versus 61 dollars" (the first figure is the subject's, the second the other's)."""
    for i, t in enumerate(claim_toks):
        if t.kind != "word" or t.low not in _SIGN or i + 1 >= len(claim_toks) or claim_toks[i + 1].low != "than":
            continue
        nums = [j for j in range(i + 2, min(len(claim_toks), i + 14)) if claim_toks[j].kind == "num"]
        if len(nums) < 2 or not any(claim_toks[j].low in _VERSUS for j in range(nums[0] + 1, nums[1])) \
                or nums[1] - nums[0] > 4:
            continue
        a, b = _num(claim_toks[nums[0]].value), _num(claim_toks[nums[1]].value)
        if a is None or b is None or a == b:
            continue
        if (a > b) != (_SIGN[t.low] > 0):
            return [Finding("polarity", f"{t.text!r} than the other, yet {claim_toks[nums[0]].text} against "
                                        f"{claim_toks[nums[1]].text}")]
    return []


_FARES = ("The average fare was 18 euros, down from 21 euros in 2023. "
          "Passenger numbers rose from 1.2 million to 1.5 million. "
          "Harbour fees climbed to 9 euros a ton.")

#: Wrong claims this module's rules must flag, each with the right twin they must pass.
TWINS = (
    Twin("level-moved", _FARES, wrong="The average fare rose to 18 euros.", right="The average fare fell to 18 euros."),
    Twin("level-moved", _FARES, wrong="Passenger numbers fell to 1.5 million.",
         right="Passenger numbers grew to 1.5 million."),
    Twin("level-moved", _FARES, wrong="Harbour fees dropped to 9 euros a ton.",
         right="Harbour fees increased to 9 euros a ton."),
    Twin("level-moved", "Nothing here.", wrong="Passenger numbers fell from 1.2 million to 1.5 million.",
         right="Passenger numbers rose from 1.2 million to 1.5 million.", note="a claim against its own figures"),
    Twin("versus-own-figures", "Nothing here.",
         wrong="Dearer than power for the electric ferry: 1.4 versus 1.9 euros a litre",
         right="Cheaper than power for the electric ferry: 1.4 versus 1.9 euros a litre"),
    Twin("versus-own-figures", "Nothing here.", wrong="Crossings were shorter than last year, 74 against 66 minutes.",
         right="Crossings were longer than last year, 74 against 66 minutes."),
    Twin("times-above-one", "Restored marshes buried carbon at about 1.6 times the rate of natural marshes.",
         wrong="Restored marshes store carbon 1.6 times slower than natural ones.",
         right="Restored marshes store carbon 1.6 times faster than natural ones."),
)
