"""Tonight against the accepted nights: wrong answers that MUST fail, right twins that pass."""

from __future__ import annotations

import pytest

from harness.checks.baseline.evidence import case_evidence
from harness.checks.baseline.learn import learn
from harness.schema.models import BASELINE_KINDS as KINDS, BaselineModel
from tests.baseline.helpers import PARAPHRASE, SUMMARY, case_dict, run_dict, tonight, turn_dict

ALL = frozenset(KINDS)
#: Three accepted nights: the summary twice and its paraphrase once (tokens and latency vary a little).
NIGHTS = [run_dict(f"2026112{i}-020000-aaaa", [case_dict("c", [turn_dict(text, tokens_in=tin)], latency=lat)])
          for i, (text, tin, lat) in enumerate([(SUMMARY, 500, 1000.0), (PARAPHRASE, 540, 1200.0),
                                                (SUMMARY, 480, 900.0)])]
INV = learn(NIGHTS, BaselineModel())["c"]


def _failing(sample, kinds=ALL):
    evidence, changes = case_evidence(INV, sample, kinds)
    return {e.check: e for e in evidence if e.passed is not True}, changes


@pytest.mark.parametrize("text", [
    SUMMARY,
    PARAPHRASE,
    SUMMARY.replace("1,200", "1200"),                          # a number format change
    SUMMARY.replace("12%", "12 percent"),                      # the same percentage, written out
    SUMMARY.replace("may reduce", "might reduce"),             # another hedge is still a hedge
    SUMMARY.replace("rose to", "increased to"),                # the same direction in other words
])
def test_right_twins_pass(text):
    failing, changes = _failing(tonight(text))
    assert failing == {} and changes == []


@pytest.mark.parametrize("text, kind", [
    (SUMMARY.replace("12%", "21%"), "number"),                              # a digit swap
    (SUMMARY.replace("1,200", "1,020"), "number"),
    (SUMMARY.replace("12%", "12 percentage points"), "unit"),             # percent -> percentage points
    (SUMMARY.replace("in 2023", "in 2022"), "year"),                      # a year shifted
    (SUMMARY.replace("may reduce", "reduces"), "hedge"),                  # hedge removed
    (SUMMARY.replace("were not significant", "were significant"), "negation"),  # negation flipped
    (SUMMARY.replace("Oslo", "Bergen"), "name"),                          # a name swapped
    (SUMMARY.replace("Costs rose", "Costs fell"), "direction"),           # the direction reversed
])
def test_contradictions_fail(text, kind):
    failing, changes = _failing(tonight(text))
    assert set(failing) == {"baseline.facts"}, failing
    ev = failing["baseline.facts"]
    assert ev.passed is False and ev.score == 0.0
    assert any(c["kind"] == kind and c["change"] == "contradicted" for c in changes), changes


def test_a_dropped_fact_is_soft():
    text = SUMMARY.replace(", led by Dr Ingrid Berg", "")
    failing, changes = _failing(tonight(text))
    ev = failing["baseline.facts"]
    assert ev.passed is None and 0.5 <= ev.score < 0.8
    assert {(c["kind"], c["change"]) for c in changes} >= {("name", "dropped")}


def test_a_new_fact_is_soft():
    failing, changes = _failing(tonight(SUMMARY + " Nine clinics in Tromso took part."))
    ev = failing["baseline.facts"]
    assert ev.passed is None and 0.5 <= ev.score < 0.8
    assert ("number", "new") in {(c["kind"], c["change"]) for c in changes}


def test_replies_split_into_more_messages_fail():
    half = len(SUMMARY) // 2
    failing, _ = _failing(tonight([SUMMARY[:half], SUMMARY[half:]]))
    assert "baseline.replies" in failing and failing["baseline.replies"].passed is False
    assert "2 replies" in failing["baseline.replies"].reason


def test_tokens_per_turn_multiplied_fail():
    failing, _ = _failing(tonight(SUMMARY, tokens_in=520 * 12))  # the history re-sent with every call
    assert failing["baseline.tokens"].passed is False and "input tokens" in failing["baseline.tokens"].reason
    ok, _ = _failing(tonight(SUMMARY, tokens_in=700))  # within the widened band
    assert "baseline.tokens" not in ok


@pytest.mark.parametrize("sample, check", [
    (tonight(SUMMARY, tools=("fetch_document", "search")), "baseline.tools"),
    (tonight(SUMMARY, llm=3), "baseline.llm_calls"),
    (tonight(SUMMARY, posts=1), "baseline.post"),
    (tonight(SUMMARY, kinds=("photo",)), "baseline.replies"),
    (tonight(SUMMARY, buttons={0: ("Yes", "No")}), "baseline.replies"),
    (tonight(SUMMARY, latency=9000.0), "baseline.latency"),
    (tonight(SUMMARY * 3), "baseline.length"),
    (tonight("El estudio de 1,200 adultos en Oslo encontró que el fármaco puede reducir el dolor un 12% "
             "en 6 semanas, pero no para los niños."), "baseline.language"),
    (tonight(SUMMARY + " See https://evil.example/x"), "baseline.links"),
])
def test_structure_changes_fail(sample, check):
    failing, _ = _failing(sample)
    assert check in failing and failing[check].passed is False


