"""``reply.*``, ``post.*`` and ``replies``: what the agent said in a turn, checked as text.

Each comparison is ``(text, params, messages) -> (ok, expected, reason)``; ``text_check``
turns one into a check over the replies to the user or over the posts sent elsewhere.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import ConfigDict, Field, model_validator

from harness.checks.base import (RegexTooSlow, as_list, clip, joined_text, messages, own_replies,
                                 refused_note, search, turn_never_ran, turn_obs, unavailable, verdict)
from harness.checks.compat import raw_hint
from harness.checks.params import FIX, AtLeastOne, Count, Regex, Strings, examples, ordered
from harness.types import Case, Evidence, Observation

EVAL = "text@1"


#: The parameters of the text comparisons (``reply.*``, ``reply_raw.*``, ``post.*``).
RegexParam = Annotated[Regex, Field(json_schema_extra=examples("(?i)invalid"))]
StringsParam = Annotated[Strings, Field(json_schema_extra=examples(["Summary", "Source:"]))]
CharsParam = Annotated[Count, Field(description="characters", json_schema_extra=examples(280))]


def text_check(name: str, compare, of: str = "reply"):
    """Build a check from a comparison; the shared plumbing (turn exists, text joined) lives here.

    ``of`` picks the messages: the replies to the user, or the posts sent elsewhere.
    """

    def check(case: Case, obs: Observation, turn: int, params: Any) -> Evidence:
        try:
            return judged(case, obs, turn, params)
        except RegexTooSlow as exc:
            return unavailable(name, turn, expected=str(params), reason=f"turn {turn}: {exc.message}", evaluator=EVAL)

    def judged(case: Case, obs: Observation, turn: int, params: Any) -> Evidence:
        if turn_obs(obs, turn) is None:
            return turn_never_ran(name, turn, obs, EVAL, str(params))
        text = joined_text(obs, turn, of)
        ok, expected, reason = compare(text, params, messages(obs, turn, of))
        if not ok and text and of == "reply":
            raw = joined_text(obs, turn, "reply_raw")
            if raw != text:  # formatted: would the text as sent (markup included) pass? (checks/compat.py)
                reason += raw_hint(name, compare(raw, params, messages(obs, turn, "reply_raw"))[0])
        if not text:
            reason = f"no {'post' if of == 'post' else 'reply'}: " + reason + refused_note(obs, turn)
            stray = turn_obs(obs, turn).unattributed if of == "post" else ()
            if stray:  # a post went out but carried nothing of this case: a wrong link, not no post
                reason += (f"; {len(stray)} message(s) in this turn's time could not be attributed to any case "
                           f"(no chat, number or document link of it), e.g. to {stray[0].chat}: "
                           f"{clip(stray[0].text, 120)!r}")
        return verdict(name, turn, ok, expected=expected, observed=text or f"(no {of})", reason=reason,
                       evaluator=EVAL)

    check.__name__ = name.replace(".", "_")
    return check


def regex(text: str, pattern: str, _replies):
    ok = search(pattern, text) is not None
    return ok, f"matches /{pattern}/", ("matched" if ok else f"no match for /{pattern}/")


def not_regex(text: str, pattern: str, _replies):
    m = search(pattern, text)
    return m is None, f"does not match /{pattern}/", ("no match" if m is None else
                                                       f"matched {m.group(0)!r} at {m.start()}")


def contains(text: str, needles, _replies):
    return _contains(text, needles)


def contains_all(text: str, needles, replies):
    return _contains(text, needles)


def _contains(text: str, needles):
    missing = [n for n in as_list(needles) if n not in text]
    return not missing, f"contains {as_list(needles)!r}", ("all present" if not missing else
                                                                  f"missing {missing!r}")


def not_contains(text: str, needles, _replies):
    present = [n for n in as_list(needles) if n in text]
    return not present, f"contains none of {as_list(needles)!r}", ("none present" if not present else
                                                                   f"found {present!r}")


def max_chars(_text: str, limit: int, replies):
    longest = max((len(r.text) for r in replies), default=0)
    return longest <= limit, f"each reply <= {limit} chars", (
        f"longest reply {longest} chars <= {limit}" if longest <= limit else f"a reply has {longest} chars > {limit}")


def min_chars(text: str, limit: int, _replies):
    n = len(text)
    return n >= limit, f">= {limit} chars", (f"{n} chars >= {limit}" if n >= limit else f"{n} chars < {limit}")


def replies(case: Case, obs: Observation, turn: int, params: dict) -> Evidence:
    name = "replies"
    if turn_obs(obs, turn) is None:
        return turn_never_ran(name, turn, obs, EVAL, str(params))
    t = turn_obs(obs, turn)
    over = (t.overflow or {}).get("chats", {}).get(t.chat or obs.chat_id, 0)  # counted beyond the caps
    n = len(own_replies(obs, turn)) + over
    lo = params.get("exact", params.get("min", 0))
    hi = params.get("exact", params.get("max"))
    want = f"exactly {lo}" if "exact" in params else f"between {lo} and {hi}" if hi is not None else f"at least {lo}"
    ok = n >= lo and (hi is None or n <= hi)
    reason = f"{n} replies, wanted {want}" + (refused_note(obs, turn) if n < lo else "") + (
        f" ({over} beyond the harness's cap of {t.overflow.get('max_replies')} replies / "
        f"{t.overflow.get('max_reply_bytes')} bytes per turn were counted, not stored)" if over else "")
    texts = " | ".join(r.text[:80] for r in own_replies(obs, turn))
    return verdict(name, turn, ok, expected=f"{want} replies", observed=f"{n}: {texts}" if n else "0",
                   reason=reason, evaluator="count@1")


class Replies(AtLeastOne):
    """How many replies reach the user's chat in the turn."""

    model_config = ConfigDict(json_schema_extra=examples({"min": 1, "max": 1}, {"exact": 0}))
    min: Count = Field(None, description="at least this many")
    max: Count = Field(None, description="at most this many")
    exact: Count = Field(None, description="exactly this many ({exact: 0}: silence); excludes min/max")

    check_order = ordered("min", "max")

    @model_validator(mode="after")
    def _exact_alone(self):
        if self.exact is not None and (self.min is not None or self.max is not None):
            raise ValueError(f"use either exact or min/max"
                             f"{FIX}e.g. replies: {{exact: 1}} or replies: {{min: 1, max: 2}}")
        return self
