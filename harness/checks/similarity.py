"""``similarity``: the reply (or post) against the case's approved golden answers.

Score = the best cosine over the golden's answers (all-MiniLM-L6-v2, offline) of the text
without its delivery receipts ("Your LinkedIn post was sent to WhatsApp.": the bot reporting
what it did, which no approved answer has; ``claims.content_text``). Band:
score >= min passes, score < fail_below fails, in between is a soft error (passed None,
re-evaluated once by the runner). A missing golden, or one whose answers all expired, is
``unavailable``: never passed. ``golden: other-id`` shares another case's golden.

Contrastive judging (``contrast: [case-id, ...]``): the goldens of those cases (other
answers on the same document, written for other requests) are negative references. The
reply must be closer to its own golden than to every negative by ``margin`` (default
``MARGIN``), else it fails whatever its score: an on-topic but wrong answer is often as
close to the golden as a right one, but it is closer still to the answer it really is.
The evidence gives both scores and the nearest negative. ``reason`` says why a case's
``min`` is below the default threshold (every such case carries one; ``harness judges``
measures what the threshold should be).
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any

from pydantic import ConfigDict, Field, model_validator

from harness.checks.base import CheckDef, clip, joined_text, unavailable
from harness.checks.params import FIX, Of, Params, Score, Text, Words, examples
from harness.types import Case, Evidence, Observation

NAME = "similarity"
EVAL = "similarity@1"
#: How much closer to its golden than to any negative reference a reply must be.
MARGIN = 0.02
#: The default threshold a case may go below only with a reason (``[embeddings] threshold``).
DEFAULT_MIN = 0.75


def band(score: float, minimum: float, fail_below: float) -> bool | None:
    """True at or above ``minimum``, False below ``fail_below``, None (soft) in between."""
    if score >= minimum:
        return True
    if score < fail_below:
        return False
    return None


class Similarity(Params):
    """Closeness of the text to the case's golden answers (embeddings)."""

    model_config = ConfigDict(json_schema_extra=examples({"min": 0.75, "of": "post"}))
    min: Score = Field(None, description="passes at or above (default [embeddings] threshold, 0.75)")
    fail_below: Score = Field(None, description="fails below; soft between (default [embeddings] fail_below)")
    golden: Text = Field(None, description="the case id whose golden answers to compare with (default: this case)")
    of: Of = Field(None, description="reply (default) or post")
    contrast: list[Text] = Field(None, min_length=1, description="case ids whose goldens are negative references")
    margin: float = Field(None, ge=-1, le=1, description=f"how much closer to the golden than to a contrast "
                                                          f"(default {MARGIN})")
    reason: Words = Field(None, description="why the threshold is what it is")

    @model_validator(mode="after")
    def _bands(self):
        low = self.fail_below if self.fail_below is not None else 0
        high = self.min if self.min is not None else 1
        if low > high:
            raise ValueError(f"fail_below must not exceed min{FIX}make fail_below <= min")
        return self


SimilarityParams = Annotated[Similarity | None, Field(description="null or {}: the defaults")]


