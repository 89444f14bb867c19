"""From evidence to verdicts: a case's status, repeats, per-layer counts and the run's exit code.

Honesty rules (DESIGN.md): unavailable evidence is never a pass; a case passes only with
at least one evidence item, all passed; planned / executed / decidable each keep their
own denominator.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from typing import Iterable, Sequence

from harness.types import LAYERS, CaseResult, Counts, Evidence, Observation, Tokens

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
    """Latency (first delivery to last own reply), LLM calls and tokens, from the sandbox's records."""
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
    return replace(shown, status=status, attempts=len(attempts), passes=passes,
                   pass_at_k=passes > 0, pass_hat_k=passes == len(attempts))


def count(results: Sequence[CaseResult], planned: int) -> Counts:
    by = defaultdict(int)
    for r in results:
        by[r.status] += 1
    executed = len(results) - by["skipped"]
    decidable = by["pass"] + by["soft"] + by["fail"]
    cost = sum(r.cost_usd or 0.0 for r in results)
    # Quarantined cases (harness.quarantine) are counted above but never decide the verdict.
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
    for layer in LAYERS:
        if planned_by_layer.get(layer):
            layers[layer] = count([r for r in results if r.layer == layer], planned_by_layer[layer])
    return count(results, sum(planned_by_layer.values())), layers


def exit_code(summary: Counts) -> int:
    """0 only when every planned case ran and every hard check held."""
    return 0 if summary.verdict == "pass" else 1
