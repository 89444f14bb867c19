"""Filling ``{...}`` in case text: sandbox placeholders and the ``{words:N}`` generator."""

from __future__ import annotations

import random
import string
from typing import Any, Mapping

# Plain English words, so a long paste reads as English to a language detector.
VOCABULARY = (
    "the report describes how the team measured water quality in the river over three years and found that "
    "levels of nitrate rose after heavy rain while oxygen fell during the summer months because warmer water "
    "holds less gas the authors suggest new monitoring stations near farms and a public dashboard so that "
    "residents can see the data every week they also note that funding for the project came from the city "
    "council and that volunteers collected most of the samples by hand with simple test kits"
).split()


#: The most words one ``{words:N}`` may generate (about 600 kB of text): the case loader refuses
#: more (a fixture error, docs/CASES.md), and ``words`` raises rather than fill the memory.
MAX_WORDS = 100_000


def words(n: int, seed: int = 7) -> str:
    """``n`` deterministic English words, in sentences (``n`` at most MAX_WORDS)."""
    if not 0 <= n <= MAX_WORDS:
        raise ValueError(f"{{words:{n}}}: at most {MAX_WORDS} words")
    rng = random.Random(seed)
    out: list[str] = []
    sentence_len = 0
    for i in range(n):
        word = rng.choice(VOCABULARY)
        if sentence_len == 0:
            word = word.capitalize()
        sentence_len += 1
        if sentence_len >= 12 or i == n - 1:
            word += "."
            sentence_len = 0
        out.append(word)
    return " ".join(out)


class _Formatter(string.Formatter):
    def __init__(self, values: Mapping[str, str]):
        self.values = values

    def get_value(self, key: Any, args: Any, kwargs: Any) -> Any:
        if key == "words":
            return _WORDS
        return self.values[key]

    def format_field(self, value: Any, format_spec: str) -> str:
        if value is _WORDS:
            return words(int(format_spec))
        return format(value, format_spec)


_WORDS = object()


def render(text: str, values: Mapping[str, str]) -> str:
    """Fill placeholders (validated at load time, so a KeyError here is a harness bug)."""
    return _Formatter(values).format(text)
