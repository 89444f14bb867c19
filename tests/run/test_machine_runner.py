"""The machine rule through the real runner (loopback emulators, an in-process echo agent that
takes 1.5 s): a monitor whose readings are injected decides whether the 500 ms bound's breach
is the machine's (unavailable) or the agent's (fail). No assertion depends on the wall clock."""

from __future__ import annotations

import json

from harness.run.machine import MachineMonitor, Sample, Window
from harness.run.runner import RunOptions, run_suite
from tests.test_runner import setup

SLOW = """
layer: robustness
cases:
  - id: slow-echo
    send: "hello there"
    expect:
      reply: {regex: "^echo: hello there$"}
      latency_ms: {first_reply_max: 500}
"""


class InjectedMachine(MachineMonitor):
    """Every window reads the same injected figures; nothing is sampled."""

    def __init__(self, **figures):
        super().__init__(cores=2)
        self.figures = figures
        self.record(Sample(at=0.0, span_s=0.2, lag_s=figures.get("lag_max_s", 0.0)))

    def start(self) -> None:
        pass

    def window(self, start: float, end: float) -> Window:
        return Window(start=start, end=end, cores=2, samples=5, **self.figures)


BUSY = dict(lag_max_s=1.8, others_cores=1.7, own_cores=0.2, own_wait_s=2.5, cpu_wait=0.95, load1=6.2)
QUIET = dict(lag_max_s=0.01, others_cores=0.1, own_cores=0.6, own_wait_s=0.02, cpu_wait=0.05, load1=0.3)


async def test_a_breach_on_an_overloaded_machine_is_unavailable(tmp_path):
    config, cases = setup(tmp_path, mode="slow", cases=SLOW)
    report = await run_suite(config, cases, RunOptions(out_dir=tmp_path / "out", machine=InjectedMachine(**BUSY)))
    case = report.cases[0]
    assert case.status == "unavailable", [e.reason for e in case.evidence]
    latency = next(e for e in case.evidence if e.check == "latency_ms")
    assert latency.reason.startswith("machine overloaded (loop lag 1.8 s, load 6.2 on 2 cores")
    assert all(e.passed for e in case.evidence if e.check != "latency_ms")
    assert report.perf["summary"]["machine"]["excused"] == {"latency": 1, "agent_timeout": 0, "frozen": 0}
    assert case.machine["overloaded"] is True
    assert any(n.startswith("machine: max loop lag") for n in report.notes)
    assert report.summary.failed == 0 and report.summary.unavailable == 1
    line = json.loads((tmp_path / "out" / report.run_id / "results.jsonl").read_text().splitlines()[-1])
    assert line["machine"]["overloaded"] is True and line["status"] == "unavailable"  # the journal has it too


async def test_the_same_breach_on_a_quiet_machine_fails(tmp_path):
    config, cases = setup(tmp_path, mode="slow", cases=SLOW)
    report = await run_suite(config, cases, RunOptions(out_dir=tmp_path / "out", machine=InjectedMachine(**QUIET)))
    case = report.cases[0]
    assert case.status == "fail"
    latency = next(e for e in case.evidence if e.check == "latency_ms")
    assert latency.passed is False and latency.reason.startswith("first reply ")
    assert report.exit_code == 1 and report.perf["summary"]["machine"]["excused"]["latency"] == 0
    assert case.machine["overloaded"] is False


ACKED = """
layer: robustness
cases:
  - id: acked-echo
    send: "hello"
    expect:
      replies: {min: 2}
"""


class LaggedMachine(InjectedMachine):
    """A quiet machine whose loop, the monitor says, was ``lag`` s late since any instant."""

    def __init__(self, lag: float):
        super().__init__(**QUIET)
        self.lag = lag

    def lag_since(self, start: float) -> float:
        return self.lag


async def _acked(tmp_path, lag: float):
    config, cases = setup(tmp_path, cases=ACKED)
    config = config.with_sections(target=config.target.model_copy(update={"env": {**config.target.env, "ECHO_ACK": "1",
                                                                               "ECHO_LATE_S": "3.5"}}))
    report = await run_suite(config, cases, RunOptions(out_dir=tmp_path / "out", machine=LaggedMachine(lag)))
    return report.cases[0].observation.turns[0]


async def test_the_reply_timeout_counts_only_time_the_harness_ran(tmp_path):
    # "working on it" at once, the answer 3.5 s later, a 3 s reply timeout: a loop 5 s late
    # (a starved machine) waits those 5 s more and sees the answer in its turn
    turn = await _acked(tmp_path, lag=5.0)
    assert not turn.timed_out and len(turn.replies) == 2


async def test_without_lag_the_reply_timeout_is_the_configured_one(tmp_path):
    turn = await _acked(tmp_path, lag=0.0)
    assert turn.timed_out and len(turn.replies) == 1
