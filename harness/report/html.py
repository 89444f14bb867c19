"""report.html: one static, self-contained page to drill into a run.

No external resources: the file is read from object storage, CI artifacts or a mail
attachment, often with scripts blocked. It opens on one sentence saying what happened
tonight (``format.tonight_sentence``), then the regressions, then the trends; the cases
follow, grouped by layer, drill-down by ``<details>``. Everything is readable without
JavaScript; one small inline script (``SCRIPT``) adds filtering by status and a search box,
and it is the only script the page's Content-Security-Policy allows (by its sha256 hash).

The page is drawn by templates/report.html.j2 (Jinja2, autoescape on; harness.report.templating)
from the view this module builds: plain data, no markup. Everything the agent said, every case
text and every evidence string is untrusted: the template escapes every value it prints, only
fragments rendered by the same templates pass as ``Markup``, and the CSP (no script but
``SCRIPT``, no inline handlers) backs that up should an escape ever be missed.
Nothing unknown is printed as "None": an unknown value is left out or shown as "-".
"""

from __future__ import annotations

import base64
import hashlib
import html
from importlib import resources
import json
import os
import warnings
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping, Sequence

from harness.report.jsonfile import as_report_dict
from harness.fileio import atomic_write_text
from harness.report.format import format_cost, format_ms, headline, known_version, pass_rate, tonight_sentence
from harness.report.cost_section import cost_html
from harness.report.templating import Markup, fragment, render
from harness.types import RunReport

#: Cases are listed most severe first: the reader opens the page to see what broke.
SEVERITY = {"fail": 0, "error": 1, "unavailable": 2, "soft": 3, "skipped": 4, "pass": 5}
COUNT_FIELDS = ("planned", "executed", "decidable", "passed", "soft", "failed", "errored", "unavailable", "skipped")

#: The page's style lives in templates/report/report.css (with trends.css and changes.css).

#: The page's one script (templates/report/filter.js): status checkboxes and a search box over
#: the cases (the page reads fine without it). Allowed by the CSP through its hash (of the text
#: inserted); it uses no inline handlers. A link may preset both: ``report.html#status=fail,error&q=timeout``.
SCRIPT = (resources.files("harness.report") / "templates" / "report" / "filter.js").read_text(encoding="utf-8").strip()
SCRIPT_HASH = "sha256-" + base64.b64encode(hashlib.sha256(SCRIPT.encode("utf-8")).digest()).decode("ascii")
CSP = f"default-src 'none'; style-src 'unsafe-inline'; script-src '{SCRIPT_HASH}'; img-src data:"


def esc(value: Any) -> str:
    """Untrusted value as HTML text (quotes too, so it is safe inside attributes): what the
    templates' ``finalize`` does to every value they print (harness.report.templating)."""
    return html.escape("" if value is None else str(value), quote=True)


def _anchor(case_id: Any) -> str:
    from harness.report.html_changes import case_anchor  # one rule for the section's links and the ids

    return case_anchor(case_id)


def _clock(ts: Any) -> str:
    if not isinstance(ts, (int, float)):
        return ""
    return datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%H:%M:%S.%f")[:-3] + "Z"


def _yes_no(value: Any) -> str:
    return "-" if value is None else ("yes" if value else "no")


def _counts_cells(counts: Mapping[str, Any]) -> list[Any]:
    """A layer row's cells: the counts, pass rate and cost (right-aligned), then the verdict."""
    return [*(counts.get(k) or 0 for k in COUNT_FIELDS), pass_rate(counts), format_cost(counts.get("cost_usd")),
            counts.get("verdict") or ""]


def _evidence_view(e: Mapping[str, Any]) -> dict[str, Any]:
    if e.get("availability") == "unavailable":
        cls, verdict = "na", "unavailable"
    elif e.get("passed") is True:
        cls, verdict = "", "passed"
    else:
        cls, verdict = "bad", "failed"
    score = e.get("score")
    score = f"{score:.3f}" if isinstance(score, (int, float)) else ("" if score is None else score)
    return {"cls": cls, "verdict": verdict, "check": e.get("check"),
            "turn": "case" if e.get("turn") is None else e.get("turn"), "score": score,
            "expected": e.get("expected"), "observed": e.get("observed"), "reason": e.get("reason"),
            "evaluator": e.get("evaluator"), "source": e.get("source")}


