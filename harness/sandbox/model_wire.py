"""The model double's answers in both providers' wire formats, so the bot's own SDK parses them
unchanged: OpenAI chat completions (JSON, or SSE ``chat.completion.chunk`` with or without the
usage chunk, then ``[DONE]``) and Anthropic Messages (JSON content blocks, or the
message_start / content_block_* / message_delta / message_stop events); the providers' error
bodies, a malformed answer, and a hang. The script that picks the answer: model_double.py."""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any, Mapping

from harness.sandbox.model_double import Step, _render_value, render, request_context


#: A ``timeout`` step never outlives this, even if nobody disarms it.
MAX_HANG_S = 120.0
#: How the stream splits text (words with their trailing space) and JSON arguments (characters).
ARG_CHUNK = 12


_ids = itertools.count(1)


@dataclass
class Answer:
    """A provider-neutral assistant answer, written out in either wire format."""

    provider: str
    model: str
    text: str = ""
    refusal: str = ""
    tool_calls: list[dict] = field(default_factory=list)
    """{id, name, arguments (a JSON string)} each."""
    finish_reason: str = ""
    usage: tuple[int, int] | None = None
    """(input, output) tokens to report; None: report none."""
    number: int = field(default_factory=lambda: next(_ids))

    def finish(self) -> str:
        if self.finish_reason:
            return self.finish_reason
        if self.provider == "anthropic":
            return "tool_use" if self.tool_calls else "end_turn"
        return "tool_calls" if self.tool_calls else "stop"

    def arguments(self) -> list[str]:
        return [c["arguments"] for c in self.tool_calls]


def build_answer(step: Step, body: Mapping[str, Any], provider: str) -> Answer:
    """The answer ``step`` gives to ``body`` (templates filled; no usage yet)."""
    ctx = request_context(body)
    model = step.model or str(body.get("model") or "double")
    answer = Answer(provider=provider, model=model, finish_reason=step.finish_reason)
    if step.kind == "text":
        answer.text = render(step.text, ctx)
    elif step.kind == "refusal":
        answer.refusal = render(step.text, ctx)
    elif step.kind == "tool_calls":
        for i, call in enumerate(step.tool_calls):
            args = call.get("arguments", {})
            args = args if isinstance(args, str) else json.dumps(_render_value(args, ctx), ensure_ascii=False)
            prefix = "toolu_double_" if provider == "anthropic" else "call_double_"
            answer.tool_calls.append({"id": call.get("id") or f"{prefix}{answer.number}_{i}",
                                      "name": call["name"], "arguments": args})
    return answer


def answer_from_completion(parsed: Mapping[str, Any], provider: str, model: str = "") -> Answer:
    """An ``Answer`` read back from a (recorded) non-streamed completion, to stream it again."""
    answer = Answer(provider=provider, model=str(parsed.get("model") or model or "double"))
    if provider == "anthropic":
        for block in parsed.get("content") or ():
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                answer.text += str(block.get("text", ""))
            elif block.get("type") == "tool_use":
                answer.tool_calls.append({"id": block.get("id", ""), "name": block.get("name", ""),
                                          "arguments": json.dumps(block.get("input") or {}, ensure_ascii=False)})
        answer.finish_reason = str(parsed.get("stop_reason") or "")
        u = parsed.get("usage") or {}
        if u.get("input_tokens") is not None:
            answer.usage = (int(u.get("input_tokens") or 0), int(u.get("output_tokens") or 0))
        return answer
    choice = ((parsed.get("choices") or [{}])[0]) or {}
    msg = choice.get("message") or {}
    answer.text = msg.get("content") or ""
    answer.refusal = msg.get("refusal") or ""
    for call in msg.get("tool_calls") or ():
        fn = call.get("function") or {}
        answer.tool_calls.append({"id": call.get("id", ""), "name": fn.get("name", ""),
                                  "arguments": fn.get("arguments", "")})
    answer.finish_reason = str(choice.get("finish_reason") or "")
    u = parsed.get("usage") or {}
    if u.get("prompt_tokens") is not None:
        answer.usage = (int(u.get("prompt_tokens") or 0), int(u.get("completion_tokens") or 0))
    return answer


