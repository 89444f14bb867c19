"""The machine the run was given: the harness's own event-loop lag and the CPU it got.

A latency bound measures the agent only while the machine gives the agent and the harness
the CPU they ask for. On a shared 2-core CI runner another job can take both cores, and a
clean agent then answers in 7.5 s against a 5 s bound, or its own 4 s LLM timeout fires.
That is a measurement of the machine, not of the agent; reporting it as a failure is a false
alarm, and reporting it as a pass would be a fake verdict. So the runner starts a
``MachineMonitor`` for the whole run, and latency evidence measured while the machine was
overloaded becomes ``unavailable`` with the figures that explain it (``excuse``).

Every ``interval_s`` the monitor records one ``Sample``:

- ``lag_s``: how late its own ``asyncio.sleep`` woke (the harness's event loop was busy or
  the process was not scheduled);
- ``others_cores``: CPU the machine spent on processes outside the run (system busy time,
  steal included, minus the harness process and its children, e.g. the agent it started),
  in cores;
- ``own_cores``: CPU of the harness and its children, in cores (process CPU time over wall);
- ``own_wait_s``: seconds the run's processes (the harness and its children, their main
  threads) waited on a run queue for a CPU (``/proc/<pid>/schedstat``; None where absent);
- ``cpu_wait``: the share of the interval during which some runnable task waited for a CPU
  (Linux pressure stall information, ``/proc/pressure/cpu`` "some"; None where absent);
- ``runnable``: tasks runnable at the sample (``/proc/stat`` procs_running), ``load1``:
  the 1-minute load average.

A window (a turn, a case) is **overloaded** when processes outside the run took at least
``OTHERS_MIN_CORES`` on average (the starvation came from outside: a CPU-hungry regression
in the agent, a child of the harness, never excuses itself) and the run was starved: the
loop woke ``LAG_OVERLOAD_S`` late, or runnable tasks waited for a CPU ``WAIT_OVERLOAD`` of
the window (without pressure information: more than ``RUNNABLE_PER_CORE`` runnable tasks
per core). A breach is **explained** when the window is overloaded and the latency's excess
over its bound is at most the window's stall: the seconds the run's own processes waited for
a CPU in it (where schedstat is not readable: the pressure share of the window, or the share
a fair scheduler gave the other runnable tasks) plus the largest loop lag. The agent's own timeouts get the same treatment: a failed
turn in which the agent gave up on an LLM call the gateway was still serving
(``abandoned_calls``; never a call the harness failed on purpose), and a variant whose
trajectory differs from its original's only by a call the agent sent again word for word
(``retries``), are unavailable when their window was overloaded; so is a failed turn (and the turns after
it) in which the harness's own loop, which serves the agent's whole world, stalled
``FROZEN_S`` or more (``excuse_frozen_turns``). The runner's reply wait adds the loop lag
measured since the turn was sent (``lag_since``). The rules live in ``harness/run/overload.py``; docs/CASES.md
"Latency on a busy machine" is the user's description of them.
"""

from __future__ import annotations

import asyncio
import bisect
import logging
import os
import time
from collections import deque
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from harness.run.probe import Probe
from harness.types import Evidence

log = logging.getLogger("harness.run.machine")


INTERVAL_S = 0.2
"""How often the monitor samples (and the shortest lag it can see)."""


HISTORY = 36_000
"""Samples kept (two hours at ``INTERVAL_S``): the oldest go first, the memory stays bounded."""
LAG_OVERLOAD_S = 0.5
"""A loop that woke this late at least once in the window was starved."""
#: The harness's own loop stalled this long in a window: a latency breach no bigger than the stall
#: is the harness's doing (it stamps replies late), not the agent's.
SELF_STALL_S = 0.5
WAIT_OVERLOAD = 0.5
"""Runnable tasks waited for a CPU at least this share of the window (pressure stall information)."""
RUNNABLE_PER_CORE = 1.5
"""Without pressure information: more runnable tasks per core than this, on average."""
MAX_STRETCH = 4.0
"""The most a shared machine is taken to stretch the agent's work (``Window.stretch``)."""
OTHERS_MIN_CORES = 0.5
"""Processes outside the run took at least this many cores on average: the machine was not quiet."""
FROZEN_S = 2.0
"""The harness's loop, which serves the agent's whole world (LLM gateway, documents, channel
emulators), stalled this long in an overloaded window: whatever timed out then measured the freeze."""



