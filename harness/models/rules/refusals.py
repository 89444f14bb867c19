"""Refusals: "the document doesn't say X" is a claim too, false when one source sentence holds what X
is about; "the document does say X" is false when no source sentence does.

critic_offline.py asks these before the pair rules (``refusal_topic``, ``split_refusal``: a
refusal and what follows it are two claims).
"""

from __future__ import annotations

import re

from harness.models import claims as C
from harness.models.rules.pair import rule, SourceIndex, Twin
from harness.models.rules.text import (
    C_clip, Finding, lemma, META_VERBS, META_WORDS, _RELATIONAL, _STOP, word_keys, _words,
)


_REFUSAL = re.compile(
    r"^(?:the|this)\s+(?:document|paper|article|report|review|policy|manual|guide|text|notes|study|source|page|file|"
    r"story|memo|release)\s+"
    r"(?:\w+\s+){0,2}?(?:does\s+not|doesn't|doesn’t|did\s+not|didn't|never|can\s*not|can't|has\s+no|gives\s+no|"
    r"contains\s+no|says\s+nothing|makes\s+no|is\s+silent)\b(.*)$", re.I)


_TOPIC_STOP = _STOP | {"anything", "information", "mention", "mentions", "say", "says", "discuss", "discusses",
                       "cover", "covers", "answer", "answers", "give", "gives", "provide", "provides", "include",
                       "includes", "specify", "state", "states", "report", "recommend", "recommends", "contain",
                       "address", "addresses", "question", "details", "detail", "any", "many", "much", "often",
                       "long", "whether", "why", "which", "who", "much", "there", "data", "figures", "said",
                       "talk", "tell", "tells", "nothing", "silent", "makes", "has", "no", "document", "paper",
                       "article", "policy", "manual", "so", "can't", "cannot", "from", "i", "it", "that", "on",
                       "does", "doesn't", "not", "explain", "explains", "describe", "describes", "figure", "number",
                       "amount", "how", "what", "when", "where", "exact", "exactly", "precise", "specific"}


_REFUSAL_PASSIVE = re.compile(
    r"^(.*?)\b(?:(?:is|are|was|were)\s+(?:not|never)|(?:isn't|aren't|wasn't|weren't))\s+(?:\w+ly\s+)?(?:mentioned|"
    r"discussed|covered|addressed|given|stated|included|reported|named|listed|described)\b.*\b(?:document|paper|"
    r"article|report|policy|manual|text|notes|study|source)\b", re.I)


_REFUSAL_NONE = re.compile(r"^(?:there\s+is\s+|there's\s+)?no\s+(.*?)\s+(?:is\s+|are\s+)?(?:\w+\s+)?anywhere\s+"
                           r"in\s+the\s+(?:document|paper|article|report|policy|manual|text|notes|study|source)\b",
                           re.I)


_DOC = r"(?:document|paper|article|report|review|policy|manual|guide|text|notes|study|source|page|file|story|memo|release|piece|it)"


_META_PARTICIPLES = "|".join(sorted(w for w in META_VERBS if w.endswith(("ed", "en", "ned"))))


_REFUSAL_IT = re.compile(
    rf"^(?:it|the\s+{_DOC}|this\s+{_DOC})\s+(?:\w+\s+){{0,1}}?(?:never|doesn't|doesn’t|does\s+not|did\s+not|didn't)\s+"
    rf"(?:\w+ly\s+)?(?:{'|'.join(sorted(META_VERBS))})\b(.*)$", re.I)


_REFUSAL_PASSIVE_BARE = re.compile(
    r"^(.*?)\b(?:(?:is|are|was|were)\s+(?:not|never)|(?:isn't|aren't|wasn't|weren't|isn’t|aren’t))\s+(?:\w+ly\s+)?"
    rf"(?:{_META_PARTICIPLES})"
    r"(?:\s+(?:anywhere|at\s+all|in\s+it|there))?\s*[.!]?\s*$", re.I)


_REFUSAL_NO_X = re.compile(r"^(?:there\s+(?:is|are)\s+)?no\s+(.*?)\s+(?:is|are|was|were)\s+(?:\w+ly\s+)?"
                           rf"(?:{_META_PARTICIPLES})\b", re.I)


_NEG_WORD = re.compile(r"\b(?:no|not|never|nothing|none|nowhere|isn't|isn’t|doesn't|doesn’t|don't|can't|cannot|"
                       r"won't|hasn't|haven't|n't)\b|n't\b|n’t\b", re.I)


_META_Q = re.compile(r"\b(?:question|answer|answers|answered|answering)\b", re.I)


