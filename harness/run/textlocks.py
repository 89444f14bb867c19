"""Cases that send the same text never run side by side (``TextGate``).

A call that names no case (no user field: most bots) is attributed by the text it carries
(``sandbox/router.py``); a text two running cases sent identifies neither. So a case takes
every text it sends (``turns.case_texts``) before it starts and gives them back when it is
done. All at once, never one by one: a case holding one text while it waits for the next
made convoys (a short case behind a long one behind another, each holding what the next
needed). Fair: a waiting case is passed only by cases that share no text with it or with a
case that waits before it, so no case waits forever behind a stream of others.
"""

from __future__ import annotations

import asyncio
from typing import Iterable


class TextGate:
    def __init__(self) -> None:
        self.busy: set[str] = set()
        """The texts of the cases running now."""
        self._waiting: list[tuple[frozenset[str], asyncio.Future]] = []

    async def acquire(self, texts: Iterable[str]) -> frozenset[str]:
        """Wait until no running case (nor one that waits before this one) sends any of ``texts``,
        then hold them all; returns what to ``release``."""
        mine = frozenset(texts)
        if not mine:
            return mine
        if not (mine & self.busy) and not any(mine & w for w, _ in self._waiting):
            self.busy |= mine
            return mine
        fut = asyncio.get_running_loop().create_future()
        self._waiting.append((mine, fut))
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():  # granted as it was cancelled: give them back
                self.release(mine)
            else:
                self._waiting = [(w, f) for w, f in self._waiting if f is not fut]
                self._grant()
            raise
        return mine

    def release(self, texts: frozenset[str]) -> None:
        self.busy -= texts
        self._grant()

    def _grant(self) -> None:
        """Start every waiter, in arrival order, whose texts are free and shared with no earlier waiter."""
        blocked: set[str] = set()
        still = []
        for texts, fut in self._waiting:
            if fut.done():
                continue
            if not (texts & self.busy) and not (texts & blocked):
                self.busy |= texts
                fut.set_result(None)
            else:
                blocked |= texts
                still.append((texts, fut))
        self._waiting = still
