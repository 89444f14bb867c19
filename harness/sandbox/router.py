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


#: Per turn, a case stores at most this many replies, this many bytes of reply text and this
#: many events; the rest is counted (``CaseRecorder.overflow``, reported in the turn's evidence
#: and results.json), so a flooding agent cannot take the harness's memory.
MAX_REPLIES_PER_TURN = 500
MAX_REPLY_BYTES_PER_TURN = 2_000_000
MAX_EVENTS_PER_TURN = 5_000
#: Calls no case could claim, kept for the run's notes; the rest are counted.
MAX_UNATTRIBUTED = 2_000


class CaseRecorder:
    """Collects one running case's events (within the per-turn caps); wakes whoever waits for activity."""

    def __init__(self, case_id: str, keys: Iterable[str]):
        self.case_id = case_id
        self.keys = tuple(keys)
        self.turn = 0
        self.events: list[tuple[int, Event]] = []
        self.last_activity = time.time()
        self._changed = asyncio.Event()
        self._kept: dict[int, list[int]] = {}
        """turn -> [replies, reply bytes, events] stored."""
        self.overflow: dict[int, dict] = {}
        """turn -> what came beyond the caps: {"replies", "reply_bytes", "events", "chats": {chat: replies}}."""

    def add(self, event: Event) -> None:
        kept = self._kept.setdefault(self.turn, [0, 0, 0])
        size = len(event.reply.text.encode("utf-8", "replace")) if event.reply is not None else 0
        if kept[2] >= MAX_EVENTS_PER_TURN or (event.reply is not None and (
                kept[0] >= MAX_REPLIES_PER_TURN or kept[1] + size > MAX_REPLY_BYTES_PER_TURN)):
            over = self.overflow.setdefault(self.turn, {"replies": 0, "reply_bytes": 0, "events": 0, "chats": {}})
            over["events"] += 1
            if event.reply is not None:
                over["replies"] += 1
                over["reply_bytes"] += size
                over["chats"][event.reply.chat] = over["chats"].get(event.reply.chat, 0) + 1
        else:
            kept[0] += event.reply is not None
            kept[1] += size
            kept[2] += 1
            self.events.append((self.turn, event))
        self.last_activity = time.time()
        self._changed.set()

    def overflow_of(self, turn: int) -> dict:
        """What turn ``turn`` received beyond the caps ({} when nothing)."""
        over = self.overflow.get(turn)
        if not over:
            return {}
        return {**over, "chats": dict(over["chats"]), "max_replies": MAX_REPLIES_PER_TURN,
                "max_reply_bytes": MAX_REPLY_BYTES_PER_TURN, "max_events": MAX_EVENTS_PER_TURN}

    def dropped_replies(self, turn: int, chat: str) -> int:
        """Replies in ``chat`` during ``turn`` that were counted but not stored."""
        return (self.overflow.get(turn) or {}).get("chats", {}).get(chat, 0)

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
        self.unattributed_over = 0
        """Calls no case could claim beyond ``MAX_UNATTRIBUTED`` (counted, not kept)."""
        self.events_seen = 0
        self._last_at: float | None = None

    def open(self, case_id: str, keys: Iterable[str]) -> CaseRecorder:
        rec = CaseRecorder(case_id, keys)
        for k in rec.keys:
            self._by_key[k] = rec
        self._active.append(rec)
        return rec

    def recorder(self, key: str) -> CaseRecorder | None:
        """The running case a correlation key routes to (the driver reads its chat's history)."""
        return self._by_key.get(key)

    def retire(self, rec: CaseRecorder) -> None:
        """The case finished: it no longer takes events that carry no key (``sole-active-case``),
        but its keys still route to it, so a late reply in its chat is still its own."""
        if rec in self._active:
            self._active.remove(rec)

    @property
    def last_event_at(self) -> float | None:
        """When the sandbox last saw anything (the run-wide quiet window watches this)."""
        return self._last_at

    def close(self, rec: CaseRecorder) -> None:
        for k in rec.keys:
            if self._by_key.get(k) is rec:
                del self._by_key[k]
        if rec in self._active:
            self._active.remove(rec)

    def record(self, event: Event) -> None:
        # Only the time and a count of every event: keeping them all would grow with the run.
        self.events_seen += 1
        self._last_at = event.at
        for k in event.keys:
            rec = self._by_key.get(k)
            if rec is not None:
                rec.add(event)
                return
        if len(self._active) == 1:
            self._active[0].add(replace(event, meta={**event.meta, "attributed": "sole-active-case"}))
            return
        if len(self.unattributed) < MAX_UNATTRIBUTED:
            self.unattributed.append(event)
        else:
            self.unattributed_over += 1
