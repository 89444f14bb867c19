"""A case's evidence: every check of every turn through the dispatch table (``evaluate``), and
an observation with what reached it after it was taken (``with_late``)."""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Sequence

from harness.checks import REGISTRY
from harness.errors import MissingExtra
from harness.services import Services
from harness.soft import is_soft, reevaluate
from harness.types import Case, Event, Evidence, Observation

log = logging.getLogger("harness.run.runner")


async def evaluate(case: Case, obs: Observation, services: Services | None = None) -> list[Evidence]:
    """Run every check of every turn through the dispatch table.

    Pure checks first; checks that use services (similarity, critic) run only when every
    pure check passed, since judging the content of a reply that already failed costs
    money and time and cannot change the verdict.
    """
    evidence, deferred = pure_evidence(case, obs)
    if not deferred:
        return evidence
    if any(e.passed is False for e in evidence):
        for index, spec, definition in deferred:
            evidence.append(Evidence(check=spec.name, turn=index, availability="unavailable", passed=None,
                                     reason="not evaluated: a deterministic check of this case already failed",
                                     evaluator=definition.evaluator))
        return evidence
    for index, spec, definition in deferred:
        try:
            first = await definition.fn(case, obs, index, spec.params, services)
            if is_soft(first):  # one automatic re-evaluation (harness/soft.py); the second verdict stands
                first = await reevaluate(first, lambda d=definition, i=index, p=spec.params:
                                         d.fn(case, obs, i, p, services))
            evidence.append(first)
        except MissingExtra as exc:  # harness[models] not installed: its one line is the reason (no traceback)
            evidence.append(Evidence(check=spec.name, turn=index, availability="unavailable", passed=None,
                                     reason=exc.message, evaluator=definition.evaluator))
        except Exception as exc:  # an unreachable judge is unavailable evidence, never a crash
            log.exception("check %s crashed on case %s", spec.name, case.id)
            evidence.append(_crashed(definition, spec, index, exc))
    return evidence


def pure_evidence(case: Case, obs: Observation) -> tuple[list[Evidence], list]:
    """The deterministic checks' evidence, and the (turn, spec, definition) of the checks that use services."""
    evidence: list[Evidence] = []
    deferred = []
    for index, turn in enumerate(case.turns):
        for spec in turn.checks:
            definition = REGISTRY[spec.name]
            if definition.uses_services:
                deferred.append((index, spec, definition))
                continue
            evidence.append(_guarded(definition, spec, index, case, lambda d=definition, i=index, p=spec.params:
                                     d.fn(case, obs, i, p)))
    return evidence, deferred


def with_late(obs: Observation, late: Sequence[Event], recorded: int) -> Observation:
    """``obs`` with what came after it was taken: late replies go to the turn of their chat, every
    other late event to the turn recorded under ``recorded`` (the last group's first turn)."""
    turns = []
    for t in obs.turns:
        if t.index < recorded:
            turns.append(t)
            continue
        have = {id(e) for e in t.events}
        chat = t.chat or obs.chat_id
        mine = [e for e in late if id(e) not in have and (
            (e.reply.chat == chat) if e.reply is not None else t.index == recorded)]
        replies = tuple(e.reply for e in mine if e.reply is not None and e.reply.channel == obs.channel)
        turns.append(replace(t, replies=t.replies + replies, events=t.events + tuple(mine)) if mine else t)
    return replace(obs, turns=tuple(turns))



def _crashed(definition, spec, index: int, exc: Exception) -> Evidence:
    return Evidence(check=spec.name, turn=index, availability="unavailable", passed=None,
                    reason=f"the check itself crashed: {type(exc).__name__}: {exc}", evaluator=definition.evaluator)


def _guarded(definition, spec, index: int, case: Case, call) -> Evidence:
    try:
        return call()
    except Exception as exc:  # a check bug must not pass or crash the run
        log.exception("check %s crashed on case %s", spec.name, case.id)
        return _crashed(definition, spec, index, exc)
