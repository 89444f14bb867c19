"""``reply.entities``: the formatting the user sees (bold, links, code...), from Telegram entities.

The Bot API emulator parses ``parse_mode`` text like Telegram and records the entities of
every reply (``Reply.entities``, UTF-16 offsets into the rendered text). This check asks
that each listed text is covered by an entity of the given type: ``{bold: Tuesday}`` holds
for ``You picked <b>Tuesday</b>`` (HTML) or ``You picked *Tuesday*`` (MarkdownV2). For
``text_link`` the value may also be the link's URL.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field, create_model

from harness.checks.base import CheckDef, as_list, own_replies, turn_never_ran, turn_obs, verdict
from harness.checks.params import AtLeastOne, Texts, examples
from harness.types import Case, Evidence, Observation, Reply

EVAL = "entities@1"
TYPES = ("bold", "italic", "underline", "strikethrough", "spoiler", "code", "pre", "text_link", "text_mention",
         "custom_emoji", "blockquote", "expandable_blockquote", "url", "mention", "hashtag", "bot_command")


def entity_text(text: str, entity: dict) -> str:
    """The part of ``text`` an entity covers (offsets are UTF-16 code units)."""
    raw = text.encode("utf-16-le", errors="surrogatepass")
    start, length = _count(entity.get("offset")), _count(entity.get("length"))
    if start is None or length is None:  # an entity the agent stored by hand, not as Telegram would
        return ""
    return raw[2 * start: 2 * (start + length)].decode("utf-16-le", errors="replace")


def _count(value: Any) -> int | None:
    """A non-negative integer offset or length; None for anything else ("0", 1.5, None, True)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def found(replies: tuple[Reply, ...], kind: str) -> list[str]:
    """What the entities of type ``kind`` cover in these replies (and a link's URL)."""
    out: list[str] = []
    for r in replies:
        for e in r.entities:
            if e.get("type") == kind:
                out.append(entity_text(r.text, dict(e)))
                if e.get("url"):
                    out.append(str(e["url"]))
    return out


def entities(case: Case, obs: Observation, turn: int, params: dict) -> Evidence:
    name = "reply.entities"
    if turn_obs(obs, turn) is None:
        return turn_never_ran(name, turn, obs, EVAL, str(params))
    replies = own_replies(obs, turn)
    missing, seen = [], {}
    for kind, wanted in params.items():
        have = found(replies, kind)
        seen[kind] = have
        missing += [f"{kind} {w!r}" for w in as_list(wanted) if w not in have]
    modes = sorted({r.parse_mode or "none" for r in replies})
    observed = "; ".join(f"{k}: {v!r}" for k, v in seen.items()) + f" (parse_mode {', '.join(modes) or 'none'})"
    return verdict(name, turn, not missing, expected=f"entities {params!r}",
                   observed=observed if replies else "(no reply)",
                   reason="every entity present" if not missing else f"missing {', '.join(missing)}",
                   evaluator=EVAL)


class _Entities(AtLeastOne):
    model_config = ConfigDict(json_schema_extra=examples({"bold": "Tuesday", "text_link": "https://example.com"}))


Entities = create_model(
    "Entities", __base__=_Entities, __doc__="Per entity type: the text(s) it must cover in the turn's replies.",
    **{kind: (Texts, Field(None)) for kind in TYPES})


CHECKS = (CheckDef("reply.entities", entities, Entities, EVAL),)
