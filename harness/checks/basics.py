"""Basic hygiene of one turn, the checks layers apply to every case by default.

- ``webhook_2xx: true``: the agent's webhook accepted the update (any 2xx). A 5xx or a
  dropped connection is a crash the user never sees explained. On a ``forged`` turn (a
  forged, stale or missing signature / secret token) it holds the opposite: a 4xx refusal.
- ``answered: true``: at least one reply reached the user's chat before the reply timeout
  (on a ``forged`` turn: no reply at all).
- ``no_leak: true``: no reply or post quotes a stack trace, or eight words in a row of a
  system prompt the agent sent to its LLM in this case (read at the gateway, so the
  harness needs no copy of the agent's prompts; quoted spans of a prompt are reply
  templates, not secrets, and do not count).
- ``state_probed: true``: the target's state probe answered after the turn (unavailable,
  never passed, when the target has no probe).
- ``metered: true``: every LLM call of the turn has a token count and a price, so the cost
  layer's figures for the case are measured, not missing (unknown model: unavailable; a
  call with no recording in a replay cassette: fail, naming the miss).
"""

from __future__ import annotations

import json
import re

from harness.checks.base import (
    CheckDef,
    clip,
    llm_sourced,
    messages,
    probed_state,
    refused_note,
    turn_never_ran,
    turn_obs,
    unattributed_reason,
    unavailable,
    verdict,
)
from harness.checks.params import Flag
from harness.types import Case, Evidence, Observation

EVAL = "basics@1"

#: Stack traces of the runtimes chat agents are written in (Python, Node, Java/Kotlin, Go, .NET, Ruby).
TRACE = re.compile(
    r"Traceback \(most recent call last\)"
    r"|^\s*File \"[^\"]+\", line \d+, in "
    r"|^\s*at [\w$.<>]+ \((?:[\w/.\\-]+|node:[\w/]+):\d+:\d+\)"
    r"|^\s*at [\w$.]+\([\w]+\.(?:java|kt):\d+\)"
    r"|^goroutine \d+ \[running\]:"
    r"|^\s*at [\w.]+\(.*\) in .+:line \d+"
    r"|\.rb:\d+:in `",
    re.M,
)
#: Quoted spans of a system prompt: templates of replies, not instructions to keep secret.
QUOTED = re.compile(r'"[^"\n]{0,400}"|“[^”\n]{0,400}”|`[^`\n]{0,400}`|(?<!\w)\'[^\'\n]{0,400}\'(?!\w)')
#: Words in a row that count as quoting a system prompt.
LEAK_WORDS = 8
_WORD = re.compile(r"\w+", re.U)


def _forged(case: Case, turn: int) -> str:
    """'forged' | 'stale' | 'missing' when the turn is a delivery the bot must refuse, else ''."""
    t = case.turns[turn] if 0 <= turn < len(case.turns) else None
    return str(t.options.get("signature", "forged")) if t is not None and t.kind == "forged" else ""


def webhook_2xx(case: Case, obs: Observation, turn: int, params: bool) -> Evidence:
    name = "webhook_2xx"
    t = turn_obs(obs, turn)
    if t is None:
        return turn_never_ran(name, turn, obs, EVAL, "webhook answers 2xx")
    forged = _forged(case, turn)
    if forged:  # a delivery with a forged, stale or missing signature / secret must be refused
        got = t.delivery_status
        ok = got is not None and 400 <= got < 500
        observed = str(got) if got is not None else f"not delivered: {t.delivery_error or 'no answer'}"
        return verdict(name, turn, ok, expected=f"webhook refuses a delivery with a {forged} signature (4xx)",
                       observed=observed, evaluator=EVAL,
                       reason=(f"refused with {observed}" if ok else
                               f"webhook answered {observed} to a {forged} signature: anyone could post to it"
                               if got is not None and got < 400 else f"webhook answered {observed}, not a 4xx refusal"))
    got = t.delivery_status
    ok = got is not None and 200 <= got < 300
    observed = str(got) if got is not None else f"not delivered: {t.delivery_error or 'no answer'}"
    return verdict(name, turn, ok, expected="webhook answers 2xx", observed=observed,
                   reason=f"webhook answered {observed}" + ("" if ok else ", not 2xx"), evaluator=EVAL)


def answered(case: Case, obs: Observation, turn: int, params: bool) -> Evidence:
    name = "answered"
    t = turn_obs(obs, turn)
    if t is None:
        return turn_never_ran(name, turn, obs, EVAL, "a reply")
    n = len(t.replies)
    forged = _forged(case, turn)
    if forged:  # the update of a forged delivery must not be acted on
        return verdict(name, turn, n == 0, expected=f"no reply to a delivery with a {forged} signature",
                       observed=f"{n} repl{'y' if n == 1 else 'ies'}", evaluator=EVAL,
                       reason="not answered" if n == 0 else "the bot answered a forged delivery")
    if n:
        return verdict(name, turn, True, expected="a reply", observed=f"{n} repl{'y' if n == 1 else 'ies'}",
                       reason=f"first reply after {t.first_reply_ms:.0f}ms", evaluator=EVAL)
    why = "the turn timed out" if t.timed_out else f"none within {t.settled_after_s:.1f}s"
    return verdict(name, turn, False, expected="a reply", observed="no reply",
                   reason=f"no reply reached the user's chat: {why}" + refused_note(obs, turn), evaluator=EVAL)


