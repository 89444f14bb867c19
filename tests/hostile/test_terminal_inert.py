"""What the agent printed reaches the user's terminal inert (issue 24): a target's log tail on
exit 4 and any error that quotes it carry no screen clears, window titles, OSC 8 links or
terminal queries."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from harness.redact import inert

HOSTILE = ("\x1b[2J\x1b[H"            # clear the screen, cursor home
           "\x1b]0;pwned\x07"          # window title
           "\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\"   # OSC 8 link
           "\x1b[6n"                   # cursor position query (the terminal answers on stdin)
           "\x9b31m\x1bP+q544e\x1b\\"  # C1 CSI, DCS query
           "bell\x07 back\x08space\r")


@pytest.mark.parametrize("text, kept", [
    (HOSTILE, "clickbell backspace"),
    ("plain text\n\twith tabs", "plain text\n\twith tabs"),
    ("Zoë Müller 🙂 ✓", "Zoë Müller 🙂 ✓"),
    ("a\x00b\x7fc", "abc"),
    ("ends with a lone escape \x1b", "ends with a lone escape "),
])
def test_inert_strips_every_control_sequence(text, kept):
    assert inert(text) == kept


def test_the_log_tail_on_exit_4_is_inert(tmp_path: Path):
    bot = tmp_path / "bot.py"
    bot.write_text(f"import sys\nsys.stdout.write({HOSTILE!r} + '\\nstarting\\n')\nsys.stdout.flush()\nsys.exit(3)\n")
    (tmp_path / "fixtures" / "robustness").mkdir(parents=True)
    (tmp_path / "fixtures" / "robustness" / "a.yaml").write_text(
        "layer: robustness\ncases:\n  - id: a\n    send: hi\n    expect: {replies: {min: 1}}\n")
    (tmp_path / "harness.toml").write_text(textwrap.dedent(f"""
        [target]
        name = "hostile-log"
        command = ["python", "{bot}"]
        port = 0
        telegram_webhook = "http://127.0.0.1:{{port}}/telegram"
        ready_url = "http://127.0.0.1:{{port}}/healthz"
        ready_timeout_s = 5
    """))
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-m", "harness.cli", "run", "--out", str(tmp_path / "reports")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root), "HOME": str(tmp_path)})
    assert done.returncode == 4, done.stderr
    assert "starting" in done.stderr  # the tail is still shown
    for seq in ("\x1b", "\x9b", "\x07", "\x08"):
        assert seq not in done.stderr + done.stdout, repr(done.stderr)


def test_a_reply_full_of_control_sequences_reaches_no_terminal(tmp_path: Path):
    """The bot's own replies (quoted by -v, summary.md, junit.xml, `report --format md`, diff and
    history) carry no control sequence to the terminal either."""
    from tests.hostile._project import bot_config, write_cases

    write_cases(tmp_path, "a.yaml", 'layer: robustness\ncases:\n  - id: one\n    send: "hi"\n'
                                    '    expect: {reply: {contains: "nope"}}\n')
    bot_config(tmp_path, "escapes")
    root = Path(__file__).resolve().parents[2]
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root), "HOME": str(tmp_path)}

    def harness(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "harness.cli", *args], cwd=tmp_path, capture_output=True,
                              text=True, timeout=120, env=env)

    done = harness("run", "-v", "--run-id", "r1")
    assert done.returncode == 1, done.stderr  # the reply lacks "nope": a real failure
    run = tmp_path / "reports" / "r1"
    assert "pwned" in (run / "results.json").read_text()  # kept as evidence (JSON-escaped)
    shown = [done.stdout + done.stderr, (run / "summary.md").read_text(), (run / "junit.xml").read_text(),
             harness("report", str(run), "--format", "md").stdout, harness("history").stdout, harness("diff").stdout]
    for text in shown:
        for seq in ("\x1b", "\x9b", "\x07"):
            assert seq not in text, repr(text[:2000])


def test_paths_and_reasons_the_console_shows_are_inert(tmp_path: Path):
    """A project folder whose name holds a window-title sequence (a crafted repository cloned in
    CI), and a check reason quoting a reply with control sequences: nothing reaches the terminal."""
    from harness.report.format import one_line

    assert one_line("got 'hi \x1b]0;pwned\x07 \x1b[2J there'", 200) == "got 'hi there'"
    root = Path(__file__).resolve().parents[2]
    project = tmp_path / "esc\x1b]0;pwned\x07dir"
    sys.path.insert(0, str(root / "tests" / "ops"))
    from ops_support import echo_cases, make_project

    make_project(project, cases=echo_cases(1))
    for args in (["check"], ["run"]):
        done = subprocess.run([sys.executable, "-m", "harness.cli", *args], cwd=project, capture_output=True,
                              text=True, timeout=120, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root),
                                                           "HOME": str(tmp_path)})
        assert done.returncode == 0, done.stderr
        assert "\x1b" not in done.stdout + done.stderr and "\x07" not in done.stdout + done.stderr, done.stdout


def test_report_html_holds_no_control_sequence_of_a_target_name_or_a_reply(tmp_path: Path):
    """Issue 24, session 29: a [target] name with a window-title and screen-clear sequence reached
    report.html raw (its <title> and heading); a page holds no control character, and the name
    itself stays readable (the twin)."""
    root = Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(root / "tests" / "hostile"))
    from tests.hostile._project import HELLO, bot_config, harness_cli, write_cases

    write_cases(tmp_path, "h.yaml", HELLO)
    cfg = bot_config(tmp_path, "escapes", name="nightly-bot",
                     tables="[sandbox]\nsettle_s = 0.2\nreply_timeout_s = 5\n")
    cfg.write_text(cfg.read_text().replace('name = "nightly-bot"', 'name = "nightly\\u001b]0;pwned\\u0007\\u001b[2J-bot"'))
    done = harness_cli("run", "--out", tmp_path / "runs", cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    page = next((tmp_path / "runs").glob("*/report.html")).read_text(encoding="utf-8")
    assert "\x1b" not in page and "\x07" not in page and "\x9b" not in page
    assert "nightly-bot" in page and "echo: hello" in page
