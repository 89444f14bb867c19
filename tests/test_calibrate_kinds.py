"""harness calibrate: which kind of evidence caught each seeded regression (``caught_by_kind``).

Table tests of ``evidence_kind`` (every kind, and its near twins that must land elsewhere),
then the per-regression field built from synthetic runs: a case counts for every kind whose
evidence failed in it, a clean false alarm counts for none, ``caught_by`` stays as it was.
"""

from __future__ import annotations

import pytest

from harness.night.calibrate import KINDS, Calibration, Regression, RunOutcome, evidence_kind, kind_totals, matrix_lines
from harness.report.calibration_html import render_calibration_html
from harness.types import Case, CaseResult, CheckSpec, Counts, Evidence, RunReport, Turn

CASE = Case(id="c1", layer="robustness", channel="telegram", turns=(
    Turn(send="hi", checks=(CheckSpec("reply.regex", "hi"), CheckSpec("replies", {"min": 1}))),
    Turn(send="again", checks=(CheckSpec("tools_called", ["fetch_document"]),
                               CheckSpec("critic.factuality", {"min": 0.8}))),
))


@pytest.mark.parametrize("check, turn, case, kind", [
    # baseline invariants, whatever family they are about
    ("baseline.facts", 0, CASE, "baseline"),
    ("baseline.replies", 0, CASE, "baseline"),          # twin: the hand-written `replies` below
    ("baseline.tokens", None, None, "baseline"),
    # judges, written by hand or not
    ("critic.factuality", 1, CASE, "judges"),
    ("critic.rubric", 0, CASE, "judges"),
    ("similarity", 0, None, "judges"),
    # the case's own checks, on the turn that wrote them
    ("reply.regex", 0, CASE, "hand-written"),
    ("replies", 0, CASE, "hand-written"),
    ("tools_called", 1, CASE, "hand-written"),
    ("tools_called", None, CASE, "hand-written"),      # case-level evidence: any turn counts
    # twins that are NOT hand-written: another turn, another sub-check, the layer's additions
    ("reply.regex", 1, CASE, "defaults"),               # turn 1 did not write reply.regex
    ("reply.regex_extra", 0, CASE, "defaults"),         # a prefix of a name is not the name
    ("replies", 1, CASE, "defaults"),
    ("reply.not_contains", 0, CASE, "defaults"),        # the robustness layer's default
    ("delivery", 0, CASE, "defaults"),
    ("equivalent", 0, Case(id="v", layer="robustness", channel="telegram",
                           turns=(Turn(send="x", checks=(CheckSpec("equivalent", {"to": 0}),)),)), "defaults"),
    ("anomaly.latency_ms", None, CASE, "defaults"),
    ("budget.case_usd", None, CASE, "defaults"),
    ("reply.regex", 0, None, "defaults"),               # unknown case: nothing is known as written
])
def test_evidence_kind(check, turn, case, kind):
    assert evidence_kind(check, turn, case) == kind


def _ev(check: str, passed: bool | None, turn: int | None = 0) -> Evidence:
    return Evidence(check=check, turn=turn, availability="ready", passed=passed, reason=f"{check} said so")


def _result(cid: str, status: str, *evidence: Evidence, error: str = "") -> CaseResult:
    return CaseResult(id=cid, layer="robustness", channel="telegram", status=status, evidence=tuple(evidence),
                      error=error)


def _outcome(label: str, regression: str | None, *cases: CaseResult) -> RunOutcome:
    report = RunReport(run_id=label, started_at="", finished_at="", harness_version="", target={},
                       golden_version="", models={}, summary=Counts(), layers={}, cases=tuple(cases))
    return RunOutcome(label, regression, False, report, 1.0)


def _cases(*ids: str) -> dict[str, Case]:
    return {cid: Case(id=cid, layer="robustness", channel="telegram",
                      turns=(Turn(send="hi", checks=(CheckSpec("reply.regex", "hi"),)),)) for cid in ids}


