"""Scripted faults: the LLM gateway and the document server misbehave on cue, per case and turn.

A turn's ``fault:`` table (docs/CASES.md) is armed by the runner when the turn starts, under
the case attempt's correlation keys (``user:<id>``, ``tok:<token>``, see router.py), and
disarmed when the turn has settled. A call is faulted only if it carries one of those keys,
so cases running concurrently never see each other's faults.

    fault:
      llm: {status: 429, retry_after: 1, times: 1}   # or 500, 503 ...
      llm: {delay_ms: 2000}                           # slow answer, then the real one
      llm: timeout                                    # hang until the agent gives up
      llm: malformed                                  # 200 with a body that is not JSON
      docs: hang                                      # the document server never answers
      tools: {status: 503, retry_after: 1, times: 1, tool: create_order}   # the tool double (tool: one tool)
      docs: {status: 500}
      telegram: {method: sendMessage, status: 429, retry_after: 1, times: 1}   # Bot API error
      telegram: flood                                 # Telegram's flood limits (429 + retry_after)
      whatsapp: undeliverable                         # sends accepted, then a `failed` status (131026)
      whatsapp: {status: 500}                         # Graph API error on message sends
      delivery: duplicate | reversed                  # see harness/driver_faults.py

A value may also be a list of faults, used in order (each one for its ``times`` calls,
default: every call while the turn lasts). ``hang`` / ``timeout`` hold the request until
the client disconnects, the turn ends or ``max_hang_s`` passes, then answer 504.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from aiohttp import web

from harness.sandbox.keys import request_keys

#: Which parts of the sandbox a fault can target, and the delivery faults the driver applies.
SERVER_TARGETS = ("llm", "docs", "telegram", "whatsapp", "tools")
CHANNEL_TARGETS = ("telegram", "whatsapp")
DELIVERY_FAULTS = ("duplicate", "reversed")
WORDS = ("timeout", "hang", "malformed", "flood", "undeliverable")
FAULT_KEYS = ("status", "retry_after", "delay_ms", "times", "hang", "malformed", "timeout", "method", "tool")
#: A hang never outlives this, even if nobody disarms it (a harness bug must not wedge a run).
MAX_HANG_S = 120.0


@dataclass
class Fault:
    """One scripted misbehaviour of one sandbox server."""

    target: str
    """``llm`` or ``docs``."""
    kind: str
    """``status`` (error answer), ``delay`` (slow, then real), ``hang``, ``malformed``."""
    status: int = 0
    retry_after: float | None = None
    delay_ms: int = 0
    times: int | None = None
    """How many calls it affects; None: every call while armed."""
    method: str = ""
    """Telegram: the Bot API method it applies to; tools: the tool (``tool:``); '' = every one."""
    fired: int = 0

    def describe(self) -> str:
        if self.kind == "status":
            return f"injected HTTP {self.status}" + (f" (Retry-After {self.retry_after:g}s)"
                                                     if self.retry_after is not None else "")
        if self.kind == "delay":
            return f"injected delay {self.delay_ms}ms"
        return f"injected {self.kind}"


@dataclass
class Injected:
    """What the server should answer instead of the real thing."""

    status: int
    response: web.StreamResponse
    error: str
    fault: str


# --------------------------------------------------------------------------- parsing


def _one_error(target: str, value: Any) -> str | None:
    if isinstance(value, str):
        if value not in WORDS:
            return f"fault {target}: {value!r} is not one of {', '.join(WORDS)} (or a table)"
        if target not in ("llm", "tools") and value == "malformed":
            return f"fault {target}: malformed applies to the LLM and tools only"
        if value == "flood":  # the Bot API emulator's flood limits (channels/telegram_emulator.py)
            return None if target == "telegram" else f"fault {target}: flood applies to telegram only"
        if value == "undeliverable":  # accepted, then a failed statuses webhook (channels/whatsapp_emulator.py)
            return None if target == "whatsapp" else f"fault {target}: undeliverable applies to whatsapp only"
        if target in CHANNEL_TARGETS:
            return f"fault {target}: expects a table such as {{status: 429, retry_after: 1}}"
        return None
    if not isinstance(value, Mapping) or not value:
        return f"fault {target}: expects a word ({', '.join(WORDS)}) or a table such as {{status: 500}}"
    unknown = [k for k in value if k not in FAULT_KEYS]
    if unknown:
        return f"fault {target}: unknown key(s) {unknown} (known: {', '.join(FAULT_KEYS)})"
    for k in ("status", "delay_ms", "times"):
        v = value.get(k)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < (1 if k == "times" else 0)):
            return f"fault {target}: {k} must be a {'positive' if k == 'times' else 'non-negative'} integer"
    if "status" in value and not 400 <= value["status"] <= 599:
        return f"fault {target}: status must be an HTTP error (400-599), got {value['status']}"
    ra = value.get("retry_after")
    if ra is not None and (isinstance(ra, bool) or not isinstance(ra, (int, float)) or ra < 0):
        return f"fault {target}: retry_after must be a non-negative number of seconds"
    if "method" in value and (target != "telegram" or not isinstance(value["method"], str)):
        return f"fault {target}: method (a Bot API method name) applies to telegram faults only"
    if "tool" in value and (target != "tools" or not isinstance(value["tool"], str) or not value["tool"]):
        return f"fault {target}: tool (the name of one tool, as in {{tools_url}}/<name>) applies to tools faults only"
    if target in CHANNEL_TARGETS and not ("status" in value or "delay_ms" in value):
        return f"fault {target}: channel faults are an error status or a delay_ms"
    if not any(k in value for k in ("status", "delay_ms", "hang", "malformed", "timeout")):
        return f"fault {target}: say what goes wrong (status, delay_ms, hang, timeout or malformed)"
    return None


def validate(value: Any) -> str | None:
    """What is wrong with a turn's ``fault:`` table (a fixture error), or None."""
    if not isinstance(value, Mapping) or not value:
        return "fault must be a table such as {llm: {status: 500}}"
    for target, spec in value.items():
        if target == "delivery":
            if spec not in DELIVERY_FAULTS:
                return f"fault delivery must be one of {', '.join(DELIVERY_FAULTS)}"
            continue
        if target not in SERVER_TARGETS:
            return f"unknown fault target {target!r} (known: {', '.join(SERVER_TARGETS)}, delivery)"
        for item in (spec if isinstance(spec, list) else [spec]):
            problem = _one_error(target, item)
            if problem:
                return problem
    return None


