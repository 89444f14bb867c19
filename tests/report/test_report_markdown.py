"""summary.md: verdict first, severe failures next, honest per-layer rates, inert text."""

from __future__ import annotations

from dataclasses import replace

import pytest

from harness.report.jsonfile import report_to_dict
from harness.report.markdown import render_summary, write_summary
from harness.report.format import code, md
from harness.types import Counts


def layer_row(text: str, layer: str) -> list[str]:
    row = next(line for line in text.splitlines() if line.startswith(f"| {layer} |"))
    return [cell.strip() for cell in row.strip("|").split("|")]


def test_verdict_leads_then_failures_then_layers(report):
    text = render_summary(report)
    first = text.splitlines()[0]
    assert first.startswith("## ❌") and "FAIL" in first and "docbot 1.2" in first
    assert text.index("### Failures") < text.index("### By layer")
    failures = text[text.index("### Failures"):text.index("### By layer")]
    # The fail comes with its first failing evidence, the error with its error.
    assert "`url-malformed-scheme`" in failures and "no match for (?i)invalid.\\*url" in failures
    assert "`cancel-mid-task`" in failures and "timeout after 30s" in failures
    assert failures.index("url-malformed-scheme") < failures.index("cancel-mid-task")
    assert "url-ok" not in failures and "summary-faithful" not in failures


def test_layer_table_columns(report):
    text = render_summary(report)
    header = next(line for line in text.splitlines() if line.startswith("| layer |"))
    assert [c.strip() for c in header.strip("|").split("|")] == [
        "layer", "planned", "executed", "decidable", "passed", "soft", "failed", "errored", "unavailable",
        "pass rate", "cost"]
    assert layer_row(text, "robustness") == ["robustness", "2", "2", "2", "1", "0", "1", "0", "0", "50%", "$0.0012"]
    total = next(line for line in text.splitlines() if line.startswith("| **total** |"))
    assert "25%" in total  # 1 passed of 4 decidable, not of 7 planned


def test_zero_decidable_layer_reads_n_a_never_100(report):
    row = layer_row(render_summary(report), "cost")
    assert row[3] == "0" and row[-2] == "n/a"


@pytest.mark.parametrize("passed, decidable, rate", [(0, 0, "n/a"), (3, 3, "100%"), (0, 5, "0%")])
def test_summary_line_pass_rate(build_report, passed, decidable, rate):
    report = build_report(summary=Counts(planned=5, executed=5, decidable=decidable, passed=passed,
                                         unavailable=5 - decidable, verdict="pass"))
    lines = render_summary(report).splitlines()
    assert lines[2].startswith(f"{passed} of 5 passed")  # the night's one sentence, as report.html opens
    assert f"{passed} passed of {decidable} decidable ({rate})" in lines[4]


def test_all_pass_has_no_failures_section(build_report, report):
    ok = build_report(cases_=(report.cases[0],), summary=Counts(planned=1, executed=1, decidable=1, passed=1),
                      layers={"robustness": Counts(planned=1, executed=1, decidable=1, passed=1)}, exit_code=0,
                      notes=())
    text = render_summary(ok)
    assert text.startswith("## ✅ harness: PASS")
    assert "### Failures" not in text and "### Notes" not in text


def test_soft_unavailable_and_notes_sections(report):
    text = render_summary(report)
    assert "### Soft errors" in text and "summary-faithful" in text
    assert "### Unavailable" in text and "critic backend down" in text
    assert "### Notes" in text and "unattributed call" in text


def test_untrusted_text_is_inert(report, evidence, xss):
    hostile = f"{xss} [click](http://evil.example) | col *bold* `tick`\nnext line"
    case = replace(report.cases[1], evidence=(evidence("reply.regex", False, reason=hostile),))
    text = render_summary(replace(report, cases=(case,)))
    assert xss not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "[click](http" not in text and "\\[click\\]" in text
    assert "\\| col \\*bold\\* \\`tick\\`" in text
    assert "next line" in text and "\nnext line" not in text  # one line per item


@pytest.mark.parametrize("raw, escaped", [
    ("plain words", "plain words"),
    ("<b>x</b> & y", "&lt;b&gt;x&lt;/b&gt; &amp; y"),
    ("a|b", "a\\|b"),
    ("_x_ *y* ~z~", "\\_x\\_ \\*y\\* \\~z\\~"),
    ("![img](u)", "!\\[img\\](u)"),
    ("back\\slash", "back\\\\slash"),
    ("multi\n\nline", "multi line"),
    (None, ""),
])
def test_md_escaping(raw, escaped):
    assert md(raw) == escaped


@pytest.mark.parametrize("raw, span", [("case-id", "`case-id`"), ("a`b", "`a'b`"), ("x\ny", "`x y`")])
def test_code_span(raw, span):
    assert code(raw) == span


def test_renders_from_dict_and_writes(report, tmp_path):
    assert render_summary(report_to_dict(report)) == render_summary(report)
    path = write_summary(report, tmp_path / "summary.md")
    assert path.read_text(encoding="utf-8") == render_summary(report)


def test_long_failure_lists_are_capped(build_report, report):
    many = tuple(replace(report.cases[1], id=f"c{i}") for i in range(45))
    text = render_summary(build_report(cases_=many))
    assert "… and 15 more" in text and "`c29`" in text and "`c30`" not in text
