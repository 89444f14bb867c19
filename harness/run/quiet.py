"""How long "quiet" must last before a turn counts as answered, learned from the agent.

A turn is answered once its expected replies are in and the agent has then been quiet for
one *quiet window*. A fixed window (``settle_s``) costs every turn the same wait, whether
the agent sends its replies 5 ms or 500 ms apart. Here the window is fitted to the agent
as the run goes: every silence before a reply after a turn's first (in one chat: from the
agent's previous reply or call to it) is a sample, and
the window is 1.5 x the 95th percentile of the samples (their maximum while there are fewer
than 20), kept between ``QUIET_FLOOR_S`` and ``settle_s``.

Before the first sample nothing is known, and the two kinds of wait differ:

- between two turns of a conversation (``value``) the wait is ``settle_s``: a follow-up
  reply that came after the next message would be counted against the wrong turn;
- after a case's last turn, and once for the whole run (``closing``), the wait is the
  floor: a reply that comes later is still seen, because the runner keeps every finished
  case's chat open until the run ends (``Runner._late_replies``). What a short closing
  window gives up is only this: after the run's very last activity, the run stops
  listening one closing window later.

``Limiter`` bounds the cases in flight at the agent; ``Slot`` is one case's hold on it: held
while the agent works on the case, given back while the case only watches its last quiet
window, taken again (ahead of cases not started) for the case's next attempt.
"""

from __future__ import annotations

import asyncio
import heapq
import math
import time
from collections import deque
from typing import Callable, Iterable, Sequence

from harness.types import Reply

QUIET_FLOOR_S = 0.1
"""The shortest quiet window, whatever the samples say."""
PERCENTILE = 95
MARGIN = 1.5
"""The window is this many times the percentile: a gap a little longer than any seen so
far still falls inside the turn."""
MIN_SAMPLES_FOR_PERCENTILE = 20
TICK_S = 0.01
"""How often ``Stalls`` looks whether the harness's loop runs."""
STALL_S = 0.02
"""A tick this much later than asked was a stall of the harness's own loop (a starved machine,
a blocking call): see ``Stalls``."""
DEAF_MIN_S = 0.25
"""A stall this long is not counted as quiet heard. Shorter ones (frequent on a loaded machine,
and within a window's margin) are only drained: counting them would stretch every window."""
DRAIN_TURNS = 3
"""Loop turns given after a stall before quiet is judged, so what reached the sandbox's
sockets meanwhile is read and recorded (the read callback, the handler's task, its record)."""


class Stalls:
    """When the harness's own loop did not run, so heard nothing (one per run).

    A quiet window counts seconds in which the agent was not heard. While the harness's loop is
    stalled (its process starved of CPU on a loaded machine, or held by a blocking call), what
    the agent sends waits unread in the sandbox's sockets: a window that "passes" then heard
    nothing, and ended on wall time alone it sends the next turn first and counts the agent's
    doing against that turn (seen: a cancel case's first turn, 0.42 s window, 2.5 s stall at
    load 5). A ticker every ``TICK_S`` records each tick later than ``STALL_S`` as a stall;
    after one, a waiter gives the loop a few turns before it judges (``Ear.drain``), and a stall
    of ``DEAF_MIN_S`` or more is not quiet heard (``Ear.heard``: the stall still going on, not
    ticked yet, included).
    """

    def __init__(self, clock: Callable[[], float] = time.time, history: int = 4096):
        self.clock = clock
        self.spans: deque[tuple[float, float]] = deque(maxlen=history)
        """The long stalls (``DEAF_MIN_S`` or more): (start, end)."""
        self.last_tick: float | None = None
        self.count = 0
        """Stalls seen (any length over ``STALL_S``)."""
        self._task: asyncio.Task | None = None

    def start(self) -> None:
        if self._task is None:
            self.last_tick = self.clock()
            self._task = asyncio.get_running_loop().create_task(self._tick(), name="loop-stalls")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
        self.last_tick = None

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(TICK_S)
            self.tick()

    def tick(self) -> None:
        """One look: a gap since the last longer than ``TICK_S + STALL_S`` is a stall."""
        now = self.clock()
        if self.last_tick is not None and now - self.last_tick > TICK_S + STALL_S:
            self.count += 1
            if now - self.last_tick >= DEAF_MIN_S:
                self.spans.append((self.last_tick, now))
        self.last_tick = now

    def pending(self, now: float) -> bool:
        """The loop is only now running again after a stall the ticker has not seen yet."""
        return self.last_tick is not None and now - self.last_tick > TICK_S + STALL_S

    def deaf(self, since: float, now: float) -> float:
        """Seconds of long stalls between ``since`` and ``now``."""
        total = 0.0
        for a, b in reversed(self.spans):
            if b <= since:
                break
            total += min(b, now) - max(a, since)
        if self.last_tick is not None and now - self.last_tick >= DEAF_MIN_S:
            total += now - max(self.last_tick, since)
        return max(0.0, total)

    def heard(self, since: float, now: float) -> float:
        """Seconds of quiet the harness heard between ``since`` and ``now``."""
        return now - since - self.deaf(since, now)

    def ear(self) -> "Ear":
        return Ear(self)


