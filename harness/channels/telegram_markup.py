"""Telegram's text formatting: MarkdownV2, Markdown (legacy) and HTML, parsed like the Bot API.

The Bot API hands ``parse_mode`` text to TDLib's parsers (td/telegram/MessageEntity.cpp:
``parse_markdown_v2``, ``parse_markdown``, ``parse_html``), which either return the text the
user sees plus ``MessageEntity`` objects, or refuse with a message the Bot API answers as
``400 Bad Request: can't parse entities: <message>``. This module reproduces those parsers'
rules and messages, so a reply that would never reach a real user fails here too:

- MarkdownV2: every one of ``_*[]()~`>#+-=|{}.!`` outside an entity's syntax must be escaped
  with ``\\`` ("Character '.' is reserved and must be escaped with the preceding '\\'");
  an entity left open is "Can't find end of Bold entity at byte offset N".
- Markdown (legacy): ``_ * ` [`` open entities; an unclosed one is "Can't find end of the
  entity starting at byte offset N".
- HTML: the supported tags only ("Unsupported start tag "br" at byte offset N"), every tag
  closed ("Can't find end tag corresponding to start tag "b""), properly nested, and ``<``,
  ``>``, ``&`` escaped.

Byte offsets in messages count UTF-8 bytes of the raw text (as TDLib's do); entity offsets
and lengths count UTF-16 code units (as the Bot API's do).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

PARSE_MODES = {"markdownv2": "MarkdownV2", "markdown": "Markdown", "html": "HTML"}

_V2_RESERVED = "_*[]()~`>#+-=|{}.!"
_HTML_TAGS = {"a", "b", "strong", "i", "em", "s", "strike", "del", "u", "ins", "tg-spoiler", "tg-emoji", "span",
              "pre", "code", "blockquote"}
_HTML_TYPES = {"b": "bold", "strong": "bold", "i": "italic", "em": "italic", "s": "strikethrough",
               "strike": "strikethrough", "del": "strikethrough", "u": "underline", "ins": "underline",
               "tg-spoiler": "spoiler", "span": "spoiler", "code": "code", "pre": "pre", "a": "text_link",
               "tg-emoji": "custom_emoji", "blockquote": "blockquote"}
# TDLib's names of the entity types, as they appear in "Can't find end of <Type> entity".
_TD_NAMES = {"bold": "Bold", "italic": "Italic", "underline": "Underline", "strikethrough": "Strikethrough",
             "spoiler": "Spoiler", "code": "Code", "pre": "Pre", "pre_code": "PreCode", "text_link": "TextUrl",
             "custom_emoji": "CustomEmoji", "blockquote": "BlockQuote"}
_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}
_LINK_RE = re.compile(r"^(?:(?:https?|tg|ton)://\S+|(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}(?:[/?#:]\S*)?)$", re.I)


class ParseError(ValueError):
    """Text the Bot API refuses; ``str(error)`` is TDLib's message (without the Bot API prefix)."""


@dataclass(frozen=True)
class Formatted:
    """What a user sees of a formatted text."""

    text: str
    """The rendered text: markup parsed away, HTML entities decoded."""
    entities: tuple[dict[str, Any], ...] = field(default_factory=tuple)
    """Bot API ``MessageEntity`` dicts (UTF-16 offsets), sorted by offset."""


def utf16_len(text: str) -> int:
    if text.isascii():  # one UTF-16 unit a character (and no codec to look up on a run's first reply)
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def canonical_mode(parse_mode: Any) -> str | None:
    """``markdownv2`` -> ``MarkdownV2``; '' for none; None for a mode Telegram does not know."""
    if parse_mode in (None, ""):
        return ""
    return PARSE_MODES.get(str(parse_mode).lower())


def parse(text: str, parse_mode: Any) -> Formatted:
    """Parse ``text`` as the Bot API would for ``parse_mode``; raises ParseError with TDLib's message."""
    mode = canonical_mode(parse_mode)
    if not mode:
        return Formatted(text)
    if mode == "MarkdownV2":
        rendered, entities = _markdown_v2(text)
    elif mode == "Markdown":
        rendered, entities = _markdown(text)
    else:
        rendered, entities = _html(text)
    return Formatted(rendered, tuple(sorted(entities, key=lambda e: (e["offset"], -e["length"]))))


def check_link(url: str) -> str | None:
    """The URL a text link keeps, or None when Telegram would drop the link (not an error)."""
    url = url.strip()
    if not url or not _LINK_RE.match(url):
        return None
    return url if "://" in url else "http://" + url + ("/" if "/" not in url else "")


