"""Performance and cost of cases and runs, from the sandbox's own records.

- ``measure(observation)``: a case attempt's ``CaseMetrics`` (latency per step, calls,
  sends, errors, tokens, agent spend) from the events the sandbox recorded; the gateway
  has already put tokens and each call's price in the ``llm`` event's meta
  (``harness.sandbox.metering``).
- ``record_harness_spend(...)``: how the harness's own model calls (the critic) report
  their spend; it is kept apart from the agent's and shown as ``summary.harness_cost_usd``.
- ``run_perf(results)``: per-layer and run latency percentiles and totals for results.json.

Honesty: a case with a call that could not be priced has ``cost_usd: None`` and a reason;
the run's ``cost_usd`` sums the priced cases and says how many were not.
"""

from __future__ import annotations

import statistics
import threading
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Sequence

from harness.types import CaseMetrics, CaseResult, Event, Observation, Tokens


def _is_call(e: Event) -> bool:
    return e.source != "driver"


def measure(obs: Observation | None) -> CaseMetrics:
    """Metrics of one attempt; an attempt with no observation measures nothing (all zero). Turns
    borrowed from another case (a variant's original) are that case's, not measured here."""
    obs = obs.own() if obs is not None else None
    if obs is None or not obs.turns:
        return CaseMetrics(cost_reason="the case did not run")
    first = obs.turns[0]
    replies = obs.replies
    first_reply = (replies[0].at - first.sent_at) * 1000 if replies else None
    last_reply = (replies[-1].at - first.sent_at) * 1000 if replies else None
    calls = [e for e in obs.events if _is_call(e)]
    llm = [e for e in calls if e.name == "llm"]
    fetches = [e for e in calls if e.name == "fetch_document"]
    sends = [e for e in calls if e.reply is not None]
    errors = [e for e in calls if not 200 <= e.status < 300]
    tin = sum(int(e.meta.get("input_tokens") or 0) for e in llm)
    tout = sum(int(e.meta.get("output_tokens") or 0) for e in llm)
    sources = {str(e.meta.get("tokens_source", "missing")).split(":")[0] for e in llm} - {"not-billed"}
    source = "none" if not sources else sources.pop() if len(sources) == 1 else "mixed"
    cost, reason = _spend(llm)
    return CaseMetrics(
        first_reply_ms=first_reply, last_reply_ms=last_reply,
        llm_ms=tuple(round(e.duration_ms, 3) for e in llm), fetch_ms=tuple(round(e.duration_ms, 3) for e in fetches),
        llm_calls=len(llm), fetches=len(fetches), sends=len(sends), calls=len(calls), errors=len(errors),
        tokens_input=tin, tokens_output=tout, tokens_estimated=any(e.meta.get("estimated") for e in llm),
        tokens_source=source, cost_usd=cost, cost_reason=reason,
        simulated=any(e.meta.get("simulated") for e in llm),
        replayed_calls=sum(1 for e in llm if e.meta.get("replayed")),
        replay_misses=sum(1 for e in llm if e.meta.get("replay_miss")))


def _spend(llm: Sequence[Event]) -> tuple[float | None, str]:
    if not llm:
        return 0.0, "no LLM call"
    missing = [e for e in llm if e.meta.get("cost_usd") is None]
    if missing:
        why = missing[0].meta.get("cost_reason") or "the gateway did not price the call (no meter)"
        return None, f"{len(missing)} of {len(llm)} LLM calls unpriced: {why}"
    total = round(sum(float(e.meta["cost_usd"]) for e in llm), 8)
    reasons = sorted({str(e.meta.get("cost_reason", "")) for e in llm if e.meta.get("cost_reason")})
    return total, "; ".join(reasons)


def combine(metrics: Sequence[CaseMetrics]) -> CaseMetrics:
    """K attempts of one case: latency of the last attempt, counts and spend summed over all."""
    if len(metrics) == 1:
        return metrics[0]
    last = metrics[-1]
    costs = [m.cost_usd for m in metrics]
    cost = None if any(c is None for c in costs) else round(sum(costs), 8)
    reason = next((m.cost_reason for m in metrics if m.cost_usd is None), last.cost_reason)
    return replace(last, llm_calls=sum(m.llm_calls for m in metrics), fetches=sum(m.fetches for m in metrics),
                   sends=sum(m.sends for m in metrics), calls=sum(m.calls for m in metrics),
                   errors=sum(m.errors for m in metrics), tokens_input=sum(m.tokens_input for m in metrics),
                   tokens_output=sum(m.tokens_output for m in metrics),
                   tokens_estimated=any(m.tokens_estimated for m in metrics),
                   cost_usd=cost, cost_reason=f"{len(metrics)} attempts; " + reason,
                   simulated=any(m.simulated for m in metrics),
                   replayed_calls=sum(m.replayed_calls for m in metrics),
                   replay_misses=sum(m.replay_misses for m in metrics))


