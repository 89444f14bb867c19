"""The price table: what one LLM call costs, by provider and model.

Prices live in a versioned TOML file (``harness/data/prices.toml`` by default, or
``[budget] prices = "<file>"``), each with the date it was read. An unknown model is
never priced at $0: ``PriceTable.cost`` returns ``None`` with a reason, and the case's
cost becomes unavailable.
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path

DEFAULT_PRICES = Path(__file__).resolve().parent.parent / "data" / "prices.toml"


@dataclass(frozen=True)
class Price:
    """One model's list price."""

    provider: str
    model: str
    input_per_m: float
    """USD per million input (prompt) tokens."""
    output_per_m: float
    """USD per million output (completion) tokens."""
    per_call: float = 0.0
    """Fixed USD fee per call, if the provider charges one."""
    read: str = ""
    """The day this price was read from the provider's page."""


@dataclass(frozen=True)
class CallCost:
    """The price of one call, or why there is none."""

    usd: float | None
    """None: unavailable (unknown model, no token counts)."""
    reason: str = ""
    price: Price | None = None


class PriceTable:
    def __init__(self, prices: dict[str, Price], version: str, source: str):
        self.prices = prices
        self.version = version
        self.source = source

    def lookup(self, model: str) -> Price | None:
        """Exact name, else the longest listed prefix; ``provider/`` prefixes ignored."""
        name = (model or "").strip().lower()
        candidates = [name, name.rsplit("/", 1)[-1]]
        for c in candidates:
            if c in self.prices:
                return self.prices[c]
        best = None
        for c in candidates:
            for key, price in self.prices.items():
                if c.startswith(key) and (best is None or len(key) > len(best.model)):
                    best = price
        return best

    def cost(self, model: str, input_tokens: int | None, output_tokens: int | None) -> CallCost:
        price = self.lookup(model)
        if price is None:
            return CallCost(None, f"no price for model {model or '(none)'!r} in prices {self.version}")
        if input_tokens is None or output_tokens is None:
            return CallCost(None, f"no token counts for the {model!r} call", price)
        usd = (input_tokens * price.input_per_m + output_tokens * price.output_per_m) / 1_000_000 + price.per_call
        return CallCost(round(usd, 8), f"{price.provider}/{price.model} @ prices {self.version} (read {price.read})",
                        price)


def parse_prices(data: dict, source: str) -> PriceTable:
    prices: dict[str, Price] = {}
    for provider, table in (data.get("providers") or {}).items():
        for model, p in (table.get("models") or {}).items():
            prices[model.lower()] = Price(provider=provider, model=model.lower(),
                                          input_per_m=float(p["input_per_m"]), output_per_m=float(p["output_per_m"]),
                                          per_call=float(p.get("per_call", 0.0)), read=str(p.get("read", "")))
    return PriceTable(prices, str(data.get("version", "unversioned")), source)


@functools.lru_cache(maxsize=8)
def load_prices(path: str | None = None) -> PriceTable:
    """Read a price file (default: the bundled one)."""
    p = Path(path) if path else DEFAULT_PRICES
    with open(p, "rb") as fh:
        return parse_prices(tomllib.load(fh), str(p))
