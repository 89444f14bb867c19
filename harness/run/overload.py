"""What only an overloaded machine explains becomes unavailable, never a failure.

The rules over a ``MachineMonitor``'s windows (``harness/run/machine.py`` has the monitor,
the thresholds and the reasoning; docs/CASES.md "Latency on a busy machine" the user's
description). The runner calls ``excuse`` on every attempt and once more on the case's
result (``anomaly.*`` evidence comes last):

- ``excuse_latency``: a latency breach within the window's stall;
- ``excuse_retried_trajectories``: a variant whose trajectory differs only by a call the agent
  sent again word for word (its retry after its own timeout);
- ``excuse_agent_timeouts``: a failed turn whose agent gave up on an LLM call the gateway still
  served (``abandoned_calls``; never a call the harness failed on purpose);
- ``excuse_frozen_turns``: a failure in (or after) a turn whose sandbox froze ``FROZEN_S``.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import replace
from typing import Mapping, Sequence

from harness.run.aggregate import case_status
from harness.run.machine import FROZEN_S, MachineMonitor, Window
from harness.types import Case, CaseResult, Event, Evidence, Observation

#: Evidence measured in wall time: a starved machine can breach their bounds.
LATENCY_CHECKS = ("latency_ms", "anomaly.latency_ms")
LATENCY_PREFIXES = ("baseline.latency",)

UNAVAILABLE_PREFIX = "machine overloaded"


def is_latency(check: str) -> bool:
    return check in LATENCY_CHECKS or check.startswith(LATENCY_PREFIXES)


def _turn_window(obs: Observation, turn: int | None) -> tuple[float, float]:
    """A turn's window: from its update to its last reply (or the end of its wait); None: the case."""
    if turn is None or not 0 <= turn < len(obs.turns):
        return obs.started_at, obs.finished_at
    t = obs.turns[turn]
    end = max([r.at for r in t.replies] + [t.sent_at + t.settled_after_s])
    return t.sent_at, end


_MS = re.compile(r"(\d+(?:\.\d+)?)\s*ms\b")
_BOUND_MS = re.compile(r"<=\s*(\d+(?:\.\d+)?)\s*ms\b")


def _excess_from_text(evidence: Evidence) -> float | None:
    """A case-level latency item's excess, read from its own words: observed ``N ms`` against
    expected ``<= M ms`` (``anomaly.latency_ms``'s shape); None when either is missing."""
    seen, bound = _MS.search(evidence.observed or ""), _BOUND_MS.search(evidence.expected or "")
    if seen is None or bound is None:
        return None
    return (float(seen.group(1)) - float(bound.group(1))) / 1000


def observed_and_bound_s(evidence: Evidence) -> tuple[float, float] | None:
    """(observed, bound) seconds of a latency item that says both (``N ms`` against ``<= M ms``)."""
    seen, bound = _MS.search(evidence.observed or ""), _BOUND_MS.search(evidence.expected or "")
    if seen is None or bound is None or float(bound.group(1)) <= 0:
        return None
    return float(seen.group(1)) / 1000, float(bound.group(1)) / 1000


def latency_excess_s(case: Case, obs: Observation, evidence: Evidence) -> float | None:
    """Seconds by which a latency evidence item exceeded its bounds (None: not measurable)."""
    if evidence.check != "latency_ms":
        return _excess_from_text(evidence)
    if evidence.turn is None or not 0 <= evidence.turn < len(obs.turns):
        return None
    if evidence.turn >= len(case.turns):
        return None
    t = obs.turns[evidence.turn]
    worst = None
    for spec in case.turns[evidence.turn].checks:
        if spec.name != "latency_ms" or not isinstance(spec.params, Mapping):
            continue
        p = spec.params
        seen = []
        if "llm_call_max" in p:
            llm = [e.duration_ms for e in t.events if e.name == "llm"]
            if llm:
                seen.append(max(llm) - p["llm_call_max"])
        if "first_reply_max" in p and t.first_reply_ms is not None:
            seen.append(t.first_reply_ms - p["first_reply_max"])
        if "total_max" in p and t.last_reply_ms is not None:
            seen.append(t.last_reply_ms - p["total_max"])
        if seen:
            worst = max(seen) / 1000 if worst is None else max(worst, max(seen) / 1000)
    return worst


def _unavailable(e: Evidence, window: Window, why: str) -> Evidence:
    return replace(e, availability="unavailable", passed=None,
                   reason=f"{UNAVAILABLE_PREFIX} ({window.describe()}): {why}; was: {e.reason}")


