"""results.jsonl: every append durable on return; torn lines skipped, never fatal."""

from __future__ import annotations

import json
import os

import pytest

from harness.report.journal import Journal, read_journal
from harness.report.jsonfile import case_to_dict
from harness.report.jsonread import case_from_dict


def test_each_append_is_one_fsynced_line_visible_before_close(report, tmp_path, monkeypatch):
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    path = tmp_path / "run" / "results.jsonl"
    journal = Journal(path)
    for n, result in enumerate(report.cases, start=1):
        journal.append(result)
        assert len(synced) == n  # durable before append returns, not at close
        # Another reader (a resume after a crash) sees the line right away.
        assert [r["id"] for r in read_journal(path)] == [c.id for c in report.cases[:n]]
    journal.close()
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(report.cases)
    assert json.loads(lines[0]) == case_to_dict(report.cases[0])


def test_journal_lines_rebuild_case_results(report, tmp_path):
    with Journal(tmp_path / "results.jsonl") as journal:
        for result in report.cases:
            journal.append(result)
    rebuilt = [case_from_dict(r) for r in read_journal(tmp_path / "results.jsonl")]
    assert [(c.id, c.status, c.evidence) for c in rebuilt] == [(c.id, c.status, c.evidence) for c in report.cases]


def test_append_accepts_the_dict_form_and_keeps_newlines_inside_one_line(tmp_path):
    path = tmp_path / "results.jsonl"
    with Journal(path) as journal:
        journal.append({"id": "a", "status": "fail", "error": "line1\nline2\r\n", "score": float("nan")})
    assert path.read_bytes().count(b"\n") == 1
    assert read_journal(path) == [{"id": "a", "status": "fail", "error": "line1\nline2\r\n", "score": None}]


def test_truncated_last_line_is_skipped(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_bytes(b'{"id": "a"}\n{"id": "b"}\n{"id": "c", "sta')  # killed mid-write
    assert [r["id"] for r in read_journal(path)] == ["a", "b"]


def test_resumed_journal_does_not_glue_onto_a_torn_line(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_bytes(b'{"id": "a"}\n{"id": "b", "sta')
    with Journal(path) as journal:
        journal.append({"id": "c"})
    assert [r["id"] for r in read_journal(path)] == ["a", "c"]


@pytest.mark.parametrize("bad_line", [
    b'{"id": "x", "status": "pa',   # torn
    b"[1, 2]",                      # JSON, but not a case object
    b'"just a string"',
    b"\xff\xfe garbage",            # not UTF-8
    b"   ",                         # blank
])
def test_unreadable_lines_are_skipped_anywhere(tmp_path, bad_line):
    path = tmp_path / "results.jsonl"
    path.write_bytes(b'{"id": "a"}\n' + bad_line + b'\n{"id": "b"}\n')
    assert [r["id"] for r in read_journal(path)] == ["a", "b"]


def test_missing_journal_means_nothing_finished(tmp_path):
    assert read_journal(tmp_path / "nope.jsonl") == []


def test_append_after_close_raises(tmp_path):
    journal = Journal(tmp_path / "results.jsonl")
    journal.close()
    journal.close()  # idempotent
    assert journal.closed
    with pytest.raises(ValueError, match="closed"):
        journal.append({"id": "late"})
