"""report.html: one static, self-contained page to drill into a run.

No external resources: the file is read from object storage, CI artifacts or a mail
attachment, often with scripts blocked. It opens on one sentence saying what happened
tonight (``format.tonight_sentence``), then the regressions, then the trends; the cases
follow, grouped by layer, drill-down by ``<details>``. Everything is readable without
JavaScript; one small inline script (``SCRIPT``) adds filtering by status and a search box,
and it is the only script the page's Content-Security-Policy allows (by its sha256 hash).

Everything the agent said, every case text and every evidence string is untrusted: it is
passed through ``html.escape`` at the one place it enters the page (``esc``), and the CSP
(no script but ``SCRIPT``, no inline handlers) backs that up should an escape ever be missed.
Nothing unknown is printed as "None": an unknown value is left out or shown as "-".
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping, Sequence

from harness.report.jsonfile import as_report_dict
from harness.fileio import atomic_write_text
from harness.report.format import format_cost, format_ms, headline, known_version, pass_rate, tonight_sentence
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
.sentence{font-size:18px;font-weight:600;margin:6px 0 2px}
.press{display:inline-block;border:1px solid var(--line);border-radius:12px;padding:1px 10px;margin:2px 0;
background:var(--code);font-size:13px}
.filters{display:flex;flex-wrap:wrap;gap:6px 14px;align-items:center;margin:8px 0;padding:6px 8px;
border:1px solid var(--line);border-radius:6px;position:sticky;top:0;background:var(--bg);z-index:1}
.filters input[type=search]{flex:1 1 200px;min-width:0;padding:4px 6px;font:inherit}
.filters label{white-space:nowrap}
h3.layer{font-size:15px;margin:18px 0 4px}
.links a{margin-right:12px}
@media (max-width:600px){body{padding:10px}.counts div{padding:4px 8px}table{display:block;overflow-x:auto}}
"""

#: The page's one script: status checkboxes and a search box over the cases (the page reads
#: fine without it). Allowed by the CSP through its hash; it uses no inline handlers. A link
#: may preset both: ``report.html#status=fail,error&q=timeout``.
SCRIPT = """(function(){
var f=document.getElementById('filters');if(!f)return;f.hidden=false;
var q=document.getElementById('q'),boxes=f.querySelectorAll('input[type=checkbox]'),shown=document.getElementById('shown');
var cases=document.querySelectorAll('details.case');
function apply(){var on={},t=q.value.trim().toLowerCase(),total=0;
for(var i=0;i<boxes.length;i++)on[boxes[i].value]=boxes[i].checked;
for(var j=0;j<cases.length;j++){var d=cases[j];var ok=on[d.getAttribute('data-status')]!==false&&
(!t||d.textContent.toLowerCase().indexOf(t)>=0);d.hidden=!ok;if(ok)total++;}
var groups=document.querySelectorAll('section.layer-cases');
for(var k=0;k<groups.length;k++){var n=groups[k].querySelectorAll('details.case:not([hidden])').length;
groups[k].hidden=n===0;groups[k].querySelector('.n-shown').textContent=n;}
shown.textContent=total;}
var h=new URLSearchParams(location.hash.slice(1));if(h.get('q'))q.value=h.get('q');
if(h.get('status')){var want=h.get('status').split(',');for(var i=0;i<boxes.length;i++)boxes[i].checked=want.indexOf(boxes[i].value)>=0;}
q.addEventListener('input',apply);for(var i=0;i<boxes.length;i++)boxes[i].addEventListener('change',apply);apply();
})();"""
SCRIPT_HASH = "sha256-" + base64.b64encode(hashlib.sha256(SCRIPT.encode("utf-8")).digest()).decode("ascii")
CSP = f"default-src 'none'; style-src 'unsafe-inline'; script-src '{SCRIPT_HASH}'; img-src data:"


