"""Judge a synthetic reply with a case's own checks, as a run would.

``observation`` builds the Observation the checks would see had the agent sent ``reply``
to the user and ``post`` elsewhere (a WhatsApp send to another number). ``judge`` runs the
checks of that turn that read text (``reply.*``, ``post.*``, similarity, critic.*): pure
checks first, the service checks only when every pure check passed, a soft verdict
re-evaluated once (harness.soft), exactly the runner's order. Checks that read what a
synthetic reply cannot show (tool calls, latency, tokens, state) are not judged.
A mutation is caught when any judged check fails (``passed is False``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.checks import REGISTRY
from harness.soft import is_soft, reevaluate
from harness.types import Case, Event, Evidence, Observation, Reply, TurnObservation

CHAT = "900000001"
POST_TO = "15550009999"
T0 = 1_800_000_000.0


def judged(name: str) -> bool:
    """Checks that read the text of a reply or post."""
    return name.startswith(("reply.", "post.", "critic.")) or name == "similarity"


def observation(case: Case, turn: int, reply: str, post: str) -> Observation:
    turns = []
    for i in range(turn + 1):
        replies: tuple[Reply, ...] = ()
        events: tuple[Event, ...] = ()
        if i == turn:
            if reply:
                r = Reply(channel=case.channel, chat=CHAT, text=reply, at=T0 + i + 0.5,
                          method="sendMessage" if case.channel == "telegram" else "messages")
                replies = (r,)
                events += (Event(source=case.channel, name="telegram.sendMessage" if case.channel == "telegram"
                                 else "whatsapp.send", at=r.at, status=200, reply=r),)
            if post:
                p = Reply(channel="whatsapp", chat=POST_TO, text=post, at=T0 + i + 0.4, method="messages")
                events = (Event(source="whatsapp", name="whatsapp.send", at=p.at, status=200, reply=p),) + events
        turns.append(TurnObservation(index=i, sent_at=T0 + i, delivery_status=200, delivery_error="",
                                     replies=replies, events=events, settled_after_s=0.5))
    return Observation(case_id=case.id, channel=case.channel, chat_id=CHAT, turns=tuple(turns),
                       started_at=T0, finished_at=T0 + turn + 1)


@dataclass(frozen=True)
class Verdict:
    evidence: tuple[Evidence, ...]

    @property
    def caught_by(self) -> list[str]:
        return sorted({e.check for e in self.evidence if e.passed is False})

    @property
    def caught(self) -> bool:
        return bool(self.caught_by)

    @property
    def passed(self) -> bool:
        """Every judged check passed (what a golden must do)."""
        return bool(self.evidence) and all(e.passed is True for e in self.evidence)

    @property
    def soft(self) -> list[str]:
        return sorted({e.check for e in self.evidence if is_soft(e)})

    @property
    def unavailable(self) -> list[str]:
        return sorted({e.check for e in self.evidence if e.availability == "unavailable"})


@dataclass(frozen=True)
class Plan:
    """A judgement's first half: the observation, the pure checks' evidence and the service
    checks still to run (none when a pure check failed and not ``all_checks``)."""

    obs: Observation
    evidence: tuple[Evidence, ...]
    deferred: tuple[tuple[Any, Any], ...]
    """(check spec, check definition) of the service checks to run, in the case's order."""


def plan(case: Case, turn: int, reply: str, post: str, *, all_checks: bool = False) -> Plan:
    """Run the pure text checks of turn ``turn`` on this reply and post; say which service
    checks ``judge`` runs after them (harness judges embeds their texts ahead, judges/ahead.py)."""
    obs = observation(case, turn, reply, post)
    evidence: list[Evidence] = []
    deferred = []
    for spec in case.turns[turn].checks:
        if not judged(spec.name):
            continue
        definition = REGISTRY[spec.name]
        if definition.uses_services:
            deferred.append((spec, definition))
            continue
        evidence.append(definition.fn(case, obs, turn, spec.params))
    if any(e.passed is False for e in evidence) and not all_checks:
        deferred = []
    return Plan(obs, tuple(evidence), tuple(deferred))


async def judge(case: Case, turn: int, reply: str, post: str, services, *, all_checks: bool = False,
                planned: Plan | None = None) -> Verdict:
    """The case's text checks on turn ``turn`` for this reply and post.

    ``all_checks``: run the service checks even when a pure check failed (to show what the
    judges alone would say); the runner would not. ``planned``: ``plan``'s result for the same
    arguments, if it was made already."""
    made = planned or plan(case, turn, reply, post, all_checks=all_checks)
    obs = made.obs
    evidence = list(made.evidence)
    for spec, definition in made.deferred:
        first = await definition.fn(case, obs, turn, spec.params, services)
        if is_soft(first):
            first = await reevaluate(first, lambda d=definition, p=spec.params: d.fn(case, obs, turn, p, services))
        evidence.append(first)
    return Verdict(tuple(evidence))
