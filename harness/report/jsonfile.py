"""results.json: the run as data (DESIGN "Contract: results.json").

Every other writer (junit, markdown, html, terminal) renders from the dict produced here,
so ``harness report RUN_DIR`` can rebuild any of them from ``results.json`` alone. The
same ``case_to_dict`` shape is one line of the ``results.jsonl`` journal, and
``case_from_dict`` (jsonread.py) turns such a line back into a ``CaseResult`` so a killed run's journal
can still become a report.

Also here: the small helpers the renderers share (``as_report_dict``, ``headline``,
``failing_evidence``, ``pass_rate``, ``atomic_write_text``), because the report package
is deliberately flat.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Iterable, Mapping

from harness.fileio import atomic_write_text
from harness.types import CaseResult, Counts, Event, Evidence, RunReport, TurnObservation

SCHEMA = "harness.results/1"

#: Order of the count fields in ``summary`` and in each ``layers`` entry.
COUNT_FIELDS: tuple[str, ...] = (
    "planned", "executed", "decidable", "passed", "soft", "failed", "errored",
    "unavailable", "skipped", "cost_usd", "verdict",
)
STATUSES: tuple[str, ...] = ("pass", "soft", "fail", "error", "unavailable", "skipped")


# --------------------------------------------------------------------------- to dict


def counts_to_dict(c: Counts) -> dict[str, Any]:
    """One ``summary`` / ``layers`` entry, fields in contract order."""
    return {name: getattr(c, name) for name in COUNT_FIELDS}


def evidence_to_dict(e: Evidence) -> dict[str, Any]:
    """One evidence item, every field the contract names plus ``source``."""
    return {
        "check": e.check,
        "turn": e.turn,
        "availability": e.availability,
        "passed": e.passed,
        "score": e.score,
        "expected": e.expected,
        "observed": e.observed,
        "reason": e.reason,
        "evaluator": e.evaluator,
        "source": e.source,
    }


def _find_text(value: Any, depth: int = 0) -> str | None:
    """The first message text inside a channel payload (Telegram update or WhatsApp hook).

    Best effort by shape rather than by channel, because the driver's payload format is
    the channel's, not ours: ``text`` (Telegram), ``text.body`` (WhatsApp), ``caption``,
    callback ``data``.
    """
    if depth > 8:  # payloads are shallow; a deep one is not a message
        return None
    if isinstance(value, Mapping):
        text = value.get("text")
        if isinstance(text, str):
            return text
        if isinstance(text, Mapping) and isinstance(text.get("body"), str):
            return text["body"]
        for key in ("caption", "data"):
            if isinstance(value.get(key), str):
                return value[key]
        for child in value.values():
            found = _find_text(child, depth + 1)
            if found is not None:
                return found
    elif isinstance(value, (list, tuple)):
        for child in value:
            found = _find_text(child, depth + 1)
            if found is not None:
                return found
    return None


def _sent_text(events: Iterable[Event]) -> str | None:
    """What the simulated user sent in a turn, read from the driver's own event (None for a press)."""
    for e in events:
        if e.source == "driver":
            if _pressed_label(e.request) is not None:
                return None
            found = _find_text(e.request)
            if found is not None:
                return found
    return None


def _pressed_label(update: Any) -> str | None:
    """The label of the button the simulated user pressed, or None when the turn was no press.

    Telegram sends only the button's ``callback_data``: its label is read from the keyboard of
    the message it was under (the data itself when the keyboard is not there). WhatsApp sends
    the reply's title.
    """
    if not isinstance(update, Mapping):
        return None
    query = update.get("callback_query")
    if isinstance(query, Mapping):
        data = str(query.get("data", ""))
        markup = ((query.get("message") or {}).get("reply_markup") or {}) if isinstance(query.get("message"), Mapping) else {}
        for row in markup.get("inline_keyboard") or () if isinstance(markup, Mapping) else ():
            for button in row if isinstance(row, list) else ():
                if isinstance(button, Mapping) and str(button.get("callback_data", "")) == data:
                    return str(button.get("text", data))
        return data
    for entry in update.get("entry") or () if isinstance(update.get("entry"), list) else ():
        for change in (entry or {}).get("changes") or () if isinstance(entry, Mapping) else ():
            value = (change or {}).get("value") or {} if isinstance(change, Mapping) else {}
            for m in value.get("messages") or () if isinstance(value, Mapping) else ():
                inter = m.get("interactive") if isinstance(m, Mapping) else None
                if isinstance(inter, Mapping):
                    reply = inter.get("button_reply") or inter.get("list_reply") or {}
                    if isinstance(reply, Mapping):
                        return str(reply.get("title") or reply.get("id") or "")
                if isinstance(m, Mapping) and m.get("type") == "button" and isinstance(m.get("button"), Mapping):
                    return str(m["button"].get("text") or "")
    return None


def _pressed(events: Iterable[Event]) -> str | None:
    for e in events:
        if e.source == "driver":
            return _pressed_label(e.request)
    return None


