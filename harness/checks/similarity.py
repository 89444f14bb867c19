"""``similarity``: the reply (or post) against the case's approved golden answers.

Score = the best cosine over the golden's answers (all-MiniLM-L6-v2, offline). Band:
score >= min passes, score < fail_below fails, in between is a soft error (passed None,
re-evaluated once by the runner). A missing golden, or one whose answers all expired, is
``unavailable``: never passed. ``golden: other-id`` shares another case's golden.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from harness.checks.base import CheckDef, clip, joined_text, unavailable
from harness.types import Case, Evidence, Observation

NAME = "similarity"
EVAL = "similarity@1"
KEYS = ("min", "golden", "of", "fail_below")


def band(score: float, minimum: float, fail_below: float) -> bool | None:
    """True at or above ``minimum``, False below ``fail_below``, None (soft) in between."""
    if score >= minimum:
        return True
    if score < fail_below:
        return False
    return None


def validate(params: Any) -> str | None:
    if params is None or params == {}:
        return None
    if not isinstance(params, dict):
        return "expects a table such as {min: 0.75, of: post}"
    for k, v in params.items():
        if k not in KEYS:
            return f"unknown key {k!r} (known: {', '.join(KEYS)})"
        if k in ("min", "fail_below") and (isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1):
            return f"{k} must be a number from 0 to 1, got {v!r}"
        if k == "golden" and (not isinstance(v, str) or not v):
            return "golden must be a case id"
        if k == "of" and v not in ("reply", "post"):
            return f"of must be reply or post, got {v!r}"
    if params.get("fail_below", 0) > params.get("min", 1):
        return "fail_below must not exceed min"
    return None


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
    text = joined_text(obs, turn, of)
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
    if expired:
        goldens.expired_used.add(f"{golden_id} ({len(expired)} of {len(golden.answers)} answers)")
        reason += f"; {len(expired)} expired answer(s) not used"
    return Evidence(check=NAME, turn=turn, availability="ready", passed=verdict, score=score, expected=expected,
                    observed=clip(text), reason=reason, evaluator=evaluator, source=embedder.source)


CHECKS = (CheckDef(NAME, similarity, validate, EVAL, uses_services=True),)
