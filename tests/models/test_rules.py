"""Every rule of the offline critic against its twins: for each rule module's TWINS table, the
wrong claim must be flagged by its rule and the right twin must not. A rule that flags
everything fails here as surely as one that flags nothing; a rule without twins fails too."""

from __future__ import annotations

import pytest

from harness.models import claims as C
from harness.models import rules
from harness.models.rules.pair import REGISTRY, SourceIndex, Twin, pair
from harness.models.rules.text import _STOP, stem

TWINS = [(module.__name__.rsplit(".", 1)[-1], twin) for module in rules.MODULES for twin in module.TWINS]


def _aligned(claim: str, index: SourceIndex) -> list[int]:
    """Every source sentence, the ones sharing most content words with the claim first (the
    critic aligns by embeddings; a twin says its sentences when word overlap would not)."""
    mine = {stem(w) for w in C._WORD.findall(claim) if w.lower() not in _STOP}
    return sorted(range(len(index.sentences)), key=lambda k: (-len(mine & index.stems[k]), k))


def _findings(twin: Twin, claim: str):
    index = SourceIndex(C.sentences(twin.source), C.names(twin.source))
    aligned = list(twin.aligned) if twin.aligned is not None else _aligned(claim, index)[:3]
    return REGISTRY[twin.rule](pair(claim, index, aligned))


@pytest.mark.parametrize("module,twin", TWINS, ids=[f"{m}:{t.rule}:{t.wrong[:40]}" for m, t in TWINS])
def test_the_rule_flags_the_wrong_twin_and_passes_the_right_one(module, twin):
    assert twin.rule in REGISTRY, f"{module}: twin for unknown rule {twin.rule!r}"
    assert twin.wrong != twin.right
    assert _findings(twin, twin.wrong), f"{twin.rule} missed: {twin.wrong!r} ({twin.note})"
    found = _findings(twin, twin.right)
    assert not found, f"{twin.rule} flagged the right twin {twin.right!r}: {found[0].what}"


def test_every_rule_has_twins_in_its_own_module():
    for module in rules.MODULES:
        mine = {r.name for r in REGISTRY.values() if r.check.__module__ == module.__name__}
        assert mine <= {t.rule for t in module.TWINS}, f"{module.__name__}: rules without twins"
        assert {t.rule for t in module.TWINS} <= mine, f"{module.__name__}: twins of another module's rule"
    assert set(REGISTRY) == set(rules.ORDER) | set(rules.REFUSAL_RULES)


def test_every_rule_says_what_it_claims():
    for r in REGISTRY.values():
        assert len(r.claims.split()) >= 8, f"{r.name}: its check needs a docstring saying what it claims"


def test_the_version_is_derived_from_the_rules(monkeypatch):
    from harness.models.critic_offline import VERSION, OfflineCritic
    from harness.models.embedder import hash_embedder

    assert VERSION == rules.version() and VERSION.startswith(f"{rules.RULES_VERSION}.")
    assert f"@{VERSION}+" in OfflineCritic(hash_embedder()).name
    before = rules.version()
    monkeypatch.setitem(REGISTRY, "a-new-rule", REGISTRY["rank"])
    assert rules.version() != before  # a rule added is a new version, without a hand bump


# -- what the twin tables cannot say: parsing, and cases with no wrong twin ------------------------

def _index(text: str) -> SourceIndex:
    return SourceIndex(C.sentences(text), C.names(text))


def test_refusals_in_plain_wording_and_what_follows_them():
    from harness.models.rules.refusals import refusal_topic, split_refusal

    for text in ("That question isn't answered anywhere in it.", "Nothing in the text answers that question.",
                 "No heat pump brands are named in the article.", "It never names a make of heat pump.",
                 "Dogs are never mentioned."):
        assert refusal_topic(text) is not None, text
    for text in ("Children were not included.", "The trial did not include children.",
                 "Children were not given nets by the clinics."):
        assert refusal_topic(text) is None, text
    parts = split_refusal("The document doesn't say which species; it measures how much cooler streets were.")
    assert parts == ["The document doesn't say which species", "It measures how much cooler streets were."]
    assert split_refusal("Streets were cooler; trees cast shade.") == ["Streets were cooler; trees cast shade."]


def test_abbreviations_spelled_out_by_initials():
    from harness.models.critic_offline import _spelled_out
    from harness.models.rules.pair import initials

    found = initials("Earnings before interest, taxes, depreciation and amortisation rose. Six cells of "
                     "2.5 ampere-hours were built.")
    assert _spelled_out("ebitda", set(), found)
    assert not _spelled_out("ebit", set(), "") and not _spelled_out("xqz", set(), found)


def test_claims_a_lead_and_a_short_sentence_make():
    assert C.claims("- Cheaper than LFP: 38 versus 61 dollars per kilowatt-hour") == [
        "Cheaper than LFP: 38 versus 61 dollars per kilowatt-hour"]
    assert C.claims("Key finding: crossings took 12 percent longer.") == ["crossings took 12 percent longer."]
    assert C.claims("Children were included.") == ["Children were included."]
    assert C.claims("Hello there, friend!") == []  # no verb of being or having: a greeting, not a claim


def test_words_in_any_alphabet_are_whole_words():
    from harness.models.rules.text import tokenize

    toks = [t.text for t in tokenize("a concert by the violinist Zoë Müller and the cellist Søren Ærø in Tromsø")]
    assert "Zoë" in toks and "Müller" in toks and "Ærø" in toks and "Tromsø" in toks
    assert {"zoë", "müller", "søren", "ærø"} <= C.names("Then the violinist Zoë Müller met Søren Ærø.")
    assert "zoe" in C.names("Then the violinist Zoe Muller played.") - C.names("Then the violinist Zoë Müller played.")


def test_what_clears_a_rule():
    from harness.models.rules.antonyms import check_opposite_word
    from harness.models.rules.moves import check_moves
    from harness.models.rules.negation import check_only_negated
    from harness.models.rules.roles import check_title_swap
    from harness.models.rules.text import tokenize

    # a word the source uses in some form clears it, whatever else it says
    assert not check_opposite_word("Cold air sank.", _index("Cold nights followed hot days."))
    # said plainly somewhere too: both ways, no verdict
    both = _index("The switch was not easy to plan. Charging was easy once the cables were in.")
    assert not check_only_negated("Electric ferries work, but they are easy.", both)
    # a title the source gives nobody else is not a swap (a paraphrase may add one)
    src = _index("The ferry company hired the engineer Ada Lund and the captain Piotr Nowak in March.")
    assert not check_title_swap(tokenize("The company hired the specialist Ada Lund."), src)
    # an amount, not a level: "saved 18 euros" moves nothing
    assert not check_moves(tokenize("Travellers saved 18 euros."), _index("The average fare was 18 euros, down "
                                                                            "from 21 euros in 2023."))
