"""The nightly cycle and the daemon that fires it: ``harness schedule [--cron EXPR] [--tz ZONE] [--once]``.

One cycle = take the run lock, ``harness run`` (options from ``[schedule]``), which itself
uploads ([storage]), diffs against the baseline (``harness.night.context``: diff.json in the run
folder) and alerts on failed cases and budget breaches (``harness.cli.cost.after_run``
through ``harness.night.alerts``). The cycle adds the alert the run cannot send: a run that never
started (the lock was held, or it exited without results for a reason other than a target
or sandbox failure, which the run alerts itself). The cycle exits with the run's code.

The daemon is APScheduler 3: ``BlockingScheduler(timezone=...)`` with a ``CrontabTrigger``
(crontab.py) whose fire times cronsim computes with crontab's semantics; one instance at a time
(``max_instances=1``), missed fires coalesced into one and still run within an hour
(``misfire_grace_time=3600``). It logs each cycle and the next fire time. Each cycle runs
the suite in this process (the ``run`` callable the CLI hands in: ``harness.cli.main``), so the run lock, held here and taken again by
``harness run``, is reentrant in-process and exclusive across processes: a crontab line
or a person starting a run meanwhile is refused, and so is this cycle when they got there
first.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import signal
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Sequence

from harness.config import config_section
from harness.errors import ConfigError, UsageError
from harness.night.crontab import _for_apscheduler, _zone, make_trigger, next_fire_times
from harness.schema.models import ScheduleModel
from harness.night.runlock import RunLock, RunLocked

log = logging.getLogger("harness.night.schedule")

DEFAULT_CRON = ScheduleModel.model_fields["cron"].default
DEFAULT_TZ = ScheduleModel.model_fields["tz"].default


def schedule_config(config: Any, cron: str | None = None, tz: str | None = None) -> ScheduleModel:
    """``[schedule]`` (validated when the config was loaded), with ``harness schedule``'s --cron and --tz."""
    sc = config_section(config, "schedule")
    file = str(getattr(config, "path", "") or "")
    if cron or tz:
        sc = sc.model_copy(update={k: v for k, v in (("cron", cron), ("tz", tz)) if v})
    resolve = getattr(config, "resolve", None)
    for key in ("fixtures", "golden"):  # the night's `run --fixtures/--golden` would refuse them: say so now
        value = getattr(sc, key)
        path = resolve(value) if value and resolve else None
        try:
            problem = None if path is None or path.is_dir() else (
                "does not exist" if not path.exists() else "is not a folder")
        except OSError as exc:
            problem = f"cannot be used ({exc.strerror or exc})"
        if problem:
            raise ConfigError(f"[schedule] {key} = {value!r} {problem} (looked at {path})", file=file,
                              fix=f"[schedule] {key} names the {'case files' if key == 'fixtures' else 'golden answers'}"
                                  " folder of each nightly run (relative to the config file); empty: the default")
    if sc.out:
        from harness.schema.files import output_dir_problem

        resolve = getattr(config, "resolve", None)
        problem = output_dir_problem(resolve(sc.out) if resolve else sc.out)
        if problem:
            raise ConfigError(f"[schedule] out: {problem.replace('--out ', '')}", file=file,
                              fix="[schedule] out names the folder the nightly runs are written to (created if missing)")
    return sc


# --------------------------------------------------------------------------- one cycle


@dataclass
class CycleResult:
    """What one nightly cycle did."""

    run_id: str
    exit_code: int
    run_dir: Path | None = None
    verdict: str = ""
    regressions: list[str] = field(default_factory=list)
    diff_against: str = ""
    """The run the diff compared with ("" when there was no diff)."""
    uploaded: bool | None = None
    """True: in storage; False: kept in the pending spool; None: no storage."""
    alerts: list[str] = field(default_factory=list)
    """One line per alert raised (and whether it was sent)."""
    notes: list[str] = field(default_factory=list)

    def line(self) -> str:
        parts = [f"run {self.run_id or '-'}: exit {self.exit_code}"]
        if self.verdict:
            parts.append(f"verdict {self.verdict}")
        if self.diff_against:
            parts.append(f"diff vs {self.diff_against}: {len(self.regressions)} regression(s)"
                         + (f" ({', '.join(self.regressions[:5])})" if self.regressions else ""))
        if self.uploaded is not None:
            parts.append("uploaded" if self.uploaded else "upload pending")
        parts.append(f"{len(self.alerts)} alert(s)")
        return "; ".join(parts)


