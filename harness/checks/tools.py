"""What the agent asked of its tools, and how it paced its retries: ``tool_args``, ``retry_wait``.

Judged from the tool double's and the gateway's records (every ``tools`` event holds the
call's JSON arguments, its status and any Retry-After; harness/sandbox/spy.py), never from
what the agent says it did. Evidence judged on calls the tool double (or an injected fault)
answered carries ``source: test-double``.

- ``tool_args: {create_order: {quantity: 3}}``: a call of the tool in the turn whose arguments
  hold that partial JSON (nested tables partially, lists element by element, numbers by
  value); keys starting with ``$`` are JSON paths (``"$.items[0].sku": W-1``). A list of
  tables means the tool's first calls, in that order.
- ``retry_wait: {of: llm | tools | <tool>, min_s: 1}``: every failed call (429, 5xx, an injected
  hang) that the agent retried waited at least its Retry-After or ``min_s`` (default 0 when
  the answer gave a Retry-After, else 1) from the failed answer to the retry's start.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Annotated, Any, Mapping

from pydantic import AfterValidator, ConfigDict, Field

from harness.checks.base import (CheckDef, clip, turn_never_ran, turn_obs, unattributed_reason, unavailable,
                                 verdict)
from harness.checks.params import FIX, Params, Seconds, Text, examples
from harness.checks.trajectory import tool_matches
from harness.types import SOURCE_DOUBLE, SOURCE_REAL, Case, Event, Evidence, Observation

EVAL = "tools@1"
#: Clock and scheduling slack of a measured wait (both ends are the sandbox's own timestamps).
WAIT_SLACK_S = 0.02
PATH_RE = re.compile(r"^\$((?:\.[A-Za-z0-9_-]+|\[\d+\])*)$")
PATH_PART_RE = re.compile(r"\.([A-Za-z0-9_-]+)|\[(\d+)\]")
_MISSING = object()


# --------------------------------------------------------------------------- matching


def _path(args: Any, path: str) -> Any:
    value = args
    for key, index in PATH_PART_RE.findall(path):
        if key and isinstance(value, Mapping) and key in value:
            value = value[key]
        elif index and isinstance(value, list) and int(index) < len(value):
            value = value[int(index)]
        else:
            return _MISSING
    return value


def _same(want: Any, got: Any) -> bool:
    """``got`` holds ``want``: tables partially, lists element by element (same length), numbers by value."""
    if isinstance(want, Mapping):
        return isinstance(got, Mapping) and all(k in got and _same(v, got[k]) for k, v in want.items())
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(_same(w, g) for w, g in zip(want, got))
    if isinstance(want, bool) or isinstance(got, bool):
        return want is got
    if isinstance(want, (int, float)) and isinstance(got, (int, float)):
        return float(want) == float(got)
    return want == got


def args_match(want: Mapping[str, Any], args: Any) -> bool:
    """The call's arguments hold ``want`` (``$`` keys are JSON paths, the others partial JSON)."""
    for key, value in want.items():
        got = _path(args, PATH_RE.match(key).group(1)) if key.startswith("$") else (
            args.get(key, _MISSING) if isinstance(args, Mapping) else _MISSING)
        if got is _MISSING or not _same(value, got):
            return False
    return True


def call_args(event: Event) -> Any:
    return event.meta.get("args", event.request)


def _shown(event: Event) -> str:
    return clip(json.dumps(call_args(event), ensure_ascii=False, default=str, sort_keys=True), 160)


def _source(events: list[Event]) -> str:
    return SOURCE_DOUBLE if any(e.meta.get("double") or e.error.startswith("injected") for e in events) \
        else SOURCE_REAL


def tool_calls(obs: Observation, turn: int, tool: str) -> list[Event]:
    """The turn's calls of ``tool`` on the tool double, in arrival order."""
    t = turn_obs(obs, turn)
    return sorted((e for e in (t.events if t else ()) if e.source == "tools" and tool_matches(e, tool)),
                  key=lambda e: e.at)


# --------------------------------------------------------------------------- checks


def tool_args(case: Case, obs: Observation, turn: int, params: Mapping[str, Any]) -> Evidence:
    name = "tool_args"
    expected = "; ".join(f"{tool} called with {json.dumps(want, ensure_ascii=False, default=str)}"
                         for tool, want in params.items())
    if turn_obs(obs, turn) is None:
        return turn_never_ran(name, turn, obs, EVAL, expected)
    problems: list[str] = []
    seen: list[str] = []
    judged: list[Event] = []
    for tool, want in params.items():
        calls = tool_calls(obs, turn, tool)
        judged += calls
        seen += [f"{e.name}({_shown(e)})" for e in calls]
        if isinstance(want, list):  # the first calls, in order
            bad = [f"call {i + 1} of {tool}: " + (_shown(calls[i]) if i < len(calls) else "not made")
                   for i, w in enumerate(want) if i >= len(calls) or not args_match(w, call_args(calls[i]))]
            if bad:
                problems.append(f"{tool}: wanted its first {len(want)} call(s) with "
                                f"{json.dumps(want, ensure_ascii=False, default=str)}; " + "; ".join(bad))
        elif not calls:
            problems.append(f"{tool} was not called")
        elif not any(args_match(want, call_args(e)) for e in calls):
            problems.append(f"{tool} was called {len(calls)} time(s), never with "
                            f"{json.dumps(want, ensure_ascii=False, default=str)}: arguments were "
                            + " | ".join(_shown(e) for e in calls[:3]))
    observed = ", ".join(seen) or "(no tool calls)"
    if problems:  # the right call may be among calls of these tools that no case could claim
        why = unattributed_reason(obs, turn, "tools", tools=list(params))
        if why is not None:
            return unavailable(name, turn, expected=expected, evaluator=EVAL, reason=f"{'; '.join(problems)}; {why}")
    ev = verdict(name, turn, not problems, expected=expected, observed=observed,
                 reason="; ".join(problems) if problems else f"called as expected: {observed}", evaluator=EVAL)
    return _labelled(ev, judged)


