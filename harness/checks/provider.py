"""The provider's slow calls: how much of a case's latency one rare slow LLM call explains.

A real provider now and then holds one completion for a second or more (a cold replica, a queue);
so does docbot's noise mode. A case whose accepted nights happened to miss such a spell has a
latency band without room for one, and one spell tonight would fail a clean case. Widening the
band would hide real slowdowns; instead the accepted nights' LLM calls, run-wide, say what a slow
call looks like, and a latency figure may be explained by tonight's calls only as far as they look
like that:

- ``typical_ms``: 90 % of the accepted nights' calls took at most this long (``TYPICAL_Q``);
- each of tonight's calls explains ``min(call, slowest accepted call) - typical_ms`` (never a
  negative amount, never more than the slowest call any accepted night saw: a call slower than
  ever is not a known spell);
- only as many of a case's calls may be slow as chance allows: the fewest ``j`` with
  P(more than ``j`` of its ``k`` calls slow) <= ``RARE`` under the accepted nights' slow share;
- not at all when tonight's calls are slower across the run (``shifted``): the share of tonight's
  calls above ``typical_ms`` more than ``max(3 x, + 0.15)`` the accepted share. That is the bot on a
  slower model or a slower provider, which the latency checks are for.

Used by ``baseline.latency`` (checks/baseline/evidence.py) and ``anomaly.latency_ms``
(run/anomaly.py). Pure; no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

#: The quantile of the accepted calls that counts as a normal call.
TYPICAL_Q = 0.9
#: Fewer accepted calls than this say nothing about the provider's spells.
MIN_CALLS = 30
#: How unlikely a case's count of slow calls must be before it is no longer chance.
RARE = 0.001
#: Tonight's calls are slower across the run when their slow share exceeds
#: max(SHIFT_RATIO x the accepted share, the accepted share + SHIFT_ADD), over MIN_CALLS calls or more.
SHIFT_RATIO = 3.0
SHIFT_ADD = 0.15


@dataclass(frozen=True)
class ProviderCalls:
    """The accepted nights' LLM calls, run-wide."""

    calls: int
    typical_ms: float
    slowest_ms: float
    slow_share: float
    """The share of calls slower than ``typical_ms``."""

    def shown(self) -> str:
        return (f"the accepted nights' {self.calls} LLM calls: {TYPICAL_Q:.0%} within {self.typical_ms:.0f}ms, "
                f"slowest {self.slowest_ms:.0f}ms")


def profile(durations_ms: Iterable[float]) -> ProviderCalls | None:
    """The profile of ``durations_ms``; None for fewer than ``MIN_CALLS`` calls."""
    values = sorted(float(d) for d in durations_ms if _is_ms(d))
    if len(values) < MIN_CALLS:
        return None
    typical = values[min(len(values) - 1, int(math.ceil(TYPICAL_Q * len(values))) - 1)]
    share = sum(v > typical for v in values) / len(values)
    return ProviderCalls(len(values), typical, values[-1], share)


def _is_ms(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


def call_durations(turns: Iterable[Mapping[str, Any]]) -> list[float]:
    """The LLM calls' durations of a results.json case's ``turns`` (or an ``other_attempts`` entry's)."""
    out = []
    for turn in turns:
        if not isinstance(turn, Mapping) or turn.get("borrowed"):  # a variant's borrowed turns are its original's
            continue
        for call in turn.get("calls") or ():
            if isinstance(call, Mapping) and call.get("name") == "llm" and _is_ms(call.get("duration_ms")):
                out.append(float(call["duration_ms"]))
    return out


def observed_durations(obs: Any) -> list[float]:
    """The LLM calls' durations of tonight's ``Observation``."""
    if obs is None:
        return []
    return [float(e.duration_ms) for t in obs.turns if not getattr(t, "borrowed", False) for e in t.events
            if e.name == "llm" and _is_ms(e.duration_ms)]  # a variant's borrowed turns are its original's


def allowed_slow(k: int, share: float) -> int:
    """The most of ``k`` calls that may be slow by chance: the fewest j with P(X > j) <= RARE, X ~ Bin(k, p)."""
    p = min(max(share, 0.02), 0.5)
    tail, j = 1.0, 0
    for j in range(k + 1):
        tail -= math.comb(k, j) * p ** j * (1 - p) ** (k - j)
        if tail <= RARE:
            return j
    return k


@dataclass(frozen=True)
class Explained:
    ms: float
    slow: int
    """How many of the case's calls were slower than typical."""
    counted: int
    """How many of them explain latency (at most ``allowed_slow``)."""

    def shown(self, p: ProviderCalls) -> str:
        extra = f", {self.counted} of them counted (more is not chance)" if self.counted < self.slow else ""
        return (f"{self.slow} slow LLM call(s){extra} explain {self.ms:.0f}ms of it ({p.shown()})")


def explained(p: ProviderCalls | None, calls_ms: Sequence[float]) -> Explained:
    """How much of a case's latency its slow calls explain under ``p`` (0 without a profile)."""
    if p is None:
        return Explained(0.0, 0, 0)
    extra = sorted((min(c, p.slowest_ms) - p.typical_ms for c in calls_ms if c > p.typical_ms), reverse=True)
    counted = extra[:allowed_slow(len(calls_ms), p.slow_share)]
    return Explained(sum(x for x in counted if x > 0), len(extra), len(counted))


def shifted(p: ProviderCalls | None, tonight_ms: Sequence[float]) -> str:
    """Why tonight's calls are slower across the run than the accepted nights' ("" when they are not)."""
    if p is None or len(tonight_ms) < MIN_CALLS:
        return ""
    share = sum(c > p.typical_ms for c in tonight_ms) / len(tonight_ms)
    if share <= max(SHIFT_RATIO * p.slow_share, p.slow_share + SHIFT_ADD):
        return ""
    return (f"tonight's LLM calls are slower across the run: {share:.0%} of {len(tonight_ms)} above "
            f"{p.typical_ms:.0f}ms against {p.slow_share:.0%} on the accepted nights")
