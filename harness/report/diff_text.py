"""A diff (``harness.night.diff.diff_runs``'s dict, diff.json) for people: the terminal and summary.md forms."""

from __future__ import annotations

from typing import Any, Mapping

from harness.report.format import code, md, one_line

#: Entries listed per section before "... and N more (diff.json)".
MAX_LISTED = 20

def _fmt(metric: str, value: Any) -> str:
    if value is None:
        return "-"
    if metric == "cost_usd":
        return f"${value:.4f}"
    if metric == "latency_p95_ms":
        return f"{value:.0f}ms"
    if metric == "similarity":
        return f"{value:.3f}"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _case_line(e: Mapping[str, Any]) -> str:
    q = " [quarantined]" if e.get("quarantined") else ""
    return f"{e['id']} ({e.get('layer', '')}): {e.get('before') or '-'} -> {e.get('after') or '-'}{q}" + \
        (f" - {e['why']}" if e.get("why") else "")


def acceptance_line(record: Mapping[str, Any]) -> str:
    """``by alice at 2026-12-01T20:00:00+00:00: tone change approved`` (the reason when given)."""
    reason = record.get("reason") or record.get("note")
    return f"by {record.get('accepted_by', '?')} at {record.get('accepted_at', '?')}" + (f": {reason}" if reason else "")


def note_lines(note: Mapping[str, Any] | None, *, max_cases: int = 10) -> list[str]:
    """The acceptance note as plain lines (``harness history``, ``harness diff``, summary.md)."""
    if not note:
        return []
    out = [f"baseline {note.get('run_id')} accepted {acceptance_line(note)}"]
    cases = note.get("cases") or {}
    if cases:
        by_run: dict[tuple[str, str, str, str], list[str]] = {}
        for cid, e in sorted(cases.items()):
            key = (str(e.get("run_id")), str(e.get("accepted_by", "?")), str(e.get("accepted_at", "?")),
                   str(e.get("reason") or ""))
            by_run.setdefault(key, []).append(cid)
        out.append(f"{len(cases)} case(s) accepted since from later runs:")
        for (run_id, who, at, reason), ids in list(by_run.items())[:max_cases]:
            shown = ", ".join(ids[:max_cases]) + (f" and {len(ids) - max_cases} more" if len(ids) > max_cases else "")
            out.append(f"  {shown} <- {run_id} by {who} at {at}" + (f": {reason}" if reason else ""))
    return out


SECTIONS = (("regressions", "New failures (regressions)"), ("fixed", "Fixed"),
            ("still_failing", "Still failing"), ("changed", "Other status changes"),
            ("new", "New cases"), ("removed", "Removed cases"))


def render_diff_text(diff: Mapping[str, Any]) -> str:
    """The terminal form of a diff."""
    base, new = diff.get("base_run") or {}, diff.get("new_run") or {}
    c = diff.get("counts") or {}
    out = [f"diff {base.get('run_id')} -> {new.get('run_id')}"
           + (f"  (base: {base['why']})" if base.get("why") else ""),
           f"  {c.get('regressions', 0)} regressions ({c.get('blocking_regressions', 0)} blocking), "
           f"{c.get('fixed', 0)} fixed, {c.get('still_failing', 0)} still failing, {c.get('flaky', 0)} flaky, "
           f"{c.get('new', 0)} new, {c.get('removed', 0)} removed, {c.get('drift', 0)} drift"
           + (f", {c['not_run']} not run tonight (layer not selected)" if c.get("not_run") else "")]
    out += [f"  {line}" for line in note_lines(diff.get("baseline"))]
    refs = diff.get("references") or []
    if refs:
        out.append("  references changed (a score change may be a reference change):")
        out += [f"    {r['what']}: {r.get('before')} -> {r.get('after')}" for r in refs]
    for key, title in SECTIONS:
        items = diff.get(key) or []
        if not items:
            continue
        out.append(f"{title}:")
        out += [f"  {one_line(_case_line(e), 200)}" for e in items[:MAX_LISTED]]
        if len(items) > MAX_LISTED:
            out.append(f"  ... and {len(items) - MAX_LISTED} more (diff.json)")
    if diff.get("flaky"):
        out.append("Flaky (good/bad flips over recent runs, or attempts of one run that disagreed):")
        out += [f"  {f['id']}: {flaky_text(f)}"
                + (" [quarantined]" if f.get("quarantined") else "") for f in diff["flaky"][:MAX_LISTED]]
    if diff.get("drift"):
        out.append("Metric drift:")
        out += [f"  {d['scope']}: {d['metric']} {d['direction']} {_fmt(d['metric'], d['before'])} -> "
                f"{_fmt(d['metric'], d['after'])} (x{d['ratio']})" for d in diff["drift"][:MAX_LISTED]]
    return "\n".join(out) + "\n"


def render_diff_markdown(diff: Mapping[str, Any], *, max_listed: int = 10) -> list[str]:
    """The diff as summary.md lines (regressions first, capped lists, untrusted text escaped)."""
    base = diff.get("base_run") or {}
    c = diff.get("counts") or {}
    out = [f"### Compared with {code(base.get('run_id'))}" + (f" ({md(base.get('why'), 60)})" if base.get("why")
                                                                else ""), ""]
    out.append(f"**{c.get('regressions', 0)} regressions** · {c.get('fixed', 0)} fixed · "
               f"{c.get('still_failing', 0)} still failing · {c.get('flaky', 0)} flaky · "
               f"{c.get('new', 0)} new · {c.get('removed', 0)} removed · {c.get('drift', 0)} drift"
               + (f" · {c['not_run']} not run tonight" if c.get("not_run") else ""))
    out.append("")
    note = note_lines(diff.get("baseline"), max_cases=max_listed)
    if note:
        out += ["_" + md(note[0], 300) + "_" + ("" if len(note) == 1 else "  ")]
        out += [md(line.strip(), 300) + "  " for line in note[1:]]
        out.append("")
    refs = diff.get("references") or []
    if refs:
        out.append("References changed: " + "; ".join(
            f"{md(r['what'], 40)} {code(r.get('before'), 40)} → {code(r.get('after'), 40)}" for r in refs))
        out.append("")
    for key, title in SECTIONS[:2]:
        items = diff.get(key) or []
        if items:
            out.append(f"{title}:")
            for e in items[:max_listed]:
                q = " _(quarantined)_" if e.get("quarantined") else ""
                out.append(f"- {code(e['id'])} {md(e.get('before'), 20)} → **{md(e.get('after'), 20)}**{q}"
                           + (f": {md(e.get('why'), 160)}" if e.get("why") else ""))
            if len(items) > max_listed:
                out.append(f"- … and {len(items) - max_listed} more (diff.json)")
            out.append("")
    if diff.get("drift"):
        out.append("Drift: " + "; ".join(
            f"{md(d['scope'], 60)} {md(d['metric'], 20)} {_fmt(d['metric'], d['before'])} → "
            f"{_fmt(d['metric'], d['after'])}" for d in diff["drift"][:max_listed]))
        out.append("")
    if diff.get("flaky"):
        out.append("Flaky: " + ", ".join(code(f["id"]) for f in diff["flaky"][:max_listed]))
        out.append("")
    return out


def flaky_text(f: Mapping[str, Any]) -> str:
    """Why a diff's flaky entry is flaky: its flips over the recent runs, or (``--repeat K``) its
    attempts in one run that disagreed."""
    if f.get("attempts"):
        return f"passed {f.get('passes', 0)} of {f['attempts']} attempts in run {f.get('within_run', '')}"
    return f"{f.get('flips')} flips in {f.get('runs')} runs"
