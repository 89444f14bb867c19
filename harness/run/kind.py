"""A run's kind (results.json ``run.kind``): which runs are "the previous night".

    nightly   the whole suite, once: no --case, -k, --layer, --lf or --maxfail, no --repeat
    partial   a selection of the suite (--case, -k, --layer, --lf, --maxfail)
    repeat    --repeat K (K > 1): every case K times
    shard     one slice of a run (--shard I/N); the merged run is a nightly again

Only nightly runs are the previous night for ``harness diff``, the trend charts and the
anomaly checks' history, unless asked (``harness diff BASE NEW``, ``--kind``). A run written
before the field existed has no ``run`` object and counts as nightly.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

NIGHTLY, PARTIAL, REPEAT, SHARD = "nightly", "partial", "repeat", "shard"
KINDS = (NIGHTLY, PARTIAL, REPEAT, SHARD)
#: ``--kind`` values: a kind, or every run.
ANY = "any"


def run_info(*, selection: Sequence[str] = (), repeat: int = 1, shard: str | None = None,
             kind: str | None = None) -> dict[str, Any]:
    """results.json's ``run`` object for a run started with that selection (its options as
    typed, e.g. ``["--case", "url-*"]``), repeat count and shard; ``kind`` given (``harness run
    --kind``; the scheduler's run is the night whatever ``[schedule]`` selects) stands."""
    if kind is None:
        kind = REPEAT if repeat > 1 else PARTIAL if selection else SHARD if shard else NIGHTLY
    elif kind == NIGHTLY and shard:  # a shard of the night is still a slice until merged
        kind = SHARD
    out: dict[str, Any] = {"kind": kind}
    if selection:
        out["selection"] = list(selection)
    if repeat > 1:
        out["repeat"] = int(repeat)
    if shard:
        out["shard"] = str(shard)
    return out


def kind_of(results: Mapping[str, Any]) -> str:
    """The kind of a results.json dict; nightly when it records none (a run from before the field)."""
    run = results.get("run")
    kind = run.get("kind") if isinstance(run, Mapping) else None
    return str(kind) if kind else NIGHTLY


def matches(results: Mapping[str, Any], kind: str | None) -> bool:
    """Whether a run is of ``kind`` (None or ``any``: every run is)."""
    return kind in (None, ANY) or kind_of(results) == kind
