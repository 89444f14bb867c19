"""Metamorphic variants: requests worded differently that must get the same answer.

The robustness layer's own cases. From every eligible case of the source layers (a
conversation of plain text turns, one user, no scripted faults), it derives one case per
variant kind: two users in one case, the first sends the original turns, the second the
same turns transformed, and every variant turn must be ``equivalent`` to its original
(same number of replies, same tool trajectory, replies that mean the same). Like
Giskard's robustness detectors, a transformation and the comparison are separate: a new
kind is one function in ``KINDS``.

The kinds never touch links, ``{placeholders}``, numbers or a question mark's place:

- ``typos``: one or two letters swapped or dropped inside longer words;
- ``case``: the words in capitals (links kept);
- ``spacing``: doubled spaces between words, repeated end punctuation (the platforms strip
  leading and trailing whitespace themselves);
- ``greeting``: a greeting before the request;
- ``emoji``: an emoji before or after the request;
- ``lookalike``: a few Latin letters replaced by Cyrillic look-alikes (``а``, ``е``, ``о``...);
- ``accents``: a few vowels accented (``é``, ``á``...), as a user on another keyboard types.

Deterministic: each case's kinds (``DEFAULT_COUNT`` by default, chosen by a hash of its id
so the suite covers every kind) and each transformation are seeded by the case id.
A case chooses with ``variants: [typos, case]``, ``variants: all`` or ``variants: none``.
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import replace
from typing import Any, Callable, Mapping, Sequence

from harness.errors import FixtureError
from harness.types import Case, CheckSpec, Turn

#: The layers whose requests are varied (the robustness layer's own cases are not).
SOURCE_LAYERS = ("reasoning", "multiturn")
DEFAULT_COUNT = 2
TAG = "metamorphic"
SEED = 20261130
#: The cosine a variant's replies need to the original's (identical texts score 1).
EQUIVALENT_MIN = 0.85

# Spans a transformation must leave alone: links, placeholders, numbers, commands.
_PROTECTED = re.compile(r"https?://\S+|\{[^}]*\}\S*|\S*\d\S*|(?<!\w)/\w+|\S+\.(?:pdf|html?|txt)\b")
_WORD = re.compile(r"[A-Za-z]+")


def _rng(case_id: str, kind: str) -> random.Random:
    digest = hashlib.sha256(f"{SEED}:{case_id}:{kind}".encode()).hexdigest()
    return random.Random(int(digest[:16], 16))


def _free_words(text: str, min_len: int = 1) -> list[re.Match]:
    """Words outside protected spans, at least ``min_len`` letters long."""
    protected = [m.span() for m in _PROTECTED.finditer(text)]
    return [m for m in _WORD.finditer(text) if len(m.group()) >= min_len
            and not any(a <= m.start() < b for a, b in protected)]


def _edit_words(text: str, picks: Sequence[re.Match], change: Callable[[str], str]) -> str:
    out, last = [], 0
    for m in sorted(picks, key=lambda m: m.start()):
        out += [text[last:m.start()], change(m.group())]
        last = m.end()
    return "".join(out) + text[last:]


def typos(text: str, rng: random.Random) -> str:
    words = _free_words(text, 5)
    if not words:
        return text
    picks = rng.sample(words, min(len(words), 1 + (len(words) > 3)))

    def change(w: str) -> str:
        swaps = [i for i in range(1, len(w) - 2) if w[i] != w[i + 1]]  # swapping "mm" changes nothing
        if swaps and rng.random() < 0.5:
            i = rng.choice(swaps)
            return w[:i] + w[i + 1] + w[i] + w[i + 2:]  # two neighbours swapped
        i = rng.randrange(1, len(w) - 1)
        return w[:i] + w[i + 1:]  # one letter dropped

    return _edit_words(text, picks, change)


def case(text: str, rng: random.Random) -> str:
    words = _free_words(text)
    return _edit_words(text, words, str.upper) if words else text


def spacing(text: str, rng: random.Random) -> str:
    protected = [m.span() for m in _PROTECTED.finditer(text)]
    out = []
    for i, ch in enumerate(text):
        inside = any(a <= i < b for a, b in protected)
        out.append("  " if ch == " " and not inside and rng.random() < 0.6 else ch)
    body = "".join(out).rstrip()
    end = body[-1:] if body[-1:] in "?!." else ""
    # no leading or trailing whitespace: Telegram and WhatsApp strip it before a bot sees it
    return body + ((end * 2) if end else rng.choice(["!!", "...", " !"]))


GREETINGS = ("Hi there! ", "Hello, ", "Good morning. ", "Hey! ", "Hi, hope you're well. ")


def greeting(text: str, rng: random.Random) -> str:
    return rng.choice(GREETINGS) + text


EMOJI = ("🙏", "📄", "😊", "👍", "✨")


def emoji(text: str, rng: random.Random) -> str:
    e = rng.choice(EMOJI)
    return f"{e} {text}" if rng.random() < 0.5 else f"{text} {e}"


LOOKALIKES = {"a": "а", "e": "е", "o": "о", "c": "с", "p": "р", "x": "х", "y": "у", "i": "і"}


def _swap_letters(text: str, rng: random.Random, table: Mapping[str, str]) -> str:
    """One letter of up to two free words replaced through ``table``."""
    words = [m for m in _free_words(text, 4) if any(ch in table for ch in m.group())]
    if not words:
        return text
    picks = rng.sample(words, min(len(words), 2))

    def change(w: str) -> str:
        i = rng.choice([i for i, ch in enumerate(w) if ch in table])
        return w[:i] + table[w[i]] + w[i + 1:]

    return _edit_words(text, picks, change)


def lookalike(text: str, rng: random.Random) -> str:
    return _swap_letters(text, rng, LOOKALIKES)


ACCENTS = {"a": "á", "e": "é", "i": "í", "o": "ó", "u": "ú", "n": "ñ"}


def accents(text: str, rng: random.Random) -> str:
    return _swap_letters(text, rng, ACCENTS)


KINDS: dict[str, Callable[[str, random.Random], str]] = {
    "typos": typos, "case": case, "spacing": spacing, "greeting": greeting, "emoji": emoji,
    "lookalike": lookalike, "accents": accents,
}


def transform(kind: str, text: str, case_id: str) -> str:
    """The ``kind`` variant of ``text`` for case ``case_id`` (deterministic)."""
    return KINDS[kind](text, _rng(case_id, kind))


def eligible(c: Case) -> bool:
    """A conversation the variants can replay: one user, plain text turns, no faults."""
    return (c.layer in SOURCE_LAYERS and not c.users
            and all(t.kind == "text" and t.send and not t.faults and not t.overlap for t in c.turns))


def kinds_for(c: Case) -> list[str]:
    if c.variants is not None:
        if c.variants == ("all",):
            return list(KINDS)
        unknown = [k for k in c.variants if k not in KINDS]
        if unknown:
            raise FixtureError(f"unknown variant kind(s) {unknown}", file=c.file, case=c.id,
                               fix=f"kinds: {', '.join(KINDS)} (or all, or none)")
        return list(c.variants)
    order = list(KINDS)
    start = int(hashlib.sha256(c.id.encode()).hexdigest()[:8], 16) % len(order)
    return [order[(start + i * 3) % len(order)] for i in range(DEFAULT_COUNT)]


def _keep_counts(turn: Turn) -> tuple[CheckSpec, ...]:
    """The source turn's reply count, so both turns settle the way the original does."""
    return tuple(s for s in turn.checks if s.name == "replies")


