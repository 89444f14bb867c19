"""Repeats and slot metrics in the human reports (summary.md, report.html).

From the results.json dict only: per case pass@k / pass^k, flaky cases with their pass
count and 95% Wilson interval; per layer slot precision / recall / F1 with TP/FP/FN
(a zero denominator reads "n/a", never 100%).
"""

from __future__ import annotations

from typing import Any, Mapping


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
    """report.html's slot and repeats tables (templates/report/repeats.html.j2; '' when there is nothing)."""
    from harness.report.templating import fragment

    slots = [{"layer": n, "tp": s.get("tp", 0), "fp": s.get("fp", 0), "fn": s.get("fn", 0),
              "precision": _ratio(s.get("precision")), "recall": _ratio(s.get("recall")), "f1": _ratio(s.get("f1"))}
             for n, s in slot_rows(d)]
    repeats = [{"id": c.get("id"), "passes": f"{c.get('passes')}/{c.get('attempts')}",
                "pass_at_k": str(c.get("pass_at_k")), "pass_hat_k": str(c.get("pass_hat_k")),
                "flaky": bool(c.get("flaky")), "ci": _ci(c)}
               for c in d.get("cases") or ()] if repeated(d) else []
    if not slots and not repeats:
        return ""
    return fragment("report/repeats.html.j2", slots=slots, repeats=repeats)
