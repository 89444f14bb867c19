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


def test_off_a_terminal_passes_are_counted_and_v_lists_them(tmp_path, capsys):
    """Issue 25 item 4: off a TTY a run prints failures and count lines; -v every case."""
    cfg = make_project(tmp_path, cases=echo_cases(3))
    assert cli.main(["run", "--config", str(cfg), "--run-id", "quiet"]) == 0
    out = capsys.readouterr().out
    assert "pass echo-" not in out and "[ 3/3 ] 3 passed · " in out
    assert cli.main(["run", "--config", str(cfg), "--run-id", "loud", "-v"]) == 0
    out = capsys.readouterr().out
    assert all(f"pass echo-{i}" in out for i in range(3))
