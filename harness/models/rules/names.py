"""Names and codes, and the facts said of them.

A name of the document put where the aligned sentence names someone else; a name given facts
the source says of something else; a name followed by a number ("Kingsgate 8") is a label the
source must write; a code (grant HF-2021-0457) belongs to the name written before it.
"""

from __future__ import annotations

import re

from harness.models import claims as C
from harness.models.rules.pair import pair, rule, SourceIndex, Twin
from harness.models.rules.text import (
    C_clip, clauses, Finding, lemma, _num_kind, number_uses, _PERCENT, _SCALES, stem, _STOP, Tok, tokenize,
)


def _initial_name(sentence: str, src: SourceIndex) -> set[str]:
    """A sentence's first word as a name: capitalised, never written in lower case by the
    source, not a function word ("Chiara will update...")."""
    words = C._WORD.findall(sentence)
    if not words or not words[0][:1].isupper() or C.is_heading(sentence):
        return set()
    low = words[0].lower().strip("'’")
    if low in C._NOT_NAMES or low in _STOP or low in src.common or len(low) < 3:
        return set()
    if src.sentences and not any(low in lw for lw in src.lows):
        return set()  # a word the source never uses ("Simple text message reminders..."): not one of its names
    return {low}


def _acronym(name: str, src: SourceIndex) -> bool:
    """A short word the source writes in capitals (VPN, GPS, SMS), or the letters of a code (PM2.5):
    a term, not someone's name."""
    return len(name) <= 4 and re.search(r"\b" + re.escape(name.upper()) + r"(?![A-Za-z])",
                                        " ".join(src.sentences)) is not None


def _holds(src: SourceIndex, k: int, name: str) -> bool:
    return (name in src.lows[k] or stem(name) in src.stems[k]
            or re.search(r"(?<!\w)" + re.escape(name) + r"(?!\w)", src.sentences[k].lower()) is not None)


def _name_facts(claim: str, name: str, strict: bool = False) -> set[str]:
    """What the claim says of ``name``: the content words and numbers of its clause that holds the
    name (the whole claim when that clause says nothing more), names left out. ``strict``: only
    the name's own part of the clause ("use the VPN and report lost devices": "use the VPN"), and
    nothing when that part says nothing."""
    part = next((c for c in clauses(claim) if name in c.lower()), claim)
    if strict:
        part = next((c for c in re.split(r"\s+and\s+", part) if name in c.lower()), part)
    named = {x for w in C._WORD.findall(claim) if w[:1].isupper()  # "Eastmere Regional Transport Authority"
             for x in (stem(w), stem(lemma(w)))}

    def facts(text: str) -> set[str]:
        toks = tokenize(text)
        return ({stem(lemma(t.low)) for t in toks if t.kind == "word" and t.low not in _STOP and len(t.low) > 2
                 and not any(c.isdigit() for c in t.low)}
                | {u.value for u in number_uses(toks)}) - {x for w in name.split() for x in (stem(w), stem(lemma(w)))} \
            - named

    mine = facts(part)
    return mine if len(mine) >= 2 or strict else facts(claim)


def _shared_facts(mine: set[str], src: SourceIndex, k: int) -> int:
    return len(mine & (src.sentence_keys[k] | {u.value for u in src.uses[k]}))  # "helped" / "its help"


def _fact_sentence(claim: str, name: str, src: SourceIndex, aligned: list[int]) -> int:
    """The aligned sentence that holds the facts said of ``name``: the one sharing most content
    words and numbers with the claim's clause that holds the name, the name itself left out."""
    mine = _name_facts(claim, name)
    return max(aligned, key=lambda k: (_shared_facts(mine, src, k), -aligned.index(k)))


@rule("name-facts", lambda p: (p.claim, p.names, p.index))
def check_name_facts(claim: str, claim_names: set[str], src: SourceIndex) -> list[Finding]:
    """Who did what: a name (or a code) of the document given facts that the source says of
    something else. "Marta Lindgren sold 14 percent more" where the 14 percent is the company's
    revenue and Lindgren's own sentences say other things; "The HEPA H13 purifies rooms of 40
    square metres" where that is the purifier's. Every sentence of the document is read; the
    names of its title lines (what the document is about) are left to check_names."""
    if C.is_heading(claim):
        return []
    toks = tokenize(claim)
    codes = {t.low for t in toks if t.kind == "word" and t.low in src.codes and "-" in t.low}
    body = [k for k in range(len(src.sentences)) if not C.is_heading(src.sentences[k])]
    for n in sorted((claim_names | codes) - src._head):
        if (n not in src.names and n not in codes) or n in src.common or n in C._MONTHS:
            continue
        holding = [k for k in body if _holds(src, k, n)]
        if not holding:
            continue  # a name the source never writes: the missing-name check reads it
        mine = _name_facts(claim, n, strict=True)
        if len(mine) < 3:
            continue
        own = max(_shared_facts(mine, src, k) for k in holding)
        best = max(body, key=lambda k: _shared_facts(mine, src, k))
        other = _shared_facts(mine, src, best)
        if best not in holding and other >= 3 and other >= own + 2:
            return [Finding("entity", f"what the claim says of {n!r} the source says of something else: "
                                      f"\"{C_clip(src.sentences[best])}\"; the source's sentences on {n!r} say "
                                      f"other things: \"{C_clip(src.sentences[holding[0]])}\"")]
    return []


