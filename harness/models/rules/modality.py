"""Modality: the claim asserts what the source only hedges.

Four rules, each reading the aligned source clause against the claim's clause:

- a verb the source hedges ("may reduce", "could work", "would save", "is likely to close") that
  the claim states as a fact or a certainty ("reduces", "will work", "saves", "closed"), with no
  hedge of its own near it;
- evidence told as proof: "shows" / "proves" where the source says "suggests" / "indicates";
- association told as cause: "causes" / "leads to" where it says "is associated with" / "is
  linked to";
- a number the source only ever gives as a bound or as not reached ("up to 40 square metres",
  "as many as 300", "nearly 30 percent") told bare ("40 square metres", "30 percent").

A claim that hedges too ("may", "can", "could", "is allowed to", "is likely to", "up to",
"about") or that negates the verb is left alone (negation.py reads negation). An approximate
number told bare ("11,000 homes" where the source says "about 11,000") is not flagged: the
suite's approved golden answers do exactly that ("1.6 times the rate" for "about 1.6 times",
"to reach 100,000 installations" for "roughly 100,000"), so it is a paraphrase by the
project's own labels, not an error.
"""

from __future__ import annotations

from harness.models.rules.pair import SourceIndex, Twin, rule
from harness.models.rules.text import (
    C_clip, Finding, Tok, _best_clause_of, _num_kind, clauses, comparable, lemma, number_uses, tokenize,
)

#: Words that hedge the verb after them in the source: "may reduce", "could work", "would save",
#: "is likely to close", "potentially lowers". ("can" is left out: "gates that can be closed within
#: 30 minutes" says what they are able to do, and a claim that they close in 30 minutes is fair.)
HEDGE_MODALS = frozenset({"may", "might", "could", "would", "likely", "possibly", "perhaps", "potentially"})
#: Verbs that report what someone said or decided: a "would" after one is a reported "will".
REPORTING = frozenset({"said", "says", "told", "announced", "confirmed", "stated", "added", "promised", "agreed",
                       "decided", "warned", "explained", "wrote", "reported", "pledged", "insisted", "declared"})
#: Words that leave a claim's verb hedged (or a permission, not a fact): "can work", "is likely to".
CLAIM_HEDGES = frozenset({"may", "might", "could", "can", "would", "should", "possibly", "perhaps", "likely",
                          "probably", "potentially", "unlikely", "allowed", "permitted",
                          "option", "able", "suggest", "suggests", "suggested", "appear", "appears", "appeared",
                          "seem", "seems", "seemed", "expected", "aim", "aims", "hope", "hopes", "plan", "plans",
                          "if", "whether", "help", "helps", "helped", "risk", "chance", "not", "never", "no",
                          "cannot", "can't", "won't", "wouldn't", "couldn't", "mightn't", "or"})
#: Words right after a claim's verb that leave it hedged: "Working abroad is allowed".
AFTER_HEDGES = frozenset({"allowed", "permitted", "possible", "optional", "likely", "may", "might", "could", "can"})
#: Words skipped between a hedge and its verb: "may also reduce", "could eventually be cut".
_BETWEEN = frozenset({"also", "even", "still", "well", "eventually", "further", "significantly", "substantially",
                      "slightly", "partly", "in", "turn", "be", "have", "been", "help", "to", "then", "one", "day"})
#: Tentative evidence verbs of a source, and the certain ones a claim may put in their place.
TENTATIVE = frozenset({"suggest", "suggests", "suggested", "indicate", "indicates", "indicated", "hint", "hints",
                       "hinted", "imply", "implies", "implied"})
CERTAIN = frozenset({"show", "shows", "showed", "shown", "prove", "proves", "proved", "proven", "demonstrate",
                     "demonstrates", "demonstrated", "confirm", "confirms", "confirmed", "establish",
                     "establishes", "established"})
#: Association in a source, and causation a claim may put in its place.
ASSOCIATION = ("associated with", "linked to", "linked with", "correlated with", "tied to", "related to",
               "correlation", "association")
CAUSATION = frozenset({"cause", "causes", "caused", "causing", "leads to", "led to", "lead to", "results in",
                       "resulted in", "result in", "drives", "drove", "drive"})
#: What bounds a number, or says it is not reached: "up to 40", "as many as 300", "nearly 30".
NUMBER_BOUNDS = (("nearly",), ("almost",), ("up", "to"), ("as", "many", "as"), ("as", "much", "as"),
                 ("at", "most"), ("maximum", "of"), ("upwards", "of"), ("no", "more", "than"), ("just", "under"))
