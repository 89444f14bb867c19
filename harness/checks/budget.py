"""``latency_ms``: how long the user waited, from the emulators' own timestamps."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field

from harness.checks.base import own_replies, turn_never_ran, turn_obs, verdict
from harness.checks.params import AtLeastOne, Millis, examples
from harness.types import Case, Evidence, Observation

EVAL = "latency@1"


def latency_ms(case: Case, obs: Observation, turn: int, params: dict) -> Evidence:
    name = "latency_ms"
    t = turn_obs(obs, turn)
    if t is None:
        return turn_never_ran(name, turn, obs, EVAL, str(params))
    if not own_replies(obs, turn):
        return verdict(name, turn, False, expected=_want(params), observed="no reply",
                       reason="no reply arrived, so no latency to hold to the threshold", evaluator=EVAL)
    over = []
    seen = []
    if "llm_call_max" in params:  # the slowest LLM call of the turn, as the gateway timed it
        llm = [e.duration_ms for e in t.events if e.name == "llm"]
        if llm:
            seen.append(f"slowest LLM call {max(llm):.0f}ms")
            if max(llm) > params["llm_call_max"]:
                over.append(f"slowest LLM call {max(llm):.0f}ms > threshold {params['llm_call_max']}ms")
    for key, value in (("first_reply_max", t.first_reply_ms), ("total_max", t.last_reply_ms)):
        if key in params and value is not None:
            label = "first reply" if key == "first_reply_max" else "last reply"
            seen.append(f"{label} {value:.0f}ms")
            if value > params[key]:
                over.append(f"{label} {value:.0f}ms > threshold {params[key]}ms")
    return verdict(name, turn, not over, expected=_want(params), observed=", ".join(seen),
                   reason="; ".join(over) if over else "within thresholds (" + ", ".join(seen) + ")",
                   evaluator=EVAL)


def _want(params: dict) -> str:
    return ", ".join(f"{k} {v}ms" for k, v in params.items())


class Latency(AtLeastOne):
    """How long the user waited in the turn, in milliseconds."""

    model_config = ConfigDict(json_schema_extra=examples({"first_reply_max": 3000, "total_max": 10000}))
    first_reply_max: Millis = Field(None, description="the first reply at most this late (no reply fails)")
    total_max: Millis = Field(None, description="the last reply at most this late")
    llm_call_max: Millis = Field(None, description="the turn's slowest LLM call (as the gateway timed it)")
