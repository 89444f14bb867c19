"""write_all and `harness report RUN_DIR --format ...` (render from results.json)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from harness.errors import UsageError
from harness.report import FORMATS, render, render_text, write_all
from harness.report.jsonfile import report_to_dict
from harness.report.jsonread import load_report


def test_write_all_writes_the_four_files(report, tmp_path):
    run_dir = tmp_path / "reports" / report.run_id
    paths = write_all(report, run_dir)
    assert {k: p.name for k, p in paths.items()} == {
        "json": "results.json", "junit": "junit.xml", "md": "summary.md", "html": "report.html"}
    assert sorted(p.name for p in run_dir.iterdir()) == ["junit.xml", "report.html", "results.json", "summary.md"]
    assert load_report(run_dir) == report_to_dict(report)
    assert len(list(ET.parse(paths["junit"]).getroot().iter("testcase"))) == len(report.cases)


def test_write_all_never_touches_the_journal(report, tmp_path):
    journal = tmp_path / "results.jsonl"
    journal.write_bytes(b'{"id": "a"}\n{"id": "b", "tor')
    before = journal.stat()
    write_all(report, tmp_path)
    assert journal.read_bytes() == b'{"id": "a"}\n{"id": "b", "tor'
    assert journal.stat().st_mtime_ns == before.st_mtime_ns


@pytest.mark.parametrize("fmt", ["html", "md", "junit"])
def test_render_rebuilds_each_format_from_results_json(report, tmp_path, fmt):
    written = write_all(report, tmp_path)
    original = written[fmt].read_text(encoding="utf-8")
    written[fmt].unlink()
    assert render(tmp_path, fmt) == written[fmt]
    assert written[fmt].read_text(encoding="utf-8") == original


def test_render_json_validates_and_points_at_the_source(report, tmp_path):
    write_all(report, tmp_path)
    assert render(tmp_path, "json") == tmp_path / "results.json"
    assert render(tmp_path / "results.json", "md") == tmp_path / "summary.md"  # the file itself works too


def test_render_text_json_is_the_results_file(report, tmp_path):
    write_all(report, tmp_path)
    assert json.loads(render_text(load_report(tmp_path), "json")) == report_to_dict(report)


@pytest.mark.parametrize("fmt, setup, message", [
    ("pdf", True, "unknown report format 'pdf'"),
    ("HTML", True, "unknown report format"),
    ("md", False, "no results.json"),
])
def test_render_rejects_bad_requests(report, tmp_path, fmt, setup, message):
    if setup:
        write_all(report, tmp_path)
    with pytest.raises(UsageError, match=message) as info:
        render(tmp_path, fmt)
    assert info.value.exit_code == 2


def test_formats_table_matches_the_cli_contract():
    assert set(FORMATS) == {"html", "md", "junit", "json", "github"}
