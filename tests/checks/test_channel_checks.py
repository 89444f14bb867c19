"""Checks that read what the channels recorded (issue 15): rendered vs raw text, entities,
callback answers, forged deliveries, and the platform's refusal named in the evidence.
Each with inputs that must pass and inputs that must fail."""

from __future__ import annotations

import pytest

from harness.cases.keys import _Collector
from harness.cases.turns import _expect
from harness.checks import REGISTRY
from harness.types import Case, Event, Observation, Reply, Turn, TurnObservation

T0 = 1_000_000.0
CASE = Case(id="c", layer="multiturn", channel="telegram", turns=(Turn(send="hi"),))
FORGED = Case(id="f", layer="robustness", channel="telegram",
              turns=(Turn(send="hi", kind="forged", options={"signature": "missing"}),))


def html_reply() -> Reply:
    return Reply(channel="telegram", chat="1", text="You picked Tuesday", at=T0 + 1, method="sendMessage",
                 raw_text="You picked <b>Tuesday</b>", parse_mode="HTML",
                 entities=({"type": "bold", "offset": 11, "length": 7},
                           {"type": "text_link", "offset": 0, "length": 3, "url": "https://example.com"}))


def refused(name="telegram.sendMessage", status=400, error="Bad Request: can't parse entities: Character '.' is "
            "reserved and must be escaped with the preceding '\\'", response=None) -> Event:
    return Event(source=name.split(".")[0], name=name, at=T0 + 0.5, status=status, error=error,
                 response=response or {"ok": False})


def callback_delivery(query_id="q1") -> Event:
    return Event(source="driver", name="deliver.telegram", at=T0, status=0,
                 request={"update_id": 1, "callback_query": {"id": query_id, "data": "yes"}})


def answer(query_id="q1", status=200) -> Event:
    return Event(source="telegram", name="telegram.answerCallbackQuery", at=T0 + 0.2, status=status,
                 request={"callback_query_id": query_id})


def obs(replies=(), events=(), status: int | None = 200) -> Observation:
    t = TurnObservation(index=0, sent_at=T0, delivery_status=status, delivery_error="",
                        replies=tuple(replies), events=tuple(events), settled_after_s=1.0, timed_out=False)
    return Observation(case_id="c", channel="telegram", chat_id="1", turns=(t,), started_at=T0, finished_at=T0 + 2)


TABLE = [
    # (check, params, case, observation, passes, reason fragment)
    ("reply.contains", "You picked Tuesday", CASE, obs([html_reply()]), True, ""),
    ("reply.contains", "<b>Tuesday</b>", CASE, obs([html_reply()]), False, "missing"),
    ("reply_raw.contains", "<b>Tuesday</b>", CASE, obs([html_reply()]), True, ""),
    ("reply_raw.contains", "You picked Tuesday", CASE, obs([html_reply()]), False, "missing"),
    ("reply.max_chars", 18, CASE, obs([html_reply()]), True, ""),  # rendered length, not the markup's
    ("reply.entities", {"bold": "Tuesday"}, CASE, obs([html_reply()]), True, ""),
    ("reply.entities", {"text_link": "https://example.com"}, CASE, obs([html_reply()]), True, ""),
    ("reply.entities", {"italic": "Tuesday"}, CASE, obs([html_reply()]), False, "missing italic 'Tuesday'"),
    ("reply.entities", {"bold": ["Tuesday", "Monday"]}, CASE, obs([html_reply()]), False, "missing bold 'Monday'"),
    ("reply.contains", "Done", CASE, obs([], [refused()]), False,
     "telegram.sendMessage 400 Bad Request: can't parse entities: Character '.' is reserved"),
    ("replies", {"min": 1}, CASE, obs([], [refused()]), False, "can't parse entities"),
    ("answered", True, CASE, obs([], [refused(
        "whatsapp.send", 400, "(#131009) Parameter value is not valid",
        {"error": {"error_data": {"details": "Total row count exceed max allowed count: 10"}}})]), False,
     "whatsapp.send 400 (#131009) Parameter value is not valid: Total row count exceed max allowed count: 10"),
    ("answered", True, CASE, obs([], []), False, "no reply reached"),
    ("callbacks_answered", True, CASE, obs([], [callback_delivery(), answer()]), True, ""),
    ("callbacks_answered", True, CASE, obs([], [callback_delivery()]), False, "callback query q1 never answered"),
    ("callbacks_answered", True, CASE, obs([], [callback_delivery(), answer(status=400)]), False, "never answered"),
    ("callbacks_answered", True, CASE, obs([], [callback_delivery("q1"), answer("q2")]), False, "never answered"),
    ("callbacks_answered", True, CASE, obs([], []), False, "pressed no Telegram button"),
    ("webhook_2xx", True, FORGED, obs(status=401), True, "refused with 401"),
    ("webhook_2xx", True, FORGED, obs(status=403), True, ""),
    ("webhook_2xx", True, FORGED, obs(status=200), False, "anyone could post to it"),
    ("webhook_2xx", True, FORGED, obs(status=500), False, "not a 4xx refusal"),
    ("answered", True, FORGED, obs([]), True, "not answered"),
    ("answered", True, FORGED, obs([html_reply()]), False, "answered a forged delivery"),
]


@pytest.mark.parametrize("name,params,case,observation,passes,fragment", TABLE,
                         ids=[f"{r[0]}-{i}" for i, r in enumerate(TABLE)])
def test_channel_checks(name, params, case, observation, passes, fragment):
    e = REGISTRY[name].fn(case, observation, 0, params)
    assert e.passed is passes, e
    assert fragment in e.reason, e.reason


@pytest.mark.parametrize("expect,problem", [
    ({"reply": {"entities": {"blink": "x"}}}, "reply.entities: unknown key 'blink'"),
    ({"reply": {"entities": {"bold": 3}}}, "reply.entities: bold: must be text or a list, got 3"),
    ({"reply": {"entities": []}}, "reply.entities: must be a table"),
    ({"reply_raw": {"contains": 3}}, "reply_raw.contains: must be text or a list, got 3"),
    ({"callbacks_answered": "yes"}, "callbacks_answered: input should be true, got 'yes'"),
])
def test_bad_parameters_are_fixture_errors(expect, problem):
    out = _Collector()
    _expect(expect, file="f.yaml", case="c", line=1, turn=0, out=out)
    assert out.errors and problem in str(out.errors[0]), out.errors
