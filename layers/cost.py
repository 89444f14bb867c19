"""Performance and cost: latency per step, tokens (tiktoken), LLM calls, error rates and
money per case and per run against the price table, with budgets.

Every turn of every cost case also checks that its LLM calls were metered (``metered``:
tokens and a price for each, unavailable for a model the price table does not know) and
that a reply arrived (``answered``, unless the case counts replies), so the case's latency,
tokens and cost are measured figures, never missing ones.

Summary metrics: p50 / p95 latency, tokens, LLM calls and money of the layer's cases, as the
run's meter records them for every layer (results.json ``layers.cost``); its report section
draws them.
"""

from __future__ import annotations

from typing import Any, Mapping

from harness.layer import Layer
from harness.layers._common import flag, has_check, metric, table
from harness.types import Case, CheckSpec

def default_checks(case: Case, turn: int, context: Mapping[str, Any]) -> list[CheckSpec]:
    out = [flag("metered")]
    if not has_check(case.turns[turn], "replies", "answered"):
        out.append(flag("answered"))
    return out


def report_section(m: Mapping[str, Any]) -> dict[str, Any] | None:
    """The layer's headline figures, read from the fields the run's meter gives every layer
    (``latency``, ``tokens``, ``llm_calls``, ``cost_usd``): the cost layer adds no metric of its own."""
    last = (m.get("latency") or {}).get("last_reply_ms") or {}
    tokens = m.get("tokens")
    if isinstance(tokens, Mapping):
        tokens = (tokens.get("input") or 0) + (tokens.get("output") or 0)
    return {"tables": [table("Cost: the layer's figures", ("p50 latency", "p95 latency", "tokens", "LLM calls", "cost"),
                 [[metric(last.get("p50"), "ms"), metric(last.get("p95"), "ms"), metric(tokens),
                   metric(m.get("llm_calls")), metric(m.get("cost_usd"), " USD")]], anchor="layer-cost")]}


LAYER = Layer(
    name="cost", title="Performance and cost", order=40,
    description="doubled prompts, extra LLM calls, slow paths, missing truncation, budgets",
    default_checks=default_checks, report_section=report_section, default_names=("metered", "answered"),
)
