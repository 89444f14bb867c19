"""No unit test asserts an upper bound on wall-clock time: the suite must pass with both cores
busy (speed targets are measured under bench/, bench/RESULTS.md). A lower bound (a wait that was
honoured) holds on any machine; CPU seconds (``time.process_time``) are not wall time."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
WALL = {"monotonic", "perf_counter", "time", "monotonic_ns", "perf_counter_ns"}
TIMED_NAMES = {"elapsed", "seconds", "took", "wall", "duration"}


def _wall_call(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in WALL
               and isinstance(n.func.value, ast.Name) and n.func.value.id == "time" for n in ast.walk(node))


def _timed_name(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Name) and n.id in TIMED_NAMES for n in ast.walk(node))


def upper_bounds(tree: ast.AST) -> list[int]:
    """Lines of ``assert`` statements bounding a wall-clock figure from above."""
    wall_vars = {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) and _wall_call(n.value)
                 for t in n.targets if isinstance(t, ast.Name)}
    found = []
    for n in ast.walk(tree):
        if not isinstance(n, ast.Assert):
            continue
        for cmp in (c for c in ast.walk(n.test) if isinstance(c, ast.Compare)):
            sides = [cmp.left, *cmp.comparators]
            for i, op in enumerate(cmp.ops):
                small = sides[i] if isinstance(op, (ast.Lt, ast.LtE)) else (
                    sides[i + 1] if isinstance(op, (ast.Gt, ast.GtE)) else None)
                if small is None:
                    continue
                if _wall_call(small) or (any(isinstance(x, ast.Name) and x.id in wall_vars for x in ast.walk(small))
                                         and _timed_name(small)):
                    found.append(n.lineno)
    return found


def test_no_test_bounds_wall_clock_time_from_above():
    offenders = []
    for path in sorted(TESTS.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        offenders += [f"{path.relative_to(TESTS.parent)}:{line}" for line in upper_bounds(tree)]
    assert offenders == [], "wall-clock upper bounds (move to bench/ or order by events): " + ", ".join(offenders)


def test_the_guard_catches_what_it_is_for():
    bad = ast.parse("import time\nt0 = time.monotonic()\nf()\nassert time.monotonic() - t0 < 2\n"
                    "elapsed = time.perf_counter() - t0\nassert elapsed < 1.9\n")
    assert upper_bounds(bad) == [4, 6]
    good = ast.parse("import time\nt0 = time.monotonic()\nassert time.monotonic() - t0 >= 0.5\n"
                     "c = time.process_time()\nassert time.process_time() - c < 2\n")
    assert upper_bounds(good) == []