#: What only approximates a number: told bare, it is the same figure rounded (not flagged).
NUMBER_APPROXIMATIONS = (("about",), ("around",), ("approximately",), ("roughly",), ("some",), ("circa",),
                         ("ca",), ("~",), ("estimated",), ("an", "estimated"))
#: Words before a claim's number that keep it hedged or bounded (any of these: not a bare number).
CLAIM_NUMBER_HEDGES = frozenset({"about", "around", "approximately", "roughly", "nearly", "almost", "some", "circa",
                                 "ca", "~", "approx", "to", "many", "much", "estimated", "most", "maximum",
                                 "max", "upwards", "over", "under", "more", "less", "fewer", "than", "above",
                                 "below", "least", "close", "just", "within", "between", "and", "or", "from",
                                 "only", "averaged", "average", "approx."})


def _forms(word: str) -> set[str]:
    """The forms a verb is matched by: itself, its lemma, and its stem without -s, -es, -ed, -d,
    -ing (with and without a final e): "saves" and "save", "closed" and "close", "working" and "work"."""
    out = {word, lemma(word)}
    for suf in ("s", "es", "ed", "d", "ing"):
        if word.endswith(suf) and len(word) - len(suf) >= 3:
            base = word[: -len(suf)]
            out |= {base, base + "e"}
    return out


def _hedged_verbs(toks: list[Tok]) -> tuple[dict[str, str], set[int]]:
    """The verbs a hedge governs: {each form of the verb (_forms): "may reduce"}, and their token indices."""
    out: dict[str, str] = {}
    at: set[int] = set()
    for i, t in enumerate(toks):
        if t.kind != "word" or t.low not in HEDGE_MODALS:
            continue
        if t.low == "would" and any(x.low in REPORTING for x in toks[:i]):
            continue  # "Lindgren said the company would close two factories", "the agency said the barrier
            # had been closed twice and would be operated by 12 staff": a reported "will", no hedge
        j, taken = i + 1, 0
        while j < len(toks) and j <= i + 5 and taken < 2:
            x = toks[j]
            if x.kind != "word" or x.low in ("not", "never", "n't"):
                break
            if x.low not in _BETWEEN:
                for form in _forms(x.low):
                    out.setdefault(form, f"{t.low} {x.low}")
                at.add(j)
                taken += 1
                if taken == 1 and x.low not in ("help", "need", "want"):
                    break
            j += 1
    return out, at


def _bigrams(toks: list[Tok], skip: set[int] = frozenset(), at: int | None = None) -> set[tuple[str, str, str]]:
    """A word with its left and with its right neighbour ((word, "L", left), (word, "R", right)),
    for every word not in ``skip`` (or for the word ``at`` only)."""
    out = set()
    for j in ([at] if at is not None else range(len(toks))):
        if toks[j].kind != "word" or j in skip:
            continue
        if j > 0:
            out.add((toks[j].low, "L", toks[j - 1].low))
        if j + 1 < len(toks):
            out.add((toks[j].low, "R", toks[j + 1].low))
    return out


def _claim_hedged(toks: list[Tok], i: int) -> bool:
    """A hedge, a permission or a negation within five words before the claim's verb at token i,
    or a permission or hedge right after it ("Working abroad is allowed", "... is possible")."""
    def hedge(x: Tok) -> bool:
        return x.kind == "word" and (x.low in CLAIM_HEDGES or x.low.endswith(("n't", "n’t")))
    after = []
    for x in toks[i + 1:i + 6]:
        if x.kind == "punct":
            break  # its own clause only
        after.append(x.low)
    return any(hedge(x) for x in toks[max(0, i - 5):i]) or bool(AFTER_HEDGES.intersection(after))


def _about_clauses(claim: str, aligned_sentences: list[str]):
    """Each clause of the claim with the source clause it is about (closest clause of the aligned
    sentences, word overlap above 0.5) and the sentence that clause belongs to."""
    aligned_sentences = comparable(claim, aligned_sentences)
    for cl in (clauses(claim) or [claim]) if aligned_sentences else []:
        clause, score = _best_clause_of(cl, aligned_sentences[:3])
        if score > 0.5:
            yield cl, clause, next((x for x in aligned_sentences[:3] if clause in x), clause)


