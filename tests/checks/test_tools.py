"""tool_args, tool_order with arguments, retry_wait, and the unattributed-call rule of the call
and cost checks: each with inputs that must fail and their right twins."""

from __future__ import annotations

import pytest

from harness.checks import REGISTRY
from harness.types import SOURCE_DOUBLE, Case, Event, Observation, Turn, TurnObservation

T0 = 1_000_000.0
CASE = Case(id="c", layer="robustness", channel="telegram", turns=(Turn(send="hi"),))


def tool(name: str, args: dict, at: float = 1.0, status: int = 200, *, retry_after=None, duration_ms=10.0,
         error: str = "", double: bool = True) -> Event:
    meta = {"args": args, "double": double, "method": "POST"}
    if retry_after is not None:
        meta["retry_after"] = retry_after
    return Event(source="tools", name=name, at=T0 + at, status=status, duration_ms=duration_ms, request=args,
                 response={"ok": True}, error=error, meta=meta)


def llm(at: float, status: int = 200, *, retry_after=None, duration_ms=10.0, error: str = "",
        cost: float | None = 0.001) -> Event:
    meta = {"model": "gpt-4o-mini", "input_tokens": 10, "output_tokens": 5, "cost_usd": cost,
            "retry_after": retry_after}
    return Event(source="gateway", name="llm", at=T0 + at, status=status, duration_ms=duration_ms, error=error,
                 meta=meta)


def obs(*events: Event, unattributed: dict | None = None) -> Observation:
    t = TurnObservation(index=0, sent_at=T0, delivery_status=200, delivery_error="", replies=(),
                        events=tuple(events), settled_after_s=1.0, unattributed_calls=unattributed or {})
    return Observation(case_id="c", channel="telegram", chat_id="1", turns=(t,), started_at=T0, finished_at=T0 + 9)


def run(name, params, o):
    d = REGISTRY[name]
    assert d.validate(params) is None, d.validate(params)
    return d.fn(CASE, o, 0, params)


ORDER = tool("create_order", {"item": "widget", "quantity": 3, "address": {"city": "Oslo", "zip": "0150"},
                              "lines": [{"sku": "W-1", "n": 3}]})
CONFIRM = tool("confirm", {"order": "A-17"}, at=2.0)

