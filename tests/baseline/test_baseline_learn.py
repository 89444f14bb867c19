"""The learner: what held on every accepted sample is an invariant, what varied is not."""

from __future__ import annotations

import pytest

from harness.checks.baseline.learn import learn
from harness.schema.models import BaselineModel
from tests.baseline.helpers import PARAPHRASE, SUMMARY, case_dict, run_dict, turn_dict

S = BaselineModel()


def _learn(*turn_lists, latencies=None, settings=S, status="pass"):
    latencies = latencies or [1000.0] * len(turn_lists)
    runs = [run_dict(f"2026120{i}-020000-aaaa", [case_dict("c", turns, latency=lat, status=status)])
            for i, (turns, lat) in enumerate(zip(turn_lists, latencies))]
    return learn(runs, settings).get("c")


def test_same_on_every_night_is_held_exactly():
    inv = _learn(*[[turn_dict(SUMMARY)]] * 3)
    t = inv.turns[0]
    assert (inv.samples, t.replies, t.kinds, t.tools, t.llm_calls, t.posts) == \
        (3, (1, 1), ("text",), ("fetch_document",), (1, 1), (0, 0))
    assert t.language == "en" and t.claims and not inv.skipped


@pytest.mark.parametrize("field, values, expected", [
    ("replies", [["a"], ["a", "b"], ["a"]], (1, 2)),          # a count that varied: its band
    ("kinds", [["a"], ["a", "b"], ["a"]], None),              # a sequence that varied: no invariant
])
def test_what_varied_is_a_band_or_nothing(field, values, expected):
    inv = _learn(*[[turn_dict(v)] for v in values])
    assert getattr(inv.turns[0], field) == expected


def test_state_keys_that_varied_are_no_invariant():
    inv = _learn([turn_dict(SUMMARY, state={"doc": 1})], [turn_dict(SUMMARY, state={"doc": 1, "x": 2})],
                 [turn_dict(SUMMARY, state={"doc": 1})])
    assert inv.turns[0].state is None
    same = _learn(*[[turn_dict(SUMMARY, state={"doc": {"url": 1}})]] * 3)
    assert same.turns[0].state == frozenset({"doc", "doc.url"})


def test_facts_that_varied_are_seen_not_held():
    inv = _learn([turn_dict(SUMMARY)], [turn_dict(PARAPHRASE)], [turn_dict(SUMMARY + " About 40 km were built.")])
    t = inv.turns[0]
    held = frozenset().union(*(c.held["numbers"] for c in t.claims))
    assert {"1200|", "12|percent", "6|week", "3.5|usd million"} <= held
    assert "40|km" not in t.turn_held["numbers"] and "40|km" in t.turn_seen["numbers"]


def test_bands_widen_by_the_tolerance():
    inv = _learn(*[[turn_dict(SUMMARY, tokens_in=n)] for n in (400, 500, 600)])
    b = inv.turns[0].tokens_in
    assert (b.seen_lo, b.seen_hi) == (400, 600)
    assert b.hi == pytest.approx(600 * 1.25 + 50) and b.lo == pytest.approx(400 / 1.25 - 50)


def test_one_night_gives_structure_but_not_what_varies():
    inv = _learn([turn_dict(SUMMARY)])
    t = inv.turns[0]
    assert t.replies == (1, 1) and t.tools == ("fetch_document",)
    assert t.claims is None and t.length is None and t.tokens_in is None and inv.latency is None
    assert set(inv.skipped) == {"length", "language", "links", "tokens", "facts", "latency", "latency_trend"}


def test_repeat_attempts_count_as_nights():
    turns = [turn_dict(SUMMARY)]
    run = run_dict("20261201-020000-aaaa", [case_dict("c", turns, others=[(turns, 900.0), (turns, 1100.0)])])
    inv = learn([run], S)["c"]
    assert inv.samples == 3 and inv.turns[0].claims is not None and inv.latency is not None


def test_failed_nights_teach_nothing():
    assert _learn(*[[turn_dict(SUMMARY)]] * 3, status="fail") is None


def test_latency_limit():
    inv = _learn(*[[turn_dict(SUMMARY)]] * 3, latencies=[900.0, 1000.0, 1500.0])
    assert inv.latency.hi == pytest.approx(max(1500 * 2.0, 1500 + 2000)) and inv.latency_median == 1000.0


def test_llm_calls_count_what_the_agent_used():
    from harness.checks.baseline.samples import answered

    call = {"status": 200, "model": "m", "input_tokens": 900, "duration_ms": 5500.0}
    retried = [{**call, "at": 10.0}, {**call, "at": 14.0, "duration_ms": 800.0}]  # given up at 4 s, sent again
    looped = [{**call, "at": 10.0, "duration_ms": 500.0}, {**call, "at": 10.6, "duration_ms": 500.0}]  # one after the other
    failed = [{**call, "status": 429, "at": 10.0, "duration_ms": 5.0}, {**call, "at": 11.0}]
    assert len(answered(retried)) == 1 and answered(retried)[0]["at"] == 14.0
    assert len(answered(looped)) == 2
    assert len(answered(failed)) == 1
    assert len(answered([{"status": 200}, {"status": 200}])) == 2  # no times recorded: every answered call


@pytest.mark.parametrize("status, evidence, error, learned", [
    ("pass", [{"check": "replies", "passed": True}], "", True),
    ("fail", [{"check": "replies", "passed": True}, {"check": "baseline.facts", "passed": False}], "", True),
    ("soft", [{"check": "replies", "passed": True}, {"check": "baseline.facts", "passed": None}], "", True),
    ("fail", [{"check": "replies", "passed": False}, {"check": "baseline.facts", "passed": False}], "", False),
    ("fail", [{"check": "baseline.facts", "passed": False}], "", False),  # nothing else said it was right
    ("error", [{"check": "replies", "passed": True}], "case timed out", False),
])
def test_a_night_is_accepted_as_it_was(status, evidence, error, learned):
    from harness.checks.baseline.learn import passed

    assert passed({"status": status, "evidence": evidence, "error": error}) is learned
