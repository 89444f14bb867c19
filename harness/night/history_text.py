"""``harness history`` as text: the table of runs and the per-case status strips (pure)."""

from __future__ import annotations

import math
from typing import Any, Mapping

from harness.night.history import STRIP, History, run_records, status_matrix


def fmt_rate(value: float | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    pct = 100 * value
    return "99.9%" if pct < 100 and round(pct, 1) >= 100 else f"{pct:.1f}%"


def fmt_num(value: Any, unit: str = "") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if unit == "$":
        return f"${value:.4f}"
    if unit == "ms":
        return f"{value:.0f}ms"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def render_history(hist: History, *, max_cases: int = 60, baseline: Mapping[str, Any] | None = None) -> str:
    """``harness history``: a compact table per layer over the runs, then a status strip per case.

    ``baseline``: the acceptance note (``baseline.acceptance_note``): which run is the baseline,
    who accepted it, when and why, and the cases accepted since from later runs."""
    if not hist.runs:
        return "no runs found\n" + "".join(f"warning: {w}\n" for w in hist.warnings)
    records = run_records(hist.runs)
    out = [f"{len(records)} run(s): {records[0]['run_id']} .. {records[-1]['run_id']}"]
    if baseline:
        from harness.report.diff_text import note_lines

        out += note_lines(baseline)
    layers = list(dict.fromkeys(name for r in records for name in r["layers"])) + ["total"]
    head = f"  {'run':<22} {'verdict':<10} {'pass rate':>9} {'pass/dec':>9} {'soft':>4} {'fail':>4} " \
           f"{'err':>4} {'n/a':>4} {'cost':>9} {'tokens':>8} {'p95':>8} {'sim':>6}"
    for layer in layers:
        out += ["", f"[{layer}]", head]
        for r in records:
            m = r["total"] if layer == "total" else r["layers"].get(layer)
            if m is None:
                out.append(f"  {r['run_id']:<22} (not run)")
                continue
            out.append(
                f"  {r['run_id']:<22} {r['verdict']:<10} {fmt_rate(m['pass_rate']):>9} "
                f"{str(m['passed']) + '/' + str(m['decidable']):>9} {m['soft']:>4} {m['failed']:>4} "
                f"{m['errored']:>4} {m['unavailable']:>4} {fmt_num(m['cost_usd'], '$'):>9} {m['tokens']:>8} "
                f"{fmt_num(m['latency_p95_ms'], 'ms'):>8} {fmt_num(m['similarity']):>6}")
    matrix = status_matrix(hist.runs)
    out += ["", "cases (oldest run left; . pass  s soft  F fail  E error  u unavailable  - skipped  blank: not run):"]
    # Cases that ever went wrong first: that is what a reader scans for.
    ordered = sorted(matrix.items(), key=lambda kv: (all(s in ("pass", None) for s in kv[1]), kv[0]))
    width = max((len(k) for k in matrix), default=10)
    for case_id, statuses in ordered[:max_cases]:
        out.append(f"  {case_id:<{width}} {''.join(STRIP.get(s, '?') for s in statuses)}")
    if len(ordered) > max_cases:
        out.append(f"  ... and {len(ordered) - max_cases} more cases (all passing); --parquet FILE for everything")
    out += [f"warning: {w}" for w in hist.warnings]
    return "\n".join(out) + "\n"
