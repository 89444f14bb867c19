"""Metamorphic variants: requests worded differently that must get the same answer.

The robustness layer's own cases. From every eligible case of the source layers (a
conversation of plain text turns and button presses, one user, no scripted faults), it
derives one case per variant kind: two users in one case, the first sends the original
turns, the second the same turns transformed, and every variant turn must be
``equivalent`` to its original (same number of replies, same tool trajectory, replies that
mean the same). When the original case runs in the same run, the first user's turns are not
sent again: the original's observed turns stand in for them (``Case.original``,
``run/reuse.py``), so a variant costs one replay, not two. Like Giskard's robustness detectors, a transformation and the comparison
are separate: a new kind is one function in ``KINDS``.

What a variant never changes (``protected_spans``), because a user who rewords a request
does not change them either and a bot may rightly answer them differently:

- bot commands (``/start``, ``/book@my_bot``, as Telegram marks them): a message that
  starts with a command is a command with its arguments, and no kind changes it (a greeting
  before ``/start`` is no command any more, ``/book!!`` is none for aiogram's filter);
- links, ``{placeholders}``, e-mail addresses, @mentions and #hashtags, file names;
- numbers and any word holding a digit (``10:00``, ``3pm``, ``A-42``); punctuation is never
  glued to them;
- quoted strings (``"..."``, ``'...'``, ``“...”``, ``«...»``, backticks);
- names: capitalised words that do not start a sentence, words with capitals inside
  (``iPhone``, ``NASA``), and every word the case's own checks expect to see echoed
  (``reply.contains`` / ``contains_all`` strings and the words of ``reply.regex`` literals,
  the same of ``reply_raw.*`` and ``post.*``): a typo in "Atlantis" makes the bot echo "Atlatis".

The kinds:

- ``typos``: one or two letters swapped or dropped inside longer words;
- ``case``: the words in capitals;
- ``spacing``: doubled spaces between words, repeated end punctuation (the platforms strip
  leading and trailing whitespace themselves);
- ``greeting``: a greeting before the request;
- ``emoji``: an emoji before or after the request;
- ``lookalike``: a few Latin letters replaced by Cyrillic look-alikes (``а``, ``е``, ``о``...);
- ``accents``: a few vowels accented (``é``, ``á``...), as a user on another keyboard types.

Deterministic: each case's kinds (``DEFAULT_COUNT`` by default, chosen by a hash of its id
so the suite covers every kind) and each transformation are seeded by the case id.
A case chooses with ``variants: [typos, case]``, ``variants: all`` or ``variants: none``; the
project with ``[robustness] variants`` (the same values, plus ``"default"``); the case wins.
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import replace
from typing import Any, Callable, Iterable, Mapping, Sequence

from harness.channels.telegram_entities import command_spans, entity_spans
from harness.errors import ConfigError, FixtureError
from harness.types import Case, CheckSpec, Turn

#: The layers whose requests are varied (the robustness layer's own cases are not).
SOURCE_LAYERS = ("reasoning", "multiturn")
DEFAULT_COUNT = 2
TAG = "metamorphic"
SEED = 20261130
#: The cosine a variant's replies need to the original's (identical texts score 1).
EQUIVALENT_MIN = 0.85
#: ``[robustness] variants`` values besides a list of kinds.
PROJECT_CHOICES = ("default", "all", "none")

# Spans a transformation must leave alone (besides commands and links, which come from the
# Telegram entity rules): placeholders, numbers, files, addresses, mentions, quoted strings.
_PROTECTED = re.compile(
    r"https?://\S+"
    r"|\{[^}]*\}\S*"
    r"|\S*\d\S*"
    r"|\S+\.(?:pdf|html?|txt|docx?|csv|json|png|jpe?g)\b"
    r"|\S+@\S+|(?<!\w)[@#]\w+"
    r'|"[^"\n]*"|“[^”\n]*”|„[^“”\n]*[“”]|«[^»\n]*»|`[^`\n]*`'
    r"|(?<!\w)'[^'\n]*'(?!\w)"
)
_WORD = re.compile(r"[A-Za-z]+")
_ANY_WORD = re.compile(r"[^\W\d_]+")
# Checks whose strings the agent is expected to echo (their words are names to the variants).
_ECHO_FAMILIES = ("reply", "reply_raw", "post")
_ECHO_SUBS = ("contains", "contains_all", "regex")


def _rng(case_id: str, kind: str) -> random.Random:
    digest = hashlib.sha256(f"{SEED}:{case_id}:{kind}".encode()).hexdigest()
    return random.Random(int(digest[:16], 16))


def starts_with_command(text: str) -> bool:
    """Is ``text`` a bot command (with its arguments), as Telegram marks it at offset 0?"""
    spans = command_spans(text)
    return bool(spans) and spans[0][0] == 0


def _sentence_start(text: str, at: int) -> bool:
    before = text[:at].rstrip()
    return not before or before[-1] in ".!?…:;\n" or not any(ch.isalnum() for ch in before)


def protected_spans(text: str, echoed: Iterable[str] = ()) -> list[tuple[int, int]]:
    """The character spans of ``text`` no variant may change: commands, links, placeholders,
    numbers, files, addresses, quoted strings, names and the words in ``echoed`` (lower case)."""
    keep = {w.casefold() for w in echoed}
    spans = [(a, b) for _, a, b in entity_spans(text)]
    spans += [m.span() for m in _PROTECTED.finditer(text)]
    for m in _ANY_WORD.finditer(text):
        w = m.group()
        name = (w[:1].isupper() and not _sentence_start(text, m.start())) or any(ch.isupper() for ch in w[1:])
        if name or w.casefold() in keep:
            spans.append(m.span())
    return sorted(spans)


def _inside(spans: Sequence[tuple[int, int]], i: int) -> bool:
    return any(a <= i < b for a, b in spans)


def _free_words(text: str, min_len: int = 1, spans: Sequence[tuple[int, int]] | None = None) -> list[re.Match]:
    """Words outside protected spans, at least ``min_len`` letters long."""
    spans = protected_spans(text) if spans is None else spans
    return [m for m in _WORD.finditer(text) if len(m.group()) >= min_len
            and not any(a < m.end() and m.start() < b for a, b in spans)]


def _edit_words(text: str, picks: Sequence[re.Match], change: Callable[[str], str]) -> str:
    out, last = [], 0
    for m in sorted(picks, key=lambda m: m.start()):
        out += [text[last:m.start()], change(m.group())]
        last = m.end()
    return "".join(out) + text[last:]


Spans = Sequence[tuple[int, int]]


def typos(text: str, rng: random.Random, spans: Spans) -> str:
    words = _free_words(text, 5, spans)
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


def case(text: str, rng: random.Random, spans: Spans) -> str:
    words = _free_words(text, 1, spans)
    return _edit_words(text, words, str.upper) if words else text


def spacing(text: str, rng: random.Random, spans: Spans) -> str:
    out = []
    for i, ch in enumerate(text):
        out.append("  " if ch == " " and not _inside(spans, i) and rng.random() < 0.6 else ch)
    body = "".join(out).rstrip()
    if body and _inside(spans, len(text.rstrip()) - 1):
        return body  # "book 3!!" would change the number (and a quote or a link) the text ends with
    end = body[-1:] if body[-1:] in "?!." else ""
    # no leading or trailing whitespace: Telegram and WhatsApp strip it before a bot sees it
    return body + ((end * 2) if end else rng.choice(["!!", "...", " !"]))


GREETINGS = ("Hi there! ", "Hello, ", "Good morning. ", "Hey! ", "Hi, hope you're well. ")


def greeting(text: str, rng: random.Random, spans: Spans) -> str:
    return rng.choice(GREETINGS) + text


EMOJI = ("🙏", "📄", "😊", "👍", "✨")


def emoji(text: str, rng: random.Random, spans: Spans) -> str:
    e = rng.choice(EMOJI)
    return f"{e} {text}" if rng.random() < 0.5 else f"{text} {e}"


def __getattr__(name: str) -> Any:
    if name == "LOOKALIKES":
        return _lookalikes()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_LOOKALIKES: dict[str, str] = {}


def _lookalikes() -> dict[str, str]:
    """``LOOKALIKES``: Latin letters and the Cyrillic look-alikes typed for them (the equivalence
    check folds them back). Built on first use, not at import: argument parsing loads the
    layers, and ``harness.checks`` (all of it, ~50 ms) would come with them, before the target
    is started (issue 26)."""
    if not _LOOKALIKES:
        from harness.checks.equivalence import CONFUSABLES

        _LOOKALIKES.update({latin: cyrillic for cyrillic, latin in CONFUSABLES.items()})
    return _LOOKALIKES


def _swap_letters(text: str, rng: random.Random, table: Mapping[str, str], spans: Spans) -> str:
    """One letter of up to two free words replaced through ``table``."""
    words = [m for m in _free_words(text, 4, spans) if any(ch in table for ch in m.group())]
    if not words:
        return text
    picks = rng.sample(words, min(len(words), 2))

    def change(w: str) -> str:
        i = rng.choice([i for i, ch in enumerate(w) if ch in table])
        return w[:i] + table[w[i]] + w[i + 1:]

    return _edit_words(text, picks, change)


def lookalike(text: str, rng: random.Random, spans: Spans) -> str:
    return _swap_letters(text, rng, _lookalikes(), spans)


ACCENTS = {"a": "á", "e": "é", "i": "í", "o": "ó", "u": "ú", "n": "ñ"}


def accents(text: str, rng: random.Random, spans: Spans) -> str:
    return _swap_letters(text, rng, ACCENTS, spans)


KINDS: dict[str, Callable[[str, random.Random, Spans], str]] = {
    "typos": typos, "case": case, "spacing": spacing, "greeting": greeting, "emoji": emoji,
    "lookalike": lookalike, "accents": accents,
}


def transform(kind: str, text: str, case_id: str, echoed: Iterable[str] = ()) -> str:
    """The ``kind`` variant of ``text`` for case ``case_id`` (deterministic). A command with
    its arguments comes back unchanged; ``echoed`` are words the agent is expected to repeat."""
    if starts_with_command(text):
        return text
    return KINDS[kind](text, _rng(case_id, kind), protected_spans(text, echoed))


def echoed_words(c: Case) -> set[str]:
    """The words the case's checks expect the agent to echo: strings of ``reply.contains`` /
    ``contains_all`` and the literal words of ``reply.regex`` (also ``reply_raw.*``, ``post.*``)."""
    texts: list[str] = []
    for t in c.turns:
        for spec in t.checks:
            family, _, sub = spec.name.partition(".")
            if family not in _ECHO_FAMILIES or sub not in _ECHO_SUBS:
                continue
            values = spec.params if isinstance(spec.params, list) else [spec.params]
            for v in values:
                if not isinstance(v, str):
                    continue
                if sub == "regex":  # \d, \b, \s... are no letters; an escaped character is itself
                    v = re.sub(r"\\[A-Za-z]", " ", v).replace("\\", "")
                    v = re.sub(r"\(\?[a-zA-Z]+\)", " ", v)  # inline flags such as (?i)
                texts.append(v)
    return {m.group().casefold() for text in texts for m in _ANY_WORD.finditer(text) if len(m.group()) > 1}


def _replayable(t: Turn) -> bool:
    if t.faults or t.overlap:
        return False
    if t.kind == "callback":
        return True  # pressed again, unchanged, on the variant user's own keyboard
    return t.kind == "text" and bool(t.send)


def eligible(c: Case) -> bool:
    """A conversation the variants can replay: one user, text turns and button presses, no faults."""
    return (c.layer in SOURCE_LAYERS and not c.users and any(t.kind == "text" for t in c.turns)
            and all(_replayable(t) for t in c.turns))


def project_kinds(value: Any, *, file: str = "") -> str | tuple[str, ...]:
    """``[robustness] variants`` checked: "default", "all", "none" or a tuple of kinds."""
    if isinstance(value, str) and "," in value:  # HARNESS_ROBUSTNESS_VARIANTS=typos,case
        value = [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, str) and value in PROJECT_CHOICES:
        return value
    if isinstance(value, str) and value in KINDS:
        return (value,)
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
        unknown = [v for v in value if v not in KINDS]
        if not unknown:
            return tuple(dict.fromkeys(value))
        raise ConfigError(f"[robustness] variants: unknown variant kind(s) {unknown}", file=file,
                          fix=f"kinds: {', '.join(KINDS)}; or \"all\", \"none\", \"default\"")
    raise ConfigError(f"[robustness] variants must be \"default\", \"all\", \"none\" or a list of kinds, "
                      f"got {value!r}", file=file, fix='e.g. variants = "none" or variants = ["typos", "case"]')


def kinds_for(c: Case, project: str | Sequence[str] = "default") -> list[str]:
    """The kinds of ``c``'s variants: the case's own ``variants:`` wins over the project's."""
    chosen = c.variants if c.variants is not None else (
        None if project == "default" else ("all",) if project == "all" else () if project == "none" else project)
    if chosen is not None:
        if tuple(chosen) == ("all",):
            return list(KINDS)
        unknown = [k for k in chosen if k not in KINDS]
        if unknown:
            raise FixtureError(f"unknown variant kind(s) {unknown}", file=c.file, case=c.id,
                               fix=f"kinds: {', '.join(KINDS)} (or all, or none)")
        return list(chosen)
    order = list(KINDS)
    start = int(hashlib.sha256(c.id.encode()).hexdigest()[:8], 16) % len(order)
    return [order[(start + i * 3) % len(order)] for i in range(DEFAULT_COUNT)]


