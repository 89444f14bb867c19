"""A turn's quiet window ends early only on evidence that the agent is idle (run/idle.py): the
webhook answered, nothing of the case's in flight in the sandbox (Router.busy_for), the target's
process tree at rest. Whatever that evidence cannot see, a reply sent on a timer, is still
caught: late and duplicate replies fail their case however the window ended."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from harness.cases import load_cases
from harness.config import load_config
from harness.run.idle import ProcessTree
from harness.run.runner import RunOptions, run_suite
from harness.sandbox.router import InFlight, Router
from tests.agents.echo import TARGET_ENV

ROOT = Path(__file__).resolve().parents[2]

CASES = """
layer: robustness
cases:
  - id: echo-once
    send: "hello there"
    expect:
      reply: {regex: "^echo: hello there$"}
      replies: {exact: 1}
  - id: echo-two-turns
    turns:
      - send: "one"
        expect: {reply: {contains: "one"}, replies: {exact: 1}}
      - send: "two"
        expect: {reply: {contains: "two"}, replies: {exact: 1}}
"""


def _project(tmp_path: Path, cases: str = CASES, inprocess: bool = False, settle_s: float = 0.6, **env: str):
    (tmp_path / "fixtures" / "robustness").mkdir(parents=True)
    (tmp_path / "fixtures" / "robustness" / "echo.yaml").write_text(textwrap.dedent(cases))
    (tmp_path / "fixtures" / "documents").mkdir()
    target = ('inprocess = "tests.agents.echo:make_app"\n' if inprocess else
              f'command = ["python", "-m", "tests.agents.echo"]\ncwd = "{ROOT}"\nport = 0\n'
              'telegram_webhook = "http://127.0.0.1:{port}/telegram"\n'
              'whatsapp_webhook = "http://127.0.0.1:{port}/whatsapp"\n')
    extra = "".join(f'{k} = "{v}"\n' for k, v in env.items()) + ("" if inprocess else 'PORT = "{port}"\n')
    cfg = tmp_path / "harness.toml"
    cfg.write_text(f'[target]\nname = "echo"\n{target}'
                   f'[sandbox]\nsettle_s = {settle_s}\nreply_timeout_s = 4\n' + TARGET_ENV + extra)
    return load_config(cfg, environ={"PYTHONPATH": str(ROOT)}), load_cases(tmp_path / "fixtures")


async def _run(tmp_path, **kw):
    config, cases = _project(tmp_path, **kw)
    return await run_suite(config, cases, RunOptions(out_dir=tmp_path / "out"))


async def test_a_command_agent_at_rest_ends_its_windows_early(tmp_path):
    report = await _run(tmp_path)
    assert {c.status for c in report.cases} == {"pass"}, [(c.id, [e.reason for e in c.evidence if not e.passed])
                                                          for c in report.cases]
    qw = report.perf["summary"]["quiet_window"]
    assert qw["idle_ends"] == qw["turns"] == 3  # every turn ended on the evidence
    assert qw["run_end_s"] == 0.6  # the run's last window is never shortened
    two = next(c for c in report.cases if c.id == "echo-two-turns").observation.turns
    assert two[0].replies[0].text == "echo: one" and two[1].replies[0].text == "echo: two"


async def test_an_in_process_agent_keeps_the_full_windows(tmp_path):
    # its work runs in the harness's own process: no process tree tells it apart (the wrong twin)
    report = await _run(tmp_path, inprocess=True)
    assert {c.status for c in report.cases} == {"pass"}
    qw = report.perf["summary"]["quiet_window"]
    assert qw["idle_ends"] == 0 and qw["run_end_s"] == qw["before_samples"]["closing_s"]


async def test_a_duplicate_sent_on_a_timer_0_3_s_late_still_fails_its_case(tmp_path):
    # the agent is at rest while its timer runs: the windows end early, the duplicate still counts
    report = await _run(tmp_path, ECHO_LATE_S="0.3")
    by = {c.id: c for c in report.cases}
    once = by["echo-once"]
    assert once.status == "fail", [e.reason for e in once.evidence]
    failed = [(e.check, e.turn) for e in once.evidence if e.passed is False]
    assert ("replies", 0) in failed and len(once.observation.turns[0].replies) == 2
    # between two turns the duplicate of the first lands beside the second: still a failure
    assert by["echo-two-turns"].status == "fail"
    assert report.exit_code == 1


async def test_a_late_answer_after_an_ack_on_a_timer_completes_its_case(tmp_path):
    # "working on it" at once, the echo 0.3 s later from a sleeping task: the case holds
    cases = CASES.split("  - id: echo-two-turns")[0].replace("replies: {exact: 1}", "replies: {min: 1}").replace(
        'reply: {regex: "^echo: hello there$"}', 'reply: {contains: "echo: hello there"}')
    report = await _run(tmp_path, cases=cases, ECHO_ACK="1", ECHO_LATE_S="0.3")
    once = report.cases[0]
    assert [r.text for r in once.observation.turns[0].replies] == ["working on it", "echo: hello there"]
    assert once.status == "pass", [e.reason for e in once.evidence]


async def test_a_turn_that_expects_no_reply_keeps_its_window(tmp_path):
    cases = """
layer: robustness
cases:
  - id: echo-no-reply-wanted
    send: "hello"
    expect: {replies: {exact: 0}}
"""
    report = await _run(tmp_path, cases=cases, ECHO_MODE="silent")
    assert report.cases[0].status == "pass", [e.reason for e in report.cases[0].evidence]
    qw = report.perf["summary"]["quiet_window"]
    assert qw["idle_ends"] == 0 and qw["turns"] == 1  # only the window itself can tell that no reply comes


def test_busy_for_sees_only_what_may_be_the_cases():
    router = Router()
    mine, other = router.open("mine", ["tg:1"]), router.open("other", ["tg:2"])
    assert not router.busy_for(mine)
    cases = [
        (None, True),                              # not attributed yet: anybody's
        (("tg:1",), True),                          # its own
        (("tg:2",), False),                         # another case's only
        (("user:nobody",), True),                   # names no running case: anybody's
        (("via:ambiguous", f"maybe:{mine.uid}"), True),
        (("via:ambiguous", f"maybe:{other.uid}"), False),
    ]
    for keys, busy in cases:
        router.inflight = {InFlight(time.time(), "/x", keys)}
        assert router.busy_for(mine) is busy, keys


SPIN = "import time\nend = time.time() + 5\nwhile time.time() < end: pass"  # never outlives the test by long


def test_a_process_tree_at_rest_and_one_at_work():
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(5)"], start_new_session=True)
    spinner = subprocess.Popen([sys.executable, "-c", SPIN], start_new_session=True)
    parent = subprocess.Popen([sys.executable, "-c", "import subprocess, sys, time; "
                               f"subprocess.Popen([sys.executable, '-c', {SPIN!r}]); time.sleep(5)"],
                              start_new_session=True)
    try:
        time.sleep(0.5)
        for proc, at_rest in ((sleeper, True), (spinner, False), (parent, False)):  # parent: its child spins
            tree = ProcessTree(proc.pid)
            a = tree.sample()
            time.sleep(0.02)
            b = tree.sample()
            assert ProcessTree.at_rest(a, b) is at_rest, proc.args
        assert ProcessTree(2 ** 22 + 12345).sample() is None  # no such process: no evidence
    finally:
        for proc in (sleeper, spinner, parent):
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # the process and the child it started
            except ProcessLookupError:
                pass
            proc.wait()