def variant_case(c: Case, kind: str, layer: str) -> Case | None:
    texts = [transform(kind, t.send or "", c.id) for t in c.turns]
    if all(v == t.send for v, t in zip(texts, c.turns)):
        return None  # nothing to vary (no free words of that shape)
    n = len(c.turns)
    original = [replace(t, user="original", checks=_keep_counts(t)) for t in c.turns]
    varied = [replace(t, send=v, user="variant",
                      checks=(*_keep_counts(t), CheckSpec("equivalent", {"to": i, "min": EQUIVALENT_MIN})))
              for i, (t, v) in enumerate(zip(c.turns, texts))]
    return Case(id=f"{c.id}--{kind}", layer=layer, channel=c.channel, turns=(*original, *varied),
                tags=(TAG, kind), file=c.file, timeout_s=(c.timeout_s * 2 if c.timeout_s else None),
                description=f"{kind} variant of {c.id}: the answer must not change ({n} turn(s) each)",
                source=c.source, users=("original", "variant"), variants=())


def derive(cases: Sequence[Case], context: Mapping[str, Any], layer: str = "robustness") -> list[Case]:
    out: list[Case] = []
    errors: list[FixtureError] = []
    for c in cases:
        if not eligible(c):
            continue
        try:
            kinds = kinds_for(c)
        except FixtureError as exc:
            errors.append(exc)
            continue
        for kind in kinds:
            v = variant_case(c, kind, layer)
            if v is not None:
                out.append(v)
    if errors:
        from harness.errors import FixtureErrors

        raise FixtureErrors(errors)
    return out
