"""Issue 13: every bad harness.toml, environment override or output folder ends as exit 2 with
one clear message, never a traceback, a hang or an acceptance (generator: input_mutants.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hostile._project import ROOT, harness_cli, timed_main, write_mutant
from tests.hostile.input_mutants import BASE_CONFIG, Mutant, config_mutants

MUTANTS = config_mutants()
CASE = "layer: robustness\ncases:\n  - id: a\n    send: hi\n    expect: {replies: {min: 1}}\n"


def make_project(root: Path, m: Mutant) -> tuple[Path, list[str]]:
    """A project folder with the mutant as its config; the command line to check it."""
    root.mkdir(parents=True)
    (root / "fixtures" / "robustness").mkdir(parents=True)
    (root / "fixtures" / "robustness" / "a.yaml").write_text(CASE)
    cfg = root / "harness.toml"
    write_mutant(cfg, m, nowhere=root / "nowhere.toml")
    if m.setup == "lock-dir":
        (root / "reports" / ".harness.lock").mkdir(parents=True)
    argv = ["check", "--config", str(cfg), "--fixtures", str(root / "fixtures")]
    if m.args:
        (root / "a-file").write_text("not a folder\n")
        argv = ["run", *argv[1:], *[str(root / "a-file") if a == "@file" else a for a in m.args]]
    return cfg, argv


def run_cli(argv: list[str], capsys, monkeypatch, env: dict) -> tuple[int, str, str, float]:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return timed_main(argv, capsys)


def test_there_are_enough_mutants_and_they_are_seeded():
    assert len(MUTANTS) >= 100
    assert [m.name for m in config_mutants()] == [m.name for m in MUTANTS]


def test_the_unmutated_config_passes(tmp_path, capsys, monkeypatch):
    """The control: each mutant fails because of its mutation, not because the base is bad."""
    _, argv = make_project(tmp_path / "p", Mutant("base", text=BASE_CONFIG))
    code, out, err, _ = run_cli(argv, capsys, monkeypatch, {})
    assert code == 0, err
    assert "1 cases would run" in out


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_bad_config_is_refused_clearly(tmp_path, mutant, capsys, monkeypatch):
    _, argv = make_project(tmp_path / "p", mutant)
    code, out, err, seconds = run_cli(argv, capsys, monkeypatch, mutant.env)
    assert code == 2, f"accepted or wrong exit ({code}): {out[-400:]} {err[-400:]}"
    assert "Traceback" not in out + err and "internal error" not in err
    if "harness run: error: argument" not in err:  # argparse's own usage message is clear already
        assert err.startswith("harness: ")
        assert "fix:" in err, err
    if mutant.kind != "text" or not (mutant.args or mutant.setup):
        assert "harness.toml" in err, err  # names the file
    for name in mutant.env:
        assert name in err  # names the environment variable that set the bad value
    assert seconds < 5, f"took {seconds:.1f}s"


@pytest.mark.parametrize("name", ["target.port=70000", "config-bytes-0", "toml-deep-arrays", "storage.url=\"s3://Bad_Bucket/x\""])
def test_real_command_line_prints_no_traceback(tmp_path, name):
    mutant = next(m for m in MUTANTS if m.name == name)
    _, argv = make_project(tmp_path / "p", mutant)
    proc = harness_cli(*argv, cwd=ROOT, timeout=60)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert "harness.toml" in proc.stderr
