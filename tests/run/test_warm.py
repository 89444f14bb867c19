"""What a run loads before its first case (run/warm.py, issue 26): lingua's language models,
whose first detection holds the interpreter's lock for seconds (a stall every case in flight
measured as latency), are loaded while the cases load, never inside the first language check."""

from __future__ import annotations

import time

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
    monkeypatch.setattr(warm, "language", lambda: (calls.append(time.time()), real())[1])
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


def test_judges_language():
    from harness.types import Case, CheckSpec, Turn

    plain = Case(id="p", layer="robustness", channel="telegram", turns=(Turn(send="hi"),))
    lang = Case(id="l", layer="robustness", channel="telegram",
                turns=(Turn(send="hi", checks=(CheckSpec("reply.language", {"language": "en"}),)),))
    assert not warm.judges_language([plain], None)
    assert warm.judges_language([plain, lang], None)
    assert warm.judges_language([plain], baseline=object())  # the baseline's language invariants
