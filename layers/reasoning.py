"""Semantic reasoning: documents plus instructions, judged for meaning.

Keywords, length and format constraints, embedding similarity to approved golden answers,
and a critic for factuality and rubric questions. Its cases need the embedder, the goldens
and the critic (warmed up while the target starts). Every turn also checks ``no_leak``.

Summary metrics: the distribution of similarity scores, the critic's judge health, and
the judges' sensitivity from the newest ``harness judges`` run (judges.json).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from harness.layer import Layer
from harness.layers._common import distribution, flag, metric, table
from harness.types import Case, CaseResult, CheckSpec


def default_checks(case: Case, turn: int, context: Mapping[str, Any]) -> list[CheckSpec]:
    return [flag("no_leak")]


def _latest_judges(context: Mapping[str, Any]) -> dict[str, Any] | None:
    """The newest judges.json in the run's folder or the reports folder (``harness judges --out``'s
    default is ``reports/judges``); an unreadable one is skipped by ``latest_figures``."""
    from harness.judges.report import latest_figures  # only a run with reasoning cases reads it

    folders = [f for f in (context.get("out_dir"), context.get("reports_dir")) if f]
    try:
        return latest_figures(*folders, *(f"{f}/judges" for f in folders))
    except OSError:  # a judges.json removed while the folders were read
        return None


def metrics(results: Sequence[CaseResult], context: Mapping[str, Any]) -> dict[str, Any]:
    scores = [e.score for r in results for e in r.evidence
              if e.check == "similarity" and e.availability == "ready" and isinstance(e.score, (int, float))]
    out: dict[str, Any] = {}
    dist = distribution(scores)
    if dist:
        out["similarity"] = dist
    health = (context.get("models") or {}).get("critic_health")
    if isinstance(health, Mapping):
        out["judge_health"] = {k: health.get(k) for k in ("examples", "accuracy", "accuracy_all", "kappa",
                                                           "undecided") if k in health}
    judges = _latest_judges(context)
    if judges:  # the figures, not the mutations themselves (those stay in judges.json)
        out["sensitivity"] = {k: judges.get(k) for k in ("kinds", "goldens", "health", "path", "lines")
                              if judges.get(k) is not None}
    return out


def report_section(m: Mapping[str, Any]) -> dict[str, Any]:
    """Similarity, judge health and judge sensitivity tables (or a line saying there are none)."""
    out: list[Any] = []
    s = m.get("similarity")
    if s:
        out.append(table("Reasoning: similarity to the goldens", ("n", "min", "p10", "median", "p90", "max"),
                     [[s.get(k) for k in ("n", "min", "p10", "median", "p90", "max")]], anchor="layer-reasoning"))
    h = m.get("judge_health")
    if h:
        out.append(table("Reasoning: judge health (labelled examples)", ("examples", "accuracy (decided)",
                     "accuracy (undecided = wrong)", "kappa", "undecided"),
                     [[h.get("examples"), metric(h.get("accuracy")), metric(h.get("accuracy_all")),
                       metric(h.get("kappa")), h.get("undecided")]]))
    j = m.get("sensitivity")
    if j and isinstance(j.get("kinds"), Mapping):
        rows = [(kind, k.get("mutations"), k.get("caught"),
                 f"{100.0 * k['caught'] / k['mutations']:.0f}%" if k.get("mutations") else "n/a")
                for kind, k in j["kinds"].items()]
        out.append(table("Reasoning: judge sensitivity (harness judges)", ("kind", "mutations", "caught", "rate"), rows,
                     note=f"from {j.get('path', 'judges.json')} {j.get('written_at', '')}".strip()))
    return {"tables": out, "empty": "no similarity scores in this run"}


def summary_lines(m: Mapping[str, Any]) -> list[str]:
    out = []
    s = m.get("similarity")
    if s:
        out.append(f"similarity to the goldens: median {s.get('median')}, min {s.get('min')} over {s.get('n')} scores")
    h = m.get("judge_health")
    if h and h.get("accuracy_all") is not None:
        out.append(f"judge health: accuracy {h.get('accuracy_all'):.3f} (undecided counted wrong), kappa "
                   f"{h.get('kappa') if h.get('kappa') is None else round(h['kappa'], 3)} over {h.get('examples')} examples")
    j = m.get("sensitivity")
    if j and isinstance(j.get("kinds"), Mapping):
        kinds = ", ".join(f"{k} {v.get('caught')}/{v.get('mutations')}" for k, v in j["kinds"].items())
        out.append(f"judges (latest harness judges): {kinds}")
    else:
        out.append("judges: no harness judges figures yet (run harness judges)")
    return out


LAYER = Layer(
    name="reasoning", title="Semantic reasoning", order=20,
    description="summaries of the wrong section, ignored audiences and limits, invented numbers and answers",
    services=("embedder", "goldens", "critic"),
    default_checks=default_checks, metrics=metrics, report_section=report_section, summary_lines=summary_lines,
    default_names=("no_leak",),
)
