"""Cost-layer checks on one turn: ``tokens``, ``cost_usd``, ``error_rate``.

Figures come from the sandbox: the gateway wrote each LLM call's tokens and price into the
``llm`` event (``harness.sandbox.metering``). Evidence always states the measured figure
and the threshold. A price the table does not know makes ``cost_usd`` unavailable, never
a pass. Evidence judged on calls the model double answered is labelled ``source: test-double``.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field

from harness.checks.base import llm_sourced, turn_never_ran, turn_obs, unattributed_reason, unavailable, verdict
from harness.checks.params import AtLeastOne, Count, Params, examples
from harness.types import Case, Event, Evidence, Observation

EVAL = "cost@1"


def _llm(obs: Observation, turn: int) -> list[Event]:
    t = turn_obs(obs, turn)
    return [e for e in (t.events if t else ()) if e.name == "llm"]


def tokens(case: Case, obs: Observation, turn: int, params: dict) -> Evidence:
    return llm_sourced(_tokens(case, obs, turn, params), _llm(obs, turn))


def _tokens(case: Case, obs: Observation, turn: int, params: dict) -> Evidence:
    name = "tokens"
    if turn_obs(obs, turn) is None:
        return turn_never_ran(name, turn, obs, EVAL, str(params))
    llm = _llm(obs, turn)
    if (why := unattributed_reason(obs, turn)) is not None:
        return unavailable(name, turn, expected=_want(params), evaluator=EVAL, reason=why)
    if any(e.meta.get("input_tokens") is None for e in llm):
        return unavailable(name, turn, expected=_want(params), evaluator=EVAL,
                           reason="an LLM call of this turn has no token count (no usage and no tokenizer)")
    tin = sum(int(e.meta.get("input_tokens") or 0) for e in llm)
    tout = sum(int(e.meta.get("output_tokens") or 0) for e in llm)
    seen = {"input_max": tin, "output_max": tout, "total_max": tin + tout}
    est = " (estimated)" if any(e.meta.get("estimated") for e in llm) else ""
    over = [f"{k.removesuffix('_max')} tokens {seen[k]} > threshold {v}" for k, v in params.items() if seen[k] > v]
    observed = f"input {tin}, output {tout}, total {tin + tout} tokens over {len(llm)} LLM calls{est}"
    return verdict(name, turn, not over, expected=_want(params), observed=observed,
                   reason="; ".join(over) + est if over else f"within thresholds ({observed})", evaluator=EVAL)


def cost_usd(case: Case, obs: Observation, turn: int, params: dict) -> Evidence:
    return llm_sourced(_cost_usd(case, obs, turn, params), _llm(obs, turn))


def _cost_usd(case: Case, obs: Observation, turn: int, params: dict) -> Evidence:
    name = "cost_usd"
    if turn_obs(obs, turn) is None:
        return turn_never_ran(name, turn, obs, EVAL, str(params))
    llm = _llm(obs, turn)
    want = f"at most ${params['max']:.4f}"
    if (why := unattributed_reason(obs, turn)) is not None:
        return unavailable(name, turn, expected=want, evaluator=EVAL, reason=f"cost unavailable: {why}")
    unpriced = [e for e in llm if e.meta.get("cost_usd") is None]
    if unpriced:
        why = unpriced[0].meta.get("cost_reason") or "the call was not priced"
        return unavailable(name, turn, expected=want, evaluator=EVAL,
                           reason=f"cost unavailable: {why}")
    spent = sum(float(e.meta["cost_usd"]) for e in llm)
    sim = " (simulated: priced at the named models' list prices, not billed)" \
        if any(e.meta.get("simulated") for e in llm) else ""
    observed = f"${spent:.6f} over {len(llm)} LLM calls{sim}"
    ok = spent <= params["max"]
    reason = (f"cost ${spent:.6f} > threshold ${params['max']:.4f}" if not ok
              else f"cost ${spent:.6f} <= threshold ${params['max']:.4f}") + sim
    return verdict(name, turn, ok, expected=want, observed=observed, reason=reason, evaluator=EVAL)


def error_rate(case: Case, obs: Observation, turn: int, params: dict) -> Evidence:
    name = "error_rate"
    t = turn_obs(obs, turn)
    if t is None:
        return turn_never_ran(name, turn, obs, EVAL, str(params))
    if (why := unattributed_reason(obs, turn, "any")) is not None:
        return unavailable(name, turn, expected=f"error rate at most {params['max']:g}", evaluator=EVAL, reason=why)
    calls = [e for e in t.events if e.source != "driver"]
    bad = [e for e in calls if not 200 <= e.status < 300]
    rate = len(bad) / len(calls) if calls else 0.0
    detail = ", ".join(f"{e.name} {e.status}" for e in bad[:5])
    observed = f"{len(bad)} of {len(calls)} calls non-2xx ({rate:.0%})" + (f": {detail}" if detail else "")
    ok = rate <= params["max"]
    reason = (f"error rate {rate:.2f} > threshold {params['max']:g}" if not ok
              else f"error rate {rate:.2f} <= threshold {params['max']:g}") + f" ({observed})"
    return verdict(name, turn, ok, expected=f"error rate at most {params['max']:g}", observed=observed,
                   reason=reason, evaluator=EVAL)


def _want(params: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in params.items())


class Tokens(AtLeastOne):
    """The turn's LLM tokens (provider usage, else tiktoken's estimate)."""

    model_config = ConfigDict(json_schema_extra=examples({"input_max": 18000, "output_max": 600}))
    input_max: Count = Field(None, description="input tokens at most")
    output_max: Count = Field(None, description="output tokens at most")
    total_max: Count = Field(None, description="input + output tokens at most")


class CostUsd(Params):
    """What the turn's LLM calls cost (harness/data/prices.toml)."""

    model_config = ConfigDict(json_schema_extra=examples({"max": 0.03}))
    max: float = Field(..., ge=0, description="US dollars at most")


class ErrorRate(Params):
    """The share of the turn's boundary calls (fetch, LLM, Bot/Graph API, tools) answered non-2xx."""

    model_config = ConfigDict(json_schema_extra=examples({"max": 0}))
    max: float = Field(..., ge=0, le=1, description="a rate from 0 to 1")