def _failed(e: Event) -> bool:
    return e.status == 429 or e.status >= 500 or "hang" in e.error or "timeout" in e.error


def _target(of: str):
    if of == "llm":
        return lambda e: e.name == "llm", lambda e: "llm"
    if of == "tools":
        return lambda e: e.source == "tools", lambda e: e.name.lower()
    return (lambda e: e.source == "tools" and tool_matches(e, of)), (lambda e: e.name.lower())


def retry_wait(case: Case, obs: Observation, turn: int, params: Mapping[str, Any]) -> Evidence:
    name = "retry_wait"
    of = params["of"]
    t = turn_obs(obs, turn)
    expected = (f"each retry of a failed {of} call waits its Retry-After"
                + (f" (at least {params['min_s']:g}s)" if "min_s" in params else " (or 1s without one)"))
    if t is None:
        return turn_never_ran(name, turn, obs, EVAL, expected)
    why = unattributed_reason(obs, turn, "llm" if of == "llm" else "tools", tools=None if of in ("llm", "tools")
                              else [of])
    if why is not None:
        return unavailable(name, turn, expected=expected, evaluator=EVAL, reason=why)
    is_target, group = _target(of)
    calls = sorted((e for e in t.events if e.source != "driver" and is_target(e)), key=lambda e: e.at)
    failed = [e for e in calls if _failed(e)]
    if not failed:
        return unavailable(name, turn, expected=expected, evaluator=EVAL,
                           reason=f"no failed {of} call in this turn ({len(calls)} call(s), none answered 429/5xx "
                                  "or hung), so there is no retry to time")
    waits: list[tuple[Event, Event, float, float]] = []
    for f in failed:
        end = f.at + f.duration_ms / 1000
        retry = next((e for e in calls if e.at > f.at and e is not f and group(e) == group(f)), None)
        if retry is None:
            continue
        ra = f.meta.get("retry_after")
        floor = params.get("min_s", 0.0 if ra is not None else 1.0)
        need = max(float(ra or 0.0), float(floor))
        waits.append((f, retry, retry.at - end, need))
    if not waits:
        return unavailable(name, turn, expected=expected, evaluator=EVAL,
                           reason=f"{len(failed)} failed {of} call(s) ({_statuses(failed)}), none retried in this "
                                  "turn, so there is no wait to time")
    short = [(f, r, gap, need) for f, r, gap, need in waits if gap + WAIT_SLACK_S < need]
    observed = "; ".join(f"{f.name} {f.status}{_ra(f)} -> retry after {gap:.2f}s" for f, _, gap, _ in waits)
    if short:
        f, _, gap, need = short[0]
        reason = (f"the retry after {f.name} {f.status}{_ra(f)} came {gap:.2f}s after the failed answer, "
                  f"wanted at least {need:g}s" + (f" (+{len(short) - 1} more too early)" if len(short) > 1 else ""))
    else:
        reason = f"{len(waits)} retr{'y' if len(waits) == 1 else 'ies'} waited long enough: {observed}"
    return _labelled(verdict(name, turn, not short, expected=expected, observed=observed, reason=reason,
                             evaluator=EVAL), [f for f, *_ in waits])


def _ra(e: Event) -> str:
    ra = e.meta.get("retry_after")
    return f" (Retry-After {ra:g}s)" if isinstance(ra, (int, float)) else ""


def _statuses(events: list[Event]) -> str:
    return ", ".join(f"{e.name} {e.status}" for e in events[:5])


def _labelled(ev: Evidence, judged: list[Event]) -> Evidence:
    return replace(ev, source=_source(judged)) if judged and _source(judged) != ev.source else ev


# --------------------------------------------------------------------------- validators


def _paths(want: dict[str, Any]) -> dict[str, Any]:
    for key in want:
        if key.startswith("$") and not PATH_RE.match(key):
            raise ValueError(f"{key!r} is not a JSON path{FIX}write $.a.b or $.items[0].sku")
    return want


#: The partial JSON one call's arguments must hold.
Want = Annotated[dict[Annotated[str, Field(description="an argument name or a $ path")], Any],
                 Field(min_length=1, description="a partial JSON of the call's arguments ($ keys: JSON paths)"),
                 AfterValidator(_paths)]

ToolName = Annotated[str, Field(description="a tool name")]
ToolArgs = Annotated[dict[ToolName, Want | Annotated[list[Want], Field(min_length=1)]],
                     Field(min_length=1, description="per tool: the arguments of a call (a list: its first calls, "
                                                     "in order)",
                           json_schema_extra=examples({"create_order": {"quantity": 3}}))]


class RetryWait(Params):
    """How long the agent waited before retrying a failed call."""

    model_config = ConfigDict(json_schema_extra=examples({"of": "llm"}, {"of": "create_order", "min_s": 1}))
    of: Text = Field(..., description="llm, tools (any tool) or one tool's name")
    min_s: Seconds = Field(None, description="the least wait (default: the Retry-After, else 1 s)")


CHECKS = (
    CheckDef("tool_args", tool_args, ToolArgs, EVAL),
    CheckDef("retry_wait", retry_wait, RetryWait, EVAL),
)
