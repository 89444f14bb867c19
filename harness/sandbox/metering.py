"""Per-call metering at the LLM gateway: tokens and price, written into the ``llm`` event's meta.

Tokens come from the provider's ``usage`` when the response has one (what the provider
says it billed; a streamed answer's usage chunk, OpenAI's last chunk or Anthropic's
message_start + message_delta, counts the same). Otherwise the gateway counts them with
tiktoken (offline rank files, see ``harness.models.tokens``): the messages, system prompt,
tool schemas, tool calls and tool results in, the text and tool-call arguments out. Such a
count is marked ``estimated`` when it was made with an OpenAI encoding for another vendor's
model, when tools are involved, or when it was read from a stream without a usage chunk.
A failed call (non-2xx) without usage is not billed. A call the model double answered
carries the double's usage (tiktoken's count, estimated outside OpenAI's models).

The price comes from the price table; an unknown model gives ``cost_usd: None`` with a
reason. When the upstream is the agent's own offline model (a loopback upstream), or the
model double answered, calls are priced at the named models' prices and marked ``simulated``.
"""

from __future__ import annotations

import json
import logging
from typing import Any
from urllib.parse import urlparse

from harness.models.prices import PriceTable, load_prices

log = logging.getLogger("harness.metering")

LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1"}


def completion_parts(parsed: dict | None) -> tuple[str, list[str]]:
    """(answer text incl. refusals, tool-call arguments) of an OpenAI or Anthropic completion."""
    parsed = parsed or {}
    texts: list[str] = []
    args: list[str] = []
    for block in parsed.get("content") or () if isinstance(parsed.get("content"), list) else ():  # Anthropic
        if isinstance(block, dict) and block.get("type") == "text":
            texts.append(str(block.get("text", "")))
        elif isinstance(block, dict) and block.get("type") == "tool_use":
            args += [str(block.get("name", "")), json.dumps(block.get("input") or {}, ensure_ascii=False)]
    for choice in parsed.get("choices") or ():
        msg = (choice.get("message") or {}) if isinstance(choice, dict) else {}
        for key in ("content", "refusal"):
            if isinstance(msg.get(key), str):
                texts.append(msg[key])
        for call in msg.get("tool_calls") or ():
            fn = call.get("function") if isinstance(call, dict) else None
            if isinstance(fn, dict):
                args += [str(fn.get("name", "")), str(fn.get("arguments", ""))]
    return "\n".join(texts), args


def usage_counts(parsed: dict | None) -> tuple[int, int] | None:
    """(input, output) tokens the provider reported: OpenAI ``prompt_tokens``/``completion_tokens``,
    Anthropic ``input_tokens`` (+ cache reads and writes)/``output_tokens``; None when it reported none."""
    usage = (parsed or {}).get("usage") if isinstance(parsed, dict) else None
    if not isinstance(usage, dict):
        return None
    if usage.get("prompt_tokens") is not None:
        return int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
    if usage.get("input_tokens") is not None:
        tin = sum(int(usage.get(k) or 0) for k in ("input_tokens", "cache_creation_input_tokens",
                                                     "cache_read_input_tokens"))
        return tin, int(usage.get("output_tokens") or 0)
    return None


def count_call(body: dict, parsed: dict | None, model: str) -> tuple[int, int, str, bool]:
    """(input, output, tokens_source, estimated) counted with tiktoken: the request's messages,
    system prompt, tool schemas, tool calls and tool results; the answer's text and tool-call
    arguments. A count with tools in it is an estimate (providers do not publish how they render them)."""
    from harness.models.tokens import count_output, count_request

    tin, choice, with_tools = count_request(body, model)
    text, args = completion_parts(parsed)
    tout, _ = count_output(text, args, model)
    tool_calls_in = any(isinstance(m, dict) and (m.get("tool_calls") or m.get("role") == "tool")
                        for m in body.get("messages") or ())
    return tin, tout, f"tiktoken:{choice.name}", choice.estimated or with_tools or bool(args) or tool_calls_in


def is_simulated(setting: Any, upstream: str) -> bool:
    """``[budget] simulated``: true / false, or "auto" (default): a loopback upstream is not billed."""
    if isinstance(setting, bool):
        return setting
    return (urlparse(upstream).hostname or "") in LOOPBACK_HOSTS


class Meter:
    """Fills ``input_tokens``/``output_tokens``/``tokens_source``/``estimated`` and ``cost_usd``."""

    def __init__(self, prices: PriceTable, simulated: bool = False):
        self.prices = prices
        self.simulated = simulated

    def annotate(self, meta: dict, body: dict, parsed: dict | None, status: int) -> dict:
        """``parsed``: the answer's JSON, or a streamed answer read back into that shape
        (``stream_capture.StreamCapture``); ``meta["stream"]``: it was streamed."""
        meta = dict(meta)
        model = str(body.get("model") or meta.get("upstream_model") or "")
        reported = usage_counts(parsed)
        if reported is not None:
            tin, tout = (meta.get("input_tokens"), meta.get("output_tokens"))
            meta.update(input_tokens=reported[0] if tin is None else tin,
                        output_tokens=reported[1] if tout is None else tout, tokens_source="usage",
                        # the double's usage is tiktoken's count: exact only for OpenAI's models, no tools
                        estimated=bool(meta.get("double")) and bool(meta.get("double_estimated", True)))
        elif status >= 400 or (parsed is None and status >= 300):
            meta.update(input_tokens=0, output_tokens=0, tokens_source="not-billed", estimated=False)
        else:
            try:
                tin, tout, source, estimated = count_call(body, parsed, model)
                # a stream without a usage chunk: counted from what was streamed, an estimate
                meta.update(input_tokens=tin, output_tokens=tout, tokens_source=source,
                            estimated=estimated or bool(meta.get("stream")))
            except Exception as exc:  # counting must never break the agent's call
                log.warning("token counting failed: %s", exc)
                meta.update(input_tokens=None, output_tokens=None, tokens_source="missing", estimated=False)
        if meta.get("replayed"):
            meta.update(cost_usd=0.0, cost_reason="replayed from a cassette: no upstream call, no spend")
        elif meta.get("tokens_source") == "not-billed":
            meta.update(cost_usd=0.0, cost_reason=f"failed call (HTTP {status}): not billed")
        else:
            cost = self.prices.cost(model, meta.get("input_tokens"), meta.get("output_tokens"))
            if cost.usd is None and meta.get("upstream_model"):
                alt = self.prices.cost(str(meta["upstream_model"]), meta.get("input_tokens"),
                                       meta.get("output_tokens"))
                cost = alt if alt.usd is not None else cost
            meta.update(cost_usd=cost.usd, cost_reason=cost.reason)
        meta["simulated"] = self.simulated or bool(meta.get("double"))  # the double bills nobody either
        meta["price_version"] = self.prices.version
        return meta


def gateway_hooks(config, upstream: str) -> dict:
    """The gateway's metering and cassette, from ``[budget]`` and ``[sandbox]`` (keyword args)."""
    from harness.sandbox.cassettes import cassette_from_config

    budget = config.sections.get("budget", {}) or {}
    prices = load_prices(str(config.resolve(budget["prices"])) if budget.get("prices") else None)
    return {"meter": Meter(prices, is_simulated(budget.get("simulated", "auto"), upstream)),
            "cassette": cassette_from_config(config)}
