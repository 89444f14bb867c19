"""What ``harness run`` imports before it starts the target (issue 26: the target's start-up runs
beside the harness's only from the moment it is spawned, harness/run/early.py).

Argument parsing loads the layers (their names and config sections); the layers must not pull
in all of ``harness.checks`` for that (about 50 ms of a busy machine's start-up): the checks a
layer's metrics need are imported when the metrics are computed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import sys
from harness.cli.parser import build_parser
from harness.config import load_config
from harness import layer
args = build_parser().parse_args(["run", "--layer", "robustness"])
load_config(sys.argv[1])
assert {"robustness", "multiturn", "reasoning", "cost"} <= set(layer.names())
print(sorted(m for m in sys.modules if m == "harness.checks" or m.startswith("harness.checks.")))
"""


def test_parsing_and_the_config_import_no_check_module():
    out = subprocess.run([sys.executable, "-c", PROBE, str(ROOT / "harness.toml")], cwd=ROOT, capture_output=True,
                         text=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_the_layers_metrics_still_reach_their_checks():
    from harness.layers import variants
    from harness.checks.equivalence import CONFUSABLES

    assert variants.LOOKALIKES == {latin: cyrillic for cyrillic, latin in CONFUSABLES.items()}
