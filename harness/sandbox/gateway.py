"""The LLM gateway: OpenAI chat completions and Anthropic Messages on loopback, answered by
the case's model script, a cassette, the configured upstream or the model double, and
recorded call by call (model, tokens, latency, status) as ``llm`` events.

The agent's ``OPENAI_BASE_URL`` points here ({llm_base_url}, ``.../v1``), an Anthropic SDK's
``base_url`` at the root ({anthropic_base_url}; the SDK appends ``/v1/messages``). A call
counts because the gateway saw it, whatever the agent believes it did. Per call, in order:

1. a scripted fault of the turn (faults.py) answers instead, or delays the call;
2. the turn's ``model:`` script (model_double.py) answers, over any upstream;
3. ``[sandbox] llm_mode = "replay"``: the cassette answers (cassettes.py), a miss is a 502;
4. the upstream (``[sandbox] llm_upstream`` for OpenAI, ``anthropic_upstream`` for Anthropic)
   answers; a streamed answer is passed to the agent chunk by chunk while it is read back
   (``StreamCapture``) for its usage and text; ``record`` mode writes it to the cassette;
5. no upstream: the model double answers (``DEFAULT_STEP``), never a 503.

Every answer the double gave is an event with ``meta["double"] = True``. Calls are attributed
to a case by one resolution (``keys_of``: the sandbox sets ``Router.llm_keys``: ``user``,
``safety_identifier``, ``metadata``, document tokens, else the case's injected text), used for
the event, the faults and the scripts alike.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Callable

import aiohttp
from aiohttp import web

from harness.sandbox import model_double as double
from harness.sandbox import model_wire as wire
from harness.sandbox.keys import request_keys, tool_calls_of
from harness.sandbox.stream_capture import StreamCapture
from harness.types import Event


log = logging.getLogger("harness.gateway")

# Headers that must not be copied between hops.
HOP_HEADERS = {"host", "content-length", "transfer-encoding", "connection", "authorization", "accept-encoding",
               "x-api-key"}
#: Upstream answer headers the agent sees as they came (its SDK's retry logic reads them).
PASSED_BACK = ("retry-after", "retry-after-ms", "x-request-id", "request-id")
PASSED_BACK_PREFIXES = ("x-ratelimit-", "anthropic-ratelimit-", "openai-")
#: How much of each system prompt an LLM call event keeps, for the no_leak check.
SYSTEM_PROMPT_CHARS = 20_000


def _error(status: int, message: str, provider: str = "openai") -> web.Response:
    return web.json_response(wire.error_body(provider, status, message), status=status)


def _text_of(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def _retry_after(response: web.StreamResponse) -> float | None:
    """The seconds an answer's Retry-After header asks for (None: no header, or a date)."""
    try:
        return float(response.headers.get("Retry-After", ""))
    except (ValueError, AttributeError):
        return None


