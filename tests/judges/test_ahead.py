"""harness judges sends what its verdicts will embed ahead (judges/ahead.py): the verdicts are
the same as without it, and the requests foresee the texts the checks embed."""

import asyncio
import json

from harness.judges import ahead as A
from harness.judges import run as R
from harness.judges.cache import VerdictCache
from tests.judges.test_judges_run import _judge, options, setup


def _figures(path):
    data = json.loads(path.read_text())
    return {k: data[k] for k in ("kinds", "goldens", "cases", "golden_failures", "thresholds", "health_detail")}


def test_the_verdicts_are_the_same_without_the_requests_ahead(tmp_path, monkeypatch):
    config = setup(tmp_path)
    asyncio.run(_judge(config, options(tmp_path, "ahead", use_cache=False)))
    monkeypatch.setattr(R, "_ahead", lambda *a, **k: [])
    asyncio.run(_judge(config, options(tmp_path, "plain", use_cache=False)))
    assert _figures(tmp_path / "ahead" / "judges.json") == _figures(tmp_path / "plain" / "judges.json")


def test_the_requests_ahead_hold_every_text_the_checks_embed(tmp_path, monkeypatch):
    config = setup(tmp_path)
    sent: list[str] = []
    encoded: list[str] = []
    send = A.send

    async def recording_send(embedder, texts):
        sent.extend(texts.cached)
        sent.extend(texts.plain)
        front = embedder.front
        if not hasattr(front, "_recorded"):  # every text the model encodes, ahead or not
            encode = front._encode
            front._encode = lambda batch: (encoded.extend(batch), encode(batch))[1]
            front._recorded = True
        await send(embedder, texts)

    monkeypatch.setattr(A, "send", recording_send)
    asyncio.run(_judge(config, options(tmp_path, use_cache=False)))
    assert sent and encoded
    # what the requests did not send is the health set's (the critic's own request, score_critic)
    health = {"The trial reduced symptoms by 30 percent.", "The trial reduced symptoms by 60 percent."}
    assert {t for t in encoded if t not in sent} <= health
    judged = [t for t in encoded if t in sent]
    assert len(judged) == len(set(judged))  # nothing the requests sent was encoded twice


def test_groups_cut_in_order_and_send_each_text_once():
    per_case = []
    for k in range(5):
        t = A.Texts()
        t.add([f"claim {k}", "shared claim"])
        t.add([f"golden {k}"], cached=True)
        per_case.append(t)
    last = A.Texts()
    last.add(["claim 0", "a mutation", " "])
    out = A.groups(per_case, last, size=6)
    flat = [x for g in out for x in (*g.cached, *g.plain)]
    assert len(flat) == len(set(flat))
    assert flat.count("shared claim") == 1 and "a mutation" in out[-1].plain and " " not in flat
    assert [len(g) for g in out] == [7, 5]  # 3, then 2 a case (the shared claim sent once): cut at 6 or more


def test_a_cache_without_a_folder_answers_nothing():
    cache = VerdictCache(None)  # --no-cache: every verdict judged, even one this run judged already
    cache.put("k", {"passed": True})
    assert cache.get("k") is None and not cache.has("k")
    assert (cache.hits, cache.misses) == (0, 1)


def test_has_does_not_count(tmp_path):
    cache = VerdictCache(tmp_path)
    cache.put("k", 1)
    assert cache.has("k") and not cache.has("other")
    assert (cache.hits, cache.misses) == (0, 0)
    assert cache.get("k") == 1 and cache.hits == 1
