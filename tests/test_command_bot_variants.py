"""A command bot (python-telegram-bot: /start with inline buttons, /book with arguments, /help,
a name it echoes) through the real runner with every metamorphic variant on: the clean bot
passes them all, the comparisons need no embedding model (torch is never imported), and the
variants of the previous release, fed to the same bot, fail it (the false alarms of issue 21:
'/help...' without its bot_command entity, a name typed in capitals)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

pytest.importorskip("telegram")

from harness.cases import load_cases  # noqa: E402
from harness.channels import telegram_entities  # noqa: E402
from harness.config import load_config  # noqa: E402
from harness.layers import variants as V  # noqa: E402
from harness.run.runner import RunOptions, run_suite  # noqa: E402
from tests.channels._bot_config import telegram_bot_config  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures_commands"
CONFIG = telegram_bot_config("ptb-commands", ["python", "-m", "tests.agents.ptb_commands"], ROOT, reply_timeout_s=5)

# `harness run` in a child process, which then says whether torch was ever imported.
RUN = ("import sys; from harness.cli import main; rc = main(sys.argv[1:]); "
       "print('modules:', 'torch' in sys.modules, 'sentence_transformers' in sys.modules); sys.exit(rc)")


def _project(tmp_path: Path, robustness: str) -> Path:
    shutil.copytree(FIXTURES, tmp_path / "fixtures")
    cfg = tmp_path / "harness.toml"
    cfg.write_text(CONFIG + robustness)
    return cfg


def test_the_clean_command_bot_passes_every_variant_without_loading_the_model(tmp_path):
    cfg = _project(tmp_path, '[robustness]\nvariants = "all"\n')
    done = subprocess.run([sys.executable, "-c", RUN, "run", "--config", str(cfg), "--out", str(tmp_path / "out")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600,
                          env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    results = json.loads(next((tmp_path / "out").glob("*/results.json")).read_text())
    derived = [c for c in results["cases"] if "--" in c["id"]]
    assert len(derived) >= 20 and {c["status"] for c in results["cases"]} == {"pass"}
    kinds = {c["id"].rsplit("--", 1)[1] for c in derived}
    assert kinds == set(V.KINDS)
    assert "modules: False False" in done.stdout  # every comparison was cheap: no torch
    assert "loading the embedding model" not in done.stdout + done.stderr
    compared = results["layers"]["robustness"]["variants"]["comparisons"]
    assert compared["by_embedder"] == 0 and compared["without_model"] > 20, compared
    assert f"({compared['without_model']} of {compared['without_model']} comparisons without the embedding model)" \
        in done.stdout


def _old_kinds(source, kind, texts):
    """The derived case with the texts the previous release's variants produced."""
    new = V.variant_case(source, kind, "robustness")
    n = len(source.turns)
    return replace(new, turns=(*new.turns[:n], *(replace(t, send=s) for t, s in zip(new.turns[n:], texts))))


# What the previous release derived from these cases (its transform, seeded by the same ids).
OLD = {
    ("cmd-help-and-usage", "spacing"): ["/help...", "/book  tomorrow!!", "please  show me  what  you  can do !"],
    ("cmd-book-through-the-buttons", "case"): ["/start", "book", "MY NAME IS ATLANTIS", "/book FRIDAY 19:00"],
}
OLD_COMMAND = re.compile(r"/[A-Za-z0-9_]{1,64}(?:@[A-Za-z0-9_]{3,32})?(?=\s|$)")


def _old_command_spans(text):  # the previous builder: at offset 0 only, ended by a space or the end
    m = OLD_COMMAND.match(text)
    return [(0, m.end())] if m else []


async def test_the_previous_variants_fail_the_same_clean_bot(tmp_path, monkeypatch):
    cfg = _project(tmp_path, '[embeddings]\nbackend = "hash"\n')
    config = load_config(cfg, environ={})
    sources = {c.id: c for c in load_cases(tmp_path / "fixtures", derive=False)}
    for (case_id, kind), texts in OLD.items():  # today's variants leave the commands and the name alone
        new = V.variant_case(sources[case_id], kind, "robustness")
        n = len(sources[case_id].turns)
        assert [t.send for t in new.turns[n:]] != texts
        assert all(t.send == o.send for t, o in zip(new.turns[n:], sources[case_id].turns)
                   if V.starts_with_command(o.send or ""))
        assert "Atlantis" in " ".join(t.send or "" for t in new.turns[n:]) or case_id != "cmd-book-through-the-buttons"
    monkeypatch.setattr(telegram_entities, "command_spans", _old_command_spans)
    cases = [_old_kinds(sources[case_id], kind, texts) for (case_id, kind), texts in OLD.items()]
    report = await run_suite(config, cases, RunOptions(out_dir=tmp_path / "out"))
    failed = {c.id: [(e.turn, e.check) for e in c.evidence if e.passed is False] for c in report.cases}
    assert failed == {"cmd-help-and-usage--spacing": [(3, "equivalent")],
                      "cmd-book-through-the-buttons--case": [(6, "equivalent"), (7, "equivalent")]}, failed
