"""Attribution and the tool double through the real runner, on loopback: a shop bot whose LLM
calls carry no ``user`` field (tests/agents/toolbot.py), at concurrency 4.

Before content attribution, every one of these LLM calls was unattributed: ``llm_calls``
failed at 0 and ``cost_usd`` / ``metered`` passed at "$0 over 0 calls". Now each call is its
case's by the text the case sent; two cases that sent the same text at once are
``unavailable``, never passed.
"""

from __future__ import annotations

import asyncio
import json
import re
import textwrap
from pathlib import Path

import pytest
from aiohttp import web

from harness.cases import load_cases
from harness.config import load_config
from harness.run.runner import RunOptions, run_suite
from harness.sandbox.server import listen
from tests.agents.toolbot import TARGET_ENV


@pytest.fixture
async def upstream():
    """The LLM provider: answers every chat completion after a short think, with usage."""
    calls: list = []

    async def complete(request: web.Request) -> web.Response:
        body = await request.json()
        calls.append(body)
        await asyncio.sleep(0.3)  # concurrent cases are all running while their calls are answered
        m = re.search(r"(\d+)\s+(\w+)", body["messages"][-1]["content"])
        call = {"id": "call_1", "type": "function", "function": {
            "name": "create_order", "arguments": json.dumps({"item": m.group(2), "quantity": int(m.group(1))})}}
        return web.json_response({"id": "c1", "model": body["model"], "choices": [
            {"index": 0, "finish_reason": "tool_calls",
             "message": {"role": "assistant", "content": None, "tool_calls": [call]}}],
            "usage": {"prompt_tokens": 60, "completion_tokens": 8, "total_tokens": 68}})

    app = web.Application()
    app.router.add_post("/chat/completions", complete)
    srv = await listen(app, "fake provider")
    yield srv.base_url, calls
    await srv.stop()


def setup(tmp_path: Path, upstream_url: str, cases: str, model: str = "", extra_env: str = "",
          sections: str = "") -> tuple:
    (tmp_path / "fixtures" / "cost").mkdir(parents=True)
    (tmp_path / "fixtures" / "cost" / "shop.yaml").write_text(textwrap.dedent(cases))
    (tmp_path / "fixtures" / "documents").mkdir()
    cfg = tmp_path / "harness.toml"
    cfg.write_text(f'[target]\nname = "toolbot"\ninprocess = "tests.agents.toolbot:make_app"\n'
                   f'[sandbox]\nsettle_s = 0.2\nreply_timeout_s = 8\nllm_upstream = "{upstream_url}"\n'
                   + TARGET_ENV + (f'LLM_MODEL = "{model}"\n' if model else "") + extra_env + sections)
    return load_config(cfg, environ={}), load_cases(tmp_path / "fixtures")


def order_case(cid: str, n: int, item: str, cost_max: float = 0.001) -> str:
    return f"""
  - id: {cid}
    send: "please order {n} {item} for me"
    tools:
      create_order: {{json: {{id: "A-{n}", status: created, quantity: "{{args.quantity}}"}}}}
    expect:
      reply: {{contains: "Order A-{n} is created"}}
      llm_calls: {{min: 1, max: 1}}
      cost_usd: {{max: {cost_max:.6f}}}
      tool_args: {{create_order: {{quantity: {n}, item: {item}}}}}
      tool_order: [llm, {{create_order: {{quantity: {n}}}}}]
"""


def failures(report) -> list:
    return [(c.id, e.check, e.reason) for c in report.cases for e in c.evidence if e.passed is not True]


async def test_calls_without_a_user_field_are_attributed_by_content_at_concurrency_4(tmp_path, upstream):
    url, calls = upstream
    cases = "layer: cost\ncases:\n" + "".join(order_case(f"order-{n}", n, item) for n, item in
                                              ((3, "widgets"), (5, "gadgets"), (2, "bolts"), (7, "nuts")))
    config, loaded = setup(tmp_path, url, cases)
    report = await run_suite(config, loaded, RunOptions(out_dir=tmp_path / "out", concurrency=4))
    assert not failures(report), failures(report)
    assert len(calls) == 4 and all("user" not in c for c in calls)
    for c in report.cases:
        llm = [e for e in c.observation.turns[0].events if e.name == "llm"]
        assert len(llm) == 1 and llm[0].meta["attributed"] == "content", c.id
        assert c.cost_usd and c.cost_usd > 0  # never "$0 over 0 calls"
        tool = next(e for e in c.observation.turns[0].events if e.source == "tools")
        assert tool.request["quantity"] == int(c.id.split("-")[1]) and tool.meta["double"] is True
    assert not any("could not be attributed" in n for n in report.notes), report.notes


