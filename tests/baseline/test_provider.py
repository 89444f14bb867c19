"""The provider's rare slow call explains a latency; a slower model, or more slow calls than
chance allows, does not (checks/provider.py, baseline.latency, anomaly.latency_ms)."""

from __future__ import annotations

import pytest

from harness.checks import provider as P
from harness.checks.baseline import Baseline
from harness.checks.baseline.evidence import case_evidence
from harness.checks.baseline.learn import learn, provider_of
from harness.checks.baseline.samples import CaseSample, TurnSample
from harness.schema.models import BaselineModel
from harness.run.anomaly import History, HistoryRun, anomalies
from harness.run.held import apply_trend
from harness.types import CaseResult, Event, Evidence, Observation, TurnObservation
from tests.baseline.helpers import SUMMARY, case_dict, run_dict, turn_dict

#: 200 accepted calls: 180 of 100-190 ms, 20 slow spells of 1200-1390 ms.
ACCEPTED = [100.0 + (i % 10) * 10 for i in range(180)] + [1200.0 + i * 10 for i in range(20)]
PROFILE = P.profile(ACCEPTED)


def test_profile_reads_the_accepted_calls():
    assert PROFILE is not None
    assert PROFILE.calls == 200 and PROFILE.typical_ms == 190.0 and PROFILE.slowest_ms == 1390.0
    assert PROFILE.slow_share == pytest.approx(0.10)
    assert P.profile(ACCEPTED[:P.MIN_CALLS - 1]) is None  # too few calls say nothing
    assert P.profile([float("nan"), -1.0, True, "x"] * 20) is None  # junk durations are not calls


@pytest.mark.parametrize("calls, ms", [
    ([1300.0], 1110.0),                 # one spell: explained down to a typical call
    ([150.0, 1300.0], 1110.0),          # the fast call explains nothing
    ([5000.0], 1200.0),                 # slower than any accepted call: only up to the slowest
    ([150.0, 160.0], 0.0),              # nothing slow
])
def test_explained(calls, ms):
    assert P.explained(PROFILE, calls).ms == pytest.approx(ms)


def test_more_slow_calls_than_chance_are_not_all_explained():
    ten = [1300.0] * 10  # every one of ten calls slow: at 10 % a share no chance gives
    why = P.explained(PROFILE, ten)
    assert why.slow == 10 and why.counted < 10 and why.counted == P.allowed_slow(10, PROFILE.slow_share)
    assert P.allowed_slow(1, 0.1) == 1 and P.allowed_slow(20, 0.1) < 20
    assert P.explained(None, [1300.0]).ms == 0.0


def test_shifted_run_wide():
    assert P.shifted(PROFILE, [150.0] * 90 + [1300.0] * 10) == ""      # the accepted share
    assert P.shifted(PROFILE, [150.0] * 70 + [1300.0] * 30) == ""      # noise, within +0.15 / 3x
    assert "slower across the run" in P.shifted(PROFILE, [600.0] * 100)  # a slower model
    assert P.shifted(PROFILE, [600.0] * 5) == ""                      # too few calls to tell


# --- baseline.latency --------------------------------------------------------------------------

def _night(i: int, latency: float, spell: bool = False) -> dict:
    turn = turn_dict(SUMMARY)
    for c in turn["calls"]:
        if c["name"] == "llm":
            c["duration_ms"] = 1300.0 if spell else 150.0
    return case_dict("c", [turn], latency=latency)


def _nights() -> list[dict]:
    """Three accepted nights of case "c" (300-400 ms), and filler cases whose calls make the profile."""
    filler = [case_dict(f"f{j}", [{"replies": [{"text": "ok", "kind": "text"}],
                                   "calls": [{"source": "gateway", "name": "llm", "duration_ms": d}]}])
              for j, d in enumerate(ACCEPTED)]
    return [run_dict(f"2026112{i}-020000-aaaa", [_night(i, lat)] + (filler if i == 0 else []))
            for i, lat in enumerate([300.0, 400.0, 350.0])]


def _tonight(latency: float, calls: tuple[float, ...]) -> CaseSample:
    turn = TurnSample(texts=(SUMMARY,), kinds=("text",), buttons=((),), parse_modes=("",),
                      tools=("fetch_document",), llm_calls=1, tokens_in=500, tokens_out=60)
    return CaseSample("tonight", (turn,), latency, 0.0, llm_ms=calls)