def _turn_view(t: Mapping[str, Any]) -> dict[str, Any]:
    sent_at = t.get("sent_at")
    status = t.get("delivery_status")
    head = [f"Turn {t.get('index') if t.get('index') is not None else ''}", _clock(sent_at),
            f"webhook answered {status}" if status is not None else "not delivered"]
    replies = []
    for r in t.get("replies") or []:
        offset = ""
        if isinstance(r.get("at"), (int, float)) and isinstance(sent_at, (int, float)):
            offset = f" +{format_ms((r['at'] - sent_at) * 1000)}"
        replies.append({"method": r.get("method"), "kind": r.get("kind"), "offset": offset, "text": r.get("text"),
                        "buttons": list(r.get("buttons") or [])})
    calls = [{"source": c.get("source"), "name": c.get("name"), "status": c.get("status"),
              "time": format_ms(c.get("duration_ms")), "error": c.get("error")} for c in t.get("calls") or []]
    state = t.get("state")
    return {"head": [h for h in head if h], "timed_out": bool(t.get("timed_out")), "pressed": t.get("pressed"),
            "sent": t.get("sent"), "delivery_error": t.get("delivery_error"), "replies": replies, "calls": calls,
            "state": None if state is None else json.dumps(state, indent=2, ensure_ascii=False, sort_keys=True,
                                                           default=str)}


def case_view(c: Mapping[str, Any], against: Markup | str = "") -> dict[str, Any]:
    """What report/case.html.j2 draws of one case (``against``: its changes, a rendered fragment)."""
    status = str(c.get("status", ""))
    tokens = c.get("tokens") or {}
    attempts = c.get("attempts") or 1
    repeated = attempts > 1 or c.get("pass_at_k") is not None or c.get("pass_hat_k") is not None
    meta = [
        ("layer / channel", f"{c.get('layer') or ''} / {c.get('channel') or ''}"),
        ("file", c.get("file")), ("tags", ", ".join(map(str, c.get("tags") or []))),
        ("attempts / passes", f"{attempts} / {c.get('passes') if c.get('passes') is not None else '-'}"
         if repeated else None),
        ("pass@k / pass^k", f"{_yes_no(c.get('pass_at_k'))} / {_yes_no(c.get('pass_hat_k'))}" if repeated else None),
        ("latency (first delivery to last reply)", format_ms(c.get("latency_ms"))),
        ("duration", format_ms(c.get("duration_ms"))),
        ("LLM calls", c.get("llm_calls")),
        ("tokens in / out", f"{tokens.get('input') or 0} / {tokens.get('output') or 0}"),
        ("cost", format_cost(c.get("cost_usd"))), ("error", c.get("error")),
    ]
    return {"status": status, "open": status in ("fail", "error"), "anchor": _anchor(c.get("id")), "id": c.get("id"),
            "quarantined": bool(c.get("quarantined")), "layer": c.get("layer"), "channel": c.get("channel"),
            "duration": format_ms(c.get("duration_ms")), "why": headline(c),
            "meta": [(k, v) for k, v in meta if v not in (None, "")],
            "evidence": [_evidence_view(e) for e in c.get("evidence") or []], "against": Markup(against),
            "turns": [_turn_view(t) for t in c.get("turns") or []]}


