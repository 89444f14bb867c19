"""Repeats and slot metrics in the human reports (summary.md, report.html).

From the results.json dict only: per case pass@k / pass^k, flaky cases with their pass
count and 95% Wilson interval; per layer slot precision / recall / F1 with TP/FP/FN
(a zero denominator reads "n/a", never 100%).
"""

from __future__ import annotations

import html
from typing import Any, Mapping


FLAKY = '<b class="flaky">flaky</b>'


def _ratio(value: Any) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def _ci(case: Mapping[str, Any]) -> str:
    ci = case.get("pass_rate_ci")
    return f"[{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "-"


def flaky_cases(d: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [c for c in d.get("cases") or () if c.get("flaky")]


def repeated(d: Mapping[str, Any]) -> bool:
    return any((c.get("attempts") or 1) > 1 for c in d.get("cases") or ())


def slot_rows(d: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    return [(name, layer["slots"]) for name, layer in (d.get("layers") or {}).items()
            if isinstance(layer, Mapping) and isinstance(layer.get("slots"), Mapping)]


def markdown_lines(d: Mapping[str, Any], md, code) -> list[str]:
    """Extra summary.md sections; ``md``/``code`` are markdown.py's escapers."""
    out: list[str] = []
    rows = slot_rows(d)
    if rows:
        out += ["### Slot extraction", "", "| layer | cases | exact | TP | FP | FN | precision | recall | F1 |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for name, s in rows:
            out.append(f"| {md(name, 40)} | {s.get('cases', 0)} | {s.get('exact_match', 0)} | {s.get('tp', 0)} | "
                       f"{s.get('fp', 0)} | {s.get('fn', 0)} | {_ratio(s.get('precision'))} | "
                       f"{_ratio(s.get('recall'))} | {_ratio(s.get('f1'))} |")
        out += ["", "_a wrong value counts as one FP and one FN; n/a = zero denominator._", ""]
    if repeated(d):
        cases = d.get("cases") or []
        k = max((c.get("attempts") or 1) for c in cases)
        at = sum(1 for c in cases if c.get("pass_at_k"))
        hat = sum(1 for c in cases if c.get("pass_hat_k"))
        out += [f"### Repeats (k={k})", "",
                f"pass@{k}: {at}/{len(cases)} cases · pass^{k}: {hat}/{len(cases)} cases · "
                f"flaky: {len(flaky_cases(d))}", ""]
        flaky = flaky_cases(d)
        if flaky:
            out += ["| flaky case | passes | 95% CI on pass rate |", "|---|---:|---|"]
            for c in flaky[:30]:
                out.append(f"| {code(c.get('id'))} | {c.get('passes')}/{c.get('attempts')} | {_ci(c)} |")
            out.append("")
    return out


def html_section(d: Mapping[str, Any]) -> str:
    """An HTML block for report.html ('' when there is nothing to show)."""
    parts: list[str] = []
    rows = slot_rows(d)
    if rows:
        body = "".join(
            f"<tr><td>{html.escape(str(n))}</td><td>{s.get('tp', 0)}</td><td>{s.get('fp', 0)}</td>"
            f"<td>{s.get('fn', 0)}</td><td>{_ratio(s.get('precision'))}</td><td>{_ratio(s.get('recall'))}</td>"
            f"<td>{_ratio(s.get('f1'))}</td></tr>" for n, s in rows)
        parts.append('<section id="slots"><h2>Slot extraction</h2><table><tr><th>layer</th><th>TP</th><th>FP</th>'
                     f"<th>FN</th><th>precision</th><th>recall</th><th>F1</th></tr>{body}</table></section>")
    if repeated(d):
        body = "".join(
            f"<tr><td>{html.escape(str(c.get('id')))}</td><td>{c.get('passes')}/{c.get('attempts')}</td>"
            f"<td>{c.get('pass_at_k')}</td><td>{c.get('pass_hat_k')}</td>"
            f"<td>{FLAKY if c.get('flaky') else ''}</td><td>{html.escape(_ci(c))}</td></tr>"
            for c in d.get("cases") or ())
        parts.append('<section id="repeats"><h2>Repeats</h2><table><tr><th>case</th><th>passes</th><th>pass@k</th>'
                     f"<th>pass^k</th><th></th><th>95% CI</th></tr>{body}</table></section>")
    return "".join(parts)