TABLE = [
    # check, params, observation, passes
    ("tool_args", {"create_order": {"quantity": 3}}, obs(ORDER), True),
    ("tool_args", {"create_order": {"quantity": 4}}, obs(ORDER), False),
    ("tool_args", {"create_order": {"quantity": 3.0}}, obs(ORDER), True),  # numbers by value
    ("tool_args", {"create_order": {"quantity": "3"}}, obs(ORDER), False),  # a string is not a number
    ("tool_args", {"create_order": {"address": {"city": "Oslo"}}}, obs(ORDER), True),  # nested, partial
    ("tool_args", {"create_order": {"address": {"city": "Bergen"}}}, obs(ORDER), False),
    ("tool_args", {"create_order": {"$.lines[0].sku": "W-1"}}, obs(ORDER), True),
    ("tool_args", {"create_order": {"$.lines[0].sku": "W-2"}}, obs(ORDER), False),
    ("tool_args", {"create_order": {"$.lines[1].sku": "W-1"}}, obs(ORDER), False),  # no such element
    ("tool_args", {"create_order": {"missing": None}}, obs(ORDER), False),  # an absent key is not null
    ("tool_args", {"create_order": {"quantity": 3}}, obs(CONFIRM), False),  # not called
    ("tool_args", {"create_order": {"quantity": 3}, "confirm": {"order": "A-17"}}, obs(ORDER, CONFIRM), True),
    ("tool_args", {"create_order": {"quantity": 3}, "confirm": {"order": "A-18"}}, obs(ORDER, CONFIRM), False),
    # any call of the tool may match; a list means the first calls in order
    ("tool_args", {"create_order": {"quantity": 3}},
     obs(tool("create_order", {"quantity": 1}), tool("create_order", {"quantity": 3}, at=2)), True),
    ("tool_args", {"create_order": [{"quantity": 1}, {"quantity": 3}]},
     obs(tool("create_order", {"quantity": 1}), tool("create_order", {"quantity": 3}, at=2)), True),
    ("tool_args", {"create_order": [{"quantity": 3}, {"quantity": 1}]},
     obs(tool("create_order", {"quantity": 1}), tool("create_order", {"quantity": 3}, at=2)), False),
    ("tool_args", {"create_order": [{"quantity": 1}, {"quantity": 3}]}, obs(tool("create_order", {"quantity": 1})),
     False),
    # tool_order with arguments
    ("tool_order", [{"create_order": {"quantity": 3}}, "confirm"], obs(ORDER, CONFIRM), True),
    ("tool_order", [{"create_order": {"quantity": 4}}, "confirm"], obs(ORDER, CONFIRM), False),
    ("tool_order", ["confirm", {"create_order": {"quantity": 3}}], obs(ORDER, CONFIRM), False),
    ("tool_order", [{"create_order": {"quantity": 3}}, "confirm"],  # the matching call comes after confirm
     obs(tool("create_order", {"quantity": 1}), CONFIRM, tool("create_order", {"quantity": 3}, at=3)), False),
    ("tool_order", ["create_order", "confirm"], obs(ORDER, CONFIRM), True),  # names only, as before
    # retry_wait: the gap from the failed answer's end to the retry's start
    ("retry_wait", {"of": "llm"}, obs(llm(0, 429, retry_after=2), llm(2.2)), True),
    ("retry_wait", {"of": "llm"}, obs(llm(0, 429, retry_after=2), llm(0.5)), False),
    ("retry_wait", {"of": "llm"}, obs(llm(0, 500), llm(1.2)), True),  # no Retry-After: 1s
    ("retry_wait", {"of": "llm"}, obs(llm(0, 500), llm(0.3)), False),
    ("retry_wait", {"of": "llm", "min_s": 3}, obs(llm(0, 429, retry_after=1), llm(2)), False),
    ("retry_wait", {"of": "llm", "min_s": 0.1}, obs(llm(0, 503), llm(0.3)), True),
    ("retry_wait", {"of": "llm"}, obs(llm(0, 504, duration_ms=5000, error="injected hang"), llm(5.5)), False),
    ("retry_wait", {"of": "llm"}, obs(llm(0, 504, duration_ms=5000, error="injected hang"), llm(6.2)), True),
    ("retry_wait", {"of": "create_order"},
     obs(tool("create_order", {}, 0, 503, retry_after=1), tool("create_order", {}, 1.5)), True),
    ("retry_wait", {"of": "create_order"},
     obs(tool("create_order", {}, 0, 503, retry_after=1), tool("create_order", {}, 0.2)), False),
    ("retry_wait", {"of": "tools"},  # another tool's call is no retry of this one
     obs(tool("create_order", {}, 0, 503, retry_after=1), tool("confirm", {}, 0.1), tool("create_order", {}, 1.5)),
     True),
    ("retry_wait", {"of": "tools"},
     obs(tool("create_order", {}, 0, 503, retry_after=1), tool("create_order", {}, 0.1)), False),
]


@pytest.mark.parametrize("name,params,o,passes", TABLE)
def test_table(name, params, o, passes):
    ev = run(name, params, o)
    assert ev.availability == "ready", ev.reason
    assert ev.passed is passes, ev.reason


def test_failures_name_what_was_seen():
    ev = run("tool_args", {"create_order": {"quantity": 3}}, obs(CONFIRM))
    assert ev.reason == "create_order was not called"
    ev = run("tool_args", {"create_order": {"quantity": 4}}, obs(ORDER))
    assert "never with" in ev.reason and '"quantity": 3' in ev.reason
    ev = run("retry_wait", {"of": "llm"}, obs(llm(0, 429, retry_after=2), llm(0.5)))
    assert "Retry-After 2s" in ev.reason and "wanted at least 2s" in ev.reason


def test_evidence_on_the_doubles_answers_is_labelled():
    assert run("tool_args", {"create_order": {"quantity": 3}}, obs(ORDER)).source == SOURCE_DOUBLE
    real = tool("create_order", {"quantity": 3}, double=False)  # a forward: the real service answered
    assert run("tool_args", {"create_order": {"quantity": 3}}, obs(real)).source == "real"


@pytest.mark.parametrize("o,why", [
    (obs(llm(0), llm(1)), "no failed llm call"),
    (obs(llm(0, 429, retry_after=1)), "none retried"),
    (obs(), "no failed llm call"),
])
def test_retry_wait_without_a_retry_is_unavailable_never_a_pass(o, why):
    ev = run("retry_wait", {"of": "llm"}, o)
    assert ev.availability == "unavailable" and ev.passed is None and why in ev.reason


UNCLAIMED = {"llm": 2, "tools": {"create_order": 1}, "running": 8, "ambiguous": 0}


