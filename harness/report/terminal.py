"""What ``harness run`` prints: a live progress bar, then the cases that did not pass.

Agent output reaches the terminal through failure reasons, so it is always wrapped in
``rich.text.Text`` (never parsed as rich markup: a reply saying ``[red]`` stays literal).
When the console is not a terminal (CI logs, pipes) a live bar would only produce noise,
so ``Progress`` prints the cases that did not pass as they finish and a count line every few
seconds instead (``-v``: every case), and nothing is cut: ``make_console``
gives such a console no width limit (a log is read later, in any width), lines are never
wrapped and the table is as wide as its longest row; failure reasons keep up to
``FULL_REASON_CHARS`` characters instead of the terminal's ``REASON_CHARS``.

The time after each case is the case's duration (its first delivery to its last observation,
timeouts and waits included); for a repeated case, that of the attempt whose status stands.
"""

from __future__ import annotations

from typing import Any, Mapping

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress as RichProgress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from harness.report.jsonfile import as_report_dict, evidence_to_dict
from harness.report.format import format_cost, format_ms, headline, one_line, pass_rate
from harness.types import CaseResult, RunReport

STATUS_STYLES = {"pass": "green", "soft": "yellow", "fail": "bold red", "error": "bold magenta",
                 "unavailable": "dim", "skipped": "dim"}
SEVERITY = {"fail": 0, "error": 1, "unavailable": 2, "soft": 3, "skipped": 4}
REASON_CHARS = 100
FULL_REASON_CHARS = 2000
MAX_ROWS = 50
#: A console that is not a terminal has no width of its own: never wrap or cut at 80 columns.
UNBOUNDED_WIDTH = 100_000


def make_console(**kwargs: Any) -> Console:
    """The console ``harness run`` prints to: a terminal's own width, or unbounded off a terminal."""
    console = Console(**kwargs)
    if not console.is_terminal:
        console = Console(width=UNBOUNDED_WIDTH, soft_wrap=True, **kwargs)
    return console


def _reason_chars(console: Console) -> int:
    return REASON_CHARS if console.is_terminal else FULL_REASON_CHARS


#: Off a terminal: a count line at most this often while cases finish ...
COUNT_EVERY_S = 5.0
#: ... and this often when none does (a long case, a stalled target: the log says the run lives).
QUIET_EVERY_S = 30.0

#: From this many not-passed cases on, cases that failed the same check the same way are one row.
GROUP_FROM = 6
#: At most this many case ids in the re-run command.
RERUN_IDS = 20


def _group_key(case: Mapping[str, Any]) -> tuple[str, str, str]:
    """(status, check, reason shape): cases that broke the same way. Numbers and quoted text in the
    reason are masked, so "latency 5200ms > 5000ms" and "latency 6100ms > 5000ms" are one group."""
    import re

    status = str(case.get("status", ""))
    items = [e for e in case.get("evidence") or () if e.get("passed") is not True]
    first = next((e for e in items if e.get("passed") is False), items[0] if items else {})
    reason = str(first.get("reason") or case.get("error") or "")
    shape = re.sub(r"'[^']*'|\"[^\"]*\"|\d+(?:\.\d+)?", "…", reason)[:120]
    return status, str(first.get("check") or ("error" if status == "error" else status)), shape


def _print_groups(bad: list[Mapping[str, Any]], console: Console) -> bool:
    """One row per (status, check, reason) group when that says more than one row per case."""
    groups: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
    for c in bad:
        groups.setdefault(_group_key(c), []).append(c)
    if len(bad) < GROUP_FROM or len(groups) == len(bad):
        return False
    on_terminal = console.is_terminal
    limit = _reason_chars(console)
    table = Table(title=f"{len(bad)} case(s) did not pass, in {len(groups)} group(s) by check and reason",
                  title_justify="left", show_lines=False)
    for col in ("cases", "status", "check", "why (first case)", "ids"):
        table.add_column(col, overflow="fold" if col in ("why (first case)", "ids") or not on_terminal else "ellipsis",
                         no_wrap=not on_terminal)
    ordered = sorted(groups.items(), key=lambda kv: (SEVERITY.get(kv[0][0], 9), -len(kv[1])))
    for (status, check, _shape), cases in ordered[:MAX_ROWS]:
        ids = [str(c.get("id", "")) for c in cases]
        shown = ", ".join(ids[:5]) + (f" … and {len(ids) - 5} more" if len(ids) > 5 else "")
        table.add_row(Text(str(len(cases))), Text(status, style=STATUS_STYLES.get(status, "")), Text(check),
                      Text(one_line(headline(cases[0], limit), limit)), Text(shown))
    console.print(table)
    if len(ordered) > MAX_ROWS:
        console.print(Text(f"… and {len(ordered) - MAX_ROWS} more groups: see report.html"))
    return True


def rerun_command(bad: list[Mapping[str, Any]]) -> str:
    """The command that runs the not-passed cases again (pytest's ``FAILED path::id``, promptfoo's filter)."""
    import shlex

    ids = list(dict.fromkeys(str(c.get("id", "")) for c in bad if c.get("status") in ("fail", "error", "soft")))
    if not ids:
        return ""
    cmd = "harness run " + " ".join(f"--case {shlex.quote(i)}" for i in ids[:RERUN_IDS])
    return cmd + (f"   # the first {RERUN_IDS} of {len(ids)}" if len(ids) > RERUN_IDS else "")