@rule("hedge-asserted", lambda p: (p.claim, p.texts(p.aligned)))
def check_hedge_asserted(claim: str, aligned_sentences: list[str]) -> list[Finding]:
    """A verb the aligned source sentence only hedges ("may reduce", "could work", "would save")
    that the claim states as a fact or a certainty ("reduces", "will work", "saves"), with no
    hedge, permission or negation of its own near it ("can work", "is allowed", "may not")."""
    for cl, _clause, sentence in _about_clauses(claim, aligned_sentences):
        # the hedge may sit in another clause of that sentence ("a target of 12 percent, which would
        # save ...": the claim's "the 12 percent target saves" joins the two)
        stoks = tokenize(sentence)
        hedged, governed = _hedged_verbs(stoks)
        # a word the sentence also says, with the same neighbour, where no hedge governs it is the
        # source's own ("20 working days" beside "may work")
        plain = _bigrams(stoks, skip=governed)
        ctoks = tokenize(cl)
        for i, t in enumerate(ctoks):
            if t.kind != "word" or t.low in HEDGE_MODALS or t.low in CLAIM_HEDGES or _bigrams(ctoks, at=i) & plain:
                continue
            said = next((hedged[f] for f in _forms(t.low) if f in hedged), None)
            if said and not _claim_hedged(ctoks, i):
                before = ctoks[i - 1].low if i > 0 and ctoks[i - 1].low in ("will", "shall", "must") else ""
                return [Finding("modality", f"{(before + ' ') if before else ''}{t.low!r} where the source only says "
                                            f"{said!r}: \"{C_clip(sentence)}\"")]
    return []


@rule("evidence-as-proof", lambda p: (p.claim, p.texts(p.aligned)))
def check_evidence_as_proof(claim: str, aligned_sentences: list[str]) -> list[Finding]:
    """Tentative evidence told as proof: "the results show / prove / confirm" where the aligned
    source clause says they "suggest / indicate", and its sentences never use a certain verb."""
    sentence_words = {t.low for x in comparable(claim, aligned_sentences)[:2] for t in tokenize(x) if t.kind == "word"}
    for cl, clause, _sentence in _about_clauses(claim, aligned_sentences):
        theirs = {t.low for t in tokenize(clause) if t.kind == "word"}
        certain = {t.low for t in tokenize(cl) if t.kind == "word"} & CERTAIN
        if certain and theirs & TENTATIVE and not sentence_words & CERTAIN:
            return [Finding("modality", f"{sorted(certain)[0]!r} where the source only says "
                                        f"{sorted(theirs & TENTATIVE)[0]!r}: \"{C_clip(clause)}\"")]
    return []


@rule("association-as-cause", lambda p: (p.claim, p.texts(p.aligned)))
def check_association_as_cause(claim: str, aligned_sentences: list[str]) -> list[Finding]:
    """An association told as a cause: "short sleep causes poor mood" / "leads to" where the
    aligned source clause says it "is linked to / associated with" it, and its sentences never
    say it causes or leads to it."""
    source_low = " ".join(t.low for x in comparable(claim, aligned_sentences)[:2] for t in tokenize(x))
    for cl, clause, _sentence in _about_clauses(claim, aligned_sentences):
        low = " ".join(t.low for t in tokenize(cl))
        cause = sorted(c for c in CAUSATION if f" {c} " in f" {low} ")
        assoc = [a for a in ASSOCIATION if a in " ".join(t.low for t in tokenize(clause))]
        if cause and assoc and not any(f" {c} " in f" {source_low} " for c in CAUSATION) \
                and not any(f" {lemma(c.split()[0])}" in f" {source_low}" for c in cause):
            return [Finding("modality", f"{cause[0]!r} where the source only says {assoc[0]!r}: "
                                        f"\"{C_clip(clause)}\"")]
    return []


def _number_hedge(toks: list[Tok], i: int) -> str:
    """The hedge or bound said right before the number at token i ("up to", "about"), or ""."""
    words = [t.low for t in toks[max(0, i - 3):i]]
    for h in sorted(NUMBER_BOUNDS + NUMBER_APPROXIMATIONS, key=len, reverse=True):
        if tuple(words[-len(h):]) == h:
            return " ".join(h)
    return ""