class LlmGateway:
    """OpenAI- and Anthropic-compatible endpoint that records each call."""

    def __init__(self, sink: Callable[[Event], None], upstream: str = "", api_key: str = "",
                 timeout_s: float = 120.0, clock: Callable[[], float] = time.time,
                 anthropic_upstream: str = "", anthropic_key: str = ""):
        self.sink = sink
        self.upstream = upstream.rstrip("/")
        self.api_key = api_key
        self.anthropic_upstream = anthropic_upstream.rstrip("/")
        self.anthropic_key = anthropic_key
        self.timeout_s = timeout_s
        self.clock = clock
        self._session: aiohttp.ClientSession | None = None
        self.faults = None  # a harness.sandbox.faults.FaultBook, set by the sandbox
        self.scripts = None  # a harness.sandbox.model_double.ScriptBook, set by the sandbox
        self.meter = None  # harness.sandbox.metering.Meter: tokens + price per call, set by the sandbox
        self.cassette = None  # harness.sandbox.cassettes.Cassette: record / replay, set by the sandbox
        self.keys_of = request_keys  # body -> the case's keys (harness/sandbox/router.py Router.llm_keys)
        self.double_calls = 0
        """Calls the model double answered (scripted or by default): the run's notes say how many."""
        self.double_scripted = 0

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        for prefix in ("/v1", ""):
            app.router.add_post(prefix + "/chat/completions", self.chat_completions)
            app.router.add_post(prefix + "/messages", self.messages)
            app.router.add_get(prefix + "/models", self.models)
        app.on_cleanup.append(self._close)
        return app

    async def _close(self, _app: web.Application) -> None:
        if self._session is not None:
            await self._session.close()

    async def models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": []})

    async def chat_completions(self, request: web.Request) -> web.StreamResponse:
        return await self._call(request, "openai")

    async def messages(self, request: web.Request) -> web.StreamResponse:
        return await self._call(request, "anthropic")

    async def _call(self, request: web.Request, provider: str) -> web.StreamResponse:
        started = self.clock()
        t0 = time.perf_counter()
        raw = await request.read()
        base = {"provider": provider}
        try:
            body = json.loads(raw or b"{}")
            if not isinstance(body, dict):
                raise ValueError("body is not a JSON object")
        except (ValueError, RecursionError) as exc:
            return self._record(started, t0, {}, (), 400, None, f"invalid JSON body: {exc}",
                                _error(400, f"invalid JSON body: {exc}", provider), base)
        keys = self.keys_of(body)  # the one resolution: event, faults, scripts
        if self.faults is not None:  # scripted per-case faults (harness/sandbox/faults.py)
            injected = await self.faults.before_llm(body, request, keys)
            if injected is not None:
                resp = injected.response
                if provider == "anthropic" and injected.status >= 400:  # the error shape its SDK reads
                    resp = _error(injected.status, injected.error, provider)
                    if "Retry-After" in injected.response.headers:
                        resp.headers["Retry-After"] = injected.response.headers["Retry-After"]
                return self._record(started, t0, body, keys, injected.status, None, injected.error, resp, base)
        found = self.scripts.take(keys) if self.scripts is not None else None
        if found is not None:  # the turn's model: script wins over any upstream
            step, armed, how = found
            return await self._double(request, provider, body, keys, step, armed, how, started, t0)
        if self.cassette is not None and self.cassette.replaying:  # no upstream call, no spend
            return await self._replay(request, provider, body, keys, started, t0)
        upstream = self.upstream if provider == "openai" else self.anthropic_upstream
        if not upstream:  # nobody else to answer: the model double does
            return await self._double(request, provider, body, keys, double.DEFAULT_STEP, None, "default",
                                      started, t0)
        return await self._forward(request, provider, upstream, raw, body, keys, started, t0)

    # -- the model double ------------------------------------------------------------

    async def _double(self, request: web.Request, provider: str, body: dict, keys, step: double.Step,
                      armed, how: str, started: float, t0: float) -> web.StreamResponse:
        self.double_calls += 1
        self.double_scripted += how != "default"
        meta = {"provider": provider, "double": True, "double_step": step.kind, "script": how}
        if step.delay_ms:
            await asyncio.sleep(step.delay_ms / 1000)
        if step.kind == "status":
            msg = step.message or f"model double: scripted HTTP {step.status}"
            resp = _error(step.status, msg, provider)
            if step.retry_after is not None:
                resp.headers["Retry-After"] = f"{step.retry_after:g}"
            return self._record(started, t0, body, keys, step.status, None, msg, resp, meta)
        if step.kind == "timeout":
            await wire.hang(armed.released if armed is not None else None, request)
            msg = "model double: scripted timeout (answered 504 when released)"
            return self._record(started, t0, body, keys, 504, None, msg, _error(504, msg, provider), meta)
        streamed = step.stream if step.stream is not None else bool(body.get("stream"))
        meta["stream"] = streamed
        if step.kind == "malformed":
            if not streamed:
                resp = web.Response(status=200, body=wire.MALFORMED_JSON, content_type="application/json")
            else:
                resp = await self._write_stream(request, wire.malformed_stream(provider), step.token_delay_ms)
            return self._record(started, t0, body, keys, 200, None, "model double: scripted malformed answer",
                                resp, meta)
        answer = wire.build_answer(step, body, provider)
        answer.usage, meta["double_estimated"] = self._usage(body, answer)
        asked = bool((body.get("stream_options") or {}).get("include_usage")) if isinstance(
            body.get("stream_options"), dict) else False
        # Anthropic always streams usage (message_start + message_delta); OpenAI only when asked
        with_usage = provider == "anthropic" or (step.usage if step.usage is not None else asked)
        if streamed:
            resp = await self._write_stream(request, wire.stream_events(answer, with_usage), step.token_delay_ms)
            meta["usage_chunk"] = with_usage
        else:
            resp = web.json_response(wire.completion(answer))
        told = wire.completion(answer)  # what the agent was told; no usage when none was streamed
        if streamed and not with_usage:
            told.pop("usage", None)
        return self._record(started, t0, body, keys, 200, told, "", resp, meta)

    def _usage(self, body: dict, answer: wire.Answer) -> tuple[tuple[int, int] | None, bool]:
        """The double's usage: tiktoken's count, as the provider would report it, and whether
        that count is an estimate (another vendor's model, tools involved)."""
        from harness.sandbox.metering import count_call

        try:
            tin, tout, _source, estimated = count_call(body, wire.completion(answer), answer.model)
            return (tin, tout), estimated
        except Exception as exc:  # counting must never break the agent's call
            log.warning("model double: token counting failed: %s", exc)
            return None, True

    async def _write_stream(self, request: web.Request, frames: list[bytes], delay_ms: int = 0) -> web.StreamResponse:
        resp = web.StreamResponse(status=200, headers={"Content-Type": "text/event-stream",
                                                       "Cache-Control": "no-cache"})
        await resp.prepare(request)
        try:
            for i, frame in enumerate(frames):
                if delay_ms and i:
                    await asyncio.sleep(delay_ms / 1000)
                await resp.write(frame)
            await resp.write_eof()
        except (ConnectionResetError, ConnectionError):  # the agent hung up mid-stream
            pass
        return resp

    # -- cassette replay -------------------------------------------------------------

    async def _replay(self, request: web.Request, provider: str, body: dict, keys, started: float,
                      t0: float) -> web.StreamResponse:
        status, parsed, error, extra = self.cassette.replay(body)
        meta = {"provider": provider, **extra}
        if status >= 300:
            return self._record(started, t0, body, keys, status, parsed, error,
                                _error(status, error, provider), meta)
        if body.get("stream"):  # recorded as JSON; streamed back the way it was asked for
            answer = wire.answer_from_completion(parsed, provider, str(body.get("model") or ""))
            opts = body.get("stream_options") if isinstance(body.get("stream_options"), dict) else {}
            frames = wire.stream_events(answer, provider == "anthropic" or bool(opts.get("include_usage")))
            resp = await self._write_stream(request, frames)
        else:
            resp = web.json_response(parsed, status=status)
        return self._record(started, t0, body, keys, status, parsed, error, resp, meta)

    # -- a real upstream -------------------------------------------------------------

    async def _forward(self, request: web.Request, provider: str, upstream: str, raw: bytes, body: dict, keys,
                       started: float, t0: float) -> web.StreamResponse:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_HEADERS}
        headers["Content-Type"] = "application/json"
        if provider == "anthropic":
            url = upstream + "/v1/messages"
            if self.anthropic_key:
                headers["x-api-key"] = self.anthropic_key
            else:  # the agent's own credentials, as its SDK sent them (x-api-key or a bearer token)
                headers.update({k: v for k, v in request.headers.items()
                                if k.lower() in ("x-api-key", "authorization")})
        else:
            url = upstream + "/chat/completions"
            key = self.api_key or request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
            if key:
                headers["Authorization"] = f"Bearer {key}"
        meta: dict = {"provider": provider}
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.timeout_s))
        try:
            async with self._session.post(url, data=raw, headers=headers) as up:
                status = up.status
                ctype = up.headers.get("Content-Type", "application/json")
                back = {k: v for k, v in up.headers.items()
                        if k.lower() in PASSED_BACK or k.lower().startswith(PASSED_BACK_PREFIXES)}
                if "text/event-stream" in ctype and status < 300:
                    return await self._pass_stream(request, provider, up, back, body, keys, started, t0, meta)
                payload = await up.read()
        except (aiohttp.ClientError, TimeoutError) as exc:
            msg = f"upstream unreachable: {type(exc).__name__}: {exc}"
            return self._record(started, t0, body, keys, 502, None, msg, _error(502, msg, provider), meta)
        parsed = None
        if "json" in ctype:
            try:
                parsed = json.loads(payload)
            except (ValueError, RecursionError):
                parsed = None
        error = "" if status < 400 else f"upstream answered {status}"
        if self.cassette is not None:
            self._store(body, status, parsed)
        resp = web.Response(body=payload, status=status, content_type=ctype.split(";")[0], headers=back)
        return self._record(started, t0, body, keys, status, parsed, error, resp, meta)

    async def _pass_stream(self, request: web.Request, provider: str, up, back: dict, body: dict, keys,
                           started: float, t0: float, meta: dict) -> web.StreamResponse:
        """Pass an upstream SSE answer to the agent chunk by chunk (never buffered), reading it as it goes."""
        resp = web.StreamResponse(status=up.status, headers={**back, "Content-Type": "text/event-stream",
                                                             "Cache-Control": "no-cache"})
        await resp.prepare(request)
        capture = StreamCapture(provider)
        error = ""
        try:
            async for chunk in up.content.iter_any():
                capture.feed(chunk)
                await resp.write(chunk)
            await resp.write_eof()
        except (ConnectionResetError, ConnectionError) as exc:
            error = f"the agent hung up mid-stream: {type(exc).__name__}"
        except (aiohttp.ClientError, TimeoutError) as exc:
            error = f"upstream stream broke: {type(exc).__name__}: {exc}"
        parsed = capture.completion()
        meta.update(stream=True, stream_frames=capture.frames, usage_chunk=capture.usage is not None)
        if capture.broken:
            meta["stream_broken_frames"] = capture.broken
        if self.cassette is not None and not error:
            self._store(body, up.status, parsed)
        return self._record(started, t0, body, keys, up.status, parsed, error, resp, meta)

    def _store(self, body: dict, status: int, parsed: dict | None) -> None:
        """Record an answer in the cassette; a cassette that cannot be written (a read-only or
        full disk, an agent's file in its place) is a warning, never a failed call for the agent."""
        try:
            self.cassette.store(body, status, parsed)
        except (OSError, ValueError) as exc:
            log.warning("cassette: could not record the answer in %s: %s", self.cassette.path, exc)

    # -- the event ---------------------------------------------------------------------

    def _record(self, started: float, t0: float, body: dict, keys, status: int, parsed: dict | None,
                error: str, response: web.StreamResponse, extra: dict | None = None) -> web.StreamResponse:
        from harness.sandbox.metering import usage_counts

        reported = usage_counts(parsed)
        messages = body.get("messages") if isinstance(body.get("messages"), list) else []
        prompt_text = "\n".join(_text_of(m.get("content")) for m in messages if isinstance(m, dict))
        system = [m["content"] for m in messages if isinstance(m, dict)
                  and m.get("role") in ("system", "developer") and isinstance(m.get("content"), str)]
        if body.get("system"):  # Anthropic's system prompt is a field of its own
            system.append(_text_of(body["system"]))
        meta = {
            "model": body.get("model", ""),
            "upstream_model": (parsed or {}).get("model", "") if isinstance(parsed, dict) else "",
            "input_tokens": reported[0] if reported else None,
            "output_tokens": reported[1] if reported else None,
            "tokens_source": "usage" if reported else "missing",
            "stream": bool(body.get("stream")),
            # what the agent told its LLM to be (checks.basics.no_leak); never written to results
            "system_prompts": [s[:SYSTEM_PROMPT_CHARS] for s in system],
            "retry_after": _retry_after(response),  # checks.tools.retry_wait
            "tool_calls": tool_calls_of(parsed),  # what the model asked for: router.tool_keys attributes those calls
            **(extra or {}),
        }
        if self.meter is not None:  # tokens (usage or tiktoken) and price (harness/sandbox/metering.py)
            meta = self.meter.annotate(meta, body, parsed, status)
        request_summary = {k: v for k, v in body.items() if k not in ("messages", "system")}
        request_summary["messages"] = len(messages)
        if body.get("system"):  # the prompt stays in meta (system_prompts), never in the summary
            request_summary["system_chars"] = len(_text_of(body["system"]))
        request_summary["prompt_chars"] = len(prompt_text)
        self.sink(Event(source="gateway", name="llm", at=started, status=status,
                        duration_ms=(time.perf_counter() - t0) * 1000, request=request_summary,
                        response=None, keys=tuple(keys), error=error, meta=meta))
        return response
