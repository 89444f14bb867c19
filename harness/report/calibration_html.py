"""calibration.html: the catch matrix as one static page (rows: regressions, columns: layers,
then the kinds of evidence that caught each one: hand-written, baseline, judges, defaults).

Drawn by templates/calibration.html.j2 (harness.report.templating: autoescape on) from the view
built here; the style is templates/calibration.css.
"""

from __future__ import annotations

from typing import Any

from harness import layer as layer_registry
from harness.report.templating import render


def _row(r: dict[str, Any], layers: list[str]) -> dict[str, Any]:
    cells = []
    for layer in layers:
        ids = r["by_layer"].get(layer, [])
        cells.append((list(ids[:6]), len(ids) - 6 if len(ids) > 6 else 0))
    fe = r.get("first_evidence")
    first = {"case": fe["case"], "check": fe["check"], "kind": fe.get("kind", "?"), "turn": str(fe["turn"]),
             "reason": fe["reason"], "expected": str(fe["expected"])[:200],
             "observed": str(fe["observed"])[:200]} if fe else None
    kinds = [(kind, len(ids), list(ids[:3]), len(ids) > 3) for kind, ids in (r.get("caught_by_kind") or {}).items()
             if ids]
    return {"name": r["name"], "layer": r["layer"], "description": r["description"], "cells": cells,
            "kinds": kinds, "first": first, "missed": not r["caught_by"]}


def render_calibration_html(data: dict) -> str:
    layers = layer_registry.names()
    page = {"layers": layers, "rows": [_row(r, layers) for r in data["regressions"]],
            "caught": sum(1 for r in data["regressions"] if r["caught_by"]),
            "clean": data["clean"], "noise": data["noise"], "wall_seconds": str(data["wall_seconds"]),
            "totals": [f"{kind} {n}" for kind, n in (data.get("by_kind") or {}).items() if n],
            "early_stop": bool(data.get("early_stop"))}
    return render("calibration.html.j2", page=page)
