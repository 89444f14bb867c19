"""report.html's nightly parts: trend charts over the runs in history, and tonight's diff.

Charts are inline SVG: their geometry is computed here (``chart_data``, plain numbers and
labels) and drawn by the ``chart`` macro of templates/report/chart.html.j2. The page must open from a mail attachment or
an object-storage link with no network and with scripts blocked, so there is no chart
library and no JavaScript. A missing value (a layer that was not run, a pass rate with
nothing decidable) is a gap in the line, never a zero or a 100%.

Run ids, case ids and reasons are untrusted text like everything else on the page: the
templates escape all of it.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from harness.report.templating import fragment

W, H = 540, 210
PAD_L, PAD_R, PAD_T, PAD_B = 56, 12, 26, 34
PALETTE = ("#0969da", "#1a7f37", "#bf3989", "#9a6700", "#8250df", "#cf222e", "#6e7781")

#: The charts' and the diff's style: templates/report/trends.css.


def _nice_max(v: float) -> float:
    """The smallest 1/2/2.5/5 x 10^p at or above ``v`` (a readable axis top)."""
    if v <= 0:
        return 1.0
    return float(min(m * 10.0 ** p for p in range(-6, 12) for m in (1, 2, 2.5, 5) if m * 10.0 ** p >= v))


def chart_data(title: str, labels: Sequence[str], series: Mapping[str, Sequence[float | None]], *,
               fmt=lambda v: f"{v:g}", y_max: float | None = None, bars: bool = False,
               integer: bool = False) -> dict[str, Any]:
    """One chart's geometry as data (coordinates rounded to 0.1 px as text) for the ``chart``
    macro of templates/report/chart.html.j2: a line per series (or bars for a single series).
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

    grid = []
    for k in range(5):  # grid and y labels
        v = top * k / 4
        yy = y(v)
        grid.append({"y": f"{yy:.1f}", "width": 1 if k == 0 else 0.5, "lx": PAD_L - 6, "ly": f"{yy + 4:.1f}",
                     "label": fmt(v)})
    xlabels = []
    for i, label in enumerate(labels):
        if i in _label_slots(n):
            anchor = "middle" if bars or n == 1 else "start" if i == 0 else "end" if i == n - 1 else "middle"
            xlabels.append({"x": f"{x(i):.1f}", "y": H - PAD_B + 16, "anchor": anchor, "text": label})
    out: dict[str, Any] = {"title": title, "w": W, "h": H, "pad_l": PAD_L, "x2": W - PAD_R, "grid": grid,
                           "xlabels": xlabels, "bars": [], "lines": [],
                           "nodata": None if values else {"x": PAD_L + pw / 2, "y": PAD_T + ph / 2},
                           "legend": [(PALETTE[i % len(PALETTE)], name) for i, name in enumerate(series)]}
    for si, (name, vals) in enumerate(series.items()):
        color = PALETTE[si % len(PALETTE)]
        if bars:
            bw = max(4.0, min(40.0, pw / max(n, 1) * 0.6))
            out["bars"] += [{"x": f"{x(i) - bw / 2:.1f}", "y": f"{y(v):.1f}", "w": f"{bw:.1f}",
                             "h": f"{PAD_T + ph - y(v):.1f}", "color": color, "title": f"{labels[i]}: {fmt(v)}"}
                            for i, v in enumerate(vals) if isinstance(v, (int, float))]
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
        out["lines"].append({"color": color, "segments": [seg for seg in segments if len(seg) > 1],
                             "dots": [{"x": f"{x(i):.1f}", "y": f"{y(v):.1f}", "title": f"{name} {labels[i]}: {fmt(v)}"}
                                      for i, v in enumerate(vals) if isinstance(v, (int, float))]})
    return out


def line_chart(title: str, labels: Sequence[str], series: Mapping[str, Sequence[float | None]], **kw: Any) -> str:
    """One chart as an inline ``<svg>`` in its ``div.chart`` (``chart_data`` drawn by its template)."""
    return fragment("report/chart.html.j2", chart_data=chart_data(title, labels, series, **kw))


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
    labels = [_label(r) for r in records]
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
        chart_data("Pass rate per layer (% of decidable)", labels, rate, fmt=lambda v: f"{v:.0f}%", y_max=100.0),
        chart_data("Cost per run (USD)", labels, cost, fmt=lambda v: f"${v:.4f}" if v < 1 else f"${v:.2f}"),
        chart_data(f"Latency p95 per layer ({unit})", labels, lat, fmt=ms_fmt),
        chart_data("Soft errors per run", labels, soft, fmt=lambda v: f"{v:.0f}", bars=True, integer=True),
    ]
    first, last = records[0].get("run_id"), records[-1].get("run_id")
    return fragment("report/trends.html.j2", runs=len(records), first=first, last=last, charts=charts)


def _case_link(case_id: Any) -> str:
    import re

    return "#case-" + re.sub(r"[^A-Za-z0-9_-]", "-", str(case_id))


def _entry(e: Mapping[str, Any]) -> dict[str, Any]:
    return {"link": _case_link(e.get("id")), "id": e.get("id"), "layer": e.get("layer"), "before": e.get("before"),
            "after": e.get("after"), "quarantined": bool(e.get("quarantined")), "why": e.get("why")}


def _items(entries: Sequence[Mapping[str, Any]], shown: int = 10, limit: int = 200) -> dict[str, Any]:
    """A case list: the first ``shown`` visible, the rest (up to ``limit``) folded away."""
    listed = [_entry(e) for e in entries[:limit]]
    return {"total": len(entries), "shown": listed[:shown], "folded": listed[shown:],
            "folded_count": len(entries) - shown, "more": len(entries) - limit if len(entries) > limit else 0}


def render_diff_html(diff: Mapping[str, Any] | None) -> str:
    """Tonight against the baseline, regressions first."""
    if not diff:
        return ""
    base = diff.get("base_run") or {}
    c = diff.get("counts") or {}
    lists = [(title, _items(diff[key])) for key, title in (
        ("regressions", "New failures (regressions)"), ("fixed", "Fixed"), ("still_failing", "Still failing"),
        ("changed", "Other status changes"), ("new", "New cases"), ("removed", "Removed cases")) if diff.get(key)]
    from harness.report.diff_text import flaky_text

    flaky = [{"link": _case_link(f.get("id")), "id": f.get("id"), "flips": f.get("flips"), "runs": f.get("runs"),
              "statuses": " ".join(s or "-" for s in f.get("statuses") or []),
              "text": flaky_text(f) + ("" if f.get("attempts") else
                                       ": " + " ".join(s or "-" for s in f.get("statuses") or [])),
              "quarantined": bool(f.get("quarantined"))} for f in (diff.get("flaky") or [])[:50]]
    drift = [{"scope": d.get("scope"), "metric": d.get("metric"), "direction": d.get("direction"),
              "before": _num(d.get("before")), "after": _num(d.get("after")), "ratio": d.get("ratio")}
             for d in (diff.get("drift") or [])[:50]]
    return fragment("report/diff.html.j2", base={"run_id": base.get("run_id"), "why": base.get("why")},
                    c={k: c.get(k, 0) for k in ("regressions", "fixed", "still_failing", "flaky", "new", "removed",
                                                "drift")},
                    refs=[{"what": r.get("what"), "before": r.get("before"), "after": r.get("after")}
                          for r in diff.get("references") or []], lists=lists, flaky=flaky, drift=drift)


def _num(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return "-" if v is None else str(v)
