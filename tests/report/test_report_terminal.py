"""Terminal output: the not-passed table, per-layer lines, progress in and out of a TTY."""

from __future__ import annotations

import io
import re
from dataclasses import replace

import pytest
from rich.console import Console

from harness.report.jsonfile import case_to_dict, report_to_dict
from harness.report.terminal import UNBOUNDED_WIDTH, Progress, make_console, print_table


def plain_console(width: int = 160) -> Console:
    return Console(file=io.StringIO(), force_terminal=False, width=width, color_system=None)


def output(console: Console) -> str:
    return console.file.getvalue()


def test_table_lists_only_cases_that_did_not_pass(report):
    console = plain_console()
    print_table(report, console)
    out = output(console)
    for case in report.cases:
        assert (case.id in out) == (case.status != "pass"), case.id
    assert "no match for (?i)invalid.*url" in out
    assert out.index("url-malformed-scheme") < out.index("summary-faithful")  # severe first


def test_per_layer_lines_and_verdict(report):
    console = plain_console()
    print_table(report, console)
    lines = output(console).splitlines()
    cost = next(line for line in lines if line.startswith("cost "))
    assert "decidable 0" in cost and "(n/a)" in cost
    robustness = next(line for line in lines if line.startswith("robustness"))
    assert "passed 1 (50%)" in robustness
    assert lines[-1].startswith("verdict: FAIL") and lines[-1].endswith("exit 1")


def test_agent_text_is_not_rich_markup(report, evidence):
    case = replace(report.cases[1], evidence=(evidence("reply.regex", False, reason="[red]boom[/red] [link=x]y"),))
    console = plain_console()
    print_table(replace(report, cases=(case,)), console)
    assert "[red]boom[/red] [link=x]y" in output(console)


def test_long_reasons_are_truncated_on_a_terminal(report, evidence):
    case = replace(report.cases[1], evidence=(evidence("reply.regex", False, reason="x" * 500),))
    console = Console(file=io.StringIO(), force_terminal=True, width=400, color_system=None)
    print_table(replace(report, cases=(case,)), console)
    assert "x" * 101 not in output(console) and "…" in output(console)


def test_off_a_terminal_nothing_is_cut(report, evidence, monkeypatch):
    """cron / CI logs: full lines, the table at full width, the whole reason (issue 16)."""
    reason = "the agent said " + "y" * 300 + " END"
    case = replace(report.cases[1], evidence=(evidence("reply.regex", False, reason=reason),),
                   id="a-case-with-a-rather-long-identifier-that-would-not-fit-at-80-columns")
    buf = io.StringIO()
    monkeypatch.setattr("sys.stdout", buf)
    console = make_console(color_system=None)
    assert console.is_terminal is False and console.width == UNBOUNDED_WIDTH
    print_table(replace(report, cases=(case,)), console)
    progress = Progress(console)
    progress.start(1)
    progress.advance(case)
    out = buf.getvalue()
    row = next(line for line in out.splitlines() if case.id in line and "│" in line)
    assert reason in row  # one line: id, layer, status and the whole reason
    total = next(line for line in out.splitlines() if line.startswith("total"))
    assert len(total) > 80 and "unavailable" in total  # the whole counts line, unwrapped
    assert any(line.startswith("[1/1] fail " + case.id) and line.endswith("END") for line in out.splitlines())
    assert max(len(line) for line in out.splitlines()) < 1000  # no padding to the unbounded width


def test_all_pass_prints_no_table(build_report, report):
    console = plain_console()
    print_table(build_report(cases_=(report.cases[0],)), console)
    assert "did not pass" not in output(console)


def test_from_dict_form(report):
    a, b = plain_console(), plain_console()
    print_table(report, a)
    print_table(report_to_dict(report), b)
    assert output(a) == output(b)


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize("index, line", [
    (0, r"\[1/6\] pass url-ok 2000ms$"),  # the duration (started..finished), not the latency 820ms
    (1, r"\[2/6\] fail url-malformed-scheme 2000ms  reply\.regex \(turn 0\): no match"),  # duration, not latency
    (4, r"\[5/6\] error cancel-mid-task -  timeout after 30s"),
])
def test_progress_off_a_terminal_with_v_prints_one_line_per_case(report, index, line):
    console = plain_console()
    progress = Progress(console, every_case=True, clock=FakeClock())
    assert progress.live is False  # not a TTY: no live bar
    progress.start(len(report.cases))
    for result in report.cases:
        progress.advance(result)
    progress.stop()
    lines = output(console).splitlines()
    assert len(lines) == len(report.cases) + 1  # and the count line at the end
    assert re.search(line, lines[index]), lines[index]


