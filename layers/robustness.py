"""Input robustness: malformed and dead links, unsupported files, empty, gibberish,
foreign-language and 10,000-word messages, injection attempts, duplicate deliveries.

Every turn of every robustness case also checks, unless the case wrote the same check:
the webhook accepted the update (``webhook_2xx``; skipped where the case states the status
it expects with ``delivery``), no reply or post quotes a stack trace or the agent's system
prompt (``no_leak``), and a reply arrived within the timeout (``answered``; skipped where
the case counts its replies with ``replies``).

Summary metrics: the pass rate per tag, and the metamorphic variants' own line.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Mapping, Sequence

from pydantic import Field

from harness.layer import Layer
from harness.layers import variants
from harness.layers._common import flag, has_check, rate, table
from harness.schema.models import Strict
from harness.types import Case, CaseResult, CheckSpec

class Settings(Strict):
    """``[robustness]`` in harness.toml (docs/CONFIG.md)."""

    variants: str | list[str] = Field(
        "default", description='the metamorphic variants of every case: "default" (two kinds a case), "all", '
                               '"none", or a list of kinds (typos, case, spacing, greeting, emoji, lookalike, '
                               'accents); a case\'s own variants: wins')


def default_checks(case: Case, turn: int, context: Mapping[str, Any]) -> list[CheckSpec]:
    t = case.turns[turn]
    out = [flag("no_leak")]
    if not has_check(t, "delivery", "webhook_2xx"):
        out.append(flag("webhook_2xx"))
    if not has_check(t, "replies", "answered"):
        out.append(flag("answered"))
    return out


def metrics(results: Sequence[CaseResult], context: Mapping[str, Any]) -> dict[str, Any]:
    by_tag: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in results:
        for tag in r.tags or ("untagged",):
            by_tag[tag][1] += 1
            by_tag[tag][0] += r.status == "pass"
    derived = [r for r in results if variants.TAG in (r.tags or ())]
    out: dict[str, Any] = {"tags": {tag: {"cases": n, "passed": p, "pass_rate": round(p / n, 4) if n else None}
                                    for tag, (p, n) in sorted(by_tag.items())}}
    if derived:
        from harness.checks.equivalence import decided_by  # here, not at import: argument parsing loads the layers

        passed = sum(r.status == "pass" for r in derived)
        out["variants"] = {"cases": len(derived), "passed": passed,
                           "pass_rate": round(passed / len(derived), 4),
                           "changed": sorted(r.id for r in derived if r.status != "pass"),
                           "comparisons": decided_by(e for r in derived for e in r.evidence)}
    return out


def report_section(m: Mapping[str, Any]) -> dict[str, Any]:
    """The pass rate per tag, and the variants' line (templates/layers/robustness.html.j2)."""
    tags = m.get("tags") or {}
    rows = [(tag, t.get("cases"), t.get("passed"), rate(t.get("passed") or 0, t.get("cases") or 0))
            for tag, t in tags.items()]
    out: dict[str, Any] = {"tables": [table("Robustness: pass rate per tag", ("tag", "cases", "passed", "pass rate"),
                                            rows, anchor="layer-robustness")]}
    v = m.get("variants")
    if v:
        out["variants"] = {"passed": v.get("passed"), "cases": v.get("cases"),
                           "rate": rate(v.get("passed") or 0, v.get("cases") or 0),
                           "changed": ", ".join(v.get("changed") or []) or "none"}
    return out


def summary_lines(m: Mapping[str, Any]) -> list[str]:
    v = m.get("variants")
    if not v:
        return []
    changed = v.get("changed") or []
    c = v.get("comparisons") or {}
    compared = sum(c.values()) if all(isinstance(n, int) for n in c.values()) else 0
    return [f"metamorphic variants: {v.get('passed')}/{v.get('cases')} answered like their originals"
            + (f"; changed: {', '.join(changed[:5])}" + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
               if changed else "")
            + (f" ({c.get('without_model')} of {compared} comparisons without the embedding model)" if compared else "")]


def derive_cases(cases: Sequence[Case], context: Mapping[str, Any]) -> list[Case]:
    return variants.derive(cases, context, layer="robustness")


LAYER = Layer(
    name="robustness", title="Input robustness", order=10,
    description="bad links and files, empty, gibberish, foreign and huge messages, injections, duplicates; "
                "and metamorphic variants that must not change the answer",
    services=("embedder",),  # the metamorphic variants' equivalence (warmed only when they run)
    default_names=("no_leak", "webhook_2xx", "answered"), settings=Settings,
    default_checks=default_checks, metrics=metrics, report_section=report_section,
    report_template="layers/robustness.html.j2", derive_cases=derive_cases,
    summary_lines=summary_lines, install_notes=variants.install_notes,
)