ITEMS = ((3, "widgets"), (5, "gadgets"), (2, "bolts"), (7, "nuts"), (4, "screws"), (6, "washers"), (8, "hinges"),
         (9, "springs"))


async def test_a_pricier_model_fails_cost_usd_at_concurrency_8(tmp_path, upstream):
    url, _ = upstream
    cases = "layer: cost\ncases:\n" + "".join(order_case(f"order-{n}", n, item, cost_max=0.00005) for n, item in ITEMS)
    config, loaded = setup(tmp_path, url, cases, model="gpt-4o")  # 16x the price of gpt-4o-mini
    report = await run_suite(config, loaded, RunOptions(out_dir=tmp_path / "out", concurrency=8))
    cost = [e for c in report.cases for e in c.evidence if e.check == "cost_usd"]
    assert len(cost) == 8 and all(e.passed is False for e in cost), [e.reason for e in cost]
    assert all("> threshold" in e.reason for e in cost)


async def test_tool_calls_without_an_id_are_the_case_whose_model_asked_for_them(tmp_path, upstream):
    url, _ = upstream
    cases = "layer: cost\ncases:\n" + "".join(order_case(f"order-{n}", n, item) for n, item in ITEMS[:4])
    cases += """
  - id: wrong-args
    send: "please order 11 pallets for me"
    tools:
      create_order: {json: {id: "A-11", status: created}}
    expect:
      tool_args: {create_order: {quantity: 12}}
"""
    config, loaded = setup(tmp_path, url, cases, extra_env='TOOLBOT_FROM_LLM = "1"\n')
    report = await run_suite(config, loaded, RunOptions(out_dir=tmp_path / "out", concurrency=8))
    by = {c.id: c for c in report.cases}
    wrong = by.pop("wrong-args")
    assert all(c.status == "pass" for c in by.values()), failures(report)
    for c in by.values():
        tool = next(e for e in c.observation.turns[0].events if e.source == "tools")
        assert "chat_id" not in tool.request and tool.meta["attributed"] == "content"
    ev = next(e for e in wrong.evidence if e.check == "tool_args")
    assert ev.passed is False and '"quantity": 11' in ev.reason, ev.reason


async def test_two_cases_with_the_same_text_are_not_run_side_by_side(tmp_path, upstream):
    """The same text in two cases would identify neither while both run: the runner keeps them
    apart (run/turns.case_texts), so each one's calls are its own and every check is decided."""
    url, _ = upstream
    twin = """
  - id: {cid}
    send: "please order 4 widgets for me"
    expect:
      replies: {{exact: 1}}
      llm_calls: {{max: 1}}
      cost_usd: {{max: 0.01}}
      tools_called: [create_order]
"""
    cases = "layer: cost\ncases:\n" + twin.format(cid="twin-a") + twin.format(cid="twin-b") + \
        order_case("order-3", 3, "widgets", cost_max=0.01)
    config, loaded = setup(tmp_path, url, cases, sections="[budget]\ncase_usd = 0.01\n")
    report = await run_suite(config, loaded, RunOptions(out_dir=tmp_path / "out", concurrency=4))
    assert {c.status for c in report.cases} == {"pass"}, failures(report)
    a, b = (next(c for c in report.cases if c.id == cid).observation for cid in ("twin-a", "twin-b"))
    assert a.finished_at <= b.started_at or b.finished_at <= a.started_at  # never side by side


