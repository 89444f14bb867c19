"""Baseline checks end to end: N clean noisy nights accepted, then clean nights and seeded regressions.

    python bench/baseline_nights.py --out /tmp/bl --nights 3 --clean 1 \
        --regressions hedges_removed replies_split history_resent digit_swap name_swap slow_leak

Runs ``harness run`` against docbot with ``DOCBOT_NOISE=1`` (extra ``harness run`` arguments after
``--``, e.g. ``-- --layer cost``), accepts the last of the first ``--nights`` runs as the baseline,
and prints per later run: its verdict, the failing ``baseline.*`` evidence by check, and the cases
that failed on ``baseline.*`` evidence only (what no other check saw). Figures: bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def harness(*args: str, regression: str = "") -> int:
    env = {**os.environ, "DOCBOT_NOISE": "1", "DOCBOT_REGRESSION": regression, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "harness.cli", *args], cwd=ROOT, env=env).returncode


def latest(out: Path) -> dict:
    run = sorted(p for p in out.iterdir() if (p / "results.json").is_file())[-1]
    return json.loads((run / "results.json").read_text(encoding="utf-8"))


def describe(label: str, results: dict) -> str:
    base, only = Counter(), Counter()
    for case in results["cases"]:
        failed = [e for e in case["evidence"] if e["passed"] is False]
        mine = [e for e in failed if e["check"].startswith("baseline.")]
        base.update(e["check"] for e in mine)
        if mine and len(mine) == len(failed):
            only[case["layer"]] += 1
    s = results["summary"]
    trend = (s.get("baseline") or {}).get("trend") or {}
    return (f"{label}: {s['verdict']} (failed {s['failed']}, soft {s['soft']}); baseline.* failing {dict(base)}; "
            f"cases caught only by baseline.* {sum(only.values())} {dict(only)}; trend rho {trend.get('rho')}, "
            f"leak {trend.get('leak')}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--nights", type=int, default=3)
    ap.add_argument("--clean", type=int, default=1)
    ap.add_argument("--regressions", nargs="*", default=[])
    ap.add_argument("rest", nargs="*", help="extra harness run arguments (after --)")
    args = ap.parse_args()
    out = Path(args.out)
    run = ["run", "--out", str(out), "--quiet", *args.rest]
    for _ in range(args.nights):
        harness(*run)
    harness("baseline", "--reports", str(out), "accept", latest(out)["run_id"], "--note", "bench/baseline_nights.py")
    for i in range(args.clean):
        harness(*run)
        print(describe(f"clean {i + 1}", latest(out)), flush=True)
    for name in args.regressions:
        harness(*run, regression=name)
        print(describe(name, latest(out)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
