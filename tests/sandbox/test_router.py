"""Attribution that does not depend on the bot: the keys a call names, and its content."""

from __future__ import annotations

import json

import pytest

from harness.sandbox.router import VIA_AMBIGUOUS, VIA_CONTENT, Router
from harness.sandbox.keys import request_keys, tool_calls_of, tool_request_keys
from harness.types import Event


def chat(*user_texts: str, **extra) -> dict:
    msgs = [{"role": "system", "content": "You are a shop bot."}]
    for t in user_texts:
        msgs += [{"role": "user", "content": t}, {"role": "assistant", "content": "ok"}]
    return {"model": "gpt-4o-mini", "messages": msgs[:-1] if user_texts else msgs, **extra}


@pytest.mark.parametrize("body,key", [
    ({"user": "700000001"}, "user:700000001"),
    ({"safety_identifier": "700000001"}, "user:700000001"),
    ({"metadata": {"chat": "700000001"}}, "user:700000001"),
    ({"metadata": {"user_id": "tg-700000001"}}, "user:700000001"),  # Anthropic; an id inside a longer one
    ({"user": "wa:4470000000001"}, "user:4470000000001"),
    ({"messages": [{"role": "user", "content": [{"type": "text", "text": "see http://x/c/abcdef123456/a.pdf"}]}]},
     "tok:abcdef123456"),
    ({"system": "doc http://x/c/abcdef123456/a.pdf", "messages": []}, "tok:abcdef123456"),  # Anthropic system
])
def test_request_keys(body, key):
    assert key in request_keys(body)


def test_request_keys_ignore_what_names_no_one():
    assert request_keys({"user": "", "metadata": {"n": True}, "messages": [{"role": "user", "content": "hi"}]}) == []


@pytest.mark.parametrize("body,query,key", [
    ({"chat_id": 700000001}, {}, "user:700000001"),
    ({"order": {"customer": {"user_id": "700000002"}}}, {}, "user:700000002"),  # nested
    ({"message": {"chat": {"id": 700000003}}}, {}, "user:700000003"),  # a Telegram-shaped chat
    ({}, {"chat_id": "700000004"}, "user:700000004"),  # GET query
    ([{"wa_id": "4470000000001"}], {}, "user:4470000000001"),
])
def test_tool_request_keys(body, query, key):
    assert key in tool_request_keys(body, query, "")


def _two_running(texts_a, texts_b):
    router = Router()
    a = router.open("a", ["tg:1", "user:1"])
    b = router.open("b", ["tg:2", "user:2"])
    router.sent(a, texts_a)
    router.sent(b, texts_b)
    return router, a, b


def test_the_case_whose_text_the_last_user_message_holds():
    router, a, b = _two_running(["order 3 widgets"], ["order 5 gadgets please"])
    keys = router.llm_keys(chat("order 3 widgets"))
    assert "user:1" in keys and VIA_CONTENT in keys and "user:2" not in keys
    router.record(Event(source="gateway", name="llm", at=1.0, status=200, keys=keys))
    assert [e.meta.get("attributed") for _, e in a.events] == ["content"] and not b.events
    assert "user:2" in router.llm_keys(chat("User says: Order 5  gadgets please"))  # case and spaces ignored


def test_a_named_call_is_not_matched_by_content():
    router, a, b = _two_running(["order 3 widgets"], ["order 5 gadgets"])
    keys = router.llm_keys(chat("order 3 widgets", user="2"))
    assert keys == ("user:2",)


def test_the_same_text_in_two_running_cases_identifies_neither():
    router, a, b = _two_running(["hello there"], ["hello there"])
    keys = router.llm_keys(chat("hello there"))
    assert VIA_AMBIGUOUS in keys and "user:1" not in keys and "user:2" not in keys
    router.record(Event(source="gateway", name="llm", at=1.0, status=200, keys=keys))
    assert not a.events and not b.events and len(router.unattributed) == 1
    for rec in (a, b):
        assert rec.unattributed_of(0) == {"llm": 1, "tools": {}, "running": 2, "ambiguous": 1}


def test_an_ambiguous_call_marks_only_the_cases_that_sent_its_text():
    router, a, b = _two_running(["hello there"], ["hello there"])
    c = router.open("c", ["user:3"])
    router.sent(c, ["something else entirely"])
    router.record(Event(source="gateway", name="llm", at=1.0, status=200, keys=router.llm_keys(chat("hello there"))))
    assert a.unattributed_of(0)["running"] == 3 and b.unattributed_of(0)["llm"] == 1
    assert c.unattributed_of(0) == {}
    router.record(Event(source="gateway", name="llm", at=1.0, status=200, keys=router.llm_keys(chat("no one's"))))
    assert c.unattributed_of(0) == {"llm": 1, "tools": {}, "running": 3, "ambiguous": 0}  # it may be anyone's
    assert a.unattributed_of(0)["llm"] == 2


def test_earlier_turns_tell_a_shared_text_apart():
    router, a, b = _two_running(["book a table for two"], ["book a room for tonight"])
    a.turn = b.turn = 1
    router.sent(a, ["yes"])
    router.sent(b, ["yes"])
    assert "user:1" in router.llm_keys(chat("book a table for two", "yes"))
    assert "user:2" in router.llm_keys(chat("book a room for tonight", "yes"))
    assert VIA_AMBIGUOUS in router.llm_keys(chat("yes"))


def test_the_longer_of_two_overlapping_texts_wins():
    router, a, b = _two_running(["what is the price"], ["what is the price of shipping"])
    assert "user:2" in router.llm_keys(chat("what is the price of shipping"))
    assert "user:1" in router.llm_keys(chat("what is the price"))


