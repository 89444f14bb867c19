"""Issue 21's Done-when: a python-telegram-bot + ``openai`` SDK bot with function calling, whose LLM
calls carry no ``user`` field, tested offline with the harness's model and tool doubles and no
fake server of its own (tests/agents/ptb_openai_tools.py has no harness code in it).

Each seeded bug must fail the check written for it, at concurrency 8: a switch to a pricier model
fails ``cost_usd``; wrong tool arguments fail ``tool_args``; a retry that ignores Retry-After fails
``retry_wait``. Streamed completions are metered with non-zero output tokens, with and without
the usage chunk. The clean bot passes the whole suite, metamorphic variants included.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("telegram")
pytest.importorskip("openai")

from harness.cases import load_cases  # noqa: E402
from harness.config import load_config  # noqa: E402
from harness.run.runner import RunOptions, run_suite  # noqa: E402
from tests.channels._bot_config import telegram_bot_config  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures_llmbot"
ENV = 'OPENAI_BASE_URL = "{llm_base_url}"\nOPENAI_API_KEY = "sk-test"\nSHOP_API = "{tools_url}"\n'


async def _run(tmp_path: Path, *, env: str = "", layers: tuple[str, ...] = (), concurrency: int = 8):
    cfg = tmp_path / "harness.toml"
    cfg.write_text(telegram_bot_config("shop-assistant", ["python", "-m", "tests.agents.ptb_openai_tools"], ROOT,
                                       extra=ENV + env, reply_timeout_s=8))
    config = load_config(cfg, environ={})
    cases = load_cases(FIXTURES, layers=layers)
    report = await run_suite(config, cases, RunOptions(out_dir=tmp_path / "out", concurrency=concurrency))
    return report, {c.id: c for c in report.cases}


def _bad(case) -> list[tuple]:
    return [(e.turn, e.check, e.availability, e.reason) for e in case.evidence if e.passed is not True]


async def test_the_clean_bot_passes_offline_with_variants(tmp_path):
    report, cases = await _run(tmp_path)
    assert any("--" in c.id for c in report.cases), "no metamorphic variant was derived"
    failing = {c.id: _bad(c) for c in report.cases if c.status != "pass"}
    assert not failing, (failing, report.notes)
    order = cases["shop-order-three"]
    calls = [e for t in order.observation.turns for e in t.events if e.name == "llm"]
    assert len(calls) == 2 and all(e.meta.get("double") for e in calls)
    assert order.cost_usd is None or order.cost_usd > 0
    cost = next(e for e in cases["shop-order-cost"].evidence if e.check == "cost_usd")
    assert cost.passed and cost.source != "real", cost  # the double's usage is labelled as such


async def test_a_pricier_model_fails_cost_usd_at_concurrency_8(tmp_path):
    _, cases = await _run(tmp_path, env='SHOP_BUG = "pricier_model"\n', layers=("cost",))
    for cid in ("shop-order-cost", "shop-lookup-cost"):
        bad = _bad(cases[cid])
        assert [b[1] for b in bad] == ["cost_usd"], bad
        assert bad[0][2] == "ready"  # a measured breach, not "could not tell"


async def test_wrong_tool_arguments_fail_tool_args(tmp_path):
    _, cases = await _run(tmp_path, env='SHOP_BUG = "wrong_args"\n', layers=("multiturn",))
    bad = _bad(cases["shop-order-three"])
    assert "tool_args" in [b[1] for b in bad], bad
    assert any("quantity" in b[3] for b in bad if b[1] == "tool_args"), bad
    assert "tool_args" in [b[1] for b in _bad(cases["shop-status-then-order"]) if b[0] == 1]


async def test_a_retry_that_ignores_retry_after_fails_retry_wait(tmp_path):
    _, cases = await _run(tmp_path, env='SHOP_BUG = "ignore_retry_after"\n', layers=("multiturn",))
    bad = _bad(cases["shop-retry-after-rate-limit"])
    assert [b[1] for b in bad] == ["retry_wait"], bad
    assert bad[0][2] == "ready"


@pytest.mark.parametrize("stream", ["1", "nousage"])
async def test_streamed_completions_have_output_tokens(tmp_path, stream):
    _, cases = await _run(tmp_path, env=f'SHOP_STREAM = "{stream}"\n', layers=("cost",))
    case = cases["shop-order-cost"]
    assert case.status == "pass", _bad(case)
    calls = [e for t in case.observation.turns for e in t.events if e.name == "llm"]
    assert len(calls) == 2 and all(e.meta.get("stream") for e in calls)
    assert all((e.meta.get("output_tokens") or 0) > 0 for e in calls), [e.meta for e in calls]
    if stream == "nousage":  # no usage chunk: the streamed text and tool arguments, counted by tiktoken
        assert all(e.meta.get("estimated") and str(e.meta.get("tokens_source")).startswith("tiktoken")
                   for e in calls), [e.meta for e in calls]
    else:  # the usage chunk was read
        assert all(e.meta.get("tokens_source") == "usage" and e.meta.get("usage_chunk") for e in calls), \
            [e.meta for e in calls]
