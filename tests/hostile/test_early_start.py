"""``harness run`` starts the target right after the config loads (harness/run/early.py), before
it reads the cases or takes the lock. A run refused after that (a broken case file, no case
selected, a held lock, Ctrl-C) must still leave no trace: no process of the target's tree (also
a worker that left its process group), no run folder, no --out folder, no process record."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness import cli
from harness.cli import process as cli_process, suite as cli_suite
from harness.targets import procs
from harness.targets.http import HttpTarget
from tests.hostile._project import ROOT, bot_config, kill_all, read_pids, write_cases

pytestmark = pytest.mark.skipif(not procs.SUPPORTED, reason="process trees need POSIX signals and psutil (Linux, macOS)")

GOOD = """\
    layer: robustness
    cases:
      - id: hello
        send: "hi"
        expect: {replies: {min: 1}}
    """
BROKEN = """\
    layer: robustness
    cases:
      - id: hello
        send: "hi"
        expect: {no_such_check: 1}
    """


def _wait_for(predicate, what: str, timeout: float = 20.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _tree(tag: str) -> list[int]:
    """Live processes that carry the run's process tag (the bot, its worker outside the group)."""
    return [p for p in procs._pids() if procs._tagged(p, tag) and procs.start_time(p) is not None]


def _files(folder: Path) -> set[Path]:
    return {p.relative_to(folder) for p in folder.rglob("*")}


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project whose bot starts a worker that leaves its process group; ``started`` records the
    target's (pid, tag) when ``harness run`` spawns it, and ``hold`` holds the cases' validation
    until the bot and its worker are up (so the refusal comes after a real, whole start)."""
    pids = tmp_path / "pids"
    cfg = bot_config(tmp_path, "worker", name="early", ready_timeout_s=20, env={"HOSTILE_PIDS": str(pids)})
    started: list[tuple[int, str]] = []
    spawn, validate = HttpTarget.spawn, cli_suite.validate_suite

    def recording_spawn(self, placeholders):
        again = self._spawned  # start() calls it too: a no-op once spawned
        spawn(self, placeholders)
        if not again and self._proc is not None:
            started.append((self._proc.pid, self.tree.tag))

    def held_validate(args, config):
        assert started, "the target was not started before the cases were read"
        _wait_for(lambda: {"bot", "worker"} <= set(read_pids(pids)), "the bot and its worker")
        return validate(args, config)

    monkeypatch.setattr(HttpTarget, "spawn", recording_spawn)
    monkeypatch.setattr(cli_suite, "validate_suite", held_validate)
    yield cfg, started, pids
    kill_all(read_pids(pids).values())


def _assert_no_trace(tmp_path: Path, before: set[Path], started, pids: Path) -> None:
    assert len(started) == 1, started
    _pid, tag = started[0]
    up = read_pids(pids)
    assert {"bot", "worker"} <= set(up)
    _wait_for(lambda: not _tree(tag), "the target's tree to end", timeout=10)
    assert all(procs.start_time(p) is None for p in up.values()), "a process of the target outlived the run"
    assert _files(tmp_path) - {Path("pids")} == before, "the refused run left files behind"


@pytest.mark.parametrize("refusal", ["broken case file", "no case selected", "interrupted"])
def test_a_refused_run_stops_the_early_target_and_leaves_no_files(tmp_path, project, refusal, capsys, monkeypatch):
    cfg, started, pids = project
    write_cases(tmp_path, "cases.yaml", BROKEN if refusal == "broken case file" else GOOD)
    extra = ["--case", "nothing-*"] if refusal == "no case selected" else []
    if refusal == "interrupted":  # Ctrl-C / SIGTERM while the cases load
        validate = cli_suite.validate_suite

        def interrupted(args, config):
            validate(args, config)
            raise KeyboardInterrupt
        monkeypatch.setattr(cli_suite, "validate_suite", interrupted)
    before = _files(tmp_path)
    code = cli.main(["run", "--config", str(cfg), "--quiet", "--no-upload", *extra])
    err = capsys.readouterr().err
    assert code == (130 if refusal == "interrupted" else 2), err
    assert "Traceback" not in err
    _assert_no_trace(tmp_path, before, started, pids)


def test_a_run_refused_by_a_held_lock_stops_the_early_target(tmp_path, project, capsys):
    cfg, started, pids = project
    write_cases(tmp_path, "cases.yaml", GOOD)
    (tmp_path / "reports").mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom harness.night.runlock import RunLock\n"
         "RunLock(sys.argv[1], 'harness run (test holder)').acquire()\nprint('held', flush=True)\ntime.sleep(60)\n",
         str(tmp_path / "reports")], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        before = _files(tmp_path)
        code = cli.main(["run", "--config", str(cfg), "--quiet", "--no-upload"])
        err = capsys.readouterr().err
        assert code == 4 and "holds the lock" in err, err
        _assert_no_trace(tmp_path, before, started, pids)
    finally:
        holder.kill()
        holder.wait()


def test_a_run_ended_before_the_runner_took_the_target_over_leaves_nothing(tmp_path, project, capsys, monkeypatch):
    """Ctrl-C between the early start and the run (while the harness still imports)."""
    cfg, started, pids = project
    write_cases(tmp_path, "cases.yaml", GOOD)

    def interrupted() -> None:
        _wait_for(lambda: {"bot", "worker"} <= set(read_pids(pids)), "the bot and its worker")
        raise KeyboardInterrupt
    monkeypatch.setattr(cli_process, "loaded", interrupted)
    before = _files(tmp_path)
    assert cli.main(["run", "--config", str(cfg), "--quiet", "--no-upload"]) == 130
    _assert_no_trace(tmp_path, before, started, pids)


def test_the_early_target_serves_a_whole_run(tmp_path, project, capsys):
    """The same project, not refused: the early-started bot answers, the run passes."""
    cfg, started, pids = project
    write_cases(tmp_path, "cases.yaml", GOOD)
    code = cli.main(["run", "--config", str(cfg), "--quiet", "--no-upload"])
    assert code == 0, capsys.readouterr().err
    assert len(started) == 1
    _wait_for(lambda: not _tree(started[0][1]), "the target's tree to end", timeout=10)
    (run,) = [p for p in (tmp_path / "reports").iterdir() if p.is_dir() and not p.name.startswith(".")]
    assert (run / "results.json").exists() and (run / "target.log").exists()


async def test_a_runner_that_never_brought_the_early_target_up_still_stops_it(tmp_path, project):
    """The cases failed to load before the runner's start-up task ran at all: ``shut_down``
    stops what ``start_early`` started and closes the sockets no server took."""
    from harness.config import load_config
    from harness.run.early import start_early
    from harness.run.runner import RunOptions, Runner

    cfg, started, pids = project
    config = load_config(cfg, environ={})
    early = start_early(config, tmp_path / "reports", "early-run")
    assert early is not None and early.error is None and len(started) == 1
    _wait_for(lambda: {"bot", "worker"} <= set(read_pids(pids)), "the bot and its worker")
    runner = Runner(config, RunOptions(out_dir=tmp_path / "reports", run_id="early-run"), early=early)
    assert early.taken
    await runner.shut_down()
    _wait_for(lambda: not _tree(started[0][1]), "the target's tree to end", timeout=10)
    assert early.reserved.take("telegram") is None  # closed, not left open
