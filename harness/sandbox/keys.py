"""What a call says about whose it is: the correlation keys (``user:<id>``, ``tok:<token>``) and
the texts (the user's messages, the system prompts) read from an LLM request, and the keys of a
tool call, at any depth of its body. The router (router.py) resolves them to a running case."""

from __future__ import annotations

import json
import re
from typing import Any, Mapping

from harness.types import doc_token_keys


#: A chat id or a WhatsApp number inside a longer id (``"tg-700000001"``, ``"user_4470000000001"``).
ID_DIGITS_RE = re.compile(r"(?<!\d)\d{6,}(?!\d)")
#: Fields of a tool call's body or query that name the user or the chat (at any depth).
ID_FIELDS = frozenset({"user", "user_id", "userid", "chat_id", "chatid", "chat", "wa_id", "waid", "from",
                       "sender", "sender_id", "customer_id", "telegram_id", "phone", "phone_number",
                       "safety_identifier", "session_id"})


def id_keys(value: Any) -> list[str]:
    """``user:<v>`` for an id value, plus ``user:<digits>`` for each long digit run inside it."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return []
    text = str(value).strip()
    if not text:
        return []
    keys = [f"user:{text}"]
    keys += [f"user:{d}" for d in ID_DIGITS_RE.findall(text) if d != text]
    return keys


def request_keys(body: Mapping[str, Any]) -> list[str]:
    """The keys an LLM request names itself: ``user``, ``safety_identifier``, ``metadata``
    values (OpenAI; Anthropic's ``metadata.user_id``), document tokens in its prompt."""
    keys: list[str] = []
    for field in ("user", "safety_identifier"):
        keys += id_keys(body.get(field))
    meta = body.get("metadata")
    if isinstance(meta, Mapping):
        for v in meta.values():
            keys += id_keys(v)
    keys += doc_token_keys("\n".join(prompt_texts(body)))
    return list(dict.fromkeys(keys))


def _part_texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):  # OpenAI content parts, Anthropic content blocks
        return [p["text"] for p in content if isinstance(p, Mapping) and isinstance(p.get("text"), str)]
    return []


def user_texts(body: Mapping[str, Any]) -> list[str]:
    """The user messages of an LLM request, in order: OpenAI chat completions and Anthropic
    Messages (``messages``), the Responses API (``input``), legacy completions (``prompt``)."""
    out: list[str] = []
    items: list = []
    for field in ("messages", "input"):
        v = body.get(field)
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, list):
            items += v
    for m in items:
        if isinstance(m, Mapping) and m.get("role", "user") == "user":
            out += _part_texts(m.get("content"))
    if isinstance(body.get("prompt"), str):
        out.append(body["prompt"])
    return out


def prompt_texts(body: Mapping[str, Any]) -> list[str]:
    """Every text of an LLM request (system prompts, every message), for document tokens."""
    out = _part_texts(body.get("system"))
    for field in ("messages", "input"):
        v = body.get(field)
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, list):
            out += [t for m in v if isinstance(m, Mapping) for t in _part_texts(m.get("content"))]
    if isinstance(body.get("prompt"), str):
        out.append(body["prompt"])
    return out


def tool_request_keys(body: Any, query: Mapping[str, str] | None = None, raw: str = "",
                      tool: str = "") -> list[str]:
    """The keys a tool call names: id fields anywhere in its JSON body, its query parameters,
    document tokens in the body or the query (``tool``: unused here, as ``Router.tool_keys`` takes it)."""
    keys: list[str] = []

    def walk(value: Any, depth: int) -> None:
        if depth > 6:
            return
        if isinstance(value, Mapping):
            for k, v in value.items():
                if str(k).lower() in ID_FIELDS:
                    keys.extend(id_keys(v) if not isinstance(v, (Mapping, list)) else [])
                    if isinstance(v, Mapping) and "id" in v:  # {"chat": {"id": 700000001}}
                        keys.extend(id_keys(v["id"]))
                walk(v, depth + 1)
        elif isinstance(value, list):
            for v in value[:200]:
                walk(v, depth + 1)

    walk(body, 0)
    for k, v in (query or {}).items():
        if k.lower() in ID_FIELDS:
            keys += id_keys(v)
    keys += doc_token_keys(raw + " " + " ".join(f"{v}" for v in (query or {}).values()))
    return list(dict.fromkeys(keys))


def tool_calls_of(parsed: Any) -> list[dict]:
    """``[{"name", "arguments"}]`` the model asked for in an LLM answer (OpenAI ``tool_calls``,
    Anthropic ``tool_use`` blocks); ``arguments`` parsed from JSON when it is a string."""
    out: list[dict] = []
    if not isinstance(parsed, Mapping):
        return out
    calls: list = []
    for choice in parsed.get("choices") or []:
        msg = choice.get("message") if isinstance(choice, Mapping) else None
        if isinstance(msg, Mapping):
            calls += [c.get("function") for c in msg.get("tool_calls") or [] if isinstance(c, Mapping)]
    for block in parsed.get("content") or [] if isinstance(parsed.get("content"), list) else []:
        if isinstance(block, Mapping) and block.get("type") == "tool_use":
            calls.append({"name": block.get("name"), "arguments": block.get("input")})
    for c in calls:
        if not isinstance(c, Mapping) or not isinstance(c.get("name"), str):
            continue
        args = c.get("arguments")
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except (ValueError, RecursionError):
                continue
        if isinstance(args, Mapping) and args:
            out.append({"name": c["name"], "arguments": dict(args)})
    return out
