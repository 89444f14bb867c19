"""--resume after SIGKILL continues from the journal; the run lock refuses a concurrent run (two processes)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from ops_support import echo_cases, make_project

from harness import cli
from harness.report.journal import read_journal
from harness.night.runlock import RunLock, RunLocked, lock_path

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def _start(cfg: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "harness.cli", "run", "--config", str(cfg), "--quiet", *extra],
                            cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _wait_for(predicate, proc: subprocess.Popen, what: str, timeout: float = 60) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return
        assert proc.poll() is None, f"the run ended before {what}: {proc.communicate()}"
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def test_resume_after_sigkill_runs_only_the_unfinished_cases(tmp_path, capsys):
    cfg = make_project(tmp_path, cases=echo_cases(6), mode="slow")  # 1.5 s per case
    journal = tmp_path / "reports" / "killed" / "results.jsonl"
    proc = _start(cfg, "--run-id", "killed")
    try:
        _wait_for(lambda: journal.exists() and len(read_journal(journal)) >= 2, proc, "two finished cases")
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    before = [r["id"] for r in read_journal(journal)]
    assert 2 <= len(before) < 6 and not (journal.parent / "results.json").exists()

    # The config stays as it was: a changed config would run every case again (night/runflow.run_basis).
    code = cli.main(["run", "--config", str(cfg), "--quiet", "--resume", "killed"])
    assert code == 0, capsys.readouterr()
    lines = read_journal(journal)
    counts = Counter(r["id"] for r in lines)
    assert sorted(counts) == [f"echo-{i}" for i in range(6)]
    assert set(counts.values()) == {1}, counts  # no finished case ran again, none is missing
    assert [r["id"] for r in lines[:len(before)]] == before  # appended to the same journal
    results = json.loads((journal.parent / "results.json").read_text())
    assert results["run_id"] == "killed"
    assert results["summary"]["planned"] == results["summary"]["passed"] == 6
    by = {c["id"]: c for c in results["cases"]}
    assert all(by[i]["turns"] for i in before)  # the kept cases keep their transcripts
    assert any("resumed: " in n for n in results["notes"])
    resumed = results["manifest"]["resumed"]
    assert resumed[0]["finished_before"] == len(before)
    assert results["manifest"]["selection"]["layers"] == []


def test_resume_keeps_the_original_selection_and_needs_a_journal(tmp_path, capsys):
    cfg = make_project(tmp_path, cases=echo_cases(4))
    assert cli.main(["run", "--config", str(cfg), "--quiet", "--run-id", "sel", "--case", "echo-1",
                     "--case", "echo-2"]) == 0
    assert cli.main(["run", "--config", str(cfg), "--quiet", "--resume", "sel"]) == 0
    results = json.loads((tmp_path / "reports" / "sel" / "results.json").read_text())
    assert sorted(c["id"] for c in results["cases"]) == ["echo-1", "echo-2"]  # not the whole suite
    assert len(read_journal(tmp_path / "reports" / "sel" / "results.jsonl")) == 2  # nothing ran again
    assert cli.main(["run", "--config", str(cfg), "--quiet", "--resume", "nope"]) == 2
    assert "no journal to resume" in capsys.readouterr().err


def test_a_second_concurrent_run_is_refused_by_the_lock(tmp_path, capsys):
    cfg = make_project(tmp_path, cases=echo_cases(4), mode="slow")
    lock = lock_path(tmp_path / "reports")
    first = _start(cfg)
    try:
        _wait_for(lambda: lock.exists() and lock.read_text().strip(), first, "the lock to be taken")
        holder = json.loads(lock.read_text())
        assert holder["pid"] == first.pid and "harness run" in holder["command"]
        # A second process (this one): refused, cleanly, with who holds the lock.
        assert cli.main(["run", "--config", str(cfg), "--quiet"]) == 4
        err = capsys.readouterr().err
        assert f"another harness run (pid {first.pid}, started {holder['started_at']}) holds the lock" in err
        assert len(list((tmp_path / "reports").glob("2*"))) == 1  # the refused run left no run folder
        # A third process (a fresh interpreter, like cron's): refused too.
        third = subprocess.run([sys.executable, "-m", "harness.cli", "run", "--config", str(cfg), "--quiet"],
                               cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=60)
        assert third.returncode == 4 and "holds the lock" in third.stderr
        first.send_signal(signal.SIGKILL)  # even a killed holder frees the lock (flock dies with it)
        first.wait(10)
    finally:
        if first.poll() is None:
            first.kill()
    with RunLock(tmp_path / "reports", "test"):
        pass


def test_lock_is_reentrant_in_process_and_exclusive_across_processes(tmp_path):
    with RunLock(tmp_path, "outer"):
        with RunLock(tmp_path, "inner"):  # a schedule cycle running harness run in-process
            pass
        code = ("import sys; from harness.night.runlock import RunLock, RunLocked\n"
                f"try:\n    RunLock({str(tmp_path)!r}).acquire()\nexcept RunLocked as e:\n"
                "    print(e.message); sys.exit(4)\n")
        other = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=ENV, capture_output=True, text=True)
        assert other.returncode == 4 and f"(pid {os.getpid()}," in other.stdout
    assert not lock_path(tmp_path).exists()  # released: the reports folder holds only runs again
    assert RunLocked.exit_code == 4


def test_resume_runs_again_the_cases_whose_definition_changed(tmp_path, capsys):
    """Issue 24: a verdict kept by --resume must be a verdict on tonight's definition."""
    cfg = make_project(tmp_path, cases=echo_cases(3))
    assert cli.main(["run", "--config", str(cfg), "--quiet", "--run-id", "edit"]) == 0
    fixture = tmp_path / "fixtures" / "robustness" / "echo.yaml"
    fixture.write_text(fixture.read_text().replace('contains: "echo: m1"', 'contains: "something else"'))
    capsys.readouterr()
    assert cli.main(["run", "--config", str(cfg), "--quiet", "--resume", "edit"]) == 1  # the new definition fails
    assert "1 case(s) changed since the run was started and run again: echo-1" in capsys.readouterr().err
    results = json.loads((tmp_path / "reports" / "edit" / "results.json").read_text())
    by = {c["id"]: c for c in results["cases"]}
    assert by["echo-1"]["status"] == "fail" and by["echo-0"]["status"] == "pass"
    assert any("changed since the run was started" in n and "echo-1" in n for n in results["notes"])
    counts = Counter(r["id"] for r in read_journal(tmp_path / "reports" / "edit" / "results.jsonl"))
    assert counts == {"echo-0": 1, "echo-1": 2, "echo-2": 1}


import pytest  # noqa: E402


@pytest.mark.parametrize("manifest", ['[1, 2]', '{"selection": {"repeat": "many"}}', '{"selection": [1]}',
                                      '{"selection": {"layers": "robustness"}}', '{"selection": {"shard": "x/y"}}',
                                      '{"case_hashes": [1]}', '{"resumed": 3}'])
def test_a_hand_edited_manifest_is_a_clear_error_not_a_crash(tmp_path, capsys, manifest):
    cfg = make_project(tmp_path, cases=echo_cases(2))
    assert cli.main(["run", "--config", str(cfg), "--quiet", "--run-id", "man"]) == 0
    (tmp_path / "reports" / "man" / "manifest.json").write_text(manifest)
    capsys.readouterr()
    assert cli.main(["run", "--config", str(cfg), "--quiet", "--resume", "man"]) == 2
    err = capsys.readouterr().err
    assert "is not the manifest the harness wrote" in err and "fix:" in err, err
