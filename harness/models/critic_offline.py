"""The offline critic: claims aligned with source sentences, then compared within the pair.

Each claim sentence of the reply (headlines included) is aligned with its closest source
sentences (sentence-embedding cosine, plus shared numbers and content words), and then read
for meaning against them by the rules of harness.models.rules (one module per phenomenon):

- every number, month and capitalised name must occur in the source (else unsupported);
- numbers are bound to what they count: a number the source uses for something else, two
  numbers swapped, a number rescaled or turned from percent into an amount is unsupported;
- dates: day and month, month and year, must occur together in the source;
- direction words and antonyms (rose/fell, longer/shorter, kept/lost, more/less, before/after)
  and negation are compared with the aligned source clause;
- names: a name of the document put where the aligned sentence names someone else, or two
  names (or two groups: coated/uncoated, intervention/control) trading places;
- "the document doesn't say X" is judged too: unsupported when a source sentence says X.

With nothing contradicted, similarity decides: at or above ``support_min`` supported, below
``unsupported_below`` unsupported; in between, a claim whose content words all occur in the
source is supported, one with several words the source never uses is unsupported (invented),
else undecided (soft).

Rubric questions: an embedding cannot read a question, so the offline critic answers a
rubric only through the machine-checkable hints ``about`` / ``not_about`` written in the
case (score = share of hints held); without hints it says it cannot answer (unavailable),
never a made-up score. Answer similarity is the cosine of the reply and the expected answer.
"""

from __future__ import annotations

import re

from harness.models import claims as C
from harness.models import rules as R
from harness.models.critic import ClaimVerdict, CriticStats, Judgement, RubricHints
from harness.models.embedder import cosine_matrix
from harness.models.rules.antonyms import _POLAR_WORDS
from harness.models.rules.numbers import approximate_values, rounded_in, sums_to
from harness.models.rules.pair import SourceIndex
from harness.models.rules.refusals import affirmed_topic, check_affirmed, check_refusal, refusal_topic, split_refusal
from harness.models.rules.text import _NEG_CUES, _STOP, META_WORDS, stem, tokenize, word_keys

#: Derived from the rules (their names and text): a rule added or changed is a new version.
VERSION = R.version()
#: How many aligned source sentences a claim is compared with.
TOP_K = 3


def _clip(s: str, n: int = 160) -> str:
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1] + "…"


def _mentions(text: str, term: str) -> bool:
    """Case-insensitive word-prefix match (``finding`` matches ``findings``). A hint may list
    alternatives separated by ``|`` (``"doesn't say|does not say"``): any one of them holds it.
    Curly and straight apostrophes are the same letter."""
    low = text.lower().replace("’", "'")
    return any(re.search(r"(?<!\w)" + re.escape(alt.strip().lower().replace("’", "'")), low) is not None
               for alt in term.split("|") if alt.strip())


#: A lead-in that frames an answer without stating one ("The document says: ...").
_LEAD_IN = re.compile(r"^\s*(?:\w+\s+){0,3}\w+\s*:\s+(?=\S)")
#: Where an expected answer's clauses part.
_ANSWER_CLAUSE = re.compile(r"(?<=[,;:])\s+|\s+(?=(?:and|or|but|while|whereas|compared|towards|with|if)\s)")


def _answer_pieces(expected: str) -> list[str]:
    """The expected answer, its sentences and its clauses of two words or more."""
    out = [expected]
    for s in C.sentences(expected) or [expected]:
        out.append(s)
        out += [c.strip(" ,;:.") for c in _ANSWER_CLAUSE.split(s) if len(c.split()) >= 2]
    return list(dict.fromkeys(p for p in out if p))


def _stems_and_numbers(text: str) -> set[str]:
    return _content_stems(text) | C.claim_numbers(text)


#: Words that join or hedge facts without stating one: never "something the source never speaks of".
_GLUE = {"instead", "plus", "bit", "lot", "lots", "much", "really", "quite", "often", "overall", "even", "still",
         "meanwhile", "because", "thanks", "despite", "though", "although", "whole", "total", "altogether",
         "together", "found", "finds", "shows", "showed", "show", "according", "compared"}


def _content_stems(text: str) -> set[str]:
    return {stem(w) for w in C._WORD.findall(text)
            if w.lower() not in _STOP and w.lower() not in _GLUE and w.lower() not in C._WORD_NUMBERS and len(w) > 2}