def esc(value: Any) -> str:
    """Untrusted value as HTML text (quotes too, so it is safe inside attributes)."""
    return html.escape("" if value is None else str(value), quote=True)


def _anchor(case_id: Any) -> str:
    from harness.report.html_changes import case_anchor  # one rule for the section's links and the ids

    return case_anchor(case_id)


def _badge(status: Any) -> str:
    s = str(status)
    cls = s if s in SEVERITY else "skipped"
    return f'<span class="badge b-{cls}">{esc(s)}</span>'


def _clock(ts: Any) -> str:
    if not isinstance(ts, (int, float)):
        return ""
    return datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%H:%M:%S.%f")[:-3] + "Z"


def _yes_no(value: Any) -> str:
    return "-" if value is None else ("yes" if value else "no")


def _counts_cells(counts: Mapping[str, Any]) -> str:
    cells = "".join(f'<td class="n">{esc(counts.get(k) or 0)}</td>' for k in COUNT_FIELDS)
    return (cells + f'<td class="n">{esc(pass_rate(counts))}</td>'
            f'<td class="n">{esc(format_cost(counts.get("cost_usd")))}</td>'
            f"<td>{esc(counts.get('verdict') or '')}</td>")


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
    head = [f"Turn {esc(t.get('index') if t.get('index') is not None else '')}", esc(_clock(sent_at)),
            f"webhook answered {esc(status)}" if status is not None else "not delivered"]
    if t.get("timed_out"):
        head.append("<b>timed out</b>")
    parts = [f'<div class="turn"><div class="muted">{" · ".join(h for h in head if h)}</div>']
    if t.get("pressed") is not None:  # a button press is no typed text
        parts.append(f'<div class="who">user pressed a button →</div><span class="press">🔘 {esc(t["pressed"])}</span>')
    elif t.get("sent") is not None:
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


def _case_html(c: Mapping[str, Any], against: str = "") -> str:
    status = str(c.get("status", ""))
    is_open = " open" if status in ("fail", "error") else ""
    why = headline(c)
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
    dl = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in meta if v not in (None, ""))
    turns = c.get("turns") or []
    transcript = ("".join(_turn_html(t) for t in turns) if turns
                  else '<p class="muted">No transcript recorded.</p>')
    return (f'<details class="case {esc(status)}" id="{esc(_anchor(c.get("id")))}" data-status="{esc(status)}"'
            f'{is_open}><summary>{_badge(status)} <b>{esc(c.get("id"))}</b> '
            + (' <span class="q">quarantined</span> ' if c.get("quarantined") else "") +
            f'<span class="muted">{esc(c.get("layer"))}/{esc(c.get("channel"))} · '
            f'{esc(format_ms(c.get("duration_ms")))}</span>'
            + (f' <span class="why">— {esc(why)}</span>' if why else "")
            + f'</summary><dl class="meta">{dl}</dl><h3>Evidence</h3>{_evidence_table(c.get("evidence") or [])}'
            f"{against}<h3>Transcript</h3>{transcript}</details>")


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


