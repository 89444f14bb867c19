"""The tool double: ``{tools_url}/<tool>`` answers an agent's HTTP tools as the case scripts them.

An agent whose tools are HTTP calls points them here (or the double is put in front of the
real tool service). Per case and turn (``tools:`` in the case file, docs/CASES.md; armed by
the runner like faults, under the case's keys) a tool answers, in call order (the last
result repeats):

    tools:
      create_order: {json: {id: "A-17", status: created, qty: "{args.quantity}"}}
      search: [{status: 503, json: {error: busy}, retry_after: 1}, {json: {hits: []}}]
      slow: {delay_ms: 300, json: {ok: true}}
      stock: {forward: "http://127.0.0.1:9000/stock"}      # the real service, recorded

An unscripted tool answers ``200 {"ok": true}``. ``fault: {tools: ...}`` (faults.py) comes
first. Every call is a ``tools`` event: the tool, the method, its arguments (the JSON body;
query parameters for GET), the status and body answered, timing, and ``meta["double"]``
(False only when the answer came from a ``forward:`` service), so checks label the evidence.
Calls are tied to a case by ``keys_of`` (``Router.tool_keys``: chat/user ids in the body or
the query, document tokens; else the running case whose model asked for this very call;
else a running case's text in the body).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

import aiohttp
from aiohttp import web

from harness.sandbox.keys import tool_request_keys
from harness.types import Event

RESULT_KEYS = ("json", "status", "retry_after", "delay_ms", "forward")
TOOL_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
TEMPLATE_RE = re.compile(r"\{args((?:\.[A-Za-z0-9_-]+)*)\}")
DEFAULT_ANSWER: Mapping[str, Any] = {"ok": True}
#: How much of a forwarded answer the event keeps (the agent gets all of it).
MAX_RECORDED_BODY = 20_000
FORWARD_TIMEOUT_S = 30.0


# --------------------------------------------------------------------------- validation


def _result_error(tool: str, value: Any) -> str | None:
    if not isinstance(value, Mapping) or not value:
        return f"tools {tool}: a result is a table such as {{json: {{id: 1}}}} or {{status: 503}}"
    unknown = [k for k in value if k not in RESULT_KEYS]
    if unknown:
        return f"tools {tool}: unknown key(s) {unknown} (known: {', '.join(RESULT_KEYS)})"
    status = value.get("status")
    if status is not None and (isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599):
        return f"tools {tool}: status must be an HTTP status (100-599), got {status!r}"
    ra = value.get("retry_after")
    if ra is not None and (isinstance(ra, bool) or not isinstance(ra, (int, float)) or ra < 0):
        return f"tools {tool}: retry_after must be a non-negative number of seconds"
    delay = value.get("delay_ms")
    if delay is not None and (isinstance(delay, bool) or not isinstance(delay, int) or delay < 0):
        return f"tools {tool}: delay_ms must be a non-negative integer"
    fwd = value.get("forward")
    if fwd is not None:
        if not isinstance(fwd, str) or not fwd.startswith(("http://", "https://")):
            return f"tools {tool}: forward must be an http(s) URL, got {fwd!r}"
        if "json" in value or "status" in value:
            return f"tools {tool}: forward answers with the real service's status and body (no json or status)"
    if not any(k in value for k in ("json", "status", "delay_ms", "forward")):
        return f"tools {tool}: say what the tool answers (json, status, delay_ms or forward)"
    return None


def validate(value: Any) -> str | None:
    """What is wrong with a turn's ``tools:`` table (a fixture error), or None."""
    if not isinstance(value, Mapping) or not value:
        return "tools must be a table of tool name: result, e.g. {create_order: {json: {id: A-17}}}"
    for tool, spec in value.items():
        if not isinstance(tool, str) or not TOOL_NAME_RE.match(tool):
            return f"tools: {tool!r} is not a tool name (the <name> of {{tools_url}}/<name>: letters, digits, _ . -)"
        items = spec if isinstance(spec, list) else [spec]
        if not items:
            return f"tools {tool}: an empty list (give at least one result)"
        for item in items:
            problem = _result_error(tool, item)
            if problem:
                return problem
    return None


# --------------------------------------------------------------------------- templates