@rule("code-owner", lambda p: (p.claim, p.index))
def check_code_binding(claim: str, src: SourceIndex) -> list[Finding]:
    """A code (grant HF-2021-0457, filter AN-F40) belongs to the name written before it: "the
    Halvorsen Foundation (grant NYHF-22-019)" where the source gives NYHF-22-019 to the Nordic
    Youth Health Fund, named in the same sentence."""
    def owner(toks: list[Tok], i: int) -> str:
        for j in range(i - 1, max(-1, i - 8), -1):
            t = toks[j]
            if t.kind == "punct" and t.text in ";.!?":
                return ""
            if t.kind == "word" and t.text[:1].isupper() and j > 0 and t.low not in _STOP \
                    and t.low not in C._NOT_NAMES and t.low not in src.codes and t.low not in src.common:
                return t.low
        return ""

    toks = tokenize(claim)
    for i, t in enumerate(toks):
        if t.kind != "word" or "-" not in t.low or t.low not in src.codes:
            continue
        mine = owner(toks, i)
        if not mine:
            continue
        for k, stoks in enumerate(src.toks):
            for si, st in enumerate(stoks):
                if st.low != t.low:
                    continue
                theirs = owner(stoks, si)
                if theirs and theirs != mine and mine in src.lows[k]:
                    return [Finding("entity", f"{t.text} is given to {mine!r}, where the source gives it to "
                                              f"{theirs!r}: \"{C_clip(src.sentences[k])}\"")]
    return []


@rule("name-in-sentence", lambda p: (p.claim, p.names, p.index, p.aligned + p.held))
def check_names(claim: str, claim_names: set[str], src: SourceIndex, aligned: list[int]) -> list[Finding]:
    """A name of the document put where the aligned sentence has another name; two names swapped."""
    found: list[Finding] = []
    claim_names = claim_names | _initial_name(claim, src)
    if not claim_names or not aligned:
        return found
    body = [k for k in aligned if not C.is_heading(src.sentences[k])]
    if not body or C.is_heading(claim):
        return found
    claim_low = claim.lower()
    for n in sorted(claim_names):
        if (n not in src.names and n not in _initial_name(claim, src)) or n in src.common:
            continue
        # a sentence claim is held to a sentence, not to the headline it resembles: the one holding
        # the facts of the clause that names n ("..., and it will close two European factories")
        if _holds(src, _fact_sentence(claim, n, src, body), n):
            continue
        top = body[0]
        top_names = (C.names(src.sentences[top], src.names) & src.names) | _initial_name(src.sentences[top], src)
        near = n in src.lows[top] or stem(n) in src.stems[top]
        if near:
            continue
        others = {m for m in top_names if m not in claim_low and m != n}
        if others:
            found.append(Finding("entity", f"name {n!r} is not in the sentence that supports this claim, which names "
                                           f"{', '.join(sorted(others))} instead: \"{C_clip(src.sentences[top])}\""))
        elif (n in src.names and not src.main_name(n) and n not in C._WORD_NUMBERS and not _acronym(n, src)
              and not _holds(src, _fact_sentence(claim, n, src, aligned), n)):
            # a minor name of the document (a person quoted, a district, an author) given a fact
            # that its own sentences do not hold: "In Weber, streets with trees were cooler"
            where = next((k for k, lw in enumerate(src.lows) if n in lw), None)
            found.append(Finding("entity", f"name {n!r} does not occur in the sentences that support this claim"
                                           + (f"; the source names it only elsewhere: \"{C_clip(src.sentences[where])}\""
                                              if where is not None else "")
                                           + f"; supporting sentence: \"{C_clip(src.sentences[top])}\""))
    return found


