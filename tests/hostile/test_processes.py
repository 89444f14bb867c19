"""The agent's whole process tree ends with the run: a worker that left the process group, a
bot that ignores SIGTERM, and, after a kill -9 of the harness, the next run ends the leftovers."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.config import load_config
from harness.targets import procs
from harness.targets.http import HttpTarget
from tests.hostile._project import ROOT, bot_config, kill_all, read_pids

pytestmark = pytest.mark.skipif(not procs.SUPPORTED, reason="process trees need POSIX signals and psutil (Linux, macOS)")

PLACEHOLDERS = {"telegram_api": "http://127.0.0.1:9", "bot_token": "123456:" + "A" * 35,
                "webhook_secret": "w" * 32}


def write_config(tmp_path: Path, hostile: str, pids: Path) -> Path:
    return bot_config(tmp_path, hostile, name="hostile", ready_timeout_s=20, env={"HOSTILE_PIDS": str(pids)})


def running(pid: int) -> bool:
    return procs.start_time(pid) is not None


def wait_for_pids(path: Path, want: set[str], timeout: float = 15.0) -> dict[str, int]:
    deadline = time.time() + timeout
    while time.time() < deadline:
        found = read_pids(path)
        if want <= set(found):
            return found
        time.sleep(0.05)
    raise AssertionError(f"the bot never wrote {want} to {path}")


def wait_gone(pids, timeout: float = 5.0) -> list[int]:
    deadline = time.time() + timeout
    while time.time() < deadline and any(running(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if running(p)]


def write_dead_record(state: Path, pid: int, start: float) -> None:
    """A record left by a harness that is gone (its owner pid does not exist), naming one process."""
    state.mkdir(exist_ok=True)
    (state / "dead.json").write_text(json.dumps({
        "tag": "not-a-live-tag", "owner": {"pid": 999_999_999, "start": 1},
        "processes": [{"pid": pid, "start": start}]}))


async def test_worker_outside_the_group_and_a_stubborn_bot_end_with_the_run(tmp_path):
    pids_file = tmp_path / "pids"
    config = load_config(write_config(tmp_path, "worker,stubborn", pids_file), environ={})
    target = HttpTarget(config, log_path=tmp_path / "out" / "run" / "target.log")
    target.grace_s = 0.5
    await target.start(PLACEHOLDERS)
    pids = wait_for_pids(pids_file, {"bot", "worker"})
    try:
        assert os.getpgid(pids["worker"]) != os.getpgid(pids["bot"])  # the worker really left the group
        await target.stop()
        assert wait_gone(pids.values()) == [], "a process of the target outlived stop()"
        assert not (tmp_path / "out" / ".targets").exists()  # a clean stop leaves no record
    finally:
        kill_all(pids.values())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the subreaper is Linux's (PR_SET_CHILD_SUBREAPER)")
async def test_a_double_forked_daemon_with_no_environment_ends_with_the_run(tmp_path):
    """Issue 24: fork, setsid, fork, exec with an empty environment: no tag, no group, no parent
    of the bot's; the harness, as subreaper, still finds it and ends it."""
    pids_file = tmp_path / "pids"
    config = load_config(write_config(tmp_path, "daemon", pids_file), environ={})
    target = HttpTarget(config, log_path=tmp_path / "out" / "run" / "target.log")
    target.grace_s = 0.5
    await target.start(PLACEHOLDERS)
    pids = wait_for_pids(pids_file, {"bot", "daemon"})
    try:
        deadline = time.time() + 5
        while time.time() < deadline and procs.psutil.Process(pids["daemon"]).environ():
            time.sleep(0.05)  # until it has exec'd with the empty environment
        assert procs.psutil.Process(pids["daemon"]).environ() == {}
        await target.stop()
        assert wait_gone([pids["daemon"], pids["bot"]]) == [], "the daemon outlived stop()"
    finally:
        kill_all(pids.values())


CHILD = """
import asyncio, sys, time
sys.path.insert(0, {root!r})
from pathlib import Path
from harness.config import load_config
from harness.targets.http import HttpTarget

async def main():
    t = HttpTarget(load_config({cfg!r}, environ={{}}), log_path=Path({out!r}) / "run" / "target.log")
    await t.start({ph!r})
    print("READY", flush=True)
    while True:
        await asyncio.sleep(1)

asyncio.run(main())
"""


