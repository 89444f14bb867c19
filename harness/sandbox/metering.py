"""Per-call metering at the LLM gateway: tokens and price, written into the ``llm`` event's meta.

Tokens come from the provider's ``usage`` when the response has one (what the provider
says it billed). Otherwise the gateway counts them with tiktoken (offline rank files, see
``harness.models.tokens``); a count made with an OpenAI encoding for another vendor's
model is marked ``estimated``. A failed call (non-2xx) without usage is not billed.

The price comes from the price table; an unknown model gives ``cost_usd: None`` with a
reason. When the upstream is the agent's own offline model (a loopback upstream), calls
are priced at the named field models' prices and marked ``simulated``.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlparse

from harness.models.prices import PriceTable, load_prices

log = logging.getLogger("harness.metering")

LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1"}


def _completion_text(parsed: dict | None) -> str:
    out = []
    for choice in (parsed or {}).get("choices") or ():
        if isinstance(choice, dict):
            msg = choice.get("message") or {}
            if isinstance(msg.get("content"), str):
                out.append(msg["content"])
    return "\n".join(out)


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
        meta = dict(meta)
        model = str(body.get("model") or meta.get("upstream_model") or "")
        usage = (parsed or {}).get("usage") or {}
        if usage and usage.get("prompt_tokens") is not None:
            meta["estimated"] = False
        elif status >= 400 or (parsed is None and status >= 300):
            meta.update(input_tokens=0, output_tokens=0, tokens_source="not-billed", estimated=False)
        else:
            try:
                from harness.models.tokens import count_messages, count_tokens

                tin, choice = count_messages(body.get("messages") or [], model)
                tout, _ = count_tokens(_completion_text(parsed), model)
                meta.update(input_tokens=tin, output_tokens=tout, tokens_source=f"tiktoken:{choice.name}",
                            estimated=choice.estimated)
            except Exception as exc:  # counting must never break the agent's call
                log.warning("token counting failed: %s", exc)
                meta.update(tokens_source="missing", estimated=False)
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
        meta["simulated"] = self.simulated
        meta["price_version"] = self.prices.version
        return meta


def gateway_hooks(config, upstream: str) -> dict:
    """The gateway's metering and cassette, from ``[budget]`` and ``[sandbox]`` (keyword args)."""
    from harness.sandbox.cassettes import cassette_from_config

    budget = config.sections.get("budget", {}) or {}
    prices = load_prices(str(config.resolve(budget["prices"])) if budget.get("prices") else None)
    return {"meter": Meter(prices, is_simulated(budget.get("simulated", "auto"), upstream)),
            "cassette": cassette_from_config(config)}