def parse(value: Mapping[str, Any]) -> list[Fault]:
    """The server faults of a validated ``fault:`` table (delivery faults are the driver's)."""
    out: list[Fault] = []
    for target, spec in value.items():
        if target not in SERVER_TARGETS:
            continue
        for item in (spec if isinstance(spec, list) else [spec]):
            if isinstance(item, str):
                item = {("hang" if item == "timeout" else item): True}
            times = item.get("times")
            if item.get("flood"):
                out.append(Fault(target, "flood", times=times))
            elif item.get("undeliverable"):
                out.append(Fault(target, "undeliverable", times=times))
            elif item.get("hang") or item.get("timeout"):
                out.append(Fault(target, "hang", times=times, method=item.get("tool", "")))
            elif item.get("malformed"):
                out.append(Fault(target, "malformed", times=times, method=item.get("tool", "")))
            elif "status" in item:
                out.append(Fault(target, "status", status=item["status"], retry_after=item.get("retry_after"),
                                 delay_ms=item.get("delay_ms", 0), times=times,
                                 method=item.get("method", item.get("tool", ""))))
            else:
                out.append(Fault(target, "delay", delay_ms=item["delay_ms"], times=times,
                                 method=item.get("method", item.get("tool", ""))))
    return out


# --------------------------------------------------------------------------- the book


@dataclass
class Armed:
    """Faults armed for one case attempt's turn."""

    keys: tuple[str, ...]
    faults: list[Fault]
    released: asyncio.Event = field(default_factory=asyncio.Event)