def test_after_a_kill_9_of_the_harness_the_next_run_ends_the_leftovers(tmp_path):
    pids_file = tmp_path / "pids"
    cfg = write_config(tmp_path, "worker,stubborn", pids_file)
    out = tmp_path / "out"
    code = CHILD.format(root=str(ROOT), cfg=str(cfg), out=str(out), ph=PLACEHOLDERS)
    harness = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, cwd=ROOT)
    pids: dict[str, int] = {}
    try:
        assert harness.stdout.readline().strip() == b"READY"
        pids = wait_for_pids(pids_file, {"bot", "worker"})
        harness.send_signal(signal.SIGKILL)
        harness.wait(10)
        time.sleep(0.5)
        # The hazard is real: both ignore SIGTERM (PR_SET_PDEATHSIG) and outlive the harness.
        assert running(pids["bot"]) and running(pids["worker"])
        records = list((out / ".targets").glob("*.json"))
        assert len(records) == 1
        # The next run: a new target in the same reports folder ends them before it starts.
        (tmp_path / "next").mkdir()
        calm = load_config(write_config(tmp_path / "next", "", tmp_path / "next" / "pids"), environ={})
        nxt = HttpTarget(calm, log_path=out / "run2" / "target.log")
        asyncio.run(nxt.start(PLACEHOLDERS))
        try:
            assert wait_gone(pids.values()) == []
            assert not records[0].exists()
        finally:
            asyncio.run(nxt.stop())
    finally:
        kill_all(pids.values())
        if harness.poll() is None:
            harness.kill()


@pytest.fixture
def sleeper():
    """Another process, not the target's: it sleeps 30 s unless a test ends it."""
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    yield other
    if other.poll() is None:
        other.kill()
    other.wait(5)


def test_a_recorded_pid_reused_by_another_process_is_left_alone(tmp_path, sleeper):
    state = tmp_path / ".targets"
    real = procs.start_time(sleeper.pid)
    write_dead_record(state, sleeper.pid, real - 1)  # same pid, another start time
    assert procs.reap_leftovers(state, grace_s=0.2) == []
    assert running(sleeper.pid)
    # ... and with the true start time it is ended (the check above can fail).
    write_dead_record(state, sleeper.pid, real)
    assert procs.reap_leftovers(state, grace_s=0.2) == [sleeper.pid]
    sleeper.wait(5)


def test_a_record_of_a_live_harness_is_not_touched(tmp_path, sleeper):
    state = tmp_path / ".targets"
    state.mkdir()
    me = {"pid": os.getpid(), "start": procs.start_time(os.getpid())}
    (state / "live.json").write_text(json.dumps({
        "tag": "t", "owner": me, "processes": [{"pid": sleeper.pid, "start": procs.start_time(sleeper.pid)}]}))
    assert procs.reap_leftovers(state) == []
    assert running(sleeper.pid) and (state / "live.json").exists()


def test_the_tree_is_found_without_reading_proc_by_hand(monkeypatch, tmp_path):
    """The hand-written reader was gated on ``sys.platform == "linux"`` and /proc: on macOS the
    whole tree was a no-op (nothing recorded, only the leader signalled). psutil reads the
    process table there too, so the gate is POSIX, and a tagged worker that left the group
    (setsid) is found by its environment through psutil."""
    import importlib

    monkeypatch.setattr(sys, "platform", "darwin")
    try:
        importlib.reload(procs)
        assert procs.SUPPORTED
        env = {**os.environ, procs.TAG_ENV: "tag-darwin"}
        worker = subprocess.Popen([sys.executable, "-c", "import os, time; os.setsid(); time.sleep(30)"], env=env)
        try:
            deadline = time.monotonic() + 10
            tree = procs.ProcessTree("tag-darwin", os.getpid() + 10_000_000, tmp_path / "t.json")  # no such leader
            while worker.pid not in tree.scan() and time.monotonic() < deadline:
                time.sleep(0.05)
            assert worker.pid in tree.members
            assert json.loads((tmp_path / "t.json").read_text())["processes"] == [
                {"pid": worker.pid, "start": procs.start_time(worker.pid)}]
            assert tree.end(grace_s=2.0) == [] and worker.wait(5) is not None
        finally:
            if worker.poll() is None:
                worker.kill()
                worker.wait(5)
    finally:
        monkeypatch.undo()
        importlib.reload(procs)
