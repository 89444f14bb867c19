"""Issue 13: every mutated case file ends as exit 2 with one clear message, never a traceback,
a hang or an acceptance (generator: tests/hostile/input_mutants.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main
from tests.hostile._project import ROOT, harness_cli, timed_main
from tests.hostile._project import write_mutant as put_mutant
from tests.hostile.input_mutants import BASE_CASES, Mutant, case_mutants

MUTANTS = case_mutants()


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("hostile-cases")
    (root / "harness.toml").write_text('[target]\nname = "hostile"\n[sandbox]\ndocs_dir = "docs"\n')
    (root / "docs").mkdir()
    (root / "docs" / "paper.pdf").write_bytes(b"%PDF-1.4\n")
    return root


def write_mutant(fixtures: Path, m: Mutant) -> Path:
    folder = fixtures / "robustness"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "mutant.yaml"
    if m.kind == "dir":
        path.mkdir()
        (path / "inside.yaml").write_text(BASE_CASES)
    else:
        put_mutant(path, m, nowhere=folder / "nowhere.yaml")
    return path


def check(project: Path, fixtures: Path, capsys) -> tuple[int, str, str, float]:
    return timed_main(["check", "--config", str(project / "harness.toml"), "--fixtures", str(fixtures)], capsys)


def test_there_are_enough_mutants_and_they_are_seeded():
    assert len(MUTANTS) >= 150
    assert [m.name for m in case_mutants()] == [m.name for m in MUTANTS]


def test_the_unmutated_file_passes(project, capsys):
    """The control: the mutants fail because of their mutation, not because the base is bad."""
    write_mutant(project / "fx-base", Mutant("base", text=BASE_CASES))
    code, out, err, _ = check(project, project / "fx-base", capsys)
    assert code == 0, err
    assert "2 cases would run" in out


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_mutated_case_file_is_refused_clearly(project, mutant, capsys):
    fixtures = project / f"fx-{MUTANTS.index(mutant)}"
    write_mutant(fixtures, mutant)
    code, out, err, seconds = check(project, fixtures, capsys)
    assert code == 2, f"accepted or wrong exit ({code}): {out[-400:]} {err[-400:]}"
    assert "Traceback" not in out + err and "internal error" not in err
    assert "mutant.yaml" in err, err  # names the file
    assert err.startswith("harness: ")
    assert seconds < 5, f"took {seconds:.1f}s"


SUBPROCESS = ["bytes-0", "alias-bomb-9", "brackets-20000", "folder-named-yaml", "swap-send-"]


@pytest.mark.parametrize("prefix", SUBPROCESS)
def test_real_command_line_prints_no_traceback(project, prefix):
    mutant = next(m for m in MUTANTS if m.name.startswith(prefix))
    fixtures = project / f"fx-sub-{prefix}"
    write_mutant(fixtures, mutant)
    proc = harness_cli("check", "--config", project / "harness.toml", "--fixtures", fixtures, cwd=ROOT, timeout=60)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert "mutant.yaml" in proc.stderr


GOLDEN = "case: base-one\nanswers:\n  - {text: 'a summary', author: human, approved: 2026-11-30}\n"
QUARANTINE = "quarantine:\n  - {id: base-one, reason: flaky, owner: me, expires: 2099-12-31}\n"
OTHER_FILES = [  # (which file, mutant): the goldens and the quarantine list go through the same loader
    ("golden", Mutant("golden-bytes", kind="bytes", data=GOLDEN.encode() + b"\xff\n")),
    ("golden", Mutant("golden-bomb", text=GOLDEN + "x: &a [1,1,1,1,1,1,1,1,1,1]\n" + "".join(
        f"x{i}: &a{i} [{', '.join(['*a' if i == 0 else f'*a{i - 1}'] * 10)}]\n" for i in range(7)))),
    ("golden", Mutant("golden-duplicate", text=GOLDEN + "case: base-two\n")),
    ("golden", Mutant("golden-folder", kind="dir")),
    ("golden", Mutant("golden-loop", kind="loop")),
    ("quarantine", Mutant("quarantine-duplicate", text=QUARANTINE + "quarantine: []\n")),
    ("quarantine", Mutant("quarantine-deep", text="quarantine: " + "[" * 5000 + "]" * 5000 + "\n")),
    ("quarantine", Mutant("quarantine-bytes", kind="bytes", data=b"quarantine: [\xfe]\n")),
]


@pytest.mark.parametrize("which,mutant", OTHER_FILES, ids=[m.name for _, m in OTHER_FILES])
def test_mutated_golden_and_quarantine_files_are_refused(project, which, mutant, capsys):
    base = project / f"other-{mutant.name}"
    write_mutant(base / "fx", Mutant("base", text=BASE_CASES))
    golden = base / "golden"
    golden.mkdir()
    (golden / "VERSION").write_text("1\n")
    target = golden / "base-one.yaml" if which == "golden" else base / "fx" / "quarantine.yaml"
    put_mutant(target, mutant)
    code, _out, err, seconds = timed_main(["check", "--config", str(project / "harness.toml"), "--fixtures",
                                           str(base / "fx"), "--golden", str(golden)], capsys)
    assert code == 2, err
    assert "Traceback" not in err and "internal error" not in err
    assert target.name in err and "fix:" in err
    assert seconds < 5


def test_unmutated_golden_and_quarantine_pass(project, capsys):
    base = project / "other-control"
    write_mutant(base / "fx", Mutant("base", text=BASE_CASES))
    (base / "fx" / "quarantine.yaml").write_text(QUARANTINE)
    golden = base / "golden"
    golden.mkdir()
    (golden / "VERSION").write_text("1\n")
    (golden / "base-one.yaml").write_text(GOLDEN)
    code = main(["check", "--config", str(project / "harness.toml"), "--fixtures", str(base / "fx"),
                 "--golden", str(golden)])
    assert code == 0, capsys.readouterr().err