def _keep_counts(turn: Turn) -> tuple[CheckSpec, ...]:
    """The source turn's reply count, so both turns settle the way the original does."""
    return tuple(s for s in turn.checks if s.name == "replies")


def _shifted(turn: Turn, n: int) -> Turn:
    """The turn as the variant user's: an older keyboard (``callback: {turn: i}``) or a quoted
    turn (``reply_to: i`` / ``{bot: i}``) named by index is that user's own turn ``i + n``."""
    opts = dict(turn.options)
    if isinstance(opts.get("turn"), int):
        opts["turn"] += n
    target = opts.get("reply_to")
    if isinstance(target, int) and not isinstance(target, bool):
        opts["reply_to"] = target + n
    elif isinstance(target, dict) and isinstance(target.get("bot"), int):
        opts["reply_to"] = {"bot": target["bot"] + n}
    return replace(turn, options=opts)


def variant_case(c: Case, kind: str, layer: str) -> Case | None:
    echoed = echoed_words(c)
    texts = [transform(kind, t.send or "", c.id, echoed) if t.kind == "text" else t.send for t in c.turns]
    if all(v == t.send for v, t in zip(texts, c.turns)):
        return None  # nothing to vary (no free words of that shape)
    n = len(c.turns)
    original = [replace(t, user="original", checks=_keep_counts(t)) for t in c.turns]
    varied = [replace(_shifted(t, n), send=v, user="variant",
                      checks=(*_keep_counts(t), CheckSpec("equivalent", {"to": i, "min": EQUIVALENT_MIN})))
              for i, (t, v) in enumerate(zip(c.turns, texts))]
    return Case(id=f"{c.id}--{kind}", layer=layer, channel=c.channel, turns=(*original, *varied),
                tags=(TAG, kind), file=c.file, timeout_s=(c.timeout_s * 2 if c.timeout_s else None),
                description=f"{kind} variant of {c.id}: the answer must not change ({n} turn(s) each)",
                source=c.source, users=("original", "variant"), variants=(), original=c.id)


