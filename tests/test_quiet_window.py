"""Quiet windows learned from the agent, the concurrency slot given back while a case only
watches, and late replies caught after their case was reported (harness/run/quiet.py, runner)."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from harness.run.quiet import QUIET_FLOOR_S, Limiter, QuietWindow, Slot, percentile
from harness.run.runner import RunOptions, run_suite
from harness.types import Reply
from tests.test_runner import setup


def replies(*times: float) -> list[Reply]:
    return [Reply(channel="telegram", chat="1", text="x", at=t, method="sendMessage") for t in times]


def test_no_sample_waits_settle_s():
    q = QuietWindow(0.6)
    assert q.value == 0.6
    q.learn(replies(10.0))  # one reply: no gap
    assert q.value == 0.6 and q.describe()["samples"] == 0


@pytest.mark.parametrize("gaps, expected", [
    ([0.001], QUIET_FLOOR_S),          # duplicates a millisecond apart: the floor
    ([0.2], 0.3),                      # 1.5 x the largest gap while samples are few
    ([2.0], 0.6),                      # never more than settle_s
    ([0.1] * 19 + [0.5] * 1, 0.15),    # 20 samples: the 95th percentile (0.1) x 1.5
])
def test_window_is_fitted_and_clamped(gaps, expected):
    q = QuietWindow(0.6)
    t = 0.0
    for g in gaps:
        q.learn(replies(t, t + g))
        t += 10
    assert q.value == pytest.approx(expected)
    d = q.describe()
    assert d["samples"] == len(gaps) and d["floor_s"] == QUIET_FLOOR_S and d["settle_s"] == 0.6


def test_percentile_is_nearest_rank():
    assert percentile([5, 1, 3, 2, 4], 50) == 3
    assert percentile(range(1, 101), 95) == 95
    with pytest.raises(ValueError):
        percentile([], 95)


async def test_limiter_hands_slots_to_priority_waiters_first():
    lim = Limiter(1)
    order = []
    holder = Slot(lim)
    await holder.take()

    async def want(name, prio):
        s = Slot(lim)
        await s.take(prio)
        order.append(name)
        s.give()

    tasks = [asyncio.create_task(want("new-1", 1)), asyncio.create_task(want("new-2", 1))]
    await asyncio.sleep(0)
    tasks.append(asyncio.create_task(want("repeat", 0)))
    await asyncio.sleep(0)
    holder.give()
    holder.give()  # idempotent: one slot given back once
    await asyncio.gather(*tasks)
    assert order == ["repeat", "new-1", "new-2"]
    assert lim.free == 1


async def test_a_cancelled_waiter_does_not_lose_the_slot():
    lim = Limiter(1)
    a = Slot(lim)
    await a.take()
    waiter = asyncio.create_task(Slot(lim).take())
    await asyncio.sleep(0)
    waiter.cancel()
    a.give()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert lim.free == 1


ONE = """
layer: robustness
cases:
  - id: echo-one
    send: "hello"
    expect: {reply: {contains: "echo: hello"}, replies: {exact: 1}}
"""

MANY = "layer: robustness\ncases:\n" + "".join(
    f"  - id: echo-{i}\n    send: \"hi {i}\"\n    expect: {{replies: {{exact: 1}}}}\n" for i in range(8))


SLOW = ONE + """
  - id: echo-slow
    send: "take your time"
    expect: {replies: {min: 1}}