def test_switched_off_kinds_give_no_evidence():
    evidence, _ = case_evidence(INV, tonight(SUMMARY.replace("12%", "21%")), ALL - {"facts"})
    assert "baseline.facts" not in {e.check for e in evidence}
    assert case_evidence(INV, tonight(SUMMARY), frozenset()) == ([], [])


def test_no_invariant_no_evidence():
    one = learn(NIGHTS[:1], BaselineModel())["c"]  # one night: structure only, never facts or bands
    evidence, _ = case_evidence(one, tonight(SUMMARY.replace("12%", "21%")), ALL)
    checks = {e.check for e in evidence}
    assert checks == {"baseline.replies", "baseline.post", "baseline.tools", "baseline.llm_calls"}
    assert all(e.passed for e in evidence)


def test_expected_and_observed_say_what_the_nights_showed():
    evidence, _ = case_evidence(INV, tonight(SUMMARY), ALL)
    by = {e.check: e for e in evidence}
    assert "3 of 3" in by["baseline.replies"].expected and by["baseline.replies"].observed.startswith("1 repl")
    assert by["baseline.latency"].observed == "1100ms"


def test_a_number_replaced_in_its_claim_fails_even_when_said_elsewhere():
    nights = [run_dict(f"2026112{i}-020000-aaaa", [case_dict("c", [turn_dict(
        "Sales rose 12% in Oslo last spring. Analysts in Bergen also saw 12% growth in exports.")])])
        for i in range(3)]
    inv = learn(nights, BaselineModel())["c"]
    evidence, changes = case_evidence(inv, tonight("Sales rose 21% in Oslo last spring. Analysts in Bergen also saw "
                                                   "12% growth in exports."), ALL)
    facts = next(e for e in evidence if e.check == "baseline.facts")
    assert facts.passed is False and changes[0]["expected"] == "12 percent" and changes[0]["observed"] == "21 percent"


def test_names_swapped_between_claims_fail():
    nights = [run_dict(f"2026112{i}-020000-aaaa", [case_dict("c", [turn_dict(
        "The pilot started in Oslo with twelve clinics last spring. Later the scheme moved to Bergen and grew "
        "quickly there.")])]) for i in range(3)]
    inv = learn(nights, BaselineModel())["c"]
    swapped = ("The pilot started in Bergen with twelve clinics last spring. Later the scheme moved to Oslo and "
               "grew quickly there.")
    evidence, changes = case_evidence(inv, tonight(swapped), ALL)
    assert next(e for e in evidence if e.check == "baseline.facts").passed is False
    assert {(c["kind"], c["expected"], c["observed"]) for c in changes} >= {("name", "oslo", "bergen")}


def test_one_turns_history_sent_again_fails_tokens():
    # a one-turn case whose second LLM call carries the first call's prompt and answer again: 1.5x
    failing, _ = _failing(tonight(SUMMARY, tokens_in=int(540 * 1.5)))
    assert failing["baseline.tokens"].passed is False


def test_a_dropped_caveat_is_soft():
    failing, changes = _failing(tonight(SUMMARY.replace(" Results were not significant for children.", "")))
    assert failing["baseline.facts"].passed is None
    assert ("caveat", "dropped") in {(c["kind"], c["change"]) for c in changes}


@pytest.mark.parametrize("regression, kind", [("percentage_points", "unit"), ("shift_year", "year"),
                                               ("remove_hedges", "hedge"), ("swap_digits", "number")])
def test_docbot_s_seeded_rewrites_are_contradictions_the_baseline_catches(regression, kind):
    """docbot's baseline-only regressions (percent_points, year_shift, hedges_removed, digit_swap)
    applied to an accepted summary: baseline.facts fails with the kind of change they make."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "docbot"))
    from docbot import faults

    failing, changes = _failing(tonight(getattr(faults, regression)(SUMMARY)))
    assert "baseline.facts" in failing and failing["baseline.facts"].passed is False, (failing, changes)
    assert any(c["kind"] == kind and c["change"] == "contradicted" for c in changes), changes


DAY = ("Summary of City Council Approves Night Buses: The city council voted on Tuesday to make six night bus "
       "routes permanent, ending a trial that carried 1.3 million passengers.")
DAY_NIGHTS = [run_dict(f"2026112{i}-020000-aaaa", [case_dict("d", [turn_dict(DAY)])]) for i in range(3)]


@pytest.mark.parametrize("text, bad", [
    (DAY, False),
    (DAY.replace("The city council voted", "In short, the city council voted"), False),   # a paraphrase
    (DAY.replace("on Tuesday", "on Thursday"), True),                                       # another day
    (DAY.replace("City Council", "Tuesday Council").replace("on Tuesday", "on City"), True),  # a name swap
])
def test_a_weekday_is_a_fact_of_its_claim(text, bad):
    inv = learn(DAY_NIGHTS, BaselineModel())["d"]
    evidence, changes = case_evidence(inv, tonight(text), frozenset({"facts"}))
    (e,) = evidence
    assert (e.passed is False) is bad, (e.reason, changes)
