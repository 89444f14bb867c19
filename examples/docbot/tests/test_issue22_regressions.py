"""The issue-22 seeded regressions' text changes (faults.py): each one changes what it says, nothing else."""

from __future__ import annotations

import pytest

from docbot import faults, regressions


@pytest.mark.parametrize("text, want", [
    ("The drug may reduce pain.", "The drug reduces pain."),
    ("It might help sleep and could matter.", "It helps sleep and matters."),
    ("Costs fell by about 30% in up to 12 clinics.", "Costs fell by 30% in 12 clinics."),
    ("The data suggests a link.", "The data shows a link."),
    ("The paper is about sleep.", "The paper is about sleep."),
])
def test_remove_hedges(text, want):
    assert faults.remove_hedges(text) == want


def test_split_long_keeps_every_word_in_order():
    text = " ".join(f"Sentence number {i} says a little." for i in range(60))
    parts = faults.split_long(text)
    assert len(parts) > 1 and all(len(p) <= 700 for p in parts)
    assert " ".join(parts).split() == text.split()
    assert faults.split_long("short") == ["short"]


@pytest.mark.parametrize("text, want", [
    ("Pain fell 12.5% in 2023.", "Pain fell 21.5% in 2023."),
    ("About 1,240 homes.", "About 2,140 homes."),
    ("Only 7 and 33 here.", "Only 7 and 33 here."),  # no number with two different digits: unchanged
])
def test_swap_digits(text, want):
    assert faults.swap_digits(text) == want


def test_swap_names():
    assert faults.swap_names("Rain fell in Oslo. Then it moved to Bergen and Oslo dried.") == \
        "Rain fell in Bergen. Then it moved to Oslo and Bergen dried."
    assert faults.swap_names("Rain in Oslo, then in Bergen.") == "Rain in Oslo, then in Bergen."  # one sentence
    assert faults.swap_names("Rain in Oslo only.") == "Rain in Oslo only."


def test_registered():
    names = {r.name for r in regressions.REGISTRY}
    assert {"hedges_removed", "replies_split", "history_resent", "digit_swap", "name_swap", "slow_leak"} <= names
