"""`harness run` says what it is about to do before the first case (issue 25): how many cases of
which layers, the target, the concurrency and where the run is written."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "ops"))

from ops_support import echo_cases, make_project  # noqa: E402

from harness import cli  # noqa: E402


def test_a_header_line_comes_before_the_first_case(tmp_path, capsys):
    cfg = make_project(tmp_path, cases=echo_cases(2))
    assert cli.main(["run", "--config", str(cfg), "--run-id", "hdr", "-v"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("harness run: "))
    first = next(i for i, line in enumerate(lines) if "echo-0" in line or "echo-1" in line)
    assert header < first
    assert lines[header].startswith("harness run: 2 case(s) (2 robustness) · target echo · concurrency 1 · writing ")
    assert lines[header].endswith(str(tmp_path / "reports" / "hdr"))
