"""A metamorphic variant compared with its original's turns from the same run, not a second replay.

A variant case (``layers/variants.py``) holds its original's turns as a first user's
(``original``) and its own as a second's (``variant``); every variant turn is ``equivalent``
to its original turn. When the original case runs in the same run (not restored from a
resumed journal, which keeps no observation), the variant does not send those turns again: it
waits for the original's result and takes the observed turns of the original's matching
attempt (attempt k for attempt k under ``--repeat``, else the last), marked ``borrowed``.

Borrowed turns are compared with, never timed, metered or checked again: the original's own
evidence holds what they pass or fail, so the variant's checks on them are dropped
(``own_evidence``). An original that left nothing to compare with (skipped, an error or a
timeout, a turn whose update failed or that got no reply where it expected one) makes the
comparisons with that turn unavailable, with the reason: never passed. An original that is
not in the run (``--layer robustness``, ``--case '*--typos'``) is replayed inside the variant,
as before (``plan`` returns None).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import AbstractSet, Sequence

from harness.run.turns import case_text_segments, expected_reply_bounds
from harness.types import Case, CaseResult, Evidence, Observation, TurnObservation

#: The user whose leading turns a variant may borrow (``layers/variants.variant_case``).
ORIGINAL_USER = "original"


def leading(case: Case) -> int:
    """How many of ``case``'s first turns are the original user's."""
    n = 0
    for t in case.turns:
        if t.user != ORIGINAL_USER:
            break
        n += 1
    return n


def plan(case: Case, planned: AbstractSet[str], restored: AbstractSet[str]) -> str | None:
    """The case whose turns ``case`` borrows in this run, or None (it replays them itself)."""
    source = case.original
    if not source or source == case.id or source not in planned or source in restored:
        return None
    n = leading(case)
    return source if 0 < n < len(case.turns) else None


@dataclass(frozen=True)
class Borrowed:
    """The original's turns for one attempt of a variant, and why any of them cannot be compared with."""

    source: str
    turns: tuple[TurnObservation, ...]
    chat: str
    """The original's chat (the variant's observation names it as the first user's)."""
    missing: dict[int, str] = field(default_factory=dict)
    """Turn index -> why that original turn gives nothing to compare with."""

    @property
    def count(self) -> int:
        return len(self.turns)


def _observation(result: CaseResult | None, attempts: Sequence[CaseResult], number: int,
                 observed: Observation | None = None) -> Observation | None:
    if observed is not None:
        return observed
    if 0 <= number < len(attempts) and attempts[number].observation is not None:
        return attempts[number].observation
    return result.observation if result is not None else None


def _why_not(source: str, result: CaseResult | None, obs: Observation | None, n: int) -> str:
    """Why the original's observation as a whole cannot be compared with ('' when it can)."""
    if result is None and obs is None:
        return f"the original case {source} did not finish in this run"
    if result is None:  # observed, not judged yet (the variant starts on the original's turns)
        pass
    elif result.status == "skipped":
        return f"the original case {source} was skipped" + (f" ({result.error})" if result.error else "")
    if obs is None:
        return f"the original case {source} left no observation" + (f" ({result.error})" if result and result.error else "")
    if obs.error:
        return f"the original case {source} did not complete: {obs.error}"
    if len(obs.turns) < n:
        return f"the original case {source} ran {len(obs.turns)} of its {n} turn(s)"
    return ""


def borrow(case: Case, source: str, result: CaseResult | None, attempts: Sequence[CaseResult], number: int,
           at: float, observed: Observation | None = None) -> Borrowed:
    """The original's turns for attempt ``number`` of ``case``; ``at``: when the attempt starts
    (a turn that was never observed is stamped then, with no duration); ``observed``: the
    original's observation before its checks ran (``result`` is then None)."""
    n = leading(case)
    obs = _observation(result, attempts, number, observed)
    why = _why_not(source, result, obs, n)
    turns, missing = [], {}
    for i in range(n):
        if why or obs is None:
            missing[i] = why
            turns.append(TurnObservation(index=i, sent_at=at, delivery_status=None, delivery_error=f"not observed: {why}",
                                         replies=(), events=(), settled_after_s=0.0, borrowed=source))
            continue
        t = obs.turns[i]
        lo, _hi = expected_reply_bounds(case.turns[i])
        if t.delivery_status is None or t.delivery_status >= 300:
            missing[i] = (f"the original case {source}'s turn {i + 1} was not delivered "
                          f"({t.delivery_error or f'HTTP {t.delivery_status}'})")
        elif lo >= 1 and not t.replies:
            missing[i] = f"the original case {source} got no reply in turn {i + 1}"
        elif t.timed_out and len(t.replies) < lo:
            missing[i] = f"the original case {source}'s turn {i + 1} timed out with {len(t.replies)} of {lo} replies"
        turns.append(replace(t, index=i, borrowed=source, chat=t.chat or obs.chat_id))
    return Borrowed(source=source, turns=tuple(turns), chat=obs.chat_id if obs is not None and not why else "",
                    missing=missing)


def own_evidence(case: Case, borrowed: Borrowed, evidence: Sequence[Evidence]) -> list[Evidence]:
    """The variant's evidence without its checks of the borrowed turns (the original's own case
    judged them), a comparison with an original turn that gave nothing to compare with unavailable."""
    out = []
    for e in evidence:
        if e.turn is not None and 0 <= e.turn < borrowed.count:
            continue
        to = _compared_with(case, e)
        if to is not None and to in borrowed.missing and e.check == "equivalent":
            why = borrowed.missing[to] or f"the original case {borrowed.source} gave nothing to compare with"
            e = replace(e, availability="unavailable", passed=None, score=None,
                        reason=f"nothing to compare with: {why}")
        out.append(e)
    return out


def _compared_with(case: Case, e: Evidence) -> int | None:
    if e.turn is None or not 0 <= e.turn < len(case.turns):
        return None
    for spec in case.turns[e.turn].checks:
        if spec.name == e.check and isinstance(spec.params, dict) and isinstance(spec.params.get("to"), int):
            return spec.params["to"]
    return None


def lock_segments(case: Case, planned: AbstractSet[str], restored: AbstractSet[str]) -> list[tuple[int, list[str]]]:
    """What ``case`` holds while it runs (``textlocks.TextGate``), in segments
    (``turns.case_text_segments``: (first turn, texts)): the texts it sends (a borrowing variant's
    own only) and, in the first segment, for a variant, its original's name: two variants of one
    case send other words but make the same tool and model calls (the same arguments, the same
    scripted answers), which no text tells apart."""
    source = plan(case, planned, restored)
    out = case_text_segments(case, skip=leading(case) if source is not None else 0)
    if case.original:
        out[0][1].append(f"\0variants of {case.original}")
    return out


def segment_texts(segments: Sequence[tuple[int, Sequence[str]]]) -> list[str]:
    """Every text of ``lock_segments``' segments."""
    return sorted({t for _, texts in segments for t in texts})


def locks(case: Case, planned: AbstractSet[str], restored: AbstractSet[str]) -> list[str]:
    """All that ``case`` holds while it runs: ``segment_texts`` of its ``lock_segments``."""
    return segment_texts(lock_segments(case, planned, restored))


def judged(case: Case, borrowed: Borrowed) -> Case:
    """``case`` as its own run is judged: no check on the borrowed turns (the original's were)."""
    return replace(case, turns=tuple(replace(t, checks=()) if i < borrowed.count else t
                                     for i, t in enumerate(case.turns)))