def print_table(report: RunReport | Mapping[str, Any], console: Console) -> None:
    """The final words of a run: non-passing cases (grouped by check and reason when many broke
    the same way), the command that re-runs them, one line per layer, the verdict."""
    d = as_report_dict(report)
    bad = sorted((c for c in d.get("cases") or [] if c.get("status") != "pass"),
                 key=lambda c: SEVERITY.get(c.get("status"), 9))
    if bad and _print_groups(bad, console):
        pass
    elif bad:
        on_terminal = console.is_terminal
        table = Table(title=f"{len(bad)} case(s) did not pass", title_justify="left", show_lines=False)
        for col in ("case", "layer", "status", "why"):
            # On a terminal a long reason folds; off it every column keeps its full width.
            table.add_column(col, overflow="fold" if col == "why" or not on_terminal else "ellipsis",
                             no_wrap=not on_terminal)
        for c in bad[:MAX_ROWS]:
            status = str(c.get("status", ""))
            table.add_row(Text(str(c.get("id", ""))), Text(str(c.get("layer", ""))),
                          Text(status, style=STATUS_STYLES.get(status, "")),
                          Text(one_line(headline(c, _reason_chars(console)), _reason_chars(console))))
        console.print(table)
        if len(bad) > MAX_ROWS:
            console.print(Text(f"… and {len(bad) - MAX_ROWS} more: see report.html"))
    again = rerun_command(bad)
    if again:
        console.print(Text(f"re-run: {again}"), soft_wrap=True, highlight=False)
    from harness import layer as layer_registry

    simulated = _simulated(d)
    for name, counts in (d.get("layers") or {}).items():
        console.print(Text(_counts_line(name, counts, simulated)), soft_wrap=True)
        for extra in layer_registry.summary_lines(name, counts):  # e.g. the metamorphic variants' line
            console.print(Text(f"{'':<11} {extra}"), soft_wrap=True)
    summary = d.get("summary") or {}
    for note in d.get("notes") or ():  # replay misses: the cassette no longer matches the bot's calls
        if str(note).startswith("REPLAY MISSES"):
            console.print(Text(str(note), style="bold red"), soft_wrap=True)
    verdict = str(summary.get("verdict", "?"))
    console.print(Text(_counts_line("total", summary, simulated)), soft_wrap=True)
    line = Text(f"verdict: {verdict.upper()}", style="bold green" if verdict == "pass" else "bold red")
    line.append(f" · exit {d.get('exit_code', '?')}")
    console.print(line, soft_wrap=True)


def _simulated(d: Mapping[str, Any]) -> bool:
    """Whether the run's money is simulated (priced calls that nobody billed: a loopback model, a double)."""
    return bool((d.get("summary") or {}).get("simulated")) or any(c.get("cost_simulated") for c in d.get("cases") or ())


def _counts_line(name: str, c: Mapping[str, Any], simulated: bool = False) -> str:
    money = format_cost(c.get("cost_usd"))
    if simulated and c.get("cost_usd") is not None:
        money += " simulated (nothing billed)"
    return (f"{name:<11} planned {c.get('planned', 0)} · executed {c.get('executed', 0)} · "
            f"decidable {c.get('decidable', 0)} · passed {c.get('passed', 0)} ({pass_rate(c)}) · "
            f"soft {c.get('soft', 0)} · failed {c.get('failed', 0)} · errored {c.get('errored', 0)} · "
            f"unavailable {c.get('unavailable', 0)} · {money}")


def case_duration_ms(result: CaseResult | Mapping[str, Any]) -> float | None:
    """How long the case took: first delivery to last observation (``duration_ms`` in results.json)."""
    if isinstance(result, CaseResult):
        obs = result.observation
        return (obs.finished_at - obs.started_at) * 1000 if obs is not None else None
    value = result.get("duration_ms")
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _case_fields(result: CaseResult | Mapping[str, Any], limit: int = REASON_CHARS) -> tuple[str, str, Any, str]:
    """(status, id, duration_ms, headline) from a CaseResult or its dict."""
    duration = case_duration_ms(result)
    if isinstance(result, CaseResult):
        # Only what the headline reads: building the whole transcript per case is waste.
        result = {"status": result.status, "id": result.id, "error": result.error,
                  "evidence": [evidence_to_dict(e) for e in result.evidence]}
    return (str(result.get("status", "")), str(result.get("id", "")), duration, headline(result, limit))


