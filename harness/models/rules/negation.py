"""Negation: the claim negates what the source affirms, or affirms what it negates.

Read three ways: the parity of negation cues of a claim clause against its aligned source clause
("did not differ / change" read as "the same"); word by word (the word a cue negates, said
plainly by the source of the same things); and a quality the source only ever denies.
"""

from __future__ import annotations

import re

from harness.models import claims as C
from harness.models.rules.pair import rule, SourceIndex, Twin
from harness.models.rules.text import (
    _best_clause_of, C_clip, clauses, comparable, _content, Finding, lemma, _LIGHT, META_VERBS, _NEG_CUES,
    _RELATIONAL, stem, _STOP, Tok, tokenize, _words,
)


_SAME = re.compile(r"\b(?:(?:did|do|does|has|have|had|was|were|is|are)\s+not|didn'?t|doesn'?t|don'?t|never)\s+"
                   r"(?:\w+ly\s+)?(?:differ|change|vary|varied|move)\w*\b|\bno (?:significant |clear )?"
                   r"(?:difference|change)\b", re.I)


_SAME_WORDS = re.compile(r"\b(?:unchanged|same|similar|equally|stayed|steady|stable|flat)\b", re.I)


_CHANGE_WORDS = re.compile(r"\b(?:differ|differed|differs|different|changed|varied|improved|worsened|suffer|suffered|"
                           r"suffers|fell|dropped|declined|rose|increased|decreased|gained|harmed|hurt|worse|better)\b",
                           re.I)


#: Verbs that say "not" by themselves ("missed a message" = "did not receive a message").
_IMPLICIT_NEG = {"missed", "miss", "misses", "lacked", "lack", "lacks", "lacking", "omitted", "excluded", "skipped",
                 "absent", "unaware"}


_AUX = {"be", "been", "being", "have", "had", "has", "do", "did", "does", "get", "got", "yet", "always", "ever",
        "significantly", "really", "actually", "even", "quite", "entirely", "fully", "necessarily", "to"}


_QUANT_NO = {"almost", "nearly", "virtually", "practically", "little", "with"}


def _neg_cues(text: str, quantities: bool = False) -> list[tuple[str, str]]:
    """Negation cues with what each negates (the stem of the next content word): "did not
    know" -> ("not", "know"). "almost no trees", "with no trees" are quantities, not negation
    (listed too with ``quantities``: "with no loss" matches "without any loss")."""
    text = _SAME.sub(" SAMEMARK ", text)
    words = _words(text)
    out = []
    for i, w in enumerate(words):
        cue = w in _NEG_CUES or w.endswith("n't") or w.endswith("n’t")
        if not cue and w not in _IMPLICIT_NEG:
            continue
        if w in ("no", "none") and i > 0 and words[i - 1] in _QUANT_NO and not quantities:
            continue
        if w == "none" and ((i > 0 and words[i - 1] == "from") or words[i + 1:i + 2] == ["to"]):
            continue  # "ranging from none to 65 percent": zero, a quantity
        target = ""
        for nxt in words[i + 1:i + 5]:
            if nxt not in _STOP and nxt not in _AUX and nxt not in _NEG_CUES:
                target = stem(nxt)
                if nxt in META_VERBS:
                    target = "META"
                break
        if target != "META":  # "never discusses spent cells": about the document, not a fact of it
            out.append((w, target))
    return out


def _neg_parity(text: str, negated_in: str = "") -> int:
    """Parity of the negation cues of ``text``; a cue whose negated word ``negated_in`` also
    negates ("a worker who did not know the group" against the source's "did not know") is
    matched there and left out."""
    other = {t for _, t in _neg_cues(negated_in, quantities=True)} if negated_in else set()
    other |= {stem(w[2:]) for w in _words(negated_in) if w.startswith("un") and len(w) > 5}  # "untested"
    return sum(1 for _, t in _neg_cues(text) if not (t and t in other)) % 2


