"""The embedder's disk cache (issue 26 item 5): every text is kept, so a run whose texts were all
seen before never loads the model; the run's loopback addresses never make a text new; the folder
stays in bounds; the next run reads what this one needed of the model."""

from __future__ import annotations

import os
from types import SimpleNamespace

from harness.models import embedder as E
from harness.models.embedder import hash_embedder, last_run
from harness.types import without_run_addresses


async def test_every_text_is_kept_and_a_second_run_asks_the_model_nothing(tmp_path):
    first = hash_embedder(tmp_path)
    a = await first.embed(["a reply", "a claim of it"])
    await first.aclose()
    assert first.stats.texts_encoded == 2
    second = hash_embedder(tmp_path)
    b = await second.embed(["a reply", "a claim of it"])
    assert second.stats.texts_encoded == 0 and second.stats.cache_hits == 2 and (a == b).all()
    await second.aclose()
    assert last_run(tmp_path)["texts_encoded"] == 0
    # the twin: cache_all off (harness judges --no-cache) keeps only what asks for it
    cold = hash_embedder(tmp_path)
    cold.cache_all = False
    await cold.embed(["a reply"])
    await cold.embed(["a golden"], cache=True)
    assert cold.stats.texts_encoded == 2 and cold.stats.cache_hits == 0
    await cold.aclose()
    assert last_run(tmp_path)["texts_encoded"] == 2
    # work unlike a nightly (calibrate's regressions, judges' mutations) leaves the record alone
    other = hash_embedder(tmp_path)
    other.record = False
    await other.embed(["a mutated reply"])
    await other.aclose()
    assert last_run(tmp_path)["texts_encoded"] == 2


def test_the_runs_loopback_ports_and_document_folders_are_written_alike():
    a = "See the report. Source: http://127.0.0.1:43813/c/2d252d28f360/news-heatpumps.html"
    b = "See the report. Source: http://127.0.0.1:42671/c/1cf6ee98eeac/news-heatpumps.html"
    assert without_run_addresses(a) == without_run_addresses(b) == \
        "See the report. Source: http://127.0.0.1/c/*/news-heatpumps.html"
    assert without_run_addresses("http://localhost:8080/x") == "http://localhost/x"
    # the twins: not loopback, no port, another file: unchanged, or still told apart
    for text in ("https://example.com:8443/c/2d252d28f360/a.pdf", "http://127.0.0.1/c/abc/a.pdf",
                 "port 127.0.0.1:80 in prose", "no link at all"):
        assert without_run_addresses(text) == text
    assert without_run_addresses(a) != without_run_addresses(a.replace("heatpumps", "floods"))


async def test_a_reply_citing_its_document_is_a_cache_hit_on_the_next_night(tmp_path):
    night1 = hash_embedder(tmp_path)
    v1 = await night1.embed(["Summary. Source: http://127.0.0.1:43813/c/2d252d28f360/a.pdf"])
    night2 = hash_embedder(tmp_path)
    v2 = await night2.embed(["Summary. Source: http://127.0.0.1:42671/c/1cf6ee98eeac/a.pdf"])
    assert night2.stats.cache_hits == 1 and night2.stats.texts_encoded == 0 and (v1 == v2).all()
    await night2.embed(["Summary. Source: http://127.0.0.1:42671/c/1cf6ee98eeac/b.pdf"])
    assert night2.stats.texts_encoded == 1  # another document: a new text


async def test_the_folder_keeps_the_most_recently_used_vectors(tmp_path):
    front = hash_embedder(tmp_path)
    await front.embed([f"text {i}" for i in range(12)])
    cache = front._cache
    files = sorted((tmp_path / "embeddings").rglob("*.npy"))
    assert len(files) == 12
    for i, path in enumerate(files):  # make their ages known: the first written is the oldest
        os.utime(path, (1_000_000 + i, 1_000_000 + i))
    hit = cache._path("text 3")
    assert hit.exists()
    assert cache.get("text 3") is not None  # a hit makes it the newest
    assert cache.prune(keep=5) == 7
    left = set((tmp_path / "embeddings").rglob("*.npy"))
    assert len(left) == 5 and hit in left
    assert cache.prune(keep=5) == 0


def test_last_run_refuses_a_record_it_cannot_read(tmp_path):
    (tmp_path / "embeddings").mkdir()
    record = tmp_path / "embeddings" / E.LAST_RUN
    assert last_run(tmp_path) is None and last_run(None) is None
    for body in ("not json", "[]", '{"texts_encoded": "0", "cache_hits": 1}', '{"texts_encoded": true, "cache_hits": 1}'):
        record.write_text(body)
        assert last_run(tmp_path) is None, body
    record.write_text('{"texts_encoded": 0, "cache_hits": 7}')
    assert last_run(tmp_path) == {"texts_encoded": 0, "cache_hits": 7}


async def test_the_model_is_loaded_ahead_only_when_the_last_run_needed_it(tmp_path, monkeypatch):
    from harness.models import factories
    from harness.run import warm

    said = []
    made = SimpleNamespace(config=object(), say=said.append)
    records = {"none": None, "all cached": {"texts_encoded": 0, "cache_hits": 9},
               "some new": {"texts_encoded": 3, "cache_hits": 9}}
    for name, record in records.items():
        monkeypatch.setattr(factories.S, "cache_dir", lambda config: tmp_path)
        monkeypatch.setattr("harness.models.embed_cache.last_run", lambda cache_dir, record=record: record)
        assert factories.model_needed_last_run(made.config) is (name != "all cached"), name
        assert warm._model_needed_last_run(made) is (name != "all cached")


async def test_a_model_loaded_for_a_batch_says_so_once():
    from harness.models.embedder import BatchingFront

    loads, said = [], []
    front = BatchingFront(lambda texts: E._hash_encode(texts, 8), name="t@0", source="test-double", dim=8,
                          load=lambda: loads.append(1))
    front.on_load = said.append
    await front.embed(["a", "b"])
    await front.embed(["c"])
    assert loads == [1] and said == [2]
