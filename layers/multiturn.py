"""Multi-turn state: follow-ups, clarification, context switches, stop/cancel, error recovery.

When the target has a state probe, every turn of every multi-turn case also checks that
the probe answered after it (``state_probed``), so the agent's state is read after every
turn, not only where a case asserts on it. Every turn checks ``no_leak`` too.

Summary metrics: slot precision / recall / F1 over the cases that check slots, and pass^k
(every attempt passed) when the run repeats cases.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from harness.layer import Layer
from harness.layers._common import flag, table
from harness.types import Case, CaseResult, CheckSpec


def default_checks(case: Case, turn: int, context: Mapping[str, Any]) -> list[CheckSpec]:
    out = [flag("no_leak")]
    if context.get("state_probe"):
        out.append(flag("state_probed"))
    return out


def metrics(results: Sequence[CaseResult], context: Mapping[str, Any]) -> dict[str, Any]:
    from harness.checks.slots import slot_metrics  # here, not at import: argument parsing loads the layers

    out: dict[str, Any] = {}
    slots = slot_metrics(results)
    if slots is not None:
        out["slots"] = slots
    repeated = [r for r in results if (r.attempts or 1) > 1]
    if repeated:
        k = max(r.attempts for r in repeated)
        out["repeats"] = {"k": k, "cases": len(repeated),
                          "pass_at_k": sum(bool(r.pass_at_k) for r in repeated),
                          "pass_hat_k": sum(bool(r.pass_hat_k) for r in repeated)}
    return out


def report_section(m: Mapping[str, Any]) -> dict[str, Any] | None:
    """The layer's repeats line; its slots are drawn by the report's own slot section
    (report/repeats.py reads ``layers.<name>.slots`` of any layer)."""
    r = m.get("repeats")
    if not r:
        return None
    return {"tables": [table("Multi-turn: repeats", ("k", "cases", "pass@k", "pass^k"),
                 [[r.get("k"), r.get("cases"), r.get("pass_at_k"), r.get("pass_hat_k")]], anchor="layer-multiturn")]}


LAYER = Layer(
    name="multiturn", title="Multi-turn state", order=30,
    description="lost state, ignored cancels, stale documents after a switch, missing or endless retries",
    default_checks=default_checks, metrics=metrics, report_section=report_section,
    default_names=("no_leak", "state_probed"),
)