def _latency(sample: CaseSample, provider) -> Evidence:
    inv = learn(_nights(), BaselineModel())["c"]
    evidence, _ = case_evidence(inv, sample, frozenset({"latency"}), provider)
    (e,) = evidence
    return e


def test_baseline_latency_spell_explained_and_twins_fail():
    p = provider_of(_nights())
    assert p is not None and p.typical_ms == 190.0
    band = learn(_nights(), BaselineModel())["c"].latency.hi            # 400 + 2000 ms
    # a spell over the band: explained by its one slow call
    e = _latency(_tonight(band + 500, (1300.0,)), p)
    assert e.passed is True and "slow LLM call" in e.reason
    # the same latency without a slow call: the agent itself is slower
    e = _latency(_tonight(band + 500, (150.0,)), p)
    assert e.passed is False
    # no profile (no accepted calls): nothing is explained
    assert _latency(_tonight(band + 500, (1300.0,)), None).passed is False
    # a spell that explains only part of the excess
    e = _latency(_tonight(band + 3000, (1300.0,)), p)
    assert e.passed is False and "not enough" in e.reason


def _obs(calls: tuple[float, ...]) -> Observation:
    events = tuple(Event(source="gateway", name="llm", at=0.0, duration_ms=d, status=200) for d in calls)
    turn = TurnObservation(index=0, sent_at=0.0, delivery_status=200, delivery_error="", replies=(), events=events,
                           settled_after_s=0.0)
    return Observation(case_id="c", channel="telegram", chat_id="1", turns=(turn,), started_at=0.0, finished_at=1.0)


def _result(case_id: str, latency: float, calls: tuple[float, ...], evidence=()) -> CaseResult:
    return CaseResult(id=case_id, layer="reasoning", channel="telegram", status="pass", evidence=tuple(evidence),
                      attempts=1, latency_ms=latency, observation=_obs(calls))


def test_excuse_revoked_when_the_run_is_slower_across_the_board():
    nights = _nights()
    inv = learn(nights, BaselineModel())
    p = provider_of(nights)
    baseline = Baseline(accepted=nights[0]["run_id"], runs=(), cases=inv, provider=p)
    band = inv["c"].latency.hi
    excused = _latency(_tonight(band + 500, (1300.0,)), p)
    assert excused.passed is True
    # tonight every call of every case is slow: a slower model, not a spell
    results = [_result("c", band + 500, (1300.0,), [excused])] + [_result(f"x{i}", 500, (1300.0,)) for i in range(60)]
    cases = []
    trend, changed = apply_trend(baseline, cases, results)
    assert changed == [0]
    e = next(e for e in results[0].evidence if e.check == "baseline.latency")
    assert e.passed is False and "slower across the run" in e.reason and results[0].status == "fail"
    assert trend.provider["shifted"]
    # the right twin: a run whose calls look like the accepted nights keeps the excuse
    results = [_result("c", band + 500, (1300.0,), [excused])] + [_result(f"x{i}", 500, (150.0,)) for i in range(60)]
    trend, changed = apply_trend(baseline, cases, results)
    assert changed == [] and results[0].evidence[0].passed is True and trend.provider["shifted"] == ""


# --- anomaly.latency_ms ------------------------------------------------------------------------

def _history() -> History:
    runs = [HistoryRun(f"2026112{i}-020000-aaaa", {}, {"c": {"latency_ms": 250.0 + i}},
                       tuple(ACCEPTED) if i == 0 else ()) for i in range(5)]
    return History(runs, window=7)


def test_anomaly_latency_spell_explained_and_twins_fail():
    hist = _history()
    p = hist.provider()
    assert p is not None and p.calls == 200
    spell = _result("c", 1500.0, (150.0, 1300.0))       # limit is 252 + 1000 ms
    assert anomalies(spell, hist, provider=p) == []
    assert [e.check for e in anomalies(spell, hist)] == ["anomaly.latency_ms"]  # no profile: the old verdict
    slow_agent = _result("c", 1500.0, (150.0, 150.0))  # no slow call: the agent is slower
    assert [e.check for e in anomalies(slow_agent, hist, provider=p)] == ["anomaly.latency_ms"]
    shifted = anomalies(spell, hist, provider=p, shift="tonight's LLM calls are slower across the run: ...")
    assert [e.check for e in shifted] == ["anomaly.latency_ms"] and "no slow call is excused" in shifted[0].reason