"""


async def test_a_late_duplicate_fails_its_case_and_turn(tmp_path):
    # settle_s 1.0, no sample yet: echo-one reports after 1.0 s of quiet; its duplicate comes at
    # 1.3 s, after the case was reported, while the run still listens (echo-slow answers at 1.5 s,
    # then one run-wide window of 1.0 s: the run stops listening at 2.5 s).
    config, cases = setup(tmp_path, cases=SLOW)
    config = _with_env(config, ECHO_LATE_S="1.3", ECHO_SLOW_WORD="time", settle_s=1.0)
    report = await run_suite(config, cases, RunOptions(out_dir=tmp_path / "out"))
    case = report.cases[0]
    assert report.cases[1].status == "pass"  # its own duplicate (2.8 s) comes after the run stopped listening
    assert case.status == "fail", [e.reason for e in case.evidence]
    late = [e for e in case.evidence if e.passed is False]
    assert [(e.check, e.turn) for e in late] == [("replies", 0)]
    assert late[0].reason.startswith("late (1 event(s) after the case was reported, the first ")
    assert late[0].reason.endswith("1 repl(ies)): 2 replies, wanted exactly 1")
    assert any("echo-one: pass -> fail" in n for n in report.notes)
    assert len(case.observation.turns[0].replies) == 2
    lines = (tmp_path / "out" / report.run_id / "results.jsonl").read_text().splitlines()
    assert [json.loads(x)["status"] for x in lines if "echo-one" in x] == ["pass", "fail"]  # the later stands
    assert report.exit_code == 1


async def test_a_late_real_answer_completes_its_case(tmp_path):
    # "working on it" at once, the answer 0.5 s later: the case is reported on the first reply
    # (closing window 0.1 s before any gap was seen), then evaluated again with the answer
    config, cases = setup(tmp_path, cases=SLOW.replace("replies: {exact: 1}", "replies: {min: 1}"))
    config = _with_env(config, ECHO_ACK="1", ECHO_LATE_S="0.5", ECHO_SLOW_WORD="time", settle_s=1.0)
    report = await run_suite(config, cases, RunOptions(out_dir=tmp_path / "out"))
    one = report.cases[0]
    assert [r.text for r in one.observation.turns[0].replies] == ["working on it", "echo: hello"]
    assert one.status == "pass", [e.reason for e in one.evidence]
    assert any("echo-one: fail -> pass" in n for n in report.notes)
    lines = [json.loads(x) for x in (tmp_path / "out" / report.run_id / "results.jsonl").read_text().splitlines()]
    assert [x["status"] for x in lines if x["id"] == "echo-one"][0] == "fail"


async def test_a_duplicate_later_than_the_run_window_is_not_seen(tmp_path):
    # the documented limit: after the run has been quiet for settle_s, it stops listening
    config, cases = setup(tmp_path, cases=ONE)
    config = _with_env(config, ECHO_LATE_S="1.0", settle_s=0.3)
    report = await run_suite(config, cases, RunOptions(out_dir=tmp_path / "out"))
    assert report.cases[0].status == "pass"


async def test_waiting_for_quiet_holds_no_slot(tmp_path):
    # at concurrency 1, the next case is sent while the previous one still watches its closing
    # window: holding the slot through it, each case would start only after the previous finished
    config, cases = setup(tmp_path, cases=MANY)
    config = _with_env(config, settle_s=1.0)
    report = await run_suite(config, cases, RunOptions(out_dir=tmp_path / "out", concurrency=1))
    assert {c.status for c in report.cases} == {"pass"}
    obs = sorted((c.observation for c in report.cases), key=lambda o: o.turns[0].sent_at)
    overlapped = sum(1 for a, b in zip(obs, obs[1:]) if b.turns[0].sent_at < a.finished_at)
    assert overlapped == len(obs) - 1
    qw = report.perf["summary"]["quiet_window"]  # results.json summary.quiet_window
    assert qw["turns"] == 8 and qw["samples"] == 0 and qw["median_s"] == qw["run_end_s"] == QUIET_FLOOR_S
    assert qw["before_samples"] == {"between_turns_s": 1.0, "closing_s": QUIET_FLOOR_S}


async def test_between_turns_the_window_is_settle_s_until_a_gap_is_seen(tmp_path):
    config, cases = setup(tmp_path)  # echo-two-turns among them
    config = _with_env(config, settle_s=0.5)
    report = await run_suite(config, cases, RunOptions(out_dir=tmp_path / "out"))
    two = next(c for c in report.cases if c.id == "echo-two-turns").observation.turns
    assert two[0].settled_after_s >= 0.5 and two[1].settled_after_s < 0.5


def _with_env(config, settle_s: float, **env: str):
    target = config.target.model_copy(update={"env": {**config.target.env, **env}})
    return config.with_sections(target=target, sandbox=config.sandbox.model_copy(update={"settle_s": settle_s}))


def test_a_second_reply_after_a_busy_spell_is_no_long_silence():
    from harness.types import Event

    def call(at, ms, source="gateway"):
        return Event(source=source, name="llm", at=at, status=200, duration_ms=ms, request={}, response=None, keys=())

    busy = QuietWindow(0.6)
    busy.learn(replies(10.0, 10.5), [call(10.05, 200), call(10.3, 190)])  # the agent's calls end 10 ms before
    assert busy.gaps == [pytest.approx(0.01)] and busy.value == QUIET_FLOOR_S
    # the wrong twin: the same replies with nothing between them are a 0.5 s silence
    silent = QuietWindow(0.6)
    silent.learn(replies(10.0, 10.5), [call(9.0, 100), call(10.0, 0, source="driver")])
    assert silent.gaps == [pytest.approx(0.5)] and silent.value == 0.6
