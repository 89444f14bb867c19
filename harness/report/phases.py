"""No silent minute: a phase of ``harness run`` that is still going after ``SLOW_S`` seconds
says so on the console (``writing the reports ...``), and says when it is done
(``writing the reports: done in 6.2 s``). A phase that ends sooner prints nothing.

    with phase("writing the reports", say):
        write_all(...)

    starting = Phase("starting", say).start()   # a phase that ends in a callback
    ...
    starting.end()

The notice comes from a timer thread, so it works around blocking code and around an
``asyncio.run`` alike; ``say`` must be safe to call from another thread (rich's Console is).
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator

#: A phase longer than this gets a line (issue 25: "a line for every phase longer than about 2 s").
SLOW_S = 2.0


class Phase:
    """One phase: ``start``, then ``end`` (idempotent). ``what`` is the phase's name, or a
    function giving it when the notice is due (what it turned out to be doing by then)."""

    def __init__(self, what: str | Callable[[], str], say: Callable[[str], None] | None, *,
                 after_s: float | None = None):
        self.what, self.say = what, say
        self.after_s = SLOW_S if after_s is None else after_s
        self._lock = threading.Lock()
        self._said: str | None = None
        self._over = False
        self._timer: threading.Timer | None = None
        self._started = 0.0

    def start(self) -> "Phase":
        if self.say is not None and self._timer is None:
            self._started = time.monotonic()
            self._timer = threading.Timer(self.after_s, self._announce)
            self._timer.daemon = True
            self._timer.start()
        return self

    def _announce(self) -> None:
        with self._lock:  # held while saying it: the "done" line cannot come first
            if self._over:
                return
            self._said = self.what() if callable(self.what) else self.what
            self.say(f"{self._said} ...")

    def end(self) -> None:
        with self._lock:
            if self._over:
                return
            self._over = True
        if self._timer is not None:
            self._timer.cancel()
        if self._said is not None:
            self.say(f"{self._said}: done in {time.monotonic() - self._started:.1f} s")


@contextmanager
def phase(what: str | Callable[[], str], say: Callable[[str], None] | None, *,
          after_s: float | None = None) -> Iterator[None]:
    """Run the block; when it is still running after ``after_s`` seconds, ``say`` ``what ...``
    then, at its end, ``what: done in N s``. ``say`` None: nothing is said (``--quiet``)."""
    p = Phase(what, say, after_s=after_s).start()
    try:
        yield
    finally:
        p.end()
