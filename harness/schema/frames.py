"""How the agent presents an answer: the case's ``judges:`` frame.

A golden answer is the content of a right reply, not the reply itself: an agent wraps it
("The document says: ...", "Summary of <title>: ... Your Twitter post was sent", a post
ending with "Source: <link>"). ``harness judges`` puts each golden answer and each wrong
answer derived from it into the same frame, so the case's format checks see a realistic
message and only the content differs. In a case file (``defaults:`` works too)::

    judges:
      reply: "Summary of {title}:\\n{answer}\\n\\nYour {platform} post was sent to WhatsApp."
      post: "{answer}\\n\\nSource: {source_url}"

Placeholders: ``{answer}`` (required in at least one of reply / post), ``{title}`` (the
first line of the case's source document), ``{platform}`` (the platform the request names,
capitalised as the agent writes it), ``{source_url}`` (a link to the source document).
Without a frame the answer is sent as the reply, and as the post when a check reads one.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from typing import Any

KEYS = ("reply", "post")
FIELDS = ("answer", "title", "platform", "source_url")
PLATFORMS = {"twitter": "Twitter", "linkedin": "LinkedIn", "facebook": "Facebook", "instagram": "Instagram",
             "whatsapp": "WhatsApp"}
SOURCE_BASE = "http://127.0.0.1:8000/c/judges"


@dataclass(frozen=True)
class Frame:
    reply: str | None = "{answer}"
    post: str | None = None

    def render(self, answer: str, *, title: str = "", platform: str = "", source: str = "") -> tuple[str, str]:
        values = {"answer": answer, "title": title, "platform": platform,
                  "source_url": f"{SOURCE_BASE}/{source}" if source else SOURCE_BASE}
        reply = self.reply.format(**values) if self.reply is not None else ""
        post = self.post.format(**values) if self.post is not None else ""
        return reply, post


def validate(value: Any) -> str | None:
    """What is wrong with a ``judges:`` table (None: nothing)."""
    if not isinstance(value, dict) or not value:
        return "judges must be a table {reply: '...{answer}...', post: '...'}"
    for k, v in value.items():
        if k not in KEYS:
            return f"judges: unknown key {k!r} (known: {', '.join(KEYS)})"
        if not isinstance(v, str):
            return f"judges.{k} must be a string"
        try:
            names = [f for _, f, _, _ in string.Formatter().parse(v) if f is not None]
        except ValueError as exc:
            return f"judges.{k}: bad braces: {exc}"
        bad = [n for n in names if n not in FIELDS]
        if bad:
            return f"judges.{k}: unknown placeholder(s) {bad} (known: {', '.join('{' + f + '}' for f in FIELDS)})"
    if not any("{answer}" in v for v in value.values()):
        return "judges: reply or post must hold {answer}"
    return None


def frame_of(raw: dict | None, uses_post: bool) -> Frame:
    """The case's frame (raw ``judges:`` table, already validated)."""
    if not raw:
        return Frame(reply="{answer}", post="{answer}" if uses_post else None)
    return Frame(reply=raw.get("reply"), post=raw.get("post"))


def platform_in(text: str) -> str:
    """The platform a request names ('' when none), as the agent capitalises it."""
    for word, name in PLATFORMS.items():
        if re.search(rf"\b{word}\b", text or "", re.IGNORECASE):
            return name
    return ""


def title_of(document_text: str) -> str:
    for line in document_text.splitlines():
        if line.strip():
            return line.strip()
    return ""
