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

Answers are written in both wire formats (model_wire.py), so the bot's own SDK parses them unchanged:
OpenAI chat completions (JSON, or SSE ``chat.completion.chunk`` with or without the usage
chunk, then ``[DONE]``) and Anthropic Messages (JSON content blocks, or the
message_start / content_block_* / message_delta / message_stop events). Usage is counted
with tiktoken (``harness.models.tokens``) the way the provider would report it.

Templates in ``text`` (and in string argument values): ``{last_user}``, ``{tool_result}``,
``{tool_result.<dotted.path>}``; one that cannot be filled leaves ``{?name}`` in the answer.
"""

from __future__ import annotations

import asyncio
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
