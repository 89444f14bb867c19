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
    batches: list[int] = []
    front = slow_front(batches, max_batch=64, max_wait_s=0.03)
    first = asyncio.create_task(front.embed(["a"]))
    await asyncio.sleep(0.06)  # the first batch (one text) is in the model now
    later = []
    for i in range(10):  # one text every 15 ms while the model is busy
        later.append(asyncio.create_task(front.embed([f"t{i}"])))
        await asyncio.sleep(0.015)
    out = await asyncio.gather(first, *later)
    assert batches == [1, 10]
    assert all(v.shape == (1, 4) for v in out)
    assert front.stats.batches == 2 and front.stats.texts_encoded == 11
    rep = front.report()
    assert rep["mean_batch"] == 5.5 and rep["model_busy"] > 0.85  # idle only for the first 30 ms window
    await front.aclose()


async def test_from_idle_a_full_batch_goes_at_once_and_big_loads_are_split():
    batches: list[int] = []
    front = slow_front(batches, encode_s=0.0, max_batch=4, max_wait_s=10.0)
    t0 = time.perf_counter()
    out = await asyncio.wait_for(asyncio.gather(*(front.embed([f"x{i}", f"y{i}"]) for i in range(5))), 5)
    assert time.perf_counter() - t0 < 1.0  # never waited the 10 s window: max_batch was reached
    assert batches == [4, 4, 2] and [v.shape[0] for v in out] == [2] * 5


async def test_an_encoder_error_reaches_every_waiter():
    def broken(texts):
        raise RuntimeError("model gone")

    front = BatchingFront(broken, name="x@test", source="double", dim=4, max_wait_s=0.01)
    results = await asyncio.gather(front.embed(["a"]), front.embed(["b"]), return_exceptions=True)
    assert [type(r) for r in results] == [RuntimeError, RuntimeError]
