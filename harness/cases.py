"""Case files: loading, validation and selection (contract in docs/CASES.md).

Everything is validated before anything runs, and every problem found is reported at
once with its file, line, case id and a fix: a bad suite exits 2 and runs nothing.
"""

from __future__ import annotations

import difflib
import fnmatch
import math
import os
import re
import string
from pathlib import Path
from typing import Any, Iterable, Mapping

from pydantic import ValidationError

from harness.checks import GROUPED, REGISTRY, known_names
from harness.errors import FixtureError, FixtureErrors
from harness import layer as layer_registry
from harness.schema.files import InputProblem
from harness.schema.models import case_file_model
from harness.schema.problems import Problem, path_text, problems
from harness.schema.yamlload import LINE, line_of, strip_lines
from harness.schema.yamlload import load_file as load_yaml
from harness.textgen import MAX_WORDS
from harness.types import CASE_ID_RE, CHANNELS, Case, CheckSpec, Turn

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
CASE_KEYS = CASE_KEYS | {"judges"}  # how the agent frames an answer, for `harness judges` (harness/judges/frames.py)
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

    def add(self, message: str, *, file: str, case: str = "", line: int | None = None, fix: str = "") -> None:
        self.errors.append(FixtureError(message, file=file, case=case, line=line, fix=fix))


def switchable() -> set[str]:
    """The default checks a case may switch off with ``<name>: false``."""
    return (layer_registry.default_names() | set(ENGINE_DEFAULTS)
            | {f"anomaly.{m}" for m in ANOMALY_METRICS})


def _anomaly_off(value: Any, *, file: str, case: str, line: int | None, turn: int, out: _Collector) -> list[str]:
    if value is False:
        return [f"anomaly.{m}" for m in ANOMALY_METRICS]
    if isinstance(value, dict) and value and all(k in ANOMALY_METRICS and v is False for k, v in value.items()):
        return [f"anomaly.{k}" for k in value]
    out.add(f"turn {turn}: anomaly takes false (all four anomaly checks off) or a table of metrics set to false, "
            f"got {value!r}", file=file, case=case, line=line,
            fix=f"e.g. anomaly: false, or anomaly: {{latency_ms: false}} (metrics: {', '.join(ANOMALY_METRICS)}); "
                "anomaly checks are switched on by the nightly history, never by a case")
    return []


def _expect(raw: Any, *, file: str, case: str, line: int | None, turn: int,
            out: _Collector) -> tuple[tuple[CheckSpec, ...], tuple[str, ...]]:
    """The turn's checks, and the default checks it switches off (``<name>: false``)."""
    if raw is None:
        return (), ()
    if not isinstance(raw, dict):
        out.add(f"turn {turn}: expect must be a table of checks", file=file, case=case, line=line)
        return (), ()
    specs: list[CheckSpec] = []
    off: list[str] = []
    for key, value in raw.items():
        if key == LINE:
            continue
        value = _strip(value)
        if key == "anomaly":
            off += _anomaly_off(value, file=file, case=case, line=raw.get(LINE, line), turn=turn, out=out)
            continue
        if value is False and key not in GROUPED:
            if key in switchable():
                off.append(key)
            elif key in REGISTRY:
                out.add(f"turn {turn}: {key}: false switches off a default check, and {key} is none",
                        file=file, case=case, line=raw.get(LINE, line),
                        fix=f"remove {key} (the checks a layer adds by default: {', '.join(sorted(switchable()))})")
            else:
                out.add(f"turn {turn}: unknown check {key!r}", file=file, case=case, line=raw.get(LINE, line),
                        fix=f"known checks: {', '.join(known_names())}")
            continue
        if key in GROUPED:
            if not isinstance(value, dict) or not value:
                out.add(f"turn {turn}: {key} must be a table such as {{regex: ...}}", file=file, case=case, line=line,
                        fix=f"write at least one {key} check, e.g. {key}: {{contains: [\"...\"]}}")
                continue
            items = [(f"{key}.{sub}", v) for sub, v in value.items()]
        else:
            items = [(key, value)]
        for name, params in items:
            definition = REGISTRY.get(name)
            if definition is None:
                out.add(f"turn {turn}: unknown check {name!r}", file=file, case=case, line=raw.get(LINE, line),
                        fix=unknown_check_fix(name))
                continue
            try:
                problem = _non_finite(params) or definition.validate(params)
            except Exception as exc:  # a validator that trips over a wrong type still means "bad parameters"
                problem = f"has parameters of the wrong shape ({type(exc).__name__}: {exc})"
            if problem:
                out.add(f"turn {turn}: {name} {problem}", file=file, case=case, line=raw.get(LINE, line),
                        fix=f"correct the {name} parameters (docs/CASES.md lists every check with an example)")
                continue
            specs.append(CheckSpec(name=name, params=params))
    return tuple(specs), tuple(dict.fromkeys(off))


