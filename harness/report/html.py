"""report.html: one static, self-contained page to drill into a run.

No external resources and no JavaScript: the file is read from object storage, CI
artifacts or a mail attachment, often with scripts blocked. Drill-down uses ``<details>``.

Everything the agent said, every case text and every evidence string is untrusted: it is
passed through ``html.escape`` at the one place it enters the page (``esc``), and a
Content-Security-Policy that forbids scripts backs that up should an escape ever be missed.
"""

from __future__ import annotations

import html
import json
import os
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping, Sequence

from harness.report.jsonfile import as_report_dict
from harness.fileio import atomic_write_text
from harness.report.format import format_cost, format_ms, headline, pass_rate
from harness.report.cost_section import cost_html
from harness.types import RunReport

#: Cases are listed most severe first: the reader opens the page to see what broke.
SEVERITY = {"fail": 0, "error": 1, "unavailable": 2, "soft": 3, "skipped": 4, "pass": 5}
COUNT_FIELDS = ("planned", "executed", "decidable", "passed", "soft", "failed", "errored", "unavailable", "skipped")

CSS = """
:root{--pass:#1a7f37;--soft:#9a6700;--fail:#cf222e;--error:#8250df;--unavailable:#6e7781;--skipped:#6e7781;
--bg:#fff;--fg:#1f2328;--muted:#656d76;--line:#d0d7de;--code:#f6f8fa}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg);
margin:0 auto;padding:24px;max-width:1200px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
.muted{color:var(--muted)}
table{border-collapse:collapse;width:100%;margin:6px 0}
th,td{border:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
th{background:var(--code)}td.n{text-align:right;font-variant-numeric:tabular-nums}
.badge{display:inline-block;min-width:72px;text-align:center;border-radius:10px;padding:1px 8px;
color:#fff;font-size:12px;font-weight:600;text-transform:uppercase}
.b-pass{background:var(--pass)}.b-soft{background:var(--soft)}.b-fail{background:var(--fail)}
.b-error{background:var(--error)}.b-unavailable,.b-skipped{background:var(--unavailable)}
.counts{display:flex;flex-wrap:wrap;gap:8px;margin:12px 0}
.counts div{border:1px solid var(--line);border-radius:6px;padding:6px 12px}
.counts b{display:block;font-size:18px}
details.case{border:1px solid var(--line);border-radius:6px;margin:6px 0;padding:0 10px}
details.case>summary{cursor:pointer;padding:7px 0;list-style-position:outside}
details.case[open]>summary{border-bottom:1px solid var(--line);margin-bottom:8px}
details.fail{border-left:4px solid var(--fail)}details.error{border-left:4px solid var(--error)}
details.soft{border-left:4px solid var(--soft)}details.unavailable{border-left:4px solid var(--unavailable)}
.why{color:var(--muted)}
pre{background:var(--code);padding:6px 8px;margin:2px 0;white-space:pre-wrap;word-break:break-word;
font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace}
.turn{border-left:3px solid var(--line);padding-left:10px;margin:10px 0}
.who{font-weight:600;font-size:12px}
tr.bad td{background:#ffebe9}tr.na td{background:#f6f8fa;color:var(--muted)}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:6px 0}
dl.meta dt{color:var(--muted)}dl.meta dd{margin:0}
"""


def esc(value: Any) -> str:
    """Untrusted value as HTML text (quotes too, so it is safe inside attributes)."""
    return html.escape("" if value is None else str(value), quote=True)


def _anchor(case_id: Any) -> str:
    return "case-" + re.sub(r"[^A-Za-z0-9_-]", "-", str(case_id))


def _badge(status: Any) -> str:
    s = str(status)
    cls = s if s in SEVERITY else "skipped"
    return f'<span class="badge b-{cls}">{esc(s)}</span>'


def _clock(ts: Any) -> str:
    if not isinstance(ts, (int, float)):
        return ""
    return datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%H:%M:%S.%f")[:-3] + "Z"


def _counts_cells(counts: Mapping[str, Any]) -> str:
    cells = "".join(f'<td class="n">{esc(counts.get(k, 0))}</td>' for k in COUNT_FIELDS)
    return (cells + f'<td class="n">{esc(pass_rate(counts))}</td>'
            f'<td class="n">{esc(format_cost(counts.get("cost_usd")))}</td>'
            f"<td>{esc(counts.get('verdict', ''))}</td>")


