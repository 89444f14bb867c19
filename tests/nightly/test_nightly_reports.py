"""The nightly parts of the reports: trend charts, tonight's diff, quarantine marker, summary.md."""

from __future__ import annotations

import json
import re

from harness.night.diff import diff_runs
from harness.night.history import run_records
from harness.night.context import run_context
from harness.report import write_all
from harness.report.html import render_html
from harness.report.html_trends import line_chart, render_trends
from harness.report.markdown import render_summary


def test_trends_need_two_runs_and_leave_gaps_for_missing_values(make_run, make_case):
    r1 = make_run("20240101-020000-aaaa", [make_case("a"), make_case("b", "unavailable", layer="reasoning")])
    r2 = make_run("20240102-020000-bbbb", [make_case("a", "fail"), make_case("b", "pass", layer="reasoning")])
    assert render_trends(run_records([r1])) == ""
    html = render_trends(run_records([r1, r2]))
    assert html.count("<svg") == 4
    # reasoning had nothing decidable in r1: one point (r2), no line from a fake 0% or 100%
    rate_chart = html.split("<svg")[1]
    assert rate_chart.count("<polyline") == 1  # robustness only
    assert "reasoning 01-02 02:00: 100%" in rate_chart and "reasoning 01-01" not in rate_chart


def test_chart_text_is_escaped():
    svg = line_chart("<b>t</b>", ["<i>x</i>", "y"], {"<script>": [1.0, 2.0]})
    assert "<script>" not in svg and "&lt;script&gt;" in svg and "<b>" not in svg


def test_html_leads_with_the_diff_and_marks_quarantine(make_run, make_case):
    base = make_run("r1", [make_case("a"), make_case("q")])
    new = make_run("r2", [make_case("a", "fail"), make_case("q", "fail", quarantined=True)])
    diff = diff_runs(base, new)
    page = render_html(new, run_records([base, new]), diff)
    body = page.split("<body>", 1)[1]
    assert body.index("Tonight vs r1") < body.index("Trends over 2 run(s)") < body.index("What broke")
    assert re.search(r'New failures \(regressions\) \(2\)', page)
    assert page.count('class="q">quarantined') >= 2  # in the diff and on the case


def test_summary_md_names_regressions_first_and_stays_short(make_run, make_case):
    base = make_run("r1", [make_case(f"c{i:02d}") for i in range(40)] + [make_case("old", "fail")])
    new = make_run("r2", [make_case(f"c{i:02d}", "fail") for i in range(40)] + [make_case("old", "fail")])
    new["cases"].insert(0, new["cases"].pop())  # the known failure comes first in the run
    text = render_summary(new, diff_runs(base, new))
    lines = text.splitlines()
    lead = next(i for i, line in enumerate(lines) if line.startswith("**40 new since `r1`**"))
    assert lead < lines.index("### Failures")
    first_failure = lines[lines.index("### Failures") + 2]
    assert "`c00`" in first_failure  # a regression, not the known 'old' failure
    assert "… and 30 more (diff.json)" in text and "### Compared with `r1`" in text
    assert len(text) < 12_000


def test_write_all_writes_diff_json_and_run_context_finds_the_previous_night(tmp_path, make_run, make_case,
                                                                              save_run):
    save_run(tmp_path, make_run("20240101-020000-aaaa", [make_case("a")]))
    new = make_run("20240102-020000-bbbb", [make_case("a", "error")])
    ctx = run_context(new, tmp_path)
    assert [r["run_id"] for r in ctx.history] == ["20240101-020000-aaaa", "20240102-020000-bbbb"]
    assert ctx.diff["base_run"]["why"] == "previous run"
    files = write_all(new, tmp_path / new["run_id"], history=ctx.history, diff=ctx.diff)
    assert json.loads(files["diff"].read_text())["regressions"][0]["id"] == "a"
    assert "Trends over 2 run(s)" in files["html"].read_text()
    assert "### Compared with" in files["md"].read_text()


def test_a_broken_history_does_not_break_the_report(tmp_path, make_run, make_case):
    (tmp_path / "baseline.json").write_text("{", encoding="utf-8")  # unreadable baseline: ignored
    ctx = run_context(make_run("20240102-020000-bbbb", [make_case("a")]), tmp_path / "missing")
    assert ctx.diff is None and len(ctx.history) == 1


def test_run_labels_stay_distinct():
    """Two runs in one minute get seconds, two in one second a run number (it recursed forever)."""
    from harness.report.html_trends import _labels

    assert _labels([{"run_id": "20240101-020000-a"}, {"run_id": "20240102-020000-b"}]) == ["01-01 02:00", "01-02 02:00"]
    assert _labels([{"run_id": "20240101-020000-a"}, {"run_id": "20240101-020010-b"},
                    {"run_id": "20240101-020010-c"}]) == ["01-01 02:00:00", "01-01 02:00:10", "01-01 02:00:10 #2"]
