"""harness calibrate stops each regression's run at its first hard failure (issue 26 item 3).

The scheduling is tested on a synthetic runner (``_one_run`` replaced: which cases each run
got, in what order, with what --maxfail); the real early stop on docbot is in test_calibrate.py.
"""

from __future__ import annotations

import asyncio

from harness.night import calibrate as cal_mod
from harness.night.calibrate import Calibration, Regression, RunOutcome, own_layer_first, verdict_line
from harness.types import Case, CaseResult, CheckSpec, Counts, Evidence, RunReport, Turn

MAXFAIL = "not started: --maxfail 1 reached (1 case(s) failed or errored)"


def _case(cid: str, layer: str) -> Case:
    return Case(id=cid, layer=layer, channel="telegram", turns=(Turn(send=cid, checks=(CheckSpec("replies", 1),)),))


SUITE = [_case("r1", "robustness"), _case("m1", "multiturn"), _case("r2", "robustness"), _case("m2", "multiturn"),
         _case("alarm", "multiturn")]


def _res(c: Case, status: str, error: str = "") -> CaseResult:
    ev = (Evidence(check="replies", turn=0, availability="ready", passed=status != "fail", reason="said so"),)
    return CaseResult(id=c.id, layer=c.layer, channel="telegram", status=status,
                      evidence=() if status == "skipped" else ev, error=error)


def _fake(breaks: dict[str | None, set[str]], calls: list):
    """A runner: regression -> the cases it makes fail; honours maxfail like the real one (sequentially)."""

    async def one_run(config, cases, label, regression, noise, out, concurrency, services, maxfail=None,
                      run_id=None, **_kw):
        calls.append((run_id or label, [c.id for c in cases], maxfail))
        await asyncio.sleep(0)
        results, failed = [], 0
        for c in cases:
            if maxfail is not None and failed >= maxfail:
                results.append(_res(c, "skipped", MAXFAIL))
                continue
            bad = c.id in breaks.get(regression, set()) or c.id in breaks.get(None, set())
            failed += bad
            results.append(_res(c, "fail" if bad else "pass"))
        report = RunReport(run_id=label, started_at="", finished_at="", harness_version="", target={},
                           golden_version="", models={}, summary=Counts(), layers={}, cases=tuple(results))
        return RunOutcome(label, regression, noise, report, 1.0)

    return one_run


REGS = [Regression("rob", "robustness", "x"), Regression("multi", "multiturn", "y"),
        Regression("none", "robustness", "z")]


def _calibrate(monkeypatch, breaks, full=False, only=()):
    calls: list = []
    seen: list[RunOutcome] = []
    monkeypatch.setattr(cal_mod, "_one_run", _fake(breaks, calls))
    monkeypatch.setattr(cal_mod, "list_regressions", lambda config: REGS)
    import harness.services as services

    monkeypatch.setattr(services, "default_factories", lambda: {})  # no embedder, no critic
    result = asyncio.run(cal_mod.calibrate(None, SUITE, None, noise=False, full=full, on_run=seen.append,
                                           only=only, baseline=False))  # the scheduling, not the baseline phase
    return result, {label: (ids, mf) for label, ids, mf in calls}, seen


def test_own_layer_first_keeps_the_suite_order_within_each_part():
    assert [c.id for c in own_layer_first(SUITE, "multiturn")] == ["m1", "m2", "alarm", "r1", "r2"]
    assert [c.id for c in own_layer_first(SUITE, "cost")] == [c.id for c in SUITE]


def test_each_regression_stops_at_its_first_failure(monkeypatch):
    cal, calls, seen = _calibrate(monkeypatch, {"rob": {"r2", "m1"}, "multi": {"m2"}})
    assert calls["clean-1"] == ([c.id for c in SUITE], None)                      # clean: the whole suite
    assert calls["regression-rob"] == (["r1", "r2", "m1", "m2", "alarm"], 1)      # own layer first, maxfail 1
    data = cal.to_dict()
    rows = {r["name"]: r for r in data["regressions"]}
    assert data["early_stop"] is True
    assert rows["rob"]["caught_by"] == ["r2"] and rows["rob"]["stopped_early"] is True  # m1 never started
    assert rows["multi"]["caught_by"] == ["m2"] and rows["multi"]["stopped_early"] is True
    assert rows["none"]["caught_by"] == [] and rows["none"]["stopped_early"] is False  # ran it all: missed
    assert data["missed"] == ["none"]
    from harness.report.calibration_html import render_calibration_html

    assert "stopped at its first hard failure" in render_calibration_html(data)
    verdicts = {o.regression: o.verdict for o in seen if o.regression}
    assert verdicts == {"rob": "caught by r2 (hand-written)", "multi": "caught by m2 (hand-written)",
                        "none": "missed"}
    assert [o.label for o in seen][0] == "clean-1"  # no regression's verdict before the clean run is in