def _link_entity(offset: int, length: int, url: str) -> dict[str, Any] | None:
    m = re.fullmatch(r"tg://user\?id=(\d{1,20})", url.strip())
    if m:
        return {"type": "text_mention", "offset": offset, "length": length,
                "user": {"id": int(m.group(1)), "is_bot": False, "first_name": "User"}}
    link = check_link(url)
    if link is None:
        return None
    return {"type": "text_link", "offset": offset, "length": length, "url": link}


class _Text:
    """The raw text with TDLib's NUL-terminated look-ahead and UTF-8 byte offsets."""

    def __init__(self, text: str) -> None:
        self.s = text
        self.n = len(text)
        self._bytes = [0]
        for ch in text:
            self._bytes.append(self._bytes[-1] + len(ch.encode("utf-8", errors="surrogatepass")))

    def __getitem__(self, i: int) -> str:
        return self.s[i] if 0 <= i < self.n else "\0"

    def byte(self, i: int) -> int:
        return self._bytes[min(i, self.n)]


class _Out:
    """The rendered text being built, with its length in UTF-16 code units."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.u16 = 0

    def add(self, ch: str) -> None:
        self.parts.append(ch)
        self.u16 += 2 if ord(ch) > 0xFFFF else 1

    def text(self) -> str:
        return "".join(self.parts)


def _reserved(ch: str) -> ParseError:
    return ParseError(f"Character '{ch}' is reserved and must be escaped with the preceding '\\'")


def _markdown_v2(raw: str) -> tuple[str, list[dict[str, Any]]]:
    t, out = _Text(raw), _Out()
    entities: list[dict[str, Any]] = []
    stack: list[dict[str, Any]] = []  # open entities: type, offset, byte, begin (out length), argument
    i = 0
    while i < t.n:
        c = t[i]
        if c == "\\" and 0 < ord(t[i + 1]) <= 126:
            out.add(t[i + 1])
            i += 2
            continue
        top = stack[-1]["type"] if stack else ""
        reserved = "`" if top in ("code", "pre", "pre_code") else _V2_RESERVED
        if c not in reserved:
            out.add(c)
            i += 1
            continue
        if c == ">" and top not in ("code", "pre", "pre_code") and (i == 0 or t[i - 1] == "\n"):
            # a block quote: this line and the following lines that start with '>'
            start = out.u16
            j = i
            while True:
                j += 1  # skip the '>'
                while j < t.n and t[j] != "\n":
                    out.add(t[j])  # quoted lines are plain text here (nested markup not parsed)
                    j += 1
                if t[j] == "\n" and t[j + 1] == ">":
                    out.add("\n")
                    j += 1
                    continue
                break
            if out.u16 > start:
                entities.append({"type": "blockquote", "offset": start, "length": out.u16 - start})
            i = j
            continue
        ending = False
        if stack:
            ending = {
                "bold": c == "*", "italic": c == "_" and t[i + 1] != "_", "code": c == "`",
                "pre": c == "`" and t[i + 1] == "`" and t[i + 2] == "`",
                "pre_code": c == "`" and t[i + 1] == "`" and t[i + 2] == "`",
                "text_link": c == "]", "custom_emoji": c == "]", "underline": c == "_" and t[i + 1] == "_",
                "strikethrough": c == "~", "spoiler": c == "|" and t[i + 1] == "|",
            }.get(top, False)
        if not ending:
            begin_byte = t.byte(i)
            argument = ""
            if c == "_":
                if t[i + 1] == "_":
                    kind, i = "underline", i + 1
                else:
                    kind = "italic"
            elif c == "*":
                kind = "bold"
            elif c == "~":
                kind = "strikethrough"
            elif c == "|" and t[i + 1] == "|":
                kind, i = "spoiler", i + 1
            elif c == "[":
                kind = "text_link"
            elif c == "`":
                if t[i + 1] == "`" and t[i + 2] == "`":
                    i += 3
                    kind = "pre"
                    end = i
                    while not t[end].isspace() and t[end] not in "`\0":
                        end += 1
                    if i != end and end < t.n and t[end] != "`":
                        kind, argument, i = "pre_code", t.s[i:end], end
                    if t[i] in "\n\r":
                        i += 2 if t[i + 1] in "\n\r" and t[i] != t[i + 1] else 1
                    i -= 1
                else:
                    kind = "code"
            elif c == "!" and t[i + 1] == "[":
                kind, i = "custom_emoji", i + 1
            else:
                raise _reserved(c)
            stack.append({"type": kind, "offset": out.u16, "byte": begin_byte, "begin": len(out.parts),
                          "argument": argument})
            i += 1
            continue
        # the end of the innermost entity
        open_ = stack.pop()
        kind = open_["type"]
        entity: dict[str, Any] | None = {"type": kind, "offset": open_["offset"], "length": out.u16 - open_["offset"]}
        if kind in ("underline", "spoiler"):
            i += 1
        elif kind in ("pre", "pre_code"):
            i += 2
            entity["type"] = "pre"
            if kind == "pre_code":
                entity["language"] = open_["argument"]
        elif kind in ("text_link", "custom_emoji"):
            url = ""
            if t[i + 1] != "(":
                url = "".join(out.parts[open_["begin"]:])
            else:
                i += 2
                url_begin = t.byte(i)
                chars: list[str] = []
                while i < t.n and t[i] != ")":
                    if t[i] == "\\" and 0 < ord(t[i + 1]) <= 126:
                        chars.append(t[i + 1])
                        i += 2
                        continue
                    chars.append(t[i])
                    i += 1
                if t[i] != ")":
                    raise ParseError(f"Can't find end of a URL at byte offset {url_begin}")
                url = "".join(chars)
            if kind == "custom_emoji":
                m = re.fullmatch(r"tg://emoji\?id=(\d{1,20})", url)
                if m is None:
                    raise ParseError("Custom emoji URL must have an emoji identifier")
                entity["custom_emoji_id"] = m.group(1)
            else:
                entity = _link_entity(entity["offset"], entity["length"], url)
        if entity is not None and entity["length"] > 0:
            entities.append(entity)
        i += 1
    if stack:
        open_ = stack[-1]
        raise ParseError(f"Can't find end of {_TD_NAMES[open_['type']]} entity at byte offset {open_['byte']}")
    return out.text(), entities


def _markdown(raw: str) -> tuple[str, list[dict[str, Any]]]:
    t, out = _Text(raw), _Out()
    entities: list[dict[str, Any]] = []
    i = 0
    while i < t.n:
        c = t[i]
        if c == "\\" and t[i + 1] in "_*`[":
            out.add(t[i + 1])
            i += 2
            continue
        if c not in "_*`[":
            out.add(c)
            i += 1
            continue
        begin = i
        end_char = "]" if c == "[" else c
        is_pre = False
        language = ""
        i += 1
        if c == "`" and t[i] == "`" and t[i + 1] == "`":
            i += 2
            is_pre = True
            end = i
            while not t[end].isspace() and t[end] not in "`\0":
                end += 1
            if i != end and end < t.n and t[end] != "`":
                language, i = t.s[i:end], end
            if t[i] in "\n\r":
                i += 2 if t[i + 1] in "\n\r" and t[i] != t[i + 1] else 1
        offset, text_begin = out.u16, i
        while i < t.n and (t[i] != end_char or (is_pre and not (t[i + 1] == "`" and t[i + 2] == "`"))):
            out.add(t[i])
            i += 1
        if i >= t.n:
            raise ParseError(f"Can't find end of the entity starting at byte offset {t.byte(begin)}")
        length = out.u16 - offset
        if length:
            if c == "_":
                entities.append({"type": "italic", "offset": offset, "length": length})
            elif c == "*":
                entities.append({"type": "bold", "offset": offset, "length": length})
            elif c == "[":
                url = t.s[text_begin:i]
                if t[i + 1] == "(":
                    i += 2
                    start = i
                    while i < t.n and t[i] != ")":
                        i += 1
                    url = t.s[start:i]
                link = _link_entity(offset, length, url)
                if link is not None:
                    entities.append(link)
            elif is_pre:
                entities.append({"type": "pre", "offset": offset, "length": length,
                                 **({"language": language} if language else {})})
            else:
                entities.append({"type": "code", "offset": offset, "length": length})
        if is_pre:
            i += 2
        i += 1
    return out.text(), entities


def _html_entity(t: _Text, i: int) -> tuple[str, int] | None:
    """The character an ``&...;`` at ``i`` stands for and the index after it, or None (kept as is)."""
    m = re.compile(r"&(?:#(\d{1,7})|#[xX]([0-9A-Fa-f]{1,6})|([A-Za-z]{2,4}));").match(t.s, i)
    if m is None:
        return None
    if m.group(3):
        ch = _NAMED.get(m.group(3))
        return (ch, m.end()) if ch else None
    code = int(m.group(1)) if m.group(1) else int(m.group(2), 16)
    if code == 0 or code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        return None
    return chr(code), m.end()


def _html(raw: str) -> tuple[str, list[dict[str, Any]]]:
    t, out = _Text(raw), _Out()
    entities: list[dict[str, Any]] = []
    stack: list[dict[str, Any]] = []
    i = 0
    while i < t.n:
        c = t[i]
        if c == "&":
            decoded = _html_entity(t, i)
            if decoded is not None:
                out.add(decoded[0])
                i = decoded[1]
                continue
        if c != "<":
            out.add(c)
            i += 1
            continue
        begin = i
        begin_byte = t.byte(begin)
        i += 1
        if t[i] != "/":
            while not t[i].isspace() and t[i] not in ">\0":
                i += 1
            if t[i] == "\0":
                raise ParseError(f"Unclosed start tag at byte offset {begin_byte}")
            tag = t.s[begin + 1:i].lower()
            if tag not in _HTML_TAGS:
                raise ParseError(f'Unsupported start tag "{tag}" at byte offset {begin_byte}')
            argument = ""
            while t[i] != ">":
                while t[i] != "\0" and t[i].isspace():
                    i += 1
                if t[i] == ">":
                    break
                attr_begin = i
                while not t[i].isspace() and t[i] not in "=\0":
                    i += 1
                name = t.s[attr_begin:i]
                if not name:
                    raise ParseError(f'Empty attribute name in the tag "{tag}" at byte offset {begin_byte}')
                while t[i] != "\0" and t[i].isspace():
                    i += 1
                if t[i] != "=":
                    raise ParseError(f'Expected equal sign in declaration of an attribute of the tag "{tag}" '
                                     f"at byte offset {begin_byte}")
                i += 1
                while t[i] != "\0" and t[i].isspace():
                    i += 1
                if t[i] == "\0":
                    raise ParseError(f'Unclosed start tag "{tag}" at byte offset {begin_byte}')
                if t[i] not in "'\"":
                    token_begin = i
                    while t[i].isalnum() or t[i] in ".-":
                        i += 1
                    value = t.s[token_begin:i].lower()
                    if not t[i].isspace() and t[i] != ">":
                        raise ParseError(f"Unexpected end of name token at byte offset {t.byte(token_begin)}")
                else:
                    quote = t[i]
                    i += 1
                    chars: list[str] = []
                    while t[i] != quote and t[i] != "\0":
                        if t[i] == "&":
                            decoded = _html_entity(t, i)
                            if decoded is not None:
                                chars.append(decoded[0])
                                i = decoded[1]
                                continue
                        chars.append(t[i])
                        i += 1
                    if t[i] == quote:
                        i += 1
                    value = "".join(chars)
                if t[i] == "\0":
                    raise ParseError(f"Unclosed start tag at byte offset {begin_byte}")
                if tag == "a" and name == "href":
                    argument = value
                elif tag == "code" and name == "class" and value.startswith("language-"):
                    argument = value[9:]
                elif tag == "span" and name == "class" and value.startswith("tg-"):
                    argument = value[3:]
                elif tag == "tg-emoji" and name == "emoji-id":
                    argument = value
                elif tag == "blockquote" and name == "expandable":
                    argument = "1"
            if tag == "span" and argument != "spoiler":
                raise ParseError(f'Tag "span" must have class "tg-spoiler" at byte offset {begin_byte}')
            stack.append({"tag": tag, "argument": argument, "offset": out.u16, "begin": len(out.parts)})
            i += 1
            continue
        # an end tag
        if not stack:
            raise ParseError(f"Unexpected end tag at byte offset {begin_byte}")
        while not t[i].isspace() and t[i] not in ">\0":
            i += 1
        end_name = t.s[begin + 2:i].lower()
        while t[i] != "\0" and t[i].isspace():
            i += 1
        if t[i] != ">":
            raise ParseError(f"Unclosed end tag at byte offset {begin_byte}")
        open_ = stack.pop()
        tag = open_["tag"]
        if end_name and end_name != tag:
            raise ParseError(f'Unmatched end tag at byte offset {begin_byte}, expected "</{tag}>", '
                             f'found "</{end_name}>"')
        length = out.u16 - open_["offset"]
        if length > 0:
            kind = _HTML_TYPES[tag]
            entity: dict[str, Any] | None = {"type": kind, "offset": open_["offset"], "length": length}
            if tag == "a":
                url = open_["argument"] or "".join(out.parts[open_["begin"]:])
                entity = _link_entity(open_["offset"], length, url)
            elif tag == "tg-emoji":
                if not open_["argument"].isdigit():
                    raise ParseError("Invalid custom emoji identifier specified")
                entity["custom_emoji_id"] = open_["argument"]
            elif tag == "blockquote" and open_["argument"]:
                entity["type"] = "expandable_blockquote"
            elif tag == "pre":
                # <pre><code class="language-x">...</code></pre> is one pre entity with a language
                inner = [e for e in entities if e["type"] == "code" and e["offset"] == open_["offset"]
                         and e["length"] == length]
                for e in inner:
                    entities.remove(e)
                    if e.get("_language"):
                        entity["language"] = e["_language"]
            elif tag == "code" and open_["argument"]:
                entity["_language"] = open_["argument"]
            if entity is not None:
                entities.append(entity)
        i += 1
    if stack:
        raise ParseError(f'Can\'t find end tag corresponding to start tag "{stack[-1]["tag"]}"')
    for e in entities:
        e.pop("_language", None)
    return out.text(), entities


__all__ = ["Formatted", "PARSE_MODES", "ParseError", "canonical_mode", "check_link", "parse", "utf16_len"]
