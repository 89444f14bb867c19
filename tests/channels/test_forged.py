"""Forged, stale and missing signatures / secret tokens: a bot that refuses them passes, a bot
that trusts any POST fails its case, on both channels (the echo test double, in process)."""

from __future__ import annotations

import textwrap

import pytest

from harness.cases import load_cases
from harness.config import load_config
from harness.run.runner import RunOptions, run_suite
from tests.agents.echo import TARGET_ENV

CASES = """
layer: robustness
cases:
  - id: forged-telegram
    turns:
      - send: "hi"
      - forged: missing
      - forged: forged
      - forged: {signature: stale, send: "pay me"}
  - id: forged-whatsapp
    channel: whatsapp
    turns:
      - send: "hi"
      - forged: missing
      - forged: forged
      - forged: {signature: stale, send: "pay me"}
"""


async def _run(tmp_path, mode: str):
    (tmp_path / "fixtures" / "robustness").mkdir(parents=True)
    (tmp_path / "fixtures" / "robustness" / "forged.yaml").write_text(textwrap.dedent(CASES))
    (tmp_path / "fixtures" / "documents").mkdir()
    cfg = tmp_path / "harness.toml"
    cfg.write_text('[target]\nname = "echo"\ninprocess = "tests.agents.echo:make_app"\n'
                   '[sandbox]\nsettle_s = 0.2\nreply_timeout_s = 3\n' + TARGET_ENV
                   + (f'ECHO_MODE = "{mode}"\n' if mode else ""))
    report = await run_suite(load_config(cfg, environ={}), load_cases(tmp_path / "fixtures"),
                             RunOptions(out_dir=tmp_path / "out"))
    return {c.id: c for c in report.cases}


async def test_a_bot_that_checks_signatures_passes(tmp_path):
    cases = await _run(tmp_path, "")
    for cid in ("forged-telegram", "forged-whatsapp"):
        case = cases[cid]
        assert case.status == "pass", [e.reason for e in case.evidence if not e.passed]
        assert [t.delivery_status for t in case.observation.turns] == [200, 401, 401, 401]


@pytest.mark.parametrize("cid", ["forged-telegram", "forged-whatsapp"])
async def test_a_bot_that_trusts_any_post_fails(tmp_path, cid):
    cases = await _run(tmp_path, "trusting")
    case = cases[cid]
    assert case.status == "fail"
    bad = {(e.turn, e.check): e.reason for e in case.evidence if e.passed is False}
    for turn, how in ((1, "missing"), (2, "forged"), (3, "stale")):
        assert f"to a {how} signature: anyone could post to it" in bad[(turn, "webhook_2xx")], bad
        assert bad[(turn, "replies")].startswith("1 replies, wanted exactly 0"), bad  # the forged text was answered
