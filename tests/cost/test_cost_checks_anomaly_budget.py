"""The cost checks, anomalies against history and the budget guard, tabled directly."""

from __future__ import annotations

import json

import pytest

from harness.run.anomaly import anomalies, load_history
from harness.run.budget import BudgetGuard
from harness.checks import REGISTRY
from harness.checks.cost import cost_usd, error_rate, tokens
from harness.checks.budget import latency_ms
from harness.types import Case, CaseResult, Event, Observation, Reply, Tokens, Turn, TurnObservation

CASE = Case(id="c", layer="cost", channel="telegram", turns=(Turn(send="x"),))


def obs(llm=((100, 10, 0.001),), statuses=(200,), durations=(50.0,)) -> Observation:
    events = [Event(source="gateway", name="llm", at=0.1, status=s, duration_ms=d,
                    meta={"input_tokens": i, "output_tokens": o, "cost_usd": c, "simulated": True,
                          "cost_reason": "no price for model 'x'" if c is None else ""})
              for (i, o, c), s, d in zip(llm, statuses, durations)]
    reply = Reply(channel="telegram", chat="1", text="ok", at=0.3, method="sendMessage")
    events.append(Event(source="telegram", name="telegram.sendMessage", at=0.3, status=200, reply=reply))
    t = TurnObservation(index=0, sent_at=0.0, delivery_status=200, delivery_error="", replies=(reply,),
                        events=tuple(events), settled_after_s=1.0)
    return Observation(case_id="c", channel="telegram", chat_id="1", turns=(t,), started_at=0.0, finished_at=1.0)


@pytest.mark.parametrize("params,passed,needle", [
    ({"input_max": 100}, True, "within"),
    ({"input_max": 99}, False, "input tokens 100 > threshold 99"),
    ({"output_max": 9}, False, "output tokens 10 > threshold 9"),
    ({"total_max": 110}, True, "within"),
    ({"total_max": 109}, False, "total tokens 110 > threshold 109"),
])
def test_tokens(params, passed, needle):
    e = tokens(CASE, obs(), 0, params)
    assert e.passed is passed and needle in e.reason


def test_cost_usd_states_figure_threshold_and_simulation():
    ok = cost_usd(CASE, obs(), 0, {"max": 0.03})
    bad = cost_usd(CASE, obs(llm=((1, 1, 0.05),)), 0, {"max": 0.03})
    assert ok.passed and bad.passed is False
    assert "$0.050000 > threshold $0.0300" in bad.reason and "simulated" in bad.reason


def test_cost_usd_unknown_price_is_unavailable_never_pass():
    e = cost_usd(CASE, obs(llm=((1, 1, None),)), 0, {"max": 1.0})
    assert e.availability == "unavailable" and e.passed is None and "no price" in e.reason


def test_error_rate():
    two = obs(llm=((1, 1, 0.0), (1, 1, 0.0)), statuses=(200, 502), durations=(1.0, 1.0))
    e = error_rate(CASE, two, 0, {"max": 0.2})
    assert e.passed is False and "1 of 3 calls non-2xx" in e.observed and "0.33 > threshold 0.2" in e.reason
    assert error_rate(CASE, obs(), 0, {"max": 0}).passed


def test_latency_llm_call_max():
    e = latency_ms(CASE, obs(durations=(2500.0,)), 0, {"llm_call_max": 2000})
    assert e.passed is False and "slowest LLM call 2500ms > threshold 2000ms" in e.reason
    assert latency_ms(CASE, obs(), 0, {"llm_call_max": 2000}).passed


@pytest.mark.parametrize("name,bad", [
    ("tokens", {"inputs_max": 1}), ("tokens", {"input_max": -1}), ("cost_usd", {}), ("cost_usd", {"min": 1}),
    ("error_rate", {"max": 2}), ("latency_ms", {"llm_call": 5}),
])
def test_bad_parameters_are_fixture_errors(name, bad):
    assert REGISTRY[name].validate(bad)


# --------------------------------------------------------------------------- anomalies


