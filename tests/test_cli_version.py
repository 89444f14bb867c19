"""`harness --version`: the package's version from its metadata (pyproject.toml's `version`)."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def test_version_prints_the_package_version_and_exits_0():
    done = subprocess.run([sys.executable, "-m", "harness.cli", "--version"], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"harness {VERSION}"


def test_the_version_comes_from_the_metadata_and_a_source_tree_reads_pyproject(monkeypatch):
    import importlib.metadata

    import harness

    monkeypatch.setattr(harness, "_version", None)
    monkeypatch.setattr(importlib.metadata, "version", lambda name: "9.9.9" if name == "harness" else "0")
    assert harness.version() == "9.9.9" and harness.__version__ == "9.9.9"

    def not_installed(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(harness, "_version", None)
    monkeypatch.setattr(importlib.metadata, "version", not_installed)
    assert harness.version() == VERSION  # pyproject.toml beside the package
