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
    assert report.perf["summary"]["machine"]["excused"] == {"latency": 1, "agent_timeout": 0}
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