class FaultBook:
    """Armed faults by correlation key; the gateway and the document server consult it."""

    def __init__(self, max_hang_s: float = MAX_HANG_S) -> None:
        self._by_key: dict[str, Armed] = {}
        self.max_hang_s = max_hang_s

    def arm(self, keys: Iterable[str], spec: Mapping[str, Any]) -> Armed | None:
        faults = parse(spec)
        if not faults:
            return None
        armed = Armed(tuple(keys), faults)
        for k in armed.keys:
            self._by_key[k] = armed
        return armed

    def disarm(self, armed: Armed | None) -> None:
        if armed is None:
            return
        armed.released.set()  # hanging requests answer now
        for k in armed.keys:
            if self._by_key.get(k) is armed:
                del self._by_key[k]

    def release_all(self) -> None:
        for armed in list(self._by_key.values()):
            self.disarm(armed)

    def take(self, target: str, keys: Iterable[str], method: str = "") -> tuple[Fault, Armed] | None:
        """The next fault for a call of ``target`` carrying ``keys``, counted as fired."""
        for k in keys:
            armed = self._by_key.get(k)
            if armed is None:
                continue
            for f in armed.faults:
                if f.method and f.method.lower() != method.lower():
                    continue
                if f.target == target and (f.times is None or f.fired < f.times):
                    f.fired += 1
                    return f, armed
            return None
        return None

    # -- what the servers call ------------------------------------------------------

    async def before_llm(self, body: Mapping[str, Any], request: web.Request | None = None,
                         keys: Iterable[str] | None = None) -> Injected | None:
        """Apply the LLM fault for this chat completion, if any: None lets the call through
        (after any injected delay); an ``Injected`` is the answer to send instead. ``keys``: the
        request's resolved keys (``Router.llm_keys``, content included); default: what it names."""
        return await self._apply("llm", llm_keys(body) if keys is None else keys, request)

    async def before_tool(self, tool: str, keys: Iterable[str],
                          request: web.Request | None = None) -> Injected | None:
        """``before_llm`` for a call of tool ``tool`` on the tool double (``fault: {tools: ...}``;
        a fault's ``tool:`` limits it to one tool)."""
        return await self._apply("tools", keys, request, method=tool)

    async def before_docs(self, token: str, request: web.Request | None = None) -> Injected | None:
        return await self._apply("docs", (f"tok:{token}",) if token else (), request)

    async def before_channel(self, target: str, keys: Iterable[str], method: str = "") -> Fault | None:
        """For the channel emulators: the (already delayed) status fault to answer with, or None.
        The emulator turns it into its own protocol's error (Bot API / Graph API shape)."""
        found = self.take(target, keys, method)
        if found is None:
            return None
        fault, _ = found
        if fault.delay_ms:
            await asyncio.sleep(fault.delay_ms / 1000)
        return fault if fault.kind in ("status", "flood", "undeliverable") else None

    async def _apply(self, target: str, keys: Iterable[str], request: web.Request | None,
                     method: str = "") -> Injected | None:
        found = self.take(target, keys, method)
        if found is None:
            return None
        fault, armed = found
        if fault.delay_ms:
            await asyncio.sleep(fault.delay_ms / 1000)
        if fault.kind == "delay":
            return None
        if fault.kind == "hang":
            await self._hang(armed, request)
            return Injected(504, _error_response(target, 504, "injected hang: no answer in time"),
                            "injected hang (answered 504 when released)", fault.describe())
        if fault.kind == "malformed":
            resp = web.Response(status=200, body=b'{"id": "chatcmpl-broken", "choices": [{"message": '
                                if target == "llm" else b'{"ok": tr', content_type="application/json")
            return Injected(200, resp, "injected malformed JSON", fault.describe())
        resp = _error_response(target, fault.status, f"injected HTTP {fault.status}")
        if fault.retry_after is not None:
            resp.headers["Retry-After"] = f"{fault.retry_after:g}"
        return Injected(fault.status, resp, fault.describe(), fault.describe())

    async def _hang(self, armed: Armed, request: web.Request | None) -> None:
        """Hold until the turn ends, the client hangs up, or max_hang_s passes."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.max_hang_s
        while not armed.released.is_set() and loop.time() < deadline:
            transport = request.transport if request is not None else None
            if request is not None and (transport is None or transport.is_closing()):
                return
            try:
                await asyncio.wait_for(armed.released.wait(), 0.1)
            except asyncio.TimeoutError:
                pass


def llm_keys(body: Mapping[str, Any]) -> list[str]:
    """The keys a chat completion request names itself (``router.request_keys``); the gateway
    passes the router's full resolution (content included) instead."""
    return request_keys(body)


def _error_response(target: str, status: int, message: str) -> web.Response:
    if target == "llm":  # the OpenAI error shape agents parse
        body = {"error": {"message": message, "type": "injected_fault", "code": status}}
        return web.Response(status=status, text=json.dumps(body), content_type="application/json")
    if target == "tools":  # an HTTP service's JSON error
        return web.Response(status=status, text=json.dumps({"error": message}), content_type="application/json")
    return web.Response(status=status, text=message)
