"""What an agent (it knows ``{run_dir}``) or a person leaves in a run folder in place of the
files the harness reads back never hangs or crashes it (issue 24): a FIFO, a folder, bytes that
are not UTF-8 or JSON nested past the parser, as results.json for `harness report`, as
results.jsonl or manifest.json for `--resume`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ops"))

from ops_support import echo_cases, make_project  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _harness(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})


def _plant(path: Path, what: str) -> None:
    path.unlink(missing_ok=True)
    if what == "fifo":
        os.mkfifo(path)
    elif what == "folder":
        path.mkdir()
    elif what == "not-utf8":
        path.write_bytes(b'{"schema": "\xff\xfe"}')
    elif what == "deep":
        path.write_text("[" * 100_000 + "]" * 100_000)


@pytest.mark.parametrize("what, says", [("fifo", "is not a regular file"), ("folder", "is a folder"),
                                        ("not-utf8", "is not UTF-8"), ("deep", "nests deeper")])
def test_report_on_a_results_json_that_is_not_one(tmp_path, what, says):
    run = tmp_path / "run"
    run.mkdir()
    _plant(run / "results.json", what)
    done = _harness("report", str(run), cwd=tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert says in done.stderr and "fix:" in done.stderr and "Traceback" not in done.stderr, done.stderr


@pytest.mark.parametrize("name", ["results.jsonl", "manifest.json"])
def test_resume_over_a_fifo_never_hangs(tmp_path, name):
    cfg = make_project(tmp_path, cases=echo_cases(1))
    assert _harness("run", "--config", str(cfg), "--quiet", "--run-id", "r1", cwd=tmp_path).returncode == 0
    _plant(tmp_path / "reports" / "r1" / name, "fifo")
    done = _harness("run", "--config", str(cfg), "--quiet", "--resume", "r1", cwd=tmp_path)
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    if name == "results.jsonl":
        assert done.returncode == 2 and "is not a regular file" in done.stderr, done.stderr
    else:  # no manifest to read: resumed with the command line's selection
        assert done.returncode == 0, done.stderr
