"""Honest notes: a timed-out case says what had been delivered; start-up calls are the target's start-up."""

from __future__ import annotations

from harness.run.runner import RunOptions, run_suite, unattributed_notes
from harness.types import Event
from tests.test_runner import setup

SLOW_CASE = """
layer: robustness
cases:
  - id: slow-reply
    timeout_s: 1
    send: "hello"
    expect:
      reply: {contains: "echo"}
"""


async def test_a_timeout_is_reported_as_a_timeout_with_what_was_delivered(tmp_path):
    config, cases = setup(tmp_path, mode="slow", cases=SLOW_CASE)
    report = await run_suite(config, cases, RunOptions(out_dir=tmp_path / "out"))
    case = report.cases[0]
    assert case.status == "fail", case  # no reply within the timeout
    assert case.error.startswith("case timed out after 1s in turn 1 of 1: webhook had answered 200, 0 replies")
    webhook = next(e for e in case.evidence if e.check == "webhook_2xx")
    assert webhook.passed is True and webhook.observed == "200"  # the bot took the update: no false "not delivered"


def _event(name: str, at: float) -> Event:
    return Event(source="telegram", name=name, at=at, status=200)


def test_start_up_calls_are_attributed_to_target_start_up():
    events = [_event("telegram.getMe", 1.0), _event("telegram.setWebhook", 2.0)]
    notes = unattributed_notes(events, cases_from=5.0, concurrency=1)
    assert notes == ['2 boundary call(s) during target start-up, before the first case '
                     '(telegram.getMe, telegram.setWebhook): attributed to "target start-up"']
    later = unattributed_notes(events + [_event("llm", 9.0)], cases_from=5.0, concurrency=8)
    assert "could not be attributed" in later[1] and "--concurrency 1" in later[1]
    alone = unattributed_notes([_event("llm", 9.0)], cases_from=5.0, concurrency=1)
    assert "--concurrency 1" not in alone[0] and "no case was running" in alone[0]


SILENCE = """
layer: robustness
cases:
  - id: silence-is-fine
    send: "psst"
    expect:
      replies: {exact: 0}
      webhook_2xx: true
"""


async def test_a_turn_that_allows_zero_replies_waits_only_its_quiet_window(tmp_path):
    """docs/CASES.md "How long a turn waits": not the reply timeout (3 s here)."""
    config, cases = setup(tmp_path, mode="silent", cases=SILENCE)
    report = await run_suite(config, cases, RunOptions(out_dir=tmp_path / "out"))
    case = report.cases[0]
    assert case.status == "pass", [e.reason for e in case.evidence if not e.passed]
    turn = case.observation.turns[0]
    assert turn.settled_after_s < 1.5 and not turn.timed_out, turn.settled_after_s


def test_state_probed_shows_the_state_as_json_not_python():
    """No "None" in a report: a probe's null stays null."""
    from harness.checks import REGISTRY
    from harness.types import Observation, TurnObservation

    turn = TurnObservation(index=0, sent_at=0.0, delivery_status=200, delivery_error="", replies=(), events=(),
                           settled_after_s=0.1, state={"task": None, "turns": 2})
    obs = Observation(case_id="c", channel="telegram", chat_id="1", turns=(turn,), started_at=0.0, finished_at=1.0)
    e = REGISTRY["state_probed"].fn(None, obs, 0, True)
    assert e.passed and e.observed == '{"task": null, "turns": 2}'