@rule("bare-number", lambda p: (p.toks, p.index, p.aligned))
def check_bare_number(claim_toks: list[Tok], src: SourceIndex, aligned: list[int]) -> list[Finding]:
    """A number the source only ever gives hedged, at least once as a bound or as not reached
    ("up to 40 square metres", "as many as 300 homes", "nearly 30 percent"), told bare by the
    claim ("40 square metres", "30 percent"): the claim asserts a ceiling or an amount not
    reached as the amount. ("about 11,000" told as "11,000" is a rounding: not flagged.)"""
    for u in number_uses(claim_toks):
        if _num_kind(u.value) != "amount":
            continue
        before = claim_toks[u.index - 1] if u.index > 0 else None
        if before is not None and (before.low in CLAIM_NUMBER_HEDGES
                                   or (before.kind == "punct" and before.text in ("-", "–"))):
            continue
        nxt = claim_toks[u.index + 1].low if u.index + 1 < len(claim_toks) else ""
        if nxt in ("to", "-", "–", "or", "and") or nxt.startswith("+"):
            continue  # a range: "30 to 40"
        occ = src.occurrences(u.value)
        if not occ or not any(k in aligned[:3] for k, _ in occ):
            continue
        hedges = [_number_hedge(src.toks[k], su.index) for k, su in occ]
        if all(hedges) and any(tuple(h.split()) in NUMBER_BOUNDS for h in hedges):
            k = next(k for k, _ in occ if k in aligned[:3])
            return [Finding("modality", f"{u.value} where the source only says {hedges[0]!r} {u.value}: "
                                        f"\"{C_clip(src.sentences[k])}\"")]
    return []


_POLICY = ("Eligible employees may work from home up to two days a week. Managers must respond within 10 working "
           "days.")
_BOUNDS = ("The purifier is for rooms of up to 40 square metres. Nearly 30 percent of buyers chose the larger "
           "filter. The barrier will protect about 11,000 homes.")
_TRIAL = ("Reminders may reduce missed doses among older patients. The results suggest that text reminders help "
          "adherence. Higher screen time was associated with shorter sleep.")

#: Wrong claims this module's rules must flag, each with the right twin they must pass.
TWINS = (
    Twin("hedge-asserted", _POLICY, wrong="Eligible employees will work from home two days a week.",
         right="Eligible employees may work from home two days a week.", note="may told as will (issue 22)"),
    Twin("hedge-asserted", _POLICY, wrong="Eligible employees work from home two days a week.",
         right="Eligible employees can work from home two days a week.", note="a permission told as a fact"),
    Twin("hedge-asserted", "Employees may work abroad for up to 20 working days a year.",
         wrong="Employees will work abroad for up to 20 working days a year.",
         right="Employees may work abroad for up to 20 working days a year.",
         note="the source's own unhedged word (working days) is no asserted hedge"),
    Twin("hedge-asserted", "Lindgren said the company would close two of its eleven European factories. Closing a "
                           "third would save 95 million euros.",
         wrong="Closing a third factory saves 95 million euros.",
         right="Lindgren said the company will close two factories.",
         note="a reported would is a will; a conditional would is a hedge"),
    Twin("hedge-asserted", "The agency said the barrier had already been closed twice in test conditions and would "
                           "be operated by a team of 12 staff. A second barrier would cost 90 million pounds.",
         wrong="A second barrier costs 90 million pounds.",
         right="The barrier will be operated by a team of 12 staff.", note="a reported would, far from its said"),
    Twin("hedge-asserted", _TRIAL, wrong="Reminders reduce missed doses among older patients.",
         right="Reminders might reduce missed doses among older patients.", note="may reduce -> reduces"),
    Twin("hedge-asserted", "The review recommends a target of 12 percent, which would save 41 million litres a day.",
         wrong="The recommended 12 percent target saves 41 million litres a day.",
         right="The recommended 12 percent target would save 41 million litres a day.", note="would told as a fact"),
    Twin("evidence-as-proof", _TRIAL, wrong="The results show that text reminders help adherence.",
         right="The results suggest that text reminders help adherence.", note="suggest told as show"),
    Twin("association-as-cause", _TRIAL, wrong="Higher screen time causes shorter sleep.",
         right="Higher screen time was linked to shorter sleep.", note="association told as cause"),
    Twin("bare-number", _BOUNDS, wrong="The purifier is for rooms of 40 square metres.",
         right="The purifier is for rooms of up to 40 square metres.", note="a ceiling told as the amount"),
    Twin("bare-number", _BOUNDS, wrong="30 percent of buyers chose the larger filter.",
         right="The barrier will protect 11,000 homes.",
         note="an amount not reached told as reached; an approximation told bare is a rounding"),
    Twin("hedge-asserted", _POLICY, wrong="Working from home is what eligible employees do.",
         right="Working from home is allowed for eligible employees.", note="a permission after the verb"),
)