class Ear:
    """One waiter's view of the run's ``Stalls``: it drains after every stall since its last look."""

    __slots__ = ("stalls", "seen")

    def __init__(self, stalls: Stalls):
        self.stalls = stalls
        self.seen = stalls.count

    def heard(self, since: float, now: float) -> float:
        return self.stalls.heard(since, now)

    def mark(self) -> int:
        """The stalls seen so far: ``undisturbed`` tells whether another came since."""
        return self.stalls.count

    def undisturbed(self, mark: int, now: float) -> bool:
        """No stall since ``mark``, none going on at ``now``."""
        return self.stalls.count == mark and not self.stalls.pending(now)

    async def drain(self, now: float) -> bool:
        """After a stall since this waiter last looked (or one still unticked): a few loop turns,
        so what reached the sockets meanwhile is recorded before quiet is judged. True if it drained."""
        stalls = self.stalls
        if stalls.pending(now):
            stalls.tick()
        if stalls.count == self.seen:
            return False
        self.seen = stalls.count
        for _ in range(DRAIN_TURNS):
            await asyncio.sleep(0)
        return True


class QuietWindow:
    """The run's learned quiet window (one per run: one agent)."""

    def __init__(self, settle_s: float, floor_s: float = QUIET_FLOOR_S):
        self.settle_s = max(0.0, float(settle_s))
        self.floor_s = min(floor_s, self.settle_s)
        self.gaps: list[float] = []
        self.waits: list[float] = []
        self.idle_ends = 0
        self.full_run_end = False
        self._value = self.settle_s

    @property
    def value(self) -> float:
        """The window between two turns of a conversation, in seconds (``settle_s`` before any sample)."""
        return self._value

    @property
    def closing(self) -> float:
        """The window after a case's last turn (the floor before any sample)."""
        return self._value if self.gaps else self.floor_s

    @property
    def run_end(self) -> float:
        """The run's last window: ``closing``, or ``settle_s`` once turns may end on evidence that
        the agent is idle (``full_run_end``): what that evidence cannot see, a reply sent on a
        timer, must still be heard after the run's last activity."""
        return self.settle_s if self.full_run_end else self.closing

    def learn(self, replies: Sequence[Reply], events: Sequence = ()) -> None:
        """The silences before each reply after a turn's first (in one chat) become samples: from
        the agent's previous activity (a reply, or the end of a call it made meanwhile:
        ``events``) to the reply. The window waits for quiet since the last activity, so a
        second reply that came after a busy spell of calls needs no longer window."""
        times = sorted(r.at for r in replies)
        activity = sorted(times + [e.at + max(0.0, e.duration_ms) / 1000 for e in events
                                   if getattr(e, "source", "") != "driver"])
        new = []
        for a, b in zip(times, times[1:]):
            before = [t for t in activity if a <= t < b]
            new.append(b - (max(before) if before else a))
        new = [g for g in new if g >= 0]
        if new:
            self.gaps.extend(new)
            self._value = self._fit()

    def learn_gap(self, gap_s: float) -> None:
        """One gap seen outside a turn's record (a late reply after the turn's last one)."""
        if gap_s >= 0:
            self.gaps.append(gap_s)
            self._value = self._fit()

    def used(self, seconds: float, idle: bool = False) -> None:
        """Record one window a turn waited (results.json reports their spread); ``idle``: it
        ended early on evidence that the agent was idle (harness/run/idle.py)."""
        self.waits.append(seconds)
        self.idle_ends += idle

    def _fit(self) -> float:
        if not self.gaps:
            return self.settle_s
        high = percentile(self.gaps, PERCENTILE) if len(self.gaps) >= MIN_SAMPLES_FOR_PERCENTILE else max(self.gaps)
        return min(self.settle_s, max(self.floor_s, MARGIN * high))

    def describe(self) -> dict:
        """results.json ``summary.quiet_window``."""
        waits = self.waits
        return {"final_s": round(self._value, 4), "floor_s": self.floor_s, "settle_s": self.settle_s,
                "percentile": PERCENTILE, "margin": MARGIN, "samples": len(self.gaps),
                "gap_p95_s": round(percentile(self.gaps, PERCENTILE), 4) if self.gaps else None,
                "turns": len(waits), "min_s": round(min(waits), 4) if waits else None,
                "median_s": round(percentile(waits, 50), 4) if waits else None,
                "max_s": round(max(waits), 4) if waits else None,
                "idle_ends": self.idle_ends,
                "run_end_s": round(self.run_end, 4), "before_samples": {"between_turns_s": self.settle_s,
                                                                      "closing_s": self.floor_s}}


def percentile(values: Iterable[float], q: float) -> float:
    """Nearest-rank percentile (no interpolation: the value is one that was observed)."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("percentile of no values")
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


class Limiter:
    """The run's concurrency bound: at most ``n`` slots held; a waiter with a lower priority
    number goes first (a case's next attempt before a case not started), then first come."""

    def __init__(self, n: int):
        self.free = max(1, n)
        self._waiters: list[tuple[float, int, asyncio.Future]] = []
        self._seq = 0

    async def acquire(self, priority: float = 1) -> None:
        if self.free > 0 and not self._waiters:
            self.free -= 1
            return
        fut = asyncio.get_running_loop().create_future()
        self._seq += 1
        heapq.heappush(self._waiters, (priority, self._seq, fut))
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():  # the slot was handed over just as we were cancelled
                self.release()
            raise

    def release(self) -> None:
        while self._waiters:
            _, _, fut = heapq.heappop(self._waiters)
            if not fut.done():
                fut.set_result(None)  # the slot passes straight to the waiter
                return
        self.free += 1


class Slot:
    """One case's hold on the run's ``Limiter``; take and give are idempotent."""

    def __init__(self, limiter: Limiter):
        self._limiter = limiter
        self.held = False

    async def take(self, priority: float = 1) -> None:
        if not self.held:
            await self._limiter.acquire(priority)
            self.held = True

    def give(self) -> None:
        if self.held:
            self.held = False
            self._limiter.release()
