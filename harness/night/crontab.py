"""Cron fire times with crontab's semantics (Debian cron): 0 and 7 are Sunday, day-of-month OR
day-of-week when both are restricted, one fire in the repeated DST hour. cronsim computes
them; ``CrontabTrigger`` hands them to APScheduler 3 (the daemon in schedule.py), whose own
``CronTrigger`` reads the weekdays differently."""

from __future__ import annotations

from datetime import datetime, timedelta

from harness.errors import UsageError


class CrontabTrigger:
    """An APScheduler 3 trigger whose fire times are crontab's, computed by cronsim.

    APScheduler's own ``CronTrigger`` differs from crontab in three ways that matter to a
    nightly line copied from a crontab: weekday numbers (its 0 is Monday, its issue #286; 7 is
    refused), a restricted day-of-month *and* day-of-week (crontab fires when either matches,
    APScheduler only when both do), and the hour repeated when daylight saving ends (it fires
    02:00 twice). cronsim implements Debian cron's rules for all three: 0 and 7 are Sunday,
    ``1-5`` is Monday to Friday, names and ``*/n`` as in crontab(5), day-of-month OR
    day-of-week when neither field starts with ``*``, a fixed-time job once in a repeated hour
    and at the jump in a skipped one.
    """

    def __init__(self, expr: str, timezone):
        from cronsim import CronSim, CronSimError

        self.expr = expr
        self.timezone = timezone
        self._cronsim = CronSim
        try:
            CronSim(expr, datetime.now(timezone))  # parses and validates the five fields
        except CronSimError as exc:
            raise ValueError(str(exc)) from None

    def get_next_fire_time(self, previous_fire_time: datetime | None, now: datetime) -> datetime | None:
        """The first fire time after the previous one, or at/after ``now`` for the first fire."""
        start = previous_fire_time if previous_fire_time is not None else now - timedelta(microseconds=1)
        try:
            return next(self._cronsim(self.expr, start.astimezone(self.timezone)))
        except StopIteration:  # pragma: no cover - a five-field expression always fires again
            return None

    def __str__(self) -> str:
        return f"crontab[{self.expr}]"

    def __repr__(self) -> str:
        return f"<CrontabTrigger ({self.expr!r}, timezone={str(self.timezone)!r})>"


def _for_apscheduler(trigger: CrontabTrigger):
    """``trigger`` as the BaseTrigger APScheduler's add_job wants (APScheduler imported here only)."""
    from apscheduler.triggers.base import BaseTrigger

    class _Crontab(BaseTrigger):
        __slots__ = ()
        timezone = trigger.timezone
        crontab = trigger

        def get_next_fire_time(self, previous_fire_time, now):
            return trigger.get_next_fire_time(previous_fire_time, now)

        def __str__(self) -> str:
            return str(trigger)

    return _Crontab()


def make_trigger(cron: str, tz: str) -> "CrontabTrigger":
    """A trigger for a five-field crontab expression in a time zone (UsageError if bad).

    Crontab semantics, computed by cronsim (see ``CrontabTrigger``).
    """
    zone = _zone(tz)
    try:
        values = cron.split()
        if len(values) != 5:
            raise ValueError(f"wrong number of fields; got {len(values)}, expected 5")
        return CrontabTrigger(" ".join(values), zone)
    except ValueError as exc:
        raise UsageError(f"--cron {cron!r}: {exc}", fix='five fields: minute hour day month weekday, e.g. "0 2 * * *"') \
            from None


def _zone(tz: str):
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        raise UsageError(f"--tz {tz!r} is not a known time zone", fix="an IANA name, e.g. Europe/Madrid or UTC") \
            from None


def next_fire_times(cron: str, tz: str, count: int = 1, now: datetime | None = None) -> list[datetime]:
    """The next ``count`` fire times of the schedule after ``now`` (aware datetimes in ``tz``)."""
    trigger = make_trigger(cron, tz)
    now = now or datetime.now(_zone(tz))
    times: list[datetime] = []
    previous = None
    for _ in range(count):
        nxt = trigger.get_next_fire_time(previous, now)
        if nxt is None:
            break
        times.append(nxt)
        previous, now = nxt, nxt
    return times