def _lookup(args: Any, path: str) -> tuple[bool, Any]:
    value = args
    for part in [p for p in path.split(".") if p]:
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return False, None
    return True, value


def fill(value: Any, args: Any) -> Any:
    """``value`` with ``{args.<path>}`` filled from the call's arguments: a string that is one
    template takes the argument's own value (a number stays a number); a template that cannot be
    filled stays visible as ``{?args.<path>}``."""
    if isinstance(value, Mapping):
        return {k: fill(v, args) for k, v in value.items()}
    if isinstance(value, list):
        return [fill(v, args) for v in value]
    if not isinstance(value, str) or "{args" not in value:
        return value
    whole = TEMPLATE_RE.fullmatch(value)
    if whole:
        ok, got = _lookup(args, whole.group(1))
        return got if ok else "{?args" + whole.group(1) + "}"

    def one(m: re.Match) -> str:
        ok, got = _lookup(args, m.group(1))
        if not ok:
            return "{?args" + m.group(1) + "}"
        return got if isinstance(got, str) else json.dumps(got, ensure_ascii=False)

    return TEMPLATE_RE.sub(one, value)


# --------------------------------------------------------------------------- the book


@dataclass
class ArmedScript:
    """One case attempt's turn's tool script, and how many calls each tool answered."""

    keys: tuple[str, ...]
    results: dict[str, list[Mapping[str, Any]]]
    used: dict[str, int] = field(default_factory=dict)


class ToolScripts:
    """Armed ``tools:`` scripts by correlation key (like ``faults.FaultBook``)."""

    def __init__(self) -> None:
        self._by_key: dict[str, ArmedScript] = {}

    def arm(self, keys: Iterable[str], spec: Mapping[str, Any]) -> ArmedScript | None:
        if not spec:
            return None
        armed = ArmedScript(tuple(keys), {t.lower(): list(v) if isinstance(v, list) else [v]
                                          for t, v in spec.items()})
        for k in armed.keys:
            self._by_key[k] = armed
        return armed

    def disarm(self, armed: ArmedScript | None) -> None:
        if armed is None:
            return
        for k in armed.keys:
            if self._by_key.get(k) is armed:
                del self._by_key[k]

    def next_result(self, tool: str, keys: Iterable[str]) -> Mapping[str, Any] | None:
        """The scripted result for this call of ``tool`` (in order; the last repeats), or None."""
        for k in keys:
            armed = self._by_key.get(k)
            if armed is None:
                continue
            results = armed.results.get(tool.lower())
            if not results:
                return None
            n = armed.used.get(tool.lower(), 0)
            armed.used[tool.lower()] = n + 1
            return results[min(n, len(results) - 1)]
        return None


# --------------------------------------------------------------------------- the server


def arguments(body: Any, query: Mapping[str, str]) -> dict:
    """A call's arguments: its JSON object body, with the query parameters (GET: only those)."""
    args = dict(query)
    if isinstance(body, Mapping):
        args.update(body)
    elif body not in (None, {}, ""):
        args["_body"] = body
    return args


