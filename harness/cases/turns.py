"""One turn of a case: its action, its options and its ``expect`` table, validated."""

from __future__ import annotations

import re
from typing import Any

from harness import layer as layer_registry
from harness.cases.keys import (ACTION_KEYS, ACTIONS, ANOMALY_METRICS, ENGINE_DEFAULTS, FORGERIES, TEXT_FIX,
                                TURN_KEYS, _ACTION_REQUIRED, _Collector, _non_finite, _strip, _text_errors,
                                unknown_check_fix)
from harness.checks import GROUPED, REGISTRY, known_names
from harness.schema.yamlload import LINE
from harness.types import CheckSpec, Turn


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
                problem, _, fix = problem.partition("; fix: ")
                out.add(f"turn {turn}: {name}: {problem}", file=file, case=case, line=raw.get(LINE, line),
                        fix=fix or f"correct the {name} parameters (docs/CASES.md lists every check with an example)")
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
    for spec in checks:  # a check that compares with another turn names an earlier one (else: never judged)
        to = spec.params.get("to") if spec.name == "equivalent" and isinstance(spec.params, dict) else None
        if isinstance(to, int) and not isinstance(to, bool) and to >= index:
            out.add(f"turn {index}: equivalent.to {to} is not an earlier turn"
                    + (f" (0 to {index - 1})" if index else " (the first turn has none)"), file=file, case=case,
                    line=line, fix="equivalent compares a turn with an earlier one: e.g. {to: 0} on turn 1")
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

