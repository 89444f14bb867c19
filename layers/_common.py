"""Small helpers the built-in layers share (no layer imports another)."""

from __future__ import annotations

import statistics
from typing import Any, Iterable, Sequence

from harness.types import CheckSpec, Turn


def has_check(turn: Turn, *names: str) -> bool:
    """Did the case write one of these checks on this turn?"""
    return any(spec.name in names for spec in turn.checks)


def flag(name: str) -> CheckSpec:
    return CheckSpec(name, True)


def distribution(values: Iterable[float]) -> dict[str, Any] | None:
    """n, min, p10, median, p90, max of the values (None when there are none)."""
    xs = sorted(float(v) for v in values)
    if not xs:
        return None

    def q(p: float) -> float:
        return round(xs[min(len(xs) - 1, int(p * (len(xs) - 1) + 0.5))], 4)

    return {"n": len(xs), "min": round(xs[0], 4), "p10": q(0.1), "median": round(statistics.median(xs), 4),
            "p90": q(0.9), "max": round(xs[-1], 4)}


def table(title: str, head: Sequence[str], rows: Sequence[Sequence[Any]], note: str = "",
          anchor: str = "") -> dict[str, Any] | None:
    """One table of a layer's report section, as data (None without rows): the default
    template (harness/report/templates/layers/tables.html.j2) draws and escapes it."""
    if not rows:
        return None
    return {"title": title, "head": list(head), "rows": [list(r) for r in rows], "note": note, "anchor": anchor}


def rate(passed: int, total: int) -> str:
    return "n/a" if not total else f"{100.0 * passed / total:.1f}%".replace(".0%", "%")


def metric(value: Any, unit: str = "") -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}{unit}"
    return f"{value}{unit}"
