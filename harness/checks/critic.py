"""``critic.factuality`` / ``critic.rubric`` / ``critic.answer``: the configured critic's verdicts.

The ground truth is the case's ``source`` document (fixtures/documents). Every verdict
carries the critic's explanation and its name@version; a judge that cannot answer gives
``unavailable`` evidence. The runner calls these only after the case's deterministic
checks all passed.

- factuality: every claim sentence of the text is judged against the source; any
  unsupported claim fails (naming it and why), any undecided claim is soft, else pass.
- rubric: a question -> score 0..1; ``min`` (default 0.8) passes, below ``[critic]
  fail_below`` fails, between is soft. The offline critic answers only through the hints
  ``about`` / ``not_about``.
- answer: similarity to ``expected`` -> score 0..1, banded like rubric.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field

from harness.checks.base import CheckDef, clip, joined_text, unavailable
from harness.checks.params import Of, Params, Score, Text, Words, examples
from harness.checks.similarity import band
from harness.types import Case, Evidence, Observation

EVAL = "critic@1"
Terms = Annotated[Text | Annotated[list[Text], Field(min_length=1)], Field(description="a term or a list of terms")]


class Factuality(Params):
    """Every claim sentence of the text, judged against the case's source document."""

    model_config = ConfigDict(json_schema_extra=examples({"of": "post"}))
    of: Of = Field(None, description="reply (default) or post")


class _Scored(Factuality):
    """A verdict scored from 0 to 1 and banded: pass at ``min``, fail below ``fail_below``, soft between."""

    min: Score = Field(None, description="passes at or above (default 0.8)")
    fail_below: Score = Field(None, description="fails below; soft between (default [critic] fail_below)")


class Rubric(_Scored):
    """A question about the text, answered with a score from 0 to 1."""

    model_config = ConfigDict(json_schema_extra=examples({"question": "Does the post name the paper's main finding?",
                                                          "min": 0.8}))
    question: Words = Field(..., description="what the critic is asked")
    about: Terms = Field(None, description="the offline critic's hint: terms a good answer holds")
    not_about: Terms = Field(None, description="the offline critic's hint: terms a good answer does not hold")


class Answer(_Scored):
    """The text's similarity to an expected answer, scored from 0 to 1."""

    model_config = ConfigDict(json_schema_extra=examples({"expected": "The study followed 1,200 children.",
                                                          "min": 0.8}))
    expected: Words = Field(..., description="the expected answer")


FactualityParams = Annotated[Literal[True] | Factuality | None, Field(description="true, null or {of: post}")]


def _params(params: Any) -> dict:
    return params if isinstance(params, dict) else {}


def _evidence(name, turn, critic, *, passed, score, expected, observed, reason) -> Evidence:
    return Evidence(check=name, turn=turn, availability="ready", passed=passed, score=score, expected=expected,
                    observed=clip(observed), reason=reason, evaluator=critic.name, source=critic.source)


def _source(case: Case, critic, name: str, turn: int, expected: str) -> tuple[str | None, Evidence | None]:
    if not case.source:
        return None, unavailable(name, turn, expected=expected, evaluator=critic.name,
                                 reason="the case names no source document (add source: <file> to the case)")
    try:
        return critic.source_text(case.source), None
    except (OSError, ValueError) as exc:
        return None, unavailable(name, turn, expected=expected, evaluator=critic.name,
                                 reason=f"source document {case.source!r} unreadable: {exc}")


async def factuality(case: Case, obs: Observation, turn: int, params: Any, services) -> Evidence:
    name = "critic.factuality"
    p = _params(params)
    of = p.get("of", "reply")
    critic = services.get("critic")
    expected = f"every claim of the {of} supported by {case.source or 'the source'}"
    source, missing = _source(case, critic, name, turn, expected)
    if missing:
        return missing
    text = joined_text(obs, turn, of)
    if not text.strip():
        return _evidence(name, turn, critic, passed=False, score=0.0, expected=expected, observed="(no text)",
                         reason=f"no {of} text to judge")
    j = await critic.backend.factuality(source, text)
    if j.unavailable:
        return unavailable(name, turn, expected=expected, evaluator=critic.name, reason=f"critic: {j.unavailable}")
    bad = [c for c in j.claims if c.supported is False]
    unsure = [c for c in j.claims if c.supported is None]
    n = len(j.claims)
    if bad:
        passed, head = False, f"{len(bad)}/{n} claims unsupported"
        shown = bad
    elif unsure:
        passed, head = None, f"{len(unsure)}/{n} claims undecided (soft)"
        shown = unsure
    else:
        passed, head = True, f"all {n} claims supported"
        shown = list(j.claims[:2])
    detail = "; ".join(f"\"{clip(c.claim, 100)}\": {c.explanation}" for c in shown[:3])
    return _evidence(name, turn, critic, passed=passed, score=round(j.score or 0.0, 4), expected=expected,
                     observed=text, reason=f"{head}: {detail}" + (" (cached verdicts)" if j.cached else ""))


async def _scored(name: str, case: Case, obs: Observation, turn: int, p: dict, services, ask, expected_what: str):
    from harness.models.settings import critic_settings

    critic = services.get("critic")
    minimum = float(p.get("min", 0.8))
    fail_below = min(float(p.get("fail_below", critic_settings(services.config).fail_below)), minimum)
    of = p.get("of", "reply")
    expected = f"{expected_what} >= {minimum:.2f} (fails below {fail_below:.2f})"
    text = joined_text(obs, turn, of)
    if not text.strip():
        return _evidence(name, turn, critic, passed=False, score=0.0, expected=expected, observed="(no text)",
                         reason=f"no {of} text to judge")
    j = await ask(critic, text)
    if isinstance(j, Evidence):
        return j
    if j.unavailable or j.score is None:
        return unavailable(name, turn, expected=expected, evaluator=critic.name,
                           reason=f"critic: {j.unavailable or 'no score'}")
    score = round(float(j.score), 4)
    verdict = band(score, minimum, fail_below)
    word = {True: "passes", False: "fails", None: "is soft"}[verdict]
    return _evidence(name, turn, critic, passed=verdict, score=score, expected=expected, observed=text,
                     reason=f"critic score {score:.2f} {word} (min {minimum:.2f}, fail below {fail_below:.2f}): "
                            f"{j.explanation or 'no explanation given'}" + (" (cached verdict)" if j.cached else ""))


async def rubric(case: Case, obs: Observation, turn: int, params: Any, services) -> Evidence:
    from harness.models.critic import RubricHints

    p = _params(params)
    question = p["question"]

    async def ask(critic, text):
        source, missing = ("", None)
        if case.source:
            source, missing = _source(case, critic, "critic.rubric", turn, question)
        if missing:
            return missing
        return await critic.backend.rubric(source or "", text, question, RubricHints.from_params(p))

    return await _scored("critic.rubric", case, obs, turn, p, services, ask, f"rubric {question!r}")


async def answer(case: Case, obs: Observation, turn: int, params: Any, services) -> Evidence:
    p = _params(params)

    async def ask(critic, text):
        return await critic.backend.answer(text, p["expected"])

    return await _scored("critic.answer", case, obs, turn, p, services, ask, "critic similarity to the expected answer")


CHECKS = (
    CheckDef("critic.factuality", factuality, FactualityParams, EVAL, uses_services=True),
    CheckDef("critic.rubric", rubric, Rubric, EVAL, uses_services=True),
    CheckDef("critic.answer", answer, Answer, EVAL, uses_services=True),
)