@dataclass(frozen=True)
class Sample:
    """One interval of the run, as the monitor saw it."""

    at: float
    """Wall clock (``time.time()``) at the end of the interval."""
    span_s: float
    """How long the interval lasted (the sleep plus its lag)."""
    lag_s: float
    """How late the monitor's sleep woke."""
    others_cores: float = 0.0
    """CPU used by processes outside the run, in cores (steal time counted as theirs)."""
    own_cores: float = 0.0
    """CPU used by the harness and its children, in cores."""
    own_wait_s: float | None = None
    """Seconds the run's processes (the harness and its children, main threads) waited on a
    run queue for a CPU during the interval (``/proc/<pid>/schedstat``; None: unknown)."""
    cpu_wait: float | None = None
    """Share of the interval in which some runnable task waited for a CPU (None: unknown)."""
    runnable: int | None = None
    """Runnable tasks at the sample (None: unknown)."""
    load1: float | None = None
    """The 1-minute load average at the sample (None: unknown)."""


@dataclass(frozen=True)
class Window:
    """What the machine gave the run between two instants (a turn, a case)."""

    start: float
    end: float
    cores: int
    samples: int = 0
    lag_max_s: float = 0.0
    others_cores: float = 0.0
    """Mean over the window."""
    own_cores: float = 0.0
    own_wait_s: float | None = None
    """Seconds the run's processes waited for a CPU in the window (None: unknown)."""
    cpu_wait: float | None = None
    """Mean over the window (None: no pressure information)."""
    runnable_per_core: float | None = None
    load1: float | None = None
    """Highest 1-minute load average seen in the window."""

    @property
    def seconds(self) -> float:
        return max(0.0, self.end - self.start)

    @property
    def overloaded(self) -> bool:
        """Starved by processes outside the run (see the module docstring)."""
        if not self.samples or self.others_cores < OTHERS_MIN_CORES:
            return False
        if self.lag_max_s >= LAG_OVERLOAD_S:
            return True
        if self.cpu_wait is not None:
            return self.cpu_wait >= WAIT_OVERLOAD
        return self.runnable_per_core is not None and self.runnable_per_core > RUNNABLE_PER_CORE

    @property
    def stall_s(self) -> float:
        """Seconds of the window the machine's starvation explains: what the run's own processes
        waited for a CPU (else the machine's pressure share of the window), plus the largest loop lag."""
        if self.own_wait_s is not None:
            return self.own_wait_s + self.lag_max_s
        if self.cpu_wait is not None:
            share = self.cpu_wait
        elif self.runnable_per_core:
            share = max(0.0, 1.0 - 1.0 / self.runnable_per_core) if self.runnable_per_core > 1 else 0.0
        else:
            share = 0.0
        return share * self.seconds + self.lag_max_s

    def explains(self, excess_s: float | None) -> bool:
        """An overloaded window explains an excess of up to its stall (unknown excess: overload alone).
        So does the harness's own loop stalling, on a machine nobody else loads: a reply reaches the
        emulator's handler, and is stamped, only when the loop runs again, so a turn's latency
        holds the stall (up to the largest lag of the window)."""
        if not self.samples:
            return False
        if not self.overloaded:
            return (self.lag_max_s >= SELF_STALL_S and excess_s is not None and excess_s <= self.lag_max_s)
        return excess_s is None or excess_s <= self.stall_s

    @property
    def stretch(self) -> float:
        """How much longer the agent's CPU work takes when processes outside the run hold
        ``others_cores`` of the machine's cores (a fair share of what is left), at most
        ``MAX_STRETCH``; 1.0 on a machine nobody else loads."""
        if not self.samples or self.others_cores < OTHERS_MIN_CORES:
            return 1.0
        free = max(self.cores - self.others_cores, self.cores / MAX_STRETCH)
        return min(MAX_STRETCH, self.cores / free)

    def shared_explains(self, observed_s: float, bound_s: float) -> bool:
        """A band learned on a machine the run had to itself is stretched by what other processes
        took in this window: a latency within ``bound x stretch`` is the machine's, not the agent's."""
        return self.stretch > 1.0 and observed_s <= bound_s * self.stretch

    def to_dict(self) -> dict:
        """results.json ``cases[].machine``: the case's window."""
        r = lambda v, n=3: None if v is None else round(v, n)  # noqa: E731
        return {"samples": self.samples, "loop_lag_max_s": r(self.lag_max_s), "others_cores": r(self.others_cores, 2),
                "own_cores": r(self.own_cores, 2), "own_wait_s": r(self.own_wait_s), "cpu_wait": r(self.cpu_wait), "load1": r(self.load1, 2),
                "runnable_per_core": r(self.runnable_per_core, 2), "stall_s": r(self.stall_s),
                "overloaded": self.overloaded}

    def describe(self) -> str:
        """``loop lag 2.3 s, load 4.1 on 2 cores, ...``: the figures in an unavailable reason."""
        parts = [f"loop lag {self.lag_max_s:.1f} s"]
        if self.load1 is not None:
            parts.append(f"load {self.load1:.1f} on {self.cores} cores")
        parts.append(f"other processes took {self.others_cores:.1f} cores")
        if self.own_wait_s is not None:
            parts.append(f"the run's processes waited {self.own_wait_s:.1f} s for a CPU")
        if self.cpu_wait is not None:
            parts.append(f"tasks waited for a CPU {self.cpu_wait:.0%} of the time")
        elif self.runnable_per_core is not None:
            parts.append(f"{self.runnable_per_core:.1f} runnable tasks per core")
        return ", ".join(parts)


