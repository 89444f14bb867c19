"""Peak memory of ``harness run`` under a reply flood (issue 13, item 6).

A hostile agent (tests/hostile/hostile_bot.py, ``HOSTILE=flood``) answers one message with
FLOOD_N replies of FLOOD_CHARS characters in one turn. The harness runs in a child process
(``harness run`` through ``harness.cli.main``) and prints its own peak resident set size
(``ru_maxrss``) when it is done; the agent is a separate process and not counted.

    .venv/bin/python bench/bench_memory.py [--n 6000] [--chars 4000]

Prints one line: replies, characters, exit code, wall seconds, peak RSS in MB, and the
stored/overflow counts of the turn from results.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# The project the flood tests run (tests/hostile/test_memory.py), from the same helper that writes theirs.
from tests.hostile._project import bot_config, write_cases  # noqa: E402

CHILD = """
import resource, sys
sys.path.insert(0, {root!r})
from harness.cli import main
code = main({argv!r})
print("PEAK_KB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "EXIT", code, flush=True)
"""


def project(folder: Path, n: int, chars: int) -> Path:
    write_cases(folder, "flood.yaml", f"""
        layer: robustness
        cases:
          - id: reply-flood
            send: "go"
            expect:
              replies: {{min: {n}}}
        """)
    return bot_config(folder, "flood", name="flood", env={"FLOOD_N": str(n), "FLOOD_CHARS": str(chars)}, tables="""
        [sandbox]
        settle_s = 2
        reply_timeout_s = 300
        case_timeout_s = 600
        """)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=6000)
    ap.add_argument("--chars", type=int, default=4000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cfg = project(Path(tmp), args.n, args.chars)
        out = Path(tmp) / "out"
        argv = ["run", "--config", str(cfg), "--out", str(out), "--quiet", "--layer", "robustness"]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-c", CHILD.format(root=str(ROOT), argv=argv)], cwd=tmp, env=env,
                              capture_output=True, text=True, timeout=1800)
        seconds = time.monotonic() - started
        line = next((ln for ln in done.stdout.splitlines() if ln.startswith("PEAK_KB")), "")
        if not line:
            print(done.stdout[-2000:], done.stderr[-4000:], file=sys.stderr)
            return 1
        peak_mb = int(line.split()[1]) / 1024
        code = line.split()[3]
        results = json.loads(next(out.glob("*/results.json")).read_text())
        case = results["cases"][0]
        turn = case["turns"][0]
        overflow = turn.get("overflow") or {}
        print(f"replies={args.n} chars={args.chars} exit={code} seconds={seconds:.0f} peak_rss_mb={peak_mb:.0f} "
              f"stored={len(turn['replies'])} overflow={json.dumps(overflow)} status={case['status']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
