"""A document summarizer written from python-telegram-bot's and openai's docs alone
(tests/agents/ptb_summarizer.py) runs against the harness as it would against Telegram: it
downloads the user's document (getFile, base_file_url) and sends its text to its model. The
model double echoes the prompt ({last_user}), so a reply holding the document's first finding
proves the bytes the case named reached the bot and its model; the twin case naming another
document must fail the same check. Before the emulator served files, the download was a 404
and every case failed (a false alarm on a clean bot)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("telegram")
pytest.importorskip("openai")

from harness.cases import load_cases  # noqa: E402
from harness.config import load_config  # noqa: E402
from harness.run.runner import RunOptions, run_suite  # noqa: E402
from tests.channels._bot_config import telegram_bot_config  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ENV = 'OPENAI_BASE_URL = "{llm_base_url}"\nOPENAI_API_KEY = "sk-test"\n'
CASES = """
layer: reasoning
defaults: {variants: none, model: {text: "Summary: {last_user}"}}
cases:
  - id: summary-of-the-findings
    turns:
      - document: {file_name: study.txt, mime_type: text/plain, source: findings.txt}
        expect: {reply: {contains: "the bees came back"}, tools_called: [llm]}
  - id: summary-of-a-pdf
    turns:
      - document: {file_name: paper.pdf, mime_type: application/pdf, source: battery-paper.pdf}
        expect: {reply: {contains: "Manganese-Rich Layered Oxide"}, tools_called: [llm]}
  - id: twin-another-document
    turns:
      - document: {file_name: study.txt, mime_type: text/plain, source: thanks.txt}
        expect: {reply: {contains: "the bees came back"}}
"""


async def test_a_ptb_summarizer_reads_the_document_the_case_sent(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "findings.txt").write_text("Findings: the bees came back after the hedges were planted.\n")
    (docs / "thanks.txt").write_text("Acknowledgements: we thank the farmers.\n")
    shutil.copy(ROOT / "fixtures" / "documents" / "battery-paper.pdf", docs / "battery-paper.pdf")
    (tmp_path / "fx" / "reasoning").mkdir(parents=True)
    (tmp_path / "fx" / "reasoning" / "docs.yaml").write_text(CASES)
    cfg = tmp_path / "harness.toml"
    cfg.write_text(telegram_bot_config("ptb-summarizer", ["python", "-m", "tests.agents.ptb_summarizer"], ROOT,
                                       extra=ENV, reply_timeout_s=8) + 'docs_dir = "docs"\n')
    report = await run_suite(load_config(cfg, environ={}), load_cases(tmp_path / "fx"),
                             RunOptions(out_dir=tmp_path / "out"))
    by_id = {c.id: c for c in report.cases}
    why = {k: [(e.check, e.reason) for e in c.evidence if e.passed is not True] for k, c in by_id.items()}
    assert by_id["summary-of-the-findings"].status == "pass", why
    assert by_id["summary-of-a-pdf"].status == "pass", why  # its LLM call attributed by the PDF's text
    assert by_id["twin-another-document"].status == "fail", why
