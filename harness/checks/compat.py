"""Where a suite written for an earlier harness means something else now (``harness check``).

``suite_warnings(cases) -> lines``, one per problem, never raises. Today it reads one change
of meaning (CHANGELOG.md): ``reply.*`` checks the text the user sees, Telegram markup parsed
away (``parse_mode`` MarkdownV2, Markdown, HTML), so a ``reply.*`` pattern that spells markup
(``*bold*``, ``<b>``, ``_x_``, backticks, ``[t](url)``, a MarkdownV2 escape such as ``\\!``)
can never match a formatted reply: ``reply_raw.*`` reads the text as sent. The same test runs
at evaluation time on a failing ``reply.*`` check (``raw_hint``), where the raw text is known.
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence

from harness.types import Case

#: The harness version since which ``reply.*`` reads the rendered text (CHANGELOG.md).
RENDERED_SINCE = "0.1.0"
#: reply.* sub-checks whose strings or patterns are compared with the text.
_PATTERN_SUBS = ("regex", "not_regex", "contains", "contains_all", "not_contains")

_MARKUP = (
    ("an HTML tag", re.compile(r"</?(?:b|strong|i|em|u|ins|s|strike|del|code|pre|a|span|tg-spoiler|tg-emoji|"
                               r"blockquote)(?:\s[^>]*)?>", re.IGNORECASE)),
    ("a [text](url) link", re.compile(r"\[[^\]\n]+\]\([^)\s]+\)")),
    ("*bold*", re.compile(r"(?<![\w*\\])\*\*?[^*\s](?:[^*\n]*[^*\s\\])?\*\*?(?![\w*])")),
    ("_italic_", re.compile(r"(?<![\w\\])__?[^_\s](?:[^_\n]*[^_\s\\])?__?(?!\w)")),
    ("`code`", re.compile(r"`[^`\n]+`")),
    ("~strikethrough~", re.compile(r"(?<![\w~])~[^~\s](?:[^~\n]*[^~\s])?~(?![\w~])")),
    ("||spoiler||", re.compile(r"\|\|[^|\n]+\|\|")),
)
_V2_ESCAPE = re.compile(r"\\[_*\[\]()~`>#+\-=|{}.!]")
_REGEX_META = set("[](){}*+?|^$.")


def _literal(pattern: str) -> str:
    """What a regular expression matches literally, roughly: escaped punctuation is itself,
    unescaped meta characters are no text (``\\*bold\\*`` -> ``*bold*``; ``.*`` -> nothing)."""
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            out.append(nxt if not nxt.isalnum() else "\x00")
            i += 2
            continue
        out.append("\x00" if ch in _REGEX_META else ch)
        i += 1
    return "".join(out)


def markup_in(value: str, *, regex: bool = False) -> str | None:
    """The kind of Telegram markup ``value`` spells (None if it spells none)."""
    text = _literal(value) if regex else value
    for label, pattern in _MARKUP:
        if pattern.search(text):
            return label
    if not regex and _V2_ESCAPE.search(value):
        return "a MarkdownV2 escape"
    return None


def _values(params) -> Iterable[str]:
    return [params] if isinstance(params, str) else [v for v in params if isinstance(v, str)] \
        if isinstance(params, (list, tuple)) else []


def suite_warnings(cases: Sequence[Case]) -> list[str]:
    """One line for each ``reply.*`` check of a Telegram case whose pattern holds markup: a
    positive one (regex, contains) cannot match a reply whose markup Telegram parsed; a negative
    one (not_regex, not_contains) now holds whenever it is parsed, so it keeps its old meaning only
    beside a ``reply_raw`` twin with the same value (then it is not named)."""
    out: list[str] = []
    for case in cases:
        if case.channel != "telegram":
            continue  # WhatsApp text is not parsed: reply.* reads it as sent
        for index, turn in enumerate(case.turns):
            raw = {(s.name.partition(".")[2], v) for s in turn.checks if s.name.startswith("reply_raw.")
                   for v in _values(s.params)}
            for spec in turn.checks:
                family, _, sub = spec.name.partition(".")
                if family != "reply" or sub not in _PATTERN_SUBS:
                    continue
                for value in _values(spec.params):
                    what = markup_in(value, regex=sub.endswith("regex"))
                    if not what or (sub, value) in raw:
                        continue
                    where = f"{case.file}: case '{case.id}': turn {index}: {spec.name} {value!r} holds markup ({what})"
                    if sub.startswith("not_"):
                        out.append(f"{where}; reply.* reads the rendered text (what the user sees) since harness "
                                   f"{RENDERED_SINCE}, so it holds whenever Telegram parses that markup: add "
                                   f"reply_raw.{sub} with the same value to check the text as sent (CHANGELOG.md)")
                    else:
                        out.append(f"{where}, but reply.* reads the rendered text (what the user sees) since "
                                   f"harness {RENDERED_SINCE}: use reply_raw.{sub} to match the markup, or write "
                                   f"the text as the user reads it (CHANGELOG.md)")
                    break
    return out


def raw_hint(name: str, passes_raw: bool) -> str:
    """The reason's tail for a failing ``reply.*`` check whose raw text would pass it."""
    if not passes_raw:
        return ""
    sub = name.partition(".")[2]
    verb = "matches" if sub in ("regex", "contains", "contains_all") else "passes"
    return (f"; the raw text (markup included) {verb}: use reply_raw.{sub} (reply.* reads the rendered "
            f"text since harness {RENDERED_SINCE}, CHANGELOG.md)")
