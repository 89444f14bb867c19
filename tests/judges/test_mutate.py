"""Mutators: deterministic, and each makes a real change of its kind."""

import re

import pytest

from harness.judges import mutate as M
from harness.judges import mutate_names as N
from harness.judges import suite as S

SENT = "Students slept 34 minutes longer, and sleepiness was 18 percent lower at 24 schools."
NAMES = "The Halvorsen Foundation and the Nordic Youth Health Fund paid for the trial."
ROLES = "Maria Lindqvist analysed the data for the Halvorsen Foundation."
DOC = ("The trial was funded by the Halvorsen Foundation and the Nordic Youth Health Fund. "
       "Data were analysed by Maria Lindqvist at the Eastmere Institute.")


def numbers(text):
    return M.NUMBER.findall(text)


@pytest.mark.parametrize("fn, text, check", [
    (M.number_digit, SENT, lambda a, b: numbers(a) != numbers(b) and len(numbers(a)) == len(numbers(b))),
    (M.number_scale, SENT, lambda a, b: numbers(a) != numbers(b)),
    (M.number_swap, SENT, lambda a, b: sorted(numbers(a)) == sorted(numbers(b)) and numbers(a) != numbers(b)),
    (M.number_digit, "A two-year warranty.", lambda a, b: "two" not in b),
    (M.polarity_flip, "Students slept longer and kept their grades.",
     lambda a, b: ("shorter" in b) != ("lost" in b)),
    (M.polarity_negation, "Attendance was higher.", lambda a, b: "was not" in b),
    (M.polarity_negation, "Test scores did not change.", lambda a, b: "not" not in b),
    (N.entity_swap, ROLES, lambda a, b: b.index("Halvorsen") < b.index("Maria")),
])
def test_each_mutator_makes_a_real_change_of_its_kind(fn, text, check):
    out, detail = fn(text, M.rng(1, "t"))
    assert out != text and detail
    assert check(text, out), (out, detail)


def test_entity_replace_uses_another_name_from_the_document():
    names = N.document_names(DOC)
    assert "Maria Lindqvist" in names and "Halvorsen Foundation" in names
    out, detail = N.entity_replace(NAMES, M.rng(1, "e"), names, N.proper_words(DOC))
    assert out != NAMES and any(n in out for n in names if n not in NAMES)


def test_omission_drops_the_sentence_with_the_key_fact():
    text = "The trial ran for a year. Students slept 34 minutes longer. Scores did not change."
    out, _ = M.omission(text, ["34 minutes"])
    assert "34" not in out and "The trial ran" in out and "Scores" in out
    one, _ = M.omission("The trial included 3,412 students: 1,738 at intervention schools.", ["3,412"])
    assert "3,412" not in one and "1,738" in one


def test_omission_drops_every_sentence_that_repeats_the_key_fact():
    # the fact said twice: dropping one sentence leaves it there (not a wrong answer)
    text = "Reminders helped patients finish. 87 percent finished with reminders. It cost 0.42 dollars."
    out, detail = M.omission(text, ["reminder"])
    assert "reminder" not in out.lower() and "0.42" in out and "repeating" in detail
    # every sentence holds it: no omission leaves a wrong answer
    assert M.omission("Reminders work. Reminders are cheap.", ["reminder"]) is None


def test_omission_key_tiers_and_the_most_specific_key():
    text = "The problems: hidden mine workings, rising steel prices and a contractor that struggled to find welders."
    # a contains string (first tier) beats a regex alternative ("problems") that only labels the list
    out, _ = M.omission(text, ["welders"], ["problems"])
    assert "welders" not in out and "The problems" in out and "mine workings" in out
    # a weaker tier is read only when no part holds a stronger key
    out, _ = M.omission("The trees help. Streets feel cooler.", ["absent"], ["cool"])
    assert "cooler" not in out and "trees" in out
    # within a tier, of the first part's keys the one fewest parts hold
    out, _ = M.omission("Streets with trees feel cooler. The trees give shade.", ["trees", "cool"])
    assert out == "The trees give shade."


def test_omission_of_a_refusal_drops_the_refusal_said_again():
    markers = S.REFUSAL_MARKERS
    # said twice in other words: nothing wrong is left
    assert M.omission("The document doesn't say. That question isn't answered anywhere in it.",
                      ["doesn't say"], restated=markers) is None
    out, _ = M.omission("The document doesn't say: it reports how long students slept at 8:45, "
                        "but nothing on smartphones.", [], ["doesn't say"], restated=markers)
    assert out == "It reports how long students slept at 8:45."


