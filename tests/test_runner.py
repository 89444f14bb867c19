"""The runner end to end on loopback: real emulators, real webhooks, a test-double agent in process."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from harness.cases import load_cases
from harness.config import load_config
from harness.run.runner import RunOptions, run_suite
from tests.agents.echo import TARGET_ENV

ENV = TARGET_ENV

CASES = """
layer: robustness
cases:
  - id: echo-telegram
    send: "hello there"
    expect:
      reply: {regex: "^echo: hello there$"}
      replies: {exact: 1}
      tools_called: [telegram.sendMessage]
      tools_not_called: [llm]
  - id: echo-whatsapp
    channel: whatsapp
    send: "hola"
    expect:
      reply: {contains: "echo: hola"}
      replies: {min: 1, max: 1}
      tools_called: [whatsapp.send]
  - id: echo-two-turns
    turns:
      - send: "one"
        expect: {reply: {contains: "one"}}
      - send: "two"
        expect: {reply: {contains: "two"}, replies: {exact: 1}}
"""


def setup(tmp_path: Path, mode: str = "", cases: str = CASES, extra: str = "") -> tuple:
    (tmp_path / "fixtures" / "robustness").mkdir(parents=True)
    (tmp_path / "fixtures" / "robustness" / "echo.yaml").write_text(textwrap.dedent(cases))
    (tmp_path / "fixtures" / "documents").mkdir()
    cfg = tmp_path / "harness.toml"
    cfg.write_text(f'[target]\nname = "echo"\ninprocess = "tests.agents.echo:make_app"\n'
                   f'[sandbox]\nsettle_s = 0.2\nreply_timeout_s = 3\n{extra}' + ENV
                   + (f'ECHO_MODE = "{mode}"\n' if mode else ""))
    config = load_config(cfg, environ={})
    return config, load_cases(tmp_path / "fixtures")


async def test_clean_agent_passes_every_case(tmp_path):
    config, cases = setup(tmp_path)
    report = await run_suite(config, cases, RunOptions(out_dir=tmp_path / "out"))
    by = {c.id: c for c in report.cases}
    assert {c.status for c in report.cases} == {"pass"}, [(c.id, [e.reason for e in c.evidence if not e.passed])
                                                          for c in report.cases]
    assert report.exit_code == 0
    assert report.summary.planned == report.summary.executed == report.summary.decidable == 3
    assert by["echo-two-turns"].observation.turns[1].replies[0].text == "echo: two"
    journal = (tmp_path / "out" / report.run_id / "results.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["id"] for line in journal) == sorted(by)


async def test_duplicate_replies_fail_with_the_count(tmp_path):
    config, cases = setup(tmp_path, mode="double")
    report = await run_suite(config, cases, RunOptions(out_dir=tmp_path / "out"))
    tg = next(c for c in report.cases if c.id == "echo-telegram")
    assert tg.status == "fail"
    failing = [e for e in tg.evidence if e.passed is False]
    assert any(e.check == "replies" and e.reason.startswith("2 replies") for e in failing)
    assert report.exit_code == 1


async def test_silent_agent_fails_and_waits_only_the_reply_timeout(tmp_path):
    config, cases = setup(tmp_path, mode="silent")
    report = await run_suite(config, cases, RunOptions(out_dir=tmp_path / "out"))
    assert {c.status for c in report.cases} == {"fail"}
    obs = report.cases[0].observation
    assert obs.turns[0].timed_out and obs.turns[0].replies == ()


async def test_crashing_webhook_is_failing_evidence_not_a_harness_error(tmp_path):
    cases = CASES + """
  - id: delivery-ok
    send: "x"
    expect: {delivery: {status: 200}}
"""
    config, loaded = setup(tmp_path, mode="crash", cases=cases)
    report = await run_suite(config, loaded, RunOptions(out_dir=tmp_path / "out"))
    d = next(c for c in report.cases if c.id == "delivery-ok")
    assert d.status == "fail"
    assert "webhook answered 500" in d.evidence[0].reason


async def test_concurrent_cases_are_attributed_by_their_own_ids(tmp_path):
    many = "layer: robustness\ncases:\n" + "".join(
        f'  - id: c{i}\n    channel: {"telegram" if i % 2 else "whatsapp"}\n    send: "msg {i}"\n'
        f'    expect: {{reply: {{regex: "^echo: msg {i}$"}}, replies: {{exact: 1}}}}\n' for i in range(12))
    config, cases = setup(tmp_path, cases=many)
    report = await run_suite(config, cases, RunOptions(out_dir=tmp_path / "out", concurrency=6))
    assert {c.status for c in report.cases} == {"pass"}
    assert report.notes == ()


TWO_USERS = """
layer: robustness
cases:
  - id: two-users-at-once
    users: [alice, bob]
    turns:
      - {as: alice, send: "one", overlap: true,
         expect: {reply: {regex: "^echo: one$"}, replies: {exact: 1}}}
      - {as: bob, send: "two", expect: {reply: {regex: "^echo: two$"}, replies: {exact: 1}}}
      - {as: alice, send: "three", expect: {reply: {regex: "^echo: three$"}, replies: {exact: 1}}}
"""


async def test_two_users_in_one_case_each_judged_on_their_own_chat(tmp_path):
    config, cases = setup(tmp_path, cases=TWO_USERS)
    report = await run_suite(config, cases, RunOptions(out_dir=tmp_path / "out", concurrency=1))
    (case,) = report.cases
    assert case.status == "pass", [e.reason for e in case.evidence if not e.passed]
    chats = [t.chat for t in case.observation.turns]
    assert chats[0] == chats[2] != chats[1] and len(set(case.observation.user_chats)) == 2


async def test_replies_crossing_chats_are_caught_at_concurrency_1(tmp_path):
    config, cases = setup(tmp_path, mode="cross", cases=TWO_USERS)
    report = await run_suite(config, cases, RunOptions(out_dir=tmp_path / "out", concurrency=1))
    (case,) = report.cases
    assert case.status == "fail"
    failed = {(e.turn, e.check) for e in case.evidence if e.passed is False}
    assert (0, "replies") in failed and (1, "replies") in failed  # alice got none, bob got both


def test_users_are_validated(tmp_path):
    import pytest

    from harness.errors import FixtureErrors

    bad = TWO_USERS.replace("users: [alice, bob]", "users: [alice]")
    with pytest.raises(FixtureErrors, match="users must be a list of 2"):
        setup(tmp_path, cases=bad)


def test_run_ids_sort_in_start_order_within_one_second():
    from datetime import datetime, timezone

    from harness.run.runner import new_run_id

    ids = [new_run_id(datetime(2026, 11, 30, 2, 0, 0, us, tzinfo=timezone.utc)) for us in (0, 16, 250_000, 999_999)]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert all(len(i) == len("20261130-020000-0000") for i in ids)
