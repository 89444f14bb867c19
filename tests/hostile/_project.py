"""What the hostile tests (and bench/bench_memory.py) share: a small project folder whose
harness.toml runs tests/hostile/hostile_bot.py, a ``harness`` command line in a child process,
a mutant written in place of a file, and the hostile bot's process ids."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Iterable

from harness.cli import main

ROOT = Path(__file__).resolve().parents[2]
BOT = Path(__file__).with_name("hostile_bot.py")


def write_cases(folder: Path, name: str, text: str) -> Path:
    """fixtures/robustness/<name> holding ``text`` (dedented), and an empty fixtures/documents."""
    (folder / "fixtures" / "robustness").mkdir(parents=True, exist_ok=True)
    (folder / "fixtures" / "documents").mkdir(exist_ok=True)
    path = folder / "fixtures" / "robustness" / name
    path.write_text(textwrap.dedent(text))
    return path


#: One robustness case the hostile bot answers ("echo: hello"): the well-formed run of a test.
HELLO = """
layer: robustness
cases:
  - id: hello
    send: "hello"
    expect: {reply: {contains: "echo: hello"}}
"""


def bot_config(folder: Path, hostile: str, *, name: str | None = None, ready_timeout_s: float | None = None,
               tables: str = "", env: dict[str, str] | None = None) -> Path:
    """folder/harness.toml: a [target] that runs the hostile bot on a free port with HOSTILE set to
    ``hostile``; ``tables`` (TOML, dedented) goes between [target] and [target.env]; ``env`` adds to
    [target.env]."""
    target = [f'name = "{name}"'] if name is not None else []
    target += [f'command = ["python", "{BOT}", "--port", "{{port}}"]', "port = 0",
               'telegram_webhook = "http://127.0.0.1:{port}/telegram"']
    if ready_timeout_s is not None:
        target.append(f"ready_timeout_s = {ready_timeout_s}")
    target_env = ['TELEGRAM_API_BASE = "{telegram_api}"', 'TELEGRAM_BOT_TOKEN = "{bot_token}"',
                  'TELEGRAM_WEBHOOK_SECRET = "{webhook_secret}"', f'HOSTILE = "{hostile}"']
    target_env += [f'{key} = "{value}"' for key, value in (env or {}).items()]
    cfg = folder / "harness.toml"
    cfg.write_text("\n".join(["[target]", *target]) + "\n" + textwrap.dedent(tables).strip("\n") + "\n"
                   + "\n".join(["[target.env]", *target_env]) + "\n")
    return cfg


def harness_cli(*args: str | Path, cwd: Path, timeout: float, env: dict[str, str] | None = None,
                ) -> subprocess.CompletedProcess:
    """``python -m harness.cli <args>`` in a child process, this checkout first on its path."""
    return subprocess.run([sys.executable, "-m", "harness.cli", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, **(env or {}), "PYTHONPATH": str(ROOT)})


def write_mutant(path: Path, mutant, nowhere: Path | None = None) -> None:
    """Put a mutant (input_mutants.Mutant) at ``path``: its text or bytes, a folder of that name,
    a link to itself (``loop``) or a link to ``nowhere`` (``dangling``)."""
    if mutant.kind == "text":
        path.write_text(mutant.text, encoding="utf-8")
    elif mutant.kind == "bytes":
        path.write_bytes(mutant.data)
    elif mutant.kind == "dir":
        path.mkdir()
    elif mutant.kind == "loop":
        os.symlink(path, path)
    elif mutant.kind == "dangling" and nowhere is not None:
        os.symlink(nowhere, path)
    else:  # pragma: no cover
        raise AssertionError(mutant.kind)


def timed_main(argv: list[str], capsys) -> tuple[int, str, str, float]:
    """harness.cli.main(argv) in this process: its exit code, stdout, stderr and the CPU seconds it
    took (process time, not wall time: a blow-up such as an alias bomb burns CPU, while another
    process keeping both cores busy does not count, so the bound holds on a loaded runner)."""
    capsys.readouterr()
    started = time.process_time()
    code = main(argv)
    seconds = time.process_time() - started
    captured = capsys.readouterr()
    return code, captured.out, captured.err, seconds


def read_pids(path: Path) -> dict[str, int]:
    """The ``<name> <pid>`` lines the hostile bot wrote to HOSTILE_PIDS (none if no file yet)."""
    if not path.exists():
        return {}
    return {k: int(v) for k, v in (line.split() for line in path.read_text().splitlines())}


def kill_all(pids: Iterable[int]) -> None:
    for p in pids:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass

