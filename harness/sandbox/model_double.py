"""The model double: the LLM gateway answers as OpenAI or Anthropic would, from a case's script.

A turn's ``model:`` list (docs/CASES.md, the syntax of issue 21) is armed by the runner when
the turn starts, under the case attempt's correlation keys (like ``fault:``, faults.py), and
disarmed when the turn has settled. Each LLM call of the turn takes the next step; the last
step repeats. With no script and no upstream, every call gets ``DEFAULT_STEP`` (never a 503).

    model:
      - tool_calls: [{name: create_order, arguments: {item: widget, quantity: 3}}]
      - text: "Order {tool_result.id} is {tool_result.status}"
      - refusal: "I can't help with that"
      - malformed: true                       # 200, a body that is not JSON / a broken stream
      - {status: 429, retry_after: 2}         # the provider's error shape, Retry-After header
      - timeout: true                         # hang until the client gives up or the turn ends
    modifiers on an answer: stream, usage, delay_ms, token_delay_ms, model, finish_reason

Answers are written in both wire formats, so the bot's own SDK parses them unchanged:
OpenAI chat completions (JSON, or SSE ``chat.completion.chunk`` with or without the usage
chunk, then ``[DONE]``) and Anthropic Messages (JSON content blocks, or the
message_start / content_block_* / message_delta / message_stop events). Usage is counted
with tiktoken (``harness.models.tokens``) the way the provider would report it.

Templates in ``text`` (and in string argument values): ``{last_user}``, ``{tool_result}``,
``{tool_result.<dotted.path>}``; one that cannot be filled leaves ``{?name}`` in the answer.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

PROVIDERS = ("openai", "anthropic")
KINDS = ("text", "tool_calls", "refusal", "malformed", "status", "timeout")
MODIFIERS = ("stream", "usage", "delay_ms", "token_delay_ms", "model", "finish_reason")
STEP_KEYS = KINDS + MODIFIERS + ("retry_after", "message")
TOOL_CALL_KEYS = ("name", "arguments", "id")
#: What the double answers when no script and no upstream says otherwise.
DEFAULT_TEXT = "double: {last_user}"
#: A ``timeout`` step never outlives this, even if nobody disarms it.
MAX_HANG_S = 120.0
#: How the stream splits text (words with their trailing space) and JSON arguments (characters).
ARG_CHUNK = 12
TEMPLATE_RE = re.compile(r"\{([A-Za-z_][\w-]*(?:\.[\w-]+)*)\}")
FIX = ("a step is one of {text: ...}, {tool_calls: [{name, arguments}]}, {refusal: ...}, "
       "{malformed: true}, {status: 429, retry_after: 2}, {timeout: true}")


@dataclass(frozen=True)
class Step:
    """One scripted answer to one LLM call."""

    kind: str
    """text | tool_calls | refusal | malformed | status | timeout."""
    text: str = ""
    tool_calls: tuple[Mapping[str, Any], ...] = ()
    """{name, arguments (a table or a JSON string), id?} each."""
    status: int = 0
    retry_after: float | None = None
    message: str = ""
    stream: bool | None = None
    """None: what the request asked for."""
    usage: bool | None = None
    """Streamed OpenAI answers: send the usage chunk; None: what stream_options.include_usage asked."""
    delay_ms: int = 0
    token_delay_ms: int = 0
    model: str = ""
    finish_reason: str = ""


DEFAULT_STEP = Step(kind="text", text=DEFAULT_TEXT)


# --------------------------------------------------------------------------- parsing


def _int_error(key: str, value: Any, lo: int = 0) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < lo:
        return f"{key} must be an integer >= {lo}, got {value!r}"
    return None


def _step_error(i: int, step: Any) -> str | None:
    where = f"model step {i}"
    if not isinstance(step, Mapping) or not step:
        return f"{where}: expects a table, got {step!r}"
    unknown = [k for k in step if k not in STEP_KEYS]
    if unknown:
        return f"{where}: unknown key(s) {unknown} (known: {', '.join(STEP_KEYS)})"
    kinds = [k for k in KINDS if k in step]
    if len(kinds) != 1:
        return f"{where}: needs exactly one of {', '.join(KINDS)}, found {kinds or 'none'}"
    kind = kinds[0]
    value = step[kind]
    if kind in ("text", "refusal") and not isinstance(value, str):
        return f"{where}: {kind} must be a string, got {value!r}"
    if kind in ("malformed", "timeout") and value is not True:
        return f"{where}: {kind} must be true"
    if kind == "status":
        problem = _int_error("status", value, 400)
        if problem or value > 599:
            return f"{where}: status must be an HTTP error (400-599), got {value!r}"
    if kind == "tool_calls":
        if isinstance(value, Mapping):
            value = [value]
        if not isinstance(value, list) or not value:
            return f"{where}: tool_calls must be a list of {{name, arguments}} tables"
        for j, call in enumerate(value):
            if not isinstance(call, Mapping) or not isinstance(call.get("name"), str) or not call.get("name"):
                return f"{where}: tool_calls[{j}] needs a name (a string), got {call!r}"
            unknown = [k for k in call if k not in TOOL_CALL_KEYS]
            if unknown:
                return f"{where}: tool_calls[{j}]: unknown key(s) {unknown} (known: {', '.join(TOOL_CALL_KEYS)})"
            args = call.get("arguments", {})
            if isinstance(args, str):
                continue  # a raw JSON string, sent as written (it may be broken on purpose)
            if not isinstance(args, Mapping):
                return f"{where}: tool_calls[{j}].arguments must be a table or a JSON string, got {args!r}"
            if "id" in call and not isinstance(call["id"], str):
                return f"{where}: tool_calls[{j}].id must be a string"
    if "retry_after" in step:
        ra = step["retry_after"]
        if kind != "status":
            return f"{where}: retry_after goes with status"
        if isinstance(ra, bool) or not isinstance(ra, (int, float)) or ra < 0:
            return f"{where}: retry_after must be a non-negative number of seconds, got {ra!r}"
    if "message" in step and (kind != "status" or not isinstance(step["message"], str)):
        return f"{where}: message (a string) goes with status"
    for key in ("stream", "usage"):
        if key in step and not isinstance(step[key], bool):
            return f"{where}: {key} must be true or false, got {step[key]!r}"
    for key in ("delay_ms", "token_delay_ms"):
        if key in step:
            problem = _int_error(key, step[key])
            if problem:
                return f"{where}: {problem}"
    for key in ("model", "finish_reason"):
        if key in step and (not isinstance(step[key], str) or not step[key]):
            return f"{where}: {key} must be a non-empty string, got {step[key]!r}"
    return None


def validate(value: Any) -> str | None:
    """What is wrong with a ``model:`` script (a fixture error), or None."""
    steps = [value] if isinstance(value, Mapping) else value
    if not isinstance(steps, list) or not steps:
        return f"model must be a step or a list of steps ({FIX}), got {value!r}"
    for i, step in enumerate(steps):
        problem = _step_error(i, step)
        if problem:
            return problem
    return None


def parse(value: Any) -> tuple[Step, ...]:
    """The steps of a validated ``model:`` script."""
    out = []
    for raw in ([value] if isinstance(value, Mapping) else value):
        kind = next(k for k in KINDS if k in raw)
        mods = {k: raw[k] for k in MODIFIERS if k in raw}
        if kind in ("text", "refusal"):
            out.append(Step(kind=kind, text=raw[kind], **mods))
        elif kind == "tool_calls":
            calls = raw[kind] if isinstance(raw[kind], list) else [raw[kind]]
            out.append(Step(kind=kind, tool_calls=tuple(dict(c) for c in calls), **mods))
        elif kind == "status":
            out.append(Step(kind=kind, status=raw["status"], retry_after=raw.get("retry_after"),
                            message=raw.get("message", ""), **mods))
        else:
            out.append(Step(kind=kind, **mods))
    return tuple(out)


# --------------------------------------------------------------------------- the book


@dataclass
class ArmedScript:
    """One case attempt's turn script."""

    keys: tuple[str, ...]
    steps: tuple[Step, ...]
    calls: int = 0
    released: asyncio.Event = field(default_factory=asyncio.Event)
    watching: bool = False
    """The turn's replies are in and its case watches its closing quiet window while the next
    case starts (runner._settle): a call with no key goes to the other script first."""

    def next_step(self) -> Step:
        step = self.steps[min(self.calls, len(self.steps) - 1)]
        self.calls += 1
        return step


