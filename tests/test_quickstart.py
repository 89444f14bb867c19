"""docs/QUICKSTART.md, followed literally: init, the page's bot code, check, run."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = ROOT / "docs" / "QUICKSTART.md"


def doc_files() -> dict[str, tuple[str, str]]:
    """Code blocks whose info string names a file and a framework
    (```python file=mybot.py framework=aiogram): framework -> (file name, code)."""
    text = QUICKSTART.read_text()
    return {m.group(2): (m.group(1), m.group(3))
            for m in re.finditer(r"```\w+ file=(\S+) framework=(\S+)\n(.*?)```", text, re.S)}


def doc_harness_commands() -> list[list[str]]:
    """The `harness ...` lines of the page's bash blocks, in order."""
    text = QUICKSTART.read_text()
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        for line in block.splitlines():
            line = line.split("#")[0].strip()
            if line.startswith("harness "):
                commands.append(line.split()[1:])
    return commands


def harness(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "harness.cli", *args], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=300)


@pytest.mark.parametrize("framework, channel", [("python-telegram-bot", "telegram"), ("aiogram", "telegram"),
                                                ("pywa", "whatsapp")])
def test_quickstart_literally(tmp_path, framework, channel):
    """Each framework's block as a complete file, in a project of its own, through the page's commands."""
    commands = doc_harness_commands()
    assert [c[0] for c in commands] == ["init", "check", "run"], commands
    files = doc_files()
    assert set(files) == {"python-telegram-bot", "aiogram", "pywa"}
    project = tmp_path / "my-bot-project"
    project.mkdir()
    for args in commands:
        if args[0] == "init":
            assert args[1:] == [".", "--channel", "telegram"]  # the page's line; its comment names whatsapp
            done = harness(["init", ".", "--channel", channel], project)
            assert done.returncode == 0, done.stderr
            name, code = files[framework]  # step 3: the page's bot code
            (project / name).write_text(code)
        else:
            done = harness(args, project)
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
