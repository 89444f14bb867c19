"""A metamorphic variant compared with its original's turns from the same run (issue 26 item 2):
the original's turns are sent once, a variant borrows them; an original that left nothing to
compare with makes the comparison unavailable, never passed; an original not in the run is
replayed inside the variant as before."""

from __future__ import annotations

from harness.layers import variants as V
from harness.run import reuse
from harness.run.runner import RunOptions, run_suite
from harness.run.turns import case_texts
from harness.types import Case, CaseResult, CheckSpec, Evidence, Observation, Reply, Turn, TurnObservation
from tests.layers.test_variants import _project


def _sent(report) -> int:
    """Updates the driver delivered in the whole run (turns not borrowed)."""
    return sum(1 for c in report.cases for t in c.observation.turns if not t.borrowed)


async def test_variants_borrow_the_originals_turns_and_still_catch_a_literal_agent(tmp_path):
    config, cases = _project(tmp_path, "keyword", layers=())
    report = await run_suite(config, cases, RunOptions(out_dir=tmp_path / "out", concurrency=4))
    status = {c.id: c.status for c in report.cases}
    assert status == {"ask": "pass", "ask--case": "fail", "ask--greeting": "pass", "ask--typos": "fail"}
    assert _sent(report) == 1 + 3  # the original's turn once, each variant's own once (was 1 + 2 * 3)
    by_id = {c.id: c for c in report.cases}
    for vid in ("ask--case", "ask--greeting", "ask--typos"):
        obs = by_id[vid].observation
        assert obs.turns[0].borrowed == "ask" and not obs.turns[1].borrowed
        assert [r.text for r in obs.turns[0].replies] == [r.text for r in by_id["ask"].observation.turns[0].replies]
        assert all(e.turn != 0 for e in by_id[vid].evidence)  # the original's own case judged its turn
        assert by_id[vid].latency_ms is not None and by_id[vid].latency_ms < 2000
    why = next(e for e in by_id["ask--case"].evidence if e.passed is False)
    assert why.check == "equivalent" and why.turn == 1
    same = next(e for e in by_id["ask--greeting"].evidence if e.check == "equivalent")
    assert same.passed is True and same.availability == "ready"


async def test_an_original_without_a_reply_leaves_the_comparison_unavailable_never_passed(tmp_path):
    config, cases = _project(tmp_path, "silent", layers=())
    report = await run_suite(config, cases, RunOptions(out_dir=tmp_path / "out", concurrency=4))
    compared = [e for c in report.cases for e in c.evidence if e.check == "equivalent"]
    assert len(compared) == 3
    assert all(e.availability == "unavailable" and e.passed is None for e in compared), compared
    assert all("nothing to compare with: the original case ask got no reply in turn 1" in e.reason for e in compared)


async def test_the_same_silence_replayed_inside_the_variant_is_what_used_to_pass(tmp_path):
    # the twin: without the original in the run the variant replays it, and 0 replies against
    # 0 replies is the comparison's own business (its verdict is not borrowed)
    config, cases = _project(tmp_path, "keyword")
    report = await run_suite(config, cases, RunOptions(out_dir=tmp_path / "out", concurrency=4))
    assert {c.id: c.status for c in report.cases} == {"ask--case": "fail", "ask--greeting": "pass", "ask--typos": "fail"}
    assert not any(t.borrowed for c in report.cases for t in c.observation.turns)
    assert _sent(report) == 2 * 3


def _variant() -> Case:
    source = Case(id="src", layer="multiturn", channel="telegram", turns=(Turn(send="summarize it now"),),
                  variants=("greeting",))
    v = V.variant_case(source, "greeting", "robustness")
    assert v is not None and v.original == "src"
    return v


def _obs(replies=("OK",), status=200, error="") -> Observation:
    t = TurnObservation(index=0, sent_at=10.0, delivery_status=status, delivery_error="",
                        replies=tuple(Reply(channel="telegram", chat="7", text=x, at=10.5, method="sendMessage") for x in replies),
                        events=(), settled_after_s=0.2)
    return Observation(case_id="src", channel="telegram", chat_id="7", turns=(t,), started_at=10.0,
                       finished_at=11.0, error=error)


def _result(obs, status="pass") -> CaseResult:
    return CaseResult(id="src", layer="multiturn", channel="telegram", status=status, evidence=(), observation=obs)