def apply(result: CaseResult, m: CaseMetrics) -> CaseResult:
    """The case's contract fields (llm_calls, tokens, cost_usd) from its metrics."""
    return replace(result, metrics=m, llm_calls=m.llm_calls, tokens=Tokens(m.tokens_input, m.tokens_output),
                   cost_usd=m.cost_usd)


# --------------------------------------------------------------------------- harness spend


@dataclass
class HarnessSpend:
    """The harness's own model spend (critic, judges), kept apart from the agent's."""

    calls: list[dict[str, Any]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, model: str, input_tokens: int, output_tokens: int, *, purpose: str = "critic",
               case_id: str | None = None, cost_usd: float | None = None) -> dict[str, Any]:
        if cost_usd is None:
            from harness.models.prices import load_prices

            priced = load_prices().cost(model, input_tokens, output_tokens)
            cost_usd, reason = priced.usd, priced.reason
        else:
            reason = "cost given by the caller"
        entry = {"model": model, "input_tokens": input_tokens, "output_tokens": output_tokens,
                 "purpose": purpose, "case_id": case_id, "cost_usd": cost_usd, "reason": reason}
        with self._lock:
            self.calls.append(entry)
        return entry

    def total(self) -> tuple[float, int]:
        """(priced total in USD, number of calls that could not be priced)."""
        with self._lock:
            known = [c["cost_usd"] for c in self.calls if c["cost_usd"] is not None]
            return round(sum(known), 8), len(self.calls) - len(known)

    def reset(self) -> None:
        with self._lock:
            self.calls.clear()


#: The process's ledger of harness spend; the runner resets it when a run starts.
HARNESS_SPEND = HarnessSpend()


def record_harness_spend(model: str, input_tokens: int, output_tokens: int, *, purpose: str = "critic",
                         case_id: str | None = None, cost_usd: float | None = None) -> dict[str, Any]:
    """Record one call the harness itself made (e.g. the critic judging a reply).

    Priced from the price table unless ``cost_usd`` is given; an unknown model is recorded
    as unpriced (never $0). Reported as ``summary.harness_cost_usd``, apart from the agent's
    ``cost_usd``.
    """
    return HARNESS_SPEND.record(model, input_tokens, output_tokens, purpose=purpose, case_id=case_id,
                                cost_usd=cost_usd)


# --------------------------------------------------------------------------- run level


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100); None for no values."""
    vals = sorted(v for v in values if v is not None)
    if not vals:
        return None
    k = max(0, min(len(vals) - 1, int(-(-q * len(vals) // 100)) - 1))
    return round(vals[k], 3)


def latency_block(results: Iterable[CaseResult]) -> dict[str, Any]:
    ms = [r.metrics for r in results if r.metrics is not None]
    block: dict[str, Any] = {}
    for name, values in (("first_reply_ms", [m.first_reply_ms for m in ms if m.first_reply_ms is not None]),
                         ("last_reply_ms", [m.last_reply_ms for m in ms if m.last_reply_ms is not None]),
                         ("llm_call_ms", [v for m in ms for v in m.llm_ms]),
                         ("fetch_ms", [v for m in ms for v in m.fetch_ms])):
        block[name] = {"p50": percentile(values, 50), "p95": percentile(values, 95), "n": len(values)}
    return block


def totals_block(results: Sequence[CaseResult]) -> dict[str, Any]:
    ms = [r.metrics for r in results if r.metrics is not None]
    unpriced = [r.id for r in results if r.status != "skipped" and r.cost_usd is None]
    return {
        "llm_calls": sum(m.llm_calls for m in ms), "fetches": sum(m.fetches for m in ms),
        "sends": sum(m.sends for m in ms), "errors": sum(m.errors for m in ms),
        "tokens": {"input": sum(m.tokens_input for m in ms), "output": sum(m.tokens_output for m in ms),
                   "estimated": any(m.tokens_estimated for m in ms)},
        "cost_unavailable": len(unpriced),
        "cost_unavailable_cases": unpriced[:20],
        "replayed_cases": sum(1 for m in ms if m.replayed_calls),
        "replay_misses": sum(m.replay_misses for m in ms),
    }


def run_perf(results: Sequence[CaseResult], layers: Iterable[str]) -> dict[str, Any]:
    """``{"summary": {...}, "layers": {name: {...}}}``: merged into results.json by the writer."""
    harness_usd, harness_unpriced = HARNESS_SPEND.total()
    simulated = any(r.metrics is not None and r.metrics.simulated for r in results)
    summary = {"latency": latency_block(results), **totals_block(results), "simulated": simulated,
               "harness_cost_usd": harness_usd, "harness_cost_unpriced_calls": harness_unpriced,
               "harness_calls": len(HARNESS_SPEND.calls)}
    by_layer = {}
    for layer in layers:
        mine = [r for r in results if r.layer == layer]
        by_layer[layer] = {"latency": latency_block(mine), **totals_block(mine)}
    return {"summary": summary, "layers": by_layer}


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))
