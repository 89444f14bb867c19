"""The LLM gateway: an OpenAI-compatible endpoint that forwards to the configured upstream
and records every call (model, tokens from ``usage``, latency, status) as an ``llm`` event.

The agent's ``OPENAI_BASE_URL`` points here ({llm_base_url}); a call counts because the
gateway saw it, whatever the agent believes it did. Calls are attributed to a case by one
resolution (``keys_of``: the sandbox sets ``Router.llm_keys``: ``user``, ``safety_identifier``,
``metadata``, document tokens, else the case's injected text), used for the event, the faults
and the scripts alike.
"""

from __future__ import annotations

import json
import time
from typing import Callable

import aiohttp
from aiohttp import web

from harness.sandbox.router import request_keys, tool_calls_of
from harness.types import Event

# Headers that must not be copied between hops.
HOP_HEADERS = {"host", "content-length", "transfer-encoding", "connection", "authorization", "accept-encoding"}
#: How much of each system prompt an LLM call event keeps, for the no_leak check.
SYSTEM_PROMPT_CHARS = 20_000


def _error(status: int, message: str, kind: str = "gateway_error") -> web.Response:
    return web.json_response({"error": {"message": message, "type": kind, "code": status}}, status=status)


def _retry_after(response: web.StreamResponse) -> float | None:
    """The seconds an answer's Retry-After header asks for (None: no header, or a date)."""
    try:
        return float(response.headers.get("Retry-After", ""))
    except (ValueError, AttributeError):
        return None


class LlmGateway:
    """OpenAI-compatible forwarder that records each call."""

    def __init__(self, sink: Callable[[Event], None], upstream: str = "", api_key: str = "",
                 timeout_s: float = 120.0, clock: Callable[[], float] = time.time):
        self.sink = sink
        self.upstream = upstream.rstrip("/")
        self.api_key = api_key
        self.timeout_s = timeout_s
        self.clock = clock
        self._session: aiohttp.ClientSession | None = None
        self.faults = None  # a harness.sandbox.faults.FaultBook, set by the sandbox
        self.meter = None  # harness.sandbox.metering.Meter: tokens + price per call, set by the sandbox
        self.cassette = None  # harness.sandbox.cassettes.Cassette: record / replay, set by the sandbox
        self.keys_of = request_keys  # body -> the case's keys (harness/sandbox/router.py Router.llm_keys)

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        for prefix in ("/v1", ""):
            app.router.add_post(prefix + "/chat/completions", self.chat_completions)
            app.router.add_get(prefix + "/models", self.models)
        app.on_cleanup.append(self._close)
        return app

    async def _close(self, _app: web.Application) -> None:
        if self._session is not None:
            await self._session.close()

    async def models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": []})

    async def chat_completions(self, request: web.Request) -> web.StreamResponse:
        started = self.clock()
        t0 = time.perf_counter()
        raw = await request.read()
        try:
            body = json.loads(raw or b"{}")
            if not isinstance(body, dict):
                raise ValueError("body is not a JSON object")
        except ValueError as exc:
            return self._record(started, t0, {}, 400, None, f"invalid JSON body: {exc}",
                                _error(400, f"invalid JSON body: {exc}", "invalid_request_error"))
        keys = self.keys_of(body)  # the one resolution: event, faults, scripts
        if self.faults is not None:  # scripted per-case faults (harness/sandbox/faults.py)
            injected = await self.faults.before_llm(body, request, keys)
            if injected is not None:
                return self._record(started, t0, body, injected.status, None, injected.error, injected.response,
                                    keys=keys)
        if self.cassette is not None and self.cassette.replaying:  # no upstream call, no spend
            status, parsed, error, extra = self.cassette.replay(body)
            return self._record(started, t0, body, status, parsed, error,
                                web.json_response(parsed, status=status), extra, keys=keys)
        if not self.upstream:
            return self._record(started, t0, body, 503, None, "no LLM upstream configured",
                                _error(503, "the harness gateway has no upstream configured ([sandbox] llm_upstream)"),
                                keys=keys)
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_HEADERS}
        headers["Content-Type"] = "application/json"
        key = self.api_key or request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.timeout_s))
        try:
            async with self._session.post(self.upstream + "/chat/completions", data=raw, headers=headers) as up:
                payload = await up.read()
                status = up.status
                ctype = up.headers.get("Content-Type", "application/json")
                up_retry = up.headers.get("Retry-After", "")
        except (aiohttp.ClientError, TimeoutError) as exc:
            msg = f"upstream unreachable: {type(exc).__name__}: {exc}"
            return self._record(started, t0, body, 502, None, msg, _error(502, msg), keys=keys)
        parsed = None
        if "json" in ctype:
            try:
                parsed = json.loads(payload)
            except ValueError:
                parsed = None
        error = "" if status < 400 else f"upstream answered {status}"
        if self.cassette is not None:
            self.cassette.store(body, status, parsed)
        resp = web.Response(body=payload, status=status, content_type=ctype.split(";")[0])
        if up_retry:  # the provider's pacing reaches the agent (and retry_wait)
            resp.headers["Retry-After"] = up_retry
        return self._record(started, t0, body, status, parsed, error, resp, keys=keys)

    def _record(self, started: float, t0: float, body: dict, status: int, parsed: dict | None,
                error: str, response: web.StreamResponse, extra: dict | None = None,
                keys: tuple[str, ...] | None = None) -> web.StreamResponse:
        usage = (parsed or {}).get("usage") or {}
        messages = body.get("messages") if isinstance(body.get("messages"), list) else []
        prompt_text = "\n".join(m.get("content", "") for m in messages
                                if isinstance(m, dict) and isinstance(m.get("content"), str))
        keys = self.keys_of(body) if keys is None else keys
        meta = {
            "model": body.get("model", ""),
            "upstream_model": (parsed or {}).get("model", ""),
            "input_tokens": usage.get("prompt_tokens"),
            "output_tokens": usage.get("completion_tokens"),
            "tokens_source": "usage" if usage else "missing",
            "stream": bool(body.get("stream")),
            # what the agent told its LLM to be (checks.basics.no_leak); never written to results
            "system_prompts": [m["content"][:SYSTEM_PROMPT_CHARS] for m in messages if isinstance(m, dict)
                               and m.get("role") in ("system", "developer") and isinstance(m.get("content"), str)],
            "retry_after": _retry_after(response),  # checks.tools.retry_wait
            "tool_calls": tool_calls_of(parsed),  # what the model asked for: router.tool_keys attributes those calls
            **(extra or {}),
        }
        if self.meter is not None:  # tokens (usage or tiktoken) and price (harness/sandbox/metering.py)
            meta = self.meter.annotate(meta, body, parsed, status)
        request_summary = {k: v for k, v in body.items() if k != "messages"}
        request_summary["messages"] = len(messages)
        request_summary["prompt_chars"] = len(prompt_text)
        self.sink(Event(source="gateway", name="llm", at=started, status=status,
                        duration_ms=(time.perf_counter() - t0) * 1000, request=request_summary,
                        response=None, keys=tuple(keys), error=error, meta=meta))
        return response