def _novel(text: str, index: SourceIndex) -> list[str]:
    """Content words of the claim the source never uses, in any form or plain synonym
    ("rising" for "rose", "risks" for "obstacles"); a hyphenated word counts by its parts."""
    out = set()
    for w in C._WORD.findall(text):
        low = w.lower().strip("'’-")
        if low in _STOP or low in _GLUE or low in C._WORD_NUMBERS or low in META_WORDS or len(low) <= 2:
            continue  # "the article covers its results": words about the document, not facts of it
        parts = [x for x in low.split("-") if len(x) > 2 and x not in _STOP and x not in _GLUE] or [low]
        if any(not (word_keys(x) & index.all_keys) for x in parts):
            out.add(stem(low))
    return sorted(out)


#: Common abbreviations a reply uses for the source's words ("SMS reminders" for "text message reminders").
_ABBREVIATIONS = {"sms": "text message", "ceo": "chief executive", "cfo": "chief financial", "eu": "european union",
                  "uk": "united kingdom", "us": "united states", "usa": "united states", "un": "united nations",
                  "co2": "carbon", "gp": "doctor", "ev": "electric vehicle", "evs": "electric vehicles",
                  "hr": "human resources", "ai": "artificial intelligence", "gdp": "gross domestic product",
                  "r&d": "research development", "pv": "solar", "nhs": "health service", "uv": "ultraviolet"}


def _spelled_out(name: str, src_words: set[str], initials: str = "") -> bool:
    """An abbreviation whose words the source writes in full: a common one ("SMS" for "text
    message"), or the initials of words the source writes in a row ("EBITDA" for "earnings
    before interest, taxes, depreciation and amortisation", "Ah" for "ampere-hours")."""
    full = _ABBREVIATIONS.get(name)
    if full and all(w in src_words or w + "s" in src_words or w.rstrip("s") in src_words for w in full.split()):
        return True
    if not (2 <= len(name) <= 6 and name.isalpha() and initials):
        return False
    return (name in initials) if len(name) >= 3 else (f" {name}" in initials)  # two letters: a run's start only


def _words_of(text: str, stems: list[str]) -> set[str]:
    return {w.lower() for w in C._WORD.findall(text) if stem(w) in stems}


#: Source documents whose reading (sentences, index, numbers, words) the critic keeps.
SOURCES = 64


class _Source:
    """A source document as the critic reads it: its sentences, their index, its numbers and its
    words. Depends on the text alone (``OfflineCritic._source`` keeps it by the text)."""

    def __init__(self, source: str):
        self.sentences = C.sentences(source)
        self.index = SourceIndex(self.sentences, C.names(source))
        self.numbers = C.source_numbers(source)
        words = {w.lower().strip("'’-") for w in C._WORD.findall(source)}
        words |= {w.removesuffix("'s").removesuffix("’s") for w in words}
        words |= {p for w in list(words) for p in w.split("-")}
        self.words = words


