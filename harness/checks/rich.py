"""What a real chat shows beyond text: buttons, attachments, typing, and channel size limits.

- ``buttons: {contains: [twitter, linkedin]}`` (``min: n`` too): inline keyboard / interactive
  button labels on the turn's replies. ``contains`` matches a substring of a label, case
  ignored, like ``reply.contains`` matches a substring of the text ("Book an appointment"
  finds "📅 Book an appointment"); ``exact: [labels]`` wants whole labels, character for
  character.
- ``attachments: {kind: document}`` (``min``, ``max``): documents / photos the agent sent
  to the user in the turn.
- ``typing_before_reply: true``: a typing indicator (Telegram ``sendChatAction``, WhatsApp
  mark-read with ``typing_indicator``) reached the emulator before the turn's first reply.
- ``channel_limits: true``: no message the agent sent in the turn (reply or post, accepted
  or refused) is over what the channel takes: Telegram text 4,096 (UTF-16 units; longer
  messages are rejected, or must be split), captions 1,024; WhatsApp text body 4,096.
"""

from __future__ import annotations

from typing import Any, Literal, Mapping

from pydantic import ConfigDict, Field

from harness.channels.telegram_entities import utf16_len  # not .telegram: that imports aiohttp
from harness.checks.base import as_list, own_replies, turn_never_ran, turn_obs, verdict
from harness.checks.params import AtLeastOne, Count, Flag, Params, Strings, examples
from harness.types import Case, Event, Evidence, Observation

EVAL = "rich@1"
TELEGRAM_TEXT_MAX = 4096
TELEGRAM_CAPTION_MAX = 1024
WHATSAPP_BODY_MAX = 4096


def buttons(case: Case, obs: Observation, turn: int, params: Mapping[str, Any]) -> Evidence:
    name = "buttons"
    want = as_list(params.get("contains", []))
    exact = as_list(params.get("exact", []))
    lo = params.get("min", 1 if not (want or exact) else 0)
    expected = " and ".join(x for x in ((f"a button label containing each of {want} (case ignored)" if want else ""),
                                         (f"buttons labelled exactly {exact}" if exact else "")) if x)
    expected += (f" (at least {lo})" if lo else "")
    if turn_obs(obs, turn) is None:
        return turn_never_ran(name, turn, obs, EVAL, expected)
    labels = [b for r in own_replies(obs, turn) for b in r.buttons]
    low = [b.lower() for b in labels]
    missing = [w for w in want if not any(w.lower() in label for label in low)]
    missing_exact = [w for w in exact if w not in labels]
    problems = []
    if missing:
        problems.append(f"no button label contains {missing}")
    if missing_exact:
        problems.append(f"no button labelled exactly {missing_exact}")
    if len(labels) < lo:
        problems.append(f"{len(labels)} buttons < {lo}")
    observed = ", ".join(labels) or "(no buttons)"
    reason = f"turn {turn}: " + ("; ".join(problems) if problems else f"buttons shown: {observed}")
    return verdict(name, turn, not problems, expected=expected, observed=observed, reason=reason, evaluator=EVAL)


def attachments(case: Case, obs: Observation, turn: int, params: Mapping[str, Any]) -> Evidence:
    name = "attachments"
    kind = params.get("kind")
    lo, hi = params.get("min", 1), params.get("max")
    expected = f"{kind or 'any'} attachments: at least {lo}" + (f", at most {hi}" if hi is not None else "")
    if turn_obs(obs, turn) is None:
        return turn_never_ran(name, turn, obs, EVAL, expected)
    sent = [r for r in own_replies(obs, turn) if r.kind in ("document", "photo", "image")
            and (kind is None or r.kind == kind or (kind == "photo" and r.kind == "image"))]
    n = len(sent)
    ok = n >= lo and (hi is None or n <= hi)
    observed = ", ".join(f"{r.kind}:{r.text[:40]!r}" for r in sent) or "(none)"
    return verdict(name, turn, ok, expected=expected, observed=observed,
                   reason=f"turn {turn}: {n} {kind or ''} attachments".replace("  ", " "), evaluator=EVAL)


def _is_typing(e: Event) -> bool:
    if e.name.lower() == "telegram.sendchataction":
        return e.status < 400
    return e.name == "whatsapp.mark_read" and bool(e.meta.get("typing"))