class ToolSpy:
    """The tool double (the name stays: it began as a spy that only logged)."""

    def __init__(self, sink: Callable[[Event], None], responses: Mapping[str, Any] | None = None,
                 clock: Callable[[], float] = time.time):
        self.sink = sink
        self.responses = dict(responses or {})
        self.clock = clock
        self.scripts: ToolScripts | None = None  # armed per turn by the runner (set by the sandbox)
        self.faults = None  # harness.sandbox.faults.FaultBook, set by the sandbox
        self.keys_of: Callable[..., Iterable[str]] = tool_request_keys  # Router.tool_keys in a run
        self._session: aiohttp.ClientSession | None = None

    def app(self) -> web.Application:
        app = web.Application(client_max_size=16 * 1024 * 1024)
        app.router.add_route("*", "/{tool}", self.call)
        app.on_cleanup.append(self._close)
        return app

    async def _close(self, _app: web.Application) -> None:
        if self._session is not None:
            await self._session.close()

    async def call(self, request: web.Request) -> web.StreamResponse:
        at = self.clock()
        t0 = time.perf_counter()
        tool = request.match_info["tool"]
        raw = (await request.read()).decode("utf-8", errors="replace")  # not UTF-8: still a call, never a 500
        try:
            body = json.loads(raw) if raw else {}
        except (ValueError, RecursionError):
            body = {"raw": raw[:2000]}
        query = {k: v for k, v in request.query.items()}
        args = arguments(body, query)
        keys = tuple(self.keys_of(body, query, raw, tool))
        meta: dict[str, Any] = {"method": request.method, "double": True, "args": args}
        if self.faults is not None:
            injected = await self.faults.before_tool(tool, keys, request)
            if injected is not None:
                meta.update(fault=injected.fault, retry_after=_header_seconds(injected.response))
                return self._record(tool, at, t0, args, keys, injected.status, _body_of(injected.response),
                                    injected.error, meta, injected.response)
        result = self.scripts.next_result(tool, keys) if self.scripts is not None else None
        if result is None:
            answer = self.responses.get(tool, DEFAULT_ANSWER)
            return self._record(tool, at, t0, args, keys, 200, answer, "", meta, web.json_response(answer))
        meta["scripted"] = True
        if result.get("delay_ms"):
            await asyncio.sleep(result["delay_ms"] / 1000)
        if result.get("forward"):
            return await self._forward(request, result["forward"], raw, tool, at, t0, args, keys, meta)
        status = int(result.get("status", 200))
        answer = fill(result["json"], args) if "json" in result else (DEFAULT_ANSWER if status < 400 else
                                                                         {"error": f"scripted HTTP {status}"})
        resp = web.json_response(answer, status=status)
        if result.get("retry_after") is not None:
            resp.headers["Retry-After"] = f"{result['retry_after']:g}"
            meta["retry_after"] = float(result["retry_after"])
        return self._record(tool, at, t0, args, keys, status, answer,
                            f"scripted HTTP {status}" if status >= 400 else "", meta, resp)

    async def _forward(self, request: web.Request, url: str, raw: str, tool: str, at: float, t0: float,
                       args: dict, keys: tuple[str, ...], meta: dict) -> web.StreamResponse:
        meta.update(double=False, forwarded=url)
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=FORWARD_TIMEOUT_S))
        ctype = request.headers.get("Content-Type", "application/json")
        try:
            async with self._session.request(request.method, url, params=request.query, data=raw.encode(),
                                             headers={"Content-Type": ctype}) as up:
                payload = await up.read()
                status = up.status
                up_type = up.headers.get("Content-Type", "application/json")
                retry = up.headers.get("Retry-After", "")
        except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
            msg = f"forward to {url} failed: {type(exc).__name__}: {exc}"
            return self._record(tool, at, t0, args, keys, 502, {"error": msg}, msg, meta,
                                web.json_response({"error": msg}, status=502))
        text = payload.decode("utf-8", "replace")
        try:
            answer = json.loads(text) if "json" in up_type else {"raw": text[:MAX_RECORDED_BODY]}
        except (ValueError, RecursionError):
            answer = {"raw": text[:MAX_RECORDED_BODY]}
        resp = web.Response(body=payload, status=status, content_type=up_type.split(";")[0])
        if retry:
            resp.headers["Retry-After"] = retry
            meta["retry_after"] = _header_seconds(resp)
        return self._record(tool, at, t0, args, keys, status, answer,
                            f"{url} answered {status}" if status >= 400 else "", meta, resp)

    def _record(self, tool: str, at: float, t0: float, args: dict, keys: tuple[str, ...], status: int,
                answer: Any, error: str, meta: dict, response: web.StreamResponse) -> web.StreamResponse:
        self.sink(Event(source="tools", name=tool, at=at, status=status,
                        duration_ms=(time.perf_counter() - t0) * 1000, request=args,
                        response=answer if isinstance(answer, Mapping) else {"json": answer},
                        keys=keys, error=error, meta=meta))
        return response


def _header_seconds(response: web.StreamResponse) -> float | None:
    try:
        return float(response.headers.get("Retry-After", ""))
    except (ValueError, AttributeError):
        return None


def _body_of(response: web.StreamResponse) -> Any:
    text = getattr(response, "text", None)
    try:
        return json.loads(text) if text else {}
    except (ValueError, RecursionError):
        return {"raw": (text or "")[:2000]}