def _turn(raw: dict, *, channel: str, file: str, case: str, index: int, out: _Collector) -> Turn | None:
    line = raw.get(LINE)
    unknown = [k for k in raw if k != LINE and k not in TURN_KEYS]
    if unknown:
        out.add(f"turn {index}: unknown key(s) {unknown}", file=file, case=case, line=line,
                fix=f"a turn has one of {', '.join(ACTIONS)}, plus wait_s and expect")
        return None
    actions = [k for k in ACTIONS if k in raw]
    if len(actions) != 1:
        out.add(f"turn {index}: needs exactly one action, found {actions or 'none'}", file=file, case=case, line=line,
                fix=f"use one of {', '.join(ACTIONS)}")
        return None
    kind = actions[0]
    value = raw[kind]
    send: str | None = None
    options: dict[str, Any] = {}
    if kind in ACTION_KEYS and kind != "callback" or (kind == "callback" and isinstance(value, dict)):
        # issue 15 actions: a table (a few take a plain value as shorthand)
        options = _action_options(kind, value, channel=channel, file=file, case=case, index=index, line=line,
                                  out=out)
        if options is None:
            return None
        if kind == "callback":
            send = options.pop("data")
        elif kind in ("forward", "forged"):
            send = options.pop("text", None) if kind == "forward" else options.pop("send", "hello")
    elif kind in ("send", "edit", "callback"):
        if value is None:
            value = ""
        if not isinstance(value, str):
            out.add(f"turn {index}: {kind} must be a string", file=file, case=case, line=line)
            return None
        for err in _text_errors(value):
            out.add(f"turn {index}: {err}", file=file, case=case, line=line, fix=TEXT_FIX)
        send = value
    elif kind == "burst":  # several texts delivered back to back (multi-turn layer)
        if not isinstance(value, list) or len(value) < 2 or not all(isinstance(v, str) for v in value):
            out.add(f"turn {index}: burst must be a list of at least two texts", file=file, case=case, line=line)
            return None
        for err in (e for v in value for e in _text_errors(v)):
            out.add(f"turn {index}: {err}", file=file, case=case, line=line, fix=TEXT_FIX)
        options = {"texts": list(value)}
    elif kind == "redeliver":
        if value is not True:
            out.add(f"turn {index}: redeliver must be true", file=file, case=case, line=line)
        if index == 0:
            out.add("turn 0: redeliver needs an earlier turn to deliver again", file=file, case=case, line=line,
                    fix="put a send turn before it, or remove the redeliver turn")
    else:
        value = _strip(value) if value is not None else {}
        if not isinstance(value, dict):
            out.add(f"turn {index}: {kind} takes a table (e.g. {{}})", file=file, case=case, line=line)
            return None
        options = value
        if kind == "document" and not {"file_name", "mime_type"} <= set(options):
            out.add(f"turn {index}: document needs file_name and mime_type", file=file, case=case, line=line)
        if "caption" in options:
            for err in _text_errors(str(options["caption"])):
                out.add(f"turn {index}: {err}", file=file, case=case, line=line, fix=TEXT_FIX)
    if kind == "edit" and channel == "whatsapp":
        out.add(f"turn {index}: WhatsApp has no message edits", file=file, case=case, line=line,
                fix="use channel: telegram for edit turns")
    if kind == "edit" and index == 0:
        out.add("turn 0: edit needs an earlier text turn to edit", file=file, case=case, line=line)
    if "reply_to" in raw:
        target = _strip(raw["reply_to"])
        if kind != "send":
            out.add(f"turn {index}: reply_to goes with send (a text that quotes an earlier message)", file=file,
                    case=case, line=line)
        elif not (target == "bot" or (isinstance(target, int) and not isinstance(target, bool) and 0 <= target < index)
                  or (isinstance(target, dict) and set(target) == {"bot"} and isinstance(target["bot"], int)
                      and not isinstance(target["bot"], bool) and 0 <= target["bot"] < index)):
            out.add(f"turn {index}: reply_to must be bot (the bot's latest message), an earlier turn's index "
                    f"(the user's message of that turn) or {{bot: N}} (the bot's last reply to turn N < {index}), "
                    f"got {target!r}", file=file, case=case, line=line, fix="e.g. reply_to: 0 or reply_to: bot")
        else:
            options = {**options, "reply_to": target}
    wait = raw.get("wait_s", 0)
    if isinstance(wait, bool) or not isinstance(wait, (int, float)) or wait < 0:
        out.add(f"turn {index}: wait_s must be a non-negative number", file=file, case=case, line=line)
        wait = 0
    checks, disabled = _expect(raw.get("expect"), file=file, case=case, line=line, turn=index, out=out)
    if kind == "forged" and not any(c.name == "replies" for c in checks):
        checks += (CheckSpec(name="replies", params={"exact": 0}),)  # a refused delivery is never answered
    if (kind == "callback" and channel == "telegram" and "callbacks_answered" not in disabled
            and not any(c.name == "callbacks_answered" for c in checks)):
        checks += (CheckSpec(name="callbacks_answered", params=True),)  # an unanswered press keeps spinning
    fault = _strip(raw.get("fault")) if "fault" in raw else {}
    if "fault" in raw:  # scripted faults for this turn (harness/sandbox/faults.py)
        from harness.sandbox.faults import validate as fault_error

        problem = fault_error(fault)
        if problem:
            out.add(f"turn {index}: {problem}", file=file, case=case, line=line)
    tools = _strip(raw.get("tools")) if "tools" in raw else {}
    if "tools" in raw:  # the tool double's script for this turn (harness/sandbox/spy.py)
        from harness.sandbox.spy import validate as tools_error

        problem = tools_error(tools)
        if problem:
            out.add(f"turn {index}: {problem}", file=file, case=case, line=line,
                    fix="e.g. tools: {create_order: {json: {id: A-17}}} (docs/CASES.md, Tool doubles)")
            tools = {}

    model = _strip(raw.get("model")) if "model" in raw else None
    if "model" in raw:  # the model double's script for this turn (harness/sandbox/model_double.py)
        from harness.sandbox.model_double import validate as script_error

        problem = script_error(model)
        if problem:
            out.add(f"turn {index}: {problem}", file=file, case=case, line=getattr(raw, "key_lines", {}).get(
                "model", line), fix="e.g. model: [{tool_calls: [{name: create_order, arguments: {quantity: 3}}]}, "
                "{text: \"Order {tool_result.id} is placed\"}] (docs/CASES.md, the model double)")
            model = None
    user = raw.get("as", "")
    if not isinstance(user, str):
        out.add(f"turn {index}: as must be one of the case's users", file=file, case=case, line=line)
        user = ""
    overlap = raw.get("overlap", False)
    if not isinstance(overlap, bool):
        out.add(f"turn {index}: overlap must be true or false", file=file, case=case, line=line)
        overlap = False
    return Turn(send=send, kind="text" if kind == "send" else kind, options=options, wait_s=float(wait), checks=checks,
                faults=fault or {}, tools=tools or {}, user=user, overlap=overlap, disabled=disabled,
                model=tuple(model) if isinstance(model, list) else (model,) if model else ())


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _action_options(kind: str, value: Any, *, channel: str, file: str, case: str, index: int, line: int | None,
                    out: _Collector) -> dict[str, Any] | None:
    """The table of one of issue 15's actions, validated; None after reporting what is wrong."""
    value = _strip(value)
    shorthand = {"reaction": "emoji", "forward": "text", "forged": "signature"}
    if value is None and kind in ("audio", "voice"):
        value = {}
    if isinstance(value, str) and kind in shorthand:
        value = {shorthand[kind]: value}
    if not isinstance(value, dict):
        out.add(f"turn {index}: {kind} takes a table with {', '.join(sorted(ACTION_KEYS[kind]))}", file=file,
                case=case, line=line, fix=f"see docs/CASES.md, '{kind}'")
        return None
    problems = [f"unknown key(s) {sorted(set(value) - ACTION_KEYS[kind])}"] if set(value) - ACTION_KEYS[kind] else []
    missing = _ACTION_REQUIRED.get(kind, set()) - set(value)
    if missing:
        problems.append(f"missing {', '.join(sorted(missing))}")
    if kind == "location" and not missing:
        lat, lon = value["latitude"], value["longitude"]
        if not (_number(lat) and -90 <= lat <= 90 and _number(lon) and -180 <= lon <= 180):
            problems.append(f"latitude must be -90..90 and longitude -180..180, got {lat!r}, {lon!r}")
    if kind == "contact" and not missing and not re.fullmatch(r"\+?[0-9 ()-]{5,20}", str(value["phone_number"])):
        problems.append(f"phone_number {value['phone_number']!r} is not a phone number")
    if kind in ("audio", "voice") and "duration" in value and not (
            isinstance(value["duration"], int) and not isinstance(value["duration"], bool) and value["duration"] > 0):
        problems.append("duration must be a positive number of seconds")
    if kind == "reaction" and not missing:
        to = value.get("to", "bot")
        if not isinstance(value["emoji"], str):
            problems.append("emoji must be a string ('' removes the reaction)")
        if not (to == "bot" or (isinstance(to, int) and not isinstance(to, bool) and 0 <= to < index)):
            problems.append(f"to must be bot (the bot's latest message) or an earlier turn's index, got {to!r}")
    if kind == "forward" and not missing and not isinstance(value["text"], str):
        problems.append("text must be a string")
    if kind == "forged" and not missing and value["signature"] not in FORGERIES:
        problems.append(f"signature must be one of {', '.join(FORGERIES)}, got {value['signature']!r}")
    if kind == "forged" and not isinstance(value.get("send", ""), str):
        problems.append("send must be a string")
    if kind == "callback" and not missing:
        if not isinstance(value["data"], str):
            problems.append("data must be a string (the button's callback data, id or label)")
        turn = value.get("turn")
        if turn is not None and not (isinstance(turn, int) and not isinstance(turn, bool) and 0 <= turn < index):
            problems.append(f"turn must be an earlier turn's index (its reply carried the keyboard), got {turn!r}")
    for key in ("text", "send", "data", "caption"):
        if isinstance(value.get(key), str):
            problems += _text_errors(value[key])
    if problems:
        for p in problems:
            out.add(f"turn {index}: {kind}: {p}", file=file, case=case, line=line,
                    fix=f"see docs/CASES.md, '{kind}'")
        return None
    return dict(value)