def test_plan_borrows_only_an_original_that_runs_here():
    v = _variant()
    assert reuse.plan(v, {"src", v.id}, set()) == "src"
    assert reuse.plan(v, {v.id}, set()) is None  # not selected: replayed inside the variant
    assert reuse.plan(v, {"src", v.id}, {"src"}) is None  # resumed: its journal line keeps no observation
    written = Case(id="w", layer="multiturn", channel="telegram", turns=(Turn(send="a"),))
    assert reuse.plan(written, {"w"}, set()) is None


def test_borrow_says_why_an_original_gives_nothing_to_compare_with():
    v = _variant()
    ok = reuse.borrow(v, "src", _result(_obs()), [], 0, at=20.0)
    assert ok.missing == {} and ok.chat == "7" and ok.turns[0].borrowed == "src" and ok.turns[0].chat == "7"
    cases = {
        "no reply": (_result(_obs(replies=())), "got no reply in turn 1"),
        "undelivered": (_result(_obs(status=500)), "was not delivered"),
        "errored": (_result(_obs(error="case timed out after 60s"), status="error"), "did not complete"),
        "skipped": (CaseResult(id="src", layer="multiturn", channel="telegram", status="skipped", evidence=(),
                               error="not started: --maxfail 1 reached"), "was skipped"),
        "never finished": (None, "did not finish"),
    }
    for name, (result, why) in cases.items():
        b = reuse.borrow(v, "src", result, [], 0, at=20.0)
        assert why in b.missing.get(0, ""), (name, b.missing)
        assert len(b.turns) == 1 and b.turns[0].borrowed == "src"


def test_a_repeat_compares_with_the_originals_attempt_of_the_same_number():
    v = _variant()
    first, second = _result(_obs(replies=("OK one",))), _result(_obs(replies=("OK two",)))
    b = reuse.borrow(v, "src", second, [first, second], 0, at=20.0)
    assert b.turns[0].replies[0].text == "OK one"
    assert reuse.borrow(v, "src", second, [first], 3, at=20.0).turns[0].replies[0].text == "OK two"


def test_own_evidence_drops_the_borrowed_turns_checks_and_never_passes_a_missing_comparison():
    v = _variant()
    b = reuse.borrow(v, "src", _result(_obs(replies=())), [], 0, at=20.0)
    evidence = [Evidence(check="replies", turn=0, availability="ready", passed=False),
                Evidence(check="equivalent", turn=1, availability="ready", passed=True, score=1.0),
                Evidence(check="answered", turn=1, availability="ready", passed=True)]
    out = reuse.own_evidence(v, b, evidence)
    assert [(e.check, e.availability, e.passed) for e in out] == [
        ("equivalent", "unavailable", None), ("answered", "ready", True)]
    whole = reuse.borrow(v, "src", _result(_obs()), [], 0, at=20.0)
    assert [(e.check, e.passed) for e in reuse.own_evidence(v, whole, evidence)] == [
        ("equivalent", True), ("answered", True)]


def test_a_borrowing_variant_locks_only_the_texts_it_sends():
    v = _variant()
    assert "summarize it now" in case_texts(v)  # replayed: the original's text too
    mine = case_texts(v, skip=reuse.leading(v))
    assert "summarize it now" not in mine and len(mine) == 1
    assert reuse.judged(v, reuse.borrow(v, "src", None, [], 0, at=0.0)).turns[0].checks == ()
    assert v.turns[1].checks[-1] == CheckSpec("equivalent", {"to": 0, "min": V.EQUIVALENT_MIN})


def test_two_variants_of_one_case_never_run_side_by_side():
    """Their words differ but their model and tool calls are the same (issue 21's tool bot
    attributed a sibling's create_order to the wrong case): they hold their original's name."""
    source = Case(id="src", layer="multiturn", channel="telegram", turns=(Turn(send="please order 3 blue widgets"),))
    a, b = V.variant_case(source, "greeting", "robustness"), V.variant_case(source, "typos", "robustness")
    planned = {"src", a.id, b.id}
    la, lb = set(reuse.locks(a, planned, set())), set(reuse.locks(b, planned, set()))
    assert la & lb == {"\0variants of src"}
    assert not set(reuse.locks(source, planned, set())) & la  # the original: the variant waits for it instead
    other = V.variant_case(Case(id="x", layer="multiturn", channel="telegram", turns=(Turn(send="show my basket"),)),
                           "typos", "robustness")
    assert not set(reuse.locks(other, planned | {"x", other.id}, set())) & la