def test_progress_off_a_terminal_prints_failures_as_they_happen_and_counts(report):
    """Issue 25 item 4: off a TTY the passes are counted, not listed; a count line every few seconds."""
    clock = FakeClock()
    console = plain_console()
    progress = Progress(console, clock=clock)
    progress.start(len(report.cases))
    progress.advance(report.cases[0])  # url-ok passes: no line of its own
    assert output(console) == ""
    progress.advance(report.cases[1])  # a failure: at once
    assert output(console).splitlines() == [output(console).splitlines()[0]]
    assert "fail url-malformed-scheme" in output(console)
    clock.now += 6  # a few seconds later the next case finishes: a count line
    progress.advance(report.cases[2])
    last = output(console).splitlines()[-1]
    assert re.fullmatch(r"\[ 3/6 \] 1 passed · 1 failed · .* · 6 s", last), last
    n = len(output(console).splitlines())
    clock.now += 10
    progress.tick()  # nothing finished since: no line yet ...
    assert len(output(console).splitlines()) == n
    clock.now += 25
    progress.tick()  # ... until the log would fall silent for half a minute
    assert len(output(console).splitlines()) == n + 1
    for result in report.cases[3:]:
        progress.advance(result)
    progress.stop()
    lines = output(console).splitlines()
    assert lines[-1].startswith("[ 6/6 ] ") and "url-ok" not in output(console)


def test_progress_accepts_journal_dicts(report):
    console = plain_console()
    with Progress(console, clock=FakeClock()) as progress:
        progress.start(1)
        progress.advance(case_to_dict(report.cases[3]))
    assert output(console).startswith("[1/1] unavailable critic-facts -")


def test_progress_on_a_terminal_uses_the_bar_and_shows_only_non_passing(report):
    console = Console(file=io.StringIO(), force_terminal=True, width=120)
    progress = Progress(console)
    assert progress.live is True
    progress.start(len(report.cases))
    for result in report.cases:
        progress.advance(result)
    assert progress.done == 6 and progress.not_passed == 5
    progress.stop()
    progress.stop()  # idempotent
    out = output(console)
    assert "url-malformed-scheme" in out and "url-ok" not in out


@pytest.mark.parametrize("enabled", [True, False])
def test_progress_can_be_forced(enabled):
    console = plain_console()
    assert Progress(console, enabled=enabled).live is enabled


def test_many_cases_that_broke_the_same_way_are_one_group(report, evidence):
    """Issue 25: 136 cases failing one check for one reason are one row, not 136, and the command
    that re-runs them is printed."""
    base = report.cases[1]
    same = [replace(base, id=f"same-{i}", status="fail",
                    evidence=(evidence("reply.regex", False, reason=f"no match for (?i)x in reply {i} of 900"),))
            for i in range(30)]
    other = replace(base, id="other-1", status="fail", evidence=(evidence("latency_ms", False, reason="slow"),))
    console = plain_console(400)
    print_table(replace(report, cases=(*same, other)), console)
    out = output(console)
    assert "31 case(s) did not pass, in 2 group(s) by check and reason" in out
    assert out.split("re-run:")[0].count("same-") < 10  # a few ids per group, not one row each
    assert "30" in out and "reply.regex" in out and "latency_ms" in out
    assert "re-run: harness run --case same-0 --case same-1" in out and "the first 20 of 31" in out


def test_a_few_failures_keep_one_row_each_and_a_rerun_line(report):
    console = plain_console()
    print_table(report, console)
    out = output(console)
    assert "re-run: harness run --case url-malformed-scheme" in out
    assert "group(s)" not in out


def test_simulated_money_says_so(report):
    d = report_to_dict(report)
    d["summary"]["simulated"] = True
    d["summary"]["cost_usd"] = 1.57
    console = plain_console(300)
    print_table(d, console)
    total = next(line for line in output(console).splitlines() if line.startswith("total"))
    assert "$1.57 simulated (nothing billed)" in total

def test_replay_misses_get_a_line_at_the_end_of_the_run(report):
    from harness.report.markdown import render_summary
    from harness.run.perf import replay_miss_note
    from harness.types import CaseMetrics

    missed = replace(report.cases[0], metrics=CaseMetrics(replay_misses=268))
    note = replay_miss_note([missed])
    console = plain_console(width=400)
    print_table(replace(report, notes=(note,)), console)
    assert "REPLAY MISSES: 268 LLM call(s) in 1 case(s)" in output(console)
    assert "REPLAY MISSES: 268" in render_summary(replace(report, notes=(note,)))
    console = plain_console(width=400)
    print_table(replace(report, notes=("some other note",)), console)
    assert "REPLAY MISSES" not in output(console) and "some other note" not in output(console)


def test_a_budget_stop_says_why_once_and_counts_the_rest(report):
    """341 identical skip lines were one cause (issue 25): its first line, then the count."""
    skipped = [replace(report.cases[0], id=f"s{i}", status="skipped", evidence=(),
                       error=f"not started: budget $0.10 reached (projected ${i}.5)") for i in range(5)]
    console = plain_console()
    progress = Progress(console, clock=FakeClock())
    progress.start(len(skipped))
    for r in skipped:
        progress.advance(r)
    progress.stop()
    lines = output(console).splitlines()
    assert sum(" skipped " in x and "not started" in x for x in lines) == 1
    assert "counted, not listed" in lines[0] and lines[-1].startswith("[ 5/5 ] 0 passed · 5 skipped")
    verbose = plain_console()
    progress = Progress(verbose, clock=FakeClock(), every_case=True)
    progress.start(len(skipped))
    for r in skipped:
        progress.advance(r)
    assert sum("not started" in x for x in output(verbose).splitlines()) == 5  # -v: every case
