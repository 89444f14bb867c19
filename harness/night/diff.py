"""Tonight against the baseline: regressions, fixes, flakes, new and removed cases, drift.

``diff_runs(base, new, recent=...)`` compares two results.json dicts and returns a plain,
JSON-able dict (written as ``<run_dir>/diff.json``); ``harness.report.diff_text``'s
``render_diff_text`` and ``render_diff_markdown`` turn it into the terminal and summary.md forms.

Categories (good = pass|soft, bad = fail|error; unavailable and skipped say nothing about
the agent):
    regressions     good before -> bad now (these make ``harness diff`` exit 1)
    fixed           bad before -> good now
    still_failing   bad before and now
    changed         any other status change (e.g. pass -> unavailable)
    new / removed   in one run only
    flaky           good/bad flipped at least ``drift_flaky_min_flips`` times over the recent runs, or
                    (``--repeat K``) some attempts of the case passed and some failed: a case's
                    attempts are compared one by one, never its worst status alone
Drift is per attempt too: a repeat run's summed cost and tokens are divided by K.
A quarantined case (``fixtures/quarantine.yaml``) is still listed, marked, but its
regression does not count toward the exit code.

Drift compares the cases both runs share (same case set, so a grown suite is not "more
expensive"), per layer and in total, with the ``drift_*`` thresholds of ``[budget]``
(``harness.schema.models.BudgetModel``; see docs/OPERATIONS.md). A change of golden version,
models, agent version or harness version is listed under ``references`` so a score change
can be told from a reference change.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from harness.night.history import BAD, GOOD, case_similarity, group_metrics, status_matrix
from harness.schema.models import BudgetModel

SCHEMA = "harness.diff/1"


def _cases(run: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {str(c.get("id")): c for c in run.get("cases") or () if isinstance(c, Mapping)}


def _mixed(case: Mapping[str, Any]) -> bool:
    """A ``--repeat K`` case whose decided attempts disagreed (results.json ``flaky``)."""
    return bool(case.get("flaky")) and int(case.get("attempts") or 1) > 1


def _per_attempt(case: Mapping[str, Any]) -> Mapping[str, Any]:
    """A case's spend per attempt: a ``--repeat K`` case's cost, tokens and LLM calls are the sum
    of its K attempts (its latency is the last attempt's already)."""
    k = int(case.get("attempts") or 1)
    if k <= 1:
        return case
    out = dict(case)
    if isinstance(case.get("cost_usd"), (int, float)):
        out["cost_usd"] = case["cost_usd"] / k
    if isinstance(case.get("llm_calls"), (int, float)):
        out["llm_calls"] = case["llm_calls"] / k
    out["tokens"] = {key: (v / k if isinstance(v, (int, float)) else v) for key, v in (case.get("tokens") or {}).items()}
    return out


def _entry(case_id: str, base: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> dict[str, Any]:
    from harness.report.format import headline

    shown = new or base or {}
    return {
        "id": case_id,
        "layer": shown.get("layer", ""),
        "before": base.get("status") if base else None,
        "after": new.get("status") if new else None,
        "quarantined": bool((new or {}).get("quarantined", False)),
        "why": headline(new) if new else "",
    }


def flips(statuses: Sequence[str | None]) -> int:
    """Good <-> bad transitions in a status sequence (undecided runs are passed over)."""
    decided = ["good" if s in GOOD else "bad" for s in statuses if s in GOOD or s in BAD]
    return sum(1 for a, b in zip(decided, decided[1:]) if a != b)


def _model_name(entry: Any) -> Any:
    """A model entry is a name, or a table whose ``name`` (and version) identify the model."""
    if isinstance(entry, Mapping):
        return "@".join(str(entry[k]) for k in ("name", "version") if entry.get(k)) or None
    return entry


def _references(base: Mapping[str, Any], new: Mapping[str, Any]) -> list[dict[str, Any]]:
    changes = []

    def cmp(what: str, a: Any, b: Any) -> None:
        if (a or "") != (b or ""):
            changes.append({"what": what, "before": a, "after": b})

    cmp("golden version", base.get("golden_version"), new.get("golden_version"))
    cmp("agent version", (base.get("target") or {}).get("version"), (new.get("target") or {}).get("version"))
    cmp("agent", (base.get("target") or {}).get("name"), (new.get("target") or {}).get("name"))
    cmp("harness version", base.get("harness_version"), new.get("harness_version"))
    bm, nm = base.get("models") or {}, new.get("models") or {}
    for key in sorted(set(bm) | set(nm)):
        # ``*_stats`` and ``critic_health`` are measurements of the night, not references
        if key.endswith("_stats") or key == "critic_health":
            continue
        if not bm.get(key) or not nm.get(key):
            continue  # a model one night did not use (its layer not selected) is no change of reference
        cmp(f"model {key}", _model_name(bm.get(key)), _model_name(nm.get(key)))
    # The run manifest (issue 6, storage side) may add a price table version and a config hash;
    # a side without a manifest (written later, or an older run) is missing data, not a change.
    bman, nman = base.get("manifest") or {}, new.get("manifest") or {}
    for key in ("price_table_version", "config_hash"):
        if key in bman and key in nman:
            cmp(key.replace("_", " "), bman.get(key), nman.get(key))
    return changes


def _drift_group(name: str, base_cases: list, new_cases: list, t: BudgetModel) -> list[dict[str, Any]]:
    b, n = group_metrics(base_cases), group_metrics(new_cases)
    out = []

    def ratio(a: float | None, c: float | None) -> float | None:
        if a is None or c is None or a <= 0:
            return None
        return c / a

    checks = (
        ("similarity", b["similarity"], n["similarity"], lambda r: r < t.drift_similarity_ratio, "down"),
        ("cost_usd", b["cost_usd"], n["cost_usd"], lambda r: r > t.drift_cost_ratio, "up"),
        ("tokens", b["tokens"], n["tokens"], lambda r: r > t.drift_tokens_ratio, "up"),
        ("latency_p95_ms", b["latency_p95_ms"], n["latency_p95_ms"],
         lambda r: r > t.drift_latency_ratio and (n["latency_p95_ms"] - b["latency_p95_ms"]) >= t.drift_latency_floor_ms, "up"),
    )
    for metric, before, after, beyond, direction in checks:
        r = ratio(before, after)
        if r is not None and math.isfinite(r) and beyond(r):
            out.append({"scope": name, "metric": metric, "before": before, "after": after,
                        "ratio": round(r, 4), "direction": direction})
    return out


def diff_runs(base: Mapping[str, Any], new: Mapping[str, Any], *, recent: Sequence[Mapping[str, Any]] = (),
              thresholds: BudgetModel | None = None, base_reason: str = "") -> dict[str, Any]:
    """Compare ``new`` with ``base`` (results.json dicts). ``recent`` are the runs of the
    flakiness window, oldest first (``new`` is appended when it is not among them)."""
    t = thresholds or BudgetModel()
    bc, nc = _cases(base), _cases(new)
    out: dict[str, Any] = {
        "schema": SCHEMA,
        "base_run": {"run_id": base.get("run_id"), "started_at": base.get("started_at"), "why": base_reason},
        "new_run": {"run_id": new.get("run_id"), "started_at": new.get("started_at")},
        "references": _references(base, new),
        "regressions": [], "fixed": [], "still_failing": [], "changed": [], "new": [], "removed": [],
        "not_run": [], "flaky": [], "drift": [],
    }
    # a layer the new run did not select (--layer) is not run tonight, not removed from the suite
    ran_layers = set(new.get("layers") or {}) or {str(c.get("layer")) for c in nc.values()}
    for cid in sorted(set(bc) | set(nc)):
        b, n = bc.get(cid), nc.get(cid)
        if b is None:
            out["new"].append(_entry(cid, None, n))
            continue
        if n is None:
            out["removed" if str(b.get("layer")) in ran_layers else "not_run"].append(_entry(cid, b, None))
            continue
        before, after = b.get("status"), n.get("status")
        if _mixed(b) or _mixed(n):  # --repeat K: some attempts passed, some failed: flaky, not a regression
            mixed = n if _mixed(n) else b
            out["flaky"].append({"id": cid, "flips": None, "statuses": [before, after], "runs": 1,
                                 "attempts": int(mixed.get("attempts") or 1), "passes": int(mixed.get("passes") or 0),
                                 "within_run": str((new if mixed is n else base).get("run_id", "")),
                                 "quarantined": bool(n.get("quarantined", False))})
            continue
        if before in GOOD and after in BAD:
            out["regressions"].append(_entry(cid, b, n))
        elif before in BAD and after in GOOD:
            out["fixed"].append(_entry(cid, b, n))
        elif before in BAD and after in BAD:
            out["still_failing"].append(_entry(cid, b, n))
        elif before != after:
            out["changed"].append(_entry(cid, b, n))
        sb, sn = case_similarity(b), case_similarity(n)
        if sb is not None and sn is not None and sn < sb * t.drift_similarity_ratio:
            out["drift"].append({"scope": f"case {cid}", "metric": "similarity", "before": sb, "after": sn,
                                 "ratio": round(sn / sb, 4) if sb > 0 else None, "direction": "down"})

    window = [r for r in recent if r.get("run_id") != new.get("run_id")][-(max(t.drift_flaky_nights, 1) - 1):] \
        if t.drift_flaky_nights > 1 else []
    window = [*window, new]
    within = {f["id"] for f in out["flaky"]}
    for cid, statuses in status_matrix(window).items():
        k = flips(statuses)
        if k >= t.drift_flaky_min_flips and cid not in within:
            out["flaky"].append({"id": cid, "flips": k, "statuses": statuses, "runs": len(window),
                                 "quarantined": bool((nc.get(cid) or {}).get("quarantined", False))})

    out["flaky"].sort(key=lambda f: (-(f["flips"] or 0), f["id"]))  # the most unstable first
    common = sorted(set(bc) & set(nc))
    layers = sorted({str(nc[c].get("layer")) for c in common})
    # per attempt: a --repeat 3 run spends three times a night's tokens, which is no drift
    pb, pn = {c: _per_attempt(bc[c]) for c in common}, {c: _per_attempt(nc[c]) for c in common}
    drift = _drift_group("total", [pb[c] for c in common], [pn[c] for c in common], t)
    for layer in layers:
        ids = [c for c in common if nc[c].get("layer") == layer]
        drift += _drift_group(f"layer {layer}", [pb[c] for c in ids], [pn[c] for c in ids], t)
    out["drift"] = drift + out["drift"]
    blocking = [r for r in out["regressions"] if not r["quarantined"]]
    out["counts"] = {k: len(out[k]) for k in ("regressions", "fixed", "still_failing", "changed", "new",
                                               "removed", "not_run", "flaky", "drift")}
    out["counts"]["blocking_regressions"] = len(blocking)
    out["exit_code"] = 1 if blocking else 0
    return out


def diff_exit_code(diff: Mapping[str, Any]) -> int:
    """1 when the diff holds a regression that is not quarantined, else 0."""
    return int(diff.get("exit_code", 0))
