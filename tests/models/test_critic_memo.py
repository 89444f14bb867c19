"""The offline critic's memoized readings: a changed input is never answered from the memo, and
what a caller gets back is its own (changing it changes nothing the next caller reads)."""

from __future__ import annotations

import dataclasses

import pytest

from harness.models import claims as C
from harness.models import critic_offline as CO
from harness.models.critic_offline import OfflineCritic
from harness.models.embedder import hash_embedder
from harness.models.rules.antonyms import check_opposite_word
from harness.models.rules.pair import SourceIndex
from harness.models.rules.text import stem, tokenize, word_keys

SOURCE = "The trial reduced symptoms by 30 percent in 240 adults. It was funded by the Lindqvist Trust."
CHANGED = "The trial reduced symptoms by 35 percent in 240 adults. It was funded by the Lindqvist Trust."


def test_tokenize_hands_each_caller_its_own_list_of_frozen_tokens():
    first = tokenize("Prices rose 9 percent.")
    first.append(first[0])
    first.clear()
    again = tokenize("Prices rose 9 percent.")
    assert [t.low for t in again] == ["prices", "rose", "9", "percent", "."]
    with pytest.raises(dataclasses.FrozenInstanceError):
        again[0].low = "costs"
    assert [t.low for t in tokenize("Prices rose 9 percent.")][0] == "prices"
    assert [t.value for t in tokenize("Prices rose 8 percent.") if t.kind == "num"] == ["8"]


def test_sentences_and_numbers_of_a_changed_text_are_read_again():
    s = C.sentences(SOURCE)
    s.append("an extra sentence of my own")
    assert C.sentences(SOURCE) == ["The trial reduced symptoms by 30 percent in 240 adults.",
                                   "It was funded by the Lindqvist Trust."]
    assert C.sentences(CHANGED)[0].endswith("by 35 percent in 240 adults.")
    nums = C.source_numbers(SOURCE)
    nums.add("999")
    assert C.source_numbers(SOURCE) == {"30", "240"}
    assert C.source_numbers(CHANGED) == {"35", "240"}
    found = C.claim_numbers("five of 30 adults")
    found.discard("30")
    assert C.claim_numbers("five of 30 adults") == {"5", "30"}
    assert C.claim_numbers("six of 30 adults") == {"6", "30"}


def test_word_readings_follow_the_word():
    assert stem("Reminders") == "remin" and stem("Trial") == "trial"
    assert "syn0" in word_keys("obstacles") and "syn0" not in word_keys("obstinate")
    assert isinstance(word_keys("risks"), frozenset)


def test_opposite_words_are_read_off_each_source_index_not_another():
    hot = SourceIndex(C.sentences("The streets felt hot at noon. Shade made them cooler."), set())
    cold = SourceIndex(C.sentences("The streets felt cold at noon. Shade made them warmer."), set())
    assert check_opposite_word("The streets were cold.", hot)  # the source only says hot
    assert not check_opposite_word("The streets were cold.", cold)
    assert check_opposite_word("The streets were hot.", cold)


async def test_a_changed_source_is_read_again_not_answered_from_the_kept_reading():
    critic = OfflineCritic(hash_embedder())
    claim = "The trial reduced symptoms by 30 percent in 240 adults."
    right = await critic.factuality(SOURCE, claim)
    wrong = await critic.factuality(CHANGED, claim)  # one digit of the source changed
    assert [c.supported for c in right.claims] == [True]
    assert [c.supported for c in wrong.claims] == [False] and "number 30" in wrong.claims[0].explanation
    again = await critic.factuality(SOURCE, claim)
    assert [c.supported for c in again.claims] == [True]
    assert critic._source(SOURCE) is critic._source(SOURCE)
    assert critic._source(SOURCE) is not critic._source(CHANGED)


async def test_the_kept_sources_are_bounded(monkeypatch):
    monkeypatch.setattr(CO, "SOURCES", 3)
    critic = OfflineCritic(hash_embedder())
    sources = [SOURCE.replace("240", str(n)) for n in range(241, 246)]
    for s in sources:
        j = await critic.factuality(s, f"The trial reduced symptoms by 30 percent in {s.split()[8]} adults.")
        assert [c.supported for c in j.claims] == [True]
    assert len(critic._sources) == 3 and list(critic._sources) == sources[-3:]


async def test_ahead_embeds_what_the_calls_will_and_their_verdicts_are_their_own():
    from harness.models.factories import EmbedderService

    embedder = EmbedderService(hash_embedder())  # the run's embedder: a text asked again is answered from memory
    critic = OfflineCritic(embedder)
    replies = ["The trial reduced symptoms by 30 percent in 240 adults. It was funded by the Lindqvist Trust.",
               "The trial reduced symptoms by 40 percent.", "Hello!"]
    await critic.ahead(factuality=[(SOURCE, r) for r in replies],
                       answers=[("About 30 percent.", "symptoms fell by 30 percent")])
    stats = embedder.stats
    encoded, batches = stats.texts_encoded, stats.batches
    assert encoded > 0 and batches <= 2  # one request per kind (disk-kept source sentences, the rest)
    ahead = [await critic.factuality(SOURCE, r) for r in replies]
    answer = await critic.answer("About 30 percent.", "symptoms fell by 30 percent")
    assert (stats.texts_encoded, stats.batches) == (encoded, batches)  # every text was foreseen
    cold = OfflineCritic(hash_embedder())
    assert [[c.supported for c in j.claims] for j in ahead] == \
        [[c.supported for c in (await cold.factuality(SOURCE, r)).claims] for r in replies]
    assert [j.explanation for j in ahead] == [(await cold.factuality(SOURCE, r)).explanation for r in replies]
    assert answer.score == (await cold.answer("About 30 percent.", "symptoms fell by 30 percent")).score