@rule("negation-in-clause", lambda p: (p.claim, p.texts(p.aligned)))
def check_clause_negation(claim: str, aligned_sentences: list[str]) -> list[Finding]:
    """The claim negates what its aligned source clause affirms, or the reverse (parity of the
    negation cues, a cue matched by the same negated word on the other side left out); and "did
    not change / differ" read as "the same": the claim says it changed where the source says it
    did not, or the reverse."""
    aligned_sentences = comparable(claim, aligned_sentences)
    if not aligned_sentences:
        return []
    region = " ".join(aligned_sentences[:2])
    claim_clauses = clauses(claim) or [claim]
    for cl in claim_clauses:
        clause, score = _best_clause_of(cl, aligned_sentences[:3])
        if score <= 0.5:
            continue
        c_same, s_same = bool(_SAME.search(cl) or _SAME_WORDS.search(cl)), bool(_SAME.search(clause)
                                                                              or _SAME_WORDS.search(clause))
        if s_same and not c_same and _CHANGE_WORDS.search(cl) and not _neg_parity(cl):
            return [Finding("negation", f"the claim says it changed where the source says it did not: "
                                        f"\"{C_clip(clause)}\"")]
        if c_same and not s_same and _CHANGE_WORDS.search(clause) and not _SAME.search(cl):
            return [Finding("negation", f"the claim says it did not change where the source says it did: "
                                        f"\"{C_clip(clause)}\"")]
        if c_same or s_same:
            continue
        mine = _neg_parity(cl, negated_in=region + " " + clause)
        theirs = _neg_parity(clause, negated_in=claim)  # "..., with no loss of service" / "... without any loss"
        if mine != theirs:
            return [Finding("negation", f"the claim {'negates' if mine else 'affirms'} what the source "
                                        f"{'affirms' if mine else 'negates'}: \"{C_clip(clause)}\"")]
    return []


def _window(toks: list[Tok], i: int, n: int = 3) -> set[str]:
    """Up to n content words on each side of token i within its clause (lemmas), and numbers."""
    out: set[str] = set()
    for rng in (range(i - 1, -1, -1), range(i + 1, len(toks))):
        d = 0
        for j in rng:
            x = toks[j]
            if (x.kind == "punct" and x.text in ";:.!?()") or d >= n:
                break
            if x.kind == "num":
                out.add("#" + x.value)
                d += 1
            elif x.kind == "word" and _content(x) and x.low not in _RELATIONAL and x.low not in _LIGHT:
                out.add(lemma(x.low))
                d += 1
    return out


_NO_TARGET = {"chang", "diffe", "vary", "varie", "SAMEMARK".lower()[:5], "samem", "only", "just", "also", "about",
              "more", "less", "fewer", "even", "until"}


def _targets(text: str) -> list[tuple[int, str]]:
    """Negated words: (token index of the word a real negation cue negates, its stem)."""
    toks = tokenize(_SAME.sub(" SAMEMARK ", text))
    out = []
    for i, t in enumerate(toks):
        if t.kind != "word" or not (t.low in ("not", "never", "cannot") or t.low.endswith("n't")
                                    or t.low.endswith("n’t")):
            continue  # "no secure parking", "without reminders" negate a thing, not what is said of it
        for j in range(i + 1, min(len(toks), i + 5)):
            x = toks[j]
            if x.kind != "word":
                break
            if x.low not in _STOP and x.low not in _AUX and x.low not in _NEG_CUES:
                if stem(x.low) not in _NO_TARGET and x.low not in META_VERBS:
                    out.append((j, stem(x.low)))
                break
    return out


def negated_stems(sentences: list[str]) -> set[str]:
    """Every word some sentence negates ("could not read"), or says with un- ("untreated")."""
    out: set[str] = set()
    for x in sentences:
        out |= {t for _, t in _targets(x)} | {stem(w[2:]) for w in _words(x) if w.startswith("un") and len(w) > 5}
    return out


def negated(src: SourceIndex) -> set[str]:
    """Every word some sentence of the source negates, read once per source (negated_stems)."""
    return src.memo("negated", lambda s: negated_stems(s.sentences))


def plain(src: SourceIndex) -> set[str]:
    """Every word some sentence says plainly, not as what a negation negates (stems)."""
    return src.memo("plain", lambda s: {stem(t.low) for x in s.sentences
                                        for targets in [{j for j, _ in _targets(x)}]
                                        for j, t in enumerate(tokenize(_SAME.sub(" SAMEMARK ", x)))
                                        if t.kind == "word" and j not in targets})