class MachineMonitor:
    """Samples the machine every ``interval_s`` while the run lasts; answers per window.

    ``probe`` reads the counters (``Probe``); tests record ``Sample`` objects directly
    (``record``) and never start the task, so no assertion depends on the wall clock.
    """

    def __init__(self, interval_s: float = INTERVAL_S, history: int = HISTORY,
                 probe: Probe | None = None, cores: int | None = None,
                 clock: Callable[[], float] = time.time, monotonic: Callable[[], float] = time.monotonic):
        self.interval_s = interval_s
        self.samples: deque[Sample] = deque(maxlen=max(1, history))
        self._times: list[float] | None = None
        self._probe = probe
        self.cores = cores or (probe.cores if probe is not None else (os.cpu_count() or 1))
        self.clock = clock
        self.monotonic = monotonic
        self._task: asyncio.Task | None = None
        self._counters: tuple | None = None
        self._last = 0.0
        self.error = ""
        self._excused: dict[tuple[str, str, int | None], str] = {}
        """(case, check, turn) -> the rule that made it unavailable (a re-evaluation counts once)."""

    @classmethod
    def off(cls) -> "MachineMonitor":
        """A monitor that never samples, so nothing is ever excused: for a test that must see a
        latency regression fail whatever else the machine is running."""
        m = cls()
        m._off = True
        return m

    _off = False

    # -- running -----------------------------------------------------------------------

    def start(self) -> None:
        """Start sampling on the running loop (no-op when started already, off, or psutil is missing)."""
        if self._task is not None or self._off:
            return
        if self._probe is None:
            try:
                self._probe = Probe()
                self.cores = self._probe.cores
            except Exception as exc:  # psutil missing: the run goes on, nothing is excused
                self.error = f"machine monitor unavailable: {type(exc).__name__}: {exc}"
                log.warning(self.error)
                return
        self._task = asyncio.get_running_loop().create_task(self._sample_forever(), name="machine-monitor")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is None:
            return
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass

    async def _sample_forever(self) -> None:
        probe = self._probe
        self._counters = (probe.busy_s(), *_own(probe), probe.cpu_stall_us())
        self._last = self.monotonic()
        while True:
            await asyncio.sleep(self.interval_s)
            try:
                sample, counters = self._read()
                self.record(sample)
                self._counters = counters
            except Exception as exc:  # a reading bug must not end the run
                self.error = f"machine sample failed: {type(exc).__name__}: {exc}"
                log.debug(self.error)
            self._last = self.monotonic()

    def _read(self) -> tuple[Sample, tuple]:
        """The interval since the last sample, read now (its lag: how late the loop is so far)."""
        probe = self._probe
        busy, own, waited, stall = self._counters
        span = self.monotonic() - self._last
        lag = max(0.0, span - self.interval_s)
        busy2, own2, waited2, stall2 = probe.busy_s(), *_own(probe), probe.cpu_stall_us()
        own_wait = max(0.0, waited2 - waited) if waited is not None and waited2 is not None else None
        wait = None
        if stall is not None and stall2 is not None and span > 0:
            wait = min(1.0, max(0.0, (stall2 - stall) / 1e6 / span))
        # a child that exits between two readings can make the deltas jump: never more than the machine has
        own_cores = min(self.cores, max(0.0, own2 - own) / span) if span > 0 else 0.0
        others = min(self.cores, max(0.0, (busy2 - busy) - (own2 - own)) / span) if span > 0 else 0.0
        return (Sample(at=self.clock(), span_s=span, lag_s=lag, others_cores=others, own_cores=own_cores,
                       own_wait_s=own_wait, cpu_wait=wait, runnable=probe.runnable(), load1=probe.load1()),
                (busy2, own2, waited2, stall2))

    def _pending(self, end: float) -> Sample | None:
        """The interval not sampled yet, when a window reaches into it: a loop that lags is late to
        sample too, and a case evaluated before the monitor wakes must still see the lag so far."""
        if self._task is None or self._counters is None or (self.samples and self.samples[-1].at >= end):
            return None
        # the lag so far is what matters, and it is free to read; the CPU figures are the last
        # sample's rates (reading the counters costs milliseconds, and windows are asked per case)
        span = self.monotonic() - self._last
        if span <= 0.05:
            return None
        last = self.samples[-1] if self.samples else Sample(at=0.0, span_s=1.0, lag_s=0.0)
        return Sample(at=self.clock(), span_s=span, lag_s=max(0.0, span - self.interval_s),
                      others_cores=last.others_cores, own_cores=last.own_cores,
                      own_wait_s=None if last.own_wait_s is None else last.own_wait_s / max(1e-9, last.span_s) * span,
                      cpu_wait=last.cpu_wait, runnable=last.runnable, load1=last.load1)

    def lag_since(self, start: float) -> float:
        """Seconds the harness's loop was late since ``start`` (wall clock), the pending interval included."""
        if self._times is None or len(self._times) != len(self.samples):
            self._times = [s.at for s in self.samples]
        lo = bisect.bisect_right(self._times, start)
        total = sum(s.lag_s for s in list(self.samples)[lo:])
        pending = self._pending(float("inf"))
        return total + (pending.lag_s if pending is not None else 0.0)

    @property
    def excused(self) -> dict[str, int]:
        """Evidence turned unavailable, by rule (results.json ``summary.machine.excused``)."""
        out = {"latency": 0, "agent_timeout": 0, "frozen": 0}
        for rule in self._excused.values():
            out[rule] += 1
        return out

    @property
    def excused_cases(self) -> list[str]:
        return sorted({case for case, _, _ in self._excused})

    def excusing(self, case_id: str, before: Sequence[Evidence], after: Sequence[Evidence], rule: str) -> None:
        for a, b in zip(before, after):
            if a.availability == "ready" and b.availability == "unavailable":
                self._excused.setdefault((case_id, a.check, a.turn), rule)

    # -- reading -----------------------------------------------------------------------

    def record(self, sample: Sample) -> None:
        self.samples.append(sample)
        self._times = None

    def window(self, start: float, end: float) -> Window:
        """The samples whose interval overlaps [start, end], summed up."""
        if self._times is None or len(self._times) != len(self.samples):
            self._times = [s.at for s in self.samples]
        lo = bisect.bisect_left(self._times, start)
        chosen = []
        for s in list(self.samples)[lo:]:
            if s.at - s.span_s > end:
                break
            chosen.append(s)
        pending = self._pending(end)
        if pending is not None:
            chosen.append(pending)
        if not chosen:
            return Window(start=start, end=end, cores=self.cores)
        spans = [max(1e-9, s.span_s) for s in chosen]
        total = sum(spans)

        def mean(values: Iterable[float | None]) -> float | None:
            pairs = [(v, w) for v, w in zip(values, spans) if v is not None]
            if not pairs:
                return None
            return sum(v * w for v, w in pairs) / sum(w for _, w in pairs)

        runnable = mean(s.runnable for s in chosen)
        loads = [s.load1 for s in chosen if s.load1 is not None]
        waits = [(s.own_wait_s, _overlap(s, start, end)) for s in chosen]
        own_wait = None if any(w is None for w, _ in waits) else sum(w * f for w, f in waits)
        return Window(start=start, end=end, cores=self.cores, samples=len(chosen),
                      lag_max_s=max(s.lag_s for s in chosen),
                      others_cores=sum(s.others_cores * w for s, w in zip(chosen, spans)) / total,
                      own_cores=sum(s.own_cores * w for s, w in zip(chosen, spans)) / total, own_wait_s=own_wait,
                      cpu_wait=mean(s.cpu_wait for s in chosen),
                      runnable_per_core=(runnable / self.cores) if runnable is not None else None,
                      load1=max(loads) if loads else None)

    def describe(self) -> dict:
        """results.json ``summary.machine``: the run's figures, the rule's thresholds, what was excused."""
        samples = list(self.samples)
        lags = sorted(s.lag_s for s in samples)
        loads = [s.load1 for s in samples if s.load1 is not None]
        waits = [s.cpu_wait for s in samples if s.cpu_wait is not None]
        others = [s.others_cores for s in samples]
        overloaded = sum(s.span_s for s in samples
                         if Window(start=s.at - s.span_s, end=s.at, cores=self.cores, samples=1, lag_max_s=s.lag_s,
                                   others_cores=s.others_cores, cpu_wait=s.cpu_wait,
                                   runnable_per_core=(s.runnable / self.cores) if s.runnable is not None else None,
                                   ).overloaded)
        return {
            "cores": self.cores, "interval_s": self.interval_s, "samples": len(samples),
            "loop_lag_max_s": round(lags[-1], 3) if lags else None,
            # when the worst stall ended, in seconds after the first sample (start-up or mid-run?)
            "loop_lag_max_at_s": (round(max(samples, key=lambda s: s.lag_s).at - samples[0].at + samples[0].span_s, 1)
                                  if samples else None),
            "loop_lag_p95_s": round(lags[min(len(lags) - 1, int(0.95 * len(lags)))], 3) if lags else None,
            "load1_max": round(max(loads), 2) if loads else None,
            "others_cores_mean": round(sum(others) / len(others), 2) if others else None,
            "others_cores_max": round(max(others), 2) if others else None,
            "cpu_wait_mean": round(sum(waits) / len(waits), 3) if waits else None,
            "pressure": bool(waits),
            "own_wait_s": (round(sum(s.own_wait_s for s in samples), 1)
                           if samples and all(s.own_wait_s is not None for s in samples) else None),
            "overloaded_s": round(overloaded, 1),
            "excused": self.excused, "excused_cases": self.excused_cases,
            "thresholds": {"loop_lag_s": LAG_OVERLOAD_S, "cpu_wait": WAIT_OVERLOAD,
                           "runnable_per_core": RUNNABLE_PER_CORE, "others_min_cores": OTHERS_MIN_CORES},
            **({"error": self.error} if self.error else {}),
        }

    def note(self) -> str:
        """The run's one line on its machine (results.json notes, summary.md), when the machine
        changed a verdict (the figures are always in ``summary.machine``)."""
        d = self.describe()
        if not d["samples"] or not sum(self.excused.values()):
            return ""
        load = f", load up to {d['load1_max']:.1f} on {d['cores']} cores" if d["load1_max"] is not None else ""
        line = (f"machine: max loop lag {d['loop_lag_max_s']:.2f} s{load}, other processes took "
                f"{d['others_cores_mean']:.1f} cores on average; overloaded {d['overloaded_s']:.0f} s of the run")
        x = self.excused
        return line + (f"; {x['latency']} latency check(s), {x['agent_timeout']} agent-timeout failure(s) and "
                       f"{x['frozen']} failure(s) in a frozen sandbox reported unavailable (machine overloaded) in "
                       f"{len(self.excused_cases)} case(s): " + ", ".join(self.excused_cases[:10]))

def _own(probe) -> tuple[float, float | None]:
    """A probe's (CPU, wait) of the run; a probe without ``own`` (a test's) has no wait figure."""
    own = getattr(probe, "own", None)
    return own() if own is not None else (probe.own_s(), None)


def _overlap(s: Sample, start: float, end: float) -> float:
    """The share of the sample's interval inside [start, end]."""
    lo, hi = max(start, s.at - s.span_s), min(end, s.at)
    return max(0.0, hi - lo) / s.span_s if s.span_s > 0 else 1.0
