"""The harness's overhead figure (harness/run/overhead.py): table tests of the agent's held
time and critical path, and `harness run` printing it and writing ``summary.overhead``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from harness.run.overhead import case_held_s, critical_path_s, overhead_line, run_overhead, turn_held_s
from harness.types import CaseResult, Event, Observation, Reply, TurnObservation

sys.path.insert(0, str(Path(__file__).resolve().parent / "ops"))

T0 = 1_000_000.0


def _reply(at: float) -> Reply:
    return Reply(channel="telegram", chat="1", text="hi", at=T0 + at, method="sendMessage")


def _event(at: float, ms: float = 0.0, source: str = "gateway") -> Event:
    return Event(source=source, name="llm", at=T0 + at, status=200, duration_ms=ms)


def _turn(sent: float, replies=(), events=(), settled: float = 0.5) -> TurnObservation:
    return TurnObservation(index=0, sent_at=T0 + sent, delivery_status=200, delivery_error="",
                           replies=tuple(_reply(r) for r in replies), events=tuple(events), settled_after_s=settled)


@pytest.mark.parametrize("turn, held", [
    (_turn(0, replies=[0.2]), 0.2),                                   # delivery to the one reply
    (_turn(0, replies=[0.2, 1.5]), 1.5),                              # to the LAST reply, not the first
    (_turn(0, replies=[0.2], events=[_event(0.1, ms=900)]), 1.0),     # a call still answering after the reply
    (_turn(0, replies=[2.0], events=[_event(0.1, ms=100)]), 2.0),     # the reply later than the call
    (_turn(0, events=[_event(0.0, source="driver"), _event(0.3)]), 0.3),  # the delivery itself is not the agent's
    (_turn(0, events=[_event(5.0, source="driver")]), 0.0),           # only the delivery: the agent did nothing
    (_turn(0), 0.0),                                                  # silent turn: held nothing
    (_turn(3, replies=[3.25], settled=10.0), 0.25),                   # the settle wait is the harness's
])
def test_turn_held(turn, held):
    assert turn_held_s(turn) == pytest.approx(held)


def _obs(*turns: TurnObservation) -> Observation:
    return Observation(case_id="c", channel="telegram", chat_id="1", turns=turns, started_at=T0, finished_at=T0 + 9)


def test_case_held_sums_turns_and_not_the_gaps_between_them():
    obs = _obs(_turn(0, replies=[0.5]), _turn(4, replies=[4.25]))  # 3.5 s between turns: the harness's
    assert case_held_s(obs) == pytest.approx(0.75)
    assert case_held_s(None) == 0.0


@pytest.mark.parametrize("held, conc, path", [
    ([1.0, 1.0, 1.0, 1.0], 2, 2.0),   # summed over the concurrency
    ([1.0, 1.0, 1.0, 1.0], 1, 4.0),   # sequential: the sum
    ([10.0, 1.0, 1.0], 4, 10.0),      # never less than the longest case
    ([3.0, 3.0], 8, 3.0),             # more slots than cases: the longest
    ([], 8, 0.0),
    ([2.0, 2.0], 0, 4.0),             # a nonsense concurrency counts as 1, never divides by 0
])
def test_critical_path(held, conc, path):
    assert critical_path_s(held, conc) == pytest.approx(path)


def _case(cid: str, obs: Observation | None, attempts: int = 1, status: str = "pass") -> CaseResult:
    return CaseResult(id=cid, layer="robustness", channel="telegram", status=status, evidence=(), attempts=attempts,
                      observation=obs)


def test_run_overhead_and_its_line():
    cases = [_case("a", _obs(_turn(0, replies=[2.0]))), _case("b", _obs(_turn(0, replies=[2.0])))]
    o = run_overhead(cases, wall_s=5.04, concurrency=1)
    assert o == {"wall_s": 5.04, "agent_critical_path_s": 4.0, "ratio": 1.26}
    assert overhead_line(o) == "harness overhead: wall 5.0 s / agent critical path 4.0 s = 1.26x"
    # a bot that answers within milliseconds: its path is not printed as 0.0 s
    fast = run_overhead([_case("a", _obs(_turn(0, replies=[0.004])))], wall_s=1.0, concurrency=1)
    assert fast == {"wall_s": 1.0, "agent_critical_path_s": 0.004, "ratio": 250.0}
    assert overhead_line(fast) == "harness overhead: wall 1.0 s / agent critical path 0.004 s = 250.00x"
    # repeats: the kept attempt counts once per attempt
    assert run_overhead([_case("a", _obs(_turn(0, replies=[2.0])), attempts=3)], 12.0, 1)["agent_critical_path_s"] == 6.0
    # skipped cases (no observation) hold nothing; a run where the agent held nothing has no ratio
    none = run_overhead([_case("s", None, attempts=0, status="skipped")], wall_s=1.0, concurrency=4)
    assert none == {"wall_s": 1.0, "agent_critical_path_s": 0.0, "ratio": None}
    assert overhead_line(none).endswith("= n/a (the agent held no turn)")


def test_harness_run_prints_and_writes_the_overhead(tmp_path, capsys):
    from ops_support import echo_cases, make_project

    from harness import cli

    cfg = make_project(tmp_path, cases=echo_cases(2))
    assert cli.main(["run", "--config", str(cfg), "--run-id", "ovh", "-v"]) == 0
    lines = capsys.readouterr().out.splitlines()
    line = next(x for x in lines if x.startswith("harness overhead: wall "))
    assert lines.index(line) > next(i for i, x in enumerate(lines) if "echo-1" in x)  # after the cases
    run_dir = tmp_path / "reports" / "ovh"
    o = json.loads((run_dir / "results.json").read_text())["summary"]["overhead"]
    assert set(o) == {"wall_s", "agent_critical_path_s", "ratio"}
    assert o["agent_critical_path_s"] > 0 and o["wall_s"] >= o["agent_critical_path_s"]
    assert line == overhead_line(o)
    assert line in (run_dir / "summary.md").read_text()


def test_cases_a_resume_kept_are_not_on_the_path():
    from harness.cli import run as cli_run
    from harness.types import Counts, RunReport

    cases = (_case("kept", _obs(_turn(0, replies=[50.0]))), _case("new", _obs(_turn(0, replies=[2.0]))))
    report = RunReport(run_id="r", started_at="", finished_at="", harness_version="", target={}, golden_version="",
                       models={}, summary=Counts(), layers={}, cases=cases)
    d: dict = {"summary": {}, "notes": []}
    report, line = cli_run.with_overhead(report, d, concurrency=1, resumed={"kept"})
    assert d["summary"]["overhead"]["agent_critical_path_s"] == 2.0  # not 52: "kept" ran in the killed process
    assert report.perf["summary"]["overhead"] == d["summary"]["overhead"]
    assert d["notes"] == [line] and report.notes == (line,)