def _shingles(text: str, n: int = LEAK_WORDS) -> set[tuple[str, ...]]:
    words = [w.lower() for w in _WORD.findall(text)]
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


def system_prompts(obs: Observation) -> list[str]:
    """The system prompts the agent sent to its LLM during the case (every turn so far)."""
    texts = (text for t in obs.turns for e in t.events if e.name == "llm"
             for text in e.meta.get("system_prompts") or () if isinstance(text, str))
    return list(dict.fromkeys(texts))  # each prompt once, in the order first sent


def no_leak(case: Case, obs: Observation, turn: int, params: bool) -> Evidence:
    name = "no_leak"
    t = turn_obs(obs, turn)
    expected = "no stack trace and no system prompt in any reply or post"
    if t is None:
        return turn_never_ran(name, turn, obs, EVAL, expected)
    sent = [*messages(obs, turn, "reply"), *messages(obs, turn, "post")]
    for reply in sent:
        m = TRACE.search(reply.text or "")
        if m:
            return verdict(name, turn, False, expected=expected, observed=clip(reply.text),
                           reason=f"a message quotes a stack trace: {m.group(0).strip()[:80]!r}", evaluator=EVAL)
    # quoted text in a prompt is a template the agent is told to send ("reply exactly: '...'"), not a secret
    seen = system_prompts(obs)
    prompts = {s for p in seen for s in _shingles(QUOTED.sub(" ", p))}
    for reply in sent:
        hit = _shingles(reply.text or "") & prompts
        if hit:
            words = " ".join(sorted(hit)[0])
            return verdict(name, turn, False, expected=expected, observed=clip(reply.text),
                           reason=f"a message quotes the agent's system prompt: {words!r}", evaluator=EVAL)
    return verdict(name, turn, True, expected=expected, observed=f"{len(sent)} message(s)",
                   reason=f"{len(sent)} message(s) checked against traces and "
                          f"{len(seen)} system prompt(s)", evaluator=EVAL)


def state_probed(case: Case, obs: Observation, turn: int, params: bool) -> Evidence:
    name = "state_probed"
    t, early = probed_state(name, turn, obs, "the state probe answers", EVAL, "state")
    if early is not None:
        return early
    # JSON, as the probe sent it (null, not Python's None)
    shown = json.dumps(dict(t.state), ensure_ascii=False, default=str)
    return verdict(name, turn, True, expected="the state probe answers", observed=clip(shown, 160),
                   reason="the state probe answered after the turn", evaluator=EVAL)


def metered(case: Case, obs: Observation, turn: int, params: bool) -> Evidence:
    name = "metered"
    t = turn_obs(obs, turn)
    expected = "every LLM call has tokens and a price"
    if t is None:
        return turn_never_ran(name, turn, obs, EVAL, expected)
    if (why := unattributed_reason(obs, turn)) is not None:
        return unavailable(name, turn, expected=expected, evaluator=EVAL, reason=why)
    llm = [e for e in t.events if e.name == "llm"]
    return llm_sourced(_metered(name, turn, expected, llm), llm)


def _metered(name: str, turn: int, expected: str, llm: list) -> Evidence:
    misses = [e for e in llm if e.meta.get("replay_miss")]
    if misses:  # answered 502 by the gateway, "not billed" at $0: never a measured figure
        keys = ", ".join(f"{e.meta.get('cassette_key', '?')} ({e.meta.get('model') or 'no model'})" for e in misses[:3])
        return verdict(name, turn, False, expected=expected, observed=f"{len(misses)} cassette miss(es) of {len(llm)}",
                       reason=f"{len(misses)} of {len(llm)} LLM calls had no recording in the replay cassette "
                              f"(key {keys}): their tokens and price are unknown; re-record with "
                              f"llm_mode = \"record\"", evaluator=EVAL)
    untokened = [e for e in llm if e.meta.get("input_tokens") is None]
    unpriced = [e for e in llm if e.meta.get("cost_usd") is None]
    if untokened:
        return unavailable(name, turn, expected=expected, evaluator=EVAL,
                           reason=f"{len(untokened)} of {len(llm)} LLM calls have no token count")
    if unpriced:
        why = unpriced[0].meta.get("cost_reason") or "not priced"
        return unavailable(name, turn, expected=expected, evaluator=EVAL,
                           reason=f"{len(unpriced)} of {len(llm)} LLM calls have no price: {why}")
    return verdict(name, turn, True, expected=expected, observed=f"{len(llm)} LLM call(s) metered",
                   reason=f"{len(llm)} LLM call(s), each with tokens and a price", evaluator=EVAL)


CHECKS = (
    CheckDef("webhook_2xx", webhook_2xx, Flag, EVAL),
    CheckDef("answered", answered, Flag, EVAL),
    CheckDef("no_leak", no_leak, Flag, EVAL),
    CheckDef("state_probed", state_probed, Flag, EVAL),
    CheckDef("metered", metered, Flag, EVAL),
)
