"""The core install, measured (issue 25 Done-when 1; figures in bench/RESULTS.md).

1. ``python3.11 -m venv CORE && CORE/bin/pip install THIS_TREE``: wall time, venv size, no torch;
   with an empty pip cache (``--warm``: the user's own cache);
2. a bot venv beside it, by QUICKSTART's python-telegram-bot line;
3. ``harness init`` + the page's bot + ``harness check`` + ``harness run --layer robustness``
   with the core harness (the bot started by its own ``.venv/bin/python``);
4. with ``--quickstart``: tests/test_quickstart.py as on a fresh machine
   (``HARNESS_QUICKSTART_FRESH=1``: every venv anew, empty pip cache), timed.

usage: python bench/bench_install.py [--warm] [--quickstart] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(cmd: str, cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(["bash", "-c", cmd], cwd=cwd, env=env, capture_output=True, text=True)
    took = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {cmd}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return took


def size_mb(path: Path) -> int:
    return int(subprocess.run(["du", "-sm", str(path)], capture_output=True, text=True).stdout.split()[0])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--warm", action="store_true", help="use the pip cache as it is (default: an empty one)")
    ap.add_argument("--quickstart", action="store_true", help="also time the QUICKSTART test, fresh")
    ap.add_argument("--keep", help="work in this folder and keep it (default: a temporary one)")
    args = ap.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="bench-install-"))
    work.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    if not args.warm:
        env["PIP_CACHE_DIR"] = str(work / "pip-cache")
    out: dict = {"pip_cache": "warm" if args.warm else "empty", "python": sys.version.split()[0]}
    core = work / "core"
    shutil.rmtree(core, ignore_errors=True)
    shutil.rmtree(ROOT / "build", ignore_errors=True)
    out["core_install_s"] = round(timed(f"python3.11 -m venv {core} && {core}/bin/pip install -q {ROOT}", work, env), 1)
    out["core_mb"] = size_mb(core)
    probe = subprocess.run([str(core / "bin" / "python"), "-c", "import importlib.util as u; "
                            "print([m for m in ('torch', 'sentence_transformers', 'transformers') if u.find_spec(m)])"],
                           capture_output=True, text=True, env=env, cwd=work)
    out["heavy_in_core"] = probe.stdout.strip()
    bot = work / "bot"
    shutil.rmtree(bot, ignore_errors=True)
    bot.mkdir()
    page = (ROOT / "docs" / "QUICKSTART.md").read_text()
    line = re.search(r"```bash framework=python-telegram-bot\n(.*?)\n```", page, re.S).group(1).strip()
    out["bot_venv_s"] = round(timed(line, bot, env), 1)
    code = re.search(r"```python file=mybot.py framework=python-telegram-bot\n(.*?)```", page, re.S).group(1)
    path = f"{core}/bin:{env['PATH']}"
    run_env = {**env, "PATH": path}
    timed("harness init . --channel telegram", bot, run_env)
    (bot / "mybot.py").write_text(code)
    out["check_s"] = round(timed("harness check", bot, run_env), 1)
    out["robustness_run_s"] = round(timed("harness run --layer robustness --quiet", bot, run_env), 1)
    results = json.loads(next((bot / "reports").glob("*/results.json")).read_text())
    s = results["summary"]
    out["robustness_run"] = f"{s['passed']}/{s['planned']} passed, verdict {s.get('verdict')}"
    if args.quickstart:
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "tests/test_quickstart.py", "-k", "literally or apart"],
                              cwd=ROOT, env={**os.environ, "HARNESS_QUICKSTART_FRESH": "1", "PYTHONPATH": str(ROOT)},
                              capture_output=True, text=True)
        out["quickstart_fresh_s"] = round(time.perf_counter() - started, 1)
        out["quickstart_fresh"] = (done.stdout.strip().splitlines() or ["?"])[-1]
    print(json.dumps(out, indent=1))
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
