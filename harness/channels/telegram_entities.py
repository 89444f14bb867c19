"""The entities a Telegram client marks in a user's text: bot commands and URLs (tdlib's
rules, td/telegram/MessageEntity.cpp), with offsets and lengths in UTF-16 code units as the
Bot API counts them. The updates that carry them: telegram_updates.py."""

from __future__ import annotations

import re
from typing import Any


# Bot commands as Telegram's clients mark them (tdlib td/telegram/MessageEntity.cpp,
# match_bot_commands): a "/" that is not inside a word (nor after "/", "<", ">"), 1-64 of
# [A-Za-z0-9_], optionally "@" and a 3-32 character bot username, and then no word
# character, "/", "<" or ">". So "/book!!" and "/reset..." are the commands /book and
# /reset, "see /help" marks /help at offset 4, and "a/b", "/a/b" or "/start@ab" mark nothing.
_COMMAND_RE = re.compile(r"(?<![\w/<>])/([A-Za-z0-9_]+)(@[A-Za-z0-9_]*)?")


def command_spans(text: str) -> list[tuple[int, int]]:
    """The (start, end) character spans of the bot commands in ``text``, as Telegram marks them."""
    out = []
    for m in _COMMAND_RE.finditer(text):
        name, mention = m.group(1), m.group(2)
        if len(name) > 64 or (mention is not None and not 3 <= len(mention) - 1 <= 32):
            continue  # tdlib: a name or username of the wrong length is no command at all
        after = text[m.end():m.end() + 1]
        if after and (after.isalnum() or after in "_/<>"):
            continue
        out.append((m.start(), m.end()))
    return out


# Bare domains only count with a well-known TLD: otherwise "report.pdf" or "e.g" would
# become links, which Telegram does not do.
_BARE_TLDS = (
    "com|org|net|io|dev|ai|app|co|info|biz|edu|gov|me|uk|de|fr|es|it|nl|ru|ua|us|eu|ca|au"
    "|in|jp|cn|br|ch|se|no|pl|ly|gg|tv|xyz|site|online|tech|cloud|example|test|local"
)
_URL_RE = re.compile(
    r"(?<![\w@.])"  # not in the middle of a word, e-mail or longer domain
    r"(?:"
    r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]{1,15}://)"  # any scheme, typos like htps:// included
    r"(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:]+\])"
    r"|"
    r"(?:[A-Za-z0-9-]+\.)+(?:" + _BARE_TLDS + r")(?![A-Za-z0-9-])"
    r"|"
    r"(?:\d{1,3}\.){3}\d{1,3}(?=[:/])"  # bare IPv4 only with a port or a path
    r")"
    r"(?::\d{1,5})?"
    r"(?:[/?#][^\s]*)?",
    re.IGNORECASE,
)
# Punctuation that ends a sentence rather than the URL.
_TRAILING = ".,;:!?'\")]}>"


def utf16_len(text: str) -> int:
    """Length of ``text`` in UTF-16 code units (astral characters such as emoji count 2)."""
    return len(text.encode("utf-16-le")) // 2


def entity_spans(text: str) -> list[tuple[str, int, int]]:
    """``(type, start, end)`` character spans of the ``bot_command`` and ``url`` entities a
    Telegram client marks in ``text``, in text order."""
    spans: list[tuple[str, int, int]] = [("bot_command", a, b) for a, b in command_spans(text)]
    for m in _URL_RE.finditer(text):
        start, end = m.start(), m.end()
        while end > start and text[end - 1] in _TRAILING:
            # keep a closing bracket that belongs to the URL, e.g. wiki/Foo_(bar)
            if text[end - 1] == ")" and text[start:end].count("(") >= text[start:end].count(")"):
                break
            end -= 1
        if m.group("scheme") and end - start <= len(m.group("scheme")):
            continue  # "http://" alone is not a link
        if any(s <= start < e for _, s, e in spans):
            continue
        spans.append(("url", start, end))
    spans.sort(key=lambda s: s[1])
    return spans


def text_entities(text: str) -> list[dict[str, Any]]:
    """``bot_command`` and ``url`` entities of ``text`` as a Telegram client marks them, UTF-16 offsets."""
    return [
        {"offset": utf16_len(text[:s]), "length": utf16_len(text[s:e]), "type": kind}
        for kind, s, e in entity_spans(text)
    ]