def write_run(reports, run_id, cases, target="docbot"):
    d = reports / run_id
    d.mkdir(parents=True)
    (d / "results.json").write_text(json.dumps({"schema": "harness.results/1", "run_id": run_id,
                                                "target": {"name": target}, "summary": {}, "cases": cases}))


def hist_case(id, tokens=1000, calls=2, cost=0.004, latency=300.0, status="pass"):
    return {"id": id, "status": status, "tokens": {"input": tokens - 100, "output": 100}, "llm_calls": calls,
            "cost_usd": cost, "latency_ms": latency}


def result(id="c1", tokens_in=900, calls=2, cost=0.004, latency=300.0):
    return CaseResult(id=id, layer="cost", channel="telegram", status="pass", evidence=(), latency_ms=latency,
                      llm_calls=calls, tokens=Tokens(tokens_in, 100), cost_usd=cost)


@pytest.fixture
def history(tmp_path):
    for i, tok in enumerate((1000, 1010, 990, 1005, 995)):
        write_run(tmp_path, f"2026110{i}-000000-aaaa", [hist_case("c1", tokens=tok)])
    # a run where the case failed (a seeded regression) is no baseline
    write_run(tmp_path, "20261106-000000-bbbb", [hist_case("c1", tokens=100, calls=0, cost=0.0, status="fail")])
    # another target's run is not compared with
    write_run(tmp_path, "20261107-000000-cccc", [hist_case("c1", tokens=10)], target="otherbot")
    return load_history(tmp_path, "docbot", exclude_run="20261108-000000-dddd")


def test_history_keeps_passing_runs_of_the_same_target(history):
    assert history.baseline("c1", "tokens", 7) == (1000.0, 5)


def test_a_jump_over_the_ratio_is_failing_evidence_even_under_absolute_thresholds(history):
    ev = anomalies(result(tokens_in=1900, calls=5, cost=0.0081), history, ratio=1.5)
    checks = {e.check: e for e in ev}
    assert set(checks) == {"anomaly.tokens", "anomaly.llm_calls", "anomaly.cost_usd"}
    t = checks["anomaly.tokens"]
    assert t.passed is False and "2000" in t.observed and "1.5 x baseline 1000" in t.expected
    assert "2.00x the baseline 1000" in t.reason


def test_no_anomaly_within_the_ratio_or_for_small_latency_noise(history):
    assert anomalies(result(tokens_in=1300), history, ratio=1.5) == []
    assert anomalies(result(latency=900.0), history, ratio=1.5, min_latency_ms=1000) == []
    slow = anomalies(result(latency=2400.0), history, ratio=1.5, min_latency_ms=1000)
    assert [e.check for e in slow] == ["anomaly.latency_ms"]


def test_unknown_case_has_no_baseline(history):
    assert anomalies(result(id="new-case", tokens_in=99999), history) == []


# --------------------------------------------------------------------------- budget guard


def test_guard_projects_and_stops_starting_cases():
    g = BudgetGuard(0.010, planned=10)
    assert g.may_start("a") == ""  # nothing finished: no projection yet
    g.finished_case("a", 0.004)
    # projection: 0.004 + 0.004 x 9 unfinished = 0.04 > 0.01
    why = g.may_start("b")
    assert why.startswith("not started: projected run cost $0.0400") and g.breached
    assert g.may_start("c").startswith("not started")  # once stopped, stays stopped
    assert g.skipped == ["b", "c"] and g.top_spenders() == [("a", 0.004)]
    assert "spent by: a ($0.0040)" in g.message()


def test_guard_without_a_limit_never_stops():
    g = BudgetGuard(None, planned=3)
    g.finished_case("a", 5.0)
    assert g.may_start("b") == "" and not g.breached


def test_guard_within_budget_is_not_breached():
    g = BudgetGuard(1.0, planned=2)
    g.finished_case("a", 0.1)
    assert g.may_start("b") == ""
    g.finished_case("b", 0.1)
    assert not g.breached and g.report()["spent_usd"] == pytest.approx(0.2)