def _users(merged: dict, turns: list[Turn], *, file: str, case: str, line: int | None, out: _Collector) -> tuple | None:
    """Validate ``users:``, each turn's ``as:`` and the overlap groups; the users, or None."""
    users = merged.get("users")
    if users is None:
        if any(t.user for t in turns):
            out.add("a turn says as: but the case has no users", file=file, case=case, line=line,
                    fix="add users: [alice, bob] to the case")
            return None
        if any(t.overlap for t in turns):
            out.add("overlap needs several users", file=file, case=case, line=line,
                    fix="add users: [alice, bob] and say who sends each turn with as:")
            return None
        return ()
    users = _strip(users)
    if (not isinstance(users, list) or not 2 <= len(users) <= MAX_USERS
            or not all(isinstance(u, str) and USER_RE.match(u) for u in users) or len(set(users)) != len(users)):
        out.add(f"users must be a list of 2 to {MAX_USERS} distinct names like alice, got {users!r}", file=file,
                case=case, line=line, fix="users: [alice, bob]")
        return None
    for i, t in enumerate(turns):
        if t.user and t.user not in users:
            out.add(f"turn {i}: as: {t.user!r} is not one of the users {users}", file=file, case=case, line=line)
            return None
    if turns[-1].overlap:
        out.add(f"turn {len(turns) - 1}: the last turn cannot overlap a next one", file=file, case=case, line=line,
                fix="remove overlap: true from the last turn")
        return None
    for group in overlap_groups(turns):
        who = [turns[i].user or users[0] for i in group]
        if len(set(who)) != len(who):
            out.add(f"turns {group[0]}-{group[-1]} overlap and one user sends two of them", file=file, case=case,
                    line=line, fix="overlapping turns come from different users (their replies are told apart by chat)")
            return None
        if len(group) > 1 and any(turns[i].kind in ("redeliver", "edit") or turns[i].faults for i in group):
            out.add(f"turns {group[0]}-{group[-1]}: overlapping turns take no redeliver, edit or fault", file=file,
                    case=case, line=line)
            return None
    return tuple(users)


