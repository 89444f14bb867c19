"""``harness report RUN_DIR --format github``: tonight's summary and diff for a pull-request
comment or a CI job summary (``$GITHUB_STEP_SUMMARY``).

It opens with the one sentence of the night (``format.tonight_sentence``), then the
regressions against the baseline, the cases that failed (new ones first), the numbers per
layer and drift. GitHub refuses a comment over 65,536 characters, so every list is capped
and the page is built again with shorter lists until it fits ``BUDGET`` (room is left for a
caller's own header); a 10,000-case run renders in a few kilobytes. Agent text is escaped
for Markdown (``format.md`` / ``format.code``) like summary.md.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from harness.report.format import code, format_cost, headline, known_version, md, pass_rate, tonight_sentence

#: GitHub's limit on an issue or pull-request comment body.
GITHUB_COMMENT_LIMIT = 65_536
#: What this page may use of it.
BUDGET = 60_000
ICONS = {"pass": "✅", "fail": "❌", "error": "💥", "budget": "💸"}
STATUS_ICONS = {"fail": "❌", "error": "💥", "soft": "🟡", "unavailable": "⚪", "skipped": "⏭️"}
FIELDS = ("planned", "passed", "failed", "errored", "soft", "unavailable")


def render_github(d: Mapping[str, Any], diff: Mapping[str, Any] | None = None,
                  history: Sequence[Mapping[str, Any]] | None = None, *,
                  base: Mapping[str, Any] | None = None) -> str:
    """The Markdown, at most ``BUDGET`` characters. ``base``: the results the diff compared
    with, for the accepted replies of the cases that changed against the baseline."""
    from harness.report.changes import changes_or_note

    groups, _note = changes_or_note(d, base)  # a malformed comparison is left out (summary.md says why)
    for listed in (25, 10, 5, 0):
        text = _render(d, diff, history, listed, groups)
        if len(text) <= BUDGET:
            return text
    cut = text[:BUDGET - 200].rsplit("\n", 1)[0]  # pathological: say so rather than overflow
    return cut + "\n\n_… cut to fit GitHub's comment limit; see summary.md and report.html._\n"


def _render(d: Mapping[str, Any], diff: Mapping[str, Any] | None, history: Any, listed: int,
            groups: Sequence[Any] = ()) -> str:
    s = d.get("summary") or {}
    verdict = str(s.get("verdict", "?"))
    target = d.get("target") or {}
    name = " ".join(x for x in (str(target.get("name") or ""), known_version(target.get("version"))) if x)
    out = [f"### {ICONS.get(verdict, '⚠️')} {md(name or 'harness', 80)}: {md(tonight_sentence(d, diff, history), 300)}",
           "",
           f"<sub>run {code(d.get('run_id'))} · verdict **{md(verdict.upper(), 20)}** · exit "
           f"{md(d.get('exit_code', '?'), 8)} · {s.get('executed', 0)} executed of {s.get('planned', 0)} planned · "
           f"pass rate {pass_rate(s)} (passed / decidable) · cost {format_cost(s.get('cost_usd'))}</sub>", ""]

    if diff:
        base = diff.get("base_run") or {}
        c = diff.get("counts") or {}
        out += [f"**Against {code(base.get('run_id'))}**: {c.get('regressions', 0)} regressions · "
                f"{c.get('fixed', 0)} fixed · {c.get('still_failing', 0)} still failing · {c.get('flaky', 0)} flaky · "
                f"{c.get('drift', 0)} drift", ""]
        for key, title in (("regressions", "New failures (regressions)"), ("fixed", "Fixed")):
            items = diff.get(key) or []
            if items and listed:
                out.append(f"{title}:")
                out += [f"- {code(e.get('id'))} {md(e.get('before') or '-', 20)} → **{md(e.get('after') or '-', 20)}**"
                        + (f": {md(e.get('why'), 200)}" if e.get("why") else "") for e in items[:listed]]
                if len(items) > listed:
                    out.append(f"- … and {len(items) - listed} more (diff.json)")
                out.append("")

    cases = [c for c in d.get("cases") or () if isinstance(c, Mapping)]
    bad = [c for c in cases if c.get("status") in ("fail", "error")]
    if bad and listed:
        new = {e.get("id") for e in (diff or {}).get("regressions") or ()}
        bad.sort(key=lambda c: c.get("id") not in new)
        out += [f"<details{' open' if len(bad) <= 10 else ''}><summary>{len(bad)} case(s) failed or errored"
                "</summary>", ""]
        out += [f"- {STATUS_ICONS.get(str(c.get('status')), '•')} {code(c.get('id'))} "
                f"({md(c.get('layer'), 30)}): {md(headline(c), 200)}" for c in bad[:listed]]
        if len(bad) > listed:
            out.append(f"- … and {len(bad) - listed} more (summary.md, report.html)")
        out += ["", "</details>", ""]

    if groups:  # what changed against the baseline, one folded list per kind (report/changes.py)
        from harness.report.changes import markdown_lines

        total = len({cc.id for g in groups for cc in g.cases})
        out += [f"**Changed against the baseline**: {total} case(s) · "
                + " · ".join(md(g.heading, 120) for g in groups[:8]) + (" · …" if len(groups) > 8 else ""), ""]
        if listed:
            for g in groups[:12]:
                lines = markdown_lines([g], max_cases=min(listed, 10), texts=listed >= 10)
                body = lines[4:]  # without the section's own heading and the group's heading
                out += [f"<details><summary>{md(g.heading, 200)}</summary>", "", *body, "</details>", ""]

    layers = d.get("layers") or {}
    if layers:
        out += ["| layer | " + " | ".join(FIELDS) + " | pass rate |", "|---|" + "---:|" * (len(FIELDS) + 1)]
        for lname, counts in list(layers.items())[:20]:
            if isinstance(counts, Mapping):
                out.append(f"| {md(lname, 40)} | " + " | ".join(str(counts.get(k, 0)) for k in FIELDS)
                           + f" | {pass_rate(counts)} |")
        out += ["| **total** | " + " | ".join(str(s.get(k, 0)) for k in FIELDS) + f" | {pass_rate(s)} |", ""]

    drift = (diff or {}).get("drift") or []
    if drift and listed:
        out.append("Drift: " + "; ".join(f"{md(x.get('scope'), 60)} {md(x.get('metric'), 30)} "
                                         f"{md(x.get('before'), 20)} → {md(x.get('after'), 20)}"
                                         for x in drift[:listed]))
        out.append("")
    notes = d.get("notes") or []
    if notes and listed:
        out += ["<details><summary>Notes</summary>", ""] + [f"- {md(n, 300)}" for n in notes[:listed]]
        out += ["", "</details>", ""]
    return "\n".join(out) + "\n"