def _cases_by_layer(d: Mapping[str, Any], cases: list[Mapping[str, Any]],
                    against: Mapping[str, str] | None = None) -> str:
    """The filter bar (hidden until the script shows it) and the cases, one group per layer."""
    order = list(dict.fromkeys([*(d.get("layers") or {}), *(str(c.get("layer") or "") for c in cases)]))
    by_status: dict[str, int] = {}
    for c in cases:
        by_status[str(c.get("status", ""))] = by_status.get(str(c.get("status", "")), 0) + 1
    boxes = "".join(f'<label><input type="checkbox" value="{esc(st)}" checked> {_badge(st)} {n}</label>'
                    for st, n in sorted(by_status.items(), key=lambda kv: SEVERITY.get(kv[0], 9)))
    bar = (f'<div class="filters" id="filters" hidden><input type="search" id="q" placeholder="search cases: id, '
           f'text, reason…" aria-label="search cases">{boxes}<span class="muted"><span id="shown">{len(cases)}'
           f'</span> of {len(cases)} shown</span></div>')
    groups = []
    for layer in order:
        members = [c for c in cases if str(c.get("layer") or "") == layer]
        if not members:
            continue
        groups.append(f'<section class="layer-cases" data-layer="{esc(layer)}"><h3 class="layer">'
                      f'{esc(layer or "no layer")} (<span class="n-shown">{len(members)}</span> of {len(members)})'
                      f'</h3>{"".join(_case_html(c, (against or {}).get(str(c.get("id")), "")) for c in members)}</section>')
    return bar + "".join(groups)


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
    from harness.report.html_changes import CSS as CHANGES_CSS, by_case, case_block, changes_html
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
    target_name = " ".join(x for x in (str(target.get("name") or ""), known_version(target.get("version"))) if x)
    meta = " · ".join(esc(x) for x in (
        f"run {d.get('run_id') or '-'}",
        f"golden {d.get('golden_version')}" if known_version(d.get("golden_version")) else "",
        *(f"{k} {v}" for k, v in models.items() if v and not isinstance(v, dict)),  # stats: in notes
        f"harness {d.get('harness_version')}" if known_version(d.get("harness_version")) else "",
        f"{d.get('started_at') or '-'} → {d.get('finished_at') or '-'}",
        f"exit {d.get('exit_code') if d.get('exit_code') is not None else '-'}",
    ) if x)
    links = ['<a href="results.json">results.json</a>', '<a href="summary.md">summary.md</a>']
    if target_log:
        links.append('<a href="target.log">target.log</a> <span class="muted">(the agent\'s own output: '
                     'tracebacks of a crashed bot are here)</span>')
    sentence = tonight_sentence(d, diff, history)
    groups, changes_note = changes_or_note(d, base)
    try:
        changes_section = changes_html(groups)
        against = {cid: case_block(entries) for cid, entries in by_case(groups).items()}
    except Exception as exc:  # like a layer's section: its bug must not lose the report
        changes_section, against = "", {}
        changes_note = f"the changes against the baseline could not be drawn: {type(exc).__name__}: {exc}"
    if changes_note:
        changes_section += f'<p class="why">{esc(changes_note)}</p>'
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{esc(target_name or "harness")} {esc(d.get('run_id'))}: {esc(sentence)}</title>
<style>{CSS}{TRENDS_CSS}{CHANGES_CSS}</style></head><body>
<header><h1>{_badge(verdict)} {esc(target_name or "harness run")}</h1>
<p class="sentence" id="sentence">{esc(sentence)}</p>
<div class="muted">{meta}</div>
<div class="links">{"".join(links)}</div>
<div class="counts">{counts}</div></header>
{render_diff_html(diff)}
{render_trends(history or [])}
{severe_html}
{changes_section}
<h2>Layers</h2>
<table><tr><th>layer</th>{head_cells}<th>pass rate</th><th>cost</th><th>verdict</th></tr>{layer_rows}</table>
<p class="muted">Unavailable evidence (judge down, probe or golden missing) is never counted as passed;
it makes the case unavailable and shrinks "decidable".</p>
{layer_sections(d)}
{repeats_html(d)}
{cost_html(d)}
{notes_html}
<h2 id="cases">Cases ({len(cases)}), by layer</h2>
{_cases_by_layer(d, cases, against)}
<script>{SCRIPT}</script>
</body></html>
"""


def write_html(report: RunReport | Mapping[str, Any], path: str | os.PathLike[str],
               history: Sequence[Mapping[str, Any]] | None = None, diff: Mapping[str, Any] | None = None,
               base: Mapping[str, Any] | None = None) -> Path:
    """Write report.html atomically; returns the path (target.log linked when it is beside it)."""
    return atomic_write_text(path, render_html(report, history, diff, base=base,
                                               target_log=(Path(path).parent / "target.log").is_file()))
