"""A python-telegram-bot ConversationHandler bot, tested through its states by a multi-turn
case file via the real runner: the bot runs as its own process behind PTB's own webhook
server (tests/agents/ptb_conversation.py has no harness code in it)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("telegram")

from harness.cases import load_cases  # noqa: E402
from harness.config import load_config  # noqa: E402
from harness.run.runner import RunOptions, run_suite  # noqa: E402
from tests.channels._bot_config import telegram_bot_config  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CONFIG = telegram_bot_config("ptb-conversation", ["python", "-m", "tests.agents.ptb_conversation"], ROOT,
                             reply_timeout_s=5)


async def test_conversation_handler_states_via_the_runner(tmp_path):
    cfg = tmp_path / "harness.toml"
    cfg.write_text(CONFIG)
    config = load_config(cfg, environ={})
    cases = load_cases(ROOT / "tests" / "fixtures_ptb")
    report = await run_suite(config, cases, RunOptions(out_dir=tmp_path / "out"))
    failing = {c.id: [(e.turn, e.check, e.reason) for e in c.evidence if e.passed is not True] for c in report.cases}
    assert {c.status for c in report.cases} == {"pass"}, (failing, report.notes)
    happy = next(c for c in report.cases if c.id == "ptb-conversation-happy-path")
    assert [t.replies[0].text for t in happy.observation.turns][:3] == [
        "Send /start to begin.", "Hi! What's your name?", "How old are you, Ada?"]
    assert happy.observation.turns[4].replies[0].buttons == ("red", "green", "blue")


async def test_a_wrong_expectation_fails_with_the_turn(tmp_path):
    """The same bot against a case that expects the wrong state's reply: it must fail."""
    (tmp_path / "fx" / "multiturn").mkdir(parents=True)
    (tmp_path / "fx" / "multiturn" / "bad.yaml").write_text(
        "layer: multiturn\ndefaults: {variants: none}\ncases:\n  - id: ptb-wrong\n    turns:\n      - send: /start\n"
        "        expect: {reply: {regex: \"^Hi!\"}}\n      - send: \"Ada\"\n"
        "        expect: {reply: {regex: \"^Pick your favourite colour\"}}\n")
    cfg = tmp_path / "harness.toml"
    cfg.write_text(CONFIG)
    report = await run_suite(load_config(cfg, environ={}), load_cases(tmp_path / "fx"),
                             RunOptions(out_dir=tmp_path / "out"))
    (case,) = report.cases
    assert case.status == "fail"
    bad = [e for e in case.evidence if e.passed is False]
    assert [(e.turn, e.check) for e in bad] == [(1, "reply.regex")]