def _excuse_from(evidence: Sequence[Evidence], turn: int, window: Window, why: str) -> tuple[list[Evidence], int]:
    """Every failing item of ``turn`` and the turns after it (and the case-level ones) made
    unavailable for ``why``; (evidence, how many)."""
    out, n = [], 0
    for e in evidence:
        if e.availability == "ready" and e.passed is False and (e.turn is None or e.turn >= turn):
            out.append(_unavailable(e, window, why))
            n += 1
        else:
            out.append(e)
    return out, n


def excuse_latency(case: Case, obs: Observation | None, evidence: Sequence[Evidence],
                   monitor: MachineMonitor | None) -> tuple[list[Evidence], int]:
    """Latency breaches an overloaded window explains become unavailable; (evidence, how many)."""
    if monitor is None or obs is None:
        return list(evidence), 0
    out, n = [], 0
    for e in evidence:
        if e.availability == "ready" and e.passed is False and is_latency(e.check) and "no reply" not in e.observed:
            start, end = _turn_window(obs, e.turn)
            window = monitor.window(start, end)
            excess = latency_excess_s(case, obs, e)
            if window.explains(excess):
                shown = f"{excess:.1f} s over the bound" if excess is not None else "a wall-clock figure"
                out.append(_unavailable(e, window, f"{shown}, within the {window.stall_s:.1f} s the machine "
                                                   f"kept runnable tasks waiting in that window"))
                n += 1
                continue
            pair = observed_and_bound_s(e)
            if pair is not None and window.shared_explains(*pair):
                out.append(_unavailable(e, window, f"{pair[0]:.1f} s against {pair[1]:.1f} s: within the "
                                                   f"{window.stretch:.1f}x a machine shared with other processes "
                                                   "stretches the agent's work"))
                n += 1
                continue
        out.append(e)
    return out, n


# -- the agent's own timeouts ------------------------------------------------------------


def _same_request(a: Event, b: Event) -> bool:
    keys = ("model", "messages", "prompt_chars")
    return all(a.request.get(k) == b.request.get(k) for k in keys)


def abandoned_calls(obs: Observation) -> list[tuple[int, Event]]:
    """LLM calls the agent gave up on while the gateway still served them: (turn, call).

    A call was abandoned when the agent sent the same request again before the gateway had
    answered it (a retry after the agent's own timeout), or sent the turn's last reply
    before the answer came. A call the harness made fail on purpose (a scripted fault: its
    error says "injected") is what the case tests, and is never counted.
    """
    turns = obs.turns
    if not turns:
        return []
    starts = [t.sent_at for t in turns]
    llm = sorted((e for t in turns for e in t.events if e.name == "llm" and e.source == "gateway"),
                 key=lambda e: e.at)
    out = []
    for i, call in enumerate(llm):
        if "injected" in (call.error or ""):
            continue
        end = call.at + call.duration_ms / 1000
        turn = max(0, bisect.bisect_right(starts, call.at) - 1)
        retried = any(_same_request(call, later) and call.at < later.at < end for later in llm[i + 1:])
        t = turns[turn]
        last_reply = max((r.at for r in t.replies), default=None)
        answered_first = last_reply is not None and call.at < last_reply < end
        if retried or answered_first:
            out.append((turn, call))
    return out


def excuse_agent_timeouts(obs: Observation | None, evidence: Sequence[Evidence],
                          monitor: MachineMonitor | None) -> tuple[list[Evidence], int]:
    """A failed turn whose agent gave up on an LLM call during an overloaded window: its failing
    evidence (and that of the turns after it) becomes unavailable; (evidence, how many)."""
    if monitor is None or obs is None or not any(e.passed is False and e.availability == "ready" for e in evidence):
        return list(evidence), 0
    first = None
    for turn, call in abandoned_calls(obs):
        end = call.at + call.duration_ms / 1000
        window = monitor.window(call.at, end)
        if window.overloaded:
            first = (turn, call, window)
            break
    if first is None:
        return list(evidence), 0
    turn, call, window = first
    why = (f"the agent's own timeout fired on an LLM call the gateway was still serving (turn {turn + 1}, "
           f"{call.duration_ms / 1000:.1f} s; the agent gave up before the answer came)")
    return _excuse_from(evidence, turn, window, why)


# -- a variant's trajectory that differs only by the agent's retries -----------------------------


