"""scripts/setup: which index torch comes from (scripts/torch_index.py), and that it says what it does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "torch_index.py"
CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def _report(tmp_path: Path, *packages: tuple[str, str]) -> Path:
    path = tmp_path / "report.json"
    path.write_text(json.dumps({"install": [{"metadata": {"name": n, "version": v}} for n, v in packages]}))
    return path


def _choose(report: Path, choice: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "HARNESS_TORCH_INDEX"}
    if choice is not None:
        env["HARNESS_TORCH_INDEX"] = choice
    return subprocess.run([sys.executable, str(SCRIPT), "--report", str(report)], capture_output=True, text=True,
                          env=env, timeout=60)


@pytest.mark.parametrize("packages, choice, expected", [
    # PyPI on Linux: the pin is the CUDA build with its GPU libraries -> PyTorch's CPU index
    ((("torch", "2.13.0"), ("nvidia-cublas-cu12", "12.8"), ("triton", "3.5")), None, CPU_INDEX),
    ((("torch", "2.13.0+cu128"),), "auto", CPU_INDEX),
    # an index that serves the CPU wheel (this project's machines), or macOS: as configured
    ((("torch", "2.13.0+cpu"), ("sympy", "1.14")), None, ""),
    ((("torch", "2.13.0"), ("sympy", "1.14")), None, ""),
    # switched off (GPU users) or pointed elsewhere
    ((("torch", "2.13.0"), ("nvidia-cublas-cu12", "12.8")), "none", ""),
    ((("torch", "2.13.0"),), "https://mirror.example/whl/cpu", "https://mirror.example/whl/cpu"),
])
def test_torch_index_choice(tmp_path, packages, choice, expected):
    proc = _choose(_report(tmp_path, *packages), choice)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == expected
    if expected == CPU_INDEX:
        assert "HARNESS_TORCH_INDEX=none" in proc.stderr  # says how to switch it off


def test_setup_reports_steps_and_is_quick_when_up_to_date():
    """The real script on this checkout (already installed): progress lines, no silence."""
    if not (ROOT / ".venv" / "bin" / "harness").exists():
        pytest.skip(".venv not set up")
    proc = subprocess.run([str(ROOT / "scripts" / "setup")], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert lines and all(line.startswith("setup: ") for line in lines)
    assert "up to date" in lines[-1] or (any("[4/4]" in line for line in lines) and "ready in" in lines[-1])
