"""What every check shares: its signature, its registry entry and evidence helpers.

A check is a pure function ``(case, observation, turn, params) -> Evidence``; its
parameters' type (``CheckDef.params``, a pydantic model or an annotated type: harness/checks/params.py)
validates them at load time, so a bad case never reaches the run; the same type gives the
JSON Schema and the docs' table.
"""

from __future__ import annotations

import inspect
import warnings
from dataclasses import dataclass, replace
from typing import Any, Callable

from harness.checks.params import legacy, problem
from harness.types import SOURCE_DOUBLE, Case, Evidence, Observation, Reply, TurnObservation

CheckFn = Callable[[Case, Observation, int, Any], Evidence]

OBSERVED_MAX = 400


@dataclass(frozen=True)
class CheckDef:
    """One entry of the dispatch table."""

    name: str
    fn: CheckFn
    params: Any
    """The parameters' type (harness/checks/params.py): what ``<name>: ...`` may say."""
    evaluator: str
    """Name@version recorded in the evidence."""
    uses_services: bool = False
    """True: an async check called with the run's Services as a fifth argument (similarity,
    critic); it runs after the case's pure checks, and only if they all passed."""

    def __post_init__(self) -> None:
        if inspect.isfunction(self.params):  # a plugin's validator, as CheckDef took before the types
            warnings.warn(f"check {self.name!r}: pass the parameters' type to CheckDef (harness/checks/params.py), "
                          "not a validator function", DeprecationWarning, stacklevel=3)
            object.__setattr__(self, "params", legacy(self.params))

    def validate(self, value: Any) -> str | None:
        """What is wrong with ``value`` as this check's parameters (None when it holds)."""
        return problem(self.params, value, self.name)


def clip(text: str, limit: int = OBSERVED_MAX) -> str:
    text = text or ""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def turn_obs(obs: Observation, turn: int) -> TurnObservation | None:
    return obs.turns[turn] if 0 <= turn < len(obs.turns) else None


def own_replies(obs: Observation, turn: int) -> tuple[Reply, ...]:
    """Replies of ``turn`` addressed to the case's own chat (posts elsewhere are events, not replies)."""
    t = turn_obs(obs, turn)
    return t.replies if t else ()


def posts(obs: Observation, turn: int) -> tuple[Reply, ...]:
    """Messages the agent sent during ``turn`` to anyone but the user (e.g. a WhatsApp post
    published to a channel), in arrival order."""
    t = turn_obs(obs, turn)
    if t is None:
        return ()
    own = {id(r) for r in t.replies}
    users = {obs.chat_id, *obs.user_chats}
    return tuple(e.reply for e in t.events if e.reply is not None and id(e.reply) not in own
                 and not (e.reply.channel == obs.channel and e.reply.chat in users))


def messages(obs: Observation, turn: int, of: str = "reply") -> tuple[Reply, ...]:
    """The messages a text check reads: the user's replies (``reply``, and ``reply_raw`` for
    their text as sent, markup included) or the posts (``post``)."""
    return posts(obs, turn) if of == "post" else own_replies(obs, turn)


def message_text(reply: Reply, of: str = "reply") -> str:
    """What a text check reads of one message: what the user sees (markup parsed away), or
    for ``reply_raw`` the text exactly as the agent sent it."""
    return reply.sent_text if of == "reply_raw" else reply.text


#: Calls that would have shown the user something, had the platform accepted them.
SEND_CALLS = ("telegram.sendMessage", "telegram.sendDocument", "telegram.sendPhoto", "telegram.editMessageText",
              "telegram.editMessageCaption", "telegram.sendAudio", "telegram.sendVoice", "telegram.sendVideo",
              "telegram.sendAnimation", "telegram.sendVideoNote", "telegram.sendSticker", "telegram.sendLocation",
              "telegram.sendVenue", "telegram.sendContact", "telegram.sendPoll", "telegram.sendDice",
              "telegram.sendMediaGroup", "telegram.copyMessage", "telegram.forwardMessage", "whatsapp.send")


def refused_sends(obs: Observation, turn: int) -> list[str]:
    """The agent's sends in ``turn`` that the platform refused, each with its status and error
    ("telegram.sendMessage 400 Bad Request: can't parse entities: ..."): why the user saw nothing."""
    t = turn_obs(obs, turn)
    out: list[str] = []
    for e in t.events if t else ():
        if e.name not in SEND_CALLS or e.status < 400:
            continue
        error = e.error or ""
        body = e.response.get("error") if isinstance(e.response, dict) else None
        details = (body.get("error_data") or {}).get("details") if isinstance(body, dict) else None
        if details:
            error = f"{error}: {details}"
        out.append(f"{e.name} {e.status} {error}".strip())
    return out


def refused_note(obs: Observation, turn: int) -> str:
    """'' or "; the platform refused the agent's send(s): ..." for a reason text."""
    refused = refused_sends(obs, turn)
    if not refused:
        return ""
    more = f" (+{len(refused) - 2} more)" if len(refused) > 2 else ""
    return "; the platform refused the agent's send(s): " + " | ".join(clip(r, 200) for r in refused[:2]) + more