def test_a_stop_on_a_clean_false_alarm_runs_again_without_it(monkeypatch):
    # `alarm` fails on the clean agent too: stopping there told nothing about `multi`
    cal, calls, seen = _calibrate(monkeypatch, {None: {"alarm"}, "multi": {"r1"}})
    assert calls["regression-multi"] == (["m1", "m2", "alarm", "r1", "r2"], 1)
    assert calls["regression-multi-again"] == (["m1", "m2", "r1", "r2"], 1)
    rows = {r["name"]: r for r in cal.to_dict()["regressions"]}
    assert rows["multi"]["caught_by"] == ["r1"]
    assert rows["multi"]["seconds"] == 2.0  # both runs' time
    # `rob` breaks nothing and reached the alarm last (nothing left to skip): one run, missed
    assert rows["rob"]["caught_by"] == [] and rows["rob"]["stopped_early"] is False
    assert "regression-rob-again" not in calls
    assert cal.to_dict()["false_alarms"]["clean"] == ["alarm"]


def test_full_runs_every_regression_on_the_whole_suite(monkeypatch):
    cal, calls, _ = _calibrate(monkeypatch, {"rob": {"r2", "m1"}})
    full, full_calls, _ = _calibrate(monkeypatch, {"rob": {"r2", "m1"}}, full=True)
    assert all(mf is None and ids == [c.id for c in SUITE] for ids, mf in full_calls.values())
    rows = {r["name"]: r for r in full.to_dict()["regressions"]}
    assert rows["rob"]["caught_by"] == ["m1", "r2"] and rows["rob"]["stopped_early"] is False
    assert full.to_dict()["early_stop"] is False
    from harness.report.calibration_html import render_calibration_html

    assert "stopped at its first hard failure" not in render_calibration_html(full.to_dict())


def test_verdict_line():
    assert verdict_line({"caught_by": ["a", "b"], "first_evidence": {"case": "b", "kind": "baseline"}}) \
        == "caught by b (baseline) and 1 more"
    assert verdict_line({"caught_by": [], "first_evidence": None, "error": ""}) == "missed"
    assert verdict_line({"caught_by": [], "first_evidence": None, "error": "TargetError: boom"}) \
        == "missed (run failed: TargetError: boom)"
    empty = Calibration(regressions=[], clean=[], noisy=[], broken=[], seconds=0.0)
    assert empty.to_dict()["early_stop"] is False  # a Calibration built by hand is the full matrix


def test_a_shared_critic_scores_its_health_once(monkeypatch, tmp_path):
    """Calibration's runs share one critic: its health set is scored once, not once per run."""
    from harness.models import critic_health as H
    from harness.models.factories import CriticService

    scored: list[int] = []
    monkeypatch.setattr(H, "load_examples", lambda d: ["ex1", "ex2"])
    monkeypatch.setattr(H, "describe", lambda name, a: f"critic health of {name}")
    monkeypatch.setattr(CriticService, "name", property(lambda self: "fake"))
    monkeypatch.setattr(CriticService, "source", property(lambda self: "test"))

    class Agreement:
        def as_dict(self):
            return {"accuracy": 1.0}

    async def score_obj(critic, examples, read_source):
        scored.append(len(examples))
        return Agreement()

    monkeypatch.setattr(H, "score_critic", score_obj)
    svc = CriticService(backend=None, docs_dir=tmp_path, health_dir=tmp_path)
    svc.used = True  # a case was judged (a critic nothing asked scores no health: test_judge_health_only_when_judged)
    asyncio.run(svc.finalize())
    asyncio.run(svc.finalize())
    assert scored == [2]
    assert svc.health == {"critic": "fake", "source": "test", "accuracy": 1.0}
    # a fresh service (the next night's run) scores again
    fresh = CriticService(backend=None, docs_dir=tmp_path, health_dir=tmp_path)
    fresh.used = True
    asyncio.run(fresh.finalize())
    assert scored == [2, 2]


