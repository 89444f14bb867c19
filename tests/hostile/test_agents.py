"""Hostile agents through the whole command line: each ends as failing evidence or a clear
start-up error (exit 4), never a traceback of the harness, a hang, a leftover process or an
unbounded report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.cli import main
from harness.targets import procs
from tests.hostile._project import HELLO, ROOT, bot_config, harness_cli, kill_all, read_pids, write_cases

CASES = HELLO


def run(tmp_path: Path, hostile: str, *, timeout_s: float = 5) -> tuple:
    write_cases(tmp_path, "hostile.yaml", CASES)
    cfg = bot_config(tmp_path, hostile, name="hostile", ready_timeout_s=20, env={"HOSTILE_PIDS": str(tmp_path / "pids")},
                     tables=f"""
        [sandbox]
        settle_s = 0.3
        reply_timeout_s = {timeout_s}
        case_timeout_s = {timeout_s * 3}
        """)
    out = tmp_path / "out"
    started = time.monotonic()
    done = harness_cli("run", "--config", cfg, "--out", out, "--quiet", cwd=tmp_path, timeout=180)
    found = list(out.glob("*/results.json"))
    results = json.loads(found[0].read_text()) if found else None
    return done, results, out, time.monotonic() - started


def no_harness_traceback(text: str) -> bool:
    """The agent's own output (quoted from target.log) may hold a traceback; the harness's never."""
    return 'File "' + str(ROOT / "harness") not in text and "harness/" not in "".join(
        line for line in text.splitlines() if line.strip().startswith('File "'))


def test_an_agent_that_crashes_at_start_is_exit_4_with_its_log(tmp_path):
    done, results, _out, _s = run(tmp_path, "crash")
    assert done.returncode == 4, done.stderr
    assert "the target exited with code 3 before it was ready" in done.stderr
    assert "the bot refuses to start" in done.stderr  # its log tail, quoted
    assert no_harness_traceback(done.stderr)


def test_an_agent_writing_garbage_to_its_log_is_still_judged(tmp_path):
    done, results, out, _s = run(tmp_path, "garbage")
    assert done.returncode == 0, done.stderr
    log = next(out.glob("*/target.log")).read_bytes()
    assert b"\xff\xfe" in log and log.count(b"g") >= 300_000  # kept as the agent wrote it, nothing lost


def test_an_agent_that_never_answers_its_webhook_fails_in_bounded_time(tmp_path):
    done, results, _out, seconds = run(tmp_path, "hang", timeout_s=2)
    assert done.returncode == 1, done.stderr
    assert results["cases"][0]["status"] in ("fail", "error")
    assert no_harness_traceback(done.stderr)  # bounded: harness_cli's timeout (180 s) fails a hang


def test_a_3_mb_reply_leaves_the_report_small(tmp_path):
    done, results, out, _s = run(tmp_path, "bomb")
    assert done.returncode in (0, 1), done.stderr
    assert no_harness_traceback(done.stderr)
    for name in ("results.json", "results.jsonl", "report.html", "summary.md", "junit.xml"):
        size = next(out.glob(f"*/{name}")).stat().st_size
        assert size < 2_500_000, f"{name} is {size} bytes"


@pytest.mark.skipif(not procs.SUPPORTED, reason="process trees need POSIX signals and psutil (Linux, macOS)")
def test_no_process_of_a_stubborn_forking_agent_outlives_harness_run(tmp_path, monkeypatch):
    done, results, out, _s = run(tmp_path, "worker,stubborn")
    assert (tmp_path / "pids").exists()
    pids = read_pids(tmp_path / "pids")
    try:
        assert done.returncode == 0, done.stderr
        assert set(pids) == {"bot", "worker"}
        assert [p for p in pids.values() if procs.start_time(p) is not None] == []
        assert not (out / ".targets").exists()
    finally:
        kill_all(pids.values())


@pytest.mark.skipif(not procs.SUPPORTED, reason="process trees need POSIX signals and psutil (Linux, macOS)")
def test_a_sigterm_to_harness_run_ends_the_agents_whole_tree(tmp_path):
    write_cases(tmp_path, "hostile.yaml",
                "layer: robustness\ncases:\n  - id: waits\n    send: hello\n    expect: {replies: {min: 5}}\n")
    cfg = bot_config(tmp_path, "worker,stubborn", env={"HOSTILE_PIDS": str(tmp_path / "pids")}, tables="""
        [sandbox]
        reply_timeout_s = 60
        """)
    harness = subprocess.Popen([sys.executable, "-m", "harness.cli", "run", "--config", str(cfg), "--out",
                                str(tmp_path / "out"), "--quiet"], cwd=tmp_path, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONPATH": str(ROOT)})
    pids: dict[str, int] = {}
    try:
        deadline = time.time() + 30
        while time.time() < deadline and len(pids) < 2:
            pids = read_pids(tmp_path / "pids")
            time.sleep(0.1)
        assert set(pids) == {"bot", "worker"}
        time.sleep(1.0)  # the case is waiting for replies that never come
        harness.send_signal(15)
        _out, err = harness.communicate(timeout=30)
        assert harness.returncode == 130, err
        assert "interrupted" in err and no_harness_traceback(err)
        assert [p for p in pids.values() if procs.start_time(p) is not None] == []
    finally:
        kill_all(pids.values())
        if harness.poll() is None:
            harness.kill()


def test_an_agent_printing_without_end_never_fills_the_disk(tmp_path: Path, capsys, monkeypatch):
    """Issue 24: target.log had no size limit (and the exit-4 tail read it whole): past the cap the
    output is drained but only its end is kept, after a note saying how much was dropped."""
    from harness.targets.http import LogPump

    monkeypatch.setattr(LogPump, "CAP", 1_000_000)
    write_cases(tmp_path, "a.yaml", 'layer: robustness\ncases:\n  - id: one\n    send: "hi"\n'
                                    '    expect: {replies: {min: 1}}\n')
    cfg = bot_config(tmp_path, "chatty")
    assert main(["run", "--config", str(cfg), "--quiet", "--run-id", "r1"]) == 0, capsys.readouterr().err
    log = (tmp_path / "reports" / "r1" / "target.log").read_bytes()
    assert len(log) < 1_000_000 + LogPump.TAIL + 1_000
    assert b"bytes of the target's output were dropped" in log
    assert b"LAST LINE BEFORE LISTENING" in log, (log.count(b"chatter"), log[-600:])
