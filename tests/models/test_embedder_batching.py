"""The embedder's batching window: texts that arrive while the model encodes go together in
the next batch, the moment the model is free (harness/models/embedder.py BatchingFront)."""

from __future__ import annotations

import asyncio
import time

import numpy as np

from harness.models.embedder import BatchingFront


def slow_front(batches: list[int], encode_s: float = 0.2, **kw) -> BatchingFront:
    def encode(texts):
        batches.append(len(texts))
        time.sleep(encode_s)
        return np.ones((len(texts), 4), dtype=np.float32)

    return BatchingFront(encode, name="slow@test", source="double", dim=4, **kw)


async def test_texts_arriving_during_an_encode_share_the_next_batch():
    """Ordered by events, not by sleeps: the first encode holds until ten more texts have been
    handed in, so the test says the same on a machine with both cores busy."""
    import threading

    batches: list[int] = []
    entered, release = threading.Event(), threading.Event()

    def encode(texts):
        batches.append(len(texts))
        if len(batches) == 1:
            entered.set()
            release.wait(30)
        return np.ones((len(texts), 4), dtype=np.float32)

    front = BatchingFront(encode, name="slow@test", source="double", dim=4, max_batch=64, max_wait_s=0.03)
    first = asyncio.create_task(front.embed(["a"]))
    assert await asyncio.to_thread(entered.wait, 30)  # the first batch (one text) is in the model now
    later = [asyncio.create_task(front.embed([f"t{i}"])) for i in range(10)]
    await asyncio.sleep(0)  # every later text is queued behind the busy model
    release.set()
    out = await asyncio.gather(first, *later)
    assert batches == [1, 10]
    assert all(v.shape == (1, 4) for v in out)
    assert front.stats.batches == 2 and front.stats.texts_encoded == 11
    rep = front.report()
    assert rep["mean_batch"] == 5.5 and 0 < rep["model_busy"] <= 1
    await front.aclose()


async def test_from_idle_a_full_batch_goes_at_once_and_big_loads_are_split():
    batches: list[int] = []
    front = slow_front(batches, encode_s=0.0, max_batch=4, max_wait_s=10.0)
    # never waits the 10 s window (max_batch is reached): wait_for would time out first
    out = await asyncio.wait_for(asyncio.gather(*(front.embed([f"x{i}", f"y{i}"]) for i in range(5))), 5)
    assert batches == [4, 4, 2] and [v.shape[0] for v in out] == [2] * 5


async def test_an_encoder_error_reaches_every_waiter():
    def broken(texts):
        raise RuntimeError("model gone")

    front = BatchingFront(broken, name="x@test", source="double", dim=4, max_wait_s=0.01)
    results = await asyncio.gather(front.embed(["a"]), front.embed(["b"]), return_exceptions=True)
    assert [type(r) for r in results] == [RuntimeError, RuntimeError]
