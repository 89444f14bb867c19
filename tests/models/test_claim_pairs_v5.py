"""Critic v5 (issue 11): a direction word read anywhere in the source when its pair is its own,
levels a number moved to, comparisons against their own figures, and the claims a lead before a
colon makes. Each wrong claim is paired with its right twin, so a check that flags everything
fails here as surely as one that flags nothing. The sources are written here, not the suite's."""

from harness.models import claim_pairs as P
from harness.models import claims as C

SOURCE = ("Slower ferries were the main complaint of islanders this winter: storms cancelled 40 sailings. "
          "Each crossing took on average 12 percent longer, 74 minutes against 66 minutes. "
          "The average fare was 18 euros, down from 21 euros in 2023. "
          "Passenger numbers rose from 1.2 million to 1.5 million. "
          "Harbour fees climbed to 9 euros a ton. "
          "Diesel cost 1.4 euros a litre, compared with 1.9 euros for the electric ferry's power.")


def _index(text: str = SOURCE) -> P.SourceIndex:
    return P.SourceIndex(C.sentences(text), C.names(text))


def test_a_pair_of_its_own_is_read_anywhere_in_the_source():
    sentences = C.sentences(SOURCE)
    aligned = [sentences[1]]  # the sentence the claim is closest to says nothing of speed
    assert P.check_bound_direction("Faster ferries (crossings 12 percent longer)", aligned, sentences)
    assert not P.check_bound_direction("Slower ferries (crossings 12 percent longer)", aligned, sentences)


def test_the_level_a_number_moved_to():
    src = _index()
    for wrong, right in (("The average fare rose to 18 euros.", "The average fare fell to 18 euros."),
                         ("Passenger numbers fell to 1.5 million.", "Passenger numbers grew to 1.5 million."),
                         ("Harbour fees dropped to 9 euros a ton.", "Harbour fees increased to 9 euros a ton.")):
        assert P.check_moves(P.tokenize(wrong), src), wrong
        assert not P.check_moves(P.tokenize(right), src), right
    # a claim against its own figures
    assert P.check_moves(P.tokenize("Passenger numbers fell from 1.2 million to 1.5 million."), _index("Nothing here."))
    assert not P.check_moves(P.tokenize("Passenger numbers rose from 1.2 million to 1.5 million."), _index("Nothing."))
    # an amount, not a level: "saved 18 euros" moves nothing
    assert not P.check_moves(P.tokenize("Travellers saved 18 euros."), src)


def test_a_comparison_against_its_own_figures():
    assert P.check_versus(P.tokenize("Dearer than power for the electric ferry: 1.4 versus 1.9 euros a litre"))
    assert not P.check_versus(P.tokenize("Cheaper than power for the electric ferry: 1.4 versus 1.9 euros a litre"))
    assert P.check_versus(P.tokenize("Crossings were shorter than last year, 74 against 66 minutes."))
    assert not P.check_versus(P.tokenize("Crossings were longer than last year, 74 against 66 minutes."))


def test_a_comparing_lead_stays_with_its_figures():
    assert C.claims("- Cheaper than LFP: 38 versus 61 dollars per kilowatt-hour") == [
        "Cheaper than LFP: 38 versus 61 dollars per kilowatt-hour"]
    assert C.claims("Key finding: crossings took 12 percent longer.") == ["crossings took 12 percent longer."]


def test_a_short_sentence_with_a_verb_is_a_claim():
    assert C.claims("Children were included.") == ["Children were included."]
    assert C.claims("Hello there, friend!") == []  # no verb of being or having: a greeting, not a claim


def test_a_weather_word_the_source_never_uses_where_it_uses_the_opposite():
    src = _index("Streets with trees felt 4 degrees cooler during the heatwave, when pavements were hot to touch.")
    assert P.check_opposite_word("On cold days, streets with trees feel cooler.", src)
    assert not P.check_opposite_word("On hot days, streets with trees feel cooler.", src)
    assert P.check_opposite_word("Tree-lined streets were 4 degrees warmer.", src)  # "warm" in no form, "cool" in one
    # a word the source uses in some form clears it, whatever else it says
    assert not P.check_opposite_word("Cold air sank.", _index("Cold nights followed hot days."))


def test_a_quality_the_source_only_ever_denies():
    src = _index("The switch to electric ferries was not easy to plan. Crews needed new training.")
    assert P.check_only_negated("Electric ferries work, but they are easy.", src)
    assert not P.check_only_negated("Electric ferries work, but they are not easy.", src)
    # said plainly somewhere too: both ways, no verdict from this check
    both = _index("The switch was not easy to plan. Charging was easy once the cables were in.")
    assert not P.check_only_negated("Electric ferries work, but they are easy.", both)


def test_a_refusal_checked_by_word_forms_and_plain_synonyms():
    src = _index("Crews took five soundings of 40 metres depth at each pier. The ferry lost 12 percent of the "
                 "freight it carried to damage.")
    topic = P.refusal_topic("The review doesn't give a figure for how much carried freight is lost to damage.")
    assert topic is not None and P.check_refusal(topic, src)
    assert P.check_refusal(P.refusal_topic("The paper doesn't say how deep the soundings were."), src)
    # what the source really does not say stays a fair refusal
    assert not P.check_refusal(P.refusal_topic("The paper doesn't say what the soundings cost."), src)
    assert not P.check_refusal(P.refusal_topic("The review doesn't name the ferry's captain."), src)