def test_key_tiers_read_contains_regex_answer_and_rubric_hints():
    from harness.types import Case, CheckSpec, Turn

    checks = (CheckSpec("reply.contains", ["Source:", "welders"]), CheckSpec("post.regex", "(?i)struggled|delays"),
              CheckSpec("critic.answer", {"expected": "About 11,000 homes.", "min": 0.6}),
              CheckSpec("critic.rubric", {"about": ["doesn't say|does not say", "ok"]}))
    case = Case(id="c", layer="reasoning", channel="telegram", turns=(Turn(send="x", checks=checks),))
    assert S.key_tiers(case, 0) == (("welders",), ("struggled", "delays"), ("11,000",),
                                    ("doesn't say", "does not say"))
    assert S.key_strings(case, 0) == ("welders", "struggled", "delays", "11,000")


def test_format_mutators():
    bullets = "- First finding.\n- Second finding\n- Third"
    prose, _ = M.bullets_removed(bullets)
    assert not re.search(r"(?m)^- ", prose) and "Second finding." in prose
    long, _ = M.too_long("Short answer.", 280, ["A sentence from the document that is long enough."])
    assert len(long) > 280


def test_not_applicable_gives_none():
    assert M.number_digit("No figures here.", M.rng(1)) is None
    assert M.number_swap("Only 3 here.", M.rng(1)) is None
    assert N.entity_swap("nothing capitalised here", M.rng(1)) is None
    assert M.bullets_removed("plain prose") is None


def test_mutators_are_deterministic_for_a_seed():
    for fn in (M.number_digit, M.number_scale, M.polarity_flip):
        assert fn(SENT + " It rose.", M.rng(7, "c", 0)) == fn(SENT + " It rose.", M.rng(7, "c", 0))
    assert M.rng(7, "a").random() != M.rng(8, "a").random()


def test_entity_swap_skips_what_would_not_make_the_answer_wrong():
    # a coordinated pair says the same in either order; a code does not trade places with a name
    assert N.entity_swap(NAMES, M.rng(1, "t")) is None
    assert N.entity_swap("The Meadowlark Conservation Foundation (grant MCF-1187) funded it.", M.rng(1)) is None


def test_names_are_real_names_not_sentence_initial_words_headings_months_or_terms():
    doc = ("Greater Harwick Cycling Report\nMethods\n"
           "Cycling in Greater Harwick grew by 41 percent. Most trips were made in Ashby Vale by Sofia Brandt.\n"
           "Counts ran from March 2023 to January 2024 using SMS surveys. cycling methods were audited.")
    proper = N.proper_words(doc)
    assert "Cycling" not in proper and "Methods" not in proper
    names = N.document_names(doc)
    assert {"Greater Harwick", "Ashby Vale", "Sofia Brandt"} <= set(names)
    assert not {"Cycling", "Methods", "Cycling Report", "March 2023", "January 2024", "SMS"} & set(names)
    text = "Cycling grew in Greater Harwick from March 2023, with SMS reminders."
    assert [m.group() for m in N.names_in(text, proper)] == ["Greater Harwick"]
    assert N.entity_swap(text, M.rng(1), proper) is None


def test_entity_replace_keeps_the_shape_of_the_name():
    names = ["Halvorsen Foundation", "HF-2021-0457", "GPS"]
    out, detail = N.entity_replace("The Nordic Youth Health Fund paid.", M.rng(1), names)
    assert "Halvorsen Foundation" in out, detail


@pytest.mark.parametrize("text", [
    "Staff work from home up to three days per week.",         # a quantity, not a direction
    "Bus contracts and after-school sports had to adapt.",     # a compound
    "Schools set up new timetables.",                            # a particle
])
def test_polarity_flip_only_where_it_makes_the_claim_false(text):
    assert M.polarity_flip(text, M.rng(1)) is None


def test_polarity_flip_up_as_a_direction():
    out, _ = M.polarity_flip("Attendance went up.", M.rng(1))
    assert out == "Attendance went down."


def test_negation_is_not_added_before_only():
    out, detail = M.polarity_negation("There are only 3,100 installers, and they are busy.", M.rng(1))
    assert "are not only" not in out and "they are not busy" in out, detail
