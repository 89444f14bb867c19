"""TextGate (run/textlocks.py): cases sharing a text never overlap; the rest run side by side;
a case takes all of its texts at once (no convoys), and a waiting case is not passed by one
that shares a text with it."""

from __future__ import annotations

import asyncio

from harness.run.textlocks import TextGate


async def _run(plan):
    """plan: [(name, texts, steps)]: each case holds its texts for ``steps`` loop turns; returns
    the (start, end) step of each."""
    gate = TextGate()
    clock = [0]
    spans = {}

    async def ticker():
        while True:
            await asyncio.sleep(0)
            clock[0] += 1

    async def case(name, texts, steps):
        mine = await gate.acquire(texts)
        start = clock[0]
        for _ in range(steps):
            await asyncio.sleep(0)
        spans[name] = (start, clock[0])
        gate.release(mine)

    t = asyncio.ensure_future(ticker())
    await asyncio.gather(*(case(*p) for p in plan))
    t.cancel()
    return spans, gate


def _overlap(a, b):
    return a[0] < b[1] and b[0] < a[1]


async def test_cases_sharing_a_text_never_overlap_and_the_others_do():
    spans, gate = await _run([("a", {"/help"}, 20), ("b", {"/help", "hi"}, 20), ("c", {"other"}, 20), ("d", set(), 20)])
    assert not _overlap(spans["a"], spans["b"])
    assert _overlap(spans["a"], spans["c"]) and _overlap(spans["a"], spans["d"])
    assert gate.busy == set()


async def test_a_waiting_case_is_not_passed_by_one_that_shares_a_text_with_it():
    # b waits for x (a has it); c shares only y with b: c waits its turn behind b (b came first)
    spans, _ = await _run([("a", {"x"}, 30), ("b", {"x", "y"}, 10), ("c", {"y"}, 10), ("e", {"z"}, 10)])
    assert spans["b"][0] >= spans["a"][1] and spans["c"][0] >= spans["b"][1]
    assert spans["e"][0] < spans["a"][1]  # no text in common: not held up at all


async def test_a_cancelled_waiter_lets_the_next_one_in():
    gate = TextGate()
    first = await gate.acquire({"x"})
    waiter = asyncio.ensure_future(gate.acquire({"x", "y"}))
    await asyncio.sleep(0)
    third = asyncio.ensure_future(gate.acquire({"y"}))
    await asyncio.sleep(0)
    assert not third.done()  # behind the earlier waiter that shares y
    waiter.cancel()
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert third.done() and gate.busy == {"x", "y"}
    gate.release(first)
    gate.release(third.result())
    assert gate.busy == set()


async def test_a_waiter_with_a_lower_priority_number_is_served_first():
    gate = TextGate()
    held = await gate.acquire(["shared"])
    order = []

    async def want(name, texts, priority):
        mine = await gate.acquire(texts, priority)
        order.append(name)
        gate.release(mine)

    early = asyncio.ensure_future(want("short, arrived first", ["shared", "x"], 1.5))
    await asyncio.sleep(0)
    late = asyncio.ensure_future(want("long chain, arrived later", ["shared"], 1.1))
    await asyncio.sleep(0)
    gate.release(held)
    await asyncio.gather(early, late)
    assert order == ["long chain, arrived later", "short, arrived first"]
    # the twin: at the same priority, arrival order stands
    held = await gate.acquire(["shared"])
    order.clear()
    early = asyncio.ensure_future(want("first", ["shared", "x"], 1.0))
    await asyncio.sleep(0)
    late = asyncio.ensure_future(want("second", ["shared"], 1.0))
    await asyncio.sleep(0)
    gate.release(held)
    await asyncio.gather(early, late)
    assert order == ["first", "second"]


async def _run_segments(plan):
    """plan: [(name, [texts of each segment], steps per segment)]: each case takes its first
    segment's texts, then each later one's before it "sends" it; returns per case the (start,
    end) step of each segment."""
    gate = TextGate()
    clock = [0]
    spans: dict[str, list[tuple[int, int]]] = {}

    async def ticker():
        while True:
            await asyncio.sleep(0)
            clock[0] += 1

    async def case(name, segments, steps):
        hold = await gate.acquire(segments[0], later=segments[1:])
        out = spans.setdefault(name, [])
        for k, texts in enumerate(segments):
            if k:
                await gate.more(hold, texts)
            start = clock[0]
            for _ in range(steps):
                await asyncio.sleep(0)
            out.append((start, clock[0]))
        gate.release(hold)

    t = asyncio.ensure_future(ticker())
    await asyncio.wait_for(asyncio.gather(*(case(*p) for p in plan)), 10)  # a deadlock fails, not hangs
    t.cancel()
    return spans, gate


async def test_two_cases_sharing_only_their_last_segments_overlap_until_it():
    # "stop", wait, "/help" beside "cancel", wait, "/help": side by side, the /help parts one after another
    spans, gate = await _run_segments([("tg", [{"stop"}, {"/help"}], 20), ("wa", [{"cancel"}, {"/help"}], 20)])
    assert _overlap(spans["tg"][0], spans["wa"][0])
    # whoever took /help first held it to its end: the other's /help segment came after
    first, second = sorted(("tg", "wa"), key=lambda n: spans[n][1][0])
    assert spans[second][1][0] >= spans[first][1][1]
    assert gate.busy == set() and gate.running == []


async def test_a_case_sharing_a_first_segment_text_waits_for_the_whole_case():
    spans, _ = await _run_segments([("cancel", [{"stop"}, {"/help"}], 20), ("long", [{"stop", "/help", "hi"}], 5)])
    assert spans["long"][0][0] >= spans["cancel"][1][1]


async def test_crossed_segments_never_deadlock():
    # a takes x then y, b takes y then x: let in together they would wait for each other forever;
    # b is let in only once a is done (what they share is not in the last segment of both)
    spans, _ = await _run_segments([("a", [{"x"}, {"y"}], 10), ("b", [{"y"}, {"x"}], 10)])
    assert spans["b"][0][0] >= spans["a"][1][1]


async def test_a_later_segment_waits_for_a_one_segment_case_holding_it():
    # a variant sending "/help" among its texts runs beside the cancel case's wait; the cancel
    # case's "/help" waits for it to end
    spans, _ = await _run_segments([("variant", [{"/help", "/start"}], 30), ("cancel", [{"stop"}, {"/help"}], 5)])
    assert _overlap(spans["variant"][0], spans["cancel"][0])
    assert spans["cancel"][1][0] >= spans["variant"][0][1]


def test_a_case_s_texts_are_split_before_a_turn_that_waits(tmp_path):
    from harness.cases import load_cases
    from harness.run.turns import case_text_segments

    (tmp_path / "multiturn").mkdir()
    (tmp_path / "multiturn" / "c.yaml").write_text(
        "layer: multiturn\ncases:\n  - id: c\n    turns:\n"
        "      - send: 'summarize {docs}/a.pdf'\n        expect: {replies: {exact: 0}}\n"
        "      - send: stop\n        expect: {replies: {exact: 1}}\n"
        "      - send: /help\n        wait_s: 3\n        expect: {replies: {exact: 1}}\n"
        "      - send: thanks\n        expect: {replies: {exact: 1}}\n")
    case = next(c for c in load_cases(tmp_path) if c.id == "c")
    assert case_text_segments(case) == [(0, ["stop"]), (2, ["/help", "thanks"])]
    assert case_text_segments(case, skip=3) == [(3, ["thanks"])]
