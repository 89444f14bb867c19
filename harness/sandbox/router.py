"""Attribution of boundary events to the cases that caused them.

Each running case registers correlation keys: its Telegram chat id (``tg:<id>``), its
WhatsApp wa_id (``wa:<id>``), the user ids the agent may name in an LLM call's ``user``
field (``user:<id>``) and its document token (``tok:<token>``, the path segment of its
``{docs}`` URL). Servers report every call with the keys they could read from it. An
event that matches no key goes to the only case that is running, if exactly one is, and
otherwise stays unattributed at run level (reported, never silently dropped).
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import replace
from typing import Iterable

from harness.types import Event

#: The document token is a path segment: {docs} = http://127.0.0.1:P/c/<token>
DOC_TOKEN_RE = re.compile(r"/c/([a-z0-9]{8,32})(?:/|\b)")


def doc_token_keys(text: str) -> list[str]:
    """Correlation keys for every document token mentioned in ``text``."""
    return [f"tok:{t}" for t in DOC_TOKEN_RE.findall(text or "")]


class CaseRecorder:
    """Collects one running case's events; wakes whoever waits for activity."""

    def __init__(self, case_id: str, keys: Iterable[str]):
        self.case_id = case_id
        self.keys = tuple(keys)
        self.turn = 0
        self.events: list[tuple[int, Event]] = []
        self.last_activity = time.time()
        self._changed = asyncio.Event()

    def add(self, event: Event) -> None:
        self.events.append((self.turn, event))
        self.last_activity = time.time()
        self._changed.set()

    def of_turn(self, turn: int) -> list[Event]:
        return [e for t, e in self.events if t == turn]

    async def wait_activity(self, timeout: float) -> bool:
        """Wait until something new arrives or ``timeout`` passes; True if something came."""
        self._changed.clear()
        try:
            await asyncio.wait_for(self._changed.wait(), timeout)
            return True
        except asyncio.TimeoutError:
            return False


class Router:
    """Routes events from every sandbox server to the case they belong to."""

    def __init__(self) -> None:
        self._by_key: dict[str, CaseRecorder] = {}
        self._active: list[CaseRecorder] = []
        self.unattributed: list[Event] = []
        self.all_events: list[Event] = []

    def open(self, case_id: str, keys: Iterable[str]) -> CaseRecorder:
        rec = CaseRecorder(case_id, keys)
        for k in rec.keys:
            self._by_key[k] = rec
        self._active.append(rec)
        return rec

    def retire(self, rec: CaseRecorder) -> None:
        """The case finished: it no longer takes events that carry no key (``sole-active-case``),
        but its keys still route to it, so a late reply in its chat is still its own."""
        if rec in self._active:
            self._active.remove(rec)

    @property
    def last_event_at(self) -> float | None:
        """When the sandbox last saw anything (the run-wide quiet window watches this)."""
        return self.all_events[-1].at if self.all_events else None

    def close(self, rec: CaseRecorder) -> None:
        for k in rec.keys:
            if self._by_key.get(k) is rec:
                del self._by_key[k]
        if rec in self._active:
            self._active.remove(rec)

    def record(self, event: Event) -> None:
        self.all_events.append(event)
        for k in event.keys:
            rec = self._by_key.get(k)
            if rec is not None:
                rec.add(event)
                return
        if len(self._active) == 1:
            self._active[0].add(replace(event, meta={**event.meta, "attributed": "sole-active-case"}))
            return
        self.unattributed.append(event)