def overlap_groups(turns) -> list[list[int]]:
    """The turn indexes that are sent together: each overlapping turn with the ones after it."""
    groups: list[list[int]] = []
    current: list[int] = []
    for i, t in enumerate(turns):
        current.append(i)
        if not t.overlap:
            groups.append(current)
            current = []
    if current:
        groups.append(current)
    return groups


def _case(raw: Any, *, layer: str, defaults: dict, file: str, out: _Collector,
          docs_dir: Path | None = None) -> Case | None:
    if not isinstance(raw, dict):
        out.add("each entry of cases must be a table", file=file)
        return None
    line = raw.get(LINE)
    merged = {**defaults, **raw}
    cid = merged.get("id")
    if not isinstance(cid, str) or not CASE_ID_RE.match(cid):
        out.add(f"case id {cid!r} must match [a-z0-9-]+", file=file, case=str(cid or ""), line=line,
                fix="use lowercase letters, digits and dashes, e.g. url-malformed-scheme")
        return None
    unknown = [k for k in merged if k != LINE and k not in CASE_KEYS]
    if unknown:
        out.add(f"unknown key(s) {unknown}", file=file, case=cid, line=line,
                fix=f"case keys: {', '.join(sorted(CASE_KEYS))}")
        return None
    channel = merged.get("channel", "telegram")
    if channel not in CHANNELS:
        out.add(f"unknown channel {channel!r}", file=file, case=cid, line=line, fix="channel: telegram or whatsapp")
        return None
    single = {k: merged[k] for k in TURN_KEYS if k in merged}
    if "turns" in merged:
        if any(k in merged for k in ACTIONS) or "expect" in raw:
            out.add("has both turns and a single-turn action/expect", file=file, case=cid, line=line,
                    fix="put every action and expect inside turns")
            return None
        raw_turns = merged["turns"]
        if not isinstance(raw_turns, list) or not raw_turns:
            out.add("turns must be a non-empty list", file=file, case=cid, line=line)
            return None
        if isinstance(_strip(merged.get("tools")), dict):  # a case's tools: script applies to every turn
            raw_turns = [{**rt, "tools": {**_strip(merged["tools"]), **(_strip(rt.get("tools")) or {})}}
                         if isinstance(rt, dict) and isinstance(_strip(rt.get("tools", {})), dict) else rt
                         for rt in raw_turns]
        elif "tools" in merged:
            out.add(f"tools must be a table of tool name: result, got {_strip(merged['tools'])!r}", file=file,
                    case=cid, line=line, fix="e.g. tools: {create_order: {json: {id: A-17}}}")
            return None

        if "model" in merged:  # a case's (or the file's default) model script: every turn without its own
            raw_turns = [{**rt, "model": merged["model"]} if isinstance(rt, dict) and "model" not in rt else rt
                         for rt in raw_turns]
    else:
        raw_turns = [{**single, LINE: line}]
    turns = []
    for i, rt in enumerate(raw_turns):
        if not isinstance(rt, dict):
            out.add(f"turn {i} must be a table", file=file, case=cid, line=line)
            return None
        t = _turn(rt, channel=channel, file=file, case=cid, index=i, out=out)
        if t is None:
            return None
        home = layer_registry.get(layer)
        foreign = [n for n in t.disabled if not n.startswith("anomaly.") and n not in ENGINE_DEFAULTS
                   and n not in (home.default_names if home else ())]
        if foreign:
            out.add(f"turn {i}: {', '.join(f'{n}: false' for n in foreign)}: the {layer} layer does not add "
                    f"{'this check' if len(foreign) == 1 else 'these checks'} by default", file=file, case=cid,
                    line=rt.get(LINE, line), fix=f"remove it (the {layer} layer adds "
                    f"{', '.join(home.default_names) if home and home.default_names else 'no check'} by default)")
        turns.append(t)
    users = _users(merged, turns, file=file, case=cid, line=line, out=out)
    if users is None:
        return None
    variants = _strip(merged.get("variants"))
    if variants == "none":
        variants = ()
    elif variants == "all":  # docs/CASES.md: variants: all (was refused as not a list)
        variants = ["all"]
    elif variants is not None and not (isinstance(variants, list) and variants
                                       and all(isinstance(v, str) and v for v in variants)):
        out.add(f"variants must be a list of variant kinds, all or none, got {variants!r}", file=file, case=cid, line=line,
                fix="e.g. variants: [typos, case] (docs/CASES.md lists the kinds), or variants: none")
        return None
    if not any(t.checks for t in turns):
        out.add("has no checks: a case without a check can never fail", file=file, case=cid, line=line,
                fix="add an expect table, e.g. expect: {replies: {min: 1}}")
        return None
    tags = merged.get("tags", [])
    if isinstance(tags, str):
        tags = [tags]
    timeout = merged.get("timeout_s")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0):
        out.add("timeout_s must be a positive number", file=file, case=cid, line=line)
        return None
    source = merged.get("source", "")
    if not isinstance(source, str) or (not source and any(s.name == "critic.factuality" for t in turns for s in t.checks)):
        out.add("critic.factuality needs source: <document in fixtures/documents>", file=file, case=cid, line=line,
                fix="add source: paper.pdf (the document the case is about) to the case")
        return None
    if source and docs_dir is not None and not _document_exists(docs_dir, source):
        out.add(f"source: {source!r} is not a document in {docs_dir}", file=file, case=cid,
                line=getattr(raw, "key_lines", {}).get("source", line),
                fix="name a file of the documents folder ([sandbox] docs_dir), e.g. source: paper.pdf")
        return None
    if "judges" in merged:
        from harness.judges.frames import validate as frame_error

        problem = frame_error(_strip(merged["judges"]))
        if problem:
            out.add(problem, file=file, case=cid, line=line, fix="see harness/judges/frames.py")
            return None
    baseline = _strip(merged.get("baseline"))
    if baseline is not None:
        from harness.checks.baseline.settings import case_setting_error

        problem = case_setting_error(baseline)
        if problem:
            out.add(problem, file=file, case=cid, line=line,
                    fix="baseline: false, or e.g. baseline: {facts: false, latency: false} (docs/CASES.md "
                        "'Baseline checks' lists the kinds)")
            return None
    return Case(id=cid, layer=layer, channel=channel, turns=tuple(turns), tags=tuple(str(t) for t in tags),
                file=file, timeout_s=float(timeout) if timeout else None,
                description=str(merged.get("description", "")), source=source, users=users,
                variants=tuple(variants) if variants is not None else None,
                baseline=dict(baseline) if isinstance(baseline, dict) else baseline)