class ScriptBook:
    """Armed ``model:`` scripts by correlation key; the gateway takes a step per LLM call.

    Looked up with the same keys as the FaultBook (``faults.llm_keys``). Every turn in flight
    is armed, with or without a script. A call that carries none of the armed keys, when
    ``solo`` is set (the runner sets it when one case runs at a time), belongs to the only
    turn in flight whose case is not just watching its closing quiet window (else the only
    turn there is), and takes that turn's script if it has one.
    """

    def __init__(self) -> None:
        self._by_key: dict[str, ArmedScript] = {}
        self._armed: list[ArmedScript] = []
        self.solo = False
        self.unmatched = 0
        """Calls that matched no turn while a scripted turn was in flight (the run's notes say so)."""

    def arm(self, keys: Iterable[str], script: Any) -> ArmedScript:
        """Arm a turn's script; an empty one still marks the turn in flight, so a keyless call
        made while it runs is not given to another case's script."""
        armed = ArmedScript(tuple(keys), parse(script) if script else ())
        for k in armed.keys:
            self._by_key[k] = armed
        self._armed.append(armed)
        return armed

    def disarm(self, armed: ArmedScript | None) -> None:
        if armed is None:
            return
        armed.released.set()
        for k in armed.keys:
            if self._by_key.get(k) is armed:
                del self._by_key[k]
        if armed in self._armed:
            self._armed.remove(armed)

    def release_all(self) -> None:
        for armed in list(self._armed):
            self.disarm(armed)

    def take(self, keys: Iterable[str]) -> tuple[Step, ArmedScript, str] | None:
        """(the next step, its script, how the call matched: ``key`` | ``sole-armed``) or None."""
        for k in keys:
            armed = self._by_key.get(k)
            if armed is not None:
                return (armed.next_step(), armed, "key") if armed.steps else None
        if self.solo:
            working = [a for a in self._armed if not a.watching]
            pick = working if working else self._armed
            if len(pick) == 1:
                return (pick[0].next_step(), pick[0], "sole-armed") if pick[0].steps else None
        if any(a.steps for a in self._armed):
            self.unmatched += 1
        return None


