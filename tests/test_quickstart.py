"""docs/QUICKSTART.md, followed literally: the harness installed apart from the bot (its own
virtualenv, no extras, from this tree), each bot in a project of its own whose ``.venv`` holds
only the packages the page's install line names, then init, the page's bot code, check, run.

Every virtualenv is made by the page's own line. By default they are kept under
``~/.cache/harness-tests/quickstart/`` (``HARNESS_QUICKSTART_CACHE``), keyed by the line that
made them (the harness's also by pyproject.toml's dependencies), so a rerun
only reinstalls the harness from this tree (its line runs again, a few seconds) and reuses the
bots' venvs: the fast variant CI runs. ``HARNESS_QUICKSTART_FRESH=1`` makes every venv anew in
the test's temporary folder with a pip cache of its own, as on a fresh machine (bench/quickstart_fresh
runs it so and times it; bench/RESULTS.md, issue 25).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = ROOT / "docs" / "QUICKSTART.md"
FRESH = os.environ.get("HARNESS_QUICKSTART_FRESH") == "1"
CACHE = Path(os.environ.get("HARNESS_QUICKSTART_CACHE") or Path.home() / ".cache" / "harness-tests" / "quickstart")
#: The page's placeholders for where the harness's source is and where its venv goes.
SOURCE_PLACEHOLDER = "/path/to/harness"
HARNESS_VENV = ("~/.venvs/harness", "$HOME/.venvs/harness")
HEAVY = ("torch", "sentence_transformers", "transformers")


def doc_files() -> dict[str, tuple[str, str]]:
    """Code blocks whose info string names a file and a framework
    (```python file=mybot.py framework=aiogram): framework -> (file name, code)."""
    text = QUICKSTART.read_text()
    return {m.group(2): (m.group(1), m.group(3))
            for m in re.finditer(r"```\w+ file=(\S+) framework=(\S+)\n(.*?)```", text, re.S)}


def bash_blocks() -> list[tuple[dict[str, str], list[str]]]:
    """The page's bash blocks: the attributes of their info string (```bash framework=aiogram)
    and their lines, comments and blank lines left out."""
    out = []
    for m in re.finditer(r"```bash([^\n]*)\n(.*?)```", QUICKSTART.read_text(), re.S):
        attrs = dict(a.split("=", 1) for a in m.group(1).split() if "=" in a)
        lines = [line.split(" #")[0].strip() for line in m.group(2).splitlines()]
        out.append((attrs, [line for line in lines if line and not line.startswith("#")]))
    return out


def tagged(key: str, value: str) -> list[str]:
    found = [lines for attrs, lines in bash_blocks() if attrs.get(key) == value]
    assert len(found) == 1, f"QUICKSTART.md needs one ```bash {key}={value} block, found {len(found)}"
    return found[0]


def doc_harness_commands() -> list[list[str]]:
    """The `harness ...` lines of the page's bash blocks, in order."""
    return [line.split()[1:] for _attrs, lines in bash_blocks() for line in lines if line.startswith("harness ")]


