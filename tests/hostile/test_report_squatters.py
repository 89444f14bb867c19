"""An agent that turns a report file into a folder (or a symlink) cannot make the run die before
results.json (issue 24): the report lands where readers look, what was there is moved aside."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ops"))

from ops_support import echo_cases, make_project  # noqa: E402

from harness import cli  # noqa: E402
from harness.fileio import atomic_write_text  # noqa: E402


def test_a_folder_or_symlink_where_a_file_goes_is_moved_aside(tmp_path: Path):
    (tmp_path / "results.json").mkdir()
    (tmp_path / "results.json" / "agent.txt").write_text("the agent's")
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("not ours to overwrite")
    (tmp_path / "report.html").symlink_to(outside)
    atomic_write_text(tmp_path / "results.json", "{}")
    atomic_write_text(tmp_path / "report.html", "<p>")
    assert (tmp_path / "results.json").read_text() == "{}"
    assert (tmp_path / "results.json.not-a-file" / "agent.txt").read_text() == "the agent's"
    assert (tmp_path / "report.html").read_text() == "<p>" and not (tmp_path / "report.html").is_symlink()
    assert outside.read_text() == "not ours to overwrite"


def test_a_run_whose_report_paths_are_folders_still_writes_its_results(tmp_path: Path, capsys, monkeypatch):
    from harness.night.runflow import RunFlow

    cfg = make_project(tmp_path, cases=echo_cases(2))
    run = tmp_path / "reports" / "squat"
    begin = RunFlow.begin

    def begin_then_squat(self, cases):  # what an agent writing into {run_dir} could do meanwhile
        prior = begin(self, cases)
        for name in ("results.json", "report.html", "summary.md", "junit.xml", "manifest.json"):
            (run / name).unlink(missing_ok=True)
            (run / name).mkdir(parents=True)
        return prior

    monkeypatch.setattr(RunFlow, "begin", begin_then_squat)
    code = cli.main(["run", "--config", str(cfg), "--quiet", "--run-id", "squat"])
    assert code == 0, capsys.readouterr()
    assert json.loads((run / "results.json").read_text())["summary"]["passed"] == 2
    assert (run / "results.json.not-a-file").is_dir()


@pytest.mark.parametrize("what", ["journal-folder", "journal-fifo", "journal-link", "run-folder-a-file"])
def test_a_run_whose_journal_or_folder_was_squatted_still_writes_its_results(tmp_path: Path, capsys, monkeypatch,
                                                                            what):
    """Issue 24: results.jsonl made a folder (exit 70), a FIFO (the run hung on its open) or a
    link, or the run folder itself replaced by a file (exit 70), before the runner opens them."""
    import os
    import shutil

    from harness.night.runflow import RunFlow

    cfg = make_project(tmp_path, cases=echo_cases(2))
    run = tmp_path / "reports" / "squat"
    journal = run / "results.jsonl"
    begin = RunFlow.begin

    def begin_then_squat(self, cases):
        prior = begin(self, cases)
        if what == "journal-folder":
            journal.mkdir()
        elif what == "journal-fifo":
            os.mkfifo(journal)
        elif what == "journal-link":
            os.symlink(tmp_path / "elsewhere.jsonl", journal)
        else:
            shutil.rmtree(run)
            run.write_text("not a folder")
        return prior

    monkeypatch.setattr(RunFlow, "begin", begin_then_squat)
    code = cli.main(["run", "--config", str(cfg), "--quiet", "--run-id", "squat"])
    assert code == 0, capsys.readouterr()
    assert json.loads((run / "results.json").read_text())["summary"]["passed"] == 2
    assert len(journal.read_text().splitlines()) == 2 and not (tmp_path / "elsewhere.jsonl").exists()
    if what == "run-folder-a-file":
        assert (tmp_path / "reports" / "squat.not-a-folder").read_text() == "not a folder"
