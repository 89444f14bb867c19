"""harness baseline / diff / history on synthetic run folders (CLI level)."""

from __future__ import annotations

import json

from harness.night.baseline import read_baseline
from harness.cli import main


def _setup(tmp_path, make_run, make_case, save_run):
    reports = tmp_path / "reports"
    save_run(reports, make_run("20240101-020000-aaaa", [make_case("a"), make_case("b")]))
    save_run(reports, make_run("20240102-020000-bbbb", [make_case("a"), make_case("b", "fail")]))
    save_run(reports, make_run("20240103-020000-cccc", [make_case("a", "fail"), make_case("b", "fail")]))
    (tmp_path / "harness.toml").write_text("[target]\nname = 'x'\n", encoding="utf-8")
    return reports, ["--config", str(tmp_path / "harness.toml"), "--out", str(reports)]


def test_diff_defaults_to_the_previous_run_then_the_baseline(tmp_path, make_run, make_case, save_run, capsys,
                                                              monkeypatch):
    reports, opts = _setup(tmp_path, make_run, make_case, save_run)
    assert main(["diff", *opts]) == 1
    out = capsys.readouterr().out
    assert "20240102-020000-bbbb -> 20240103-020000-cccc" in out and "previous run" in out
    assert "a (robustness): pass -> fail" in out
    written = json.loads((reports / "20240103-020000-cccc" / "diff.json").read_text())
    assert [e["id"] for e in written["regressions"]] == ["a"]

    monkeypatch.setenv("USER", "tester")
    assert main(["baseline", *opts, "accept", "20240101", "--note", "known good"]) == 0
    record = read_baseline(reports)
    assert record["run_id"] == "20240101-020000-aaaa" and record["accepted_by"] == "tester"
    assert record["note"] == "known good" and record["accepted_at"]
    assert main(["baseline", *opts, "show"]) == 0
    assert "accepted by tester" in capsys.readouterr().out

    assert main(["diff", *opts, "--json", "--no-write"]) == 1
    d = json.loads(capsys.readouterr().out)
    assert d["base_run"]["run_id"] == "20240101-020000-aaaa" and "accepted baseline" in d["base_run"]["why"]
    assert sorted(e["id"] for e in d["regressions"]) == ["a", "b"]
    # two named runs, no regression between them
    assert main(["diff", *opts, "20240102-020000-bbbb", "20240101-020000-aaaa", "--no-write"]) == 0


def test_usage_errors_exit_2(tmp_path, make_run, make_case, save_run, capsys):
    reports, opts = _setup(tmp_path, make_run, make_case, save_run)
    assert main(["baseline", *opts, "accept", "nope"]) == 2
    assert "no such run" in capsys.readouterr().err
    empty = ["--config", opts[1], "--out", str(tmp_path / "none")]
    assert main(["diff", *empty]) == 2
    assert main(["history", *empty]) == 2  # a folder named but missing is a mistake, not "no runs yet"
    (tmp_path / "none").mkdir()
    assert main(["history", *empty]) == 0  # an empty reports folder: no runs yet


def test_history_prints_and_exports(tmp_path, make_run, make_case, save_run, capsys):
    reports, opts = _setup(tmp_path, make_run, make_case, save_run)
    assert main(["history", *opts, "--last", "2", "--parquet", str(tmp_path / "h.parquet")]) == 0
    out = capsys.readouterr().out
    assert "2 run(s): 20240102-020000-bbbb .. 20240103-020000-cccc" in out
    assert "wrote" in out and (tmp_path / "h.parquet").stat().st_size > 0


def test_a_reports_folder_named_but_missing_is_an_error_not_no_runs(tmp_path, make_run, make_case, save_run, capsys):
    """issue 24: `history --out TYPO` said "no runs found" with exit 0, as if no night had run."""
    reports, opts = _setup(tmp_path, make_run, make_case, save_run)
    config = ["--config", str(tmp_path / "harness.toml")]
    for command in (["history"], ["diff"], ["baseline", "show"]):
        capsys.readouterr()
        assert main([*command[:1], *config, "--out", str(tmp_path / "reprots"), *command[1:]]) == 2, command
        err = capsys.readouterr().err
        assert "reprots: no such folder" in err and "fix:" in err and "Traceback" not in err
    (tmp_path / "a-file").write_text("x")
    assert main(["history", *config, "--out", str(tmp_path / "a-file")]) == 2
    assert "not a folder" in capsys.readouterr().err
    assert main(["history", *opts]) == 0  # the twin: the folder that is there
