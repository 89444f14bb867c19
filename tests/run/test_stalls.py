"""A quiet window counts only time the harness heard (run/quiet.py ``Stalls``): while its own
loop is stalled, what the agent sends waits unread in the sandbox's sockets, so a window that
"passed" then must not end the turn and send the next one first."""

from __future__ import annotations

from harness.run.quiet import STALL_S, TICK_S, Stalls
from tests.run.test_idle import _run


class Clock:
    def __init__(self, t: float = 100.0):
        self.t = t

    def __call__(self) -> float:
        return self.t


def test_a_late_tick_is_a_stall_and_its_seconds_are_not_heard():
    clock = Clock()
    stalls = Stalls(clock=clock)
    stalls.last_tick = clock.t
    clock.t += TICK_S
    stalls.tick()  # on time: no stall
    assert stalls.count == 0 and abs(stalls.heard(100.0, clock.t) - TICK_S) < 1e-9
    clock.t += 2.5  # the loop did not run for 2.5 s
    stalls.tick()
    assert stalls.count == 1
    assert abs(stalls.deaf(100.0, clock.t) - 2.5) < 1e-9
    assert abs(stalls.heard(100.0, clock.t) - TICK_S) < 1e-9
    # a mark after the stall: all of its quiet was heard (the ticker ran on time since)
    end = clock.t
    clock.t += TICK_S
    stalls.tick()
    assert stalls.deaf(end, clock.t) == 0.0 and stalls.count == 1
    clock.t -= TICK_S
    # a mark inside the stall: only its part after the mark is lost
    assert abs(stalls.deaf(101.0, clock.t) - (clock.t - 101.0)) < 1e-9


def test_a_stall_the_ticker_has_not_seen_yet_counts_too():
    clock = Clock()
    stalls = Stalls(clock=clock)
    stalls.last_tick = clock.t
    now = clock.t + 1.0  # the loop runs again; the ticker's turn has not come
    assert stalls.pending(now)
    assert abs(stalls.heard(clock.t, now)) < 1e-9
    assert not stalls.pending(clock.t + TICK_S + STALL_S / 2)


async def test_the_agents_reply_during_a_stall_stays_in_its_own_turn(tmp_path):
    # an in-process agent holds the shared loop 1 s just after the first turn's webhook answered,
    # then echoes; the turn expects no reply, so only its window (0.6 s) ends it: on wall time
    # alone it would end at the stall's end and the echo would land beside the second turn's
    cases = """
layer: robustness
cases:
  - id: echo-stall
    turns:
      - send: "stall now"
        expect: {replies: {max: 1}}
      - send: "two"
        expect: {reply: {contains: "two"}, replies: {exact: 1}}
"""
    report = await _run(tmp_path, cases=cases, inprocess=True, ECHO_STALL_S="1.0")
    case = report.cases[0]
    turns = case.observation.turns
    assert [r.text for r in turns[0].replies] == ["echo: stall now"], [[r.text for r in t.replies] for t in turns]
    assert [r.text for r in turns[1].replies] == ["echo: two"]
    assert case.status == "pass", [e.reason for e in case.evidence if not e.passed]


TOOL_CASES = """
layer: robustness
cases:
  - id: echo-tool-late
    turns:
      - send: "tool please"
        expect: {replies: {exact: 0}, tools_called: [lookup]}
      - send: "two"
        expect: {reply: {contains: "two"}, replies: {exact: 1}}
"""


async def test_a_turn_that_expects_a_tool_waits_for_its_call_as_for_a_reply(tmp_path):
    # the tool is called 1.0 s after the message, later than the 0.6 s window: the turn waits for it
    report = await _run(tmp_path, cases=TOOL_CASES, inprocess=True, ECHO_TOOL_S="1.0", TOOLS_URL="{tools_url}")
    case = report.cases[0]
    turns = case.observation.turns
    assert [e.name for e in turns[0].events if e.source != "driver"] == ["lookup"]
    assert case.status == "pass", [e.reason for e in case.evidence if not e.passed]


async def test_a_tool_never_called_still_fails_its_turn_at_the_reply_timeout(tmp_path):
    # the wrong twin: the agent neither replies nor calls the tool (silent): the wait ends at the
    # reply timeout and the check fails
    report = await _run(tmp_path, cases=TOOL_CASES, inprocess=True, ECHO_MODE="silent", TOOLS_URL="{tools_url}")
    case = report.cases[0]
    failed = {(e.check, e.turn) for e in case.evidence if e.passed is False}
    assert ("tools_called", 0) in failed and case.status == "fail"
    assert case.observation.turns[0].timed_out


def test_a_short_stall_is_drained_but_still_heard():
    from harness.run.quiet import DEAF_MIN_S

    clock = Clock()
    stalls = Stalls(clock=clock)
    stalls.last_tick = clock.t
    clock.t += DEAF_MIN_S / 2  # a stall of a loaded machine, shorter than a window's margin
    stalls.tick()
    assert stalls.count == 1 and stalls.deaf(100.0, clock.t) == 0.0  # not stretched


async def test_a_waiter_drains_after_any_stall_since_it_last_looked():
    clock = Clock()
    stalls = Stalls(clock=clock)
    stalls.last_tick = clock.t
    ear = stalls.ear()
    assert not await ear.drain(clock.t)
    clock.t += 0.05
    stalls.tick()  # the ticker saw it first
    assert await ear.drain(clock.t)  # still drained once by this waiter
    assert not await ear.drain(clock.t)
