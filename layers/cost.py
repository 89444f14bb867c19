"""Performance and cost: latency per step, tokens (tiktoken), LLM calls, error rates and
money per case and per run against the price table, with budgets.

Every turn of every cost case also checks that its LLM calls were metered (``metered``:
tokens and a price for each, unavailable for a model the price table does not know) and
that a reply arrived (``answered``, unless the case counts replies), so the case's latency,
tokens and cost are measured figures, never missing ones.

Summary metrics: p50 / p95 latency, tokens and money of the layer's cases.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from harness.layer import Layer
from harness.layers._common import flag, has_check, metric, table
from harness.types import Case, CaseResult, CheckSpec

LAYER_NAME = "cost"


def default_checks(case: Case, turn: int, context: Mapping[str, Any]) -> list[CheckSpec]:
    out = [flag("metered")]
    if not has_check(case.turns[turn], "replies", "answered"):
        out.append(flag("answered"))
    return out


def metrics(results: Sequence[CaseResult], context: Mapping[str, Any]) -> dict[str, Any]:
    perf = ((context.get("perf") or {}).get("layers") or {}).get(LAYER_NAME) or {}
    last = (perf.get("latency") or {}).get("last_reply_ms") or {}
    priced = [r.cost_usd for r in results if r.cost_usd is not None]
    return {"figures": {"latency_p50_ms": last.get("p50"), "latency_p95_ms": last.get("p95"),
                        "tokens": perf.get("tokens"), "llm_calls": perf.get("llm_calls"),
                        "cost_usd": round(sum(priced), 6) if priced else None,
                        "cost_unavailable": len(results) - len(priced)}}


def report_html(m: Mapping[str, Any]) -> str:
    f = m.get("figures") or {}
    tokens = f.get("tokens")
    if isinstance(tokens, Mapping):
        tokens = (tokens.get("input") or 0) + (tokens.get("output") or 0)
    return table("Cost: the layer's figures", ("p50 latency", "p95 latency", "tokens", "LLM calls", "cost"),
                 [[metric(f.get("latency_p50_ms"), "ms"), metric(f.get("latency_p95_ms"), "ms"), metric(tokens),
                   metric(f.get("llm_calls")), metric(f.get("cost_usd"), " USD")]], anchor="layer-cost")


LAYER = Layer(
    name=LAYER_NAME, title="Performance and cost", order=40,
    description="doubled prompts, extra LLM calls, slow paths, missing truncation, budgets",
    default_checks=default_checks, metrics=metrics, report_html=report_html,
)
