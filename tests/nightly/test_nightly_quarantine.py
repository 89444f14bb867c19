"""harness.night.quarantine: the file's validation, and quarantined cases not turning the night red."""

from __future__ import annotations

from datetime import date

import pytest

from harness.run.aggregate import count
from harness.errors import FixtureError
from harness.night.quarantine import apply_quarantine, load_quarantine
from harness.report.jsonfile import case_to_dict
from harness.report.jsonread import case_from_dict
from harness.types import CaseResult, Counts, Evidence, RunReport

GOOD = """quarantine:
  - id: flaky-one
    reason: flips on slow machines
    owner: alice
    expires: 2030-01-31
  - {id: flaky-two, reason: upstream bug, owner: bob}
"""


def result(cid: str, status: str, quarantined: bool = False) -> CaseResult:
    ev = Evidence(check="reply.regex", turn=0, availability="ready", passed=status == "pass", reason="r")
    return CaseResult(id=cid, layer="robustness", channel="telegram", status=status, evidence=(ev,),
                      quarantined=quarantined)


def test_loads_a_valid_file(tmp_path):
    path = tmp_path / "quarantine.yaml"
    path.write_text(GOOD, encoding="utf-8")
    entries = load_quarantine(path)
    assert [(e.id, e.owner, e.expires) for e in entries] == [("flaky-one", "alice", date(2030, 1, 31)),
                                                             ("flaky-two", "bob", None)]
    assert load_quarantine(tmp_path / "missing.yaml") == []


@pytest.mark.parametrize("text, message", [
    ("- id: a\n", "one key, `quarantine:`"),
    ("quarantine:\n  - {id: a, owner: x}\n", "reason is required"),
    ("quarantine:\n  - {id: a, reason: r, owner: ''}\n", "owner is required"),
    ("quarantine:\n  - {id: Bad_Id, reason: r, owner: x}\n", "id must be a case id"),
    ("quarantine:\n  - {id: a, reason: r, owner: x, expires: soon}\n", "not a date"),
    ("quarantine:\n  - {id: a, reason: r, owner: x, until: 2030-01-01}\n", "unknown key"),
    ("quarantine:\n  - {id: a, reason: r, owner: x}\n  - {id: a, reason: r, owner: x}\n", "listed twice"),
    ("quarantine: [\n", "YAML syntax error"),
])
def test_bad_files_are_fixture_errors(tmp_path, text, message):
    path = tmp_path / "quarantine.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(FixtureError) as info:
        load_quarantine(path)
    assert message in info.value.render() and info.value.exit_code == 2


def test_a_quarantined_failure_does_not_decide_the_verdict():
    assert count([result("a", "pass"), result("b", "fail")], 2).verdict == "fail"
    c = count([result("a", "pass"), result("b", "fail", quarantined=True)], 2)
    assert c.verdict == "pass" and c.failed == 1 and c.decidable == 2  # still counted and shown
    assert count([result("a", "pass"), result("b", "fail", quarantined=True), result("c", "error")], 3).verdict \
        == "fail"


def test_apply_quarantine_recomputes_exit_code_and_notes(tmp_path):
    path = tmp_path / "quarantine.yaml"
    path.write_text(GOOD + "  - {id: old, reason: r, owner: carol, expires: 2020-01-01}\n", encoding="utf-8")
    entries = load_quarantine(path)
    cases = (result("ok", "pass"), result("flaky-one", "fail"), result("old", "pass"))
    report = RunReport(run_id="r", started_at="", finished_at="", harness_version="", target={}, golden_version="",
                       models={}, summary=Counts(planned=3, executed=3, decidable=3, passed=2, failed=1,
                                                 verdict="fail"),
                       layers={"robustness": Counts(planned=3, verdict="fail")}, cases=cases, exit_code=1)
    out = apply_quarantine(report, entries, today=date(2025, 1, 1))
    assert out.exit_code == 0 and out.summary.verdict == "pass" and out.summary.failed == 1
    assert [c.quarantined for c in out.cases] == [False, True, False]
    assert any("quarantined: flaky-one (fail)" in n for n in out.notes)
    assert any("quarantine of old expired" in n for n in out.notes)
    # after its expiry the same failure turns the night red again
    late = apply_quarantine(report, entries, today=date(2031, 1, 1))
    assert late.exit_code == 1
    # budget / infrastructure exits are not the quarantine's to change
    assert apply_quarantine(RunReport(**{**report.__dict__, "exit_code": 3}), entries,
                            today=date(2025, 1, 1)).exit_code == 3


def test_the_marker_survives_results_json():
    d = case_to_dict(result("a", "fail", quarantined=True))
    assert d["quarantined"] is True and case_from_dict(d).quarantined is True
    assert "quarantined" not in case_to_dict(result("a", "fail"))


def test_harness_run_refuses_a_bad_quarantine_file_before_running(tmp_path, capsys):
    from harness.cli import main

    fixtures = tmp_path / "fixtures"
    (fixtures / "robustness").mkdir(parents=True)
    (fixtures / "robustness" / "one.yaml").write_text(
        "layer: robustness\ncases:\n  - id: one\n    send: hi\n    expect: {replies: {min: 1}}\n", encoding="utf-8")
    (fixtures / "quarantine.yaml").write_text("quarantine:\n  - {id: one}\n", encoding="utf-8")
    assert main(["run", "--fixtures", str(fixtures), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    assert "reason is required" in capsys.readouterr().err
    assert not list((tmp_path / "out").rglob("results.json*"))  # nothing ran