def test_a_short_text_counts_only_as_a_whole_message():
    router, a, b = _two_running(["hi"], ["a longer question here"])
    assert "user:1" in router.llm_keys(chat("hi"))
    assert "user:1" not in router.llm_keys(chat("this is a thing"))


def test_the_last_user_message_comes_first():
    router, a, b = _two_running(["question one from a"], ["question two from b"])
    # b's text quoted earlier in the conversation, a's text last: a's call
    assert "user:1" in router.llm_keys(chat("question two from b", "question one from a"))


def test_a_tool_call_by_its_body_text():
    router, a, b = _two_running(["find flights to Oslo"], ["find hotels in Rome"])
    raw = '{"query": "find hotels in Rome"}'
    assert "user:2" in router.tool_keys({"query": "find hotels in Rome"}, {}, raw)


def test_a_sole_running_case_still_takes_unkeyed_calls():
    router = Router()
    a = router.open("a", ["user:1"])
    router.record(Event(source="gateway", name="llm", at=1.0, status=200, keys=router.llm_keys(chat("x"))))
    assert len(a.events) == 1 and a.events[0][1].meta["attributed"] == "sole-active-case"
    assert a.unattributed_of(0) == {}


def test_a_sole_running_case_gets_its_keys_so_its_faults_reach_unkeyed_calls():
    from harness.sandbox.faults import FaultBook

    router, book = Router(), FaultBook()
    a = router.open("a", ["user:1", "tok:abcdefgh1"])
    book.arm(["user:1"], {"llm": {"status": 500}})
    keys = router.llm_keys(chat("anything"))
    assert book.take("llm", keys) is not None
    router.record(Event(source="gateway", name="llm", at=1.0, status=500, keys=keys))
    assert a.events[0][1].meta["attributed"] == "sole-active-case"


def test_unclaimed_tool_calls_mark_every_running_case_by_tool():
    router, a, b = _two_running(["one text"], ["another text"])
    router.record(Event(source="tools", name="create_order", at=1.0, status=200))
    router.record(Event(source="telegram", name="telegram.getMe", at=1.0, status=200))  # not a case's call
    assert a.unattributed_of(0)["tools"] == {"create_order": 1} and a.unattributed_of(0)["llm"] == 0


def test_tool_calls_of_openai_and_anthropic_answers():
    openai = {"choices": [{"message": {"tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "create_order", "arguments": '{"quantity": 3}'}},
        {"id": "c2", "type": "function", "function": {"name": "broken", "arguments": "{not json"}}]}}]}
    anthropic = {"content": [{"type": "text", "text": "ok"},
                             {"type": "tool_use", "id": "t1", "name": "create_order", "input": {"quantity": 3}}]}
    want = [{"name": "create_order", "arguments": {"quantity": 3}}]
    assert tool_calls_of(openai) == want and tool_calls_of(anthropic) == want
    assert tool_calls_of(None) == [] and tool_calls_of({"choices": [{"message": {"content": "hi"}}]}) == []


def test_a_tool_call_is_the_case_whose_model_asked_for_it():
    router, a, b = _two_running(["order three widgets"], ["order five gadgets"])
    for rec, n in ((a, 3), (b, 5)):
        router.record(Event(source="gateway", name="llm", at=1.0, status=200, keys=rec.keys, meta={
            "tool_calls": [{"name": "create_order", "arguments": {"item": "widget", "quantity": n}}]}))
    body = {"item": "widget", "quantity": 5, "currency": "EUR"}  # the bot added a field of its own
    keys = router.tool_keys(body, {}, json.dumps(body), "create_order")
    assert "user:2" in keys and VIA_CONTENT in keys
    assert "user:2" in router.tool_keys({"item": "widget", "quantity": "5"}, {}, "", "create_order")
    assert "user:1" not in router.tool_keys(body, {}, "", "other_tool")  # another tool: not asked for
    assert not {"user:1", "user:2"} & set(router.tool_keys({"item": "widget", "quantity": 9}, {}, "", "create_order"))
    # the same arguments asked of both: neither
    router.record(Event(source="gateway", name="llm", at=1.0, status=200, keys=a.keys, meta={
        "tool_calls": [{"name": "create_order", "arguments": {"item": "widget", "quantity": 5}}]}))
    assert not {"user:1", "user:2"} & set(router.tool_keys(body, {}, "", "create_order"))


def test_a_command_is_matched_without_its_slash_word():
    router, a, b = _two_running(["/order 3 blue widgets"], ["/order 5 red gadgets"])
    assert "user:2" in router.llm_keys(chat("5 red gadgets"))
    assert "user:1" in router.llm_keys(chat("/order 3 blue widgets"))


def test_a_tool_call_with_a_changed_argument_goes_to_the_case_whose_model_asked_the_most_of_it():
    """A bot that rewrote one argument (the bug tool_args is for) must still be judged: its call goes
    to the case whose model asked for that tool with the most of its other arguments."""
    router, a, b = _two_running(["order three widgets"], ["order five gadgets"])
    for rec, item, n in ((a, "widget", 3), (b, "gadget", 5)):
        router.record(Event(source="gateway", name="llm", at=1.0, status=200, keys=rec.keys, meta={
            "tool_calls": [{"name": "create_order", "arguments": {"item": item, "quantity": n}}]}))
    keys = router.tool_keys({"item": "widget", "quantity": 1}, {}, "", "create_order")
    assert "user:1" in keys and "user:2" not in keys
    # nothing of the asked arguments, or as much of both cases' asks: still nobody's
    assert not {"user:1", "user:2"} & set(router.tool_keys({"item": "lamp", "quantity": 1}, {}, "", "create_order"))
    assert not {"user:1", "user:2"} & set(router.tool_keys({"item": "widget", "quantity": 5}, {}, "", "create_order"))
