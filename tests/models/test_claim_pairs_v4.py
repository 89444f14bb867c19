"""Critic v4 (issue 11): who did what, directions read two words deep and in headlines,
multiples, refusals in plain wording. Each wrong claim is paired with its right twin, so a
check that flags everything fails here as surely as one that flags nothing."""

from harness.models import claim_pairs as P
from harness.models import claims as C

NEWS = ("Lumen Foods Lifts Revenue 14 Percent but Cuts Margin Forecast on Cocoa Costs\n"
        "Revenue rose 14 percent to 2.31 billion euros in the third quarter. "
        "Chief executive Marta Lindgren said cocoa had cost the company 180 million euros more this year. "
        "Lindgren said the company would close two factories. "
        "Steel prices rose sharply in 2022, adding about 38 million pounds to the cost. "
        "The trial was funded by the Halvorsen Foundation under grant HF-2021-0457 and by the Nordic Youth "
        "Health Fund under grant NYHF-22-019. "
        "Restored marshes buried carbon at about 1.6 times the rate of natural marshes.")


def _index(text: str = NEWS) -> P.SourceIndex:
    return P.SourceIndex(C.sentences(text), C.names(text))


def test_a_name_given_what_the_source_says_of_something_else():
    src = _index()
    wrong = "Marta Lindgren sold 14 percent more in the third quarter."
    right = "Revenue rose 14 percent in the third quarter, and Marta Lindgren said cocoa cost 180 million euros more."
    assert P.check_name_facts(wrong, C.names(wrong, src.names), src)
    assert not P.check_name_facts(right, C.names(right, src.names), src)


def test_a_code_given_to_the_other_name_of_its_sentence():
    src = _index()
    assert P.check_code_binding("It was funded by the Halvorsen Foundation (grant NYHF-22-019).", src)
    assert not P.check_code_binding("It was funded by the Halvorsen Foundation (grant HF-2021-0457).", src)


def test_direction_bound_two_words_deep_and_in_headlines():
    sentences = C.sentences(NEWS)
    assert P.check_bound_direction("Delays came from falling steel prices and a shortage of welders.", sentences, sentences)
    assert not P.check_bound_direction("Delays came from rising steel prices and a shortage of welders.", sentences,
                                       sentences)
    head = [sentences[0]]
    assert P.check_bound_direction("Revenue grew, but it lifted its profit margin forecast because of cocoa.", head, head)
    assert not P.check_bound_direction("Revenue grew, but it cut its profit margin forecast because of cocoa.", head, head)


def test_a_multiple_above_one_is_more():
    src = _index()
    assert P.check_times("Restored marshes store carbon 1.6 times slower than natural ones.", src)
    assert not P.check_times("Restored marshes store carbon 1.6 times faster than natural ones.", src)


def test_refusals_in_plain_wording_and_what_follows_them():
    for text in ("That question isn't answered anywhere in it.", "Nothing in the text answers that question.",
                 "No heat pump brands are named in the article.", "It never names a make of heat pump.",
                 "Dogs are never mentioned."):
        assert P.refusal_topic(text) is not None, text
    for text in ("Children were not included.", "The trial did not include children.",
                 "Children were not given nets by the clinics."):
        assert P.refusal_topic(text) is None, text
    parts = P.split_refusal("The document doesn't say which species; it measures how much cooler streets were.")
    assert parts == ["The document doesn't say which species", "It measures how much cooler streets were."]
    assert P.split_refusal("Streets were cooler; trees cast shade.") == ["Streets were cooler; trees cast shade."]


def test_a_number_in_another_unit_of_its_kind():
    src = _index("Foraging trips lasted 52 minutes on average. Pollen held 5 nanograms per gram of the compound.")
    for wrong in ("Trips lasted 52 hours.", "Pollen held 5 micrograms per gram."):
        assert P.check_unit_words(P.tokenize(wrong), src), wrong
    for right in ("Trips lasted 52 minutes.", "Pollen held 5 nanograms per gram.", "Trips took 52 of them."):
        assert not P.check_unit_words(P.tokenize(right), src), right


def test_abbreviations_spelled_out_by_initials():
    from harness.models.critic_offline import _spelled_out

    initials = P.initials("Earnings before interest, taxes, depreciation and amortisation rose. Six cells of "
                         "2.5 ampere-hours were built.")
    assert _spelled_out("ebitda", set(), initials)
    assert not _spelled_out("ebit", set(), "") and not _spelled_out("xqz", set(), initials)