@rule("negation-target", lambda p: (p.claim, p.texts(p.aligned[:2] + p.held), negated(p.index)))
def check_negation_targets(claim: str, sentences: list[str], everywhere: set[str] | None = None) -> list[Finding]:
    """Negation read word by word: the claim negates a word the source says plainly of the same
    things ("will not protect about 11,000 homes" / "protect about 11,000 homes"), or says plainly
    what the source negates ("a field worker who did know the group" / "who did not know").
    A word negated in both, or said plainly in both, is no flip; nor is one the source says both ways."""
    sentences = [x for x in sentences if not C.is_heading(x)]
    if not sentences:
        return []
    ctoks = tokenize(_SAME.sub(" SAMEMARK ", claim))
    c_neg = _targets(claim)
    c_neg_stems = {t for _, t in c_neg}
    c_un = {stem(w[2:]) for w in _words(claim) if w.startswith("un") and len(w) > 5}
    s_data = []
    for x in sentences:
        stoks = tokenize(_SAME.sub(" SAMEMARK ", x))
        negs = _targets(x)
        s_data.append((x, stoks, negs, {t for _, t in negs}
                       | {stem(w[2:]) for w in _words(x) if w.startswith("un") and len(w) > 5}))
    all_neg = set().union(*(d[3] for d in s_data)) | (everywhere or set())
    # the claim negates what the source says plainly
    for ci, t in c_neg:
        if t in all_neg:
            continue
        mine = _window(ctoks, ci)
        for x, stoks, negs, neg_stems in s_data:
            for si, st in enumerate(stoks):
                if st.kind == "word" and stem(st.low) == t and (_window(stoks, si) & mine):
                    return [Finding("negation", f"the claim negates {ctoks[ci].low!r} where the source says it: "
                                                f"\"{C_clip(x)}\"")]
    # the claim says plainly what the source negates
    for x, stoks, negs, neg_stems in s_data:
        for si, t in negs:
            if t in c_neg_stems or t in c_un:
                continue
            theirs = _window(stoks, si)
            for ci, ct in enumerate(ctoks):
                if ct.kind == "word" and stem(ct.low) == t and (_window(ctoks, ci) & theirs):
                    return [Finding("negation", f"the claim affirms {ct.low!r} where the source negates it: "
                                                f"\"{C_clip(x)}\"")]
    return []


_BE = {"is", "are", "was", "were", "be", "been", "being"}


@rule("only-negated", lambda p: (p.claim, p.index))
def check_only_negated(claim: str, src: SourceIndex) -> list[Finding]:
    """A quality the claim affirms ("they are easy") that the source only ever denies ("The change
    was not easy to implement"), never says plainly: the claim says what the source says is not so,
    whatever its subject is called ("they", "later starts")."""
    ctoks = tokenize(claim)
    negated_here = {t for _, t in _targets(claim)}
    for i, t in enumerate(ctoks[1:], 1):
        if t.kind != "word" or ctoks[i - 1].low not in _BE or t.low in _STOP or t.low in _AUX or len(t.low) < 3:
            continue
        st = stem(t.low)
        if st in negated_here or st not in negated(src) or st in _NO_TARGET:
            continue
        if st not in plain(src):
            return [Finding("negation", f"the claim says {t.low!r}; the source only ever says it is not")]
    return []


#: Wrong claims this module's rules must flag, each with the right twin they must pass.
TWINS = (
    Twin("negation-in-clause", "Ferries that moved their sailings to the morning cut fuel use by about a fifth "
                               "without any loss of service.",
         wrong="Ferries that shifted their sailings to the morning cut fuel use by roughly a fifth, with a loss of "
               "service.",
         right="Ferries that shifted their sailings to the morning cut fuel use by roughly a fifth, with no loss of "
               "service.", note="with no and without say the same"),
    Twin("negation-in-clause", "The 40 piers were chosen to cover every district, covering ferry use from 0 to 65 "
                               "percent.",
         wrong="The piers were not chosen to cover every district, with ferry use ranging from none to 65 percent.",
         right="The piers cover every district, with ferry use ranging from none to 65 percent.",
         note="none in a range is zero"),
    Twin("negation-target", "The barrier will protect about 11,000 homes from flooding.",
         wrong="The barrier will not protect about 11,000 homes from flooding.",
         right="The barrier will protect about 11,000 homes from flooding."),
    Twin("only-negated", "The switch to electric ferries was not easy to plan. Crews needed new training.",
         wrong="Electric ferries work, but they are easy.", right="Electric ferries work, but they are not easy."),
)
