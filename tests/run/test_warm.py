"""What a run loads before its first case (run/warm.py, issue 26): lingua's language models,
whose first detection holds the interpreter's lock for seconds (a stall every case in flight
measured as latency), are loaded while the cases load, never inside the first language check."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from harness.run import warm
from harness.run.runner import RunOptions, run_loading
from tests.test_runner import setup

LANGUAGE = """
layer: robustness
cases:
  - id: says-it-in-english
    send: "Good morning, please answer in English"
    expect:
      reply: {language: en}
"""

PLAIN = """
layer: robustness
cases:
  - id: plain
    send: "hello there"
    expect:
      replies: {min: 1}
"""


async def _calls(tmp_path, monkeypatch, cases):
    calls: list[float] = []
    real = warm.language
    monkeypatch.setattr(warm, "language", lambda config=None: (calls.append(time.time()), real(config))[1])
    config, loaded = setup(tmp_path, cases=cases)
    report = await run_loading(config, RunOptions(out_dir=tmp_path / "out"), lambda: loaded)
    return calls, report


async def test_a_language_check_has_its_models_loaded_before_the_first_case(tmp_path, monkeypatch):
    calls, report = await _calls(tmp_path, monkeypatch, LANGUAGE)
    (case,) = report.cases
    assert calls and calls[0] < case.observation.started_at
    assert any(e.check == "reply.language" and e.availability == "ready" for e in case.evidence)


async def test_a_run_without_one_never_loads_them(tmp_path, monkeypatch):
    calls, report = await _calls(tmp_path, monkeypatch, PLAIN)
    assert calls == [] and report.cases[0].status == "pass"


async def test_a_run_after_one_whose_every_text_was_kept_loads_nothing_ahead(tmp_path, monkeypatch):
    """checks/langmemo.py: lingua's answers of the last run are kept in the cache folder; when
    that run found every text there, the next one does not load the models before its first
    case; the first run (nothing on record) and a run after new texts do."""
    from harness.checks import form, langmemo

    loads: list[int] = []
    real = form._detector
    monkeypatch.setattr(form, "_detector", lambda: (loads.append(1), real())[1])
    config, loaded = setup(tmp_path, cases=LANGUAGE)
    try:
        for n in range(3):  # the first run loads ahead (nothing on record); the second too (the first
            # asked lingua about its reply); the third follows a run that found every text kept
            loads.clear()
            report = await run_loading(config, RunOptions(out_dir=tmp_path / f"out{n}"), lambda: loaded)
            assert report.cases[0].status == "pass"
            assert bool(loads) is (n < 2), n
        assert langmemo.counts()["misses"] == 0 and langmemo.counts()["hits"] >= 1
    finally:
        langmemo.use(None)


def test_judges_language():
    from harness.types import Case, CheckSpec, Turn

    plain = Case(id="p", layer="robustness", channel="telegram", turns=(Turn(send="hi"),))
    lang = Case(id="l", layer="robustness", channel="telegram",
                turns=(Turn(send="hi", checks=(CheckSpec("reply.language", {"language": "en"}),)),))
    assert not warm.judges_language([plain], None)
    assert warm.judges_language([plain, lang], None)
    assert warm.judges_language([plain], baseline=object())  # the baseline's language invariants


# --- tiktoken's encodings: loaded only for an agent given the LLM gateway's address (counts_tokens)

BOT = """
import os, sys
sys.path.insert(0, {root!r})
from aiohttp import web
from tests.agents.echo import make_app

app = make_app(dict(os.environ))
app.router.add_get("/healthz", lambda request: web.Response(text="ok"))
web.run_app(app, host="127.0.0.1", port=int(os.environ["PORT"]), print=None, access_log=None)
"""


def _config(tmp_path, target: str, cases: str = PLAIN, env_line: str = ""):
    from harness.cases import load_cases
    from harness.config import load_config
    from tests.agents.echo import TARGET_ENV

    (tmp_path / "fixtures" / "robustness").mkdir(parents=True, exist_ok=True)
    (tmp_path / "fixtures" / "robustness" / "c.yaml").write_text(cases)
    (tmp_path / "fixtures" / "documents").mkdir(exist_ok=True)
    (tmp_path / "bot.py").write_text(BOT.format(root=str(Path(__file__).resolve().parents[2])))
    cfg = tmp_path / "harness.toml"
    cfg.write_text(f"[target]\n{target}\n[sandbox]\nsettle_s = 0.2\nreply_timeout_s = 3\n" + TARGET_ENV
                   + 'PORT = "{port}"\n' + env_line + "\n")
    return load_config(cfg, environ={}), load_cases(tmp_path / "fixtures")


COMMAND = ('command = ["python", "bot.py"]\nport = 0\nready_url = "http://127.0.0.1:{port}/healthz"\n'
           'telegram_webhook = "http://127.0.0.1:{port}/telegram"\n'
           'whatsapp_webhook = "http://127.0.0.1:{port}/whatsapp"')


@pytest.mark.parametrize("target, extra_env, cases, loads", [
    (COMMAND, "", PLAIN, False),  # a bot given no gateway address never calls it
    (COMMAND, 'OPENAI_BASE_URL = "{llm_base_url}"', PLAIN, True),
    (COMMAND, 'ANTHROPIC_BASE_URL = "{anthropic_base_url}"', PLAIN, True),
    (COMMAND.replace('"bot.py"]', '"bot.py", "--llm", "{llm_base_url}"]'), "", PLAIN, True),
    (COMMAND, "", PLAIN.replace('"hello there"', '"use {llm_base_url} please"'), True),  # a case text names it
    ('inprocess = "tests.agents.echo:make_app"', "", PLAIN, True),  # shares the harness's process
    ('telegram_webhook = "http://127.0.0.1:9/telegram"', "", PLAIN, True),  # started by someone else
])
def test_counts_tokens(tmp_path, target, extra_env, cases, loads):
    config, loaded = _config(tmp_path, target, cases, extra_env)
    assert warm.counts_tokens(config, loaded) is loads


@pytest.mark.parametrize("gateway, loads", [(False, False), (True, True)])
async def test_a_run_loads_the_encodings_only_for_a_bot_given_the_gateway(tmp_path, monkeypatch, gateway, loads):
    calls: list[float] = []
    monkeypatch.setattr(warm, "encodings", lambda: calls.append(time.time()))
    config, loaded = _config(tmp_path, COMMAND, PLAIN, 'OPENAI_BASE_URL = "{llm_base_url}"' if gateway else "")
    report = await run_loading(config, RunOptions(out_dir=tmp_path / "out"), lambda: loaded)
    (case,) = report.cases
    assert case.status == "pass", [e.reason for e in case.evidence if not e.passed]
    assert bool(calls) is loads
    if loads:
        assert calls[0] < case.observation.started_at
