"""report.html's nightly parts: trend charts over the runs in history, and tonight's diff.

Charts are inline SVG drawn here in Python: the page must open from a mail attachment or
an object-storage link with no network and with scripts blocked, so there is no chart
library and no JavaScript. A missing value (a layer that was not run, a pass rate with
nothing decidable) is a gap in the line, never a zero or a 100%.

Run ids, case ids and reasons are untrusted text like everything else on the page: all
of it goes through ``esc``.
"""

from __future__ import annotations

import html
import math
from typing import Any, Mapping, Sequence

W, H = 540, 210
PAD_L, PAD_R, PAD_T, PAD_B = 56, 12, 26, 34
PALETTE = ("#0969da", "#1a7f37", "#bf3989", "#9a6700", "#8250df", "#cf222e", "#6e7781")

CSS = """
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(540px,100%),1fr));gap:12px}
.chart{border:1px solid var(--line);border-radius:6px;padding:4px;min-width:0}
.chart svg{width:100%;height:auto;max-width:640px;display:block}
.chart text{font:11px system-ui,sans-serif;fill:#57606a}.chart .t{font-size:13px;font-weight:600;fill:#1f2328}
.legend span{display:inline-block;margin-right:10px;font-size:12px}
.legend i{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:4px;vertical-align:middle}
.diff h3{margin:14px 0 4px;font-size:15px}.diff ul{margin:4px 0}
.diff .reg{color:var(--fail);font-weight:600}
.q{display:inline-block;border:1px solid var(--soft);color:var(--soft);border-radius:8px;padding:0 6px;
font-size:11px;font-weight:600;text-transform:uppercase}
.refs{background:#fff8c5;border:1px solid #d4a72c;border-radius:6px;padding:6px 10px}
"""