def file_model():
    """The pydantic model of a case file for the checks and layers installed now (harness.schema)."""
    grouped = {g: [n.split(".", 1)[1] for n in REGISTRY if n.startswith(g + ".")] for g in GROUPED}
    return case_file_model(list(REGISTRY), grouped, layer_registry.names())


#: The loader's own words for lists of the wrong length.
_LIST_MESSAGES = {
    "users": f"users must be a list of 2 to {MAX_USERS} distinct names like alice, got {{value}}",
    "burst": "burst must be a list of at least two texts, got {value}",
    "turns": "turns must be a non-empty list",
    "cases": "cases must be a non-empty list",
}


def _schema_message(problem: Problem, data: dict) -> tuple[str, str]:
    """The message and fix of a schema problem, in the loader's own words where it has them."""
    loc = problem.loc
    if loc == ("layer",):
        return (f"layer {data.get('layer')!r} is not one of {', '.join(layer_registry.names())}",
                "write one of the layers above (or install the package of yours)")
    if len(loc) == 3 and loc[0] == "cases" and loc[2] == "id":
        cid = data["cases"][loc[1]].get("id") if isinstance(data["cases"][loc[1]], dict) else None
        return (f"case id {cid!r} must match [a-z0-9-]+",
                "use lowercase letters, digits and dashes, e.g. url-malformed-scheme")
    if problem.message.startswith("must have") and loc and loc[-1] in _LIST_MESSAGES:
        return _LIST_MESSAGES[loc[-1]].format(value=problem.message.rsplit(", got ", 1)[-1]), problem.fix
    if problem.message.startswith("unknown key") and "expect" in loc[:-1]:
        family = loc[-2] if loc[-2] != "expect" else ""
        name = f"{family}.{loc[-1]}" if family else str(loc[-1])
        return f"unknown check {name!r}", unknown_check_fix(name)
    if problem.message.startswith("unknown key") and loc:
        guess = did_you_mean(str(loc[-1]), sorted(CASE_KEYS | TURN_KEYS))
        if guess:
            return problem.message, f"did you mean {guess!r}? ({problem.fix})" if problem.fix else f"did you mean {guess!r}?"
    return problem.message, problem.fix


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
    guess = did_you_mean(name, known_names() + [g for g in GROUPED])
    if guess:
        return f"did you mean {guess!r}? (docs/CASES.md lists every check)"
    return "docs/CASES.md \"expect families\" lists every check; `harness schema` gives editors the same list"