def _openai_usage(answer: Answer) -> dict:
    tin, tout = answer.usage or (0, 0)
    return {"prompt_tokens": tin, "completion_tokens": tout, "total_tokens": tin + tout}


def openai_json(answer: Answer) -> dict:
    """A ``chat.completion`` object (usage included when the answer has one)."""
    content = None if answer.refusal or (answer.tool_calls and not answer.text) else answer.text
    msg: dict[str, Any] = {"role": "assistant", "content": content, "refusal": answer.refusal or None}
    if answer.tool_calls:
        msg["tool_calls"] = [{"id": c["id"], "type": "function",
                              "function": {"name": c["name"], "arguments": c["arguments"]}} for c in answer.tool_calls]
    out = {"id": f"chatcmpl-double-{answer.number}", "object": "chat.completion", "created": int(time.time()),
           "model": answer.model, "system_fingerprint": None,
           "choices": [{"index": 0, "message": msg, "logprobs": None, "finish_reason": answer.finish()}]}
    if answer.usage is not None:
        out["usage"] = _openai_usage(answer)
    return out


def _pieces(text: str) -> list[str]:
    return re.findall(r"\S+\s*|\s+", text) if text else []


def _arg_pieces(args: str) -> list[str]:
    return [args[i:i + ARG_CHUNK] for i in range(0, len(args), ARG_CHUNK)] or [""]


def openai_chunks(answer: Answer, include_usage: bool) -> list[dict]:
    """The ``chat.completion.chunk`` objects of a streamed answer (the usage chunk last, when asked)."""
    base = {"id": f"chatcmpl-double-{answer.number}", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": answer.model, "system_fingerprint": None}

    def chunk(delta: dict, finish: str | None = None) -> dict:
        c = {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}
        if include_usage:
            c["usage"] = None
        return c

    out = [chunk({"role": "assistant", "content": "", "refusal": None})]
    if answer.refusal:
        out += [chunk({"refusal": p}) for p in _pieces(answer.refusal)]
    else:
        out += [chunk({"content": p}) for p in _pieces(answer.text)]
    for i, call in enumerate(answer.tool_calls):
        out.append(chunk({"tool_calls": [{"index": i, "id": call["id"], "type": "function",
                                          "function": {"name": call["name"], "arguments": ""}}]}))
        out += [chunk({"tool_calls": [{"index": i, "function": {"arguments": p}}]})
                for p in _arg_pieces(call["arguments"]) if p]
    out.append(chunk({}, answer.finish()))
    if include_usage:
        out.append({**base, "choices": [], "usage": _openai_usage(answer)})
    return out


def _anthropic_blocks(answer: Answer) -> list[dict]:
    blocks: list[dict] = []
    text = answer.refusal or answer.text
    if text or not answer.tool_calls:
        blocks.append({"type": "text", "text": text})
    for call in answer.tool_calls:
        try:
            args = json.loads(call["arguments"] or "{}")
        except (ValueError, RecursionError):
            args = {}
        blocks.append({"type": "tool_use", "id": call["id"], "name": call["name"], "input": args})
    return blocks


def anthropic_json(answer: Answer) -> dict:
    """A Messages API ``message`` object (Anthropic always reports usage)."""
    tin, tout = answer.usage or (0, 0)
    return {"id": f"msg_double_{answer.number}", "type": "message", "role": "assistant", "model": answer.model,
            "content": _anthropic_blocks(answer), "stop_reason": answer.finish(), "stop_sequence": None,
            "usage": {"input_tokens": tin, "output_tokens": tout}}


def anthropic_events(answer: Answer) -> list[tuple[str, dict]]:
    """The (event, data) pairs of a streamed Messages answer."""
    tin, tout = answer.usage or (0, 0)
    message = {**anthropic_json(answer), "content": [], "stop_reason": None,
               "usage": {"input_tokens": tin, "output_tokens": 1}}
    out: list[tuple[str, dict]] = [("message_start", {"type": "message_start", "message": message})]
    calls = iter(answer.tool_calls)
    for i, block in enumerate(_anthropic_blocks(answer)):
        if block["type"] == "text":
            out.append(("content_block_start", {"type": "content_block_start", "index": i,
                                                "content_block": {"type": "text", "text": ""}}))
            out += [("content_block_delta", {"type": "content_block_delta", "index": i,
                                             "delta": {"type": "text_delta", "text": p}})
                    for p in _pieces(block["text"])]
        else:
            call = next(calls)
            out.append(("content_block_start", {"type": "content_block_start", "index": i,
                                                "content_block": {"type": "tool_use", "id": block["id"],
                                                                  "name": block["name"], "input": {}}}))
            out += [("content_block_delta", {"type": "content_block_delta", "index": i,
                                             "delta": {"type": "input_json_delta", "partial_json": p}})
                    for p in _arg_pieces(call["arguments"])]
        out.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    out.append(("message_delta", {"type": "message_delta",
                                  "delta": {"stop_reason": answer.finish(), "stop_sequence": None},
                                  "usage": {"output_tokens": tout}}))
    out.append(("message_stop", {"type": "message_stop"}))
    return out


def sse(data: Any, event: str = "") -> bytes:
    """One server-sent event (``data: [DONE]`` when ``data`` is that string)."""
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return ((f"event: {event}\n" if event else "") + f"data: {payload}\n\n").encode("utf-8")


def stream_events(answer: Answer, include_usage: bool) -> list[bytes]:
    """The answer as the SSE frames its provider would stream."""
    if answer.provider == "anthropic":
        return [sse(data, event) for event, data in anthropic_events(answer)]
    return [sse(c) for c in openai_chunks(answer, include_usage)] + [sse("[DONE]")]


def completion(answer: Answer) -> dict:
    """The answer as its provider's non-streamed JSON."""
    return anthropic_json(answer) if answer.provider == "anthropic" else openai_json(answer)


#: Anthropic's error types by status (https://docs.anthropic.com/en/api/errors).
ANTHROPIC_ERRORS = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                    404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
                    500: "api_error", 529: "overloaded_error"}


