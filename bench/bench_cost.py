"""Cost layer benchmark: wall time and simulated spend of the cost layer and of a full run,
and which cases catch each cost regression.

    .venv/bin/python bench/bench_cost.py [--out /tmp/bench-cost]

Prints a Markdown table (paste into bench/RESULTS.md).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REGRESSIONS = ("prompt_sent_twice", "summary_loop", "slow_path", "no_truncation")


def run(out: Path, *args: str, regression: str = "") -> tuple[float, int, dict]:
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "run", "--quiet", "--out", str(out), *args], cwd=ROOT,
                          env={**os.environ, "DOCBOT_REGRESSION": regression}, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    latest = max(out.iterdir(), key=lambda p: p.stat().st_mtime)
    return wall, proc.returncode, json.loads((latest / "results.json").read_text())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="/tmp/bench-cost")
    out = Path(ap.parse_args().out)
    print("| run | wall s | exit | cases | passed | failed | agent spend (SIMULATED) | LLM calls | tokens in/out |")
    print("|---|---|---|---|---|---|---|---|---|")
    rows = [("cost layer, clean", ("--layer", "cost"), ""), ("full run (all layers), clean", (), "")]
    for label, args, reg in rows:
        wall, code, r = run(out / label.split(",")[0].replace(" ", "-"), *args, regression=reg)
        s = r["summary"]
        print(f"| {label} | {wall:.1f} | {code} | {s['planned']} | {s['passed']} | {s['failed']} | "
              f"${s['cost_usd']:.4f} | {s['llm_calls']} | {s['tokens']['input']}/{s['tokens']['output']} |")
    print()
    print("| regression | exit | cases failed | caught by (first failing evidence) |")
    print("|---|---|---|---|")
    for reg in REGRESSIONS:
        wall, code, r = run(out / reg, "--layer", "cost", regression=reg)
        failed = [c for c in r["cases"] if c["status"] == "fail"]
        first = failed[0] if failed else None
        ev = next((e for e in first["evidence"] if e["passed"] is False), {}) if first else {}
        print(f"| {reg} | {code} | {len(failed)} | {', '.join(c['id'] for c in failed[:4])}"
              f"{' ...' if len(failed) > 4 else ''}: `{ev.get('check', '-')}`: {ev.get('reason', '-')} |")


if __name__ == "__main__":
    main()