def retries(obs: Observation, turn: int) -> int:
    """LLM calls of ``turn`` that repeat an earlier call of the turn word for word (the agent retried)."""
    if not 0 <= turn < len(obs.turns):
        return 0
    seen: list[Event] = []
    n = 0
    for e in sorted((e for e in obs.turns[turn].events if e.name == "llm" and e.source == "gateway"),
                    key=lambda e: e.at):
        if any(_same_request(e, earlier) for earlier in seen):
            n += 1
        seen.append(e)
    return n


def excuse_retried_trajectories(case: Case, obs: Observation | None, evidence: Sequence[Evidence],
                                monitor: MachineMonitor | None) -> tuple[list[Evidence], int]:
    """An ``equivalent`` failure whose trajectories differ only by LLM calls the agent repeated
    word for word (a retry after its own timeout) in an overloaded window: unavailable."""
    if monitor is None or obs is None:
        return list(evidence), 0
    from harness.checks.equivalence import trajectory
    from harness.checks.base import posts

    out, n = [], 0
    for e in evidence:
        spec = None
        if (e.check == "equivalent" and e.availability == "ready" and e.passed is False and e.turn is not None
                and e.turn < len(case.turns)):
            spec = next((s.params for s in case.turns[e.turn].checks if s.name == "equivalent"), None)
        if not isinstance(spec, Mapping) or not isinstance(spec.get("to"), int):
            out.append(e)
            continue
        mine, theirs = e.turn, spec["to"]
        a, b = trajectory(obs, mine), trajectory(obs, theirs)
        ra, rb = retries(obs, mine), retries(obs, theirs)
        a["llm"] -= ra
        b["llm"] -= rb
        same_shape = (+a == +b and len(posts(obs, mine)) == len(posts(obs, theirs))
                      and 0 <= mine < len(obs.turns) and 0 <= theirs < len(obs.turns)
                      and len(obs.turns[mine].replies) == len(obs.turns[theirs].replies))
        retried = mine if ra > rb else theirs
        window = monitor.window(*_turn_window(obs, retried))
        if ra != rb and same_shape and window.overloaded:
            who = "variant" if retried == mine else f"original (turn {theirs})"
            out.append(_unavailable(e, window, f"the trajectories differ only by {abs(ra - rb)} LLM call(s) the "
                                               f"{who} repeated word for word (the agent's retry)"))
            n += 1
        else:
            out.append(e)
    return out, n


# -- a sandbox that froze ---------------------------------------------------------------------------


def excuse_frozen_turns(obs: Observation | None, evidence: Sequence[Evidence],
                        monitor: MachineMonitor | None) -> tuple[list[Evidence], int]:
    """The failing evidence of the first turn in whose overloaded window the harness's loop stalled
    ``FROZEN_S`` or more, and of every turn after it (their state and comparisons build on it)."""
    if monitor is None or obs is None or not any(e.passed is False and e.availability == "ready" for e in evidence):
        return list(evidence), 0
    frozen = None
    for t in obs.turns:
        window = monitor.window(*_turn_window(obs, t.index))
        if window.overloaded and window.lag_max_s >= FROZEN_S:
            frozen = (t.index, window)
            break
    if frozen is None:
        return list(evidence), 0
    turn, window = frozen
    why = (f"the harness's event loop, which serves the agent's LLM gateway, documents and channels, stalled "
           f"{window.lag_max_s:.1f} s in turn {turn + 1}: a timeout of the agent's or the harness's reply wait "
           f"then measured the freeze")
    return _excuse_from(evidence, turn, window, why)


def excuse(case: Case, result: CaseResult, monitor: MachineMonitor | None) -> CaseResult:
    """``result`` with what only the machine explains made unavailable (both rules), its status again."""
    if monitor is None or result.observation is None or result.status == "skipped":
        return result
    obs = result.observation
    if monitor.samples or monitor._task is not None:
        result = replace(result, machine=monitor.window(obs.started_at, obs.finished_at).to_dict())
    latency, lat = excuse_latency(case, result.observation, result.evidence, monitor)
    retried, ret = excuse_retried_trajectories(case, result.observation, latency, monitor)
    timed, agent = excuse_agent_timeouts(result.observation, retried, monitor)
    evidence, froze = excuse_frozen_turns(result.observation, timed, monitor)
    if not lat and not agent and not ret and not froze:
        return result
    monitor.excusing(case.id, result.evidence, latency, "latency")
    monitor.excusing(case.id, latency, retried, "agent_timeout")
    monitor.excusing(case.id, retried, timed, "agent_timeout")
    monitor.excusing(case.id, timed, evidence, "frozen")
    return replace(result, evidence=tuple(evidence), status=case_status(evidence, result.error))
