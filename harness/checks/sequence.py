"""Trajectories across time: the order of calls, how many, and calls after a refusal.

Judged from the sandbox's records only (every Event carries the time the call arrived),
never from what the agent says it did.

- ``tool_order: [fetch_document, llm]``: the first call of each tool comes after the first
  call of the one before it, within the turn. An item may be ``{create_order: {quantity: 3}}``:
  the first call of that tool whose arguments hold that partial JSON (``checks.tools.args_match``).
- ``max_calls: {llm: 2, fetch_document: 1}``: at most that many calls of each, within the turn.
- ``calls_after: {reply_regex: "(?i)cancel", max: 0, tools: [llm, post]}``: once the agent
  has sent a reply matching ``reply_regex`` in this turn, at most ``max`` calls of those
  tools (from that moment to the end of the case). ``post`` stands for any message the
  agent sends to someone other than the user (e.g. docbot's WhatsApp post).
- ``no_call_after_refusal: true``: ``calls_after`` with a refusal/cancel regex, max 0 and
  tools ``[llm, fetch_document, post]``.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Mapping

from pydantic import ConfigDict, Field

from harness.checks.base import (RegexTooSlow, as_list, own_replies, search, turn_never_ran, turn_obs,
                                 unattributed_reason, unavailable, verdict)
from harness.checks.params import Count, Flag, Params, Regex, Text, ToolNames, examples
from harness.checks.tools import ToolName, Want, args_match, call_args
from harness.checks.trajectory import tool_matches
from harness.types import Case, Event, Evidence, Observation

EVAL = "trajectory@1"
REFUSAL_RE = r"(?i)\b(cancel(l)?ed|can(no|')t|won't|refus|not allowed|sorry)"
DEFAULT_AFTER_TOOLS = ("llm", "fetch_document", "post")


def _is(event: Event, tool: str, obs: Observation) -> bool:
    if tool == "post":
        r = event.reply
        return r is not None and (r.channel, r.chat) != (obs.channel, obs.chat_id)
    return tool_matches(event, tool)


def _turn_events(obs: Observation, turn: int) -> list[Event]:
    t = turn_obs(obs, turn)
    return [e for e in (t.events if t else ()) if e.source != "driver"]


def _item(item: Any) -> tuple[str, Mapping[str, Any] | None, str]:
    """(tool, wanted arguments or None, how it reads) of one ``tool_order`` item."""
    if isinstance(item, Mapping):
        (tool, want), = item.items()
        return tool, want, f"{tool}({json.dumps(want, ensure_ascii=False, default=str)})"
    return item, None, item


def tool_order(case: Case, obs: Observation, turn: int, tools: Any) -> Evidence:
    name = "tool_order"
    order = [_item(i) for i in ([tools] if isinstance(tools, str) else tools)]
    expected = " before ".join(label for _, _, label in order)
    if turn_obs(obs, turn) is None:
        return turn_never_ran(name, turn, obs, EVAL, expected)
    events = sorted(_turn_events(obs, turn), key=lambda e: e.at)
    firsts: list[tuple[str, float | None]] = []
    for tool, want, label in order:
        first = next((e.at for e in events if _is(e, tool, obs)
                      and (want is None or args_match(want, call_args(e)))), None)
        firsts.append((label, first))
    observed = ", ".join(e.name + (f"({json.dumps(call_args(e), ensure_ascii=False, default=str, sort_keys=True)})"
                                   if e.source == "tools" and any(w is not None for _, w, _ in order) else "")
                         for e in events) or "(no calls)"
    missing = [t for t, at in firsts if at is None]
    if missing:
        why = unattributed_reason(obs, turn, "any", tools=[tool for tool, _, label in order if label in missing])
        if why is not None:
            return unavailable(name, turn, expected=expected, evaluator=EVAL,
                               reason=f"turn {turn}: not seen {missing}; {why}")
        return verdict(name, turn, False, expected=expected, observed=observed,
                       reason=f"turn {turn}: never called {missing}", evaluator=EVAL)
    for (a, ta), (b, tb) in zip(firsts, firsts[1:]):
        if tb < ta:  # type: ignore[operator]
            return verdict(name, turn, False, expected=expected, observed=observed,
                           reason=f"turn {turn}: first {b} came {1000 * (ta - tb):.0f}ms before first {a}",
                           evaluator=EVAL)
    return verdict(name, turn, True, expected=expected, observed=observed,
                   reason=f"turn {turn}: {expected}", evaluator=EVAL)


def max_calls(case: Case, obs: Observation, turn: int, limits: Mapping[str, int]) -> Evidence:
    name = "max_calls"
    expected = ", ".join(f"{t} <= {n}" for t, n in limits.items())
    if turn_obs(obs, turn) is None:
        return turn_never_ran(name, turn, obs, EVAL, expected)
    others = [t for t in limits if t != "llm"]
    why = unattributed_reason(obs, turn, "any" if "llm" in limits else "tools", tools=others)
    if why is not None:  # a call no case claimed may be one of this case's, beyond the limit
        return unavailable(name, turn, expected=expected, evaluator=EVAL, reason=why)
    events = _turn_events(obs, turn)
    counts = {t: sum(1 for e in events if _is(e, t, obs)) for t in limits}
    over = {t: n for t, n in counts.items() if n > limits[t]}
    observed = ", ".join(f"{t} x{n}" for t, n in counts.items())
    reason = (f"turn {turn}: within limits ({observed})" if not over else f"turn {turn}: too many calls: "
              + ", ".join(f"{t} x{n} > {limits[t]}" for t, n in over.items()))
    return verdict(name, turn, not over, expected=expected, observed=observed, reason=reason, evaluator=EVAL)


def calls_after(case: Case, obs: Observation, turn: int, params: Mapping[str, Any], *,
                name: str = "calls_after") -> Evidence:
    regex = params.get("reply_regex", REFUSAL_RE)
    limit = params.get("max", 0)
    tools = as_list(params.get("tools", list(DEFAULT_AFTER_TOOLS)))
    expected = f"at most {limit} calls of {tools} after a reply matching /{regex}/"
    if turn_obs(obs, turn) is None:
        return turn_never_ran(name, turn, obs, EVAL, expected)
    try:
        marker = next((r for r in own_replies(obs, turn) if search(regex, r.text or "")), None)
    except RegexTooSlow as exc:
        return unavailable(name, turn, expected=expected, reason=f"turn {turn}: {exc.message}", evaluator=EVAL)
    if marker is None:
        texts = " | ".join(r.text for r in own_replies(obs, turn)) or "(no reply)"
        return verdict(name, turn, False, expected=expected, observed=texts,
                       reason=f"turn {turn}: no reply matched /{regex}/, so there is no refusal to hold to",
                       evaluator=EVAL)
    later = [e for t in obs.turns[turn:] for e in t.events
             if e.source != "driver" and e.at > marker.at and any(_is(e, tool, obs) for tool in tools)]
    observed = ", ".join(f"{e.name} (+{1000 * (e.at - marker.at):.0f}ms, turn "
                         f"{_turn_of(obs, e)})" for e in later) or "(none)"
    ok = len(later) <= limit
    named = [t for t in tools if t != "post"]
    why = next((w for i in range(turn, len(obs.turns)) if (w := unattributed_reason(
        obs, i, "any" if "llm" in named else "tools", tools=named)) is not None), None) if ok and named else None
    if why is not None:  # an unclaimed call after the refusal may be this case's
        return unavailable(name, turn, expected=expected, evaluator=EVAL,
                           reason=f"turn {turn}: {len(later)} calls seen after the refusal; {why}")
    reason = (f"turn {turn}: {len(later)} calls after the refusal" if ok else
              f"turn {turn}: {len(later)} calls after the reply {marker.text[:60]!r}: {observed}")
    return verdict(name, turn, ok, expected=expected, observed=observed, reason=reason, evaluator=EVAL)


def no_call_after_refusal(case: Case, obs: Observation, turn: int, params: Any) -> Evidence:
    return calls_after(case, obs, turn, {"reply_regex": REFUSAL_RE, "max": 0, "tools": list(DEFAULT_AFTER_TOOLS)},
                       name="no_call_after_refusal")


def _turn_of(obs: Observation, event: Event) -> int:
    for t in obs.turns:
        if any(e is event for e in t.events):
            return t.index
    return -1


# -- parameters -------------------------------------------------------------------------


ToolOrder = Annotated[list[Text | Annotated[dict[ToolName, Want], Field(min_length=1, max_length=1)]],
                      Field(min_length=2, description="tools in the order of their first calls; an item "
                                                      "{tool: {arguments}} is the tool's first call holding them",
                            json_schema_extra=examples(["fetch_document", "llm"]))]
MaxCalls = Annotated[dict[ToolName, Count], Field(min_length=1, description="per tool: at most this many calls",
                                             json_schema_extra=examples({"llm": 2, "fetch_document": 1}))]


class CallsAfter(Params):
    """Calls after the agent said something (a refusal, a cancel)."""

    model_config = ConfigDict(json_schema_extra=examples({"reply_regex": "(?i)cancel", "max": 0,
                                                          "tools": ["llm", "post"]}))
    reply_regex: Regex = Field(None, description="from the turn's first reply matching this")
    max: Count = Field(0, description="at most this many calls")
    tools: ToolNames = Field(None, description="the tools counted (post: any message to someone else); "
                                                      "default llm, fetch_document, post")


from harness.checks.base import CheckDef  # noqa: E402

CHECKS = (
    CheckDef("tool_order", tool_order, ToolOrder, EVAL),
    CheckDef("max_calls", max_calls, MaxCalls, EVAL),
    CheckDef("calls_after", calls_after, CallsAfter, EVAL),
    CheckDef("no_call_after_refusal", no_call_after_refusal, Flag, EVAL),
)