def error_body(provider: str, status: int, message: str) -> dict:
    """An error in the provider's shape (what its SDK turns into ``RateLimitError`` etc.)."""
    if provider == "anthropic":
        kind = ANTHROPIC_ERRORS.get(status, "api_error" if status >= 500 else "invalid_request_error")
        return {"type": "error", "error": {"type": kind, "message": message}}
    if status == 429:
        kind, code = "requests", "rate_limit_exceeded"
    elif status >= 500:
        kind, code = "server_error", None
    else:
        kind, code = "invalid_request_error", None
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


MALFORMED_JSON = b'{"id": "chatcmpl-double-broken", "choices": [{"message": '


def malformed_stream(provider: str) -> list[bytes]:
    """A stream that starts well and breaks: a frame that is not JSON, and no end."""
    good = Answer(provider=provider, model="double", text="partial ")
    frames = stream_events(good, False)[:2]
    return frames + [b"data: {\"id\": \"broken\", \"choices\": [{\"delta\": \n\n"]


async def hang(released: asyncio.Event | None, request: Any = None, max_s: float = MAX_HANG_S) -> None:
    """Hold a ``timeout`` step's call until the turn ends (``released``), the client hangs up,
    or ``max_s`` passes."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + max_s
    while (released is None or not released.is_set()) and loop.time() < deadline:
        transport = getattr(request, "transport", None)
        if request is not None and (transport is None or transport.is_closing()):
            return
        try:
            await asyncio.wait_for(released.wait() if released is not None else asyncio.sleep(0.1), 0.1)
        except asyncio.TimeoutError:
            pass
