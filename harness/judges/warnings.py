"""Warnings for ``harness check``: similarity thresholds that the data does not back.

``mutation_warnings(cases, *folders)`` returns one line per problem, never raises:

- a case whose similarity ``min`` is below the default (0.75) without a ``reason``;
- a case whose own wrong answers (mutations, as measured by the newest judges.json found
  under ``folders``: its ``thresholds`` entry) score at or above its current threshold,
  so similarity alone would pass them. Cheap: no model is loaded; run ``harness judges``
  to refresh the figures.
"""

from __future__ import annotations

import os

from harness.checks.similarity import DEFAULT_MIN, below_default_without_reason


def mutation_warnings(cases, *folders: str | os.PathLike) -> list[str]:
    from harness.judges.report import latest_figures

    out: list[str] = []
    params = {}
    for case in cases:
        for turn in case.turns:
            for spec in turn.checks:
                if spec.name == "similarity":
                    params[case.id] = spec.params or {}
                    if below_default_without_reason(spec.params, DEFAULT_MIN):
                        out.append(f"{case.id}: similarity min {spec.params.get('min')} is below the default "
                                   f"{DEFAULT_MIN} without a reason (add similarity.reason)")
    latest = latest_figures(*folders) if folders else None
    if latest is None:
        return out
    for cid, t in sorted((latest.get("thresholds") or {}).items()):
        if cid not in params:
            continue
        current = float(params[cid].get("min", DEFAULT_MIN))
        wrong = t.get("wrong_max_by_kind") or {}
        passing = sorted(k for k, v in wrong.items() if v >= current)
        if passing:
            out.append(f"{cid}: its own wrong answers ({', '.join(passing)}) score at or above its similarity "
                       f"threshold {current:.2f} (judges.json {latest['path']}); similarity alone would pass them")
    return out
