"""The offline critic: grounding claims in the source by sentence embeddings and facts.

A claim is supported when a source sentence says nearly the same thing (max cosine at or
above ``support_min``) AND every number, month and capitalised name in the claim occurs
in the source AND the claim does not negate what its closest source sentence affirms (or
the reverse). A claim with a number, date or name the source lacks is unsupported, however
similar it sounds; a claim whose closest sentence is below ``unsupported_below`` is
unsupported; in between it is undecided (soft).

Rubric questions: an embedding cannot read a question, so the offline critic answers a
rubric only through the machine-checkable hints ``about`` / ``not_about`` written in the
case (score = share of hints held); without hints it says it cannot answer (unavailable),
never a made-up score. Answer similarity is the cosine of the reply and the expected answer.
"""

from __future__ import annotations

import re

from harness.models import claims as C
from harness.models.critic import ClaimVerdict, CriticStats, Judgement, RubricHints
from harness.models.embedder import cosine_matrix

VERSION = 1
#: A claim's numbers and names must occur in its TOP_K closest source sentences.
TOP_K = 2


def _clip(s: str, n: int = 160) -> str:
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1] + "…"


def _mentions(text: str, term: str) -> bool:
    """Case-insensitive word-prefix match (``finding`` matches ``findings``)."""
    return re.search(r"(?<!\w)" + re.escape(term.lower()), text.lower()) is not None


class OfflineCritic:
    def __init__(self, embedder, *, support_min: float = 0.55, unsupported_below: float = 0.35):
        self.embedder = embedder
        self.support_min = support_min
        self.unsupported_below = unsupported_below
        self.name = f"offline-grounding@{VERSION}+{embedder.name}"
        self.source = embedder.source
        self.stats = CriticStats()

    async def factuality(self, source: str, reply: str) -> Judgement:
        self.stats.calls += 1
        claim_list = C.claims(reply)
        if not claim_list:
            return Judgement(None, "", unavailable="the text holds no claim sentence to check")
        src = C.sentences(source)
        if not src:
            return Judgement(None, "", unavailable="the source document has no readable sentences")
        src_vecs = await self.embedder.embed(src, cache=True)
        claim_vecs = await self.embedder.embed(claim_list)
        sims = cosine_matrix(claim_vecs, src_vecs)
        src_numbers = C.source_numbers(source)
        src_names = C.names(source)
        src_words = {w.lower().strip("'’-") for w in re.findall(r"[A-Za-z][A-Za-z'’-]*", source)}
        src_words |= {w.removesuffix("'s").removesuffix("’s") for w in src_words}
        verdicts = []
        for i, claim in enumerate(claim_list):
            j = int(sims[i].argmax())
            best, sent = float(sims[i][j]), src[j]
            claim_numbers, claim_names = C.claim_numbers(claim), C.names(claim, src_names) | C.months(claim)
            missing_n = sorted(claim_numbers - src_numbers)
            missing_names = sorted(n for n in claim_names if n not in src_words)
            # Facts present in the source but far from what supports the claim: a swapped name
            # or a number moved from another finding.
            near = " ".join(src[k] for k in sims[i].argsort()[::-1][:TOP_K])
            near_words = {w.lower().strip("'’-") for w in re.findall(r"[A-Za-z][A-Za-z'’-]*", near)}
            near_words |= {w.removesuffix("'s").removesuffix("’s") for w in near_words}
            far_n = sorted(claim_numbers - set(missing_n) - C.source_numbers(near))
            far_names = sorted(n for n in claim_names if n in src_words and n not in near_words
                               and n.removesuffix("'s") not in near_words)
            closest = f"closest source sentence ({best:.2f}): \"{_clip(sent)}\""
            if missing_n or missing_names:
                what = ", ".join([f"number {n}" for n in missing_n] + [f"name {n!r}" for n in missing_names])
                verdicts.append(ClaimVerdict(claim, False, f"not in the source: {what}; {closest}", best))
            elif best < self.unsupported_below:
                verdicts.append(ClaimVerdict(claim, False, f"no source sentence says this; {closest}", best))
            elif far_n or far_names:
                what = ", ".join([f"number {n}" for n in far_n] + [f"name {n!r}" for n in far_names])
                verdicts.append(ClaimVerdict(claim, False, f"{what} occur in the source but not in the sentences "
                                                           f"that support this claim; {closest}", best))
            elif C.negations(claim) != C.negations(sent):
                verdicts.append(ClaimVerdict(claim, False if best >= self.support_min else None,
                                             f"the claim's negation differs from its closest source sentence; {closest}",
                                             best))
            elif best >= self.support_min:
                verdicts.append(ClaimVerdict(claim, True, f"supported by {closest}", best))
            else:
                verdicts.append(ClaimVerdict(claim, None, f"weakly related to the source; {closest}", best))
        supported = sum(1 for v in verdicts if v.supported)
        return Judgement(supported / len(verdicts), f"{supported}/{len(verdicts)} claims supported",
                         claims=tuple(verdicts))

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
        self.stats.calls += 1
        if not reply.strip():
            return Judgement(0.0, "the text is empty")
        vecs = await self.embedder.embed([reply, expected])
        score = max(0.0, float(cosine_matrix(vecs[:1], vecs[1:])[0][0]))
        return Judgement(score, f"embedding cosine {score:.2f} between the text and the expected answer")

    def report(self) -> dict:
        return self.stats.as_dict()
