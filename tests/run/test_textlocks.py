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
