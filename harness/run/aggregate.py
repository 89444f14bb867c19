"""From evidence to verdicts: a case's status, repeats, per-layer counts and the run's exit code.

Honesty rules (DESIGN.md): unavailable evidence is never a pass; a case passes only with
at least one evidence item, all passed; planned / executed / decidable each keep their
own denominator.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from typing import Iterable, Sequence

from harness import layer as layer_registry
from harness.types import CaseResult, Counts, Evidence, Observation, Tokens

# Worst first: the status of several attempts is the worst of them.
SEVERITY = ("fail", "error", "unavailable", "soft", "pass", "skipped")


def case_status(evidence: Sequence[Evidence], harness_error: str = "") -> str:
    """fail if any ready evidence failed; error on a harness-side failure; unavailable if any
    evidence is; soft for scored checks in the soft band; pass only with evidence, all passed."""
    if any(e.availability == "ready" and e.passed is False for e in evidence):
        return "fail"
    if harness_error or not evidence:
        return "error"
    if any(e.availability == "unavailable" for e in evidence):
        return "unavailable"
    if any(e.passed is None for e in evidence):
        return "soft"
    return "pass"


def worst(statuses: Iterable[str]) -> str:
    statuses = list(statuses)
    return min(statuses, key=SEVERITY.index) if statuses else "error"


def observation_metrics(obs: Observation | None) -> tuple[float | None, int, Tokens]:
    """Latency (first delivery to last own reply), LLM calls and tokens, from the sandbox's records
    (of the case's own turns: a variant's borrowed ones were timed and metered in their own case)."""
    obs = obs.own() if obs is not None else None
    if obs is None or not obs.turns:
        return None, 0, Tokens()
    replies = obs.replies
    latency = (replies[-1].at - obs.turns[0].sent_at) * 1000 if replies else None
    llm = [e for e in obs.events if e.name == "llm"]
    tin = sum(int(e.meta.get("input_tokens") or 0) for e in llm)
    tout = sum(int(e.meta.get("output_tokens") or 0) for e in llm)
    return latency, len(llm), Tokens(input=tin, output=tout)


def combine_attempts(attempts: Sequence[CaseResult]) -> CaseResult:
    """K attempts of one case: the worst status stands; pass@k and pass^k are recorded."""
    if len(attempts) == 1:
        only = attempts[0]
        return replace(only, attempts=1, passes=1 if only.status == "pass" else 0)
    passes = sum(1 for a in attempts if a.status == "pass")
    status = worst(a.status for a in attempts)
    shown = next((a for a in reversed(attempts) if a.status == status), attempts[-1])
    # flaky: decided attempts disagreed. An unavailable attempt (a judge down, an overloaded
    # machine: run/machine.py) decided nothing, so it makes no case flaky.
    decided = sum(1 for a in attempts if a.status != "unavailable")
    return replace(shown, status=status, attempts=len(attempts), passes=passes,
                   attempt_observations=tuple(a.observation for a in attempts),
                   pass_at_k=passes > 0, pass_hat_k=passes == len(attempts),
                   flaky=0 < passes < decided, pass_rate_ci=wilson_interval(passes, len(attempts)))


def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float] | None:
    """95% Wilson score interval on a pass rate (honest at small n, unlike p +- z*se)."""
    if n <= 0:
        return None
    p = successes / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / den
    return (round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4))


def count(results: Sequence[CaseResult], planned: int) -> Counts:
    by = defaultdict(int)
    for r in results:
        by[r.status] += 1
    executed = len(results) - by["skipped"]
    decidable = by["pass"] + by["soft"] + by["fail"]
    cost = sum(r.cost_usd or 0.0 for r in results)
    # Quarantined cases (harness.night.quarantine) are counted above but never decide the verdict.
    vby = defaultdict(int)
    for r in results:
        if not getattr(r, "quarantined", False):
            vby[r.status] += 1
    verdict = "fail" if (vby["fail"] or vby["error"]) else "incomplete" if (vby["unavailable"] or executed < planned) \
        else "pass"
    return Counts(planned=planned, executed=executed, decidable=decidable, passed=by["pass"], soft=by["soft"],
                  failed=by["fail"], errored=by["error"], unavailable=by["unavailable"], skipped=by["skipped"],
                  cost_usd=round(cost, 6), verdict=verdict)


def summarize(results: Sequence[CaseResult], planned_by_layer: dict[str, int]) -> tuple[Counts, dict[str, Counts]]:
    layers = {}
    order = {name: i for i, name in enumerate(layer_registry.names())}
    for layer in sorted(planned_by_layer, key=lambda name: (order.get(name, len(order)), name)):
        if planned_by_layer[layer]:
            layers[layer] = count([r for r in results if r.layer == layer], planned_by_layer[layer])
    return count(results, sum(planned_by_layer.values())), layers


def apply_soft_budget(summary: Counts, layers: dict[str, Counts], max_fraction_per_layer: float,
                      max_per_run: int) -> tuple[Counts, dict[str, Counts], list[str]]:
    """Too many soft errors are a hard failure (DESIGN: over a third of a layer's decidable
    cases, or more than 2 in the run; both configurable). Returns the counts with the
    verdicts turned to fail where the budget broke, and a note saying why."""
    notes: list[str] = []
    layers = dict(layers)
    for name, c in layers.items():
        if c.soft and c.soft > max_fraction_per_layer * c.decidable:
            layers[name] = replace(c, verdict="fail")
            notes.append(f"soft budget exceeded in layer {name}: {c.soft} of {c.decidable} decidable cases are soft "
                         f"(more than {max_fraction_per_layer:.0%}); the run fails")
    if summary.soft > max_per_run:
        notes.append(f"soft budget exceeded for the run: {summary.soft} soft cases (more than {max_per_run}); "
                     "the run fails")
    if notes:
        summary = replace(summary, verdict="fail")
    return summary, layers, notes


def exit_code(summary: Counts) -> int:
    """0 only when every planned case ran and every hard check held."""
    return 0 if summary.verdict == "pass" else 1
