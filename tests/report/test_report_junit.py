"""junit.xml: parses, one testcase per case, honest outcome counts."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import replace

import pytest

from harness.report.jsonfile import write_json
from harness.report.jsonread import load_report
from harness.report.junit import render_junit, write_junit, xml_text


def parse(report) -> ET.Element:
    return ET.fromstring(render_junit(report))


def case_el(root: ET.Element, case_id: str) -> ET.Element:
    found = [tc for tc in root.iter("testcase") if tc.get("name") == case_id]
    assert len(found) == 1
    return found[0]


def test_one_suite_per_layer_and_one_testcase_per_case(report):
    root = parse(report)
    assert root.tag == "testsuites"
    assert [s.get("name") for s in root.findall("testsuite")] == ["robustness", "reasoning", "multiturn", "cost"]
    assert len(list(root.iter("testcase"))) == len(report.cases)


@pytest.mark.parametrize("suite, tests, failures, errors, skipped", [
    ("robustness", 2, 1, 0, 0),
    ("reasoning", 2, 0, 1, 0),   # soft passes in JUnit; unavailable is an error (exit 1), not passed
    ("multiturn", 1, 0, 1, 0),
    ("cost", 1, 0, 1, 0),
    (None, 6, 1, 3, 0),          # <testsuites> totals
])
def test_counts_in_attributes(report, suite, tests, failures, errors, skipped):
    root = parse(report)
    el = root if suite is None else root.find(f"testsuite[@name='{suite}']")
    assert (el.get("tests"), el.get("failures"), el.get("errors"), el.get("skipped")) == \
        (str(tests), str(failures), str(errors), str(skipped))


def test_testcase_identity_and_time(report):
    tc = case_el(parse(report), "url-ok")
    assert tc.get("classname") == "robustness.telegram"
    assert tc.get("time") == "2.000"  # observed wall time of the case
    assert list(tc) == []  # a pass carries no child


def test_failure_message_is_first_failing_reason_and_body_has_every_failing_evidence(report):
    failure = case_el(parse(report), "url-malformed-scheme").find("failure")
    assert failure.get("message") == "reply.regex (turn 0): no match for (?i)invalid.*url"
    body = failure.text
    assert "check: reply.regex" in body and "check: tools_not_called" in body
    assert "turn: case" in body  # case-level evidence has no turn
    assert "expected: (?i)invalid.*url" in body and "observed: Traceback: boom" in body
    assert "reply.not_contains" not in body  # passing evidence is not a failure


@pytest.mark.parametrize("case_id, tag, message_part", [
    ("cancel-mid-task", "error", "timeout after 30s"),
    ("critic-facts", "error", "unavailable: critic (turn 0): critic backend down"),
    ("cost-golden", "error", "price table missing"),
])
def test_error_and_unavailable_outcomes(report, case_id, tag, message_part):
    tc = case_el(parse(report), case_id)
    el = tc.find(tag)
    assert el is not None and message_part in el.get("message")
    assert tc.find("failure") is None


def test_soft_passes_with_a_note(report):
    tc = case_el(parse(report), "summary-faithful")
    assert tc.find("failure") is None and tc.find("error") is None and tc.find("skipped") is None
    assert "soft" in tc.find("system-out").text and "similarity 0.71" in tc.find("system-out").text


def test_failing_case_carries_its_transcript(report):
    out = case_el(parse(report), "url-malformed-scheme").find("system-out").text
    assert "sent 'summarize {docs}/a.pdf'" in out and "reply [sendMessage]: Traceback: boom" in out


def test_hostile_text_is_escaped_and_control_characters_removed(report, evidence):
    nasty = "a\x00b\x1b[31mc\x0c <x>&\"' \ud800 ]]> \n end"
    case = replace(report.cases[1], id='id"<&>', evidence=(evidence("reply.regex", False, reason=nasty,
                                                                    observed=nasty),))
    root = parse(replace(report, cases=(case,)))  # must parse
    tc = case_el(root, 'id"<&>')
    # The lone surrogate cannot be encoded at all: it became "?" on its way into the dict.
    assert tc.find("failure").get("message") == "reply.regex (turn 0): abc <x>&\"' ? ]]> end"
    assert "<x>&\"' \ud800" not in tc.find("failure").text and "<x>&" in tc.find("failure").text


@pytest.mark.parametrize("raw, clean", [
    ("plain", "plain"),
    ("tab\tnewline\ncr\r", "tab\tnewline\ncr\r"),  # the whitespace XML allows stays
    ("nul\x00bell\x07esc\x1b", "nulbellesc"),
    ("\ufffe\uffff", ""),
    (None, ""),
    (3.5, "3.5"),
])
def test_xml_text(raw, clean):
    assert xml_text(raw) == clean


def test_works_from_results_json_and_writes_the_same(report, tmp_path):
    write_json(report, tmp_path / "results.json")
    from_dict = render_junit(load_report(tmp_path))
    assert from_dict == render_junit(report)
    path = write_junit(report, tmp_path / "junit.xml")
    assert ET.parse(path).getroot().get("tests") == "6"


def test_empty_run_still_parses(build_report):
    root = parse(build_report(cases_=(), layers={}))
    assert root.get("tests") == "0" and list(root.iter("testcase")) == []
