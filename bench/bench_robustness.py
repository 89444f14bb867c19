"""Benchmark: the robustness layer against docbot, at concurrency 1 and 8.

Measures wall time, the harness process's own CPU time (everything the harness does:
driver, emulators, gateway, document server, checks, writers — docbot runs in its own
process and is not counted), and per case the time the harness spent waiting for the
agent (from delivery until the turn settled) versus the rest. "wall not waiting" divides
(wall - waiting / concurrency) by the case count: an estimate of the harness's own time per
case at concurrency 1, where nothing overlaps.

    .venv/bin/python bench/bench_robustness.py [--concurrency 1 8]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.cases import load_cases  # noqa: E402
from harness.config import load_config  # noqa: E402
from harness.run.runner import RunOptions, run_suite  # noqa: E402


def cpu_self() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 8])
    args = ap.parse_args()
    config = load_config(ROOT / "harness.toml")
    cases = load_cases(ROOT / "fixtures", layers=["robustness"])
    print(f"{len(cases)} robustness cases, settle_s={config.sandbox.settle_s}")
    print("| concurrency | wall s | cases | harness CPU s | harness CPU ms/case | waiting on agent s (sum) | wall not waiting ms/case | verdict |")
    print("|---|---|---|---|---|---|---|---|")
    for conc in args.concurrency:
        out = Path(tempfile.mkdtemp(prefix="bench-"))
        cpu0, t0 = cpu_self(), time.perf_counter()
        report = asyncio.run(run_suite(config, cases, RunOptions(out_dir=out, concurrency=conc)))
        wall = time.perf_counter() - t0
        cpu = cpu_self() - cpu0
        waited = sum(t.settled_after_s
                     for c in report.cases if c.observation for t in c.observation.turns)
        print(f"| {conc} | {wall:.2f} | {len(report.cases)} | {cpu:.2f} | {cpu / len(report.cases) * 1000:.1f} "
              f"| {waited:.1f} | {(wall - waited / conc) / len(report.cases) * 1000:.0f} | {report.summary.verdict} |")


if __name__ == "__main__":
    main()
