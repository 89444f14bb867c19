"""A case's regular expression that backtracks without end on what the agent sent (issue 24,
round 3, session 29): `(a|aa)+$` against a reply of 60 `a`s and a `!` held `harness run` (and
its event loop) for hours, since Python's re has no time limit. The check is now `unavailable`
saying why (never a pass, never a hang); the well-formed twin passes. Run as a child process,
so a hang is a failed test, not a hung suite."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ops"))

from ops_support import make_project  # noqa: E402

from tests.hostile._project import harness_cli  # noqa: E402

SEND = "a" * 60 + "!"


@pytest.mark.parametrize("expect, twin, check", [
    ('{reply: {regex: "(a|aa)+$"}}', '{reply: {regex: "a+!$"}}', "reply.regex"),
    ('{reply: {not_regex: "(a|aa)+$"}}', '{reply: {not_regex: "b+$"}}', "reply.not_regex"),
    ('{calls_after: {reply_regex: "(a|aa)+$", max: 0}}', '{calls_after: {reply_regex: "a+!$", max: 0}}',
     "calls_after"),
])
def test_a_regex_that_backtracks_without_end_is_unavailable_not_a_hang(tmp_path, expect, twin, check):
    cases = f'layer: robustness\ncases:\n  - id: slow\n    send: "{SEND}"\n    expect: {expect}\n'
    cfg = make_project(tmp_path, cases=cases)
    proc = harness_cli("run", "--config", cfg, "--quiet", "--run-id", "r1", cwd=tmp_path, timeout=600)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # an incomplete night, not a pass
    [case] = json.loads((tmp_path / "reports" / "r1" / "results.json").read_text())["cases"]
    [evidence] = [e for e in case["evidence"] if e["check"] == check]
    assert evidence["availability"] == "unavailable" and "backtracked more than 1 s" in evidence["reason"], evidence
    (tmp_path / "fixtures" / "robustness" / "echo.yaml").write_text(cases.replace(expect, twin))
    proc = harness_cli("run", "--config", cfg, "--quiet", "--run-id", "r2", cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