async def similarity(case: Case, obs: Observation, turn: int, params: Any, services) -> Evidence:
    from harness.models.settings import embedding_settings

    params = params or {}
    cfg = embedding_settings(services.config)
    minimum = float(params.get("min", cfg.threshold))
    fail_below = min(float(params.get("fail_below", cfg.fail_below)), minimum)
    of = params.get("of", "reply")
    golden_id = params.get("golden") or case.id
    expected = f"best cosine to golden {golden_id!r} >= {minimum:.2f} (fails below {fail_below:.2f})"
    goldens = services.get("goldens")
    golden = goldens.get(golden_id)
    if golden is None:
        goldens.missing_used.add(golden_id)
        return unavailable(NAME, turn, expected=expected, evaluator=EVAL,
                           reason=f"no golden answer for {golden_id!r} (golden/{golden_id}.yaml): "
                                  "similarity cannot be judged")
    today = date.today()
    live = [(i, a) for i, a in enumerate(golden.answers) if not a.expired(today)]
    expired = [a for a in golden.answers if a.expired(today)]
    if not live:
        goldens.expired_used.add(golden_id)
        return unavailable(NAME, turn, expected=expected, evaluator=EVAL,
                           reason=f"every golden answer of {golden_id!r} has expired "
                                  f"(last on {max(a.expires for a in expired)}): re-approve it")
    from harness.models.claims import content_text

    text = content_text(joined_text(obs, turn, of))  # a delivery receipt is no part of the answer
    embedder = services.get("embedder")
    evaluator = f"{EVAL}+{embedder.name}"
    if not text.strip():
        return Evidence(check=NAME, turn=turn, availability="ready", passed=False, score=0.0, expected=expected,
                        observed="(no text)", reason=f"no {of} text to compare with the golden answer",
                        evaluator=evaluator, source=embedder.source)
    from harness.models.embedder import cosine_matrix

    golden_vecs = await embedder.embed([a.text for _, a in live], cache=True)
    text_vec = await embedder.embed([text])
    sims = cosine_matrix(text_vec, golden_vecs)[0]
    k = int(sims.argmax())
    score = round(max(0.0, float(sims[k])), 4)
    index, winner = live[k]
    verdict = band(score, minimum, fail_below)
    word = {True: "passes", False: "fails", None: "is soft"}[verdict]
    reason = (f"similarity {score:.2f} to golden {golden_id!r} answer #{index} ({winner.author}, approved "
              f"{winner.approved}) {word}: threshold {minimum:.2f}, fail below {fail_below:.2f}")
    if len(live) > 1:
        reason += "; other answers " + ", ".join(f"#{i} {float(s):.2f}" for (i, _), s in zip(live, sims) if i != index)
    if params.get("contrast"):
        margin = float(params.get("margin", MARGIN))
        negatives = negative_references(goldens, params["contrast"], today)
        if negatives:
            neg_vecs = await embedder.embed([t for _, t in negatives], cache=True)
            neg_sims = cosine_matrix(text_vec, neg_vecs)[0]
            j = int(neg_sims.argmax())
            neg = round(max(0.0, float(neg_sims[j])), 4)
            expected += f"; closer to it than to {len(negatives)} negative reference(s) by {margin:.2f}"
            closer = score - neg >= margin
            reason += (f"; contrast: golden {score:.2f} vs nearest negative {neg:.2f} ({negatives[j][0]}), "
                       f"{'holds' if closer else 'fails'} (margin {margin:.2f})")
            if not closer:
                verdict = False
                reason = (f"closer to another answer than to its golden: {score:.2f} to {golden_id!r} vs "
                          f"{neg:.2f} to {negatives[j][0]} (margin {margin:.2f}); " + reason)
    if expired:
        goldens.expired_used.add(f"{golden_id} ({len(expired)} of {len(golden.answers)} answers)")
        reason += f"; {len(expired)} expired answer(s) not used"
    return Evidence(check=NAME, turn=turn, availability="ready", passed=verdict, score=score, expected=expected,
                    observed=clip(text), reason=reason, evaluator=evaluator, source=embedder.source)


def negative_references(goldens, ids, today) -> list[tuple[str, str]]:
    """(label, text) of every live answer of the named goldens (missing ones are skipped)."""
    out = []
    for gid in ids:
        g = goldens.get(gid)
        if g is None:
            goldens.missing_used.add(gid)
            continue
        out.extend((f"{gid} #{i}", a.text) for i, a in enumerate(g.answers) if not a.expired(today))
    return out


def below_default_without_reason(params: Any, default: float = DEFAULT_MIN) -> bool:
    """A case threshold under the default with no ``reason`` (harness judges and check warn)."""
    p = params if isinstance(params, dict) else {}
    return float(p.get("min", default)) < default and not str(p.get("reason", "")).strip()


CHECKS = (CheckDef(NAME, similarity, SimilarityParams, EVAL, uses_services=True),)