def test_caught_by_kind_per_regression():
    clean = _outcome("clean-1", None,
                     _result("a", "pass", _ev("reply.regex", True)),
                     _result("alarm", "fail", _ev("baseline.latency", False)))  # fails clean: no catch
    broken = _outcome(
        "regression-r1", "r1",
        _result("a", "fail", _ev("reply.regex", True), _ev("baseline.facts", False)),   # baseline only
        _result("b", "fail", _ev("reply.regex", False), _ev("baseline.replies", False)),  # both
        _result("c", "fail", _ev("critic.factuality", False, 0), _ev("baseline.facts", None)),  # soft is no catch
        _result("d", "error", error="timed out"),                                          # no failing evidence
        _result("e", "soft", _ev("baseline.facts", None)),                                  # soft case: no catch
        _result("f", "fail", _ev("reply.not_contains", False)),                             # the layer's default
        _result("alarm", "fail", _ev("reply.regex", False)),
    )
    missed = _outcome("regression-r2", "r2", _result("a", "pass", _ev("reply.regex", True)))
    cal = Calibration(regressions=[Regression("r1", "robustness", "breaks"), Regression("r2", "robustness", "x")],
                      clean=[clean], noisy=[], broken=[broken, missed], seconds=2.0,
                      cases=_cases("a", "b", "c", "d", "e", "f", "alarm"))
    data = cal.to_dict()
    r1, r2 = data["regressions"]
    assert r1["caught_by"] == ["a", "b", "c", "d", "f"]  # the contract field, unchanged
    assert r1["caught_by_kind"] == {"hand-written": ["b"], "baseline": ["a", "b"], "judges": ["c"],
                                    "defaults": ["f"], "error": ["d"]}
    assert list(r1["caught_by_kind"]) == list(KINDS)
    assert r1["first_evidence"]["case"] == "a" and r1["first_evidence"]["kind"] == "baseline"
    assert r2["caught_by"] == [] and all(ids == [] for ids in r2["caught_by_kind"].values())
    assert data["by_kind"] == kind_totals(data) == {"hand-written": 1, "baseline": 1, "judges": 1, "defaults": 1,
                                                    "error": 1}
    lines = matrix_lines(data)
    row = next(line for line in lines if line.startswith("r1"))
    assert "hand-written 1 · baseline 2 · judges 1 · defaults 1 · error 1" in row
    assert any("MISSED" in line for line in lines if line.startswith("r2"))
    assert any(line.startswith("by kind of evidence: hand-written 1 (0 by it alone)") for line in lines)
    html = render_calibration_html(data)
    assert "baseline: 2" in html and "caught by (kind of evidence)" in html


def test_a_regression_only_the_baseline_caught_says_so():
    broken = _outcome("regression-split", "split", _result("long", "fail", _ev("reply.regex", True),
                                                           _ev("baseline.replies", False)))
    cal = Calibration(regressions=[Regression("split", "reasoning", "splits replies")],
                      clean=[_outcome("clean-1", None, _result("long", "pass", _ev("reply.regex", True)))],
                      noisy=[], broken=[broken], seconds=1.0, cases=_cases("long"))
    data = cal.to_dict()
    assert data["regressions"][0]["caught_by_kind"]["baseline"] == ["long"]
    assert data["regressions"][0]["caught_by_kind"]["hand-written"] == []
    assert any("baseline 1 (1 by it alone)" in line for line in matrix_lines(data))


def test_kinds_escape_in_the_html():
    broken = _outcome("regression-x", "x", _result("<b>id</b>", "fail", _ev("baseline.facts", False)))
    cal = Calibration(regressions=[Regression("x", "robustness", "d")], clean=[], noisy=[], broken=[broken],
                      seconds=1.0)
    html = render_calibration_html(cal.to_dict())
    assert "<b>id</b>" not in html and "&lt;b&gt;id&lt;/b&gt;" in html
