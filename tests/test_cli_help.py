"""The command line a newcomer meets (issue 25 item 9): help on every option, the commands in
the order they are needed, the exit codes, one name for the reports folder, a pointer at
`harness init` outside a project, and `check` refusing a suite of no case."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from harness import cli
from harness.cli.parser import ORDER, build_parser

ROOT = Path(__file__).resolve().parents[1]


def _parsers(parser: argparse.ArgumentParser, path: str = "harness"):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, f"{path} {name}")


def test_every_option_and_argument_has_help():
    missing = []
    for path, parser in _parsers(build_parser()):
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            if not action.help or action.help == argparse.SUPPRESS:
                missing.append(f"{path} {'/'.join(action.option_strings) or action.dest}")
    assert missing == [], "options without help: " + ", ".join(missing)


def test_the_walk_sees_every_command():
    seen = {p.split()[1] for p, _ in _parsers(build_parser()) if len(p.split()) == 2}
    assert seen == set(ORDER)


def test_commands_are_listed_in_the_order_a_newcomer_needs_them(capsys):
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    listed = [line.split()[0] for line in out.split("commands (in the order you need them):")[1].splitlines()
              if line.startswith("    ") and not line.startswith("     ")]
    assert listed == list(ORDER)
    assert listed[:3] == ["init", "check", "run"]


@pytest.mark.parametrize("argv", [["--help"], ["run", "--help"]])
def test_the_exit_codes_are_in_the_help(argv, capsys):
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "exit codes:" in out
    for code in ("0", "1", "2", "3", "4"):
        assert f"\n  {code} " in out


def test_reports_is_the_old_name_of_out(tmp_path, capsys):
    reports = tmp_path / "elsewhere"
    reports.mkdir()
    (tmp_path / "harness.toml").write_text("")
    cfg = str(tmp_path / "harness.toml")
    assert cli.main(["history", "--config", cfg, "--out", str(reports), "--local"]) == 0
    out, err = capsys.readouterr()
    assert "--reports is deprecated" not in err
    assert cli.main(["history", "--config", cfg, "--reports", str(reports), "--local"]) == 0
    out2, err2 = capsys.readouterr()
    assert out2 == out  # the same folder
    assert "--reports is deprecated, it is now --out" in err2


def test_outside_a_project_run_and_check_point_at_init(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for command in ("run", "check"):
        assert cli.main([command]) == 2
        err = capsys.readouterr().err
        assert "no harness.toml in" in err and "harness init" in err, err
        assert "--fixtures DIR" not in err


def test_check_with_no_case_exits_2_and_says_so(tmp_path, monkeypatch, capsys):
    (tmp_path / "fixtures" / "robustness").mkdir(parents=True)
    (tmp_path / "harness.toml").write_text("")
    assert cli.main(["check", "--config", str(tmp_path / "harness.toml")]) == 2
    err = capsys.readouterr().err
    assert "no case in" in err and "nothing to run" in err and "docs/CASES.md" in err


def test_python_m_harness_is_the_harness_command():
    done = subprocess.run([sys.executable, "-m", "harness", "--version"], capture_output=True, text=True,
                          cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("harness "), done.stderr


def test_run_reports_writes_where_out_would(tmp_path, capsys):
    sys.path.insert(0, str(ROOT / "tests" / "ops"))
    from ops_support import echo_cases, make_project

    cfg = make_project(tmp_path, cases=echo_cases(1))
    assert cli.main(["run", "--config", str(cfg), "--quiet", "--run-id", "r", "--reports", str(tmp_path / "old")]) == 0
    assert (tmp_path / "old" / "r" / "results.json").is_file()
    assert "--reports is deprecated" in capsys.readouterr().err