def run_argv(config_path: str | None, sc: ScheduleModel, run_id: str, quiet: bool) -> list[str]:
    """The ``harness run`` command line of a cycle."""
    argv = ["run", "--run-id", run_id, "--kind", "nightly"]  # the scheduled run is the night (harness.run.kind)
    if config_path:
        argv += ["--config", str(config_path)]
    for layer in sc.layers:
        argv += ["--layer", layer]
    for glob in sc.cases:
        argv += ["--case", glob]
    if sc.concurrency:
        argv += ["--concurrency", str(sc.concurrency)]
    if sc.repeat and sc.repeat != 1:
        argv += ["--repeat", str(sc.repeat)]
    if sc.out:
        argv += ["--out", sc.out]
    if sc.fixtures:
        argv += ["--fixtures", sc.fixtures]
    if sc.golden:
        argv += ["--golden", sc.golden]
    if sc.budget_usd is not None:
        argv += ["--budget-usd", str(sc.budget_usd)]
    if sc.upload is True:
        argv.append("--upload")
    elif sc.upload is False:
        argv.append("--no-upload")
    if quiet:
        argv.append("--quiet")
    return argv


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else None
    except (OSError, ValueError):
        return None


#: Runs ``harness <argv>`` in this process and returns its exit code (``harness.cli.main``).
RunCommand = Callable[[list[str]], int]


def run_cycle(config_path: str | None, cron: str | None = None, tz: str | None = None, *,
              run: RunCommand, quiet: bool = False) -> CycleResult:
    """One nightly cycle now: lock, run (+ upload + diff), alerts. Never raises for a bad night.

    ``run`` is the command line's own entry point, handed in by the CLI so that this module
    never imports the command line (the data flows one way: cli -> night)."""
    from harness.config import load_config
    from harness.run.runner import new_run_id
    from harness.night.storage import list_pending
    from harness.night.store import storage_config

    config = load_config(config_path)
    sc = schedule_config(config, cron, tz)
    out = config.resolve(sc.out) if sc.out else config.resolve("reports")
    if sc.out:
        sc = sc.model_copy(update={"out": str(out)})
    run_id = new_run_id()
    started = time.monotonic()
    try:
        lock = RunLock(out, command="harness schedule (nightly cycle)").acquire()
    except RunLocked as exc:
        log.warning("nightly cycle not started: %s", exc.message)
        result = CycleResult(run_id="", exit_code=RunLocked.exit_code, notes=[exc.message])
        _alert(config, result, "start_failed", f"{config.target.name}: the nightly run failed to start",
               exc.message, "critical")
        return result
    try:
        log.info("nightly cycle: starting run %s (out %s)", run_id, out)
        code = run(run_argv(config_path, sc, run_id, quiet))
        run_dir = out / run_id
        result = CycleResult(run_id=run_id, exit_code=code, run_dir=run_dir if run_dir.exists() else None)
        results = _read_json(run_dir / "results.json")
        if results is None:
            result.notes.append(f"the run wrote no results.json (exit {code})")
            if code == 4:  # target/sandbox down: the run alerted already (harness.cli.cost.start_failed)
                result.notes.append("start failure alerted by the run itself")
            else:
                _alert(config, result, "start_failed", f"{config.target.name}: nightly run {run_id} failed to start",
                       f"harness run exited {code} without results; see the scheduler's log", "critical")
            return result
        result.verdict = str((results.get("summary") or {}).get("verdict", ""))
        diff = _read_json(run_dir / "diff.json")  # written by the run (harness.night.context) when there is a base
        if diff is not None:
            result.diff_against = str((diff.get("base_run") or {}).get("run_id", ""))
            result.regressions = [str(e.get("id")) for e in diff.get("regressions") or ()
                                  if not e.get("quarantined")]
        else:
            result.notes.append("no diff: no baseline or earlier run to compare with")
        if storage_config(config) is not None and sc.upload is not False:
            pending = {p.run_id for p in list_pending(out)}
            result.uploaded = run_id not in pending
            if not result.uploaded:
                result.notes.append("upload failed: kept in the pending spool (harness upload --pending)")
        # Budget breaches and failed cases are alerted by the run itself (harness.cli.cost.after_run,
        # through harness.night.alerts); the cycle reports what was sent rather than sending it twice.
        result.alerts += [n for n in results.get("notes") or () if str(n).startswith("alert ")]
        return result
    finally:
        lock.release()
        log.info("nightly cycle finished in %.0fs", time.monotonic() - started)


