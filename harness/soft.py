"""Soft errors: one automatic re-evaluation, and the run's soft budget.

A scored check whose score lands between its fail line and its pass line is soft
(``Evidence.passed is None``, availability ready). The runner re-runs such a check once
with ``REEVALUATING`` set, so judges that cache (an LLM critic's disk cache) ask again
instead of repeating themselves, and keeps the second verdict, saying so in its reason.
Too many soft cases (``[budget] soft_max_fraction_per_layer`` of a layer's decidable
cases, or more than ``soft_max_per_run`` in the run) turn the run's verdict into a
failure: see ``harness.run.aggregate.apply_soft_budget``.
"""

from __future__ import annotations

import contextvars
import logging
from dataclasses import replace
from typing import Awaitable, Callable

from harness.types import Evidence

log = logging.getLogger("harness.soft")

#: True while a soft verdict is being re-evaluated (task-local: concurrent cases are unaffected).
REEVALUATING: contextvars.ContextVar[bool] = contextvars.ContextVar("harness_reevaluating", default=False)


def is_soft(e: Evidence) -> bool:
    return e.availability == "ready" and e.passed is None


def _first(e: Evidence) -> str:
    return f"score {e.score:.2f}" if isinstance(e.score, (int, float)) else "undecided"


async def reevaluate(first: Evidence, again: Callable[[], Awaitable[Evidence]]) -> Evidence:
    """Run ``again`` once with caches bypassed; keep its verdict and say so."""
    token = REEVALUATING.set(True)
    try:
        second = await again()
    except Exception as exc:  # the first verdict stands, with why the second is missing
        log.exception("re-evaluation of %s crashed", first.check)
        return replace(first, reason=f"{first.reason} [re-evaluation crashed: {type(exc).__name__}: {exc}; "
                                     "first verdict kept]")
    finally:
        REEVALUATING.reset(token)
    state = "still soft" if is_soft(second) else ("now passes" if second.passed else
                                                  "now fails" if second.passed is False else "now unavailable")
    return replace(second, reason=f"re-evaluated once (first: {_first(first)}, soft; second verdict kept, "
                                  f"{state}): {second.reason}")
