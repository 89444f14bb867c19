"""`harness check` and `harness run` agree, and bad paths are clear exit-2 errors (issue 24): case
files are never silently not loaded, a selection matching nothing is an error for both, --out on
a kernel file system or the root, a missing --golden, a file given to `report`, --repeat past
any sense."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ops"))

from ops_support import echo_cases, make_project  # noqa: E402

from harness import cli  # noqa: E402
from harness.cases import load_cases  # noqa: E402
from harness.errors import FixtureErrors  # noqa: E402

CASE = 'layer: robustness\ncases:\n  - id: {id}\n    send: "hi"\n    expect: {{replies: {{min: 1}}}}\n'


def test_upper_case_suffixes_and_sub_folders_are_loaded(tmp_path):
    (tmp_path / "robustness" / "more" / "deeper").mkdir(parents=True)
    (tmp_path / "robustness" / "A.YAML").write_text(CASE.format(id="upper"))
    (tmp_path / "robustness" / "more" / "b.Yml").write_text(CASE.format(id="nested"))
    (tmp_path / "robustness" / "more" / "deeper" / "c.yaml").write_text(CASE.format(id="deeper"))
    (tmp_path / "robustness" / ".hidden.yaml").write_text("not: [a case")  # editors' swap files stay out
    assert sorted(c.id for c in load_cases(tmp_path, derive=False)) == ["deeper", "nested", "upper"]


@pytest.mark.parametrize("where, says", [
    ("robustnes/a.yaml", "rename it to robustness/"),
    ("multi-turn/a.yaml", "rename it to multiturn/"),
    ("stuff/a.yaml", "case files go in one of"),
    ("a.yaml", "is not loaded as cases"),
])
def test_yaml_where_no_layer_looks_is_reported(tmp_path, where, says):
    (tmp_path / "robustness").mkdir()
    (tmp_path / "robustness" / "ok.yaml").write_text(CASE.format(id="ok"))
    path = tmp_path / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(CASE.format(id="lost"))
    with pytest.raises(FixtureErrors) as err:
        load_cases(tmp_path, derive=False)
    assert says in str(err.value) and where.split("/")[0] in str(err.value)


def test_a_symlinked_sub_folder_is_loaded_and_a_link_loop_is_walked_once(tmp_path):
    import os

    (tmp_path / "robustness").mkdir()
    (tmp_path / "robustness" / "ok.yaml").write_text(CASE.format(id="ok"))
    elsewhere = tmp_path.parent / (tmp_path.name + "-shared")
    elsewhere.mkdir()
    (elsewhere / "shared.yaml").write_text(CASE.format(id="shared"))
    os.symlink(elsewhere, tmp_path / "robustness" / "shared")  # skipped silently before
    os.symlink("..", tmp_path / "robustness" / "up")  # a loop back to the fixtures folder
    os.symlink(".", tmp_path / "robustness" / "self")
    assert sorted(c.id for c in load_cases(tmp_path, derive=False)) == ["ok", "shared"]


def test_documents_and_the_quarantine_file_are_not_case_files(tmp_path):
    (tmp_path / "robustness").mkdir()
    (tmp_path / "documents").mkdir()
    (tmp_path / "robustness" / "ok.yaml").write_text(CASE.format(id="ok"))
    (tmp_path / "documents" / "data.yaml").write_text("just: data")
    (tmp_path / "quarantine.yaml").write_text("quarantine: []\n")
    assert [c.id for c in load_cases(tmp_path, derive=False)] == ["ok"]


@pytest.mark.parametrize("argv, says", [
    (["--case", "nomatch*"], "no case matches the selection (--case nomatch*)"),
    (["--fixtures", "/etc"], "/etc holds no case folder"),
    (["--golden", "/nonexistent-golden"], "--golden /nonexistent-golden: no such folder"),
    (["--out", "/proc/harness-x"], "kernel's /proc file system"),
    (["--out", "/"], "is the root of the file system"),
    (["--out", "/tmp/" + "a" * 300], "File name too long"),
    (["--fixtures", "/tmp/" + "a" * 300], "File name too long"),
    (["--golden", "/tmp/" + "a" * 300], "File name too long"),
    (["--config", "/tmp/" + "a" * 300], "File name too long"),
])
@pytest.mark.parametrize("command", ["check", "run"])
def test_check_and_run_refuse_the_same_inputs(tmp_path, capsys, command, argv, says):
    cfg = make_project(tmp_path, cases=echo_cases(1))
    if command == "check" and argv[0] == "--out":
        pytest.skip("check writes nothing")
    assert cli.main([command, "--config", str(cfg), *argv, *(["--quiet"] if command == "run" else [])]) == 2
    err = capsys.readouterr().err
    assert says in err and "fix:" in err, err
    assert "internal error" not in err


@pytest.mark.parametrize("argv, says", [
    (["run", "--repeat", "100000000000000000000"], "is not between 1 and 1000"),
    (["report", "/etc/hostname"], "is a file, not a run folder"),
    (["report", "/nonexistent-run"], "/nonexistent-run: no such folder"),
    (["run", "-k", "not " * 5000 + "echo"], "the limit is 4,000"),
    (["run", "-k", "(" * 990 + "echo" + ")" * 990], "is not an expression of words"),
    (["report", "/tmp/" + "a" * 300], "cannot be read: File name too long"),
    (["init", "/proc/harness-init"], "kernel's /proc file system"),
    (["schema", "--out", "/sys/harness-x"], "kernel's /sys file system"),
    (["judges", "--out", "/proc/harness-x"], "kernel's /proc file system"),
    (["judges", "--out", "/"], "is the root of the file system"),
    (["judges", "--fixtures", "/nonexistent-fixtures"], "--fixtures /nonexistent-fixtures: no such folder"),
])
def test_other_bad_paths_and_numbers_are_clear(tmp_path, capsys, monkeypatch, argv, says):
    monkeypatch.chdir(tmp_path)
    make_project(tmp_path, cases=echo_cases(1))
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert says in err and "internal error" not in err, err


@pytest.mark.parametrize("spec, module, says, code", [
    ("os:system", "", "is a builtin_function_or_method, not a factory", 2),
    ("collections:OrderedDict", "", "is a type, not a factory", 2),
    ("os:path", "", "is a module, not a factory", 2),
    ("evilmod:make_app", "import sys\nsys.exit(0)\n", "importing 'evilmod' called sys.exit(0)", 2),
    ("evilmod:make_app", "x = (\n", "importing 'evilmod' raised SyntaxError", 2),
    ("evilmod:make_app", "raise ValueError('at import')\n", "raised ValueError: at import", 2),
    ("json:loads", "", "raised TypeError", 4),  # only calling it tells: a start-up failure, run alone
    ("evilmod:make_app", "def make_app(env):\n    import sys; sys.exit(0)\n", "make_app(env) called sys.exit(0)", 4),
])
@pytest.mark.parametrize("command", ["check", "run"])
def test_inprocess_naming_any_callable_is_refused_never_exit_0(tmp_path, capsys, monkeypatch, command, spec, module,
                                                               says, code):
    """Issue 24: an in-process agent whose module or factory calls sys.exit(0) made `harness run`
    exit 0 with no results (a green CI job); `check` said 0 to every name that is no factory."""
    if module:
        (tmp_path / "evilmod.py").write_text(module)
        monkeypatch.syspath_prepend(str(tmp_path))
        monkeypatch.delitem(sys.modules, "evilmod", raising=False)
    cfg = make_project(tmp_path, cases=echo_cases(1))
    cfg.write_text(cfg.read_text().replace('inprocess = "tests.agents.echo:make_app"', f'inprocess = "{spec}"'))
    got = cli.main([command, "--config", str(cfg), *(["--quiet"] if command == "run" else [])])
    err = capsys.readouterr().err
    if code == 4 and command == "check":
        assert got == 0, err  # check does not call the factory
        return
    assert got == code and says in err and "internal error" not in err, (got, err)


@pytest.mark.parametrize("body", [
    "async def handle(channel, update):\n    import sys; sys.exit(0)\n",
    "from aiohttp import web\ndef make_app(env):\n    async def h(request):\n        import sys; sys.exit(0)\n"
    "    app = web.Application(); app.router.add_post('/telegram', h); return app\n",
])
def test_an_in_process_handler_that_calls_sys_exit_fails_its_cases(tmp_path, capsys, monkeypatch, body):
    (tmp_path / "evilmod.py").write_text(body)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "evilmod", raising=False)
    cfg = make_project(tmp_path, cases=echo_cases(1))
    attr = "handle" if "async def handle" in body else "make_app"
    cfg.write_text(cfg.read_text().replace('inprocess = "tests.agents.echo:make_app"', f'inprocess = "evilmod:{attr}"'))
    assert cli.main(["run", "--config", str(cfg), "--quiet", "--run-id", "r1"]) == 1
    assert "internal error" not in capsys.readouterr().err
    assert (tmp_path / "reports" / "r1" / "results.json").is_file()


@pytest.mark.parametrize("edit, says", [
    (lambda t: t + 'HUGE = "' + "a" * 200_000 + '"\n', "HUGE is over 128 KiB"),
    (lambda t: t.replace('inprocess = "tests.agents.echo:make_app"',
                         'command = ["python", "-c", "pass", "' + "a" * 200_000 + '"]\nport = 0'),
     "a command argument ('aaaa"),
])
@pytest.mark.parametrize("command", ["check", "run"])
def test_what_execve_cannot_take_is_refused_by_check_and_run(tmp_path, capsys, command, edit, says):
    cfg = make_project(tmp_path, cases=echo_cases(1))
    cfg.write_text(edit(cfg.read_text()))
    assert cli.main([command, "--config", str(cfg), *(["--quiet"] if command == "run" else [])]) == 2
    err = capsys.readouterr().err
    assert says in err and "internal error" not in err and len(err) < 2000, err[:3000]


@pytest.mark.parametrize("command", ["check", "run"])
def test_a_suite_golden_that_names_a_file_is_refused_by_both(tmp_path, capsys, command):
    cfg = make_project(tmp_path, cases=echo_cases(1), extra='[suite]\ngolden = "harness.toml"\n')
    assert cli.main([command, "--config", str(cfg), *(["--quiet"] if command == "run" else [])]) == 2
    err = capsys.readouterr().err
    assert "[suite] golden" in err and "is not a folder" in err and "fix:" in err, err


def test_a_quarantine_entry_naming_no_case_is_said_by_check(tmp_path, capsys):
    cfg = make_project(tmp_path, cases=echo_cases(1))
    (tmp_path / "fixtures" / "quarantine.yaml").write_text(
        "quarantine:\n  - id: renamed-long-ago\n    reason: flaky\n    owner: ana\n    expires: 2099-01-01\n")
    assert cli.main(["check", "--config", str(cfg)]) == 0
    assert "'renamed-long-ago' names no case of the suite" in capsys.readouterr().out