def _alert(config: Any, result: CycleResult, kind: str, title: str, text: str, severity: str) -> None:
    """Hand one alert to harness.night.alerts (the alerts developer's module) if it exists."""
    try:
        from harness.night import alerts as alerts_mod
    except ImportError:
        result.alerts.append(f"{kind}: {title} (not sent: harness.night.alerts is not available)")
        log.warning("alert not sent (no harness.night.alerts module): %s: %s", title, text)
        return
    payload = {"kind": kind, "title": title, "details": text, "text": text, "message": text, "summary": title,
               "severity": severity, "level": severity, "run_id": result.run_id,
               "report": str(result.run_dir / "report.html") if result.run_dir else "",
               "regressions": list(result.regressions), "exit_code": result.exit_code}
    alert: Any = payload
    cls = getattr(alerts_mod, "Alert", None)
    if cls is not None and dataclasses.is_dataclass(cls):
        names = {f.name for f in dataclasses.fields(cls)}
        alert = cls(**{k: v for k, v in payload.items() if k in names})
    try:
        sent = asyncio.run(alerts_mod.send_alerts(config, alert))
        ok = sum(1 for r in sent or () if getattr(r, "ok", True))
        result.alerts.append(f"alert {kind}: {title} (sent via {ok} of {len(sent or ())} channel(s))")
        log.info("alert %s sent to %d channel(s)", kind, len(sent or ()))
    except Exception as exc:  # an alert channel down must not turn the night into a crash
        result.alerts.append(f"{kind}: {title} (sending failed: {type(exc).__name__})")
        log.warning("alert %s could not be sent: %s: %s", kind, type(exc).__name__, exc)


# --------------------------------------------------------------------------- the daemon


def configure_logging() -> None:
    if not any(getattr(h, "_harness_schedule", False) for h in log.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        handler._harness_schedule = True  # type: ignore[attr-defined]
        log.addHandler(handler)
        log.propagate = False
    log.setLevel(logging.INFO)


def wall_minute(moment: datetime) -> str:
    """The local wall-clock minute of an aware time.

    When daylight saving ends, an hour of wall-clock time happens twice. Crontab's rule
    (cronsim) fires a daily 02:00 job once; APScheduler's own CronTrigger fired it at both
    02:00+02:00 and 02:00+01:00. The daemon still skips a fire whose wall-clock minute is the
    previous fire's, a guard that costs nothing, so a night is run once whatever the trigger.
    """
    return moment.strftime("%Y-%m-%d %H:%M")


def make_scheduler(config_path: str | None, cron: str, tz: str, scheduler_cls: Any = None, *,
                   run: RunCommand):
    """The configured APScheduler (not started): one cron job running ``run_cycle``."""
    from apscheduler.events import EVENT_JOB_ERROR, EVENT_JOB_EXECUTED, EVENT_JOB_MISSED
    from apscheduler.schedulers.blocking import BlockingScheduler

    zone = _zone(tz)
    trigger = make_trigger(cron, tz)
    scheduler = (scheduler_cls or BlockingScheduler)(timezone=zone)

    fired: dict[str, str] = {}

    def job() -> None:
        wall = wall_minute(datetime.now(zone))
        if fired.get("wall") == wall:
            log.info("skipping the second fire at %s: the clocks went back (daylight saving ended)", wall)
            return
        fired["wall"] = wall
        result = run_cycle(config_path, cron, tz, run=run, quiet=True)
        log.info("nightly cycle: %s", result.line())
        for line in result.alerts + result.notes:
            log.info("  %s", line)

    fires = _for_apscheduler(trigger)
    scheduler.add_job(job, fires, id="nightly", name="harness nightly cycle", max_instances=1, coalesce=True,
                      misfire_grace_time=3600)

    def listener(event) -> None:
        if event.code == EVENT_JOB_MISSED:
            log.warning("a fire at %s was missed (more than the grace time late)", event.scheduled_run_time)
        elif event.code == EVENT_JOB_ERROR:
            log.error("nightly cycle crashed: %s", event.exception)
        # from the trigger, not scheduler.get_job: this runs in the executor's thread, and a
        # shutdown that began meanwhile holds the job stores' lock while it waits for that
        # thread (a deadlock: the daemon never stopped, seen in tests/ops/test_schedule.py)
        from datetime import datetime, timezone

        try:
            nxt = fires.get_next_fire_time(None, datetime.now(timezone.utc))
        except Exception:  # pragma: no cover - a trigger that cannot say
            nxt = None
        if nxt is not None:
            log.info("next nightly run at %s", nxt.isoformat())

    scheduler.add_listener(listener, EVENT_JOB_EXECUTED | EVENT_JOB_ERROR | EVENT_JOB_MISSED)
    return scheduler


def serve(config_path: str | None, cron: str, tz: str, *, run: RunCommand) -> int:
    """Run the daemon until SIGTERM / SIGINT."""
    scheduler = make_scheduler(config_path, cron, tz, run=run)

    def stop(signum, _frame) -> None:
        log.info("signal %d: stopping the scheduler (a running cycle finishes first)", signum)
        scheduler.shutdown(wait=False)

    signal.signal(signal.SIGTERM, stop)
    nxt = next_fire_times(cron, tz, 1)
    log.info("harness schedule: cron %r in %s; next nightly run at %s", cron, tz,
             nxt[0].isoformat() if nxt else "never")
    try:
        scheduler.start()
    except (KeyboardInterrupt, SystemExit):
        pass
    return 0


__all__: Sequence[str] = ("CycleResult", "RunCommand", "ScheduleModel", "configure_logging", "make_scheduler",
                          "run_cycle", "schedule_config", "serve")
