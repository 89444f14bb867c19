"""Attribution of boundary events to the cases that caused them.

Each running case registers correlation keys: its Telegram chat id (``tg:<id>``), its
WhatsApp wa_id (``wa:<id>``), the user ids the agent may name in an LLM call's ``user``
field (``user:<id>``) and its document token (``tok:<token>``, the path segment of its
``{docs}`` URL). Servers report every call with the keys they could read from it. An
event that matches no key goes to the only case that is running, if exactly one is, and
otherwise stays unattributed at run level (reported, never silently dropped).

The router also knows what is in flight (``Router.middleware``, on every sandbox server): a
request from its start to its answer, with the keys it was attributed to once its server
resolved them (``llm_keys``, ``tool_keys``, a ``{docs}`` token). ``busy_for`` tells whether
any of them may be a case's: the runner's evidence that the agent still works on a turn
(harness/run/idle.py).
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import re
import time
from dataclasses import replace
from typing import Any, Iterable, Mapping

from harness.sandbox.keys import request_keys, tool_request_keys, user_texts
from harness.types import Event


#: A bot command at the start of a text (``/order@shop_bot``), which bots strip before the LLM sees it.
COMMAND_RE = re.compile(r"^/[a-z0-9_]+(?:@[a-z0-9_]+)?\s+")
#: A case text shorter than this identifies a call only when it is a whole user message.
MIN_CONTAINED = 8
#: Markers in a resolved key list (they route nowhere): how a call was attributed.
VIA_CONTENT = "via:content"
VIA_AMBIGUOUS = "via:ambiguous"
VIA_SOLE = "via:sole"
#: ``maybe:<uid>``: a running case whose text an ambiguous call holds (the call is one of theirs).
MAYBE = "maybe:"


def _holds(want: Any, got: Any) -> bool:
    """``got`` holds ``want`` (tables partially, numbers by value): a tool body built from the
    model's arguments, perhaps with the bot's own fields added."""
    if isinstance(want, Mapping):
        return isinstance(got, Mapping) and all(k in got and _holds(v, got[k]) for k, v in want.items())
    if isinstance(want, (int, float)) and not isinstance(want, bool) and isinstance(got, (int, float, str)):
        try:
            return float(want) == float(got)
        except ValueError:
            return False
    return want == got or (isinstance(got, str) and str(want) == got)


def _overlap(want: Any, got: Any) -> int:
    """How many of ``want``'s top-level arguments ``got`` holds with the same value."""
    if not isinstance(want, Mapping) or not isinstance(got, Mapping):
        return 0
    return sum(1 for k, v in want.items() if k in got and _holds(v, got[k]))


def _norm(text: str) -> str:
    return " ".join((text or "").split()).casefold()


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

    _uids = itertools.count(1)

    def __init__(self, case_id: str, keys: Iterable[str]):
        self.uid = str(next(self._uids))
        """Tells this attempt apart in an ambiguous call's ``maybe:`` keys."""
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
        self.asked: list[tuple[str, dict]] = []
        """(tool, arguments) the model asked this case's agent to call (its LLM answers' tool calls)."""
        self.texts: list[tuple[int, str]] = []
        """(turn, normalised text) the driver sent this attempt (``Router.sent``), for content attribution."""
        self.unattributed: dict[int, dict] = {}
        """turn -> calls no case could claim while this case and others ran (``Router.record``):
        ``{"llm": n, "tools": {name: n}, "running": most cases running, "ambiguous": n}``."""

    def note_unattributed(self, event: Event, running: int, ambiguous: bool) -> None:
        """A call no case could claim came while this case ran with ``running - 1`` others."""
        mark = self.unattributed.setdefault(self.turn, {"llm": 0, "tools": {}, "running": 0, "ambiguous": 0})
        if event.name == "llm":
            mark["llm"] += 1
        else:
            mark["tools"][event.name] = mark["tools"].get(event.name, 0) + 1
        mark["running"] = max(mark["running"], running)
        mark["ambiguous"] += bool(ambiguous)

    def unattributed_of(self, turn: int) -> dict:
        """What :meth:`note_unattributed` counted in ``turn`` ({} when nothing)."""
        mark = self.unattributed.get(turn)
        return {**mark, "tools": dict(mark["tools"])} if mark else {}

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


