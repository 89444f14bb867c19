"""Cases that send the same text never run side by side (``TextGate``).

A call that names no case (no user field: most bots) is attributed by the text it carries
(``sandbox/router.py``); a text two running cases sent identifies neither. So a case takes
every text it sends (``turns.case_texts``) before it starts and gives them back when it is
done. All at once, never one by one: a case holding one text while it waits for the next
made convoys (a short case behind a long one behind another, each holding what the next
needed). Fair: a waiting case is passed only by cases that share no text with it or with a
case that waits before it, so no case waits forever behind a stream of others. "Before" is
the waiters' priority, then their arrival: the runner gives a longer chain of cases a lower
number (``order.py``), so a variant that could only start late is not queued behind every
short case that shares one of its texts.
"""

from __future__ import annotations

import asyncio
import bisect
import itertools
from typing import Iterable


class TextGate:
    def __init__(self) -> None:
        self.busy: set[str] = set()
        """The texts of the cases running now."""
        self._waiting: list[tuple[float, int, frozenset[str], asyncio.Future]] = []
        """(priority, arrival, texts, future), in the order they are served."""
        self._seq = itertools.count()

    async def acquire(self, texts: Iterable[str], priority: float = 1.0) -> frozenset[str]:
        """Wait until no running case (nor one that waits before this one: a lower ``priority``,
        or the same and earlier) sends any of ``texts``, then hold them all; returns what to ``release``."""
        mine = frozenset(texts)
        if not mine:
            return mine
        if not (mine & self.busy) and not any(mine & w for p, _, w, _ in self._waiting if p <= priority):
            self.busy |= mine
            return mine
        fut = asyncio.get_running_loop().create_future()
        entry = (priority, next(self._seq), mine, fut)
        bisect.insort(self._waiting, entry, key=lambda e: (e[0], e[1]))
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():  # granted as it was cancelled: give them back
                self.release(mine)
            else:
                self._waiting = [e for e in self._waiting if e[3] is not fut]
                self._grant()
            raise
        return mine

    def release(self, texts: frozenset[str]) -> None:
        self.busy -= texts
        self._grant()

    def _grant(self) -> None:
        """Start every waiter, in order, whose texts are free and shared with no waiter before it."""
        blocked: set[str] = set()
        still = []
        for entry in self._waiting:
            texts, fut = entry[2], entry[3]
            if fut.done():
                continue
            if not (texts & self.busy) and not (texts & blocked):
                self.busy |= texts
                fut.set_result(None)
            else:
                blocked |= texts
                still.append(entry)
        self._waiting = still