def test_calibration_runs_share_services_and_only_the_clean_run_finalizes(monkeypatch):
    """One embedder and critic for every run; only clean-1 does the end-of-run scoring."""
    from harness.night.calibrate import _unscored
    from harness.services import Services

    finalized: list[str] = []

    class Critic:
        async def finalize(self):
            finalized.append("critic")

    shared = Services(config=None, factories={"critic": lambda s: Critic()})
    view = _unscored(shared)
    assert view.get("critic") is shared.get("critic")  # made once, seen by both
    asyncio.run(view.finalize())
    assert finalized == []
    asyncio.run(shared.finalize())
    assert finalized == ["critic"]
    calls: list = []
    monkeypatch.setattr(cal_mod, "list_regressions", lambda config: REGS[:1])
    seen_services: dict[str, object] = {}

    async def one_run(config, cases, label, regression, noise, out, concurrency, services, maxfail=None,
                      run_id=None, **_kw):
        seen_services[label] = services
        return await _fake({}, calls)(config, cases, label, regression, noise, out, concurrency, services, maxfail,
                                      run_id)

    monkeypatch.setattr(cal_mod, "_one_run", one_run)
    import harness.services as services_mod

    monkeypatch.setattr(services_mod, "default_factories", lambda: {})
    asyncio.run(cal_mod.calibrate(None, SUITE, None, noise=True, repeat=2))
    assert type(seen_services["clean-1"]) is Services
    assert all(type(s).__name__ == "_Unscored" for label, s in seen_services.items() if label != "clean-1")
    assert len({id(s._made) for s in seen_services.values()}) == 1


# -- round 3: a regression tries last time's catchers alone; the latency trend's takes the suite ---

def _calibrate_with(monkeypatch, breaks, last, full=False):
    monkeypatch.setattr(cal_mod, "read_last", lambda config: last)
    return _calibrate(monkeypatch, breaks, full=full)


def test_a_regression_tries_the_cases_that_caught_it_last_time_alone(monkeypatch):
    last = {"rob": {"caught_by": ["r2", "gone-case", "m1"], "seconds": 5.0}}
    cal, calls, seen = _calibrate_with(monkeypatch, {"rob": {"r2", "m1"}, "multi": {"m2"}}, last)
    assert calls["regression-rob"] == (["r2", "m1"], 1)  # only its catchers (one no longer in the suite)
    assert "regression-rob-rest" not in calls
    rows = {r["name"]: r for r in cal.to_dict()["regressions"]}
    assert rows["rob"]["caught_by"] == ["r2"] and rows["rob"]["stopped_early"] is True  # m1: after the stop
    assert {o.regression: o.verdict for o in seen if o.regression}["rob"] == "caught by r2 (hand-written)"
    assert calls["regression-multi"] == (["m1", "m2", "alarm", "r1", "r2"], 1)  # no record: as before


def test_when_last_times_catchers_pass_the_rest_of_the_suite_runs(monkeypatch):
    # `rob` now breaks r1 only (last time r2): r2 alone tells nothing, the rest runs as with no record
    last = {"rob": {"caught_by": ["r2"], "seconds": 5.0}}
    cal, calls, _ = _calibrate_with(monkeypatch, {"rob": {"r1"}}, last)
    assert calls["regression-rob"] == (["r2"], 1)
    assert calls["regression-rob-rest"] == (["r1", "m1", "m2", "alarm"], 1)
    rows = {r["name"]: r for r in cal.to_dict()["regressions"]}
    assert rows["rob"]["caught_by"] == ["r1"] and rows["rob"]["seconds"] == 2.0  # both runs' time
    # a catcher that fails on the clean agent too is no catch either: the rest, without it
    cal, calls, _ = _calibrate_with(monkeypatch, {None: {"alarm"}, "multi": {"m2"}},
                                    {"multi": {"caught_by": ["alarm"], "seconds": 1.0}})
    assert calls["regression-multi"] == (["alarm"], 1)
    assert calls["regression-multi-rest"] == (["m1", "m2", "r1", "r2"], 1)
    assert {r["name"]: r for r in cal.to_dict()["regressions"]}["multi"]["caught_by"] == ["m2"]


def test_a_regression_caught_by_the_latency_trend_runs_the_whole_suite_at_once(monkeypatch):
    last = {"rob": {"caught_by": ["r2"], "seconds": 50.0, "whole": True, "trend": True}}
    cal, calls, _ = _calibrate_with(monkeypatch, {"rob": {"r2"}}, last)
    assert calls["regression-rob"] == ([c.id for c in SUITE], None)
    # caught by the trend in a run that stopped early: no catcher alone, the suite with the stop
    last = {"rob": {"caught_by": ["r2"], "seconds": 50.0, "whole": False, "trend": True}}
    cal, calls, _ = _calibrate_with(monkeypatch, {"rob": {"r2"}}, last)
    assert calls["regression-rob"] == (["r2", "r1", "m1", "m2", "alarm"], 1)
    # --full: every regression whole, whatever the record
    _, calls, _ = _calibrate_with(monkeypatch, {"rob": {"r2"}}, last, full=True)
    assert all(mf is None for _ids, mf in calls.values())