class InFlight:
    """One sandbox request between its start and its answer."""

    __slots__ = ("at", "path", "keys")

    def __init__(self, at: float, path: str, keys: tuple[str, ...] | None = None):
        self.at = at
        self.path = path
        self.keys = keys
        """What it was attributed to; None until its server resolved it (or never, e.g. a channel call)."""


#: The request the current task serves (set by ``Router.middleware``), so the key resolution
#: its server asks for marks it.
_SERVING: contextvars.ContextVar[InFlight | None] = contextvars.ContextVar("harness_serving", default=None)
#: Requests that are the agent waiting, not working: a long poll for updates.
WAITING_PATHS = ("/getUpdates",)


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
        self.inflight: set[InFlight] = set()
        """Sandbox requests being served now (``middleware``)."""

    def open(self, case_id: str, keys: Iterable[str]) -> CaseRecorder:
        rec = CaseRecorder(case_id, keys)
        for k in rec.keys:
            self._by_key[k] = rec
        self._active.append(rec)
        return rec

    def sent(self, rec: CaseRecorder, texts: Iterable[str]) -> None:
        """What the driver sends in ``rec``'s current turn (after placeholders): a call whose
        messages hold it, and no running case's key, is ``rec``'s (``llm_keys``)."""
        for t in texts:
            n = _norm(t)
            if n:
                rec.texts.append((rec.turn, n))
            rest = COMMAND_RE.sub("", n, count=1)  # "/order 3 widgets": bots pass on "3 widgets"
            if rest != n and len(rest) >= MIN_CONTAINED:
                rec.texts.append((rec.turn, rest))

    def sent_by(self, key: str, texts: Iterable[str]) -> None:
        """``sent`` for the running case holding ``key`` (the driver knows the chat, not the
        recorder): e.g. the opening of a document the user sent, which a summarizer's prompt holds."""
        rec = self._by_key.get(key)
        if rec is not None:
            self.sent(rec, texts)

    def _claims(self, messages: list[str], current: bool) -> dict[CaseRecorder, str]:
        """Running cases whose (current turn's, or earlier turns') text is in one of ``messages``,
        each with its longest such text; a text two running cases sent (in any turn) counts for neither."""
        senders: dict[str, set[CaseRecorder]] = {}
        for rec in self._active:
            for _, text in rec.texts:
                senders.setdefault(text, set()).add(rec)
        found: dict[CaseRecorder, str] = {}
        for rec in self._active:
            for turn, text in rec.texts:
                if (turn == rec.turn) != current or len(senders[text]) > 1:
                    continue
                if any(text == m or (len(text) >= MIN_CONTAINED and text in m) for m in messages) \
                        and len(text) > len(found.get(rec, "")):
                    found[rec] = text
        return found

    def by_content(self, messages: Iterable[str]) -> tuple[CaseRecorder | None, list[CaseRecorder]]:
        """The one running case whose injected text the messages hold (last message first); else
        no case, and the running cases whose texts (shared, or several) the messages hold."""
        msgs = [n for n in (_norm(m) for m in messages) if n]
        if not msgs:
            return None, []
        for scope in (msgs[-1:], msgs):
            for current in (True, False):
                found = self._claims(scope, current)
                if len(found) == 1:
                    return next(iter(found)), []
                if len(found) > 1:
                    longest = max(found.values(), key=len)
                    winners = [r for r, t in found.items() if t == longest]
                    if len(winners) == 1 and all(t in longest for t in found.values()):
                        return winners[0], []
        return None, [rec for rec in self._active if any(
            text == m or (len(text) >= MIN_CONTAINED and text in m) for _, text in rec.texts for m in msgs)]

    def _resolve(self, keys: list[str], messages: Iterable[str]) -> tuple[str, ...]:
        if any(k in self._by_key for k in keys) or not self._active:
            return tuple(keys)
        if len(self._active) == 1:  # the sole running case takes it: its faults and scripts too
            return tuple(keys) + self._active[0].keys + (VIA_SOLE,)
        rec, candidates = self.by_content(messages)
        if rec is not None:
            return tuple(keys) + rec.keys + (VIA_CONTENT,)
        if candidates:  # one of these cases' (they sent the text): only they are affected
            return tuple(keys) + (VIA_AMBIGUOUS,) + tuple(f"{MAYBE}{r.uid}" for r in candidates)
        return tuple(keys)

    def llm_keys(self, body: Mapping[str, Any]) -> tuple[str, ...]:
        """The one resolution of an LLM request to a case's keys: what it names itself
        (``request_keys``), else the running case whose text its user messages hold. The gateway
        uses it for the event's keys, the faults it applies and the model double's script."""
        return self._serving(self._resolve(request_keys(body), user_texts(body)))

    # -- what is in flight ---------------------------------------------------------------

    @staticmethod
    def _serving(keys: tuple[str, ...]) -> tuple[str, ...]:
        """Mark the request this task serves with the keys it was resolved to."""
        entry = _SERVING.get()
        if entry is not None:
            entry.keys = tuple(keys)
        return keys

    def middleware(self):
        """An aiohttp middleware that keeps ``inflight`` for the server it is installed on."""
        from aiohttp import web

        @web.middleware
        async def track(request, handler):
            path = request.path
            if path.endswith(WAITING_PATHS):
                return await handler(request)
            token = request.match_info.get("token", "")  # the document server's /c/<token>/...
            entry = InFlight(time.time(), path, (f"tok:{token}",) if token else None)
            self.inflight.add(entry)
            reset = _SERVING.set(entry)
            try:
                return await handler(request)
            finally:
                _SERVING.reset(reset)
                self.inflight.discard(entry)

        return track

    def busy_for(self, rec: CaseRecorder) -> bool:
        """May a request in flight be ``rec``'s? Yes when one was attributed to it, or to no
        running case, or not (yet) attributed at all; no when each names other cases only."""
        mine = f"{MAYBE}{rec.uid}"
        for entry in list(self.inflight):
            keys = entry.keys
            if not keys:
                return True
            owners = {self._by_key.get(k) for k in keys} - {None}
            if rec in owners or mine in keys:
                return True
            if not owners and not any(k.startswith(MAYBE) for k in keys):
                return True  # anybody's
        return False

    def tool_keys(self, body: Any, query: Mapping[str, str] | None = None, raw: str = "",
                  tool: str = "") -> tuple[str, ...]:
        """``llm_keys`` for a call of ``tool``: the ids it names; else the one running case whose
        model asked for this call (an LLM answer's tool call of that name, with arguments the
        call holds); else a running case's text in its body."""
        keys = tool_request_keys(body, query, raw)
        if tool and len(self._active) > 1 and not any(k in self._by_key for k in keys):
            args = {**(query or {}), **(body if isinstance(body, Mapping) else {})}
            asked = [r for r in self._active
                     if any(n.lower() == tool.lower() and _holds(a, args) for n, a in r.asked)]
            if len(asked) == 1:
                return self._serving(tuple(keys) + asked[0].keys + (VIA_CONTENT,))
            if not asked:  # the bot changed an argument (the bug a tool_args check is for): the case
                # whose model asked for this tool with the most of these arguments, if one stands out
                scores = [(max((_overlap(a, args) for n, a in r.asked if n.lower() == tool.lower()), default=0), r)
                          for r in self._active]
                best = max((sc for sc, _ in scores), default=0)
                top = [r for sc, r in scores if sc == best]
                if best > 0 and len(top) == 1:
                    return self._serving(tuple(keys) + top[0].keys + (VIA_CONTENT,))
        return self._serving(self._resolve(keys, [raw, *(str(v) for v in (query or {}).values())]))

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
                if event.name == "llm":  # what the model asked this case's agent to call (tool_keys)
                    rec.asked += [(c["name"], c["arguments"]) for c in event.meta.get("tool_calls") or ()]
                how = "content" if VIA_CONTENT in event.keys else "sole-active-case" if VIA_SOLE in event.keys else ""
                rec.add(replace(event, meta={**event.meta, "attributed": how}) if how else event)
                return
        if len(self._active) == 1:
            if event.name == "llm":
                self._active[0].asked += [(c["name"], c["arguments"]) for c in event.meta.get("tool_calls") or ()]
            self._active[0].add(replace(event, meta={**event.meta, "attributed": "sole-active-case"}))
            return
        if event.source in ("gateway", "tools") and len(self._active) > 1:
            # it may be any running case's (or, when it holds their shared text, one of those
            # cases'): their call-dependent checks cannot be decided
            maybe = {k[len(MAYBE):] for k in event.keys if k.startswith(MAYBE)}
            for rec in self._active:
                if not maybe or rec.uid in maybe:
                    rec.note_unattributed(event, len(self._active), bool(maybe))
        if len(self.unattributed) < MAX_UNATTRIBUTED:
            self.unattributed.append(event)
        else:
            self.unattributed_over += 1
