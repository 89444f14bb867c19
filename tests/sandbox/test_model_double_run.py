"""A bot that calls its LLM through the official SDK with function calling, tested offline by
the runner with the model double: no fake server of its own, no provider key, no ``user``
field on its calls (tests/agents/llm_tools.py)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from harness.cases import load_cases
from harness.config import load_config
from harness.run.runner import RunOptions, run_suite
from harness.types import SOURCE_DOUBLE
from tests.agents.llm_tools import TARGET_ENV

CASES = """
layer: cost
cases:
  - id: order-three
    send: "order 3 widgets"
    model:
      - tool_calls: [{name: create_order, arguments: {item: widget, quantity: 3}}]
      - text: "Order {tool_result.id} is {tool_result.status}"
    expect:
      reply: {contains: "Order A-17 is created"}
      llm_calls: {min: 2, max: 2}
      tokens: {total_max: 5000}
      cost_usd: {max: 0.0005}
      metered: true
  - id: no-script
    turns:
      - send: "hello"
        expect: {reply: {contains: "double: hello"}}
      - send: "refuse this"
        model: {refusal: "I can't help with that"}
        expect: {reply: {contains: "I can't help with that"}}
"""


def _setup(tmp_path: Path, env: str = "", cases: str = CASES) -> tuple:
    (tmp_path / "fixtures" / "cost").mkdir(parents=True)
    (tmp_path / "fixtures" / "cost" / "shop.yaml").write_text(textwrap.dedent(cases))
    (tmp_path / "fixtures" / "documents").mkdir()
    cfg = tmp_path / "harness.toml"
    cfg.write_text('[target]\nname = "shop"\ninprocess = "tests.agents.llm_tools:make_app"\n'
                   '[sandbox]\nsettle_s = 0.2\nreply_timeout_s = 5\nconcurrency = 1\n' + TARGET_ENV + env)
    return load_config(cfg, environ={}), load_cases(tmp_path / "fixtures")


def _why(report) -> list:
    return [(c.id, [(e.reason, e.observed) for e in c.evidence if e.passed is not True]) for c in report.cases]


@pytest.mark.parametrize("env", ["", 'LLM_STREAM = "1"\n',
                                 'LLM_PROVIDER = "anthropic"\nLLM_MODEL = "claude-3-haiku-20240307"\n'])
async def test_the_bot_runs_offline_on_the_model_double(tmp_path, env):
    cost = "0.01" if "anthropic" in env else "0.0005"
    config, cases = _setup(tmp_path, env, CASES.replace("0.0005", cost))
    report = await run_suite(config, cases, RunOptions(out_dir=tmp_path / "out"))
    assert {c.status for c in report.cases} == {"pass"}, _why(report)
    order = next(c for c in report.cases if c.id == "order-three")
    llm_evidence = [e for e in order.evidence if e.check in ("llm_calls", "tokens", "cost_usd", "metered")]
    assert len(llm_evidence) >= 4 and {e.source for e in llm_evidence} == {SOURCE_DOUBLE}
    assert order.metrics.tokens_output > 0 and order.metrics.llm_calls == 2
    (note,) = [n for n in report.notes if n.startswith("the model double answered")]
    assert note.startswith("the model double answered 4 LLM call(s) (3 from the cases' model: scripts")


async def test_a_switch_to_a_pricier_model_fails_cost_usd(tmp_path):
    config, cases = _setup(tmp_path, 'LLM_MODEL = "gpt-4o"\n')  # 16x gpt-4o-mini's price
    report = await run_suite(config, cases, RunOptions(out_dir=tmp_path / "out"))
    order = next(c for c in report.cases if c.id == "order-three")
    (ev,) = [e for e in order.evidence if e.check == "cost_usd"]
    assert order.status == "fail" and ev.passed is False and "> threshold $0.0005" in ev.reason
    assert ev.source == SOURCE_DOUBLE and "simulated" in ev.reason


async def test_tiktoken_is_warm_before_the_first_case(tmp_path):
    """The bot's first LLM call must not wait for the harness to load encodings."""
    from harness.models import tokens
    from harness.run.runner import Runner

    config, _cases = _setup(tmp_path)
    tokens.get_encoding.cache_clear()
    runner = Runner(config, RunOptions(out_dir=tmp_path / "out"))
    try:
        await runner.bring_up()
        assert tokens.get_encoding.cache_info().currsize == len(tokens.ENCODINGS)
    finally:
        await runner.shut_down()
