"""Slot extraction: did the agent understand what the user asked for?

``slots: {document: paper.pdf, platform: linkedin}`` compares the expected slots with what
the agent's state (through the state probe) says it understood after the turn. Known slots
and where they are read:

    document  -> $.document.url  (compared by its last path segment: paper.pdf)
    platform  -> $.platform
    audience  -> $.audience
    language  -> $.language

A slot may also be written as a path (``"$.x.y": value``). ``null`` expects the slot empty.
Per case the evidence is an exact match of every slot. Per layer, ``slot_metrics`` counts
TP (right value), FP (a value where none or another was expected) and FN (an expected value
missing or wrong): a wrong value is one FP and one FN. Precision/recall/F1 with a zero
denominator are reported as ``None`` ("n/a"), never as 1.0.

The evidence keeps the expected and observed slots as JSON, so the layer's metrics can be
recomputed from results.json or the journal alone.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Iterable, Mapping
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field

from harness.checks.base import probed_state
from harness.checks.params import FIX, examples
from harness.checks.state import MISSING, _PATH_RE, resolve
from harness.types import CaseResult, Case, Evidence, Observation

EVAL = "slots@1"
SLOT_PATHS = {"document": "$.document.url", "platform": "$.platform", "audience": "$.audience",
              "language": "$.language"}


def _normalize(slot: str, value: Any) -> Any:
    if value is MISSING or value is None or value == "":
        return None
    if slot == "document" and isinstance(value, str):
        path = urlsplit(value).path if "://" in value else value
        return path.rstrip("/").rsplit("/", 1)[-1] or value
    return value if isinstance(value, (str, int, float, bool)) else json.dumps(value, sort_keys=True)


def observed_slots(state: Mapping[str, Any], expected: Mapping[str, Any]) -> dict[str, Any]:
    return {slot: _normalize(slot, resolve(state, SLOT_PATHS.get(slot, slot))) for slot in expected}


def counts(expected: Mapping[str, Any], observed: Mapping[str, Any]) -> tuple[int, int, int]:
    """(TP, FP, FN) for one comparison; an empty expected and empty observed slot is a TN."""
    tp = fp = fn = 0
    for slot, want in expected.items():
        got = observed.get(slot)
        if want is None and got is None:
            continue
        if want is not None and got is not None and str(got) == str(want):
            tp += 1
            continue
        if got is not None:
            fp += 1
        if want is not None:
            fn += 1
    return tp, fp, fn


def slots(case: Case, obs: Observation, turn: int, params: Mapping[str, Any]) -> Evidence:
    name = "slots"
    expected_json = json.dumps(params, sort_keys=True, ensure_ascii=False)
    t, missing = probed_state(name, turn, obs, expected_json, EVAL, "slots")
    if missing is not None:
        return missing
    got = observed_slots(t.state, params)
    tp, fp, fn = counts(params, got)
    wrong = [f"{s}={got.get(s)!r} (wanted {w!r})" for s, w in params.items()
             if str(got.get(s)) != str(w) and not (w is None and got.get(s) is None)]
    ok = not wrong
    reason = (f"turn {turn}: all {len(params)} slots match (TP={tp} FP={fp} FN={fn})" if ok else
              f"turn {turn}: slots " + "; ".join(wrong) + f" (TP={tp} FP={fp} FN={fn})")
    return Evidence(check=name, turn=turn, availability="ready", passed=ok,
                    expected=expected_json, observed=json.dumps(got, sort_keys=True, ensure_ascii=False),
                    reason=reason, evaluator=EVAL)


def _slot(slot: str) -> str:
    if slot not in SLOT_PATHS and not _PATH_RE.match(slot):
        raise ValueError(f"unknown slot {slot!r} (known: {', '.join(SLOT_PATHS)}, or a path like $.x)"
                         f"{FIX}name a known slot or the state's JSON path, e.g. \"$.{slot}\"")
    return slot


SlotName = Annotated[str, AfterValidator(_slot),
                     Field(description=f"{', '.join(SLOT_PATHS)}, or a JSON path like $.x",
                           json_schema_extra={"pattern": "^(" + "|".join(SLOT_PATHS) + ")$|" + _PATH_RE.pattern})]
SlotValue = Annotated[str | int | float | bool | None, Field(description="the slot's value; null: empty")]
Slots = Annotated[dict[SlotName, SlotValue],
                  Field(min_length=1, description="per slot: the value the agent's state holds",
                        json_schema_extra=examples({"document": "paper.pdf", "platform": "linkedin"}))]


def _ratio(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


def metrics(tp: int, fp: int, fn: int) -> dict[str, Any]:
    p, r = _ratio(tp, tp + fp), _ratio(tp, tp + fn)
    f1 = None if p is None or r is None else (round(2 * p * r / (p + r), 4) if p + r else 0.0)
    return {"tp": tp, "fp": fp, "fn": fn, "precision": p, "recall": r, "f1": f1}


def slot_metrics(results: Iterable[CaseResult]) -> dict[str, Any] | None:
    """Precision/recall/F1 over every ready ``slots`` evidence of ``results``; None if there is none."""
    tp = fp = fn = cases = exact = 0
    found = False
    for r in results:
        items = [e for e in r.evidence if e.check == "slots" and e.availability == "ready"]
        if not items:
            continue
        found = True
        cases += 1
        exact += all(e.passed for e in items)
        for e in items:
            try:
                a, b, c = counts(json.loads(e.expected), json.loads(e.observed))
            except (ValueError, AttributeError, RecursionError):
                continue
            tp, fp, fn = tp + a, fp + b, fn + c
    if not found:
        return None
    out = metrics(tp, fp, fn)
    out.update({"cases": cases, "exact_match": exact})
    return out



from harness.checks.base import CheckDef  # noqa: E402

CHECKS = (CheckDef("slots", slots, Slots, EVAL),)


def layer_slot_metrics(results: Iterable[CaseResult]) -> dict[str, dict[str, Any]]:
    """``{layer: {"slots": metrics}}`` for every layer whose cases checked slots."""
    results = list(results)
    out: dict[str, dict[str, Any]] = {}
    for layer in dict.fromkeys(r.layer for r in results):
        m = slot_metrics(r for r in results if r.layer == layer)
        if m is not None:
            out[layer] = {"slots": m}
    return out