def _outcome(evidence_check: str, skipped: bool = False) -> RunOutcome:
    ev = (Evidence(check=evidence_check, turn=None, availability="ready", passed=False, reason="slower"),)
    cases = [CaseResult(id="c1", layer="cost", channel="telegram", status="fail", evidence=ev)]
    if skipped:
        cases.append(CaseResult(id="c2", layer="cost", channel="telegram", status="skipped", evidence=(),
                                error=MAXFAIL))
    report = RunReport(run_id="r", started_at="", finished_at="", harness_version="", target={},
                       golden_version="", models={}, summary=Counts(), layers={}, cases=tuple(cases))
    return RunOutcome("regression-x", "x", False, report, 1.0)


def test_needs_whole_only_for_a_whole_run_the_trend_caught():
    from harness.night.calibrate import caught_by_trend, needs_whole

    assert caught_by_trend(_outcome("baseline.latency_trend", skipped=True), set()) is True
    assert caught_by_trend(_outcome("baseline.latency"), set()) is False

    assert needs_whole(_outcome("baseline.latency_trend"), set()) is True
    assert needs_whole(_outcome("baseline.latency"), set()) is False  # a per-case check: a stop would do
    assert needs_whole(_outcome("baseline.latency_trend", skipped=True), set()) is False  # it stopped early
    assert needs_whole(_outcome("baseline.latency_trend"), {"c1"}) is False  # the clean agent fails it too
    partial = _outcome("baseline.latency_trend")
    partial.partial = True
    assert needs_whole(partial, set()) is False


def test_a_run_whose_target_did_not_start_starts_once_more(monkeypatch, tmp_path):
    from harness.errors import TargetError

    asked: list[str] = []

    async def run_suite(config, cases, options):
        asked.append(options.run_id)
        if len(asked) == 1 or options.run_id.startswith("always"):
            raise TargetError("something already answers at 127.0.0.1:39661 before the target has started")
        return "the report"

    monkeypatch.setattr(cal_mod, "run_suite", run_suite)
    monkeypatch.setattr(cal_mod, "_with_env", lambda config, env: config)
    got = asyncio.run(cal_mod._one_run(None, SUITE, "noise-1", None, True, tmp_path, None, None))
    assert asked == ["noise-1", "noise-1-restarted"] and got.report == "the report" and got.error == ""
    got = asyncio.run(cal_mod._one_run(None, SUITE, "always", None, True, tmp_path, None, None))
    assert got.report is None and got.error.startswith("TargetError: something already answers")
    assert asked[2:] == ["always", "always-restarted"]  # once more only


def test_a_catcher_the_overloaded_machine_left_unjudged_runs_again_with_the_rest(monkeypatch):
    # r2 caught `rob` last time; now its first run is excused (``unavailable``: the machine was
    # overloaded), neither a catch nor a pass: the rest of the suite takes it again and it is caught
    monkeypatch.setattr(cal_mod, "read_last", lambda config: {"rob": {"caught_by": ["r2"], "seconds": 5.0}})
    monkeypatch.setattr(cal_mod, "list_regressions", lambda config: REGS[:1])
    import harness.services as services

    monkeypatch.setattr(services, "default_factories", lambda: {})
    calls: list = []
    plain = _fake({"rob": {"r2"}}, calls)

    async def one_run(config, cases, label, regression, noise, out, concurrency, shared, maxfail=None,
                      run_id=None, **kw):
        got = await plain(config, cases, label, regression, noise, out, concurrency, shared, maxfail, run_id)
        if run_id is None and regression == "rob":  # the first try: excused
            got.report = _excused(got.report)
        return got

    monkeypatch.setattr(cal_mod, "_one_run", one_run)
    cal = asyncio.run(cal_mod.calibrate(None, SUITE, None, noise=False, baseline=False))
    by_label = {label: (ids, mf) for label, ids, mf in calls}
    assert by_label["regression-rob"] == (["r2"], 1)
    assert by_label["regression-rob-rest"][0][0] == "r2"  # tried again, first
    assert {r["name"]: r for r in cal.to_dict()["regressions"]}["rob"]["caught_by"] == ["r2"]


def _excused(report: RunReport) -> RunReport:
    from dataclasses import replace

    return replace(report, cases=tuple(replace(c, status="unavailable", evidence=()) for c in report.cases))