def refusal_topic(claim: str) -> list[str] | None:
    """For "the document doesn't say X" ("X is not mentioned in the paper", "there is no X
    anywhere in the manual", "it never names a make", "no brands are named", "nothing in the text
    answers that question"): X's content words (maybe none); None if not a refusal."""
    text = claim.strip()
    m = (_REFUSAL.match(text) or _REFUSAL_PASSIVE.match(text) or _REFUSAL_NONE.match(text)
         or _REFUSAL_IT.match(text) or _REFUSAL_PASSIVE_BARE.match(text) or _REFUSAL_NO_X.match(text))
    if m:
        rest = m.group(1)
    elif _META_Q.search(text) and _NEG_WORD.search(text):
        rest = ""  # a sentence about the question going unanswered: "that question isn't answered anywhere in it"
    else:
        return None
    return [w for w in _words(rest) if w not in _TOPIC_STOP and w not in META_WORDS and len(w) > 2]


_REFUSAL_TAIL = re.compile(r"\s*(?:;|:|\s[-–—]\s|,\s*(?:but|and|though|although)\s+(?=it\b|the\b|they\b|this\b))\s*", re.I)


def split_refusal(claim: str) -> list[str]:
    """"The document doesn't say which species; it measures how much cooler streets were": the
    refusal and what the reply says of the document are two claims, each judged on its own (a
    refusal is no licence to misstate the rest)."""
    parts = _REFUSAL_TAIL.split(claim.strip(), maxsplit=1)
    if len(parts) == 2 and refusal_topic(parts[0]) is not None and len(C._WORD.findall(parts[1])) >= 3:
        rest = parts[1].strip()
        return [parts[0].strip(), rest[:1].upper() + rest[1:]]
    return [claim]


_AFFIRM = re.compile(
    rf"^(?:{_DOC}|the\s+{_DOC}|this\s+{_DOC})\b(?:[^;.]*?\band)?\s+(?:(?:does|did|also|still|even|only)\s+)*"
    rf"(?:{'|'.join(sorted(META_VERBS))})\b(.*)$", re.I)


def affirmed_topic(claim: str) -> list[str] | None:
    """For "the document does say how batteries are recycled", "it still names a make of heat
    pump", "the paper tests a cathode and discusses spent cells": what the reply says the
    document speaks of (content words); None when the claim is not about the document."""
    m = _AFFIRM.match(claim.strip())
    if not m or refusal_topic(claim) is not None:
        return None
    return [w for w in _words(m.group(1)) if w not in _TOPIC_STOP and w not in META_WORDS and len(w) > 2]


@rule("affirmed-absent", lambda p: (affirmed_topic(p.claim) or [], p.index))
def check_affirmed(topic: list[str], src: SourceIndex) -> Finding | None:
    """A claim that the document speaks of X is false when no source sentence holds what X is about."""
    if len(topic) < 2:
        return None
    absent = [w for w in topic if not (word_keys(w) & src.all_keys)]
    if absent and check_refusal(topic, src) is None:  # "covers its quarterly results": loose words, all the source's
        return Finding("refusal", f"says the document speaks of {' '.join(topic)}, but no source sentence does "
                                  f"(it never uses {', '.join(repr(w) for w in absent[:3])})")
    return None


@rule("refusal-contradicted", lambda p: (refusal_topic(p.claim), p.index))
def check_refusal(topic: list[str], src: SourceIndex) -> Finding | None:
    """A refusal is contradicted when one source sentence holds (nearly) all it is about."""
    if not topic:
        return None
    words = {lemma(w): w for w in topic if w not in _RELATIONAL}
    keys = [word_keys(w) for w in words.values()]
    need = len(keys) if len(keys) <= 2 else max(2, int(len(keys) * 0.75 + 0.999))
    for k, sk in enumerate(src.sentence_keys):
        if keys and sum(1 for ks in keys if ks & sk) >= need:
            return Finding("refusal", f"the source does say it: \"{C_clip(src.sentences[k])}\"")
    return None


_SOUNDINGS = ("Crews took five soundings of 40 metres depth at each pier. The ferry lost 12 percent of the freight it "
              "carried to damage.")

#: Wrong claims this module's rules must flag, each with the right twin they must pass.
TWINS = (
    Twin("refusal-contradicted", _SOUNDINGS, wrong="The paper doesn't say how deep the soundings were.",
         right="The paper doesn't say what the soundings cost."),
    Twin("refusal-contradicted", _SOUNDINGS,
         wrong="The review doesn't give a figure for how much carried freight is lost to damage.",
         right="The review doesn't name the ferry's captain.", note="word forms and plain synonyms"),
    Twin("affirmed-absent", "Spent cells are charged again at the plant. The cathode was coated with zinc.",
         wrong="The document says how the batteries are recycled and shredded.",
         right="The document says how the spent cells are charged."),
)
