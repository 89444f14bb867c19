"""What a case file may say: its keys, actions, placeholders, and the shared error collector.

The vocabulary the loader (harness.cases) checks a case file against; docs/CASES.md is the
contract. ``did_you_mean`` / ``unknown_check_fix`` turn a misspelt key into a fix.
"""

from __future__ import annotations

import difflib
import math
import re
import string
from typing import Any, Iterable

from harness.checks import GROUPED, known_names
from harness.errors import FixtureError
from harness.schema.yamlload import strip_lines
from harness.textgen import MAX_WORDS

PLACEHOLDERS = ("docs", "telegram_api", "whatsapp_api", "llm_base_url", "anthropic_base_url", "tools_url",
                "bot_token", "webhook_secret", "app_secret", "phone_number_id")
GENERATORS = ("words",)
ACTIONS = ("send", "document", "photo", "sticker", "edit", "callback", "redeliver", "burst",
           # issue 15: what users actually send, and deliveries the bot must refuse
           "location", "contact", "audio", "voice", "reaction", "forward", "forged")
TURN_KEYS = set(ACTIONS) | {"wait_s", "expect", "fault", "as", "overlap", "reply_to", "tools"}
TURN_KEYS = TURN_KEYS | {"model"}  # the model double's script for the turn (harness/sandbox/model_double.py)
#: The table keys each of those actions takes (required ones first, see _ACTION_REQUIRED).
ACTION_KEYS = {
    "location": {"latitude", "longitude", "title", "address", "live_period"},
    "contact": {"phone_number", "first_name", "last_name", "user_id"},
    "audio": {"duration", "mime_type", "caption", "file_name"},
    "voice": {"duration", "mime_type"},
    "reaction": {"emoji", "to"},
    "forward": {"text", "from"},
    "forged": {"signature", "send"},
    "callback": {"data", "turn"},
}
_ACTION_REQUIRED = {"location": {"latitude", "longitude"}, "contact": {"phone_number", "first_name"},
                    "reaction": {"emoji"}, "forward": {"text"}, "forged": {"signature"}, "callback": {"data"}}
FORGERIES = ("forged", "stale", "missing")
#: Default checks the engine adds itself (besides each layer's ``Layer.default_names``), each
#: switched off per case with ``false``: the Telegram press's answer, and the history anomalies
#: (``anomaly: false`` for all four, ``anomaly: {latency_ms: false}`` for one; run/anomaly.py METRICS).
ENGINE_DEFAULTS = ("callbacks_answered",)
ANOMALY_METRICS = ("latency_ms", "tokens", "llm_calls", "cost_usd")
CASE_KEYS = TURN_KEYS | {"id", "tags", "channel", "turns", "timeout_s", "description", "users", "variants",
                         "baseline"}
USER_RE = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
MAX_USERS = 8
CASE_KEYS = CASE_KEYS | {"source"}  # reasoning: the document a case is about (the critic's ground truth)
CASE_KEYS = CASE_KEYS | {"judges"}  # how the agent frames an answer, for `harness judges` (harness/schema/frames.py)
FILE_KEYS = {"layer", "defaults", "cases"}


def _strip(value: Any) -> Any:
    return strip_lines(value)


def placeholder_names(text: str) -> list[str]:
    """Field names used in ``text`` (``{docs}``, ``{words:100}`` -> ``words``)."""
    names = []
    for _, field, spec, _ in string.Formatter().parse(text):
        if field is not None:
            names.append(field if not spec else f"{field}:{spec}")
    return names


TEXT_FIX = "see docs/CASES.md, \"Placeholders in text\" ({docs}, {words:N} up to the generator's cap, {{ and }})"


def _text_errors(text: str) -> list[str]:
    try:
        names = placeholder_names(text)
    except ValueError as exc:
        return [f"bad braces in {text[:60]!r}: {exc} (write literal braces as {{{{ and }}}})"]
    errors = []
    for name in names:
        base, _, arg = name.partition(":")
        if base in GENERATORS:
            if not arg.isdigit() or int(arg) < 1:
                errors.append(f"{{{name}}} needs a positive count, e.g. {{words:10000}}")
            elif int(arg) > MAX_WORDS:
                errors.append(f"{{{name}}} asks for more than {MAX_WORDS:,} words (the generator's cap; "
                              "docs/CASES.md)")
        elif base not in PLACEHOLDERS or arg:
            errors.append(f"unknown placeholder {{{name}}} (known: {', '.join('{' + p + '}' for p in PLACEHOLDERS)},"
                          f" {{words:N}})")
    return errors


def _non_finite(value: Any) -> str | None:
    """A check parameter that is nan or infinite compares with nothing: refused for every check."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"has {value} as a number (write a finite number)"
    if isinstance(value, dict):
        return next((p for p in map(_non_finite, value.values()) if p), None)
    if isinstance(value, list):
        return next((p for p in map(_non_finite, value) if p), None)
    return None


class _Collector:
    def __init__(self) -> None:
        self.errors: list[FixtureError] = []
        self.single_turn = False
        """The case being read has one turn (``send:`` at the case's level): no "turn 0" in its errors."""

    def add(self, message: str, *, file: str, case: str = "", line: int | None = None, fix: str = "") -> None:
        if self.single_turn:
            message = message.removeprefix("turn 0: ")
        self.errors.append(FixtureError(message, file=file, case=case, line=line, fix=fix))



def did_you_mean(word: str, choices: Iterable[str]) -> str | None:
    """The closest of ``choices`` to a misspelt ``word`` (difflib), or None when nothing is close."""
    choices = list(choices)
    low = {c.lower(): c for c in choices}
    if word.lower() in low:
        return low[word.lower()]
    plural = re.sub(r"ys$", "ies", word)  # `replys`: a plural spelt like the singular
    if plural != word and plural in choices:
        return plural
    found = difflib.get_close_matches(word, choices, n=1, cutoff=0.72)
    if not found and "." not in word:  # `contians` is reply.contains: try the sub-checks' own names
        subs = {c.split(".", 1)[1]: c for c in choices if "." in c and c.startswith("reply.")}
        near = difflib.get_close_matches(word, list(subs), n=1, cutoff=0.72)
        found = [subs[near[0]]] if near else []
    return found[0] if found else None


def unknown_check_fix(name: str) -> str:
    """The fix for an unknown check name: the nearest known one, else where the list is."""
    family, _, sub = name.partition(".")
    if sub and (family in GROUPED and name in known_names() or family in known_names()):
        # a grouped check (reply.regex) or a check's parameter (replies.min) written as one key
        return (f"write it as {family}: {{{sub}: ...}} under expect ({sub} is a key of the {family} table, "
                f"not part of one key {name!r}); docs/CASES.md shows each check's example")
    guess = did_you_mean(name, known_names() + [g for g in GROUPED])
    if guess:
        return f"did you mean {guess!r}? (docs/CASES.md lists every check)"
    return "docs/CASES.md \"expect families\" lists every check; `harness schema` gives editors the same list"

