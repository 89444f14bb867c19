"""Token accounting that is right (issue 21 item 4): tools, tool calls and tool results are
counted, streams are read for their usage or counted, replay misses fail ``metered``, and
model-double evidence is labelled. Each table holds the answer the old code gave, which
must fail, beside the right one."""

from __future__ import annotations

import json

import pytest

from harness.checks import REGISTRY
from harness.models import tokens
from harness.models.prices import load_prices
from harness.run.perf import replay_miss_note
from harness.sandbox import model_wire as wire
from harness.sandbox.stream_capture import StreamCapture
from harness.sandbox.metering import Meter, completion_parts, count_call, usage_counts
from harness.types import SOURCE_DOUBLE, SOURCE_REAL, Case, CaseMetrics, CaseResult, Event, Observation, Turn, \
    TurnObservation

T0 = 1_000_000.0
CASE = Case(id="c", layer="cost", channel="telegram", turns=(Turn(send="hi"),))
TOOLS = [{"type": "function", "function": {"name": "create_order", "description": "Create an order for a customer",
                                           "parameters": {"type": "object", "properties": {
                                               "item": {"type": "string"}, "quantity": {"type": "integer"}}}}}]
USER = [{"role": "user", "content": "order 3 widgets"}]
CALL = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
    "name": "create_order", "arguments": json.dumps({"item": "widget", "quantity": 3, "note": "deliver on monday"})}}]}
RESULT = {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"id": "A-17", "status": "created",
                                                                        "eta": "three business days"})}
TOOL_ANSWER = {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": CALL["tool_calls"]},
                            "finish_reason": "tool_calls"}]}


def _in(body: dict) -> int:
    return tokens.count_request(body, str(body.get("model", "gpt-4o")))[0]


# --------------------------------------------------------------------------- input


