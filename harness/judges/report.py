"""judges.json and judges.html; ``latest_figures`` for a run's report.

judges.json (contract, /work/shared/DESIGN.md)::

    {"kinds": {KIND: {"mutations": N, "caught": M}},
     "goldens": {"total": N, "passed": M},
     "health": {"examples": N, "accuracy_all": X, "kappa": K, "undecided": U},
     "cases": [{"id", "kind", "mutation", "caught_by"}],
     ...}  # beyond the contract: thresholds, golden_failures, health_detail, meta
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

FILE = "judges.json"
PAGE = "judges.html"


def _atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def write(out: Path, result: dict[str, Any]) -> None:
    """judges.json and judges.html, through the run's redactor (a golden or a reply may quote a key)."""
    from harness import redact

    out = Path(out)
    clean = redact.active().data(result)
    _atomic(out / FILE, json.dumps(clean, indent=1, ensure_ascii=False) + "\n")
    _atomic(out / PAGE, render_html(clean))


def rate(kind: dict[str, int]) -> float | None:
    return kind["caught"] / kind["mutations"] if kind.get("mutations") else None


def summary_lines(result: dict[str, Any]) -> list[str]:
    """Short plain lines: per-kind catch rates, goldens, health (for terminals and reports)."""
    lines = []
    for name, k in result["kinds"].items():
        r = rate(k)
        lines.append(f"{name}: {k['caught']}/{k['mutations']} caught" + (f" ({r:.0%})" if r is not None else ""))
    g = result["goldens"]
    lines.append(f"goldens: {g['passed']}/{g['total']} pass their own case's checks")
    h = result["health"]
    if h.get("examples"):
        kappa = f"{h['kappa']:.2f}" if isinstance(h.get("kappa"), (int, float)) else "undefined"
        lines.append(f"critic health: {h['examples']} examples, accuracy (undecided counted wrong) "
                     f"{h['accuracy_all']:.2f}, kappa {kappa}, undecided {h['undecided']}")
    return lines


def latest_figures(*folders: str | os.PathLike) -> dict[str, Any] | None:
    """The newest judges.json under the given folders (each folder itself or any folder
    below it, one level deep), with ``path`` and ``lines`` (summary_lines) added; None
    when there is none. For a run's report: "judges: the latest figures"."""
    found: list[Path] = []
    for folder in folders:
        root = Path(folder)
        if not root.is_dir():
            continue
        found.extend(p for p in [root / FILE, *root.glob(f"*/{FILE}")] if p.is_file())
    for path in sorted(found, key=lambda p: p.stat().st_mtime, reverse=True):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            data["lines"] = summary_lines(data)
        except (OSError, ValueError, KeyError, TypeError):
            continue
        data["path"] = str(path)
        return data
    return None


def render_html(result: dict[str, Any]) -> str:
    """judges.html, drawn by harness/report/templates/judges.html.j2 (autoescape on) from this view."""
    from harness.report.templating import render

    meta = result.get("meta", {})
    kinds = []
    for name, k in result["kinds"].items():
        r = rate(k)
        kinds.append({"name": name, "mutations": k["mutations"], "caught": k["caught"],
                      "rate": "" if r is None else f"{r:.0%}", "ok": r is not None and r >= meta.get("min_catch", 0.9)})
    thresholds = [(cid, f"{t['current']:.2f}", t["proposed"], t["right_min"], t["wrong_whole_max"],
                   t["mutations_passing_current"], t.get("reason") or "")
                  for cid, t in sorted(result.get("thresholds", {}).items())]
    h = result["health"]
    page = {"critic": str(meta.get("critic")), "embedder": str(meta.get("embedder")), "seed": str(meta.get("seed")),
            "min_catch": str(meta.get("min_catch")), "generated": str(meta.get("generated", "")), "kinds": kinds,
            "goldens": result["goldens"],
            "golden_failures": [{"id": g["id"], "answer": g["answer"], "failures": "; ".join(g["failures"])}
                                for g in result.get("golden_failures", [])],
            "health": {k: str(h.get(k)) for k in ("examples", "accuracy_all", "kappa", "undecided")},
            "missed": [c for c in result["cases"] if not c["caught_by"]], "thresholds": thresholds,
            "notes": list(meta.get("notes", []))}
    return render("judges.html.j2", page=page)