# --------------------------------------------------------------------------- templates


def _block_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content
                         if isinstance(p, dict) and p.get("type", "text") == "text" and isinstance(p.get("text"), str))
    return ""


def request_context(body: Mapping[str, Any]) -> dict[str, str | None]:
    """``last_user`` and ``tool_result`` of an OpenAI or Anthropic request (None: not there)."""
    last_user = tool_result = None
    for m in body.get("messages") or ():
        if not isinstance(m, dict):
            continue
        role, content = m.get("role"), m.get("content")
        if role in ("tool", "function"):  # "function": the legacy function-calling result
            tool_result = _block_text(content)
        elif role == "user":
            blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
            results = [b for b in blocks if b.get("type") == "tool_result"]
            if results:  # Anthropic: tool results come back in a user message
                tool_result = _block_text(results[-1].get("content"))
            text = _block_text(content)
            if text.strip():
                last_user = text
    return {"last_user": last_user, "tool_result": tool_result}


def _dig(value: Any, path: list[str]) -> tuple[bool, Any]:
    for part in path:
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.lstrip("-").isdigit() and -len(value) <= int(part) < len(value):
            value = value[int(part)]
        else:
            return False, None
    return True, value


def render(template: str, context: Mapping[str, str | None]) -> str:
    """Fill ``{last_user}``, ``{tool_result}``, ``{tool_result.a.b}``; ``{?name}`` where it cannot."""

    def one(match: re.Match) -> str:
        name = match.group(1)
        head, _, rest = name.partition(".")
        value = context.get(head)
        if value is None or head not in ("last_user", "tool_result"):
            return "{?" + name + "}"
        if not rest:
            return value
        if head != "tool_result":
            return "{?" + name + "}"
        try:
            parsed = json.loads(value)
        except (ValueError, RecursionError):
            return "{?" + name + "}"
        found, got = _dig(parsed, rest.split("."))
        if not found:
            return "{?" + name + "}"
        return got if isinstance(got, str) else json.dumps(got, ensure_ascii=False)

    return TEMPLATE_RE.sub(one, template)


def _render_value(value: Any, context: Mapping[str, str | None]) -> Any:
    if isinstance(value, str):
        return render(value, context)
    if isinstance(value, list):
        return [_render_value(v, context) for v in value]
    if isinstance(value, Mapping):
        return {k: _render_value(v, context) for k, v in value.items()}
    return value


# --------------------------------------------------------------------------- answers


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
