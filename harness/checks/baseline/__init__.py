"""Checks learned from the accepted nights (``baseline.<kind>``; docs/CASES.md "Baseline checks").

    facts.py      claims and their facts (numbers+units, years, dates, names, hedges, negation,
                  direction), claims aligned one to one
    samples.py    one attempt as the baseline sees it, from results.json or from an Observation
    settings.py   ``[baseline]``, per layer and per case (which kinds a case is held to)
    learn.py      what held on every accepted sample (pure)
    evidence.py   tonight's attempt against it (pure); factcheck.py the facts' rule
    trend.py      the run-level "later cases are slower" check (pure)

The night side (``harness.night.learned``) loads the accepted nights and hands a ``Baseline``
down to the runner (``RunOptions.baseline``), which calls ``attempt_evidence`` for every
attempt and ``trend.latency_trend`` once the cases are done.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from harness.checks.baseline.evidence import case_evidence
from harness.checks.baseline.learn import CaseInvariants, learn
from harness.checks.baseline.samples import from_observation
from harness.checks.provider import ProviderCalls
from harness.checks.baseline.settings import KINDS, PARAMS, baseline_settings, case_setting_error
from harness.types import Case, Evidence, Observation
from harness.schema.models import BaselineModel

#: Every evidence name this family produces (documented in docs/CASES.md; not case-file checks:
#: a case's ``baseline:`` key, of type ``PARAMS``, says which of them hold it).
CHECKS = tuple(f"baseline.{k}" for k in KINDS)

__all__ = ["Baseline", "CHECKS", "KINDS", "PARAMS", "attempt_evidence", "baseline_settings",
           "case_setting_error", "learn"]


@dataclass(frozen=True)
class Baseline:
    """The accepted nights' invariants, handed to the runner as a value."""

    accepted: str
    """The accepted baseline run's id."""
    runs: tuple[str, ...]
    """Every night learned from, the accepted one first."""
    cases: Mapping[str, CaseInvariants]
    settings: BaselineModel = field(default_factory=BaselineModel)
    note: str = ""
    provider: ProviderCalls | None = None
    """The accepted nights' LLM calls, run-wide: what a slow spell of the provider looks like."""

    def summary(self) -> dict[str, Any]:
        """results.json ``summary.baseline`` (the trend is added by the runner)."""
        return {"checked": True, "accepted": self.accepted, "nights": list(self.runs), "cases": len(self.cases),
                "note": self.note}


def unchecked(note: str) -> dict[str, Any]:
    """results.json ``summary.baseline`` of a run held to no baseline, and why."""
    return {"checked": False, "accepted": None, "nights": [], "cases": 0, "note": note}


def attempt_evidence(baseline: Baseline, case: Case, obs: Observation | None,
                     latency_ms: float | None) -> tuple[list[Evidence], dict[str, Any] | None]:
    """The ``baseline.*`` evidence of one attempt and results.json's ``cases[].baseline``."""
    kinds = baseline.settings.kinds_for(case.layer, getattr(case, "baseline", None))
    if not kinds:
        return [], {"off": True, "nights": 0, "note": "baseline checks are switched off for this case"}
    inv = baseline.cases.get(case.id)
    if inv is None:
        return [], {"nights": 0, "note": "no passing accepted night of this case: nothing to hold it to"}
    info: dict[str, Any] = {"nights": inv.samples, "runs": list(inv.runs), "skipped": dict(inv.skipped),
                            "turns": [{"index": t.index, "text": t.text} for t in inv.turns], "changes": []}
    if obs is None:
        return [], info
    evidence, changes = case_evidence(inv, from_observation(obs, latency_ms), kinds, baseline.provider)
    info["changes"] = changes
    return evidence, info
