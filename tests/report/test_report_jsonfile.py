"""results.json: the contract's keys and values, the inverse, and the shared helpers."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest

from harness.errors import UsageError
from harness.report.jsonfile import COUNT_FIELDS, SCHEMA, _find_text, case_to_dict, report_to_dict, write_json
from harness.report.jsonread import case_from_dict, load_report, report_from_dict
from harness.report.format import headline, pass_rate

TOP_KEYS = ["schema", "run_id", "started_at", "finished_at", "harness_version", "target", "golden_version",
            "models", "summary", "layers", "cases", "notes", "exit_code"]
CONTRACT_CASE_KEYS = {"id", "layer", "channel", "status", "attempts", "pass_at_k", "pass_hat_k", "latency_ms",
                      "llm_calls", "tokens", "cost_usd", "evidence"}
EXTRA_CASE_KEYS = {"passes", "error", "file", "tags", "turns", "duration_ms", "flaky", "pass_rate_ci"}
EVIDENCE_KEYS = ["check", "turn", "availability", "passed", "score", "expected", "observed", "reason",
                 "evaluator", "source"]


def test_top_level_keys_in_contract_order(report):
    d = report_to_dict(report)
    assert list(d) == TOP_KEYS
    assert d["schema"] == SCHEMA == "harness.results/1"
    assert d["target"] == {"name": "docbot", "version": "1.2"}
    assert d["models"] == {"embedder": "all-MiniLM-L6-v2", "critic": "offline"}
    assert d["exit_code"] == 1
    assert d["notes"] == list(report.notes)


def test_summary_and_layers_carry_every_count_field(report):
    d = report_to_dict(report)
    assert list(d["summary"]) == list(COUNT_FIELDS)
    assert d["summary"]["decidable"] == 4 and d["summary"]["verdict"] == "fail"
    assert list(d["layers"]) == ["robustness", "reasoning", "multiturn", "cost"]
    for counts in d["layers"].values():
        assert list(counts) == list(COUNT_FIELDS)
    assert d["layers"]["cost"]["decidable"] == 0


def test_case_keys_and_values(report):
    d = report_to_dict(report)
    assert [c["id"] for c in d["cases"]] == [c.id for c in report.cases]
    for c in d["cases"]:
        assert set(c) == CONTRACT_CASE_KEYS | EXTRA_CASE_KEYS
        assert set(c["tokens"]) == {"input", "output"}
        for e in c["evidence"]:
            assert list(e) == EVIDENCE_KEYS
    ok = d["cases"][0]
    assert ok["status"] == "pass" and ok["latency_ms"] == 820.0 and ok["tokens"] == {"input": 120, "output": 40}
    assert ok["cost_usd"] == 0.0012 and ok["pass_at_k"] is None and ok["passes"] == 1
    assert ok["duration_ms"] == pytest.approx(2000.0)
    unavailable = next(c for c in d["cases"] if c["status"] == "unavailable")
    assert unavailable["evidence"][0]["availability"] == "unavailable"
    assert unavailable["evidence"][0]["passed"] is None  # never rendered as passed
    soft = next(c for c in d["cases"] if c["status"] == "soft")
    assert soft["evidence"][0]["source"] == "test-double"


def test_turn_transcript_is_compact_and_secret_free(report):
    turn = report_to_dict(report)["cases"][0]["turns"][0]
    assert turn["index"] == 0 and turn["delivery_status"] == 200 and turn["timed_out"] is False
    assert turn["sent"] == "summarize {docs}/a.pdf"
    assert turn["replies"] == [{"text": "Summary <script>alert(1)</script>", "at": pytest.approx(1_700_000_000.82),
                                "method": "sendMessage", "kind": "text", "buttons": ["OK"]}]
    # The driver's delivery is not an agent call; requests (with their keys) are dropped.
    assert [c["name"] for c in turn["calls"]] == ["llm", "telegram.sendMessage"]
    base = {"source", "name", "status", "at", "duration_ms", "error"}  # at: a retry is told apart (baseline)
    # an LLM call also names its model, tokens and price (cost layer); never its request or response
    cost_fields = {"model", "input_tokens", "output_tokens", "tokens_source", "estimated", "cost_usd", "simulated",
                   "replayed", "replay_miss"}
    assert base <= set(turn["calls"][0]) <= base | cost_fields
    assert set(turn["calls"][1]) == base
    assert turn["state"] == {"task": "<script>alert(1)</script>"}
    text = json.dumps(report_to_dict(report))
    assert "sk-secret" not in text and "secret-bot-token" not in text


def test_case_without_observation_has_empty_transcript(report):
    d = case_to_dict(report.cases[2])
    assert d["turns"] == [] and d["duration_ms"] is None


@pytest.mark.parametrize("payload, sent", [
    ({"update_id": 1, "message": {"text": "hi"}}, "hi"),
    ({"entry": [{"changes": [{"value": {"messages": [{"type": "text", "text": {"body": "hola"}}]}}]}]}, "hola"),
    ({"message": {"document": {"file_id": "x"}, "caption": "see attached"}}, "see attached"),
    ({"callback_query": {"id": "1", "data": "cancel"}}, "cancel"),
    ({"message": {"sticker": {"file_id": "x"}}}, None),  # nothing textual was sent
    ({}, None),
    ([], None),
])
def test_sent_text_is_found_by_shape(payload, sent):
    assert _find_text(payload) == sent


def test_non_finite_numbers_become_null_so_the_file_stays_strict_json(report, evidence, tmp_path):
    nan_case = replace(report.cases[2], evidence=(evidence("similarity", False, score=math.nan),),
                       latency_ms=math.inf)
    path = write_json(replace(report, cases=(nan_case,)), tmp_path / "results.json")
    data = json.loads(path.read_text(), parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))
    assert data["cases"][0]["evidence"][0]["score"] is None
    assert data["cases"][0]["latency_ms"] is None


def test_write_json_is_atomic_and_round_trips(report, tmp_path):
    path = tmp_path / "run" / "results.json"
    path.parent.mkdir()
    path.write_text("old content")
    assert write_json(report, path) == path
    assert load_report(path) == report_to_dict(report)
    assert load_report(path.parent) == report_to_dict(report)  # a run directory works too
    assert sorted(p.name for p in path.parent.iterdir()) == ["results.json"]  # no temp file left


@pytest.mark.parametrize("content, message", [
    (None, "no results.json"),
    ("{not json", "not valid JSON"),
    ('{"schema": "other/1", "cases": [], "summary": {}}', "not a harness.results/1"),
    ("[1, 2]", "not a harness.results/1"),
    ('{"schema": "harness.results/1", "summary": {}}', "lacks 'cases'"),
])
def test_load_report_rejects_what_is_not_a_results_file(tmp_path, content, message):
    path = tmp_path / "results.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(UsageError, match=message) as info:
        load_report(path)
    assert info.value.exit_code == 2


def test_case_from_dict_inverts_case_to_dict(report):
    for result in report.cases:
        rebuilt = case_from_dict(json.loads(json.dumps(case_to_dict(result))))
        assert rebuilt == replace(result, observation=None)


def test_report_from_dict_inverts_report_to_dict(report):
    rebuilt = report_from_dict(report_to_dict(report))
    assert rebuilt.summary == report.summary and rebuilt.layers == report.layers
    assert report_to_dict(rebuilt)["cases"][1]["evidence"] == report_to_dict(report)["cases"][1]["evidence"]


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d.pop("id"), "lacks 'id'"),
    (lambda d: d.pop("status"), "lacks 'status'"),
    (lambda d: d.update(status="passed"), "status 'passed'"),
    (lambda d: d.update(channel="sms"), "channel 'sms'"),
    (lambda d: d["evidence"][0].update(availability="maybe"), "availability 'maybe'"),
    (lambda d: d["evidence"][0].pop("check"), "evidence lacks 'check'"),
])
def test_case_from_dict_rejects_malformed_cases(report, mutate, message):
    d = case_to_dict(report.cases[1])
    mutate(d)
    with pytest.raises(ValueError, match=message):
        case_from_dict(d)


def test_case_from_dict_rejects_non_objects():
    with pytest.raises(ValueError, match="must be an object"):
        case_from_dict(["not", "a", "case"])


@pytest.mark.parametrize("counts, rate", [
    ({"decidable": 0, "passed": 0}, "n/a"),   # never 100% of nothing
    ({"decidable": 0, "passed": 3}, "n/a"),
    ({}, "n/a"),
    ({"decidable": 10, "passed": 10}, "100%"),
    ({"decidable": 10, "passed": 9}, "90%"),
    ({"decidable": 3, "passed": 2}, "66.7%"),
    ({"decidable": 2000, "passed": 1999}, "99.9%"),  # must not round up to a clean 100%
    ({"decidable": 4, "passed": 0}, "0%"),
])
def test_pass_rate(counts, rate):
    assert pass_rate(counts) == rate


@pytest.mark.parametrize("index, expected", [
    (0, ""),                                                    # pass: nothing to explain
    (1, "reply.regex (turn 0): no match for (?i)invalid.*url"),  # first *failing* evidence
    (2, "soft: similarity (turn 0): similarity 0.71 in soft band"),
    (3, "unavailable: critic (turn 0): critic backend down"),
    (4, "timeout after 30s waiting for turn 1"),
])
def test_headline_explains_each_status(report, index, expected):
    assert headline(case_to_dict(report.cases[index])) == expected


def test_headline_of_a_failed_case_without_evidence_says_so():
    assert "no evidence" in headline({"status": "fail", "evidence": []})


def test_headline_is_one_line_and_truncated():
    case = {"status": "error", "error": "line one\nline two " + "x" * 500}
    text = headline(case, limit=40)
    assert "\n" not in text and len(text) == 40 and text.endswith("…")


def test_lone_surrogate_from_the_agent_cannot_abort_the_report(report, evidence, tmp_path):
    # json.loads('"\\ud800"') yields a lone surrogate, which UTF-8 cannot encode.
    bad = json.loads('"before \\ud800 after"')
    case = replace(report.cases[1], evidence=(evidence("reply.regex", False, observed=bad),))
    path = write_json(replace(report, cases=(case,)), tmp_path / "results.json")
    assert load_report(path)["cases"][0]["evidence"][0]["observed"] == "before ? after"


def test_case_files_are_kept_relative_to_the_project(tmp_path, monkeypatch):
    """Issue 25: junit.xml's file= and the report carry no machine paths."""
    from harness.report.jsonfile import portable_path

    monkeypatch.chdir(tmp_path)
    inside = tmp_path / "fixtures" / "robustness" / "a.yaml"
    assert portable_path(str(inside)) == "fixtures/robustness/a.yaml"
    assert portable_path("/somewhere/else/a.yaml") == "/somewhere/else/a.yaml"
    assert portable_path("fixtures/x.yaml") == "fixtures/x.yaml" and portable_path("") == ""