def harness(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """This tree's harness on the test's own interpreter (which has every framework); the bot is
    started with that interpreter too (HARNESS_TARGET_COMMAND), not the scaffold's .venv."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HARNESS_TARGET_COMMAND": '["python", "mybot.py"]'}
    return subprocess.run([sys.executable, "-m", "harness.cli", *args], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=300)


# --- the page's installs, as written --------------------------------------------------------

def _python_dir() -> Path:
    """The folder of this interpreter's own base Python (3.11), first on the page's PATH: its
    ``python3 -m venv`` makes a venv of that Python, never of the test's venv (and the venvs'
    ``python`` links point at it, so a kept venv outlives the test's temporary folder)."""
    base = Path(getattr(sys, "_base_executable", sys.executable)).resolve()
    assert (base.parent / "python3").exists(), f"no python3 beside {base}"
    return base.parent


def shell_env(pip_cache: Path) -> dict[str, str]:
    """The environment of the page's lines: none of the test's venv or source tree."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PATH"] = f"{_python_dir()}{os.pathsep}{env.get('PATH', '')}"
    env["PIP_CACHE_DIR"] = str(pip_cache)
    env["PIP_PROGRESS_BAR"] = "off"
    return env


def sh(line: str, cwd: Path, env: dict[str, str], timeout: int = 900) -> subprocess.CompletedProcess:
    done = subprocess.run(["bash", "-c", f"set -euo pipefail; {line}"], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)
    assert done.returncode == 0, f"$ {line}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def _key(*parts: str) -> str:
    return hashlib.sha256("\0".join((*parts, sys.version)).encode()).hexdigest()[:16]


@contextlib.contextmanager
def _locked(path: Path):
    """One test process at a time builds or uses a cached venv (several worktrees share the cache)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _cached(folder: Path, build) -> None:
    """``build()`` into ``folder`` unless a finished build is there (its ``.ok``)."""
    if (folder / ".ok").is_file():
        return
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    build()
    (folder / ".ok").write_text("")


@pytest.fixture(scope="module")
def installs(tmp_path_factory):
    """Where the page's lines run: (harness venv, pip cache, a scratch folder, fresh?)."""
    tmp = tmp_path_factory.mktemp("quickstart-installs")
    pip_cache = tmp / "pip-cache" if FRESH else CACHE / "pip"
    env = shell_env(pip_cache)
    lines = tagged("install", "harness")
    install = next(line for line in lines if SOURCE_PLACEHOLDER in line)
    export = next(line for line in lines if line.startswith("export PATH="))
    deps = json.dumps(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"])
    # one kept venv for every checkout (CI clones anew): the line's pip half reinstalls this tree's
    # harness into it, and the lock, held while this module's tests use it, keeps two checkouts apart
    venv = tmp / "harness-venv" if FRESH else CACHE / f"harness-{_key(install, deps)}"
    with _locked(CACHE / ".lock-harness") if not FRESH else contextlib.nullcontext():
        line = install.replace(SOURCE_PLACEHOLDER, str(ROOT))
        for spelled in HARNESS_VENV:
            line = line.replace(spelled, str(venv))
        shutil.rmtree(ROOT / "build", ignore_errors=True)  # setuptools' in-tree build folder: no stale files
        make, _, pip = line.partition(" && ")
        assert make.startswith("python3 -m venv ") and pip, line
        if (venv / ".ok").is_file():  # a kept venv: the line's pip half reinstalls the harness from this tree
            sh(pip, tmp, env)
        else:
            shutil.rmtree(venv, ignore_errors=True)
            sh(line, tmp, env)
            (venv / ".ok").write_text("")
        export_line = export
        for spelled in HARNESS_VENV:
            export_line = export_line.replace(spelled, str(venv))
        yield {"venv": venv, "env": env, "export": export_line, "tmp": tmp}


def bot_venv(framework: str, project: Path, installs) -> None:
    """The framework's install line, run in the project (fresh) or in a kept folder whose
    ``.venv`` the project links to."""
    (line,) = tagged("framework", framework)
    assert line.startswith("python3 -m venv .venv && .venv/bin/pip install "), line
    if FRESH:
        sh(line, project, installs["env"])
        return
    folder = CACHE / f"bot-{_key(line)}"
    with _locked(CACHE / f".lock-{folder.name}"):
        _cached(folder, lambda: sh(line, folder, installs["env"]))
    (project / ".venv").symlink_to(folder / ".venv", target_is_directory=True)


def page_harness(args: list[str], cwd: Path, installs) -> subprocess.CompletedProcess:
    """``harness ARGS`` as the page runs it: after its ``export PATH=...`` line, nothing of this tree on the path."""
    import shlex

    return subprocess.run(["bash", "-c", f"{installs['export']}; harness {shlex.join(args)}"], cwd=cwd,
                          env=installs["env"], capture_output=True, text=True, timeout=600)


def _finds(python: Path, module: str) -> bool:
    done = subprocess.run([str(python), "-c", f"import importlib.util, sys; "
                                              f"sys.exit(0 if importlib.util.find_spec({module!r}) else 1)"],
                          capture_output=True, cwd="/", env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    return done.returncode == 0


def test_the_harness_installs_apart_without_torch(installs):
    python = installs["venv"] / "bin" / "python"
    for module in HEAVY:
        assert not _finds(python, module), f"the core install pulled {module}"
    version = page_harness(["--version"], installs["tmp"], installs)
    assert version.returncode == 0 and version.stdout.strip() == \
        f"harness {tomllib.loads((ROOT / 'pyproject.toml').read_text())['project']['version']}", version


@pytest.mark.parametrize("framework, channel", [("python-telegram-bot", "telegram"), ("aiogram", "telegram"),
                                                ("pywa", "whatsapp")])
def test_quickstart_literally(tmp_path, installs, framework, channel):
    """Each framework's block as a complete file, in a project of its own with the bot's own
    .venv, through the page's commands run by the harness installed apart."""
    commands = doc_harness_commands()
    assert [c[0] for c in commands] == ["init", "check", "run"], commands
    files = doc_files()
    assert set(files) == {"python-telegram-bot", "aiogram", "pywa"}
    project = tmp_path / "my-bot-project"
    project.mkdir()
    bot_venv(framework, project, installs)
    bot_python = project / ".venv" / "bin" / "python"
    assert not _finds(bot_python, "harness"), "the bot's venv holds the harness"
    for args in commands:
        if args[0] == "init":
            assert args[1:] == [".", "--channel", "telegram"]  # the page's line; its comment names whatsapp
            done = page_harness(["init", ".", "--channel", channel], project, installs)
            assert done.returncode == 0, done.stderr
            assert 'command = [".venv/bin/python", "mybot.py"]' in (project / "harness.toml").read_text()
            name, code = files[framework]  # step 3: the page's bot code
            (project / name).write_text(code)
        else:
            done = page_harness(args, project, installs)
            assert done.returncode == 0, f"harness {' '.join(args)}\n{done.stdout}\n{done.stderr}"
    runs = [p for p in (project / "reports").iterdir() if p.is_dir()]
    assert len(runs) == 1
    results = json.loads((runs[0] / "results.json").read_text())
    layers = {c["layer"] for c in results["cases"]}
    assert layers == {"robustness", "multiturn"}
    assert results["summary"]["passed"] == results["summary"]["planned"] >= 4
    long_paste = next(c for c in results["cases"] if c["id"] == "my-long-paste")
    assert "10000 words" in long_paste["turns"][0]["replies"][0]["text"]


def test_init_refuses_to_overwrite(tmp_path):
    assert harness(["init", str(tmp_path)], tmp_path).returncode == 0
    again = harness(["init", str(tmp_path)], tmp_path)
    assert again.returncode == 2 and "refusing to overwrite" in again.stderr


def test_check_on_broken_case_file_exits_2_and_runs_nothing(tmp_path):
    assert harness(["init", str(tmp_path)], tmp_path).returncode == 0
    bad = tmp_path / "fixtures" / "robustness" / "examples.yaml"
    bad.write_text(bad.read_text().replace('reply: {not_regex: "(?i)traceback|internal error"}',
                                           'reply: {not_regex: "(?i)traceback|(internal error"}'))
    done = harness(["check"], tmp_path)
    assert done.returncode == 2
    assert "examples.yaml" in done.stderr and "my-gibberish" in done.stderr and "invalid regular expression" in done.stderr
    assert not (tmp_path / "reports").exists()


def test_init_no_llm_leaves_out_what_assumes_a_model(tmp_path):
    """`harness init --no-llm`: no reasoning example, no document, no LLM gateway; the rest runs."""
    project = tmp_path / "menu-bot"
    project.mkdir()
    assert harness(["init", ".", "--no-llm"], project).returncode == 0
    assert not (project / "fixtures" / "reasoning").exists() and not (project / "fixtures" / "documents").exists()
    config = (project / "harness.toml").read_text()
    assert "llm_base_url" not in config and "llm_upstream" not in config
    assert "llm_calls" not in (project / "fixtures" / "cost" / "examples.yaml").read_text()
    assert "\n[robustness]\n" in config and \
        'variants = "none"' in config  # a menu bot's own words are not varied
    (project / "mybot.py").write_text(doc_files()["python-telegram-bot"][1])
    done = harness(["run"], project)
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads(next((project / "reports").glob("*/results.json")).read_text())
    assert {c["layer"] for c in results["cases"]} == {"robustness", "multiturn", "cost"}
    assert results["summary"]["passed"] == results["summary"]["planned"]
    assert not [c["id"] for c in results["cases"] if "--" in c["id"]]  # no variants derived
    with_llm = tmp_path / "llm-bot"
    with_llm.mkdir()
    assert harness(["init", "."], with_llm).returncode == 0
    assert (with_llm / "fixtures" / "reasoning" / "examples.yaml").is_file()


def test_the_llm_section_s_case_file_is_a_valid_suite(tmp_path):
    """QUICKSTART section 6: its case file loads and validates as written (issue 21)."""
    from harness.cases import load_cases

    text = QUICKSTART.read_text()
    section = text[text.index("## 6. A bot that calls an LLM"):text.index("## Troubleshooting")]
    yaml_block = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
    (tmp_path / "multiturn").mkdir()
    (tmp_path / "multiturn" / "shop.yaml").write_text(yaml_block)
    cases = load_cases(tmp_path, derive=False)
    assert [c.id for c in cases] == ["order-three", "order-after-rate-limit"]
    assert cases[0].turns[0].model and cases[0].turns[0].tools