def portable_path(path: str) -> str:
    """A case file's path as artifacts keep it: relative to the working folder (the project, in
    CI and cron) when it lies inside it, so junit.xml and the report carry no machine paths."""
    if not path or not os.path.isabs(path):
        return path
    try:
        rel = os.path.relpath(path, os.getcwd())
    except ValueError:  # another drive (Windows)
        return path
    return path if rel.startswith("..") else rel


def case_perf_fields(result: CaseResult) -> dict[str, Any]:
    """The cost layer's per-case fields (``tokens`` re-stated with ``estimated``); {} without metrics."""
    m = getattr(result, "metrics", None)
    if m is None:
        return {}
    return {
        "tokens": {"input": result.tokens.input, "output": result.tokens.output, "estimated": m.tokens_estimated,
                   "source": m.tokens_source},
        "cost_reason": m.cost_reason,
        "cost_simulated": m.simulated,
        "replayed": m.replayed_calls > 0,
        "perf": {"first_reply_ms": m.first_reply_ms, "last_reply_ms": m.last_reply_ms,
                 "llm_call_ms": list(m.llm_ms), "fetch_ms": list(m.fetch_ms), "llm_calls": m.llm_calls,
                 "fetches": m.fetches, "sends": m.sends, "calls": m.calls, "errors": m.errors,
                 "error_rate": round(m.error_rate, 4), "replayed_calls": m.replayed_calls,
                 "replay_misses": m.replay_misses},
    }


def _llm_call_fields(e: Event) -> dict[str, Any]:
    if e.name != "llm":
        return {}
    keys = ("model", "input_tokens", "output_tokens", "tokens_source", "estimated", "cost_usd", "simulated",
            "replayed", "replay_miss")
    return {k: e.meta[k] for k in keys if k in e.meta}


def _call_to_dict(e: Event) -> dict[str, Any]:
    # Requests and responses stay out: they are large and may echo tokens.
    return {
        "source": e.source,
        "name": e.name,
        "status": e.status,
        "at": e.at,  # when it arrived: a retry sent before the first call was answered is told apart
        "duration_ms": e.duration_ms,
        "error": e.error,
        **_llm_call_fields(e),  # cost layer: model, tokens and price of each LLM call
    }


def _posts(t: TurnObservation, channel: str | None, users: frozenset[str]) -> list[dict[str, Any]]:
    """The turn's messages to anyone but the case's users (a WhatsApp post), as ``checks.base.posts``."""
    own = {id(r) for r in t.replies}
    return [{"channel": e.reply.channel, "text": e.reply.text, "kind": e.reply.kind}
            for e in t.events if e.reply is not None and id(e.reply) not in own
            and not (channel is not None and e.reply.channel == channel and e.reply.chat in users)]


def turn_to_dict(t: TurnObservation, channel: str | None = None, users: frozenset[str] = frozenset()) -> dict[str, Any]:
    """A compact transcript of one turn: what was sent, what came back, what was called
    (``channel`` and ``users``: the case's channel and its users' chats, to tell posts from replies)."""
    return {
        "index": t.index,
        "sent": _sent_text(t.events),
        **({"pressed": label} if (label := _pressed(t.events)) is not None else {}),  # a button press, not text
        **({"chat": t.chat} if t.chat else {}),  # several users: whose turn it was
        **({"borrowed": t.borrowed} if t.borrowed else {}),  # a variant's original's turn, observed in that case
        "sent_at": t.sent_at,
        "delivery_status": t.delivery_status,
        "delivery_error": t.delivery_error,
        "timed_out": t.timed_out,
        "replies": [
            {"text": r.text, "at": r.at, "method": r.method, "kind": r.kind, "buttons": list(r.buttons),
             # Telegram markup: the text as sent, its parse_mode and the entities the user sees
             **({"raw_text": r.sent_text, "parse_mode": r.parse_mode, "entities": [dict(e) for e in r.entities]}
                if r.parse_mode or r.entities else {})}
            for r in t.replies
        ],
        # Messages to anyone but the user (a WhatsApp post): the baseline learns whether a turn posts.
        **({"posts": posted} if (posted := _posts(t, channel, users)) else {}),
        # The driver's own delivery is not a call the agent made.
        "calls": [_call_to_dict(e) for e in t.events if e.source != "driver"],
        "state": t.state,
        # A flood beyond the router's per-turn caps: counted, not stored (harness/sandbox/router.py).
        **({"overflow": dict(t.overflow)} if t.overflow else {}),
        # Calls no case could claim while this one ran with others (harness/sandbox/router.py).
        **({"unattributed_calls": dict(t.unattributed_calls)} if t.unattributed_calls else {}),
    }


def _users(obs: Any) -> frozenset[str]:
    return frozenset({obs.chat_id, *obs.user_chats})


def _other_attempts(result: CaseResult) -> list[dict[str, Any]]:
    out = []
    for obs in getattr(result, "attempt_observations", ()) or ():
        if obs is None or obs is result.observation:
            continue
        replies = obs.replies
        latency = (replies[-1].at - obs.turns[0].sent_at) * 1000 if replies and obs.turns else None
        out.append({"status": "pass", "latency_ms": latency,  # learned only from a case that passed (learn.passed)
                    "turns": [turn_to_dict(t, obs.channel, _users(obs)) for t in obs.turns]})
    return out