def _validate_schema(data: dict, file: str, out: _Collector) -> set[int] | None:
    """Validate the file against the case-file schema; every problem goes to ``out``. The indexes
    of the cases with a problem, or None if the file as a whole is unusable."""
    plain = strip_lines(data)
    try:
        file_model().model_validate(plain)
    except ValidationError as exc:
        found = problems(exc, plain)
    else:
        return set()
    bad: set[int] = set()
    whole = False
    for problem in found:
        loc = problem.loc
        message, fix = _schema_message(problem, plain)
        line = line_of(data, loc)
        if len(loc) >= 2 and loc[0] == "cases" and isinstance(loc[1], int):
            raw = plain["cases"][loc[1]]
            cid = raw.get("id") if isinstance(raw, dict) else None
            bad.add(loc[1])
            where = path_text(loc[2:-1] if message.startswith("unknown key") else loc[2:])
            out.add(f"{where}: {message}" if where and not message.startswith("case id") else message, file=file,
                    case=cid if isinstance(cid, str) else f"#{loc[1] + 1}", line=line, fix=fix)
        else:
            whole = True
            where = path_text(loc[:-1] if message.startswith("unknown key") else loc)
            out.add(f"{where}: {message}" if where and not message.startswith(("layer ", where)) else message,
                    file=file, line=line, fix=fix)
    return None if whole else bad


