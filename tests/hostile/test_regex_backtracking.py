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


@pytest.mark.parametrize("regex, twin", [("a{1000000000}", "a{3}"), ("(a{1000}){1000}", "(a{10}){3}"),
                                         ("x|y{200000}", "x|y{2,200000}")])
def test_a_regex_whose_counts_unroll_past_memory_is_refused_by_check_and_run(tmp_path, regex, twin):
    """``a{1000000000}`` compiled by the regex module (the time-limited search) took the run's memory
    until the kernel killed it (exit -9, no results). check and run now refuse it (exit 2) naming
    the fix; an open or small repeat (the twin) runs."""
    cases = f'layer: robustness\ncases:\n  - id: big\n    send: "{SEND}"\n    expect: {{reply: {{not_regex: "{regex}"}}}}\n'
    cfg = make_project(tmp_path, cases=cases)
    for cmd in ("check", "run"):
        proc = harness_cli(cmd, "--config", cfg, *(("--quiet",) if cmd == "run" else ()), cwd=tmp_path, timeout=300)
        assert proc.returncode == 2 and "repeats too much" in proc.stdout + proc.stderr, proc.stdout + proc.stderr
        assert "Traceback" not in proc.stdout + proc.stderr
    (tmp_path / "fixtures" / "robustness" / "echo.yaml").write_text(cases.replace(regex, twin))
    proc = harness_cli("check", "--config", cfg, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
