"""The multi-turn layer against docbot through the CLI: clean cases pass, and seeded
multi-turn regressions fail with evidence naming the turn and the state path or call."""

from __future__ import annotations

import json

import pytest

from tests.test_docbot_e2e import harness, only_run

CASES = ("multi-cancel-mid-task", "multi-switch-document-a-to-b", "multi-llm-500-then-user-retry")


def _run(tmp_path, regression: str) -> dict:
    out = tmp_path / "out"
    args = ["run", "--layer", "multiturn", "--out", str(out), "--quiet"]
    for c in CASES:
        args += ["--case", c]
    proc = harness(*args, env={"DOCBOT_REGRESSION": regression})
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    return json.loads((only_run(out) / "results.json").read_text())


def _failing(results: dict, case_id: str) -> list[dict]:
    case = next(c for c in results["cases"] if c["id"] == case_id)
    return [e for e in case["evidence"] if e["passed"] is False]


def test_clean_docbot_passes_the_sample(tmp_path):
    results = _run(tmp_path, "")
    assert [c["status"] for c in results["cases"]] == ["pass"] * len(CASES), [
        (c["id"], [e["reason"] for e in c["evidence"] if e["passed"] is False]) for c in results["cases"]]
    assert results["layers"]["multiturn"]["slots"]["fn"] == 0


@pytest.mark.parametrize("regression,case_id,check,needle", [
    ("cancel_ignored", "multi-cancel-mid-task", "calls_after", "calls after the reply"),
    ("old_document_kept_after_switch", "multi-switch-document-a-to-b", "state", "$.document.url"),
    ("retry_loop_unbounded", "multi-llm-500-then-user-retry", "max_calls", "llm x"),
])
def test_regression_is_caught_naming_turn_and_path_or_call(tmp_path, regression, case_id, check, needle):
    failing = _failing(_run(tmp_path, regression), case_id)
    hits = [e for e in failing if e["check"] == check and needle in e["reason"]]
    assert hits, [(e["turn"], e["check"], e["reason"]) for e in failing]
    assert hits[0]["turn"] is not None and hits[0]["reason"].startswith(f"turn {hits[0]['turn']}")
