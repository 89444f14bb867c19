"""Which index set-up should install torch from: prints a URL, or nothing for "the configured one".

Called by scripts/setup with the venv's Python. The pin ``torch==2.13.0`` resolves to a CPU
wheel only where the configured index serves one (this project's machines do: its version
reads ``2.13.0+cpu``). On PyPI the same pin is, on Linux, the CUDA build that pulls
``nvidia-*`` and ``triton`` wheels (several GB). So, unless told otherwise, set-up asks pip
what the pin would install (``pip install --dry-run --report``: metadata only, no wheel is
downloaded) and, when that is a CUDA build, installs torch from PyTorch's own CPU index first.

    HARNESS_TORCH_INDEX unset or "auto"   decide as above
    HARNESS_TORCH_INDEX=none              never: the configured index as it is (GPU users,
                                          or an index that already serves the CPU wheel)
    HARNESS_TORCH_INDEX=<url>             always install torch from that index

usage: python scripts/torch_index.py [--report FILE]   (FILE: a saved pip report, for tests)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

PIN = "torch==2.13.0"
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
GPU_ONLY = ("nvidia-", "triton")


def installed_cpu_torch() -> bool:
    """The venv already holds the pinned torch: nothing to decide."""
    try:
        from importlib.metadata import version

        return version("torch").split("+")[0] == PIN.split("==")[1]
    except Exception:
        return False


def cuda_build(report: dict) -> str:
    """Why the resolved pin is a CUDA build ("" when it is not)."""
    names = [(i.get("metadata") or {}).get("name", "").lower() for i in report.get("install") or ()]
    gpu = sorted(n for n in names if n.startswith(GPU_ONLY))
    torch = next((i for i in report.get("install") or () if (i.get("metadata") or {}).get("name", "").lower() == "torch"),
                 None)
    local = ((torch or {}).get("metadata") or {}).get("version", "").partition("+")[2]
    if local.startswith("cu") or local.startswith("rocm"):
        return f"the index serves torch {torch['metadata']['version']}"
    if gpu:
        return f"the index's torch pulls {', '.join(gpu[:3])}{' ...' if len(gpu) > 3 else ''}"
    return ""


def resolve() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        proc = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
                               "--report", str(out), PIN], capture_output=True, text=True)
        if proc.returncode != 0 or not out.is_file():
            print(f"setup: could not ask pip what {PIN} resolves to; using the configured index",
                  file=sys.stderr)
            return {}
        return json.loads(out.read_text())


def main(argv: list[str]) -> int:
    choice = os.environ.get("HARNESS_TORCH_INDEX", "auto").strip() or "auto"
    if choice.lower() == "none":
        return 0
    if choice.lower() != "auto":
        print(choice)
        return 0
    if "--report" in argv:
        report = json.loads(Path(argv[argv.index("--report") + 1]).read_text())
    elif installed_cpu_torch():
        return 0
    else:
        report = resolve()
    why = cuda_build(report)
    if why:
        print(f"setup: {why}; installing torch's CPU wheel from {CPU_INDEX} "
              "(HARNESS_TORCH_INDEX=none keeps the configured index)", file=sys.stderr)
        print(CPU_INDEX)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