def joined_text(obs: Observation, turn: int, of: str = "reply") -> str:
    return "\n".join(message_text(r, of) for r in messages(obs, turn, of))


#: The most CPU one regular expression of a case file may spend on one agent text (seconds).
REGEX_SECONDS = 1.0


class RegexTooSlow(Exception):
    """A case's regex backtracked past REGEX_SECONDS on the agent's text: the check is unavailable."""

    def __init__(self, pattern: str, size: int):
        self.message = (f"/{clip(pattern, 80)}/ backtracked more than {REGEX_SECONDS:g} s on {size:,} characters "
                        "of the agent's text (a nested quantifier such as (a+)+?), so it cannot be judged: "
                        "rewrite it so it cannot backtrack without end")
        super().__init__(self.message)


def search(pattern: str, text: str):
    """``re.search`` for a case file's pattern against what the agent sent, with a time limit:
    Python's ``re`` has none, and a pattern like ``(a+)+$`` on a reply of 40 ``a``s and a ``!``
    held the run (and its event loop) for hours. The ``regex`` module (re-compatible; tiktoken's
    dependency) takes a timeout; past it, RegexTooSlow."""
    import regex as _regex

    try:
        return _regex.search(pattern, text, timeout=REGEX_SECONDS)
    except TimeoutError:
        raise RegexTooSlow(pattern, len(text)) from None


def verdict(name: str, turn: int, ok: bool, *, expected: str, observed: str, reason: str,
            evaluator: str, score: float | None = None) -> Evidence:
    return Evidence(check=name, turn=turn, availability="ready", passed=ok, score=score,
                    expected=expected, observed=clip(observed), reason=reason, evaluator=evaluator)


def unavailable(name: str, turn: int | None, *, expected: str, reason: str, evaluator: str) -> Evidence:
    return Evidence(check=name, turn=turn, availability="unavailable", passed=None, expected=expected,
                    reason=reason, evaluator=evaluator)


def llm_sourced(evidence: Evidence, events) -> Evidence:
    """``evidence`` labelled ``source: test-double`` when any of the LLM calls it judged was
    answered by the model double (``meta["double"]``, harness/sandbox/model_double.py)."""
    if any(e.name == "llm" and e.meta.get("double") for e in events):
        return replace(evidence, source=SOURCE_DOUBLE)
    return evidence


def turn_never_ran(name: str, turn: int, obs: Observation, evaluator: str, expected: str) -> Evidence:
    """A check on a turn the case never reached fails, saying why the case stopped."""
    why = obs.error or "the case stopped before this turn"
    return verdict(name, turn, False, expected=expected, observed="(turn not run)",
                   reason=f"turn {turn} never ran: {why}", evaluator=evaluator)


def as_list(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def probed_state(name: str, turn: int, obs: Observation, expected: str, evaluator: str, what: str):
    """The turn's state snapshot, or the evidence to return instead: the turn never ran
    (fails) or the target has no probe / the probe failed (unavailable, never passed)."""
    t = turn_obs(obs, turn)
    if t is None:
        return None, turn_never_ran(name, turn, obs, evaluator, expected)
    if t.state is None:
        why = t.state_error or "the target has no state probe ([target].state_url is not set)"
        return None, unavailable(name, turn, expected=expected, reason=f"turn {turn}: {what} unavailable: {why}",
                                 evaluator=evaluator)
    return t, None


def unattributed_reason(obs: Observation, turn: int, of: str = "llm", tools: Any = None) -> str | None:
    """Why a check on the turn's calls cannot be decided: calls no case could claim came while
    this case ran with others (``TurnObservation.unattributed_calls``, harness/sandbox/router.py),
    and any of them may have been this case's. ``of``: ``llm``, ``tools`` (``tools``: only
    these tool names; None: any tool) or ``any``. None when every call was attributed."""
    t = turn_obs(obs, turn)
    mark = t.unattributed_calls if t is not None else None
    if not mark:
        return None
    parts = []
    if of in ("llm", "any") and mark.get("llm"):
        n = mark["llm"]
        parts.append(f"{n} LLM call{'s' if n != 1 else ''}")
    if of in ("tools", "any"):
        named = {k: v for k, v in (mark.get("tools") or {}).items()
                 if tools is None or any(k.lower() == x.lower() for x in as_list(tools))}
        n = sum(named.values())
        if n:
            parts.append(f"{n} tool call{'s' if n != 1 else ''} ({', '.join(sorted(named))})")
    if not parts:
        return None
    why = (f"; {mark['ambiguous']} of them held a text several running cases sent" if mark.get("ambiguous") else "")
    return (f"{' and '.join(parts)} during this case could not be attributed to a case while {mark.get('running', 2)} "
            f"ran{why}: this case's own calls may be among them (give the calls a user/metadata id or a "
            f"distinct text, or run with --concurrency 1)")