def typing_before_reply(case: Case, obs: Observation, turn: int, params: Any) -> Evidence:
    name = "typing_before_reply"
    expected = "a typing indicator before the first reply"
    t = turn_obs(obs, turn)
    if t is None:
        return turn_never_ran(name, turn, obs, EVAL, expected)
    replies = own_replies(obs, turn)
    if not replies:
        return verdict(name, turn, False, expected=expected, observed="(no reply)",
                       reason=f"turn {turn}: no reply, so no typing before it", evaluator=EVAL)
    first = replies[0].at
    typing = [e for e in t.events if _is_typing(e)]
    before = [e for e in typing if e.at <= first]
    observed = ", ".join(f"{e.name} at +{1000 * (e.at - t.sent_at):.0f}ms" for e in typing) or "(no typing)"
    observed += f"; first reply at +{1000 * (first - t.sent_at):.0f}ms"
    reason = (f"turn {turn}: typing shown {1000 * (first - before[0].at):.0f}ms before the first reply" if before
              else f"turn {turn}: no typing indicator before the first reply")
    return verdict(name, turn, bool(before), expected=expected, observed=observed, reason=reason, evaluator=EVAL)


def _sent_text(e: Event) -> tuple[str, str, int] | None:
    """(what, text, limit) of a message-carrying call, or None."""
    req = e.request or {}
    n = e.name.lower()
    if n in ("telegram.sendmessage", "telegram.editmessagetext") and isinstance(req.get("text"), str):
        return f"Telegram {e.name.split('.', 1)[1]} text", req["text"], TELEGRAM_TEXT_MAX
    if n in ("telegram.senddocument", "telegram.sendphoto") and isinstance(req.get("caption"), str):
        return f"Telegram {e.name.split('.', 1)[1]} caption", req["caption"], TELEGRAM_CAPTION_MAX
    if e.name == "whatsapp.send" and isinstance(req.get("text"), Mapping) and isinstance(req["text"].get("body"), str):
        return "WhatsApp text body", req["text"]["body"], WHATSAPP_BODY_MAX
    return None


def channel_limits(case: Case, obs: Observation, turn: int, params: Any) -> Evidence:
    name = "channel_limits"
    expected = (f"Telegram text <= {TELEGRAM_TEXT_MAX}, captions <= {TELEGRAM_CAPTION_MAX}; "
                f"WhatsApp body <= {WHATSAPP_BODY_MAX}")
    t = turn_obs(obs, turn)
    if t is None:
        return turn_never_ran(name, turn, obs, EVAL, expected)
    over, longest = [], 0
    for e in t.events:
        found = _sent_text(e)
        if found is None:
            continue
        what, text, limit = found
        size = utf16_len(text) if what.startswith("Telegram") else len(text)
        longest = max(longest, size)
        if size > limit:
            refused = f", refused with HTTP {e.status}" if e.status >= 400 else ""
            over.append(f"{what} of {size} chars > {limit}{refused}")
    reason = (f"turn {turn}: " + "; ".join(over)) if over else f"turn {turn}: longest message {longest} chars"
    return verdict(name, turn, not over, expected=expected, observed=f"longest {longest} chars", reason=reason,
                   evaluator=EVAL)


# -- parameters -------------------------------------------------------------------------


class Buttons(AtLeastOne):
    """The inline-keyboard / interactive buttons of the turn's replies."""

    model_config = ConfigDict(json_schema_extra=examples({"contains": ["twitter", "linkedin"], "min": 2}))
    contains: Strings = Field(None, description="parts of labels (a substring, case ignored)")
    exact: Strings = Field(None, description="whole labels (case and emoji included)")
    min: Count = Field(None, description="at least this many buttons")


class Attachments(Params):
    """Documents / photos sent to the user in the turn."""

    model_config = ConfigDict(json_schema_extra=examples({"kind": "document", "min": 1}))
    kind: Literal["document", "photo"] | None = Field(None, description="which kind (absent: both)")
    min: Count = Field(None, description="at least this many")
    max: Count = Field(None, description="at most this many")


from harness.checks.base import CheckDef  # noqa: E402

CHECKS = (
    CheckDef("buttons", buttons, Buttons, EVAL),
    CheckDef("attachments", attachments, Attachments, EVAL),
    CheckDef("typing_before_reply", typing_before_reply, Flag, EVAL),
    CheckDef("channel_limits", channel_limits, Flag, EVAL),
)