async def test_the_same_text_with_the_attempts_own_document_link_runs_side_by_side(tmp_path, upstream):
    """The twin of the test above: ``{docs}`` is filled with each attempt's own document link, so
    the texts differ as sent; no lock keeps the two apart and every call is still attributed."""
    from harness.run.turns import case_texts

    url, _ = upstream
    twin = """
  - id: {cid}
    send: "please order 4 widgets for me, as in {{docs}}/paper.pdf"
    expect:
      replies: {{exact: 1}}
      llm_calls: {{max: 1}}
      cost_usd: {{max: 0.01}}
      tools_called: [create_order]
"""
    cases = "layer: cost\ncases:\n" + twin.format(cid="twin-a") + twin.format(cid="twin-b")
    config, loaded = setup(tmp_path, url, cases, sections="[budget]\ncase_usd = 0.01\n")
    assert [case_texts(c) for c in loaded] == [[], []]
    report = await run_suite(config, loaded, RunOptions(out_dir=tmp_path / "out", concurrency=4))
    assert {c.status for c in report.cases} == {"pass"}, failures(report)
    a, b = (next(c for c in report.cases if c.id == cid).observation for cid in ("twin-a", "twin-b"))
    assert a.started_at < b.finished_at and b.started_at < a.finished_at  # side by side


async def test_calls_that_carry_no_text_of_any_case_are_unavailable_not_passed(tmp_path, upstream):
    url, _ = upstream
    one = """
  - id: {cid}
    send: "please order {n} widgets for me"
    expect:
      replies: {{exact: 1}}
      llm_calls: {{max: 1}}
      cost_usd: {{max: 0.01}}
      tools_called: [create_order]
"""
    cases = "layer: cost\ncases:\n" + "".join(one.format(cid=f"rewrite-{n}", n=n) for n in (4, 5, 6))
    config, loaded = setup(tmp_path, url, cases, sections="[budget]\ncase_usd = 0.01\n",
                           extra_env='TOOLBOT_REWRITE = "1"\n')
    report = await run_suite(config, loaded, RunOptions(out_dir=tmp_path / "out", concurrency=4))
    by = {c.id: c for c in report.cases}
    undecided = 0
    for cid, case in by.items():
        ev = {e.check: e for e in case.evidence}
        if case.status == "unavailable":
            undecided += 1
            for check in ("llm_calls", "cost_usd", "metered", "budget.case_usd"):
                assert ev[check].availability == "unavailable" and ev[check].passed is None, (cid, check, ev[check])
                assert "could not be attributed to a case while" in ev[check].reason
            assert ev["tools_called"].passed is True  # the tool call named its chat
        else:  # it ran alone (the others had not started or were done): its calls were its own
            assert case.status == "pass", failures(report)
        assert not any(e.passed is True and e.check in ("llm_calls", "cost_usd") and
                       "0 LLM calls" in e.reason for e in case.evidence)  # never a pass at zero
    assert undecided >= 2, failures(report)
    assert any("could not be attributed" in n for n in report.notes)


async def test_llm_faults_reach_unkeyed_calls_and_retry_wait_times_the_retry(tmp_path, upstream):
    url, _ = upstream
    cases = """
layer: cost
cases:
  - id: patient
    send: "please order 3 widgets for me"
    fault: {llm: {status: 429, retry_after: 1, times: 1}}
    expect: {retry_wait: {of: llm}, llm_calls: {min: 2, max: 2}}
  - id: hasty
    send: "rush: order 5 gadgets for me"
    fault: {llm: {status: 429, retry_after: 1, times: 1}}
    expect: {retry_wait: {of: llm}}
  - id: tool-down
    send: "please order 2 bolts for me"
    tools:
      create_order: {status: 503, json: {error: busy}, retry_after: 2}
    expect:
      reply: {contains: "Sorry, the order service answered 503"}
      retry_wait: {of: create_order}
"""
    config, loaded = setup(tmp_path, url, cases)
    report = await run_suite(config, loaded, RunOptions(out_dir=tmp_path / "out", concurrency=4))
    by = {c.id: {e.check: e for e in c.evidence} for c in report.cases}
    assert by["patient"]["retry_wait"].passed is True, by["patient"]["retry_wait"].reason
    assert by["patient"]["llm_calls"].passed is True, by["patient"]["llm_calls"].reason  # 429 then the retry
    assert by["hasty"]["retry_wait"].passed is False
    assert "wanted at least 1s" in by["hasty"]["retry_wait"].reason
    assert by["hasty"]["retry_wait"].source == "test-double"  # the 429 was the harness's own
    down = by["tool-down"]
    assert down["reply.contains"].passed is True, down["reply.contains"].reason
    assert down["retry_wait"].availability == "unavailable" and "none retried" in down["retry_wait"].reason
