"""Mutators: deterministic, and each makes a real change of its kind."""

import re

import pytest

from harness.judges import mutate as M

SENT = "Students slept 34 minutes longer, and sleepiness was 18 percent lower at 24 schools."
NAMES = "The Halvorsen Foundation and the Nordic Youth Health Fund paid for the trial."
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
    (M.entity_swap, NAMES, lambda a, b: b.index("Nordic") < b.index("Halvorsen")),
])
def test_each_mutator_makes_a_real_change_of_its_kind(fn, text, check):
    out, detail = fn(text, M.rng(1, "t"))
    assert out != text and detail
    assert check(text, out), (out, detail)


def test_entity_replace_uses_another_name_from_the_document():
    names = M.document_names(DOC)
    assert "Maria Lindqvist" in names and "Halvorsen Foundation" in names
    out, detail = M.entity_replace(NAMES, M.rng(1, "e"), names, M.proper_words(DOC))
    assert out != NAMES and any(n in out for n in names if n not in NAMES)


def test_omission_drops_the_sentence_with_the_key_fact():
    text = "The trial ran for a year. Students slept 34 minutes longer. Scores did not change."
    out, _ = M.omission(text, ["34 minutes"])
    assert "34" not in out and "The trial ran" in out and "Scores" in out
    one, _ = M.omission("The trial included 3,412 students: 1,738 at intervention schools.", ["3,412"])
    assert "3,412" not in one and "1,738" in one


def test_format_mutators():
    bullets = "- First finding.\n- Second finding\n- Third"
    prose, _ = M.bullets_removed(bullets)
    assert not re.search(r"(?m)^- ", prose) and "Second finding." in prose
    long, _ = M.too_long("Short answer.", 280, ["A sentence from the document that is long enough."])
    assert len(long) > 280


def test_not_applicable_gives_none():
    assert M.number_digit("No figures here.", M.rng(1)) is None
    assert M.number_swap("Only 3 here.", M.rng(1)) is None
    assert M.entity_swap("nothing capitalised here", M.rng(1)) is None
    assert M.bullets_removed("plain prose") is None


def test_mutators_are_deterministic_for_a_seed():
    for fn in (M.number_digit, M.number_scale, M.polarity_flip):
        assert fn(SENT + " It rose.", M.rng(7, "c", 0)) == fn(SENT + " It rose.", M.rng(7, "c", 0))
    assert M.rng(7, "a").random() != M.rng(8, "a").random()
