"""Positive evidence that the agent is idle, so a turn's quiet window may end early (``AgentIdle``).

A quiet window waits for a reply that might still come. It can end sooner only when every
way the agent could still be working on the turn is seen to be at rest:

- the webhook request was answered (the runner settles only after the delivery returned);
- no sandbox request that may be the case's is in flight (``Router.busy_for``: an LLM or tool
  call, a document fetch, a channel call not attributed yet);
- the target's process tree (a ``command`` target: its leader and every descendant, every
  thread) used no CPU across a short probe, and no thread of it was runnable at either end
  (Linux ``/proc/<pid>/task/<tid>/stat`` and ``schedstat``: nanoseconds, not clock ticks).

Any of it missing (an in-process target shares the harness's own process; a target given by
URL has no process here; not Linux; an unreadable /proc) and the full window is kept. What
this cannot see is an agent sleeping on a timer before it sends more: after a case's last turn
its reply still reaches the case (finished cases' chats stay open until the run ends, and the
run's last window is never shortened: ``QuietWindow.run_end``); between two turns it lands in
the next turn, as after any window, and counts there.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass

#: How long the process tree must show no CPU use.
PROBE_S = 0.005
#: The agent's last event must be at least this old before a probe starts.
MIN_QUIET_S = 0.005
#: A probe whose sleep overran by more than this (the harness's loop stalled: what the agent
#: sent meanwhile may still wait unread in the sandbox's sockets) proves nothing.
MAX_OVERRUN_S = 0.02
#: After a probe that found the agent at work, the next one waits this long at most (doubling from MIN_QUIET_S).
MAX_BACKOFF_S = 0.08
#: Thread states that are work: running or runnable, uninterruptible (disk) wait.
BUSY_STATES = frozenset("RD")


@dataclass(frozen=True)
class Sample:
    pids: frozenset[int]
    run_ns: int
    busy: bool
    """A thread was running, runnable or in an uninterruptible wait."""


class ProcessTree:
    """CPU samples of one process and its descendants (Linux /proc; ``sample`` None elsewhere)."""

    def __init__(self, leader: int, proc: str = "/proc"):
        self.leader = leader
        self.proc = proc

    def sample(self) -> Sample | None:
        """The tree's threads now, or None when the leader is gone or /proc cannot tell."""
        seen: set[int] = set()
        todo = [self.leader]
        run_ns, busy = 0, False
        while todo:
            pid = todo.pop()
            if pid in seen:
                continue
            try:
                tids = os.listdir(f"{self.proc}/{pid}/task")
            except OSError:
                if pid == self.leader:
                    return None
                continue  # a child that just exited
            seen.add(pid)
            for tid in tids:
                base = f"{self.proc}/{pid}/task/{tid}"
                try:
                    with open(f"{base}/stat", "rb") as fh:
                        state = fh.read().rsplit(b")", 1)[1].split()[0].decode()
                    with open(f"{base}/schedstat", "rb") as fh:
                        run_ns += int(fh.read().split()[0])
                except (OSError, IndexError, ValueError):
                    if pid == self.leader and tid == str(pid):
                        return None
                    continue  # a thread that just exited
                busy = busy or state in BUSY_STATES
                try:
                    with open(f"{base}/children", "rb") as fh:
                        todo.extend(int(c) for c in fh.read().split())
                except (OSError, ValueError):
                    if pid == self.leader and tid == str(pid):
                        return None  # no children file: descendants cannot be followed
        return Sample(frozenset(seen), run_ns, busy)

    @staticmethod
    def at_rest(before: Sample | None, after: Sample | None) -> bool:
        return (before is not None and after is not None and not before.busy and not after.busy
                and before.pids == after.pids and before.run_ns == after.run_ns)


def tree_of(target) -> ProcessTree | None:
    """The probe for a started ``command`` target (its process tree's leader), else None."""
    tree = getattr(target, "tree", None)
    leader = getattr(tree, "leader", None)
    if not isinstance(leader, int) or not os.path.isdir(f"/proc/{leader}/task"):
        return None
    probe = ProcessTree(leader)
    return probe if probe.sample() is not None else None


class AgentIdle:
    """The evidence for one run: ``await idle(rec)`` is True only when all of it holds. One probe
    of the process tree at a time serves every case that waits (the tree is shared)."""

    def __init__(self, router, tree: ProcessTree | None):
        self.router = router
        self.tree = tree
        self._probe: asyncio.Future | None = None
        self._probe_from = 0.0
        self.probes = 0
        """Probes of the process tree taken (results.json ``summary.quiet_window.idle_probes``)."""

    @property
    def available(self) -> bool:
        return self.tree is not None

    async def _rest(self, after: float) -> tuple[bool, float]:
        """(the tree was at rest across a probe that started at or after ``after``, its start)."""
        while True:
            if self._probe is not None and not self._probe.done():
                if self._probe_from >= after:
                    return await asyncio.shield(self._probe), self._probe_from
                await asyncio.shield(self._probe)  # started too early for this case: the next one
                continue
            self._probe_from = time.time()
            self._probe = asyncio.ensure_future(self._take())
            return await asyncio.shield(self._probe), self._probe_from

    async def _take(self) -> bool:
        self.probes += 1
        first = self.tree.sample()
        if first is None or first.busy:
            await asyncio.sleep(0)  # one loop turn: a waiter that arrives meanwhile shares this answer
            return False
        t0 = time.monotonic()
        await asyncio.sleep(PROBE_S)
        for _ in range(3):  # what reached the sandbox's sockets meanwhile is read and being served
            await asyncio.sleep(0)
        if time.monotonic() - t0 > PROBE_S + MAX_OVERRUN_S:
            return False
        return ProcessTree.at_rest(first, self.tree.sample())

    async def idle(self, rec) -> bool:
        """Probe ``rec``'s agent (about ``PROBE_S``): nothing of the case's in flight, no new event
        (its own or unattributed), no CPU in the target's tree across a probe begun after them."""
        router = self.router
        if self.tree is None or router.busy_for(rec):
            return False
        before_event = rec.last_activity
        before_stray = len(router.unattributed) + router.unattributed_over
        rest, _ = await self._rest(before_event)
        return (rest and rec.last_activity == before_event
                and len(router.unattributed) + router.unattributed_over == before_stray
                and not router.busy_for(rec))
