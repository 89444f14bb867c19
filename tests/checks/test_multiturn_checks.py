"""The multi-turn layer's checks, tabled with inputs that must fail: state, trajectories over
time, rich replies, slots and their layer metrics."""

from __future__ import annotations

import pytest

from harness.checks import REGISTRY
from harness.checks.slots import counts, layer_slot_metrics, metrics
from harness.types import Case, CaseResult, Event, Observation, Reply, Turn, TurnObservation

CASE = Case(id="c", layer="multiturn", channel="telegram", turns=(Turn(send="x"),))
CHAT = "700000001"


def reply(text, at, buttons=(), kind="text", chat=CHAT, channel="telegram"):
    return Reply(channel=channel, chat=chat, text=text, at=at, method="sendMessage", kind=kind, buttons=buttons)


def ev(name, at, status=200, r=None, request=None, meta=None):
    return Event(source=name.split(".")[0], name=name, at=at, status=status, reply=r, request=request or {},
                 meta=meta or {})


def obs(*turns):
    return Observation(case_id="c", channel="telegram", chat_id=CHAT, turns=tuple(turns), started_at=0, finished_at=9)


def tobs(index=0, events=(), state=None, state_error="", sent_at=0.0):
    replies = tuple(e.reply for e in events if e.reply is not None and e.reply.chat == CHAT)
    return TurnObservation(index=index, sent_at=sent_at, delivery_status=200, delivery_error="", replies=replies,
                           events=tuple(events), settled_after_s=1, state=state, state_error=state_error)


def run(name, o, params, turn=0):
    d = REGISTRY[name]
    assert d.validate(params) is None, d.validate(params)
    return d.fn(CASE, o, turn, params)


STATE = {"document": {"url": "http://h/c/tok/paper.pdf", "title": "T"}, "platform": "linkedin", "task": None,
         "pending": None, "turns": 3, "list": [{"a": 1}]}


@pytest.mark.parametrize("params,ok,needle", [
    ({"$.document.url": {"contains": "paper.pdf"}}, True, "holds"),
    ({"$.document.url": {"contains": "notes.txt"}}, False, "$.document.url"),
    ({"$.task": None}, True, ""),
    ({"$.platform": "linkedin", "$.turns": 3}, True, ""),
    ({"$.platform": {"equals": "twitter"}}, False, 'wanted "twitter"'),
    ({"$.pending": {"absent": True}}, True, ""),
    ({"$.missing": {"absent": True}}, True, ""),
    ({"$.platform": {"absent": True}}, False, "absent"),
    ({"$.document": {"exists": True}}, True, ""),
    ({"$.task": {"exists": True}}, False, "present"),
    ({"$.list[0].a": 1}, True, ""),
    ({"$.list[3].a": 1}, False, "(missing)"),
    ({"$.platform": {"regex": "^link"}}, True, ""),
    ({"$.platform": {"not_equals": "linkedin"}}, False, "anything else"),
])
def test_state(params, ok, needle):
    e = run("state", obs(tobs(index=0, state=STATE)), params)
    assert e.passed is ok and e.turn == 0 and needle in e.reason and e.reason.startswith("turn 0")


def test_state_without_probe_is_unavailable_with_the_reason():
    e = run("state", obs(tobs(state=None)), {"$.task": None})
    assert e.availability == "unavailable" and e.passed is None and "no state probe" in e.reason
    e = run("state", obs(tobs(state=None, state_error="state probe answered HTTP 500")), {"$.task": None})
    assert e.availability == "unavailable" and "HTTP 500" in e.reason


@pytest.mark.parametrize("bad", [{}, {"task": None}, {"$.a": {"regex": "("}}, {"$.a": {"exists": "yes"}}])
def test_state_validator_rejects(bad):
    assert REGISTRY["state"].validate(bad)


def test_tool_order_and_max_calls():
    o = obs(tobs(events=[ev("telegram.sendChatAction", 1), ev("fetch_document", 2), ev("llm", 3), ev("llm", 4)]))
    assert run("tool_order", o, ["fetch_document", "llm"]).passed
    bad = run("tool_order", o, ["llm", "fetch_document"])
    assert bad.passed is False and "first fetch_document came" in bad.reason
    missing = run("tool_order", o, ["fetch_document", "whatsapp.send"])
    assert missing.passed is False and "never called" in missing.reason
    assert run("max_calls", o, {"llm": 2, "fetch_document": 1}).passed
    over = run("max_calls", o, {"llm": 1})
    assert over.passed is False and "llm x2 > 1" in over.reason