def comparable(context: Mapping[str, Any]) -> bool:
    """Can this install compare variants' answers that differ in wording? With the MiniLM
    embedder only with the ``models`` extra (harness/models/extra.py). Without it the project's
    default variants are not derived: most of their comparisons would be unavailable, and the
    core install is for suites that need no model; a case's own ``variants:`` or an explicit
    ``[robustness] variants`` still derives them (unavailable where a cosine is needed)."""
    backend = ((context.get("sections") or {}).get("embeddings") or {}).get("backend", "minilm")
    if backend != "minilm":
        return True
    from harness.models.extra import installed

    return installed()


def install_notes(context: Mapping[str, Any]) -> list[str]:
    """Why the project's default variants are not derived here (none if they are)."""
    if "variants" in ((context.get("sections") or {}).get("robustness") or {}) or comparable(context):
        return []
    from harness.models.extra import EXTRA, install_command

    return [f"metamorphic variants are off: comparing their answers needs the harness's {EXTRA!r} extra "
            f"(install it with {install_command()}), or set [robustness] variants"]


def derive(cases: Sequence[Case], context: Mapping[str, Any], layer: str = "robustness") -> list[Case]:
    """The variant cases of ``cases``; ``context["sections"]`` holds the config's ``[robustness] variants``."""
    own = (context.get("sections") or {}).get("robustness") or {}
    setting = own.get("variants", "default")
    project = project_kinds(setting, file=str(context.get("config_file") or ""))
    if "variants" not in own and not comparable(context):
        project = "none"  # the core install: only cases that ask for variants get them (install_notes)
    out: list[Case] = []
    errors: list[FixtureError] = []
    for c in cases:
        if not eligible(c):
            continue
        try:
            kinds = kinds_for(c, project)
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