def test_plain_antonym_pairs_and_units_of_volume_and_time():
    aligned = ["Over the last century the islands lost half of their ferry piers to storms."]
    assert P.check_polarity("Over the last century the islands gained half of their ferry piers.", aligned)
    assert not P.check_polarity("Over the last century the islands lost half of their ferry piers.", aligned)
    src = _index("The pump moves 310 cubic metres of water per hour. Timetables change with four weeks' notice.")
    assert P.check_unit_words(P.tokenize("The pump moves 310 litres of water per hour."), src)
    assert not P.check_unit_words(P.tokenize("The pump moves 310 cubic metres of water per hour."), src)
    assert P.check_unit_words(P.tokenize("Timetables change with four days' notice."), src)
    assert not P.check_unit_words(P.tokenize("Timetables change with four weeks' notice."), src)


def test_words_in_any_alphabet_are_whole_words():
    toks = [t.text for t in P.tokenize("a concert by the violinist Zoë Müller and the cellist Søren Ærø in Tromsø")]
    assert "Zoë" in toks and "Müller" in toks and "Ærø" in toks and "Tromsø" in toks
    assert {"zoë", "müller", "søren", "ærø"} <= C.names("Then the violinist Zoë Müller met Søren Ærø.")
    # a name replaced by one the source never writes is a new name, accents and all
    assert "zoe" in C.names("Then the violinist Zoe Muller played.") - C.names("Then the violinist Zoë Müller played.")


def test_two_titles_traded_between_names():
    src = _index("The ferry company hired the engineer Ada Lund and the captain Piotr Nowak in March.")
    assert P.check_title_swap(P.tokenize("The company hired the captain Ada Lund and the engineer Piotr Nowak."), src)
    assert not P.check_title_swap(P.tokenize("The company hired the engineer Ada Lund and the captain Piotr Nowak."),
                                  src)
    # a title the source gives nobody else is not a swap (a paraphrase may add one)
    assert not P.check_title_swap(P.tokenize("The company hired the specialist Ada Lund."), src)


def test_with_no_and_without_say_the_same():
    aligned = ["Ferries that moved their sailings to the morning cut fuel use by about a fifth without any loss "
               "of service."]
    right = "Ferries that shifted their sailings to the morning cut fuel use by roughly a fifth, with no loss of service."
    wrong = "Ferries that shifted their sailings to the morning cut fuel use by roughly a fifth, with a loss of service."
    assert not P.check_polarity(right, aligned)
    assert P.check_polarity(wrong, aligned)


def test_a_year_only_a_reference_has_is_not_the_sentence_year():
    text = ("In a 2021 survey of the islands, only 23 percent of crews said they slept eight hours.\n"
            "Berg, A. (2019). Ferry crews.")
    src = _index(text)
    wrong, right = ("In a 2019 survey of the islands, only 23 percent of crews slept eight hours.",
                    "In a 2021 survey of the islands, only 23 percent of crews slept eight hours.")
    assert P.check_numbers(P.tokenize(wrong), src, [0])
    assert not P.check_numbers(P.tokenize(right), src, [0])


def test_grown_is_a_direction():
    aligned = ["Ferry traffic has grown quickly on the northern route."]
    assert P.check_polarity("Ferry traffic has been falling on the northern route.", aligned)
    assert not P.check_polarity("Ferry traffic has been rising on the northern route.", aligned)


def test_none_in_a_range_is_zero():
    aligned = ["The 40 piers were chosen to cover every district, covering ferry use from 0 to 65 percent."]
    assert not P.check_polarity("The piers cover every district, with ferry use ranging from none to 65 percent.",
                                aligned)
    assert P.check_polarity("The piers were not chosen to cover every district, with ferry use ranging from none to "
                            "65 percent.", aligned)


def test_a_rank_dropped_or_changed():
    aligned = ["Fuel is the second largest cost after crew wages."]
    assert P.check_rank("Fuel is the company's largest cost, ahead of wages.", aligned)
    assert P.check_rank("Fuel is the third largest cost.", aligned)
    assert not P.check_rank("Fuel is the company's second-largest cost.", aligned)
    assert not P.check_rank("Crew wages cost more than fuel.", aligned)


def test_what_a_name_did_read_by_word_forms():
    src = _index("Island Ferries 2025\nA report on the year's sailings.\nFerries ran daily. "
                 "We thank the Nordby Harbour Board for its help with tide tables. "
                 "Dr Ines Ekdal commented on an earlier draft of this report.")
    names = C.names("Dr Ines Ekdal helped the crews with the tide tables.", src.names)
    assert P.check_name_facts("Dr Ines Ekdal helped the crews with the tide tables.", names, src)
    assert not P.check_name_facts("Dr Ines Ekdal commented on a draft of the report.",
                                  C.names("Dr Ines Ekdal commented on a draft of the report.", src.names), src)


def test_a_unit_read_where_the_number_is_said_of_the_same_things():
    src = _index("Island Ferries 2025\nA yearly report.\nEach hull was coated with 1 percent by weight of zinc "
                 "phosphate using a spray process. The fleet had 1 spare engine.")
    wrong = "Each hull received a coating of 1 kilogram of zinc phosphate, applied by a spray process."
    right = "Each hull received a coating of 1 percent by weight of zinc phosphate, applied by a spray process."
    assert P.check_numbers(P.tokenize(wrong), src, [2])
    assert not P.check_numbers(P.tokenize(right), src, [2])
