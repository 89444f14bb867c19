"""Writing a small reasoning project for a test: cases, one document, goldens and a
two-example judge-health set (shared by the reasoning-run and the judges tests)."""

from __future__ import annotations

import textwrap
from pathlib import Path

HEALTH = ("examples:\n"
          "  - {source: doc.txt, reply: 'The trial reduced symptoms by 30 percent.', verdict: true}\n"
          "  - {source: doc.txt, reply: 'The trial reduced symptoms by 60 percent.', verdict: false}\n")


def write_project(tmp_path: Path, cases: str, doc: str, goldens: dict[str, str], version: str) -> Path:
    """fixtures/reasoning/r.yaml, fixtures/documents/doc.txt and golden/ under ``tmp_path``;
    returns the golden folder."""
    (tmp_path / "fixtures" / "reasoning").mkdir(parents=True)
    (tmp_path / "fixtures" / "reasoning" / "r.yaml").write_text(textwrap.dedent(cases))
    docs = tmp_path / "fixtures" / "documents"
    docs.mkdir()
    (docs / "doc.txt").write_text(doc)
    gold = tmp_path / "golden"
    (gold / "critic").mkdir(parents=True)
    (gold / "VERSION").write_text(f"{version}\n")
    for cid, text in goldens.items():
        (gold / f"{cid}.yaml").write_text(f"case: {cid}\nanswers:\n  - {{text: '{text}', author: human, "
                                          "approved: 2026-11-30}\n")
    (gold / "critic" / "h.yaml").write_text(HEALTH)
    return gold
