"""The machine's counters as the monitor reads them (machine.py): the whole machine's busy
time, the run's own CPU and run-queue wait (the harness and its process tree, through psutil
and ``/proc/<pid>/schedstat``), CPU pressure, runnable tasks and the load average. Every
reading may be missing (None) where the platform does not offer it."""

from __future__ import annotations

import os
import time

CHILDREN_REFRESH_S = 2.0
"""How often the run's process tree is listed again (a child started since is counted from then)."""


def _runqueue_wait_s(pid: int) -> float | None:
    """Seconds the process's main thread has waited on a run queue (``/proc/<pid>/schedstat``)."""
    try:
        with open(f"/proc/{pid}/schedstat") as fh:
            return int(fh.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


class Probe:
    """Reads the machine's counters (psutil and /proc); every reading may be missing."""

    def __init__(self, pid: int | None = None):
        import psutil

        self._psutil = psutil
        self._me = psutil.Process(pid)
        self.cores = psutil.cpu_count() or os.cpu_count() or 1
        self._children: dict[int, object] = {}
        self._gone_cpu = 0.0
        self._gone_wait = 0.0
        """CPU and wait of children that exited since the run began (their last reading)."""
        self._last_child: dict[int, tuple[float, float]] = {}
        self._kids: list | None = None
        self._kids_at = 0.0

    def busy_s(self) -> float:
        """CPU seconds the whole machine spent busy since boot (all cores, steal included)."""
        t = self._psutil.cpu_times()
        idle = getattr(t, "idle", 0.0) + getattr(t, "iowait", 0.0)
        total = sum(t) - getattr(t, "guest", 0.0) - getattr(t, "guest_nice", 0.0)  # guest is in user already
        return max(0.0, total - idle)

    def own(self) -> tuple[float, float | None]:
        """(CPU seconds, run-queue wait seconds) of the harness process and every child it has
        had during the run; the wait is None where ``/proc/<pid>/schedstat`` is not readable."""
        ps = self._psutil
        try:
            mine = self._me.cpu_times()
            total = mine.user + mine.system
            now = time.monotonic()
            if self._kids is None or now - self._kids_at >= CHILDREN_REFRESH_S:
                # listing children scans every process of the machine (~10 ms on a busy one): not every sample
                self._kids, self._kids_at = self._me.children(recursive=True), now
            kids = self._kids
        except ps.Error:
            return 0.0, None
        wait = _runqueue_wait_s(self._me.pid)
        seen: dict[int, tuple[float, float]] = {}
        for child in kids:
            try:
                ct = child.cpu_times()
            except ps.Error:
                continue
            seen[child.pid] = (ct.user + ct.system, _runqueue_wait_s(child.pid) or 0.0)
        for pid, (cpu, waited) in self._last_child.items():
            if pid not in seen:  # exited: its time stays the run's
                self._gone_cpu += cpu
                self._gone_wait += waited
        self._last_child = seen
        cpu = total + sum(c for c, _ in seen.values()) + self._gone_cpu
        if wait is None:
            return cpu, None
        return cpu, wait + sum(w for _, w in seen.values()) + self._gone_wait

    def own_s(self) -> float:
        return self.own()[0]

    @staticmethod
    def cpu_stall_us() -> float | None:
        """Cumulative microseconds some runnable task waited for a CPU (Linux PSI), or None."""
        try:
            with open("/proc/pressure/cpu") as fh:
                first = fh.readline()
        except OSError:
            return None
        for field in first.split():
            if field.startswith("total="):
                try:
                    return float(field[6:])
                except ValueError:
                    return None
        return None

    @staticmethod
    def runnable() -> int | None:
        try:
            with open("/proc/stat") as fh:
                for line in fh:
                    if line.startswith("procs_running"):
                        return int(line.split()[1])
        except (OSError, ValueError, IndexError):
            return None
        return None

    @staticmethod
    def load1() -> float | None:
        try:
            return os.getloadavg()[0]
        except OSError:
            return None
