"""What the agent did at the boundaries in a turn: tools called or not, call counts, delivery.

Judged from the sandbox's records only, never from what the agent says it did.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import ConfigDict, Field

from harness.checks.base import (as_list, llm_sourced, turn_never_ran, turn_obs, unattributed_reason, unavailable,
                                 verdict)
from harness.checks.params import AtLeastOne, Count, Params, ToolNames, examples
from harness.types import Case, Event, Evidence, Observation

EVAL = "trajectory@1"


def tool_matches(event: Event, tool: str) -> bool:
    """``telegram.sendmessage`` matches case-insensitively, like the Bot API's method names."""
    return event.name.lower() == tool.lower()


def _calls(obs: Observation, turn: int, tool: str) -> list[Event]:
    t = turn_obs(obs, turn)
    return [e for e in (t.events if t else ()) if tool_matches(e, tool)]


def _names(obs: Observation, turn: int) -> str:
    t = turn_obs(obs, turn)
    names = [e.name for e in (t.events if t else ())]
    return ", ".join(names) if names else "(no calls)"


def tools_called(case: Case, obs: Observation, turn: int, tools: Any) -> Evidence:
    name = "tools_called"
    if turn_obs(obs, turn) is None:
        return turn_never_ran(name, turn, obs, EVAL, str(tools))
    missing = [t for t in as_list(tools) if not _calls(obs, turn, t)]
    if missing and (why := unattributed_reason(obs, turn, "any" if "llm" in missing else "tools",
                                               tools=missing)) is not None:
        return unavailable(name, turn, expected=f"called {as_list(tools)}", evaluator=EVAL,
                           reason=f"not seen: {missing}; {why}")
    return verdict(name, turn, not missing, expected=f"called {as_list(tools)}", observed=_names(obs, turn),
                   reason="all called" if not missing else f"not called: {missing}", evaluator=EVAL)


def tools_not_called(case: Case, obs: Observation, turn: int, tools: Any) -> Evidence:
    name = "tools_not_called"
    if turn_obs(obs, turn) is None:
        return turn_never_ran(name, turn, obs, EVAL, str(tools))
    called = {t: len(_calls(obs, turn, t)) for t in as_list(tools)}
    bad = {t: n for t, n in called.items() if n}
    if not bad and (why := unattributed_reason(obs, turn, "any" if "llm" in called else "tools",
                                               tools=list(called))) is not None:
        return unavailable(name, turn, expected=f"no call to {as_list(tools)}", evaluator=EVAL,
                           reason=f"none seen; {why}")
    reason = "none called" if not bad else "called: " + ", ".join(f"{t} x{n}" for t, n in bad.items())
    return verdict(name, turn, not bad, expected=f"no call to {as_list(tools)}", observed=_names(obs, turn),
                   reason=reason, evaluator=EVAL)


def llm_calls(case: Case, obs: Observation, turn: int, params: dict) -> Evidence:
    name = "llm_calls"
    if turn_obs(obs, turn) is None:
        return turn_never_ran(name, turn, obs, EVAL, str(params))
    if (why := unattributed_reason(obs, turn)) is not None:
        return unavailable(name, turn, expected=f"{params} LLM calls", evaluator=EVAL, reason=why)
    calls = _calls(obs, turn, "llm")
    n = len(calls)
    lo, hi = params.get("min", 0), params.get("max")
    ok = n >= lo and (hi is None or n <= hi)
    want = f"between {lo} and {hi}" if hi is not None else f"at least {lo}"
    return llm_sourced(verdict(name, turn, ok, expected=f"{want} LLM calls", observed=str(n),
                               reason=f"{n} LLM calls, wanted {want}", evaluator=EVAL), calls)


def delivery(case: Case, obs: Observation, turn: int, params: dict) -> Evidence:
    name = "delivery"
    t = turn_obs(obs, turn)
    if t is None:
        return turn_never_ran(name, turn, obs, EVAL, str(params))
    want = params["status"]
    got = t.delivery_status
    observed = str(got) if got is not None else f"not delivered: {t.delivery_error}"
    return verdict(name, turn, got == want, expected=f"webhook answers {want}", observed=observed,
                   reason=f"webhook answered {observed}, wanted {want}", evaluator=EVAL)


Tools = Annotated[ToolNames, Field(json_schema_extra=examples(["fetch_document", "llm"]))]


class LlmCalls(AtLeastOne):
    """How many LLM calls the turn made."""

    model_config = ConfigDict(json_schema_extra=examples({"max": 2}))
    min: Count = Field(None, description="at least this many")
    max: Count = Field(None, description="at most this many")


class Delivery(Params):
    """The HTTP status the webhook answered the update with."""

    model_config = ConfigDict(json_schema_extra=examples({"status": 200}))
    status: int = Field(..., ge=100, le=599, description="the HTTP status, e.g. 200")
