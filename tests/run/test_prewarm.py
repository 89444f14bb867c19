"""The report writers are not on a run's way to its first case: a run imports the journal, not
jinja2 and the page templates (``harness.report`` loads its writers on first use), and
``harness run`` prepares them in a worker thread while the run waits out its last quiet window
(``Runner.prewarm``), which still hears a late reply."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from harness.run.runner import RunOptions, run_loading
from tests.run.test_idle import _project

ROOT = Path(__file__).resolve().parents[2]


def test_the_runner_loads_no_report_writer():
    code = ("import sys, harness.run.runner; "
            "print(sorted(m for m in sys.modules if m == 'jinja2' or m in ('harness.report.html', "
            "'harness.report.markdown', 'harness.report.junit', 'harness.report.templating')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_package_still_names_every_writer():
    import harness.report as report

    for name in report.__all__:  # the names the package always had, loaded on first use
        assert getattr(report, name) is not None, name
    assert report.FORMATS["json"][1]({"a": 1}) == '{\n  "a": 1\n}\n'
    report.prewarm()  # every template compiles
    assert "jinja2" in sys.modules


async def test_prewarm_runs_once_in_a_worker_thread_during_the_last_window(tmp_path):
    config, cases = _project(tmp_path, ECHO_LATE_S="0.3")  # a duplicate on a timer, 0.3 s after the reply
    calls = []

    def prewarm():
        calls.append(threading.current_thread() is threading.main_thread())

    report = await run_loading(config, RunOptions(out_dir=tmp_path / "out"), lambda: cases, prewarm=prewarm)
    assert calls == [False]
    once = next(c for c in report.cases if c.id == "echo-once")
    assert once.status == "fail" and len(once.observation.turns[0].replies) == 2  # the late duplicate still heard


async def test_a_prewarm_that_fails_does_not_fail_the_run(tmp_path):
    config, cases = _project(tmp_path)

    def prewarm():
        raise RuntimeError("no templates here")

    report = await run_loading(config, RunOptions(out_dir=tmp_path / "out"), lambda: cases, prewarm=prewarm)
    assert {c.status for c in report.cases} == {"pass"}