def case_to_dict(result: CaseResult) -> dict[str, Any]:
    """One case: a ``cases`` entry of results.json and one line of results.jsonl."""
    obs = result.observation
    return jsonable({
        "id": result.id,
        "layer": result.layer,
        "channel": result.channel,
        "status": result.status,
        "attempts": result.attempts,
        "pass_at_k": result.pass_at_k,
        "pass_hat_k": result.pass_hat_k,
        "latency_ms": result.latency_ms,
        "llm_calls": result.llm_calls,
        "tokens": {"input": result.tokens.input, "output": result.tokens.output},
        "cost_usd": result.cost_usd,
        "evidence": [evidence_to_dict(e) for e in result.evidence],
        # Beyond the contract: what drill-downs and the journal need.
        "passes": result.passes,
        "flaky": result.flaky,
        "pass_rate_ci": list(result.pass_rate_ci) if result.pass_rate_ci else None,
        "duration_ms": (obs.finished_at - obs.started_at) * 1000 if obs else None,
        "error": result.error,
        "file": portable_path(result.file),
        "tags": list(result.tags),
        "turns": [turn_to_dict(t, obs.channel, _users(obs)) for t in obs.turns] if obs else [],
        **case_perf_fields(result),  # cost layer: per-step latency, calls, token source, cost reason
        # Only when set, so unquarantined cases keep their shape (harness.night.quarantine).
        **({"quarantined": True} if getattr(result, "quarantined", False) else {}),
        # What the accepted nights held the case to (docs/CASES.md "Baseline checks").
        **({"baseline": dict(result.baseline)} if getattr(result, "baseline", None) is not None else {}),
        # --repeat k: the other attempts' transcripts (the baseline learns each attempt as a night).
        **({"other_attempts": others} if (others := _other_attempts(result)) else {}),
        # What the machine gave the case (harness/run/machine.py): only when measured.
        **({"machine": dict(result.machine)} if getattr(result, "machine", None) else {}),
    })


def report_to_dict(report: RunReport) -> dict[str, Any]:
    """The whole run, exactly in the results.json contract's shape and key order."""
    return jsonable({
        "schema": SCHEMA,
        "run_id": report.run_id,
        "started_at": report.started_at,
        "finished_at": report.finished_at,
        "harness_version": report.harness_version,
        "target": dict(report.target),
        "golden_version": report.golden_version,
        "models": dict(report.models),
        # perf: latency, calls, tokens, harness spend, budget (harness/perf.py); layer_metrics: per layer extras
        "summary": {**counts_to_dict(report.summary), **(getattr(report, "perf", None) or {}).get("summary", {})},
        "layers": {name: {**counts_to_dict(c), **(getattr(report, "perf", None) or {}).get("layers", {}).get(name, {}),
                          **(getattr(report, "layer_metrics", None) or {}).get(name, {})}
                   for name, c in report.layers.items()},
        "cases": [case_to_dict(c) for c in report.cases],
        "notes": list(report.notes),
        "exit_code": report.exit_code,
    })


def jsonable(value: Any) -> Any:
    """Make ``value`` strict, writable JSON: NaN/inf would make results.json unreadable elsewhere."""
    # Fast paths for the exact built-in types (almost every value of a report); anything else,
    # subclasses included, takes the general path below with the same result as before.
    t = type(value)
    if t is str:
        return value if value.isascii() else _utf8(value)
    if t is dict:
        return {k if type(k) is str else str(k): jsonable(v) for k, v in value.items()}
    if t is list or t is tuple:
        return [jsonable(v) for v in value]
    if t is int or t is bool or value is None:
        return value
    if t is float:
        return value if math.isfinite(value) else None
    return _jsonable(value)


def _utf8(value: str) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (a JSON "\ud800" escape from the agent decodes to one)
        # cannot be written as UTF-8 at all; it would abort the whole report.
        return value.encode("utf-8", "replace").decode("utf-8")
    return value


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, str):
        return _utf8(value)
    if value is None or isinstance(value, (int, float, bool)):
        return value
    return str(value)  # e.g. a datetime in a state probe: readable beats a crash


def as_report_dict(report: RunReport | Mapping[str, Any]) -> dict[str, Any]:
    """Renderers accept either the frozen report or its dict (from results.json)."""
    if isinstance(report, RunReport):
        return report_to_dict(report)
    return dict(report)


# --------------------------------------------------------------------------- files


def dumps(report_dict: Mapping[str, Any]) -> str:
    """The results.json text (strict JSON, UTF-8 kept readable)."""
    return json.dumps(report_dict, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_json(report: RunReport | Mapping[str, Any], path: str | os.PathLike[str]) -> Path:
    """Write results.json atomically; returns the path."""
    from harness.redact import active

    return atomic_write_text(path, active().text(dumps(as_report_dict(report))))
