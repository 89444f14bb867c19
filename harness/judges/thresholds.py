"""Similarity thresholds from data: each case's goldens against its own wrong answers.

For a judged case, with the text its similarity check reads (reply or post, in the frame):

- ``right``: each golden answer scored against the case's *other* golden answers (leave
  one out: how a right answer worded differently scores), when it has two or more;
- ``wrong``: each mutation scored against all the golden answers, as the check scores it.
  Small edits (a digit, a name) score near 1 and no threshold can catch them; answers that
  are wrong as a whole (substitution, stale) are what a threshold can separate.

Proposal: halfway between the lowest right score and the highest whole-answer-wrong score
when the first is higher (``separable``), rounded down to 0.01; else no proposal (the
embedding cannot separate them; contrast and the other judges must). Proposals are
written to judges.json, never applied automatically, and a threshold is only ever raised
toward them (never lowered to let an agent pass).
"""

from __future__ import annotations

import math
from typing import Any

from harness.checks.base import joined_text
from harness.judges import cache as C
from harness.judges.evaluate import observation
from harness.judges.suite import Mutation, Subject

WHOLE = ("substitution", "stale")
DEFAULT = 0.75


def _params(subject: Subject) -> dict:
    for spec in subject.case.turns[subject.turn].checks:
        if spec.name == "similarity":
            return spec.params or {}
    return {}


def _text(subject: Subject, reply: str, post: str, of: str) -> str:
    return joined_text(observation(subject.case, subject.turn, reply, post), subject.turn, of)


def texts(subject: Subject, muts: list[Mutation]) -> tuple[list[str], list[str], list[str]]:
    """What ``scores`` embeds: the golden answers (kept on disk), the framed goldens and the
    mutations' texts."""
    of = _params(subject).get("of", "reply")
    framed = [_text(subject, *subject.render(a), of) for a in subject.answers]
    wrong = [_text(subject, m.reply, m.post, of) for m in muts]
    return list(subject.answers), framed, [t if t.strip() else " " for t in wrong]


async def scores(subject: Subject, muts: list[Mutation], embedder) -> dict[str, Any]:
    from harness.models.embedder import cosine_matrix

    answers, framed, wrong_texts = texts(subject, muts)
    gold = await embedder.embed(answers, cache=True)
    rights = []
    fvecs = await embedder.embed(framed)
    sims = cosine_matrix(fvecs, gold)
    n = len(subject.answers)
    if n > 1:
        for i in range(n):
            rights.append(max(float(sims[i][j]) for j in range(n) if j != i))
    wrong: dict[str, list[float]] = {}
    if wrong_texts:
        mvecs = await embedder.embed(wrong_texts)
        msims = cosine_matrix(mvecs, gold)
        for m, row in zip(muts, msims):
            wrong.setdefault(m.kind, []).append(float(max(row)))
    return {"right": rights, "wrong": wrong}


def proposal(current: float, right: list[float], wrong: dict[str, list[float]]) -> dict[str, Any]:
    whole = [s for k in WHOLE for s in wrong.get(k, [])]
    lo = min(right) if right else None
    hi = max(whole) if whole else None
    out: dict[str, Any] = {
        "current": current,
        "right_min": round(lo, 4) if lo is not None else None,
        "wrong_whole_max": round(hi, 4) if hi is not None else None,
        "wrong_max_by_kind": {k: round(max(v), 4) for k, v in sorted(wrong.items()) if v},
        "mutations_passing_current": sum(1 for v in wrong.values() for s in v if s >= current),
    }
    if lo is not None and hi is not None and lo > hi:
        out["separable"] = True
        out["proposed"] = math.floor((lo + hi) / 2 * 100) / 100
    else:
        out["separable"] = False
        out["proposed"] = None
    return out


def key_of(subject: Subject, muts: list[Mutation], base: str) -> str:
    """The verdict cache's key of a case's scores."""
    return C.digest(base, "scores", subject.case.id, subject.answers, [(m.reply, m.post) for m in muts],
                    _params(subject))


async def propose(subs: list[Subject], muts: dict[str, list[Mutation]], services, cache, base: str) -> dict:
    embedder = services.get("embedder")
    from harness.models.settings import embedding_settings

    import asyncio

    default = embedding_settings(services.config).threshold

    async def scored(s: Subject) -> dict:
        key = key_of(s, muts.get(s.case.id, []), base)
        sc = cache.get(key)
        if sc is None:
            sc = await scores(s, muts.get(s.case.id, []), embedder)
            cache.put(key, sc)
        return sc

    # every case's scores at once: the embedder batches their texts together (cases are independent)
    all_scores = await asyncio.gather(*(scored(s) for s in subs))
    out = {}
    for s, sc in zip(subs, all_scores):
        params = _params(s)
        current = float(params.get("min", default))
        entry = proposal(current, sc["right"], sc["wrong"])
        entry["reason"] = params.get("reason", "")
        out[s.case.id] = entry
    return out
