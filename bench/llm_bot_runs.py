"""Issue 21's Done-when, measured: the python-telegram-bot + openai SDK shop assistant
(tests/agents/ptb_openai_tools.py) with its offline suite (tests/fixtures_llmbot/, metamorphic
variants on) run N times in a row at concurrency 8 against the model and tool doubles; and the
command bot (tests/agents/ptb_commands.py) with variants on.

    PYTHONPATH=. .venv/bin/python bench/llm_bot_runs.py [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.cases import load_cases  # noqa: E402
from harness.config import load_config  # noqa: E402
from harness.run.runner import RunOptions, run_suite  # noqa: E402
from tests.channels._bot_config import telegram_bot_config  # noqa: E402

SHOP_ENV = 'OPENAI_BASE_URL = "{llm_base_url}"\nOPENAI_API_KEY = "sk-test"\nSHOP_API = "{tools_url}"\n'


async def one(name: str, module: str, fixtures: Path, env: str, tmp: Path) -> tuple[int, int, list[str], float]:
    cfg = tmp / "harness.toml"
    cfg.write_text(telegram_bot_config(name, ["python", "-m", module], ROOT, extra=env, reply_timeout_s=8)
                   + '\n[robustness]\nvariants = "all"\n')
    t0 = time.monotonic()
    report = await run_suite(load_config(cfg, environ={}), load_cases(fixtures, config=load_config(cfg, environ={})),
                             RunOptions(out_dir=tmp / "out", concurrency=8))
    bad = [f"{c.id}:{c.status}" for c in report.cases if c.status != "pass"]
    return len(report.cases) - len(bad), len(report.cases), bad, time.monotonic() - t0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    ok = True
    for name, module, fixtures, env in (
            ("shop-assistant", "tests.agents.ptb_openai_tools", ROOT / "tests" / "fixtures_llmbot", SHOP_ENV),
            ("command-bot", "tests.agents.ptb_commands", ROOT / "tests" / "fixtures_commands", "")):
        for i in range(args.runs):
            with tempfile.TemporaryDirectory() as d:
                passed, total, bad, secs = asyncio.run(one(name, module, fixtures, env, Path(d)))
            ok &= not bad
            print(f"{name} run {i + 1}: {passed}/{total} passed in {secs:.1f}s" + (f"  not passed: {bad}" if bad else ""))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
