"""The scheduler: cron trigger and next fire times, the daemon firing a cycle, and `schedule --once`
performing one full nightly cycle (run, upload, diff, alert) against the echo agent and moto S3."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from ops_support import make_project, write_config

from harness import cli
from harness.errors import UsageError
from harness.night.schedule import make_scheduler, run_argv, schedule_config
from harness.night.crontab import make_trigger, next_fire_times

ROOT = Path(__file__).resolve().parents[2]
MADRID = ZoneInfo("Europe/Madrid")


def test_next_fire_times_follow_the_zone_and_its_summer_time():
    winter = next_fire_times("0 2 * * *", "Europe/Madrid", 3, now=datetime(2025, 1, 15, 10, 0, tzinfo=MADRID))
    assert [t.isoformat() for t in winter] == ["2025-01-16T02:00:00+01:00", "2025-01-17T02:00:00+01:00",
                                               "2025-01-18T02:00:00+01:00"]
    summer = next_fire_times("0 2 * * *", "Europe/Madrid", 1, now=datetime(2025, 7, 1, 1, 59, tzinfo=MADRID))
    assert summer[0].isoformat() == "2025-07-01T02:00:00+02:00"  # 00:00 UTC in summer, 01:00 UTC in winter
    weekdays = next_fire_times("30 3 * * 1-5", "UTC", 3, now=datetime(2025, 1, 17, 4, 0, tzinfo=ZoneInfo("UTC")))
    assert [t.strftime("%a %H:%M") for t in weekdays] == ["Mon 03:30", "Tue 03:30", "Wed 03:30"]


@pytest.mark.parametrize("cron,tz", [("0 2 * *", "UTC"), ("61 2 * * *", "UTC"), ("0 2 * * *", "Mars/Olympus")])
def test_bad_cron_or_zone_is_a_usage_error(cron, tz, tmp_path, capsys):
    with pytest.raises(UsageError):
        make_trigger(cron, tz)
    cfg = make_project(tmp_path)
    assert cli.main(["schedule", "--config", str(cfg), "--cron", cron, "--tz", tz, "--once"]) == 2
    assert not (tmp_path / "reports").exists()  # nothing ran


def test_the_daemon_job_is_one_instance_coalesced_with_a_grace_time(tmp_path):
    cfg = make_project(tmp_path)
    scheduler = make_scheduler(str(cfg), "0 2 * * *", "Europe/Madrid", run=cli.main)
    job = scheduler.get_job("nightly")
    assert (job.max_instances, job.coalesce, job.misfire_grace_time) == (1, True, 3600)
    assert str(job.trigger.timezone) == "Europe/Madrid"
    assert str(scheduler.timezone) == "Europe/Madrid"


def test_the_daemon_fires_a_cycle(tmp_path):
    from apscheduler.schedulers.background import BackgroundScheduler

    cfg = make_project(tmp_path, extra='[schedule]\nlayers = ["robustness"]\nupload = false\n')
    scheduler = make_scheduler(str(cfg), "0 2 * * *", "UTC", scheduler_cls=BackgroundScheduler, run=cli.main)
    scheduler.start()
    try:
        scheduler.modify_job("nightly", next_run_time=datetime.now(ZoneInfo("UTC")))  # fire now
        deadline = time.time() + 60
        while time.time() < deadline and not list((tmp_path / "reports").glob("*/results.json")):
            time.sleep(0.1)
        assert list((tmp_path / "reports").glob("*/results.json")), "the scheduled cycle did not run"
        assert scheduler.get_job("nightly").next_run_time.hour == 2  # and it is scheduled again
    finally:
        scheduler.shutdown(wait=True)


def test_schedule_options_become_harness_run_options(tmp_path):
    cfg = make_project(tmp_path, extra='[schedule]\nlayers = ["robustness"]\nconcurrency = 2\nout = "nightly"\n'
                                       'upload = true\ncron = "15 1 * * *"\ntz = "Europe/Madrid"\n')
    from harness.config import load_config

    sc = schedule_config(load_config(cfg, environ={}))
    assert (sc.cron, sc.tz) == ("15 1 * * *", "Europe/Madrid")
    assert run_argv(str(cfg), sc, "r1", True) == ["run", "--run-id", "r1", "--kind", "nightly", "--config", str(cfg), "--layer",
                                                  "robustness", "--concurrency", "2", "--out", "nightly",
                                                  "--upload", "--quiet"]
    assert schedule_config(load_config(cfg, environ={}), "0 3 * * *", "UTC").cron == "0 3 * * *"


class _Hook(BaseHTTPRequestHandler):
    received: list = []

    def do_POST(self):  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        type(self).received.append(json.loads(body))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def webhook():
    _Hook.received = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hook)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hook", _Hook.received
    server.shutdown()
    server.server_close()


def test_schedule_once_runs_a_full_nightly_cycle(tmp_path, s3, webhook, capsys):
    url, received = webhook
    extra = f'[schedule]\nlayers = ["robustness"]\n[alerts]\nwebhook_url = "{url}"\nretries = 1\n'
    cfg = make_project(tmp_path, storage=s3, extra=extra)

    # Night 1: clean. Uploaded, nothing to diff against yet, no alert.
    assert cli.main(["schedule", "--config", str(cfg), "--once", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "nightly cycle: run " in out and "verdict pass" in out and "uploaded" in out
    assert "no diff" in out and "next scheduled fire (0 2 * * * UTC)" in out
    assert received == []

    # Night 2: the agent regressed (it now answers twice). Run, upload, diff, alert.
    write_config(tmp_path, storage=s3, extra=extra, mode="double")
    assert cli.main(["schedule", "--config", str(cfg), "--once", "--quiet"]) == 1
    out = capsys.readouterr().out
    runs = sorted(p.name for p in (tmp_path / "reports").iterdir() if not p.name.startswith("."))
    assert len(runs) == 2
    assert f"diff vs {runs[0]}: 3 regression(s) (echo-0, echo-1, echo-2)" in out
    first = json.loads((tmp_path / "reports" / runs[0] / "results.json").read_text())
    assert first["run"]["kind"] == "nightly"  # [schedule] layers select, yet the scheduled run is the night
    assert "alert regression via webhook: sent" in out
    assert len(received) == 1 and "3 case(s) regressed" in received[0]["text"]
    diff = json.loads((tmp_path / "reports" / runs[1] / "diff.json").read_text())
    assert sorted(e["id"] for e in diff["regressions"]) == ["echo-0", "echo-1", "echo-2"]
    index = s3.get_json("chatbot/index.json")
    assert [e["run_id"] for e in index["runs"]] == runs
    assert [e["verdict"] for e in index["runs"]] == ["pass", "fail"]


def test_a_cycle_is_refused_while_another_process_holds_the_lock(tmp_path, webhook, capsys):
    url, received = webhook
    cfg = make_project(tmp_path, extra=f'[alerts]\nwebhook_url = "{url}"\nretries = 1\n')
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from harness.night.runlock import RunLock; "
                               f"RunLock({str(tmp_path / 'reports')!r}, 'someone').acquire(); print('held', flush=True); "
                               "time.sleep(60)"], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        assert cli.main(["schedule", "--config", str(cfg), "--once"]) == 4
        out = capsys.readouterr().out
        assert f"another harness run (pid {holder.pid}," in out
        assert len(received) == 1 and "failed to start" in received[0]["text"]
        assert not [p for p in (tmp_path / "reports").iterdir() if not p.name.startswith(".")]
    finally:
        holder.kill()
        holder.wait(10)


UTC = ZoneInfo("UTC")
#: Monday 6 January 2025, 03:00 UTC: the week after it starts on a Tuesday.
MONDAY = datetime(2025, 1, 6, 3, 0, tzinfo=UTC)


def _weekdays(cron: str, now: datetime = MONDAY, count: int = 7) -> list[str]:
    return [t.strftime("%a").lower() for t in next_fire_times(cron, "UTC", count, now=now)]


@pytest.mark.parametrize("field,names", [("1-5", "mon,tue,wed,thu,fri"), ("0", "sun"), ("7", "sun"),
                                         ("0,6", "sun,sat"), ("*/2", "sun,tue,thu,sat"), ("5-7", "fri,sat,sun"),
                                         ("mon-fri", "mon,tue,wed,thu,fri"), ("*", "mon,tue,wed,thu,fri,sat,sun"),
                                         ("1/3", "mon,thu,sun"), ("sun", "sun"), ("mon-fri/2", "mon,wed,fri"),
                                         ("6-7", "sat,sun")])
def test_crontab_weekday_numbers_mean_what_cron_means(field, names):
    """0 and 7 are Sunday, 1-5 is Monday to Friday (APScheduler 3 reads 0 as Monday and refused 7)."""
    fired = _weekdays(f"0 2 * * {field}", count=14)
    order = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    assert sorted(set(fired), key=order.index) == sorted(names.split(","), key=order.index)


@pytest.mark.parametrize("cron", ["0 2 * * 7", "0 2 * * 5-7", "0 2 * * 0-7"])
def test_sunday_as_7_is_accepted(cron):
    """The APScheduler workaround validated with from_crontab first, which refuses 7: a crontab
    line for Sundays (``0 2 * * 7``) was a usage error."""
    assert "sun" in _weekdays(cron)


@pytest.mark.parametrize("field", ["8", "3-1", "*/0"])
def test_bad_weekday_fields(field):
    with pytest.raises(UsageError):
        make_trigger(f"0 2 * * {field}", "UTC")


def test_day_of_month_or_day_of_week_when_both_are_restricted():
    """crontab(5): with both fields restricted, a day matching either fires. The workaround
    (APScheduler's AND) fired "0 2 1 * mon" only on a Monday the 1st: September 2025 first."""
    fired = next_fire_times("0 2 1 * mon", "UTC", 6, now=datetime(2025, 1, 20, 3, 0, tzinfo=UTC))
    assert [t.strftime("%a %d %b") for t in fired] == ["Mon 27 Jan", "Sat 01 Feb", "Mon 03 Feb", "Mon 10 Feb",
                                                       "Mon 17 Feb", "Mon 24 Feb"]
    first_week = next_fire_times("0 2 1-7 * sun", "UTC", 7, now=datetime(2025, 1, 1, 3, 0, tzinfo=UTC))
    assert [t.day for t in first_week] == [2, 3, 4, 5, 6, 7, 12]  # days 1-7 and every Sunday, not "first Sunday"


def test_a_star_day_field_means_and_as_in_cron():
    """When one of the two day fields starts with ``*`` cron ANDs them (Vixie/Debian cron):
    "*/2 * mon" is an odd-numbered Monday, not every other day plus Mondays."""
    fired = next_fire_times("0 2 */2 * mon", "UTC", 3, now=datetime(2025, 1, 1, 3, 0, tzinfo=UTC))
    assert [t.strftime("%a %d %b") for t in fired] == ["Mon 13 Jan", "Mon 27 Jan", "Mon 03 Feb"]


def test_the_daemon_fires_on_crontab_times():
    from apscheduler.schedulers.background import BackgroundScheduler

    scheduler = make_scheduler(None, "0 2 1 * mon", "UTC", scheduler_cls=BackgroundScheduler, run=cli.main)
    trigger = scheduler.get_job("nightly").trigger
    nxt = trigger.get_next_fire_time(None, datetime(2025, 1, 28, 3, 0, tzinfo=UTC))
    assert nxt == datetime(2025, 2, 1, 2, 0, tzinfo=UTC)  # the 1st, a Saturday: OR, as crontab


def test_the_repeated_hour_when_daylight_saving_ends_is_one_night():
    from harness.night.schedule import wall_minute

    first, second = next_fire_times("0 2 * * *", "Europe/Madrid", 2,
                                    now=datetime(2025, 10, 25, 12, 0, tzinfo=MADRID))
    # APScheduler's CronTrigger fired 02:00 twice that night (the daemon skipped the second by
    # its wall time); crontab's rule, computed by cronsim, fires a fixed-time job once
    assert first.isoformat() == "2025-10-26T02:00:00+02:00" and second.isoformat() == "2025-10-27T02:00:00+01:00"
    assert wall_minute(first) != wall_minute(second)
    spring = next_fire_times("0 2 * * *", "Europe/Madrid", 2, now=datetime(2025, 3, 29, 12, 0, tzinfo=MADRID))
    assert spring[0].isoformat() == "2025-03-30T03:00:00+02:00"  # 02:00 does not exist: runs as the clocks jump
    assert spring[0].timestamp() == datetime(2025, 3, 30, 1, 0, tzinfo=UTC).timestamp()
    assert wall_minute(spring[0]) != wall_minute(spring[1])


@pytest.mark.parametrize("cron,ok", [("0 2 * * 7", True), ("0 2 * * mon#1", True), ("0 2 1 * mon", True),
                                     ("0 2 30 2 *", False), ("0 2 * * 8", False), ("0 2 * *", False)])
def test_the_config_accepts_what_the_scheduler_runs(cron, ok, tmp_path):
    """[schedule] cron is validated by the library that computes the fire times: Sunday as 7
    and ``mon#1`` pass, a day that never comes (30 February) is refused."""
    from harness.config import load_config
    from harness.errors import ConfigError

    cfg = tmp_path / "harness.toml"
    cfg.write_text(f'[target]\nname = "x"\n[schedule]\ncron = "{cron}"\n')
    if ok:
        load_config(cfg, environ={})
        make_trigger(cron, "UTC")
    else:
        with pytest.raises((ConfigError, UsageError)):
            load_config(cfg, environ={})
