"""Metamorphic variants: each kind really changes the request, never a link, placeholder or
number; derived cases compare every varied turn with its original; an agent that reads
keywords literally is caught, one that reads them as a person would is not."""

from __future__ import annotations

import textwrap

import pytest

from harness.cases import load_cases
from harness.checks import REGISTRY
from harness.config import load_config
from harness.errors import FixtureErrors
from harness.layers import variants as V
from harness.run.runner import RunOptions, run_suite
from harness.types import Case, Event, Observation, Reply, Turn, TurnObservation
from tests.agents.echo import TARGET_ENV

REQUEST = "summarize {docs}/paper.pdf for linkedin, focusing on the challenges since 2021"


@pytest.mark.parametrize("kind", list(V.KINDS))
def test_each_kind_changes_the_request_but_no_link_placeholder_or_number(kind):
    out = V.transform(kind, REQUEST, "case-a")
    assert out != REQUEST
    assert "{docs}/paper.pdf" in out and "2021" in out
    assert V.transform(kind, REQUEST, "case-a") == out  # deterministic
    assert out == out.strip()  # the platforms strip leading and trailing whitespace anyway


def test_the_kinds_do_what_they_say():
    t = lambda kind: V.transform(kind, REQUEST, "case-a")  # noqa: E731
    assert t("case").startswith("SUMMARIZE {docs}/paper.pdf FOR LINKEDIN")
    assert t("greeting").endswith(REQUEST)
    assert any(ch in t("lookalike") for ch in V.LOOKALIKES.values())
    assert any(ch in t("accents") for ch in V.ACCENTS.values())
    assert any(ch in t("emoji") for ch in V.EMOJI)
    assert "  " in t("spacing") or t("spacing").endswith(("!!", "...", " !"))
    typo = t("typos")
    assert typo.lower() != REQUEST.lower() and len(typo) in (len(REQUEST), len(REQUEST) - 1, len(REQUEST) - 2)


def _suite(tmp_path, body: str):
    (tmp_path / "multiturn").mkdir(parents=True, exist_ok=True)
    (tmp_path / "multiturn" / "a.yaml").write_text(textwrap.dedent(body))
    return load_cases(tmp_path)


BODY = """
    layer: multiturn
    cases:
      - id: two-turns
        turns:
          - send: "summarize {docs}/paper.pdf for linkedin"
            expect: {replies: {exact: 1}}
          - send: "make it shorter please"
            expect: {reply: {regex: "(?i)shorter"}}
      - id: with-a-fault
        turns:
          - send: "summarize {docs}/paper.pdf"
            fault: {llm: {status: 500}}
            expect: {replies: {min: 1}}
    """


def test_derived_cases_replay_the_conversation_and_compare_each_turn(tmp_path):
    cases = {c.id: c for c in _suite(tmp_path, BODY)}
    derived = [c for c in cases.values() if V.TAG in c.tags]
    assert derived and all(c.layer == "robustness" and c.users == ("original", "variant") for c in derived)
    assert not any(c.id.startswith("with-a-fault--") for c in derived)  # faults are not replayed
    v = derived[0]
    assert [t.user for t in v.turns] == ["original", "original", "variant", "variant"]
    assert [s.params for t in v.turns[2:] for s in t.checks if s.name == "equivalent"] == [
        {"to": 0, "min": V.EQUIVALENT_MIN}, {"to": 1, "min": V.EQUIVALENT_MIN}]
    assert [s.name for s in v.turns[0].checks] == ["replies"]  # the original's reply count, for settling
    assert len(derived) == V.DEFAULT_COUNT


def test_variants_are_chosen_per_case(tmp_path):
    body = BODY.replace("      - id: two-turns\n", "      - id: two-turns\n        variants: [typos, case]\n")
    ids = {c.id for c in _suite(tmp_path, body)}
    assert {"two-turns--typos", "two-turns--case"} <= ids
    none = BODY.replace("      - id: two-turns\n", "      - id: two-turns\n        variants: none\n")
    assert not [i for i in {c.id for c in _suite(tmp_path, none)} if "--" in i]
    bad = BODY.replace("      - id: two-turns\n", "      - id: two-turns\n        variants: [typo]\n")
    with pytest.raises(FixtureErrors, match="unknown variant kind"):
        _suite(tmp_path, bad)


T0 = 1_000_000.0


def _obs(first: list[str], second: list[str], calls=("llm",), calls2=("llm",)) -> Observation:
    def turn(i, texts, calls):
        return TurnObservation(index=i, sent_at=T0, delivery_status=200, delivery_error="",
                               replies=tuple(Reply("telegram", "1", t, T0 + 1, "sendMessage") for t in texts),
                               events=tuple(Event(source="gateway", name=c, at=T0, status=200) for c in calls),
                               settled_after_s=1)
    return Observation(case_id="v", channel="telegram", chat_id="1", turns=(turn(0, first, calls), turn(1, second, calls2)),
                       started_at=T0, finished_at=T0 + 2)


class _Services:
    def get(self, name):
        from harness.models.embedder import hash_embedder

        return hash_embedder()


CASE = Case(id="v", layer="robustness", channel="telegram", turns=(Turn(send="a"), Turn(send="b")))


@pytest.mark.parametrize("first,second,kw,passes", [
    (["Summary of the paper"], ["Summary of the paper"], {}, True),
    (["Summary of the paper"], ["Summary of the paper", "Summary of the paper"], {}, False),  # two replies
    (["Summary of the paper"], ["Summary of the paper"], {"calls2": ()}, False),  # no LLM call
    (["Summary of the paper: sleep rose"], ["Sorry, I did not understand that."], {}, False),
])
async def test_equivalent(first, second, kw, passes):
    e = await REGISTRY["equivalent"].fn(CASE, _obs(first, second, **kw), 1, {"to": 0, "min": 0.85}, _Services())
    assert e.passed is passes, e.reason


def _project(tmp_path, mode: str):
    (tmp_path / "fixtures" / "multiturn").mkdir(parents=True)
    (tmp_path / "fixtures" / "multiturn" / "k.yaml").write_text(textwrap.dedent("""
        layer: multiturn
        cases:
          - id: ask
            variants: [case, greeting, typos]
            send: "summarize it now"
            expect: {reply: {contains: "OK"}}
        """))
    cfg = tmp_path / "harness.toml"
    cfg.write_text('[target]\nname = "echo"\ninprocess = "tests.agents.echo:make_app"\n'
                   '[sandbox]\nsettle_s = 0.2\nreply_timeout_s = 3\n[embeddings]\nbackend = "hash"\n'
                   + TARGET_ENV + f'ECHO_MODE = "{mode}"\n')
    return load_config(cfg, environ={}), load_cases(tmp_path / "fixtures", layers=["robustness"])


async def test_an_agent_that_reads_keywords_literally_is_caught(tmp_path):
    config, cases = _project(tmp_path, "keyword")
    report = await run_suite(config, cases, RunOptions(out_dir=tmp_path / "out", concurrency=1))
    status = {c.id: c.status for c in report.cases}
    assert status == {"ask--case": "fail", "ask--greeting": "pass", "ask--typos": "fail"}
    why = next(e for c in report.cases if c.id == "ask--case" for e in c.evidence if e.passed is False)
    assert why.check == "equivalent" and why.turn == 1
    assert report.layer_metrics["robustness"]["variants"] == {
        "cases": 3, "passed": 1, "pass_rate": round(1 / 3, 4), "changed": ["ask--case", "ask--typos"]}