def esc(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _nice_max(v: float) -> float:
    """The smallest 1/2/2.5/5 x 10^p at or above ``v`` (a readable axis top)."""
    if v <= 0:
        return 1.0
    return float(min(m * 10.0 ** p for p in range(-6, 12) for m in (1, 2, 2.5, 5) if m * 10.0 ** p >= v))


def line_chart(title: str, labels: Sequence[str], series: Mapping[str, Sequence[float | None]], *,
               fmt=lambda v: f"{v:g}", y_max: float | None = None, bars: bool = False,
               integer: bool = False) -> str:
    """One chart as an inline ``<svg>``: a line per series (or bars for a single series).
    ``integer``: counts, so the four grid steps stay whole numbers."""
    n = len(labels)
    values = [v for s in series.values() for v in s if isinstance(v, (int, float))]
    top = y_max if y_max is not None else _nice_max(max(values) if values else 0.0)
    if integer and y_max is None:
        top = float(max(4, math.ceil(max(values, default=0) / 4) * 4))
    pw, ph = W - PAD_L - PAD_R, H - PAD_T - PAD_B

    def x(i: int) -> float:
        if bars:  # bars sit in the middle of their slot, so the first and last stay inside the plot
            return PAD_L + pw * (i + 0.5) / max(n, 1)
        return PAD_L + (pw / 2 if n == 1 else pw * i / (n - 1))

    def y(v: float) -> float:
        return PAD_T + ph - (ph * min(v, top) / top if top else 0)

    parts = [f'<svg role="img" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
             f'xmlns="http://www.w3.org/2000/svg"><title>{esc(title)}</title>',
             f'<text class="t" x="{PAD_L}" y="16">{esc(title)}</text>']
    for k in range(5):  # grid and y labels
        v = top * k / 4
        yy = y(v)
        parts.append(f'<line x1="{PAD_L}" y1="{yy:.1f}" x2="{W - PAD_R}" y2="{yy:.1f}" stroke="#d0d7de" '
                     f'stroke-width="{1 if k == 0 else 0.5}"/>'
                     f'<text x="{PAD_L - 6}" y="{yy + 4:.1f}" text-anchor="end">{esc(fmt(v))}</text>')
    for i, label in enumerate(labels):
        if i in _label_slots(n):
            anchor = "middle" if bars or n == 1 else "start" if i == 0 else "end" if i == n - 1 else "middle"
            parts.append(f'<text x="{x(i):.1f}" y="{H - PAD_B + 16}" text-anchor="{anchor}">{esc(label)}</text>')
    if not values:
        parts.append(f'<text x="{PAD_L + pw / 2}" y="{PAD_T + ph / 2}" text-anchor="middle">no data</text>')
    for si, (name, vals) in enumerate(series.items()):
        color = PALETTE[si % len(PALETTE)]
        if bars:
            bw = max(4.0, min(40.0, pw / max(n, 1) * 0.6))
            for i, v in enumerate(vals):
                if isinstance(v, (int, float)):
                    parts.append(f'<rect x="{x(i) - bw / 2:.1f}" y="{y(v):.1f}" width="{bw:.1f}" '
                                 f'height="{PAD_T + ph - y(v):.1f}" fill="{color}">'
                                 f'<title>{esc(labels[i])}: {esc(fmt(v))}</title></rect>')
            continue
        segment: list[str] = []
        segments: list[list[str]] = []
        for i, v in enumerate(vals):
            if isinstance(v, (int, float)):
                segment.append(f"{x(i):.1f},{y(v):.1f}")
            elif segment:
                segments.append(segment)
                segment = []
        if segment:
            segments.append(segment)
        for seg in segments:
            if len(seg) > 1:
                parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{" ".join(seg)}"/>')
        for i, v in enumerate(vals):
            if isinstance(v, (int, float)):
                parts.append(f'<circle cx="{x(i):.1f}" cy="{y(v):.1f}" r="3.5" fill="{color}">'
                             f'<title>{esc(name)} {esc(labels[i])}: {esc(fmt(v))}</title></circle>')
    parts.append("</svg>")
    legend = "".join(f'<span><i style="background:{PALETTE[i % len(PALETTE)]}"></i>{esc(name)}</span>'
                     for i, name in enumerate(series))
    return f'<div class="chart">{"".join(parts)}<div class="legend">{legend}</div></div>'


#: At most this many x labels: each is about 70 px wide on a 540 px chart, so more would overlap.
MAX_X_LABELS = 6


def _label_slots(n: int) -> set[int]:
    """Which of ``n`` x positions get a label: evenly spread, first and last included."""
    m = min(n, MAX_X_LABELS)
    if m <= 1:
        return {0}
    return {round(k * (n - 1) / (m - 1)) for k in range(m)}


def _label(record: Mapping[str, Any], seconds: bool = False) -> str:
    rid = str(record.get("run_id", ""))
    # 20240101-020000-abcd -> 01-01 02:00 (short enough for an axis)
    if len(rid) >= 15 and rid[:8].isdigit():
        return f"{rid[4:6]}-{rid[6:8]} {rid[9:11]}:{rid[11:13]}" + (f":{rid[13:15]}" if seconds else "")
    return rid[:14]


def _labels(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """One distinct label per run: seconds are added when two runs fall in the same minute,
    and a run number when they fall in the same second."""
    labels = _labels(records)
    if len(set(labels)) < len(labels):
        labels = [_label(r, seconds=True) for r in records]
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        out.append(label if seen[label] == 1 else f"{label} #{seen[label]}")
    return out


def _ms_axis(values: Sequence[Any]):
    """One unit for a whole latency axis (never "5000ms" beside "10s"): (title unit, formatter)."""
    top = max((v for v in values if isinstance(v, (int, float))), default=0.0)
    if top >= 2000:
        return "s", lambda v: f"{v / 1000:.1f}".rstrip("0").rstrip(".") + " s"
    return "ms", lambda v: f"{v:.0f} ms"


def render_trends(records: Sequence[Mapping[str, Any]]) -> str:
    """The trend section: pass rate per layer, cost, latency p95 and soft errors per run.

    Drawn from the second run on: one point is not a trend."""
    if len(records) < 2:
        return ""
    labels = [_label(r) for r in records]
    layers = list(dict.fromkeys(name for r in records for name in r.get("layers", {})))
    rate = {name: [(r["layers"][name]["pass_rate"] * 100
                    if name in r["layers"] and r["layers"][name]["pass_rate"] is not None else None)
                   for r in records] for name in layers}
    cost = {"cost": [r["total"].get("cost_usd") for r in records]}
    lat = {name: [r["layers"][name]["latency_p95_ms"] if name in r["layers"] else None for r in records]
           for name in layers}
    soft = {"soft errors": [r["total"].get("soft", 0) for r in records]}
    unit, ms_fmt = _ms_axis([v for vals in lat.values() for v in vals])
    charts = [
        line_chart("Pass rate per layer (% of decidable)", labels, rate, fmt=lambda v: f"{v:.0f}%", y_max=100.0),
        line_chart("Cost per run (USD)", labels, cost, fmt=lambda v: f"${v:.4f}" if v < 1 else f"${v:.2f}"),
        line_chart(f"Latency p95 per layer ({unit})", labels, lat, fmt=ms_fmt),
        line_chart("Soft errors per run", labels, soft, fmt=lambda v: f"{v:.0f}", bars=True, integer=True),
    ]
    first, last = records[0].get("run_id"), records[-1].get("run_id")
    return (f'<h2 id="trends">Trends over {len(records)} run(s)</h2>'
            f'<p class="muted">{esc(first)} → {esc(last)}; a gap is a run where the layer was not run or '
            f'nothing was decidable.</p><div class="charts">{"".join(charts)}</div>')


def _case_link(case_id: Any) -> str:
    import re

    return "#case-" + re.sub(r"[^A-Za-z0-9_-]", "-", str(case_id))


def _items(entries: Sequence[Mapping[str, Any]], shown: int = 10, limit: int = 200) -> str:
    """A case list: the first ``shown`` visible, the rest (up to ``limit``) folded away."""
    lis = []
    for e in entries[:limit]:
        q = ' <span class="q">quarantined</span>' if e.get("quarantined") else ""
        lis.append(f'<li><a href="{esc(_case_link(e.get("id")))}">{esc(e.get("id"))}</a> '
                   f'<span class="muted">{esc(e.get("layer"))}</span> {esc(e.get("before") or "-")} → '
                   f'<b>{esc(e.get("after") or "-")}</b>{q}'
                   + (f' <span class="why">— {esc(e.get("why"))}</span>' if e.get("why") else "") + "</li>")
    more = f"<li>… and {len(entries) - limit} more (diff.json)</li>" if len(entries) > limit else ""
    if len(lis) <= shown:
        return "<ul>" + "".join(lis) + more + "</ul>"
    return ("<ul>" + "".join(lis[:shown]) + f"</ul><details><summary>{len(entries) - shown} more</summary><ul>"
            + "".join(lis[shown:]) + more + "</ul></details>")


def render_diff_html(diff: Mapping[str, Any] | None) -> str:
    """Tonight against the baseline, regressions first."""
    if not diff:
        return ""
    base = diff.get("base_run") or {}
    c = diff.get("counts") or {}
    parts = [f'<section class="diff" id="diff"><h2>Tonight vs {esc(base.get("run_id"))}'
             f'{" (" + esc(base.get("why")) + ")" if base.get("why") else ""}</h2>',
             f'<p><span class="{"reg" if c.get("regressions") else ""}">{esc(c.get("regressions", 0))} regressions'
             f'</span> · {esc(c.get("fixed", 0))} fixed · {esc(c.get("still_failing", 0))} still failing · '
             f'{esc(c.get("flaky", 0))} flaky · {esc(c.get("new", 0))} new · {esc(c.get("removed", 0))} removed · '
             f'{esc(c.get("drift", 0))} drift</p>']
    refs = diff.get("references") or []
    if refs:
        parts.append('<div class="refs"><b>References changed</b> — a score change may be a reference change: '
                     + "; ".join(f"{esc(r.get('what'))} {esc(r.get('before'))} → {esc(r.get('after'))}"
                                 for r in refs) + "</div>")
    for key, title in (("regressions", "New failures (regressions)"), ("fixed", "Fixed"),
                       ("still_failing", "Still failing"), ("changed", "Other status changes"),
                       ("new", "New cases"), ("removed", "Removed cases")):
        if diff.get(key):
            parts.append(f"<h3>{esc(title)} ({len(diff[key])})</h3>{_items(diff[key])}")
    if diff.get("flaky"):
        parts.append("<h3>Flaky</h3><ul>" + "".join(
            f'<li><a href="{esc(_case_link(f.get("id")))}">{esc(f.get("id"))}</a> {esc(f.get("flips"))} flips in '
            f'{esc(f.get("runs"))} runs: {esc(" ".join(s or "-" for s in f.get("statuses") or []))}'
            + (' <span class="q">quarantined</span>' if f.get("quarantined") else "") + "</li>"
            for f in diff["flaky"][:50]) + "</ul>")
    if diff.get("drift"):
        rows = "".join(f"<tr><td>{esc(d.get('scope'))}</td><td>{esc(d.get('metric'))}</td>"
                       f"<td>{esc(d.get('direction'))}</td><td class=\"n\">{esc(_num(d.get('before')))}</td>"
                       f"<td class=\"n\">{esc(_num(d.get('after')))}</td><td class=\"n\">×{esc(d.get('ratio'))}</td></tr>"
                       for d in diff["drift"][:50])
        parts.append("<h3>Metric drift</h3><table><tr><th>scope</th><th>metric</th><th></th><th>before</th>"
                     f"<th>after</th><th>ratio</th></tr>{rows}</table>")
    parts.append("</section>")
    return "".join(parts)


def _num(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return "-" if v is None else str(v)