@pytest.mark.parametrize("bigger,smaller,what", [
    ({"model": "gpt-4o", "messages": USER, "tools": TOOLS}, {"model": "gpt-4o", "messages": USER}, "tool schemas"),
    ({"model": "gpt-4o", "messages": USER + [CALL]}, {"model": "gpt-4o", "messages": USER + [{"role": "assistant"}]},
     "assistant tool_calls arguments"),
    ({"model": "gpt-4o", "messages": USER + [CALL, RESULT]}, {"model": "gpt-4o", "messages": USER + [CALL]},
     "a tool result"),
    ({"model": "claude-3-5-sonnet", "system": "You are a shop assistant who sells widgets.", "messages": USER},
     {"model": "claude-3-5-sonnet", "messages": USER}, "Anthropic's system field"),
    ({"model": "claude-3-5-sonnet", "messages": USER + [{"role": "assistant", "content": [
        {"type": "tool_use", "id": "t", "name": "create_order", "input": {"item": "widget", "quantity": 3}}]}]},
     {"model": "claude-3-5-sonnet", "messages": USER + [{"role": "assistant", "content": []}]},
     "an Anthropic tool_use block"),
    ({"model": "claude-3-5-sonnet", "messages": USER + [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t", "content": "A-17 created, arriving in three days"}]}]},
     {"model": "claude-3-5-sonnet", "messages": USER + [{"role": "user", "content": []}]},
     "an Anthropic tool_result block"),
])
def test_input_counts_what_the_provider_bills(bigger, smaller, what):
    assert _in(bigger) > _in(smaller), f"{what} not counted"


def test_old_count_of_messages_ignored_tools_and_tool_calls():
    """The old recipe counted role/name/content strings only: this body counted as the bare prompt."""
    body = {"model": "gpt-4o", "messages": USER + [CALL, RESULT], "tools": TOOLS}
    enc = tokens.get_encoding("o200k_base")
    old = 3 + sum(3 + sum(len(enc.encode(m[k])) for k in ("role", "content") if isinstance(m.get(k), str))
                  for m in body["messages"])
    assert _in(body) > old + 20


# --------------------------------------------------------------------------- output


@pytest.mark.parametrize("parsed,text,n_args", [
    (TOOL_ANSWER, "", 2),
    ({"choices": [{"message": {"content": "hi", "refusal": None}}]}, "hi", 0),
    ({"choices": [{"message": {"content": None, "refusal": "I can't"}}]}, "I can't", 0),
    ({"content": [{"type": "text", "text": "ok"}, {"type": "tool_use", "name": "f", "input": {"q": 1}}]}, "ok", 2),
])
def test_completion_parts_read_text_refusals_and_tool_call_arguments(parsed, text, n_args):
    got_text, args = completion_parts(parsed)
    assert got_text == text and len(args) == n_args


@pytest.mark.parametrize("parsed,out_min,estimated", [
    (TOOL_ANSWER, 10, True),  # the old answer: 0 tokens, estimated False
    ({"choices": [{"message": {"content": "hello world"}}]}, 2, False),
])
def test_tool_call_answers_count_their_arguments_and_are_estimates(parsed, out_min, estimated):
    meta = Meter(load_prices()).annotate({}, {"model": "gpt-4o", "messages": USER, "tools": TOOLS if estimated
                                              else None}, parsed, 200)
    assert meta["output_tokens"] >= out_min and meta["estimated"] is estimated
    assert meta["tokens_source"] == "tiktoken:o200k_base"


# --------------------------------------------------------------------------- streams


def _captured(provider: str, usage: bool, answer: wire.Answer) -> dict:
    cap = StreamCapture(provider)
    for frame in wire.stream_events(answer, usage):
        cap.feed(frame)
    return cap.completion()


@pytest.mark.parametrize("provider,usage,source,out,estimated", [
    ("openai", True, "usage", 5, False),  # the old answer: tokens_source tiktoken, output 0
    ("openai", False, "tiktoken:o200k_base", None, True),
    ("anthropic", True, "usage", 5, False),  # message_start input + message_delta output
])
def test_streamed_answers_read_their_usage_or_count_the_streamed_text(provider, usage, source, out, estimated):
    answer = wire.Answer(provider=provider, model="gpt-4o", text="one two three four five", usage=(17, 5))
    parsed = _captured(provider, usage, answer)
    meta = Meter(load_prices()).annotate({"stream": True}, {"model": "gpt-4o", "messages": USER}, parsed, 200)
    assert meta["tokens_source"] == source and meta["estimated"] is estimated
    if out is not None:
        assert (meta["input_tokens"], meta["output_tokens"]) == (17, out)
    else:
        assert meta["output_tokens"] == tokens.count_tokens("one two three four five", "gpt-4o")[0] > 0


def test_streamed_tool_call_arguments_are_counted_without_usage():
    answer = wire.Answer(provider="openai", model="gpt-4o",
                           tool_calls=[{"id": "c", "name": "create_order", "arguments": '{"item": "widget"}'}])
    parsed = _captured("openai", False, answer)
    meta = Meter(load_prices()).annotate({"stream": True}, {"model": "gpt-4o", "messages": USER}, parsed, 200)
    assert meta["output_tokens"] > 3 and meta["estimated"] is True


@pytest.mark.parametrize("parsed,want", [
    ({"usage": {"prompt_tokens": 5, "completion_tokens": 2}}, (5, 2)),
    ({"usage": {"input_tokens": 5, "output_tokens": 2, "cache_read_input_tokens": 100}}, (105, 2)),
    ({"usage": None}, None),
    ({}, None),
    (None, None),
])
def test_usage_of_either_provider(parsed, want):
    assert usage_counts(parsed) == want


def test_the_doubles_usage_is_tiktokens_count():
    body = {"model": "gpt-4o", "messages": USER, "tools": TOOLS}
    tin, tout, source, estimated = count_call(body, TOOL_ANSWER, "gpt-4o")
    assert tin == _in(body) and tout > 0 and estimated is True and source == "tiktoken:o200k_base"


# --------------------------------------------------------------------------- replay misses, metered, labels


def _llm(**meta) -> Event:
    base = {"input_tokens": 10, "output_tokens": 3, "cost_usd": 0.001, "tokens_source": "usage"}
    return Event(source="gateway", name="llm", at=T0 + 0.5, status=meta.pop("status", 200), meta={**base, **meta})


def _obs(*events: Event) -> Observation:
    t = TurnObservation(index=0, sent_at=T0, delivery_status=200, delivery_error="", replies=(), events=events,
                        settled_after_s=1.0, timed_out=False)
    return Observation(case_id="c", channel="telegram", chat_id="1", turns=(t,), started_at=T0, finished_at=T0 + 2)


MISS = _llm(status=502, input_tokens=0, output_tokens=0, cost_usd=0.0, tokens_source="not-billed", replay_miss=True,
            cassette_key="abcdef012345", model="gpt-4o")


@pytest.mark.parametrize("events,passes,why", [
    ((MISS,), False, "no recording in the replay cassette (key abcdef012345 (gpt-4o))"),  # the old answer: pass
    ((_llm(replayed=True, cost_usd=0.0), MISS), False, "1 of 2 LLM calls"),
    ((_llm(replayed=True, cost_usd=0.0),), True, "each with tokens and a price"),
])
def test_metered_fails_on_a_replay_miss_naming_it(events, passes, why):
    e = REGISTRY["metered"].fn(CASE, _obs(*events), 0, True)
    assert e.availability == "ready" and e.passed is passes and why in e.reason


def test_replay_misses_are_a_run_note():
    def result(cid, misses):
        return CaseResult(id=cid, layer="cost", channel="telegram", status="fail", evidence=(),
                          metrics=CaseMetrics(replay_misses=misses))
    assert replay_miss_note([result("a", 0)]) == ""
    note = replay_miss_note([result("a", 2), result("b", 0), result("c", 1)])
    assert note.startswith("REPLAY MISSES: 3 LLM call(s) in 2 case(s)") and "a (2), c (1)" in note


@pytest.mark.parametrize("check,params", [("metered", True), ("tokens", {"total_max": 1000}),
                                          ("cost_usd", {"max": 1.0}), ("llm_calls", {"min": 1})])
@pytest.mark.parametrize("is_double,source", [(True, SOURCE_DOUBLE), (False, SOURCE_REAL)])
def test_llm_checks_label_evidence_from_the_double(check, params, is_double, source):
    event = _llm(double=True, provider="openai") if is_double else _llm()
    e = REGISTRY[check].fn(CASE, _obs(event), 0, params)
    assert e.passed is True and e.source == source


def test_warm_loads_every_offline_encoding():
    tokens.get_encoding.cache_clear()
    tokens.warm()
    assert tokens.get_encoding.cache_info().currsize == len(tokens.ENCODINGS)
