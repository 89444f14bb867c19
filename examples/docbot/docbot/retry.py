"""Retrying a failed LLM call (contract: "Multi-turn behaviour").

A transient failure (HTTP 429, 5xx, a timeout, a dropped connection, a malformed answer) is
retried: at most ``MAX_ATTEMPTS`` attempts in all, waiting the server's Retry-After (capped at
``MAX_WAIT_S``) or ``BACKOFF_S``. Client errors (other 4xx) are not retried.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Awaitable, Callable

log = logging.getLogger("docbot")

MAX_ATTEMPTS = 2
BACKOFF_S = 0.3
MAX_WAIT_S = 5.0


def transient(exc) -> bool:
    status = getattr(exc, "status", None)
    return status is None or status == 429 or status >= 500


async def call_with_retry(cfg, call: Callable[[], Awaitable[str]]) -> str:
    from .llm import LLMError

    attempt = 0
    while True:
        attempt += 1
        try:
            return await call()
        except LLMError as exc:
            if cfg.on("no_retry_after_llm_error"):
                raise  # REGRESSION no_retry_after_llm_error: the first failure is final
            if not transient(exc):
                raise
            if attempt >= MAX_ATTEMPTS and not cfg.on("retry_loop_unbounded"):
                raise  # REGRESSION retry_loop_unbounded removes this bound
            wait = min(MAX_WAIT_S, exc.retry_after) if exc.retry_after is not None else BACKOFF_S
            log.info("LLM call failed (%s); retry %d in %.1fs", exc, attempt, wait)
            await asyncio.sleep(wait)