def layer_sections(d: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each layer's own section: ``Layer.report_section`` (data) drawn by its ``report_template``,
    or a plugin's deprecated ``report_html`` string, kept as it is (the plugin escaped it)."""
    from harness import layer as layer_registry

    parts = []
    for name, block in (d.get("layers") or {}).items():
        layer = layer_registry.get(name)
        if layer is None or not isinstance(block, Mapping):
            continue
        try:
            body = _layer_body(layer, block)
        except Exception as exc:  # a layer's rendering bug must not lose the report
            body = fragment("layers/failed.html.j2", name=name, error=f"{type(exc).__name__}: {exc}")
        if body.strip():
            parts.append({"title": layer.title, "body": body})
    return parts


def _layer_body(layer: Any, block: Mapping[str, Any]) -> Markup:
    if layer.report_section is not None:
        section = layer.report_section(block)
        return fragment(layer.report_template, section=section) if section else Markup("")
    legacy = layer.report_html(block)
    if legacy:
        warnings.warn(f"layer {layer.name!r}: report_html (an HTML string) is deprecated; return data from "
                      "report_section (and name a template in report_template)", DeprecationWarning, stacklevel=2)
    return Markup(legacy or "")


def _groups(d: Mapping[str, Any], cases: list[Mapping[str, Any]],
            against: Mapping[str, Markup] | None = None) -> list[dict[str, Any]]:
    """The cases, one group per layer (the layers' order, then any other layer a case names)."""
    order = list(dict.fromkeys([*(d.get("layers") or {}), *(str(c.get("layer") or "") for c in cases)]))
    groups = []
    for layer in order:
        members = [c for c in cases if str(c.get("layer") or "") == layer]
        if members:
            groups.append({"layer": layer, "cases": [case_view(c, (against or {}).get(str(c.get("id")), ""))
                                                     for c in members]})
    return groups


def render_html(report: RunReport | Mapping[str, Any], history: Sequence[Mapping[str, Any]] | None = None,
                diff: Mapping[str, Any] | None = None, *, target_log: bool = False,
                base: Mapping[str, Any] | None = None) -> str:
    """The report page for a report (or its results.json dict).

    ``history``: run records (``harness.night.history.run_records``, oldest first) for the trend
    charts; ``diff``: tonight against the baseline (``harness.night.diff.diff_runs``), shown first.
    ``target_log``: the run folder holds target.log (the agent's own output): link it.
    ``base``: the results dict the diff compared with (``RunContext.base``): the accepted replies
    shown beside tonight's where ``baseline.*`` evidence failed (report/changes.py).
    """
    from harness.report.changes import changes_or_note
    from harness.report.html_changes import by_case, case_block, changes_html
    from harness.report.html_trends import render_diff_html, render_trends
    from harness.report.repeats import html_section as repeats_html  # slots, pass@k, flaky

    d = as_report_dict(report)
    summary = d.get("summary") or {}
    cases = sorted(d.get("cases") or [], key=lambda c: SEVERITY.get(c.get("status"), 9))
    target = d.get("target") or {}
    models = d.get("models") or {}
    by_status: dict[str, int] = {}
    for c in cases:
        by_status[str(c.get("status", ""))] = by_status.get(str(c.get("status", "")), 0) + 1
    target_name = " ".join(x for x in (str(target.get("name") or ""), known_version(target.get("version"))) if x)
    meta = [x for x in (
        f"run {d.get('run_id') or '-'}",
        f"golden {d.get('golden_version')}" if known_version(d.get("golden_version")) else "",
        *(f"{k} {v}" for k, v in models.items() if v and not isinstance(v, dict)),  # stats: in notes
        f"harness {d.get('harness_version')}" if known_version(d.get("harness_version")) else "",
        f"{d.get('started_at') or '-'} → {d.get('finished_at') or '-'}",
        f"exit {d.get('exit_code') if d.get('exit_code') is not None else '-'}",
    ) if x]
    groups, changes_note = changes_or_note(d, base)
    try:
        changes_section = changes_html(groups)
        against = {cid: case_block(entries) for cid, entries in by_case(groups).items()}
    except Exception as exc:  # like a layer's section: its bug must not lose the report
        changes_section, against = Markup(""), {}
        changes_note = f"the changes against the baseline could not be drawn: {type(exc).__name__}: {exc}"
    page = {
        "csp": Markup(CSP), "script": Markup(SCRIPT), "target_name": target_name, "run_id": d.get("run_id"),
        "sentence": tonight_sentence(d, diff, history), "verdict": summary.get("verdict", "?"), "meta": meta,
        "target_log": target_log,
        "counts": [*((k, summary.get(k, 0)) for k in COUNT_FIELDS),
                   ("pass rate (passed / decidable)", pass_rate(summary)), ("cost", format_cost(summary.get("cost_usd")))],
        "diff": Markup(render_diff_html(diff)), "trends": Markup(render_trends(history or [])),
        "severe": [{"status": c.get("status"), "anchor": _anchor(c.get("id")), "id": c.get("id"), "why": headline(c)}
                   for c in cases if c.get("status") in ("fail", "error")],
        "changes": Markup(changes_section), "changes_note": changes_note,
        "count_fields": COUNT_FIELDS,
        "layer_rows": [*((name, _counts_cells(c), False) for name, c in (d.get("layers") or {}).items()),
                       ("total", _counts_cells(summary), True)],
        "layer_sections": layer_sections(d), "repeats": Markup(repeats_html(d)), "cost": Markup(cost_html(d)),
        "notes": d.get("notes") or [], "cases": cases,
        "by_status": sorted(by_status.items(), key=lambda kv: SEVERITY.get(kv[0], 9)),
        "groups": _groups(d, cases, against),
    }
    return render("report.html.j2", page=page)


def write_html(report: RunReport | Mapping[str, Any], path: str | os.PathLike[str],
               history: Sequence[Mapping[str, Any]] | None = None, diff: Mapping[str, Any] | None = None,
               base: Mapping[str, Any] | None = None) -> Path:
    """Write report.html atomically; returns the path (target.log linked when it is beside it)."""
    return atomic_write_text(path, render_html(report, history, diff, base=base,
                                               target_log=(Path(path).parent / "target.log").is_file()))