def _document_exists(docs_dir: Path, name: str) -> bool:
    try:
        path = (docs_dir / name).resolve()
        return path.is_file() and docs_dir.resolve() in path.parents
    except (OSError, RuntimeError, ValueError):
        return False


_ID_LINE = re.compile(r"^\s*-?\s*id:\s*[\"']?([a-z0-9-]+)[\"']?\s*(?:#.*)?$")


def _case_at(path: Path, line: int | None) -> str:
    """The id of the case a line of a file that did not load sits in ('' when unknown): the
    nearest ``id:`` at or above it, read from the raw text (the YAML could not be parsed)."""
    if not line:
        return ""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()[:line]
    except OSError:
        return ""
    for text in reversed(lines):
        m = _ID_LINE.match(text)
        if m:
            return m.group(1)
        if text.startswith("cases:"):
            break
    return ""


def load_file(path: Path, out: _Collector, display: str | None = None, docs_dir: Path | None = None) -> list[Case]:
    """The cases of one file; every problem goes to ``out`` (nothing raised)."""
    file = display or str(path)
    try:
        data = load_yaml(path)
    except InputProblem as exc:
        out.add(exc.message, file=file, case=_case_at(path, exc.line), line=exc.line, fix=exc.fix)
        return []
    if not isinstance(data, dict):
        out.add("a case file must be a table with layer and cases", file=file,
                fix="start with layer: <name> and a cases: list (docs/CASES.md)")
        return []
    bad = _validate_schema(data, file, out)
    if bad is None:
        return []
    unknown = [k for k in data if k != LINE and k not in FILE_KEYS]
    if unknown:
        out.add(f"unknown top-level key(s) {unknown}", file=file, fix="top-level keys: layer, defaults, cases")
    layer = data.get("layer")
    if not isinstance(layer, str) or layer_registry.get(layer) is None:
        out.add(f"layer {layer!r} is not one of {', '.join(layer_registry.names())}", file=file,
                line=data.get(LINE), fix="write one of the layers above (or install the package of yours)")
        return []
    defaults = _strip(data.get("defaults") or {})
    if not isinstance(defaults, dict):
        out.add("defaults must be a table", file=file)
        return []
    raw_cases = data.get("cases")
    if not isinstance(raw_cases, list) or not raw_cases:
        out.add("cases must be a non-empty list", file=file)
        return []
    return [c for c in (_case(rc, layer=layer, defaults=defaults, file=file, out=out, docs_dir=docs_dir)
                        for i, rc in enumerate(raw_cases) if i not in bad) if c]


#: Folders of a fixtures folder that hold no case files by design.
NOT_CASE_FOLDERS = ("documents",)


def _is_yaml(path: Path) -> bool:
    """A case file by its name (``x.YAML`` too). What is not a regular file under such a name (a
    folder, a link loop, a dangling link) is still returned: the loader refuses it by name."""
    return path.suffix.lower() in (".yaml", ".yml") and not path.name.startswith(".")


def _walk_yaml(folder: Path) -> list[Path]:
    """YAML names under ``folder``, sub-folders included, symlinked ones too (a folder already
    walked, a link loop, is not entered twice; a linked sub-folder was skipped silently before)."""
    found = []
    seen: set[str] = set()
    for here, dirs, names in os.walk(folder, followlinks=True):
        real = os.path.realpath(here)
        if real in seen:
            dirs[:] = []
            continue
        seen.add(real)
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found += [Path(here) / n for n in names + [d for d in dirs if _is_yaml(Path(d))] if _is_yaml(Path(n))]
    return sorted(set(found))


