"""Anomalies people can trust (issue 16): enough history, a robust spread, like compared with like.

Six nights of a tiny clean agent (tests/agents/echo.py, in process): the first five give no
anomaly; in the sixth a slow-down is switched on for two cases only, and only those two get
``anomaly.latency_ms``.
"""

from __future__ import annotations


import pytest

from harness.cases import load_cases
from harness.config import load_config
from harness.errors import ConfigError
from harness.report import write_all
from harness.run.anomaly import History, HistoryRun, Thresholds, anomalies, comparable
from harness.run.budget import anomaly_thresholds, budget_settings
from harness.run.machine import MachineMonitor
from harness.run.runner import RunOptions, run_suite
from harness.types import CaseResult, Tokens
from tests.test_runner import setup

CASES = """
layer: robustness
cases:
""" + "".join(f"""
  - id: case-{i}
    send: "{'turtle' if i in (2, 5) else 'hare'} number {i}"
    expect:
      reply: {{contains: "number {i}"}}
""" for i in range(8))


async def _night(tmp_path, n: int, slow: bool, concurrency: int | None = None):
    """Night ``n`` (run ids in time order); ``slow``: the agent answers "turtle" messages 1.5 s late."""
    if n == 0:
        setup(tmp_path, cases=CASES)
    config, cases = load_config(tmp_path / "harness.toml", environ={}), load_cases(tmp_path / "fixtures")
    if slow:
        config = config.with_sections(target=config.target.model_copy(update={"env": {**config.target.env, "ECHO_SLOW_WORD": "turtle"}}))
    # the slow-down must be caught whatever else runs on the machine (no machine rule: harness/run/machine.py)
    report = await run_suite(config, cases, RunOptions(out_dir=tmp_path / "out", run_id=f"20261201-00000{n}-aaaa",
                                                      concurrency=concurrency, machine=MachineMonitor.off()))
    write_all(report, tmp_path / "out" / report.run_id)  # results.json: the next night's history
    return report


def _anomalous(report) -> dict[str, list[str]]:
    return {c.id: [e.check for e in c.evidence if e.check.startswith("anomaly.") and e.passed is False]
            for c in report.cases if any(e.check.startswith("anomaly.") and e.passed is False for e in c.evidence)}


async def test_five_clean_nights_then_a_slow_down_on_two_cases(tmp_path):
    for n in range(5):
        report = await _night(tmp_path, n, slow=False)
        assert report.exit_code == 0 and _anomalous(report) == {}, (n, _anomalous(report))
        assert report.perf["summary"]["anomalies"]["checked"] is False  # fewer than 5 earlier nights
    sixth = await _night(tmp_path, 5, slow=True)
    assert sixth.perf["summary"]["anomalies"]["checked"] is True
    assert sixth.perf["summary"]["anomalies"]["baseline_runs"] == 5
    assert _anomalous(sixth) == {"case-2": ["anomaly.latency_ms"], "case-5": ["anomaly.latency_ms"]}
    ev = next(e for c in sixth.cases if c.id == "case-2" for e in c.evidence if e.check == "anomaly.latency_ms")
    assert "median of 5 earlier passing runs" in ev.reason


async def test_a_night_at_another_concurrency_is_not_compared_and_says_so(tmp_path):
    for n in range(5):
        await _night(tmp_path, n, slow=False)
    other = await _night(tmp_path, 5, slow=True, concurrency=1)
    assert _anomalous(other) == {}
    note = other.perf["summary"]["anomalies"]["note"]
    assert "skipped" in note and "concurrency 1 differs" in note and "(8)" in note
    assert note in other.notes


def _hist(values: list[float], basis=None) -> History:
    return History([HistoryRun(f"2026110{i}-000000-aaaa", basis or {}, {"c1": {"latency_ms": v}})
                    for i, v in enumerate(values)])


def _result(latency: float) -> CaseResult:
    return CaseResult(id="c1", layer="robustness", channel="telegram", status="pass", evidence=(),
                      latency_ms=latency, llm_calls=0, tokens=Tokens(0, 0), cost_usd=None)


@pytest.mark.parametrize("history, now, fires", [
    ([300.0] * 4, 5000.0, False),                    # 4 earlier runs: not enough history
    ([300.0] * 5, 5000.0, True),                     # 5: enough
    ([300.0] * 5, 1200.0, False),                    # 4x, but under the 1000 ms minimum change
    ([300.0, 1500.0, 900.0, 2500.0, 1800.0], 3300.0, False),  # a wandering case: 2.2x, within 3 robust spreads
    ([300.0, 310.0, 290.0, 305.0, 295.0], 1400.0, True),      # a steady case: 1.1 s more is an anomaly
])
def test_min_runs_spread_and_minimum_change(history, now, fires):
    assert bool(anomalies(_result(now), _hist(history), thresholds=Thresholds())) is fires


def test_thresholds_are_configurable(tmp_path):
    cfg = tmp_path / "harness.toml"
    cfg.write_text('[target]\nname = "x"\ninprocess = "m:f"\n[budget]\nanomaly_min_runs = 2\nanomaly_mad_k = 1.0\n'
                   'anomaly_min_latency_ms = 10\nanomaly_layers = ["cost"]\n')
    s = budget_settings(load_config(cfg, environ={}))
    th = anomaly_thresholds(s)
    assert (th.min_runs, th.mad_k, th.min_change["latency_ms"], s.anomaly_layers) == (2, 1.0, 10.0, ("cost",))
    assert anomalies(_result(500.0), _hist([300.0, 300.0]), thresholds=th)  # 2 runs, +200ms: enough here
    cfg.write_text('[target]\nname = "x"\ninprocess = "m:f"\n[budget]\nanomaly_min_runs = 0\n')
    with pytest.raises(ConfigError, match="anomaly_min_runs"):
        budget_settings(load_config(cfg, environ={}))


def test_comparable_names_what_differs():
    tonight = {"concurrency": 8, "config": "sha256:a"}
    hist = History([HistoryRun(f"2026110{i}-000000-aaaa", {"concurrency": 8, "config": "sha256:b"}, {})
                    for i in range(6)])
    like, note = comparable(hist, tonight, 5)
    assert like.entries == [] and "settings differ" in note and "concurrency" not in note.split(":", 1)[1].split(";")[1]
    same, note = comparable(History(hist.entries[:5] and [HistoryRun(e.run_id, tonight, {}) for e in hist.entries]),
                            tonight, 5)
    assert note == "" and len(same.entries) == 6


def test_the_basis_ignores_the_agent_version_but_not_its_settings(tmp_path):
    from harness.run.anomaly import basis

    def config(extra: str):
        cfg = tmp_path / "harness.toml"
        cfg.write_text('[target]\nname = "x"\ninprocess = "m:f"\n' + extra)
        return load_config(cfg, environ={})

    plain = basis(config(""), 8)
    assert basis(config('version = "2.0"\n'), 8) == plain  # a new release is compared with the old one
    assert basis(config(""), 1) != plain
    assert basis(config('[target.env]\nFLAG = "1"\n'), 8)["config"] != plain["config"]
