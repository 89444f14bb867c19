"""Cases that send the same text never run side by side (``TextGate``).

A call that names no case (no user field: most bots) is attributed by the text it carries
(``sandbox/router.py``); a text two running cases sent identifies neither. So a case takes
the texts it sends (``turns.case_texts``) before it sends them and gives them back when it is
done. All at once, never one by one: a case holding one text while it waits for the next
made convoys (a short case behind a long one behind another, each holding what the next
needed). Fair: a waiting case is passed only by cases that share no text with it or with a
case that waits before it, so no case waits forever behind a stream of others. "Before" is
the waiters' priority, then their arrival: the runner gives a longer chain of cases a lower
number (``order.py``), so a variant that could only start late is not queued behind every
short case that shares one of its texts.

**Later segments.** A case whose turn waits before it is sent (``wait_s``: "stop", then 3 s,
then "/help") need not hold that turn's texts through the wait: its texts come in segments,
split at such turns, and a later segment's are taken when its first turn is sent (``more``).
That cannot deadlock, because a case is let in only when every text it shares with a running
case lies in the *last* segment of both (``_admissible``): a case waits only for its last
segment, and the case holding what it waits for has taken its own last segment already, so
waits for nothing. A case without such waits has one segment, and the rule is the old one.
"""

from __future__ import annotations

import asyncio
import bisect
import itertools
from typing import Iterable, Sequence


class Hold:
    """One case's texts: held now, and all it will hold (its segments)."""

    __slots__ = ("held", "all", "last", "released")

    def __init__(self, first: frozenset[str], later: Sequence[frozenset[str]]):
        self.held = first
        self.all = first.union(*later) if later else first
        self.last = (later[-1] if later else first)
        self.released = False



class TextGate:
    def __init__(self) -> None:
        self.busy: set[str] = set()
        """The texts held by the cases running now."""
        self.running: list[Hold] = []
        self._waiting: list[tuple[float, int, Hold, asyncio.Future]] = []
        """Cases not let in yet: (priority, arrival, hold, future), in the order they are served."""
        self._more: list[tuple[Hold, frozenset[str], asyncio.Future]] = []
        """Running cases waiting for a later segment, first come first served."""
        self._seq = itertools.count()

    def _admissible(self, hold: Hold) -> bool:
        if hold.held & self.busy:
            return False
        for other in self.running:
            shared = hold.all & other.all
            if shared and not (shared <= hold.last and shared <= other.last):
                return False
        return True

    async def acquire(self, texts: Iterable[str], priority: float = 1.0,
                      later: Sequence[Iterable[str]] = ()) -> Hold:
        """Wait until no running case (nor one that waits before this one: a lower ``priority``,
        or the same and earlier) sends any of ``texts`` (the first segment) and every text shared
        with a running case lies in the last segment of both; then hold ``texts``. ``later``: the
        texts of the case's later segments, taken with ``more``. Returns what to ``release``."""
        first = frozenset(texts)
        rest = [frozenset(t) - first for t in later]
        hold = Hold(first, [t for t in rest if t])
        if not hold.all:
            self.running.append(hold)
            return hold
        if (self._admissible(hold) and not any(hold.all & h.all for p, _, h, _ in self._waiting if p <= priority)
                and not any(hold.held & want for _, want, _ in self._more)):
            self._let_in(hold)
            return hold
        fut = asyncio.get_running_loop().create_future()
        entry = (priority, next(self._seq), hold, fut)
        bisect.insort(self._waiting, entry, key=lambda e: (e[0], e[1]))
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():  # let in as it was cancelled: give them back
                self.release(hold)
            else:
                self._waiting = [e for e in self._waiting if e[3] is not fut]
                self._grant()
            raise
        return hold

    def _let_in(self, hold: Hold) -> None:
        self.busy |= hold.held
        self.running.append(hold)

    def free(self, hold: Hold, texts: Iterable[str]) -> bool:
        """Would ``more(hold, texts)`` return at once?"""
        want = frozenset(texts) - hold.held
        return not (want & self.busy) and not any(want & t for _, t, _ in self._more)

    async def more(self, hold: Hold, texts: Iterable[str]) -> None:
        """Take a later segment's ``texts`` (a running case, before it sends them)."""
        want = frozenset(texts) - hold.held
        if not want or hold.released:
            return
        if self.free(hold, want):
            hold.held |= want
            self.busy |= want
            return
        fut = asyncio.get_running_loop().create_future()
        self._more.append((hold, want, fut))
        try:
            await fut
        except asyncio.CancelledError:
            if not (fut.done() and not fut.cancelled()):
                self._more = [e for e in self._more if e[2] is not fut]
                self._grant()
            raise  # texts handed over as it was cancelled stay held until the case releases them

    def release(self, hold: Hold | Iterable[str]) -> None:
        if isinstance(hold, Hold):
            if hold.released:
                return
            hold.released = True
            self.busy -= hold.held
            self.running = [h for h in self.running if h is not hold]
        else:
            self.busy -= frozenset(hold)
        self._grant()

    def _grant(self) -> None:
        """Serve running cases' later segments first, then start every waiter, in order, that is
        admissible and shares no text with a waiter before it."""
        still_more = []
        for hold, want, fut in self._more:
            if fut.done():
                continue
            if not (want & self.busy) and not hold.released:
                hold.held |= want
                self.busy |= want
                fut.set_result(None)
            else:
                still_more.append((hold, want, fut))
        self._more = still_more
        blocked: set[str] = set()
        for _, want, _ in self._more:
            blocked |= want
        still = []
        for entry in self._waiting:
            hold, fut = entry[2], entry[3]
            if fut.done():
                continue
            if not (hold.all & blocked) and self._admissible(hold):
                self._let_in(hold)
                fut.set_result(None)
            else:
                blocked |= hold.all
                still.append(entry)
        self._waiting = still