def _case_files(root: Path, folders: Mapping[str, str], out: "_Collector") -> list[Path]:
    """Every case file of the layer folders, sub-folders included, whatever the case of its
    ``.yaml``/``.yml`` suffix. YAML files where no layer looks (a misspelt layer folder such as
    ``robustnes/``, or at the top next to the layer folders) are reported, never silently skipped."""
    files: list[Path] = []
    for child in sorted(root.iterdir()):
        if child.is_dir() and child.name in folders:
            files += _walk_yaml(child)
        elif child.is_dir() and child.name not in NOT_CASE_FOLDERS and not child.name.startswith("."):
            stray = _walk_yaml(child)
            if stray:
                close = difflib.get_close_matches(child.name, list(folders), n=1, cutoff=0.6)
                out.add(f"{child.name}/ holds {len(stray)} YAML file(s) but is no layer's folder, so they would "
                        "not be loaded", file=str(stray[0]),
                        fix=(f"rename it to {close[0]}/" if close else
                             f"case files go in one of {', '.join(f + '/' for f in folders)}"))
        elif _is_yaml(child) and child.name.lower() not in ("quarantine.yaml", "quarantine.yml"):
            out.add("a YAML file at the top of the fixtures folder is not loaded as cases", file=str(child),
                    fix=f"move it into the folder of its layer ({', '.join(f + '/' for f in folders)})")
    return files


def load_cases(fixtures: str | Path, *, layers: Iterable[str] = (), globs: Iterable[str] = (),
               derive: bool = True, docs_dir: str | Path | None = None, config: Any = None) -> list[Case]:
    """Load and validate every case file under ``fixtures``; select by layer and id glob.

    With ``docs_dir`` (the run's documents folder), every ``source:`` must name a file in it
    (when that folder exists: a config without one, e.g. for another suite, is not judged here).

    The whole suite is validated (so a broken file is reported even when another layer
    was selected); raises FixtureErrors listing every problem. With ``derive``, each
    layer then adds the cases it derives from the suite (``Layer.derive_cases``: the
    robustness layer's metamorphic variants), selected like the written ones; ``config`` (the
    run's ``Config``) gives them its sections (``[robustness] variants``).
    """
    root = Path(fixtures)
    out = _Collector()
    layers = list(layers)
    known = layer_registry.names()
    for name in layers:
        if name not in known:
            raise FixtureError(f"unknown layer {name!r}", fix=f"layers: {', '.join(known)}")
    if not root.is_dir():
        raise FixtureError("fixtures folder not found", file=str(root), fix="pass --fixtures DIR")
    docs = Path(docs_dir) if docs_dir is not None and Path(docs_dir).is_dir() else None
    folders = {layer.folder: layer.name for layer in layer_registry.all_layers()}
    files = _case_files(root, folders, out)
    cases: list[Case] = []
    for path in files:
        home_folder = path.relative_to(root).parts[0]
        loaded = load_file(path, out, docs_dir=docs)
        for case in loaded:
            if case.layer != folders[home_folder]:
                home = layer_registry.get(case.layer)
                out.add(f"file says layer {case.layer!r} but lives in fixtures/{home_folder}/", file=str(path),
                        fix=f"move it to fixtures/{home.folder if home else case.layer}/ or correct layer:")
                break
        cases.extend(loaded)
    if derive and not out.errors:
        context = {"fixtures": root, "sections": dict(getattr(config, "sections", None) or {}),
                   "config_file": str(getattr(config, "path", None) or "")}
        for layer in layer_registry.all_layers():
            try:
                cases.extend(layer.derive_cases(tuple(cases), context))
            except FixtureErrors as exc:
                out.errors.extend(exc.errors)
            except FixtureError as exc:
                out.errors.append(exc)
    seen: dict[str, str] = {}
    for case in cases:
        if case.id in seen:
            out.add(f"duplicate case id (also in {seen[case.id]})", file=case.file, case=case.id,
                    fix="case ids are unique across the whole suite: rename one")
        seen.setdefault(case.id, case.file)
    if out.errors:
        raise FixtureErrors(out.errors)
    selected = [c for c in cases if not layers or c.layer in layers]
    globs = list(globs)
    if globs:
        selected = [c for c in selected if any(fnmatch.fnmatchcase(c.id, g) for g in globs)]
    return selected