class Progress:
    """A live bar on a terminal; anywhere else (CI logs, pipes) the cases that did not pass as
    they finish, a count line every ``COUNT_EVERY_S`` seconds while cases finish
    (``[ 120/355 ] 118 passed · 2 failed · 41 s``; every ``QUIET_EVERY_S`` when none does, so a
    log never falls silent) and one at the end. ``every_case`` (``-v``): a line for every case.

    ``enabled`` forces the choice (tests, ``--no-progress``); by default the bar is used
    exactly when ``console.is_terminal``. ``interval`` None: no count-line thread (tests call
    ``tick``); ``clock``: the monotonic clock the elapsed time is read from.
    """

    def __init__(self, console: Console, *, enabled: bool | None = None, every_case: bool = False,
                 interval: float | None = None, clock: Any = None):
        import time

        self.console = console
        self.live = console.is_terminal if enabled is None else enabled
        self.every_case = every_case
        """``-v``: a line for every case (not only those that did not pass)."""
        self.total = 0
        self.done = 0
        self.not_passed = 0
        self.by_status: dict[str, int] = {}
        self._skips: set[str] = set()
        self._bar: RichProgress | None = None
        self._task: Any = None
        self._clock = clock or time.monotonic
        self._interval = COUNT_EVERY_S if interval is None and clock is None else interval
        self._started = self._last_line = 0.0
        self._last_done = -1
        self._stop_event: Any = None
        self._thread: Any = None

    def start(self, total: int) -> None:
        """Begin counting towards ``total`` cases."""
        self.total, self.done, self.not_passed, self.by_status = total, 0, 0, {}
        self._skips: set[str] = set()
        self._started = self._last_line = self._clock()
        self._last_done = 0
        if self.live:
            self._bar = RichProgress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                     TimeElapsedColumn(), console=self.console, transient=True)
            self._bar.start()
            self._task = self._bar.add_task("cases", total=total)
        elif self._interval and self._thread is None:
            import threading

            self._stop_event = threading.Event()
            self._thread = threading.Thread(target=self._beat, name="harness-progress", daemon=True)
            self._thread.start()

    def _beat(self) -> None:
        while not self._stop_event.wait(min(self._interval, 1.0)):  # tick decides when a line is due
            self.tick()

    def count_line(self) -> str:
        """``[ 120/355 ] 118 passed · 2 failed · 41 s``: where the run is, off a terminal."""
        width = len(str(self.total))
        order = ("pass", "fail", "error", "soft", "unavailable", "skipped")
        words = {"pass": "passed", "fail": "failed", "error": "errored", "soft": "soft"}
        parts = [f"{self.by_status.get(s, 0)} {words.get(s, s)}" for s in order
                 if self.by_status.get(s) or s == "pass"]
        parts += [f"{n} {st}" for st, n in self.by_status.items() if st not in order]
        return (f"[ {self.done:>{width}}/{self.total} ] " + " · ".join(parts)
                + f" · {self._clock() - self._started:.0f} s")

    def tick(self) -> None:
        """Off a terminal: the count line when cases finished since the last one and
        ``COUNT_EVERY_S`` passed, or when ``QUIET_EVERY_S`` passed without any."""
        if self.live or not self.total:
            return
        now = self._clock()
        since = now - self._last_line
        if (self.done != self._last_done and since >= COUNT_EVERY_S) or since >= QUIET_EVERY_S:
            self._count()

    def _count(self) -> None:
        self._last_line, self._last_done = self._clock(), self.done
        self.console.print(self.count_line(), markup=False, highlight=False, soft_wrap=True)

    def advance(self, case_result: CaseResult | Mapping[str, Any]) -> None:
        """One case finished."""
        self.done += 1
        limit = _reason_chars(self.console)
        status, case_id, duration, why = _case_fields(case_result, limit)
        self.by_status[status] = self.by_status.get(status, 0) + 1
        if status != "pass":
            self.not_passed += 1
        width = len(str(self.total))
        line = Text(f"[{self.done:>{width}}/{self.total}] ")
        line.append(status, style=STATUS_STYLES.get(status, ""))
        line.append(f" {case_id} {format_ms(duration)}")
        if status != "pass" and why:
            line.append(f"  {one_line(why, limit)}", style="dim")
        shown = status != "pass" or self.every_case  # failures as they happen; -v: every case
        if shown and status == "skipped" and not self.every_case:  # a budget stop skips 300 cases one way:
            import re                                               # its first line says why, the count the rest

            shape = re.sub(r"\d+(?:\.\d+)?", "#", why or "")
            shown = shape not in self._skips
            if shown:
                self._skips.add(shape)
                line.append("  (more cases skipped so are counted, not listed)", style="dim")
        if self._bar is not None:
            # On the live bar only the interesting cases scroll by above it.
            if shown:
                self._bar.console.print(line)
            self._bar.update(self._task, advance=1,
                             description=f"cases ({self.not_passed} not passed)" if self.not_passed else "cases")
        else:
            if shown:
                self.console.print(line, soft_wrap=True, highlight=False)
            self.tick()

    def note(self, text: str) -> None:
        """One line for the user now, above the bar when there is one."""
        if self._bar is not None:
            self._bar.console.print(text, markup=False, highlight=False)
        else:
            self.console.print(text, markup=False, highlight=False, soft_wrap=True)

    def stop(self) -> None:
        """Remove the bar, or off a terminal print the last count line (idempotent)."""
        if self._thread is not None:
            self._stop_event.set()
            self._thread.join()
            self._thread = None
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
        elif self.total and self.done != self._last_done:
            self._count()

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