@rule("name-label", lambda p: (p.claim, p.index))
def check_name_numbers(claim: str, src: SourceIndex) -> list[Finding]:
    """A name followed by a number ("Kingsgate 8", "Letters 12") is a label of its own: the
    source must write that pair too. Years, percentages and amounts with a unit are not labels."""
    if C.is_heading(claim):
        return []
    toks = tokenize(claim)
    text = " ".join(" ".join(t.low for t in ts) for ts in src.toks)
    for i in range(1, len(toks) - 1):
        t, n = toks[i], toks[i + 1]
        if t.kind != "word" or not t.text[:1].isupper() or n.kind != "num" or not n.text.isdigit() \
                or t.low in C._NOT_NAMES or t.low in _STOP or t.low in C._MONTHS or _num_kind(n.value) != "amount":
            continue
        after = toks[i + 2].low if i + 2 < len(toks) else ""
        if after in _PERCENT or after in _SCALES or (toks[i + 2].kind == "word" and after in src.common
                                                     and after.endswith("s") and after not in _STOP
                                                     if i + 2 < len(toks) else False):
            continue  # "Revenue 14 percent", "Kingsgate 3 protected lanes": a count of something
        pair = f"{t.low} {n.text.lower()}"
        if not re.search(r"(?<![\w.])" + re.escape(pair) + r"(?![\w.])", text):  # "Kingsgate 2" is not "Kingsgate 27"
            return [Finding("entity", f"{t.text} {n.text} is not a name the source uses")]
        # a label the source uses ("Kingsgate 8", a counter): the claim's amounts must be said with it
        amounts = {u.value for u in number_uses(toks) if u.index != i + 1 and _num_kind(u.value) == "amount"}
        homes = [k for k, ts in enumerate(src.toks) if pair in " ".join(x.low for x in ts)]
        if amounts and not any(amounts & {u.value for u in src.uses[k]} for k in homes):
            return [Finding("entity", f"{t.text} {n.text} is a label of the source, but what the claim says of it is "
                                      f"said elsewhere: \"{C_clip(src.sentences[homes[0]])}\"")]
        # nor a word of what the claim says of it ("cycling in Kingsgate 2" where Kingsgate 2 is a counter
        # station of a data table)
        said = _name_facts(claim, t.low, strict=True) - {n.value}
        if len(said) >= 3 and not any(said & (src.stems[k] | {u.value for u in src.uses[k]}) for k in homes):
            return [Finding("entity", f"{t.text} {n.text} is a label of the source that none of what the claim "
                                      f"says of it is said with: \"{C_clip(src.sentences[homes[0]])}\"")]
    return []


_NEWS = ("Lumen Foods Lifts Revenue 14 Percent but Cuts Margin Forecast on Cocoa Costs\n"
         "Revenue rose 14 percent to 2.31 billion euros in the third quarter. "
         "Chief executive Marta Lindgren said cocoa had cost the company 180 million euros more this year. "
         "Lindgren said the company would close two factories. "
         "The trial was funded by the Halvorsen Foundation under grant HF-2021-0457 and by the Nordic Youth "
         "Health Fund under grant NYHF-22-019.")
_THANKS = ("Island Ferries 2025\nA report on the year's sailings.\nFerries ran daily. "
           "We thank the Nordby Harbour Board for its help with tide tables. "
           "Dr Ines Ekdal commented on an earlier draft of this report.")

#: Wrong claims this module's rules must flag, each with the right twin they must pass.
TWINS = (
    Twin("name-facts", _NEWS, wrong="Marta Lindgren sold 14 percent more in the third quarter.",
         right="Revenue rose 14 percent in the third quarter, and Marta Lindgren said cocoa cost 180 million euros "
               "more."),
    Twin("name-facts", _THANKS, wrong="Dr Ines Ekdal helped the crews with the tide tables.",
         right="Dr Ines Ekdal commented on a draft of the report.", note="what a name did, read by word forms"),
    Twin("code-owner", _NEWS, wrong="It was funded by the Halvorsen Foundation (grant NYHF-22-019).",
         right="It was funded by the Halvorsen Foundation (grant HF-2021-0457)."),
    Twin("name-in-sentence", "The rota changes in May. Chiara will update the calendar and the paging tool. "
                             "Esther proposed twice-weekly handovers.",
         wrong="Esther will update the calendar and the paging tool.",
         right="Chiara will update the calendar and the paging tool."),
    Twin("name-label", "Cyclists passed the Kingsgate 8 counter 1,200 times a day.",
         wrong="Cyclists passed the Kingsgate 3 counter 1,200 times a day.",
         right="Cyclists passed the Kingsgate 8 counter 1,200 times a day."),
)
