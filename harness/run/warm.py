"""What a run loads before its first case, so that nothing loads in the middle of it: tiktoken's
encodings (the gateway counts tokens) and lingua's language models (a ``*.language`` check)."""

from __future__ import annotations

import logging
from typing import Sequence

from harness.types import Case

log = logging.getLogger("harness.run.runner")


def encodings() -> None:
    try:
        from harness.models.tokens import warm

        warm()
    except Exception as exc:  # counting falls back to 'missing' tokens, reported per call
        log.warning("tiktoken encodings could not be loaded in advance: %s", exc)


def judges_language(cases: Sequence[Case], baseline) -> bool:
    """Does the run detect a reply's language (a ``*.language`` check, or a baseline's language invariants)?"""
    return baseline is not None or any(s.name.endswith(".language") for c in cases for t in c.turns for s in t.checks)


def language() -> None:
    """lingua's detector built and its models loaded (its first detection loads them, seconds
    that hold the interpreter's lock, even from a worker thread): before the first case, never
    in the middle of the run, where every case in flight would measure the stall."""
    try:
        from harness.checks.form import _detector, detect_language

        _detector()
        detect_language("Good morning, how are you today?")
    except Exception as exc:  # the language check reports it as unavailable
        log.warning("the language detector could not be loaded in advance: %s", exc)
