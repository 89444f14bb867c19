"""Judge health: Cohen's kappa with known values, and the labelled set scored end to end."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import FixtureErrors
from harness.models import critic_health as H
from harness.models.critic_health import Agreement, cohen_kappa, describe, load_examples, score_critic
from harness.models.critic_offline import OfflineCritic
from harness.models.embedder import hash_embedder

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("tp,fp,fn,tn,expected", [
    (20, 5, 10, 15, 0.4),        # textbook example: po 0.7, pe 0.5
    (10, 0, 0, 10, 1.0),          # perfect agreement on both labels
    (0, 10, 10, 0, -1.0),         # perfect disagreement
    (45, 15, 25, 15, 0.1304),     # po 0.6, pe 0.54
])
def test_kappa_known_values(tp, fp, fn, tn, expected):
    assert cohen_kappa(tp, fp, fn, tn) == pytest.approx(expected, abs=1e-4)


@pytest.mark.parametrize("tp,fp,fn,tn", [(10, 0, 0, 0), (0, 0, 0, 7), (0, 0, 0, 0)])
def test_kappa_undefined_is_none_not_one(tp, fp, fn, tn):
    # everyone said the same single label: chance agreement is 1, kappa is undefined
    assert cohen_kappa(tp, fp, fn, tn) is None
    a = Agreement(tp=tp, fp=fp, fn=fn, tn=tn)
    assert a.as_dict()["kappa"] is None and a.as_dict()["kappa_defined"] is False
    if a.decided:
        assert "undefined" in describe("c@1", a)


def test_the_labelled_set_has_40_examples_both_ways():
    examples = load_examples(ROOT / "golden" / "critic")
    assert len(examples) >= 40
    assert sum(e.verdict for e in examples) >= 15 and sum(not e.verdict for e in examples) >= 15


def test_bad_health_file_is_a_fixture_error(tmp_path):
    (tmp_path / "bad.yaml").write_text("examples:\n  - reply: x\n    verdict: maybe\n    source_text: y\n")
    with pytest.raises(FixtureErrors, match="verdict true|false"):
        load_examples(tmp_path)


async def test_score_critic_counts_agreement(tmp_path):
    (tmp_path / "h.yaml").write_text(
        "examples:\n"
        "  - {source_text: 'The bridge opens in 2028 and costs 18 million.', reply: 'The bridge opens in 2028.', verdict: true}\n"
        "  - {source_text: 'The bridge opens in 2028 and costs 18 million.', reply: 'The bridge opens in 2031.', verdict: false}\n")
    a = await score_critic(OfflineCritic(hash_embedder()), load_examples(tmp_path), lambda n: "")
    assert (a.tp, a.tn, a.fp, a.fn) == (1, 1, 0, 0) and a.accuracy == 1.0


def test_the_labelled_set_has_120_examples_of_every_kind():
    examples = load_examples(ROOT / "golden" / "critic")
    assert len(examples) >= 120
    share = sum(e.verdict for e in examples) / len(examples)
    assert 0.35 <= share <= 0.55
    notes = " ".join(e.note for e in examples)
    for kind in ("number-digit", "number-scaled", "number-swap", "polarity-direction", "polarity-negation",
                 "entity-swap", "entity-replaced", "invented", "date", "headline", "paraphrase"):
        assert kind in notes, kind


def test_accuracy_all_counts_undecided_as_wrong():
    a = Agreement(tp=8, tn=8, fp=1, fn=1, undecided=2, undecided_true=1)
    d = a.as_dict()
    assert d["examples"] == 20 and d["undecided"] == 2
    assert d["accuracy"] == pytest.approx(16 / 18, abs=1e-4) and d["accuracy_all"] == pytest.approx(0.8)
    assert d["kappa"] == pytest.approx(cohen_kappa(8, 1, 1, 8), abs=1e-4)
    assert d["kappa_all"] == pytest.approx(cohen_kappa(8, 2, 2, 8), abs=1e-4)
    assert "over all 20 examples" in describe("c@1", a)


def test_a_hostile_health_file_is_refused_with_its_line(tmp_path):
    import time

    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(8)) + "examples: *i\n"
    (tmp_path / "bomb.yaml").write_text(bomb)
    (tmp_path / "dup.yaml").write_text("examples:\n- reply: 'a b c d'\n  reply: 'e f g h'\n  verdict: true\n"
                                       "  source_text: 'a b c d'\n")
    started = time.process_time()  # CPU seconds: an expanded bomb burns them; a busy machine does not add any
    with pytest.raises(FixtureErrors) as info:
        load_examples(tmp_path)
    assert time.process_time() - started < 5
    text = info.value.render()
    assert "bomb.yaml" in text and "dup.yaml" in text and "lines 2 and 3" in text


# -- issue 26: the health set judged in shared batches, kept by content for a deterministic critic --

def _health_set(tmp_path, reply="The river rose by 3 metres."):
    (tmp_path / "docs").mkdir(exist_ok=True)
    (tmp_path / "docs" / "river.txt").write_text("The river rose by 3 metres in the spring flood.\n")
    (tmp_path / "critic").mkdir(exist_ok=True)
    (tmp_path / "critic" / "set.yaml").write_text(
        "examples:\n"
        f"  - {{reply: {reply!r}, source: river.txt, verdict: true}}\n"
        "  - {reply: 'The river fell by 9 metres.', source: river.txt, verdict: false}\n")


class _Counting:
    """A deterministic critic that counts what it is asked."""

    deterministic = True
    name = "counting@1"
    source = "test-double"

    def __init__(self):
        self.calls = 0
        self.running = 0
        self.most = 0

    async def factuality(self, source, reply):
        import asyncio

        from harness.models.critic import ClaimVerdict, Judgement

        self.calls += 1
        self.running += 1
        self.most = max(self.most, self.running)
        await asyncio.sleep(0)
        self.running -= 1
        ok = "3 metres" in reply
        return Judgement(1.0 if ok else 0.0, "", claims=(ClaimVerdict(reply, ok, ""),))


def _service(tmp_path, backend, cache=True):
    from harness.models.factories import CriticService

    service = CriticService(backend, tmp_path / "docs", tmp_path / "critic",
                            cache_dir=(tmp_path / "cache") if cache else None)
    service.used = True  # a case asked the critic something (a run whose cases did not scores no health)
    return service


def test_the_health_set_is_judged_side_by_side_in_the_examples_order(tmp_path):
    import asyncio

    _health_set(tmp_path)
    critic = _Counting()
    a = asyncio.run(H.score_critic(critic, H.load_examples(tmp_path / "critic"),
                                   lambda name: (tmp_path / "docs" / name).read_text()))
    assert (a.tp, a.tn, a.fp, a.fn) == (1, 1, 0, 0) and critic.most == 2
    one = _Counting()
    asyncio.run(H.score_critic(one, H.load_examples(tmp_path / "critic"),
                               lambda name: (tmp_path / "docs" / name).read_text(), concurrent=1))
    assert one.most == 1


def test_a_deterministic_critics_health_is_kept_by_content_and_scored_again_when_anything_changes(tmp_path):
    import asyncio

    _health_set(tmp_path)
    first = _service(tmp_path, _Counting())
    asyncio.run(first.finalize())
    assert first.backend.calls == 2 and "kept" not in first.health_line
    again = _service(tmp_path, _Counting())  # the next night: the same code, examples, documents
    asyncio.run(again.finalize())
    assert again.backend.calls == 0 and again.health == first.health and "kept from an earlier run" in again.health_line
    (tmp_path / "docs" / "river.txt").write_text("The river rose by 4 metres in the spring flood.\n")
    changed = _service(tmp_path, _Counting())  # a document changed: scored again
    asyncio.run(changed.finalize())
    assert changed.backend.calls == 2
    _health_set(tmp_path, reply="The river rose by 3 metres, a record.")  # an example changed
    edited = _service(tmp_path, _Counting())
    asyncio.run(edited.finalize())
    assert edited.backend.calls == 2


def test_a_critic_that_may_answer_otherwise_is_always_scored(tmp_path):
    import asyncio

    _health_set(tmp_path)
    llm = _Counting()
    llm.deterministic = False  # an LLM critic
    for _ in range(2):
        svc = _service(tmp_path, llm)
        asyncio.run(svc.finalize())
    assert llm.calls == 4
    nocache = _Counting()
    for _ in range(2):
        asyncio.run(_service(tmp_path, nocache, cache=False).finalize())
    assert nocache.calls == 4