def test_calls_after_refusal_counts_later_turns_and_posts():
    cancel = reply("Cancelled. Nothing more will be sent.", 10)
    post = Reply(channel="whatsapp", chat="15550001111", text="post", at=12, method="messages")
    t0 = tobs(0, events=[ev("fetch_document", 1), ev("llm", 2)])  # before the cancel: fine
    clean = obs(t0, tobs(1, events=[ev("telegram.sendMessage", 10, r=cancel), ev("llm", 9.5)]))
    params = {"reply_regex": "(?i)cancel", "max": 0, "tools": ["llm", "post"]}
    assert run("calls_after", clean, params, turn=1).passed
    leaky = obs(t0, tobs(1, events=[ev("telegram.sendMessage", 10, r=cancel)]),
                tobs(2, events=[ev("llm", 11), ev("whatsapp.send", 12, r=post)]))
    e = run("calls_after", leaky, params, turn=1)
    assert e.passed is False and "llm (+1000ms, turn 2)" in e.reason and "whatsapp.send" in e.reason
    assert run("no_call_after_refusal", leaky, True, turn=1).passed is False
    none = obs(tobs(0, events=[ev("telegram.sendMessage", 1, r=reply("Done!", 1))]))
    assert run("calls_after", none, params).passed is False  # no refusal to hold to


def test_buttons_attachments_typing_limits():
    kb = reply("Which platform?", 2, buttons=("twitter", "linkedin"))
    o = obs(tobs(events=[ev("telegram.sendChatAction", 1), ev("telegram.sendMessage", 2, r=kb)], sent_at=0.5))
    assert run("buttons", o, {"contains": ["twitter", "LinkedIn"]}).passed
    assert run("buttons", o, {"contains": ["facebook"]}).passed is False
    assert run("typing_before_reply", o, True).passed
    late = obs(tobs(events=[ev("telegram.sendMessage", 2, r=kb), ev("telegram.sendChatAction", 3)]))
    assert run("typing_before_reply", late, True).passed is False
    doc = reply("here", 2, kind="document")
    o2 = obs(tobs(events=[ev("telegram.sendDocument", 2, r=doc)]))
    assert run("attachments", o2, {"kind": "document"}).passed
    assert run("attachments", o2, {"kind": "photo"}).passed is False
    long_tg = ev("telegram.sendMessage", 2, status=400, request={"chat_id": CHAT, "text": "x" * 4097})
    e = run("channel_limits", obs(tobs(events=[long_tg])), True)
    assert e.passed is False and "4097 chars > 4096" in e.reason and "HTTP 400" in e.reason
    emoji = ev("telegram.sendMessage", 2, request={"text": "😀" * 2049})  # 4098 UTF-16 units
    assert run("channel_limits", obs(tobs(events=[emoji])), True).passed is False
    wa = ev("whatsapp.send", 2, request={"text": {"body": "y" * 4097}})
    assert run("channel_limits", obs(tobs(events=[wa])), True).passed is False
    ok = ev("whatsapp.send", 2, request={"text": {"body": "y" * 4096}})
    assert run("channel_limits", obs(tobs(events=[ok])), True).passed


@pytest.mark.parametrize("expected,observed,tp_fp_fn", [
    ({"document": "paper.pdf", "platform": "linkedin"}, {"document": "paper.pdf", "platform": "linkedin"}, (2, 0, 0)),
    ({"document": "paper.pdf"}, {"document": "notes.txt"}, (0, 1, 1)),  # wrong value: 1 FP + 1 FN
    ({"platform": "twitter"}, {"platform": None}, (0, 0, 1)),
    ({"platform": None}, {"platform": "twitter"}, (0, 1, 0)),
    ({"platform": None}, {"platform": None}, (0, 0, 0)),
])
def test_slot_counts(expected, observed, tp_fp_fn):
    assert counts(expected, observed) == tp_fp_fn


def test_slots_evidence_and_layer_metrics():
    state = {"document": {"url": "http://h/c/tok/paper.pdf"}, "platform": "twitter"}
    e = run("slots", obs(tobs(state=state)), {"document": "paper.pdf", "platform": "linkedin"})
    assert e.passed is False and "platform='twitter'" in e.reason and "TP=1 FP=1 FN=1" in e.reason
    r = CaseResult(id="c", layer="multiturn", channel="telegram", status="fail", evidence=(e,))
    m = layer_slot_metrics([r])["multiturn"]["slots"]
    assert (m["tp"], m["fp"], m["fn"], m["precision"], m["recall"], m["f1"]) == (1, 1, 1, 0.5, 0.5, 0.5)
    assert run("slots", obs(tobs(state=None)), {"platform": "x"}).availability == "unavailable"
    assert metrics(0, 0, 0) == {"tp": 0, "fp": 0, "fn": 0, "precision": None, "recall": None, "f1": None}
    assert metrics(0, 2, 0)["precision"] == 0.0 and metrics(0, 2, 0)["recall"] is None
    assert layer_slot_metrics([CaseResult(id="c", layer="multiturn", channel="telegram", status="pass",
                                          evidence=())]) == {}