@pytest.mark.parametrize("name,params,o", [
    ("cost_usd", {"max": 0.01}, obs()),  # "$0 over 0 calls" is no pass when calls went unclaimed
    ("tokens", {"total_max": 100}, obs()),
    ("llm_calls", {"max": 3}, obs()),
    ("llm_calls", {"min": 1}, obs()),
    ("metered", True, obs()),
    ("error_rate", {"max": 0}, obs()),
    ("tools_called", ["create_order"], obs()),
    ("tool_args", {"create_order": {"quantity": 3}}, obs()),
    ("tool_order", ["create_order", "confirm"], obs(CONFIRM)),
    ("retry_wait", {"of": "llm"}, obs(llm(0, 429, retry_after=1), llm(0.1))),
    ("max_calls", {"llm": 2}, obs(llm(0))),
    ("max_calls", {"create_order": 1}, obs()),
    ("tools_not_called", ["create_order"], obs()),  # an unclaimed create_order may be this case's
    ("tools_not_called", ["llm"], obs()),
])
def test_unattributed_calls_make_call_checks_unavailable(name, params, o):
    marked = obs(*o.turns[0].events, unattributed=UNCLAIMED)
    ev = run(name, params, marked)
    assert ev.availability == "unavailable" and ev.passed is None, ev.reason
    assert "could not be attributed to a case while 8 ran" in ev.reason, ev.reason


@pytest.mark.parametrize("name,params,o", [
    ("cost_usd", {"max": 0.01}, obs(llm(0))),
    ("llm_calls", {"max": 3}, obs(llm(0))),
    ("metered", True, obs(llm(0))),
    ("tools_called", ["create_order"], obs(ORDER)),
    ("tool_args", {"create_order": {"quantity": 3}}, obs(ORDER)),
    ("max_calls", {"llm": 2}, obs(llm(0))),
])
def test_the_same_checks_decide_when_every_call_was_attributed(name, params, o):
    ev = run(name, params, o)
    assert ev.availability == "ready" and ev.passed is True, ev.reason


def test_tools_not_called_fails_on_a_call_seen_and_holds_when_only_other_tools_went_unclaimed():
    other = {"llm": 0, "tools": {"other": 2}, "running": 3, "ambiguous": 0}
    assert run("tools_not_called", ["create_order"], obs(ORDER, unattributed=other)).passed is False
    assert run("tools_not_called", ["create_order"], obs(CONFIRM, unattributed=other)).passed is True


def test_a_tool_seen_is_not_undone_by_unclaimed_calls_of_other_tools():
    marked = obs(ORDER, unattributed={"llm": 0, "tools": {"other": 2}, "running": 3, "ambiguous": 0})
    assert run("tools_called", ["create_order"], marked).passed is True
    wrong = obs(tool("create_order", {"quantity": 1}), unattributed={"llm": 0, "tools": {"other": 2},
                                                                      "running": 3, "ambiguous": 0})
    assert run("tool_args", {"create_order": {"quantity": 3}}, wrong).passed is False


@pytest.mark.parametrize("name,bad", [
    ("tool_args", {}),
    ("tool_args", {"create_order": 3}),
    ("tool_args", {"create_order": []}),
    ("tool_args", {"create_order": {"$.a..b": 1}}),
    ("tool_args", {"create_order": {"$.items[x]": 1}}),
    ("tool_order", ["create_order"]),
    ("tool_order", ["a", {"b": {"x": 1}, "c": {}}]),
    ("tool_order", ["a", {"b": [{"x": 1}]}]),
    ("tool_order", ["a", 3]),
    ("retry_wait", {}),
    ("retry_wait", {"of": "llm", "min_s": -1}),
    ("retry_wait", {"of": "llm", "max_s": 1}),
    ("retry_wait", {"of": ""}),
])
def test_bad_parameters_are_fixture_errors(name, bad):
    assert REGISTRY[name].validate(bad)


def test_calls_after_a_refusal_are_unavailable_when_calls_went_unclaimed():
    from harness.types import Reply

    cancel = Reply(channel="telegram", chat="1", text="Cancelled.", at=T0 + 1, method="sendMessage")
    t = TurnObservation(index=0, sent_at=T0, delivery_status=200, delivery_error="", replies=(cancel,), events=(),
                        settled_after_s=1.0, unattributed_calls=UNCLAIMED)
    o = Observation(case_id="c", channel="telegram", chat_id="1", turns=(t,), started_at=T0, finished_at=T0 + 9)
    ev = run("no_call_after_refusal", True, o)
    assert ev.availability == "unavailable" and "could not be attributed" in ev.reason
    clean = Observation(case_id="c", channel="telegram", chat_id="1", started_at=T0, finished_at=T0 + 9,
                        turns=(TurnObservation(index=0, sent_at=T0, delivery_status=200, delivery_error="",
                                               replies=(cancel,), events=(), settled_after_s=1.0),))
    assert run("no_call_after_refusal", True, clean).passed is True