def _evidence_table(items: list[Mapping[str, Any]]) -> str:
    if not items:
        return '<p class="why">No evidence: a case without evidence never passes.</p>'
    rows = []
    for e in items:
        if e.get("availability") == "unavailable":
            cls, verdict = "na", "unavailable"
        elif e.get("passed") is True:
            cls, verdict = "", "passed"
        else:
            cls, verdict = "bad", "failed"
        turn = "case" if e.get("turn") is None else e.get("turn")
        score = e.get("score")
        score = f"{score:.3f}" if isinstance(score, (int, float)) else ("" if score is None else score)
        rows.append(
            f'<tr class="{cls}"><td>{esc(e.get("check"))}</td><td>{esc(turn)}</td><td>{esc(verdict)}</td>'
            f'<td class="n">{esc(score)}</td><td><pre>{esc(e.get("expected"))}</pre></td>'
            f'<td><pre>{esc(e.get("observed"))}</pre></td><td>{esc(e.get("reason"))}</td>'
            f'<td>{esc(e.get("evaluator"))}<br><span class="muted">{esc(e.get("source"))}</span></td></tr>'
        )
    return ("<table><tr><th>check</th><th>turn</th><th>verdict</th><th>score</th><th>expected</th>"
            "<th>observed</th><th>reason</th><th>evaluator / source</th></tr>" + "".join(rows) + "</table>")


def _turn_html(t: Mapping[str, Any]) -> str:
    sent_at = t.get("sent_at")
    status = t.get("delivery_status")
    head = [f"Turn {esc(t.get('index'))}", esc(_clock(sent_at)),
            f"webhook answered {esc(status)}" if status is not None else "not delivered"]
    if t.get("timed_out"):
        head.append("<b>timed out</b>")
    parts = [f'<div class="turn"><div class="muted">{" · ".join(h for h in head if h)}</div>']
    if t.get("sent") is not None:
        parts.append(f'<div class="who">user →</div><pre>{esc(t["sent"])}</pre>')
    if t.get("delivery_error"):
        parts.append(f'<div class="who">delivery error</div><pre>{esc(t["delivery_error"])}</pre>')
    replies = t.get("replies") or []
    if not replies:
        parts.append('<div class="muted">no reply</div>')
    for r in replies:
        offset = ""
        if isinstance(r.get("at"), (int, float)) and isinstance(sent_at, (int, float)):
            offset = f" +{format_ms((r['at'] - sent_at) * 1000)}"
        buttons = " ".join(f"[{esc(b)}]" for b in r.get("buttons") or [])
        parts.append(f'<div class="who">agent ← <span class="muted">{esc(r.get("method"))} '
                     f'{esc(r.get("kind"))}{esc(offset)}</span></div><pre>{esc(r.get("text"))}</pre>'
                     + (f'<div class="muted">buttons: {buttons}</div>' if buttons else ""))
    calls = t.get("calls") or []
    if calls:
        rows = "".join(
            f'<tr class="{"bad" if c.get("error") else ""}"><td>{esc(c.get("source"))}</td><td>{esc(c.get("name"))}</td>'
            f'<td class="n">{esc(c.get("status"))}</td><td class="n">{esc(format_ms(c.get("duration_ms")))}</td>'
            f'<td>{esc(c.get("error"))}</td></tr>' for c in calls)
        parts.append('<table><tr><th>source</th><th>call</th><th>status</th><th>time</th><th>error</th></tr>'
                     + rows + "</table>")
    if t.get("state") is not None:
        state = json.dumps(t["state"], indent=2, ensure_ascii=False, sort_keys=True, default=str)
        parts.append(f'<div class="who">state after turn</div><pre>{esc(state)}</pre>')
    parts.append("</div>")
    return "".join(parts)


def _case_html(c: Mapping[str, Any]) -> str:
    status = str(c.get("status", ""))
    is_open = " open" if status in ("fail", "error") else ""
    why = headline(c)
    tokens = c.get("tokens") or {}
    meta = [
        ("layer / channel", f"{c.get('layer', '')} / {c.get('channel', '')}"),
        ("file", c.get("file")), ("tags", ", ".join(map(str, c.get("tags") or []))),
        ("attempts / passes", f"{c.get('attempts', 1)} / {c.get('passes', '')}"),
        ("pass@k / pass^k", f"{c.get('pass_at_k')} / {c.get('pass_hat_k')}"),
        ("latency", format_ms(c.get("latency_ms"))), ("duration", format_ms(c.get("duration_ms"))),
        ("LLM calls", c.get("llm_calls")),
        ("tokens in / out", f"{tokens.get('input', 0)} / {tokens.get('output', 0)}"),
        ("cost", format_cost(c.get("cost_usd"))), ("error", c.get("error")),
    ]
    dl = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in meta if v not in (None, ""))
    turns = c.get("turns") or []
    transcript = ("".join(_turn_html(t) for t in turns) if turns
                  else '<p class="muted">No transcript recorded.</p>')
    return (f'<details class="case {esc(status)}" id="{esc(_anchor(c.get("id")))}"{is_open}>'
            f"<summary>{_badge(status)} <b>{esc(c.get('id'))}</b> "
            + (' <span class="q">quarantined</span> ' if c.get("quarantined") else "") +
            f'<span class="muted">{esc(c.get("layer"))}/{esc(c.get("channel"))} · '
            f'{esc(format_ms(c.get("latency_ms")))}</span>'
            + (f' <span class="why">— {esc(why)}</span>' if why else "")
            + f'</summary><dl class="meta">{dl}</dl><h3>Evidence</h3>{_evidence_table(c.get("evidence") or [])}'
            f"<h3>Transcript</h3>{transcript}</details>")


