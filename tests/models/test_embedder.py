"""The embedder: the real model on a few sentences, the batching front, the disk cache."""

from __future__ import annotations

import asyncio

import pytest

from harness.models.embed_process import MiniLMProcess
from harness.models.embedder import cosine_matrix, hash_embedder, minilm_embedder


@pytest.fixture(scope="session")
def real_model(tmp_path_factory):
    """One real model for the whole session (loading it takes a few seconds)."""
    return minilm_embedder(tmp_path_factory.mktemp("emb-cache"))


async def test_real_model_ranks_paraphrase_above_unrelated(real_model):
    v = await real_model.embed(["The trial reduced symptoms by 30%.",
                                "Symptoms fell by thirty percent in the trial.",
                                "The bridge will open in 2028."])
    assert v.shape == (3, 384)
    sims = cosine_matrix(v[:1], v)[0]
    assert abs(float(sims[0]) - 1.0) < 1e-4  # normalised
    assert sims[1] > 0.6 > 0.2 > sims[2]
    assert real_model.source == "real" and real_model.name.startswith("all-MiniLM-L6-v2@")


async def test_concurrent_calls_are_micro_batched():
    e = hash_embedder(max_wait_s=0.05)
    results = await asyncio.gather(*(e.embed([f"sentence number {i}", "shared words here"]) for i in range(20)))
    assert all(r.shape == (2, 256) for r in results)
    assert e.stats.calls == 20 and e.stats.texts_encoded == 40
    assert e.stats.batches < 20 and e.stats.batches <= 2
    single = await e.embed(["sentence number 3"])
    assert abs(float(cosine_matrix(single, results[3][:1])[0][0]) - 1.0) < 1e-5  # rows go back to their callers


async def test_batch_is_sent_when_full_without_waiting():
    e = hash_embedder(max_batch=4, max_wait_s=10.0)
    out = await asyncio.wait_for(e.embed(["a b", "c d", "e f", "g h"]), 2.0)
    assert out.shape == (4, 256) and e.stats.batches == 1


async def test_disk_cache_hits_on_a_second_run(tmp_path):
    texts = ["golden answer one", "golden answer two"]
    first = hash_embedder(tmp_path)
    a = await first.embed(texts, cache=True)
    assert first.stats.cache_hits == 0 and first.stats.texts_encoded == 2
    second = hash_embedder(tmp_path)
    b = await second.embed(texts + ["a reply, not cached"], cache=True)
    assert second.stats.cache_hits == 2 and second.stats.texts_encoded == 1
    assert (a == b[:2]).all()
    assert list((tmp_path / "embeddings").rglob("*.npy"))


async def test_encoder_failure_reaches_every_waiter():
    from harness.models.embedder import BatchingFront

    def broken(texts):
        raise RuntimeError("model exploded")

    e = BatchingFront(broken, name="broken@0", source="test-double", dim=4)
    results = await asyncio.gather(e.embed(["a"]), e.embed(["b"]), return_exceptions=True)
    assert all(isinstance(r, RuntimeError) for r in results)


# -- issue 26: the model in its own process, off the harness's event loop --------------------------

async def test_the_model_runs_in_a_child_process_and_gives_the_in_process_vectors():
    from harness.models import embedder as E

    texts = ["The river rose by 3 metres in the spring flood.", "Résumé: naïve café", "hello"]
    child = minilm_embedder(None)
    try:
        await asyncio.to_thread(child.load_now)
        assert child.loaded and child.stats.load_s > 0
        vecs = await child.embed(texts)
        again = await child.embed(texts[:1])
    finally:
        await child.aclose()
    assert isinstance(child._encode.__self__, MiniLMProcess)
    here = minilm_embedder(None, in_process=True)
    assert isinstance(here._encode.__self__, E._MiniLM)
    assert vecs.shape == (3, 384) and abs(float((vecs[0] ** 2).sum()) - 1.0) < 1e-4
    # alone or in a batch of three: the same vector, to float32's rounding (torch may split a batch's
    # work across its threads differently, 1e-7 here)
    assert float(abs(vecs[:1] - again).max()) < 1e-5
    assert child.stats.batches == 2


def test_a_model_process_that_cannot_load_says_why(monkeypatch, tmp_path):
    from harness.models import embedder as E

    with pytest.raises(RuntimeError, match="the embedding model did not load"):
        MiniLMProcess(lambda: tmp_path / "no-such-model").load()


def test_a_model_process_that_dies_is_started_again_or_is_an_error_never_a_hang(monkeypatch):
    from harness.models import embedder as E

    proc = MiniLMProcess(E.model_dir)
    proc.load()
    proc._proc.kill()
    proc._proc.wait()
    assert proc.encode(["hello"]).shape == (1, 384)  # dead between batches: started again
    proc._proc.kill()
    proc._proc.wait()
    monkeypatch.setattr(proc, "load", lambda: None)  # dead during a batch
    with pytest.raises(RuntimeError, match="the embedding model process failed"):
        proc.encode(["hello"])
    proc.close()


# -- issue 26 item 4: a text asked for again is not encoded again --------------------------------

async def test_the_service_answers_a_text_it_has_seen_from_memory_with_the_same_vector():
    from harness.models.factories import EmbedderService

    service = EmbedderService(hash_embedder(None, max_wait_s=0.02))
    plain = hash_embedder(None)
    # two callers at once share a text: it is encoded once, while in flight
    a, b = await asyncio.gather(service.embed(["a reply", "a claim", "a reply"]), service.embed(["a claim", "new"]))
    want = await plain.embed(["a reply", "a claim", "new"])
    assert (a[0] == want[0]).all() and (a[1] == want[1]).all() and (a[2] == want[0]).all()
    assert (b[0] == want[1]).all() and (b[1] == want[2]).all()
    assert service.stats.texts_encoded == 3
    again = await service.embed(["new", "a reply"])  # later: from memory, the model not asked
    assert service.stats.texts_encoded == 3 and (again[0] == want[2]).all() and service.memory_hits >= 3
    assert service.report_models()["embedder_stats"]["memory_hits"] == service.memory_hits
    assert (await service.embed([])).shape == (0, 256)
    # the twin: without memory every text goes to the model
    bare = EmbedderService(hash_embedder(None), memory=0)
    await bare.embed(["x"])
    await bare.embed(["x"])
    assert bare.stats.texts_encoded == 2 and bare.memory_hits == 0


async def test_a_failed_encode_reaches_every_caller_and_is_not_remembered():
    from harness.models.embedder import BatchingFront
    from harness.models.factories import EmbedderService

    calls = []

    def flaky(texts):
        calls.append(list(texts))
        if len(calls) == 1:
            raise RuntimeError("model exploded")
        import numpy as np
        return np.ones((len(texts), 4), dtype=np.float32) / 2

    service = EmbedderService(BatchingFront(flaky, name="flaky@0", source="test-double", dim=4))
    results = await asyncio.gather(service.embed(["a"]), service.embed(["a"]), return_exceptions=True)
    assert all(isinstance(r, RuntimeError) for r in results)
    assert (await service.embed(["a"])).shape == (1, 4) and len(calls) == 2  # asked again, not a stale error
