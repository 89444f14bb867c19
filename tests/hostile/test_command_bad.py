"""A ``[target].command`` that cannot start is named, with the reason, by `check` and `run` alike
(exit 2), not found out as the target's exit after `check` said 0 (issue 24): a #! line naming
no interpreter, a file that is neither a program nor a script, ``python`` given a script that is
not there. A target said to be already running (no command) that nothing answers for is exit 4
before any case, not a night of failed cases (exit 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness import cli

CASE = 'layer: robustness\ncases:\n  - id: a\n    send: hi\n    expect: {replies: {min: 1}}\n'


def _project(tmp_path: Path, command: list[str] | None, extra: str = "") -> Path:
    (tmp_path / "fixtures" / "robustness").mkdir(parents=True)
    (tmp_path / "fixtures" / "robustness" / "a.yaml").write_text(CASE)
    lines = ["[target]", 'telegram_webhook = "http://127.0.0.1:{port}/telegram"', "port = 0", "ready_timeout_s = 2"]
    if command is not None:
        lines.insert(1, f"command = {json.dumps(command)}")
    cfg = tmp_path / "harness.toml"
    cfg.write_text("\n".join(lines) + "\n" + extra)
    return cfg


def _script(tmp_path: Path, text: bytes) -> str:
    path = tmp_path / "bot"
    path.write_bytes(text)
    path.chmod(0o755)
    return str(path)


@pytest.mark.parametrize("make, says", [
    (lambda d: [_script(d, b"#!/nonexistent/interp\necho hi\n")], "its #! line names /nonexistent/interp"),
    (lambda d: [_script(d, b"not a program at all")], "is neither a program nor a script with a #! line"),
    (lambda d: [_script(d, b"#!\n")], "its #! line names no interpreter"),
    (lambda d: ["python", "missing_bot.py", "--port", "{port}"], "the script 'missing_bot.py' does not exist"),
    (lambda d: ["python", "-c", "pass", "@cwd=nowhere"], "[target].cwd"),  # a cwd that does not exist
    (lambda d: ["python", str(d)], None),  # a folder as the script: python's own error, exit 4 (no traceback)
])
@pytest.mark.parametrize("command", ["check", "run"])
def test_a_command_that_cannot_start_is_named_by_check_and_run(tmp_path, capsys, command, make, says):
    argv = make(tmp_path)
    extra = ""
    if argv[-1].startswith("@cwd="):
        extra, argv = f'cwd = "{argv.pop()[5:]}"\n', argv
    cfg = _project(tmp_path, argv)
    if extra:
        cfg.write_text(cfg.read_text().replace("port = 0\n", "port = 0\n" + extra))
    code = cli.main([command, "--config", str(cfg), *(["--quiet"] if command == "run" else [])])
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err, err
    if says is None:
        assert code == (0 if command == "check" else 4), err
        return
    assert code == 2 and says in err and "fix:" in err, (code, err)


def test_a_target_said_to_be_running_that_nothing_answers_for_is_exit_4(tmp_path, capsys):
    cfg = _project(tmp_path, None)
    cfg.write_text(cfg.read_text().replace("{port}", "1").replace("port = 0\n", ""))
    code = cli.main(["run", "--config", str(cfg), "--quiet", "--run-id", "r1"])
    err = capsys.readouterr().err
    assert code == 4, err
    assert "has no command, so the target must be running already" in err and "fix:" in err
    assert not (tmp_path / "reports" / "r1" / "results.json").exists()  # no night of failed cases