def layer_sections(d: Mapping[str, Any]) -> str:
    """Each layer's own section (``Layer.report_html`` over results.json ``layers.<name>``)."""
    from harness import layer as layer_registry

    parts = []
    for name, block in (d.get("layers") or {}).items():
        layer = layer_registry.get(name)
        if layer is None or not isinstance(block, Mapping):
            continue
        try:
            fragment = layer.report_html(block)
        except Exception as exc:  # a layer's rendering bug must not lose the report
            fragment = f"<p>the {esc(name)} layer's section failed: {esc(type(exc).__name__)}: {esc(exc)}</p>"
        if fragment:
            parts.append(f'<section class="layer"><h2>{esc(layer.title)}</h2>{fragment}</section>')
    return "".join(parts)


def render_html(report: RunReport | Mapping[str, Any], history: Sequence[Mapping[str, Any]] | None = None,
                diff: Mapping[str, Any] | None = None) -> str:
    """The report page for a report (or its results.json dict).

    ``history``: run records (``harness.night.history.run_records``, oldest first) for the trend
    charts; ``diff``: tonight against the baseline (``harness.night.diff.diff_runs``), shown first.
    """
    from harness.report.html_trends import CSS as TRENDS_CSS, render_diff_html, render_trends
    from harness.report.repeats import html_section as repeats_html  # slots, pass@k, flaky

    d = as_report_dict(report)
    summary = d.get("summary") or {}
    cases = sorted(d.get("cases") or [], key=lambda c: SEVERITY.get(c.get("status"), 9))
    verdict = summary.get("verdict", "?")
    target = d.get("target") or {}
    models = d.get("models") or {}

    counts = "".join(f"<div><b>{esc(summary.get(k, 0))}</b>{esc(k)}</div>" for k in COUNT_FIELDS)
    counts += f"<div><b>{esc(pass_rate(summary))}</b>pass rate (passed / decidable)</div>"
    counts += f"<div><b>{esc(format_cost(summary.get('cost_usd')))}</b>cost</div>"

    severe = [c for c in cases if c.get("status") in ("fail", "error")]
    severe_html = ""
    if severe:
        severe_html = "<h2>What broke</h2><ul>" + "".join(
            f'<li>{_badge(c.get("status"))} <a href="#{esc(_anchor(c.get("id")))}">{esc(c.get("id"))}</a> '
            f'<span class="why">{esc(headline(c))}</span></li>' for c in severe) + "</ul>"

    head_cells = "".join(f"<th>{esc(k)}</th>" for k in COUNT_FIELDS)
    layer_rows = "".join(f"<tr><td>{esc(name)}</td>{_counts_cells(c)}</tr>"
                         for name, c in (d.get("layers") or {}).items())
    layer_rows += f"<tr><th>total</th>{_counts_cells(summary)}</tr>"

    notes = d.get("notes") or []
    notes_html = ("<h2>Notes</h2><ul>" + "".join(f"<li><pre>{esc(n)}</pre></li>" for n in notes) + "</ul>"
                  if notes else "")
    meta = " · ".join(esc(x) for x in (
        f"target {target.get('name', '')} {target.get('version', '')}".strip(),
        f"golden {d.get('golden_version', '')}",
        *(f"{k} {v}" for k, v in models.items() if v and not isinstance(v, dict)),  # stats: in notes
        f"harness {d.get('harness_version', '')}",
        f"{d.get('started_at', '')} → {d.get('finished_at', '')}",
        f"exit {d.get('exit_code', '')}",
    ))
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>harness {esc(d.get('run_id'))}: {esc(verdict)}</title>
<style>{CSS}{TRENDS_CSS}</style></head><body>
<header><h1>{_badge(verdict)} run {esc(d.get('run_id'))}</h1>
<div class="muted">{meta}</div>
<div class="counts">{counts}</div></header>
{render_diff_html(diff)}
{render_trends(history or [])}
{severe_html}
<h2>Layers</h2>
<table><tr><th>layer</th>{head_cells}<th>pass rate</th><th>cost</th><th>verdict</th></tr>{layer_rows}</table>
<p class="muted">Unavailable evidence (judge down, probe or golden missing) is never counted as passed;
it makes the case unavailable and shrinks "decidable".</p>
{layer_sections(d)}
{repeats_html(d)}
{cost_html(d)}
{notes_html}
<h2>Cases ({len(cases)})</h2>
{''.join(_case_html(c) for c in cases)}
</body></html>
"""


def write_html(report: RunReport | Mapping[str, Any], path: str | os.PathLike[str],
               history: Sequence[Mapping[str, Any]] | None = None, diff: Mapping[str, Any] | None = None) -> Path:
    """Write report.html atomically; returns the path."""
    return atomic_write_text(path, render_html(report, history, diff))
