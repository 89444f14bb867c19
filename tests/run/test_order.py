"""The start order (run/order.py): the longest chains first, from the previous run's journal or
the cases' shapes; a variant borrows its original's turns as soon as they are observed."""

from __future__ import annotations

import json

from harness.layers import variants as V
from harness.run import order, reuse
from harness.types import Case, Turn
from tests.run.test_variant_reuse import _obs, _variant


def _case(cid, turns=1, **turn) -> Case:
    return Case(id=cid, layer="multiturn", channel="telegram",
                turns=tuple(Turn(send=f"{cid} says {i}", **turn) for i in range(turns)))


def test_a_hang_or_a_long_conversation_starts_before_short_cases():
    short, hang = _case("short"), _case("hang", faults={"docs": "hang"})
    slow = _case("slow", faults={"llm": {"delay_ms": 2500}})
    long = _case("long", turns=22)
    cases = [short, long, slow, hang]
    got = [c.id for c in order.longest_first(cases, 15.0, {c.id for c in cases})]
    assert got == ["hang", "slow", "long", "short"]
    # the wrong twin: equal shapes keep the given order (a stable sort, nothing invented)
    same = [_case("a"), _case("b"), _case("c")]
    assert [c.id for c in order.longest_first(same, 15.0, {"a", "b", "c"})] == ["a", "b", "c"]


def test_an_original_with_its_variants_is_one_chain():
    src = Case(id="src", layer="multiturn", channel="telegram",
               turns=tuple(Turn(send=f"summarize turn {i} now") for i in range(4)),
               variants=("greeting", "typos"))
    variants = [V.variant_case(src, k, "robustness") for k in ("greeting", "typos")]
    assert all(v is not None and v.original == "src" for v in variants)
    lone = _case("lone", turns=6)  # longer than src alone, shorter than src and its two variants
    cases = [lone, *variants, src]
    got = [c.id for c in order.longest_first(cases, 15.0, {c.id for c in cases})]
    assert got[:3] == [variants[0].id, variants[1].id, "src"] and got[3] == "lone"
    # without its variants in the run, src alone is the shorter chain
    assert [c.id for c in order.longest_first([lone, src], 15.0, {"lone", "src"})] == ["lone", "src"]


def test_the_previous_runs_durations_decide_over_the_shapes(tmp_path):
    older, newer = tmp_path / "20261201-010000-0000", tmp_path / "20261202-010000-0000"
    for run, seconds in ((older, {"a": 9.0, "b": 0.1}), (newer, {"a": 0.1, "b": 4.0})):
        run.mkdir()
        lines = [json.dumps({"id": cid, "turns": [{"sent_at": 100.0, "replies": [{"at": 100.0 + s}], "calls": []}]})
                 for cid, s in seconds.items()]
        (run / "results.jsonl").write_text("\n".join(lines) + "\n{torn", encoding="utf-8")
    known = order.previous_durations(tmp_path)
    assert {k: round(v, 3) for k, v in known.items()} == {"a": 0.1, "b": 4.0}  # the newest, its torn line skipped
    older_known = order.previous_durations(tmp_path, this_run=newer.name)
    assert {k: round(v, 3) for k, v in older_known.items()} == {"a": 9.0, "b": 0.1}
    cases = [_case("a"), _case("b")]
    assert [c.id for c in order.longest_first(cases, 15.0, {"a", "b"}, known=known)] == ["b", "a"]
    assert order.previous_durations(tmp_path / "absent") == {}


def test_observed_s_spans_the_cases_own_turns_only():
    rec = {"turns": [{"sent_at": 10.0, "borrowed": "src", "replies": [{"at": 50.0}]},
                     {"sent_at": 20.0, "replies": [{"at": 21.0}], "calls": [{"at": 21.5, "duration_ms": 1000}]}]}
    assert order.observed_s(rec) == 2.5
    assert order.observed_s({"turns": []}) is None


def test_a_variant_borrows_an_observed_original_before_its_verdict():
    v = _variant()
    b = reuse.borrow(v, "src", None, [], 0, at=20.0, observed=_obs())
    assert b.missing == {} and b.turns[0].replies[0].text == "OK" and b.chat == "7"
    # the wrong twins: observed but incomplete or unanswered still say why, never compare
    assert "did not complete" in reuse.borrow(v, "src", None, [], 0, at=20.0,
                                              observed=_obs(error="case timed out after 60s")).missing[0]
    assert "got no reply" in reuse.borrow(v, "src", None, [], 0, at=20.0, observed=_obs(replies=())).missing[0]
    assert "did not finish" in reuse.borrow(v, "src", None, [], 0, at=20.0).missing[0]


def test_a_case_judged_by_the_model_starts_before_plain_short_cases():
    from harness.types import CheckSpec

    judged = Case(id="judged", layer="reasoning", channel="telegram",
                  turns=(Turn(send="summarize it", checks=(CheckSpec("similarity", {"min": 0.5}),)),))
    plain = _case("plain", turns=3)
    assert [c.id for c in order.longest_first([plain, judged], 15.0, {"plain", "judged"})] == ["judged", "plain"]
    # the wrong twin: a variant's equivalence (mostly decided without the model) adds nothing
    eq = Case(id="eq", layer="robustness", channel="telegram",
              turns=(Turn(send="summarize it", checks=(CheckSpec("equivalent", {"to": 0}),)),))
    assert [c.id for c in order.longest_first([plain, eq], 15.0, {"plain", "eq"})] == ["plain", "eq"]


def test_cases_sharing_texts_are_one_chain_and_start_before_a_longer_lone_case():
    """Cases that send one text ("/cancel") run one after another (textlocks.py): together they
    are a chain, started first, not the run's tail; the longest case of the group goes first."""
    a, b, c = _case("cancel-a", turns=3), _case("cancel-b", turns=3), _case("cancel-c", turns=2)
    lone = _case("lone", turns=6)  # longer than any of them, shorter than the three in a row
    other = _case("other")
    locks = {"cancel-a": ["/cancel", "x"], "cancel-b": ["/cancel"], "cancel-c": ["x"], "lone": ["lone"],
             "other": ["other"]}
    assert order.text_groups([a, b, c, lone, other], locks) == {
        "cancel-a": "cancel-a", "cancel-b": "cancel-a", "cancel-c": "cancel-a", "lone": "lone", "other": "other"}
    cases = [other, lone, c, b, a]
    got = [x.id for x in order.longest_first(cases, 15.0, {x.id for x in cases}, locks=locks)]
    assert got == ["cancel-b", "cancel-a", "cancel-c", "lone", "other"]
    # the twin: without the texts each case is its own chain, the longest first
    got = [x.id for x in order.longest_first(cases, 15.0, {x.id for x in cases})]
    assert got == ["lone", "cancel-b", "cancel-a", "cancel-c", "other"]