class OfflineCritic:
    deterministic = True
    """The same code, embedder, reply and document give the same verdict (its health figures
    may be kept by content, ``factories.CriticService``)."""

    def __init__(self, embedder, *, support_min: float = 0.55, unsupported_below: float = 0.35):
        self.embedder = embedder
        self.support_min = support_min
        self.unsupported_below = unsupported_below
        self.name = f"offline-grounding@{VERSION}+{embedder.name}"
        self.source = embedder.source
        self.stats = CriticStats()
        self._sources: dict[str, _Source] = {}

    def _source(self, source: str) -> "_Source":
        """What the critic reads off a source document, made once per document text (the last
        ``SOURCES`` documents are kept, by their text)."""
        known = self._sources.get(source)
        if known is None:
            if len(self._sources) >= SOURCES:
                self._sources.pop(next(iter(self._sources)))
            known = self._sources[source] = _Source(source)
        return known

    @staticmethod
    def _claims(reply: str) -> list[str]:
        return [part for claim in C.claims(reply) for part in split_refusal(claim)]

    def factuality_texts(self, source: str, reply: str) -> tuple[list[str], list[str]]:
        """What ``factuality`` embeds for this reply: (the source's sentences, kept on disk by the
        embedder; the reply's claims); nothing when it would embed nothing."""
        claim_list = self._claims(reply)
        src = self._source(source).sentences if claim_list else []
        return (src, claim_list) if src else ([], [])

    def answer_texts(self, reply: str, expected: str) -> list[str]:
        """What ``answer`` embeds for this reply and expected answer."""
        if not reply.strip():
            return []
        return [reply, _LEAD_IN.sub("", reply.strip(), count=1), *_answer_pieces(expected)]

    async def ahead(self, factuality=(), answers=()) -> None:
        """Embed at once what ``factuality`` (``(source, reply)`` pairs) and ``answer``
        (``(reply, expected)`` pairs) will embed: one request per kind, which the embedding
        model encodes sorted by length, instead of one small batch per call (a caller with
        many calls ahead, as harness judges and the health set have). The verdicts are the
        calls' own, made after."""
        cached: dict[str, None] = {}
        plain: dict[str, None] = {}
        for source, reply in factuality:
            src, claim_list = self.factuality_texts(source, reply)
            cached.update(dict.fromkeys(src))
            plain.update(dict.fromkeys(claim_list))
        for reply, expected in answers:
            plain.update(dict.fromkeys(self.answer_texts(reply, expected)))
        import asyncio

        await asyncio.gather(*([self.embedder.embed(list(cached), cache=True)] if cached else []),
                             *([self.embedder.embed(list(plain))] if plain else []))  # queued together

    async def factuality(self, source: str, reply: str) -> Judgement:
        self.stats.calls += 1
        claim_list = self._claims(reply)
        if not claim_list:
            return Judgement(None, "", unavailable="the text holds no claim sentence to check")
        read = self._source(source)
        src = read.sentences
        if not src:
            return Judgement(None, "", unavailable="the source document has no readable sentences")
        src_vecs = await self.embedder.embed(src, cache=True)
        claim_vecs = await self.embedder.embed(claim_list)
        sims = cosine_matrix(claim_vecs, src_vecs)
        verdicts = [self._judge(claim, sims[i], src, read.index, read.numbers, read.words)
                    for i, claim in enumerate(claim_list)]
        supported = sum(1 for v in verdicts if v.supported)
        return Judgement(supported / len(verdicts), f"{supported}/{len(verdicts)} claims supported",
                         claims=tuple(verdicts))

    def _align(self, claim: str, sims_row, index: SourceIndex) -> list[int]:
        """Source sentences by closeness: cosine, plus shared numbers and content words."""
        claim_stems = _content_stems(claim)
        claim_nums = C.claim_numbers(claim)
        scored = []
        for k in sims_row.argsort()[::-1][:12]:
            k = int(k)
            shared = len(claim_stems & index.stems[k]) / max(1.0, len(claim_stems) ** 0.5 * 2)
            nums = len(claim_nums & {u.value for u in index.uses[k]})
            scored.append((float(sims_row[k]) + 0.25 * shared + 0.08 * nums, k))
        for k, uses in enumerate(index.uses):  # a sentence holding two of the claim's numbers is a candidate
            if len(claim_nums & {u.value for u in uses}) >= 2 and all(k != j for _, j in scored):
                shared = len(claim_stems & index.stems[k]) / max(1.0, len(claim_stems) ** 0.5 * 2)
                scored.append((float(sims_row[k]) + 0.25 * shared + 0.08 * 2, k))
        return [k for _, k in sorted(scored, reverse=True)]

    def _judge(self, claim: str, sims_row, src: list[str], index: SourceIndex, src_numbers: set[str],
               src_words: set[str]) -> ClaimVerdict:
        j = int(sims_row.argmax())
        best, sent = float(sims_row[j]), src[j]
        closest = f"closest source sentence ({best:.2f}): \"{_clip(sent)}\""
        heading = C.is_heading(claim)

        topic = refusal_topic(claim)
        if topic is not None:
            finding = check_refusal(topic, index)
            if finding:
                return ClaimVerdict(claim, False, f"says the document does not say it, but {finding.what}", best)
            return ClaimVerdict(claim, True, "says the document does not cover "
                                + (" ".join(topic) if topic else "the question")
                                + "; no source sentence does", best)

        affirmed = affirmed_topic(claim)
        if affirmed is not None:
            finding = check_affirmed(affirmed, index)
            if finding:
                return ClaimVerdict(claim, False, finding.what, best)

        claim_numbers = C.claim_numbers(claim)
        names = set() if heading else C.names(claim, index.names)
        names |= C.months(claim)
        aligned = self._align(claim, sims_row, index)[:TOP_K]
        toks = tokenize(claim)
        approx = approximate_values(toks)
        # "about 4 degrees" where the aligned sentence says 4.2: a rounding, not a new number
        missing_n = sorted(n for n in claim_numbers - src_numbers
                           if not (n in approx and rounded_in(n, index, aligned))
                           and not sums_to(n, index, aligned))
        src_times = {u.value for uses in index.uses for u in uses if ":" in u.value}
        missing_n += sorted({t.value for t in toks if t.kind == "num" and ":" in t.value} - src_times)  # 9:00
        missing_names = sorted(n for n in names if n not in src_words and not _spelled_out(n, src_words, index.initials))
        # a code (grant HF-2021-0457, filter AN-F40) is one word: the source must write it as it is
        missing_names += sorted({t.low for t in toks if t.kind == "word" and "-" in t.low and any(c.isdigit() for c in t.low)
                                 and t.low not in index.codes})
        if missing_n or missing_names:
            what = ", ".join([f"number {n}" for n in missing_n] + [f"name {n!r}" for n in missing_names])
            return ClaimVerdict(claim, False, f"not in the source: {what}; {closest}", best)

        findings = R.first_finding(R.pair(claim, index, aligned))
        if findings:
            f = findings[0]
            return ClaimVerdict(claim, False, f"{f.kind}: {f.what}", best)

        top = aligned[0] if aligned else j
        near = f"aligned source sentence ({float(sims_row[top]):.2f}): \"{_clip(src[top])}\""
        if best >= self.support_min:
            return ClaimVerdict(claim, True, f"supported by {near}", best)
        novel = _novel(claim, index)
        if heading and len(novel) <= 1:
            return ClaimVerdict(claim, True, f"a headline nothing in the source contradicts; {near}", best)
        if best < self.unsupported_below:
            return ClaimVerdict(claim, False, f"no source sentence says this; {closest}", best)
        if not novel:
            return ClaimVerdict(claim, True, f"every word of it is the source's; {near}", best)
        if len(novel) >= 3 or len(novel) / max(1, len(_content_stems(claim))) >= 0.4:
            return ClaimVerdict(claim, False, f"the source never speaks of {', '.join(novel[:4])}; {closest}", best)
        if len(novel) <= 2 and not any(w in _POLAR_WORDS or w in _NEG_CUES for w in _words_of(claim, novel)):
            # nothing contradicted, close to the source, one or two plain words of its own ("work", "adapt")
            return ClaimVerdict(claim, True, f"the source's words but for {', '.join(novel)}; {near}", best)
        return ClaimVerdict(claim, None, f"weakly related to the source; {closest}", best)

    async def rubric(self, source: str, reply: str, question: str, hints: RubricHints) -> Judgement:
        self.stats.calls += 1
        if not hints:
            return Judgement(None, "", unavailable="the offline critic cannot answer rubric questions without "
                                                   "machine-checkable hints (about / not_about)")
        held, notes = 0, []
        for term in hints.about:
            ok = _mentions(reply, term)
            held += ok
            notes.append(f"mentions {term!r}: {'yes' if ok else 'no'}")
        for term in hints.not_about:
            ok = not _mentions(reply, term)
            held += ok
            notes.append(f"avoids {term!r}: {'yes' if ok else 'no'}")
        total = len(hints.about) + len(hints.not_about)
        return Judgement(held / total, f"{held}/{total} hints held ({'; '.join(notes)})")

    async def answer(self, reply: str, expected: str) -> Judgement:
        """Cosine of the text and the expected answer; a terse answer is also judged against
        the expected answer's best-matching clause (``About 11,000 homes.`` against "protect
        about 11,000 homes"): their cosine, raised toward 1 by half the share of the answer's
        content words and numbers that clause holds (``cos + (1 - cos) * shared / 2``). The clause only counts when every number of the
        answer is one of the expected answer's (a changed number never matches a clause)."""
        self.stats.calls += 1
        if not reply.strip():
            return Judgement(0.0, "the text is empty")
        texts = self.answer_texts(reply, expected)
        body, pieces = texts[1], texts[2:]
        vecs = await self.embedder.embed(texts)
        sims = cosine_matrix(vecs[:2], vecs[2:])
        whole = max(0.0, float(sims[0][0]))
        why = f"embedding cosine {whole:.2f} between the text and the expected answer"
        mine = _stems_and_numbers(body)
        if len(mine) < 2 or not C.claim_numbers(body) <= (C.claim_numbers(expected) | C.source_numbers(expected)):
            return Judgement(whole, why)
        best, best_piece = whole, ""
        for k, piece in enumerate(pieces):
            shared = len(mine & _stems_and_numbers(piece)) / len(mine)
            cos = max(0.0, float(sims[0][k]), float(sims[1][k]))
            score = cos + (1 - cos) * shared / 2
            if score > best:
                best, best_piece, cos_best, shared_best = score, piece, cos, shared
        if not best_piece:
            return Judgement(whole, why)
        return Judgement(best, f"{why}; {best:.2f} against its clause \"{_clip(best_piece, 80)}\" "
                               f"(cosine {cos_best:.2f}, shared words {shared_best:.0%})")

    def report(self) -> dict:
        return self.stats.as_dict()
