"""The accepted nights, loaded and learned from, for tonight's ``baseline.*`` checks.

``load_baseline(config, reports_dir, concurrency, source=...)`` finds the accepted baseline
(``night/baseline.py``: ``<reports>/baseline.json``), reads it and the nightly runs before it
through a run source (local, or local + object storage: ``cli.nightly.source_for``), keeps
the ones run like it (same ``target.name``, same ``summary.anomaly_basis``: concurrency and
the settings' hash), at most ``[baseline] window`` of them, newest first, and hands them to
the pure learner (``checks.baseline.learn``). Tonight must have the accepted run's basis too.
Anything missing (no baseline accepted, unreadable, another basis tonight) gives no
``Baseline`` and a note saying why: the run then has no baseline checks, never fake passes.
"""

from __future__ import annotations

import fnmatch
import logging
import os
from typing import Any, Mapping

from harness.checks.baseline import Baseline, baseline_settings, learn
from harness.night.baseline import read_baseline
from harness.night.history import LocalRunSource, RunSource
from harness.run.anomaly import basis, is_nightly_id

log = logging.getLogger("harness.night.learned")


def _basis_of(run: Mapping[str, Any]) -> dict[str, Any]:
    b = (run.get("summary") or {}).get("anomaly_basis")
    return dict(b) if isinstance(b, Mapping) else {}


def _name_of(run: Mapping[str, Any]) -> str:
    return str((run.get("target") or {}).get("name", ""))


def differs(tonight: Mapping[str, Any], accepted: Mapping[str, Any]) -> str:
    """How tonight's basis differs from the accepted run's ('' when it does not)."""
    if not accepted:
        return "the accepted run recorded no basis (concurrency and settings)"
    out = []
    if tonight.get("concurrency") != accepted.get("concurrency"):
        out.append(f"concurrency {tonight.get('concurrency')} tonight, {accepted.get('concurrency')} on the "
                   "accepted nights")
    if tonight.get("config") != accepted.get("config"):
        out.append("tonight's [target] (but its version), [sandbox], [critic] or [embeddings] settings differ")
    return "; ".join(out)


def nights_like(source: RunSource, accepted: Mapping[str, Any], window: int) -> tuple[list[dict[str, Any]],
                                                                                      list[str]]:
    """The accepted run and the nightly runs before it run like it, newest first (at most ``window``)."""
    acc_id = str(accepted.get("run_id", ""))
    runs, warnings = [dict(accepted)], []
    if not is_nightly_id(acc_id):  # a labelled run (calibration's "clean"): itself, its repeats as nights
        return runs, warnings
    want_basis, want_name = _basis_of(accepted), _name_of(accepted)
    for run_id in reversed([i for i in source.run_ids() if i < acc_id and is_nightly_id(i)]):
        if len(runs) >= window:
            break
        try:
            run = source.load(run_id)
        except (OSError, ValueError) as exc:
            warnings.append(f"skipped run {run_id}: {type(exc).__name__}: {exc}")
            continue
        if _name_of(run) == want_name and _basis_of(run) == want_basis:
            runs.append(run)
    return runs, warnings


def load_baseline(config: Any, reports_dir: str | os.PathLike[str], concurrency: int, *,
                  source: RunSource | None = None) -> tuple[Baseline | None, str]:
    """(the learned baseline, '') or (None, why there is none tonight)."""
    settings = baseline_settings(config)
    if not settings.enabled:
        return None, "baseline checks are off ([baseline] enabled = false)"
    record = read_baseline(reports_dir, source)
    if not record:
        return None, "no accepted baseline (harness baseline accept RUN): no baseline checks tonight"
    source = source or LocalRunSource(reports_dir)
    acc_id = str(record["run_id"])
    try:
        accepted = source.load(acc_id)
    except Exception as exc:  # a missing or broken baseline run must not stop the night
        return None, f"the accepted baseline {acc_id} is unreadable ({type(exc).__name__}: {exc}): no baseline checks"
    name = getattr(getattr(config, "target", None), "name", "")
    if _name_of(accepted) != name:
        return None, f"the accepted baseline {acc_id} tested {_name_of(accepted)!r}, tonight tests {name!r}"
    why = differs(basis(config, concurrency), _basis_of(accepted))
    if why:
        return None, f"tonight does not run like the accepted baseline {acc_id} ({why}): no baseline checks"
    runs, warnings = nights_like(source, accepted, settings.window)
    cases = learn(runs, settings)
    ids = tuple(str(r.get("run_id")) for r in runs)
    entries = record.get("cases") or ()
    if isinstance(entries, Mapping):  # baseline.json as `accept RUN --case GLOB` writes it: {case: {run_id, ...}}
        entries = [{"glob": cid, **e} for cid, e in entries.items()
                   if isinstance(e, Mapping) and e.get("run_id") and str(e["run_id"]) != acc_id]
    for entry in entries:  # `accept RUN --case GLOB`: those cases from that run's nights
        more = _accepted_for_cases(source, entry, config, concurrency, settings, warnings)
        cases.update(more)
        ids += tuple(i for i in dict.fromkeys(c for inv in more.values() for c in inv.runs) if i not in ids)
    for w in warnings:
        log.warning("baseline: %s", w)
    note = (f"held to {len(ids)} accepted night(s) ({', '.join(ids)}); "
            f"{settings.min_nights} needed for facts, bands and latency, {settings.min_nights_structure} for "
            "structure")
    return Baseline(accepted=acc_id, runs=ids, cases=cases, settings=settings, note=note), ""


def _accepted_for_cases(source: RunSource, entry: Any, config: Any, concurrency: int, settings: Any,
                        warnings: list[str]) -> dict:
    """The invariants of the cases one ``cases`` entry of baseline.json accepted from another run:
    ``{"glob", "run_id", ...}``; later entries win. An entry whose run is unreadable or ran unlike
    tonight is skipped with a warning (those cases keep the main baseline)."""
    if not isinstance(entry, Mapping) or not entry.get("glob") or not entry.get("run_id"):
        warnings.append(f"baseline.json: a cases entry without glob and run_id: {entry!r}")
        return {}
    try:
        run = source.load(str(entry["run_id"]))
    except Exception as exc:
        warnings.append(f"accepted run {entry['run_id']} for {entry['glob']} unreadable: {exc}")
        return {}
    if differs(basis(config, concurrency), _basis_of(run)):
        warnings.append(f"accepted run {entry['run_id']} for {entry['glob']} ran unlike tonight: skipped")
        return {}
    runs, more = nights_like(source, run, settings.window)
    warnings += more
    return {cid: inv for cid, inv in learn(runs, settings).items() if fnmatch.fnmatchcase(cid, str(entry["glob"]))}
