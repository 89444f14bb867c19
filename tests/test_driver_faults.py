"""Delivery faults and per-turn faults end to end with the echo test double: bursts,
out-of-order and duplicate delivery; state checks without a probe are unavailable."""

from __future__ import annotations

import pytest

from harness.errors import FixtureErrors
from harness.run.runner import RunOptions, run_suite
from tests.test_runner import setup

CASES = """
layer: robustness
cases:
  - id: burst-in-order
    turns:
      - burst: ["one", "two"]
        expect: {replies: {exact: 2}}
  - id: burst-reversed
    turns:
      - burst: ["one", "two"]
        fault: {delivery: reversed}
        expect: {replies: {exact: 2}}
  - id: duplicated
    channel: whatsapp
    turns:
      - send: "again"
        fault: {delivery: duplicate}
        expect: {replies: {exact: 2}}
  - id: no-probe
    send: "x"
    expect: {state: {"$.task": null}}
"""


async def test_bursts_reversal_duplicates_and_missing_probe(tmp_path):
    config, cases = setup(tmp_path, cases=CASES)
    report = await run_suite(config, cases, RunOptions(out_dir=tmp_path / "out"))
    by = {c.id: c for c in report.cases}
    texts = lambda cid: [r.text for r in by[cid].observation.turns[0].replies]  # noqa: E731
    assert texts("burst-in-order") == ["echo: one", "echo: two"]
    assert texts("burst-reversed") == ["echo: two", "echo: one"]  # the later message arrived first
    delivered = [e for e in by["burst-reversed"].observation.turns[0].events if e.source == "driver"]
    ids = [e.request["update_id"] for e in delivered]
    assert ids == sorted(ids, reverse=True) and all(e.meta["delivery_fault"] == "reversed" for e in delivered)
    assert texts("duplicated") == ["echo: again", "echo: again"]  # the echo double does not dedup
    wamids = [e.request["entry"][0]["changes"][0]["value"]["messages"][0]["id"]
              for e in by["duplicated"].observation.turns[0].events if e.source == "driver"]
    assert len(wamids) == 2 and wamids[0] == wamids[1]
    assert by["no-probe"].status == "unavailable"
    assert "no state probe" in by["no-probe"].evidence[0].reason


@pytest.mark.parametrize("turn,message", [
    ('{burst: ["only one"], expect: {replies: {min: 1}}}', "burst must be a list of at least two"),
    ('{send: "x", fault: {llm: "explode"}, expect: {replies: {min: 1}}}', "is not one of"),
    ('{send: "x", fault: {delivery: sideways}, expect: {replies: {min: 1}}}', "delivery must be"),
    ('{send: "x", expect: {state: {"task": null}}}', "not a simple JSON path"),
    ('{send: "x", expect: {slots: {mood: happy}}}', "unknown slot"),
])
def test_fixture_errors(tmp_path, turn, message):
    with pytest.raises(FixtureErrors) as info:
        setup(tmp_path, cases=f"layer: robustness\ncases:\n  - id: bad\n    turns:\n      - {turn}\n")
    assert message in str(info.value)
