"""The fact extractor and the claim alignment (checks/baseline/facts.py)."""

from __future__ import annotations

import pytest

from harness.checks.baseline import facts as F


@pytest.mark.parametrize("text, numbers, years, dates", [
    ("Pain fell by 12.5% in 2023.", {"12.5|percent"}, {"2023"}, set()),
    ("Pain fell by 12.50 percent in 2023.", {"12.5|percent"}, {"2023"}, set()),
    ("Pain fell by 12.5 per cent.", {"12.5|percent"}, set(), set()),
    ("Turnout fell 4 percentage points.", {"4|pp"}, set(), set()),
    ("It cost $3.5 million to build.", {"3.5|usd million"}, set(), set()),
    ("About 1,200 people took part.", {"1200|"}, set(), set()),
    ("About 1200 people took part.", {"1200|"}, set(), set()),
    ("The track is 40 km long.", {"40|km"}, set(), set()),
    ("The track is 40 miles long.", {"40|mile"}, set(), set()),
    ("It ran for five years.", {"5|year"}, set(), set()),
    ("Published on March 5 and again on 2024-03-06.", set(), {"2024"}, {"03-05", "03-06"}),
    ("Published on 5 March.", set(), set(), {"03-05"}),
    ("120 participants joined.", {"120|"}, set(), set()),
    ("120 subjects joined.", {"120|"}, set(), set()),  # a noun is no unit: a synonym changes nothing
])
def test_numbers_units_years_dates(text, numbers, years, dates):
    got_numbers, got_years, got_dates, _ = F.extract(text)
    assert (set(got_numbers), set(got_years), set(got_dates)) == (numbers, years, dates)


@pytest.mark.parametrize("text, hedged", [
    ("The drug may reduce pain.", True),
    ("The drug might reduce pain.", True),
    ("The results suggest the drug works.", True),
    ("The drug reduces pain by about 30%.", True),
    ("The drug reduces pain by up to 30%.", True),
    ("The drug reduces pain.", False),
    ("The drug reduces pain by 30%.", False),
    ("The paper is about sleep.", False),  # "about" hedges a number, not a topic
])
def test_hedges(text, hedged):
    assert F.claim(text).hedged is hedged


@pytest.mark.parametrize("text, direction", [
    ("Emissions rose sharply.", {"up"}),
    ("Emissions increased sharply.", {"up"}),
    ("Emissions fell sharply.", {"down"}),
    ("The drug may lower pain.", {"down"}),
    ("The drug may reduce pain.", {"down"}),
    ("The sky is blue today.", set()),
])
def test_direction(text, direction):
    assert set(F.claim(text).direction) == direction


def test_negation_counts():
    assert F.claim("Results were not significant for children.").negations == 1
    assert F.claim("Results were significant for children.").negations == 0


def test_alignment_pairs_paraphrases_one_to_one():
    base = F.reply_claims("The study of 1,200 adults found that pain fell by 12%. Results were not significant "
                          "for children. Costs rose to $3.5 million in 2023.")
    para = F.reply_claims("Costs rose to $3.5 million in 2023. In short, the research of 1200 adults reported that "
                          "pain fell by 12%. Findings were not notable for children.")
    pairs = F.align(base, para)
    assert pairs == {0: 1, 1: 2, 2: 0}


def test_alignment_leaves_unrelated_claims_unpaired():
    base = F.reply_claims("The study of 1,200 adults found that pain fell by 12%.")
    other = F.reply_claims("Bees visit flowers in the early morning hours.")
    assert F.align(base, other) == {}


def test_a_lead_in_after_a_colon_is_no_name():
    assert F.extract("The document says: Put simply, it kept 91 percent of Oslo's capacity.")[3] == {"oslo"}
    assert F.mid_sentence_names("The document says: Put simply, it kept 91 percent.") == frozenset()


def test_times_and_fractions_are_one_number():
    assert F.extract("Buses leave at 10:00 on 3/4 of the routes.")[0] == {"10|", "3|"}
