"""summary.md: the run as a PR comment or a chat message.

Written for the person who reads only the top: the verdict first, then what broke (failed
and errored cases, each with the reason of its first failing evidence), then the per-layer
numbers, each with its own denominator. A pass rate is passed / decidable and reads "n/a"
when nothing was decidable: a layer whose judge was down has no rate, not 100%.

Agent output ends up in reasons, so every piece of text is escaped for Markdown and for
the HTML a Markdown renderer lets through.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping

from harness.report.jsonfile import as_report_dict
from harness.fileio import atomic_write_text
from harness.report.format import code, format_cost, headline, md, pass_rate, tonight_sentence
from harness.report.cost_section import cost_markdown
from harness.types import RunReport

VERDICT_ICONS = {"pass": "✅", "fail": "❌", "error": "💥", "budget": "💸"}
STATUS_ICONS = {"pass": "✅", "soft": "🟡", "fail": "❌", "error": "💥", "unavailable": "⚪", "skipped": "⏭️"}
#: A PR comment is capped (GitHub: 65536 characters); long lists get cut with a count.
MAX_LISTED = 30
TABLE_FIELDS = ("planned", "executed", "decidable", "passed", "soft", "failed", "errored", "unavailable")

def _case_lines(cases: list[Mapping[str, Any]]) -> list[str]:
    lines = []
    for c in cases[:MAX_LISTED]:
        icon = STATUS_ICONS.get(c.get("status", ""), "•")
        where = f"{c.get('layer', '')}/{c.get('channel', '')}"
        lines.append(f"- {icon} **{md(c.get('status'), 20)}** {code(c.get('id'))} "
                     + ("_(quarantined)_ " if c.get("quarantined") else "")
                     + f"({md(where, 60)}): {md(headline(c))}")
    if len(cases) > MAX_LISTED:
        lines.append(f"- … and {len(cases) - MAX_LISTED} more (see report.html)")
    return lines


def _counts_row(name: str, counts: Mapping[str, Any]) -> str:
    cells = [name] + [str(counts.get(k, 0)) for k in TABLE_FIELDS]
    cells += [pass_rate(counts), format_cost(counts.get("cost_usd"))]
    return "| " + " | ".join(cells) + " |"


def render_summary(report: RunReport | Mapping[str, Any], diff: Mapping[str, Any] | None = None, *,
                   base: Mapping[str, Any] | None = None) -> str:
    """The Markdown summary of a report (or of its results.json dict); ``diff`` (tonight
    against the baseline, ``harness.night.diff.diff_runs``) adds its regressions after the layers;
    ``base`` (the results it compared with) gives the accepted replies of the cases whose
    ``baseline.*`` evidence failed or is soft (report/changes.py), shown after the failures."""
    d = as_report_dict(report)
    summary = d.get("summary") or {}
    cases = d.get("cases") or []
    verdict = str(summary.get("verdict", "?"))
    target = d.get("target") or {}
    target_name = " ".join(x for x in (target.get("name"), target.get("version")) if x)

    out = [f"## {VERDICT_ICONS.get(verdict, '⚠️')} harness: {md(verdict.upper(), 20)}"
           + (f" — {md(target_name, 80)}" if target_name else "")
           + f" · run {code(d.get('run_id'))}", ""]
    sentence = tonight_sentence(d, diff)  # the night in one sentence, as report.html opens
    out += [md(sentence[:1].upper() + sentence[1:], 400) + ".", ""]
    out.append(
        f"**{summary.get('failed', 0)} failed · {summary.get('errored', 0)} errored** · "
        f"{summary.get('passed', 0)} passed of {summary.get('decidable', 0)} decidable "
        f"({pass_rate(summary)}) · {summary.get('soft', 0)} soft · "
        f"{summary.get('unavailable', 0)} unavailable · "
        + (f"{summary['skipped']} skipped · " if summary.get("skipped") else "")
        + f"{summary.get('executed', 0)} executed of "
        f"{summary.get('planned', 0)} planned · cost {format_cost(summary.get('cost_usd'))} · "
        f"exit {d.get('exit_code', '?')}"
    )
    out.append("")

    severe = ([c for c in cases if c.get("status") == "fail"]
              + [c for c in cases if c.get("status") == "error"])
    if diff and diff.get("regressions"):  # new failures lead; known ones follow
        new = {e["id"] for e in diff["regressions"]}
        severe.sort(key=lambda c: c.get("id") not in new)
        names = ", ".join(code(e["id"], 60) for e in diff["regressions"][:5])
        more = f" and {len(diff['regressions']) - 5} more" if len(diff["regressions"]) > 5 else ""
        out += [f"**{len(diff['regressions'])} new since {code((diff.get('base_run') or {}).get('run_id'))}**: "
                f"{names}{more}", ""]
    if severe:
        out += ["### Failures", ""] + _case_lines(severe) + [""]
    from harness.report.changes import changes_or_note, markdown_lines as changes_lines

    groups, changes_note = changes_or_note(d, base)
    out += changes_lines(groups) + ([f"_{md(changes_note, 300)}_", ""] if changes_note else [])

    out += ["### By layer", "",
            "| layer | " + " | ".join(TABLE_FIELDS) + " | pass rate | cost |",
            "|---|" + "---:|" * (len(TABLE_FIELDS) + 2)]
    for name, counts in (d.get("layers") or {}).items():
        out.append(_counts_row(md(name, 40), counts))
    out += [_counts_row("**total**", summary), ""]
    out.append("_pass rate = passed / decidable; unavailable evidence is never counted as passed._")
    out.append("")
    from harness import layer as layer_registry

    extra = [f"- {md(name, 40)}: {md(line, 300)}" for name, counts in (d.get("layers") or {}).items()
             for line in layer_registry.summary_lines(name, counts)]
    if extra:
        out += extra + [""]
    if diff:
        from harness.report.diff_text import render_diff_markdown

        out += render_diff_markdown(diff)

    from harness.report.repeats import markdown_lines  # slot P/R/F1, pass@k / pass^k, flaky cases
    out += markdown_lines(d, md, code)
    soft = [c for c in cases if c.get("status") == "soft"]
    if soft:
        out += ["### Soft errors", ""] + _case_lines(soft) + [""]
    unavailable = [c for c in cases if c.get("status") == "unavailable"]
    if unavailable:
        out += ["### Unavailable (not decidable, not passed)", ""] + _case_lines(unavailable) + [""]

    out += cost_markdown(d, md)  # spend (SIMULATED when priced, not billed), tokens, latency, budget

    notes = d.get("notes") or []
    if notes:
        out += ["### Notes", ""] + [f"- {md(n, 400)}" for n in notes[:MAX_LISTED]] + [""]

    models = d.get("models") or {}
    meta = [f"harness {md(d.get('harness_version'), 40)}",
            f"golden {md(d.get('golden_version'), 40)}"]
    meta += [f"{md(k, 40)}: {md(v, 80)}" for k, v in models.items() if v and not isinstance(v, dict)]
    meta.append(f"{md(d.get('started_at'), 40)} → {md(d.get('finished_at'), 40)}")
    out.append("<sub>" + " · ".join(meta) + "</sub>")
    if d.get("manifest"):  # the run manifest (harness.night.manifest, issue 6)
        from harness.report.manifest_md import render_manifest_md

        out += ["", render_manifest_md(d["manifest"])]
    return "\n".join(out) + "\n"


def write_summary(report: RunReport | Mapping[str, Any], path: str | os.PathLike[str],
                  diff: Mapping[str, Any] | None = None, base: Mapping[str, Any] | None = None) -> Path:
    """Write summary.md atomically; returns the path."""
    return atomic_write_text(path, render_summary(report, diff, base=base))
