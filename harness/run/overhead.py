"""The harness's overhead as a figure of every run: its wall time over the agent's critical path.

The agent's critical path is the least a run of these cases could take if the harness cost
nothing: per case, the time the agent held its turns (``held_s``: each turn from the
update's delivery to the turn's last reply or boundary call, the call's own duration
included; the settle window, state probes, checks and everything between turns are the
harness's), summed over the cases and divided by the concurrency, and never less than the
longest case (cases run side by side, but one case's turns do not). With ``--repeat K`` a
case ran K times and only its last attempt's observation is kept: that attempt counts K
times. A case with no observation (skipped, resumed from an earlier run) holds nothing.

``harness run`` prints ``overhead_line`` after its summary, puts it in the run's notes
(summary.md) and writes ``overhead`` into results.json ``summary`` (DESIGN.md "Overhead").
Pure functions: the CLI passes the wall time it measured.
"""

from __future__ import annotations

from typing import Sequence

from harness.types import CaseResult, Observation, TurnObservation


def turn_held_s(turn: TurnObservation) -> float:
    """Delivery to the turn's last reply or boundary call (its end: arrival plus duration); 0
    when the agent did nothing during the turn."""
    ends = [r.at for r in turn.replies]
    ends += [e.at + max(0.0, e.duration_ms) / 1000 for e in turn.events if e.source != "driver"]
    if not ends:
        return 0.0
    return max(0.0, max(ends) - turn.sent_at)


def case_held_s(observation: Observation | None) -> float:
    """The time the agent held one attempt's turns, summed (0 with no observation); turns borrowed
    from another case (a variant's original) were held in that case."""
    if observation is None:
        return 0.0
    return sum(turn_held_s(t) for t in observation.turns if not t.borrowed)


def critical_path_s(held: Sequence[float], concurrency: int) -> float:
    """Summed agent time over the concurrency, bounded below by the longest case."""
    if not held:
        return 0.0
    return max(sum(held) / max(1, concurrency), max(held))


def run_overhead(cases: Sequence[CaseResult], wall_s: float, concurrency: int) -> dict:
    """``{"wall_s", "agent_critical_path_s", "ratio"}``; ratio None when the agent held nothing
    (no case ran, or none got an answer): there is no path to compare with."""
    held = [case_held_s(c.observation) * max(1, c.attempts) for c in cases]
    path = critical_path_s(held, concurrency)
    ratio = round(wall_s / path, 2) if path > 0 else None
    return {"wall_s": round(wall_s, 3), "agent_critical_path_s": round(path, 3), "ratio": ratio}


def _seconds(s: float) -> str:
    return f"{s:.1f}" if s >= 0.1 or s == 0 else f"{s:.3f}"  # a bot that answers in ms is not "0.0 s"


def overhead_line(overhead: dict) -> str:
    """``harness overhead: wall 78.1 s / agent critical path 61.0 s = 1.28x``."""
    head = f"harness overhead: wall {_seconds(overhead['wall_s'])} s / agent critical path " \
           f"{_seconds(overhead['agent_critical_path_s'])} s"
    if overhead.get("ratio") is None:
        return head + " = n/a (the agent held no turn)"
    return head + f" = {overhead['ratio']:.2f}x"
