"""Shards: one deterministic slice of the suite per machine, and the slices merged back into one run.

``--shard I/N`` (1-based, like Playwright's ``--shard=1/3``) runs the cases whose position
in the suite's case ids, sorted, is I-1 modulo N: round-robin over the sorted ids, so the
N slices differ in size by at most one and every machine computes the same split from the
same fixtures and the same ``--layer`` / ``--case`` selection (which every shard must
share). The slices of one run share a run id (``--run-id X``); in storage each slice lands
in ``runs/.../X/shards/I-of-N/`` and the last one to arrive writes the merged report at
``runs/.../X/`` (``harness merge X`` does it by hand, also with shards missing).
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence, TypeVar

from harness.errors import UsageError

T = TypeVar("T")


def parse_shard(text: str) -> tuple[int, int]:
    """``"2/4"`` -> ``(2, 4)``; a UsageError for anything else."""
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text or "")
    if not m:
        raise UsageError(f"--shard {text!r} is not I/N", fix="e.g. --shard 1/4 ... --shard 4/4 (1-based)")
    index, count = int(m.group(1)), int(m.group(2))
    if count < 1 or not 1 <= index <= count:
        raise UsageError(f"--shard {text}: I must be between 1 and N", fix="e.g. --shard 1/4 ... --shard 4/4")
    return index, count


def select_shard(cases: Sequence[T], index: int, count: int) -> list[T]:
    """The cases of shard ``index`` of ``count``, in their suite order."""
    ids = sorted(c.id for c in cases)  # type: ignore[attr-defined]
    mine = {case_id for pos, case_id in enumerate(ids) if pos % count == index - 1}
    return [c for c in cases if c.id in mine]  # type: ignore[attr-defined]


def merge_results(shards: Sequence[Mapping[str, Any]], count: int) -> dict[str, Any]:
    """One results.json dict from the results.json dicts of a run's shards.

    Counts are recomputed from the cases with the same aggregation a single run uses; the
    planned counts are the sum of the shards' (a missing shard leaves its cases unplanned
    here, and the merged run says which shards are missing and is never a pass).
    """
    from harness.run.aggregate import exit_code, summarize
    from harness.report.jsonfile import SCHEMA, counts_to_dict
    from harness.report.jsonread import case_from_dict

    if not shards:
        raise ValueError("no shard to merge")
    first = shards[0]
    cases = [c for s in shards for c in s.get("cases") or ()]
    planned: dict[str, int] = {}
    for s in shards:
        for layer, counts in (s.get("layers") or {}).items():
            planned[layer] = planned.get(layer, 0) + int(counts.get("planned", 0))
    summary, layers = summarize([case_from_dict(c) for c in cases], planned)
    present = sorted(int((s.get("shard") or {}).get("index", 0)) for s in shards)
    missing = [i for i in range(1, count + 1) if i not in present]
    summary_d = counts_to_dict(summary)
    code = exit_code(summary)
    # Budget stops (3) and bring-up failures (4) of any shard are the run's too.
    codes = [int(s.get("exit_code") or 0) for s in shards]
    if any(c > 1 for c in codes):
        code = max(codes)
    notes = [f"merged from {len(shards)} of {count} shards"]
    if missing:
        summary_d["verdict"] = "incomplete" if summary_d["verdict"] == "pass" else summary_d["verdict"]
        code = max(code, 1)
        notes.append(f"shards missing: {', '.join(map(str, missing))} (their cases are not counted)")
    for s in shards:
        idx = (s.get("shard") or {}).get("index")
        notes += [f"shard {idx}: {n}" for n in s.get("notes") or ()]
    manifest = dict(first.get("manifest") or {})
    manifest["shards"] = [{"index": (s.get("shard") or {}).get("index"),
                           "host": (s.get("manifest") or {}).get("host", ""),
                           "started_at": s.get("started_at", ""), "finished_at": s.get("finished_at", ""),
                           "exit_code": s.get("exit_code")} for s in shards]
    models: dict[str, Any] = {}
    for s in shards:
        models.update({k: v for k, v in (s.get("models") or {}).items() if v and v != "none"})
    # the shards of a whole-suite run merge into a nightly run (harness.run.kind)
    run = {k: v for k, v in (first.get("run") or {}).items() if k != "shard"}
    if run.get("kind") == "shard":
        run["kind"] = "nightly"
    return {
        "schema": SCHEMA,
        "run_id": first.get("run_id", ""),
        **({"run": run} if run else {}),
        "started_at": min(str(s.get("started_at", "")) for s in shards),
        "finished_at": max(str(s.get("finished_at", "")) for s in shards),
        "harness_version": first.get("harness_version", ""),
        "target": dict(first.get("target") or {}),
        "golden_version": first.get("golden_version", ""),
        "models": {**dict(first.get("models") or {}), **models},
        "summary": summary_d,
        "layers": {name: counts_to_dict(c) for name, c in layers.items()},
        "cases": cases,
        "notes": notes,
        "exit_code": code,
        "shard": {"merged": len(shards), "count": count, "missing": missing},
        "manifest": manifest,
    }
