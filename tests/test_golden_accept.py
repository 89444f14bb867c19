"""Goldens (issue 25): `harness check` fails a missing golden with the file to write and its format;
`harness golden accept RUN --case GLOB` drafts goldens from observed replies, unapproved until a
person dates them and moves them into golden/."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness import cli
from harness.errors import FixtureError
from harness.golden import load_golden_file, load_goldens

CASE = """layer: reasoning
cases:
  - id: sum-paper
    send: "summarize {docs}/paper.txt"
    expect:
      similarity: {min: 0.8}
"""


def _project(tmp_path: Path) -> Path:
    (tmp_path / "fixtures" / "reasoning").mkdir(parents=True)
    (tmp_path / "fixtures" / "documents").mkdir()
    (tmp_path / "fixtures" / "documents" / "paper.txt").write_text("A paper.")
    (tmp_path / "fixtures" / "reasoning" / "a.yaml").write_text(CASE)
    (tmp_path / "golden").mkdir()
    cfg = tmp_path / "harness.toml"
    cfg.write_text('[target]\nname = "x"\ninprocess = "tests.agents.echo:make_app"\n')
    return cfg


def test_check_fails_a_missing_golden_with_the_file_and_the_format(tmp_path, capsys):
    cfg = _project(tmp_path)
    assert cli.main(["check", "--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert "case 'sum-paper'" in err and "golden/sum-paper.yaml" in err
    assert "author: human, approved:" in err and "harness golden accept RUN_ID --case sum-paper" in err


def test_golden_accept_writes_an_unapproved_draft_no_check_uses(tmp_path, capsys):
    cfg = _project(tmp_path)
    run = tmp_path / "reports" / "r1"
    run.mkdir(parents=True)
    run.joinpath("results.json").write_text(json.dumps({"run_id": "r1", "cases": [
        {"id": "sum-paper", "status": "unavailable",
         "evidence": [{"check": "similarity", "turn": 0, "passed": None}],
         "turns": [{"replies": [{"text": "The paper finds that X rose by 12 percent."}]}]},
        {"id": "other", "status": "pass", "evidence": [{"check": "replies", "turn": 0, "passed": True}],
         "turns": [{"replies": [{"text": "hi"}]}]}]}))
    assert cli.main(["golden", "accept", "r1", "--config", str(cfg)]) == 0
    draft = tmp_path / "golden" / "drafts" / "sum-paper.yaml"
    assert draft.exists() and not (tmp_path / "golden" / "drafts" / "other.yaml").exists()
    text = draft.read_text()
    assert "NOT APPROVED" in text and "approved: pending" in text and "rose by 12 percent" in text
    assert load_goldens(tmp_path / "golden").get("sum-paper") is None  # a draft is not a golden
    with pytest.raises(FixtureError, match="approved must be a date"):  # moved without a date: refused
        load_golden_file(draft)
    approved = tmp_path / "golden" / "sum-paper.yaml"
    approved.write_text(text.replace("approved: pending", "approved: 2026-12-01"))
    assert load_goldens(tmp_path / "golden").get("sum-paper").answers[0].text.startswith("The paper finds")
    assert cli.main(["golden", "accept", "r1", "--case", "nope*", "--config", str(cfg)]) == 2


def test_golden_accept_keeps_a_draft_someone_edited(tmp_path, capsys):
    """Issue 24: a second accept wrote over golden/drafts/<case>.yaml, a reviewer's edits and all."""
    cfg = _project(tmp_path)
    for rid, reply in (("r1", "First answer."), ("r2", "Second answer.")):
        run = tmp_path / "reports" / rid
        run.mkdir(parents=True)
        run.joinpath("results.json").write_text(json.dumps({"run_id": rid, "cases": [
            {"id": "sum-paper", "status": "fail", "evidence": [{"check": "similarity", "turn": 0, "passed": False}],
             "turns": [{"replies": [{"text": reply}]}]}]}))
    assert cli.main(["golden", "accept", "r1", "--config", str(cfg)]) == 0
    draft = tmp_path / "golden" / "drafts" / "sum-paper.yaml"
    draft.write_text(draft.read_text().replace("approved: pending", "approved: 2026-12-01  # checked by ana"))
    edited = draft.read_text()
    assert cli.main(["golden", "accept", "r1", "--config", str(cfg)]) == 0  # r1 again: beside the edited one
    assert (tmp_path / "golden" / "drafts" / "sum-paper.r1.yaml").exists()
    assert cli.main(["golden", "accept", "r2", "--config", str(cfg)]) == 0
    assert draft.read_text() == edited
    beside = tmp_path / "golden" / "drafts" / "sum-paper.r2.yaml"
    assert "Second answer." in beside.read_text() and str(beside) in capsys.readouterr().out
