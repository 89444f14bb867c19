"""YAML oddities in case, quarantine and golden files (issue 24, round 3, session 29): each bad
input through the real CLI (`harness check` and `harness run`) is a clear exit 2 naming the file,
the line and the case, never a crash after the run started; its well-formed twin still runs."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ops"))

from ops_support import echo_cases, make_project  # noqa: E402

from harness import cli  # noqa: E402

HEAD = "layer: robustness\ncases:\n"
EXPECT = "    expect: {replies: {min: 1}}\n"


def _main(command: str, cfg: Path, capsys) -> tuple[int, str]:
    capsys.readouterr()
    code = cli.main([command, "--config", str(cfg), *(["--quiet"] if command == "run" else [])])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.mark.parametrize("bad, good, says", [
    # a lone surrogate (YAML's \ud800 escape): the run crashed writing the update or results.json (exit 70)
    ('  - id: sur\n    send: "hi \\ud800"\n' + EXPECT, '  - id: sur\n    send: "hi \\ud83d\\ude00"\n' + EXPECT,
     "lone surrogate (U+D800"),
    ('  - id: sur\n    tags: ["\\udfff"]\n    send: hi\n' + EXPECT, '  - id: sur\n    tags: ["\\u00e9"]\n    send: hi\n'
     + EXPECT, "lone surrogate (U+DFFF"),
    ('  - id: sur\n    send: hi\n    expect: {reply: {contains: "\\ud800"}}\n',
     '  - id: sur\n    send: hi\n    expect: {reply: {contains: "hi"}}\n', "lone surrogate"),
    # a date that is none: PyYAML's ValueError escaped as exit 70
    ("  - id: sur\n    send: 2024-13-45\n" + EXPECT, '  - id: sur\n    send: "2024-13-45"\n' + EXPECT,
     "'2024-13-45' reads as a date but is none"),
    # the loader's own line mark, written by the user, was dropped silently
    ("  - id: sur\n    send: hi\n    __line__: 3\n" + EXPECT, "  - id: sur\n    send: hi\n" + EXPECT,
     "'__line__' is the harness's own"),
    # equivalent with no earlier turn to compare with: check said 0, the run judged it unavailable or failed
    ("  - id: sur\n    turns:\n      - send: hi\n      - send: ho\n        expect: {equivalent: {to: 1}}\n",
     "  - id: sur\n    turns:\n      - send: hi\n      - send: ho\n        expect: {equivalent: {to: 0}}\n",
     "equivalent.to 1 is not an earlier turn (0 to 0)"),
])
@pytest.mark.parametrize("command", ["check", "run"])
def test_case_file_oddities_are_refused_by_check_and_run(tmp_path, capsys, command, bad, good, says):
    cfg = make_project(tmp_path, cases=HEAD + bad)
    code, text = _main(command, cfg, capsys)
    assert code == 2 and says in text and "case 'sur'" in text and "fix:" in text, text
    assert "internal error" not in text and "Traceback" not in text
    (tmp_path / "fixtures" / "robustness" / "echo.yaml").write_text(HEAD + good)
    code, text = _main(command, cfg, capsys)
    assert code in (0, 1) and "internal error" not in text, text  # the twin loads (echo may fail `equivalent`)


@pytest.mark.parametrize("text, case", [
    # the case's id written after the faulty line: the previous case was named
    (HEAD + "  - id: first\n    send: hi\n" + EXPECT + "  - send: hi\n    send: ho\n    id: second\n" + EXPECT,
     "case 'second'"),
    # a flow-style case: no case was named
    (HEAD + "  - {id: flowy, send: hi, send: ho, expect: {replies: {min: 1}}}\n", "case 'flowy'"),
    (HEAD + "  - id: first\n    send: hi\n" + EXPECT + "  - id: second\n    send: hi\n    send: ho\n" + EXPECT,
     "case 'second'"),
])
def test_a_refusal_before_the_cases_are_read_names_the_right_case(tmp_path, capsys, text, case):
    cfg = make_project(tmp_path, cases=text)
    code, out = _main("check", cfg, capsys)
    assert code == 2 and case in out and "written twice" in out, out
    assert "case 'first'" not in out


def test_a_quarantine_entry_with_a_date_that_is_none_is_refused_with_its_line(tmp_path, capsys):
    cfg = make_project(tmp_path, cases=echo_cases(1))
    quarantine = tmp_path / "fixtures" / "quarantine.yaml"
    quarantine.write_text("quarantine:\n  - id: echo-0\n    reason: flaky\n    owner: ana\n    expires: 2099-13-45\n")
    for command in ("check", "run"):
        code, out = _main(command, cfg, capsys)  # exit 70 (ValueError: month must be in 1..12) before
        assert code == 2 and "quarantine.yaml:5" in out and "reads as a date but is none" in out, out
    quarantine.write_text("quarantine:\n  - id: echo-0\n    reason: flaky\n    owner: ana\n    expires: 5\n")
    code, out = _main("check", cfg, capsys)
    assert code == 2 and "quarantine.yaml:2" in out and "case 'echo-0'" in out, out  # the entry's line now
    quarantine.write_text("quarantine:\n  - id: echo-0\n    reason: flaky\n    owner: ana\n    expires: 2099-12-31\n")
    code, out = _main("run", cfg, capsys)
    assert code == 0, out


def test_a_quoted_cases_key_still_names_the_case(tmp_path, capsys):
    text = 'layer: robustness\n"cases":\n  - id: second\n    send: hi\n    send: ho\n' + EXPECT
    cfg = make_project(tmp_path, cases=text)
    code, out = _main("check", cfg, capsys)
    assert code == 2 and "case 'second'" in out and "written twice" in out, out


def test_a_list_item_of_the_wrong_type_is_reported_at_its_own_line(tmp_path, capsys):
    text = HEAD + "  - id: first\n    send: hi\n" + EXPECT + "  - just a string\n"
    cfg = make_project(tmp_path, cases=text)
    code, out = _main("check", cfg, capsys)
    assert code == 2 and "echo.yaml:6: case '#2': must be a table" in out, out  # line 2 (cases:) before
    text = HEAD + "  - id: first\n    tags:\n      - ok\n      - [nested]\n    send: hi\n" + EXPECT
    (tmp_path / "fixtures" / "robustness" / "echo.yaml").write_text(text)
    code, out = _main("check", cfg, capsys)
    assert code == 2 and "echo.yaml:6: case 'first'" in out and "tags" in out, out
    (tmp_path / "fixtures" / "robustness" / "echo.yaml").write_text(text.replace("[nested]", "nested"))
    assert _main("check", cfg, capsys)[0] == 0


@pytest.mark.parametrize("name", ["QUARANTINE.yaml", "quarantine.yml", "Quarantine.YAML"])
def test_a_quarantine_file_under_another_spelling_is_said_not_skipped(tmp_path, capsys, name):
    cfg = make_project(tmp_path, cases=echo_cases(1))
    (tmp_path / "fixtures" / name).write_text("quarantine:\n  - {id: echo-0, reason: r, owner: o}\n")
    code, out = _main("check", cfg, capsys)
    assert code == 2 and f"{name} is not read" in out and "rename it to quarantine.yaml" in out, out
    (tmp_path / "fixtures" / name).rename(tmp_path / "fixtures" / "quarantine.yaml")
    assert _main("check", cfg, capsys)[0] == 0


@pytest.mark.parametrize("bad", ["conv--typos", "-lead", "trail-"])
def test_a_case_id_with_a_double_leading_or_trailing_dash_says_why(tmp_path, capsys, bad):
    cfg = make_project(tmp_path, cases=HEAD + f"  - id: {bad}\n    send: hi\n" + EXPECT)
    code, out = _main("check", cfg, capsys)
    assert code == 2 and "no leading, trailing or double dash" in out and "[a-z0-9-]+" not in out, out


def test_a_layer_setting_from_the_environment_names_the_variable(tmp_path, capsys, monkeypatch):
    cfg = make_project(tmp_path, cases=echo_cases(1))
    (tmp_path / "fixtures" / "multiturn").mkdir()
    (tmp_path / "fixtures" / "multiturn" / "m.yaml").write_text(
        "layer: multiturn\ncases:\n  - id: conv\n    turns:\n      - send: hi\n        expect: {replies: {min: 1}}\n")
    monkeypatch.setenv("HARNESS_ROBUSTNESS_VARIANTS", "bogus")
    code, out = _main("check", cfg, capsys)
    assert code == 2 and "from the environment variable HARNESS_ROBUSTNESS_VARIANTS" in out, out  # harness.toml before
    assert "set HARNESS_ROBUSTNESS_VARIANTS to a valid value" in out
    monkeypatch.setenv("HARNESS_ROBUSTNESS_VARIANTS", "typos")
    assert _main("check", cfg, capsys)[0] == 0


def test_a_file_where_a_layer_folder_belongs_is_said(tmp_path, capsys):
    cfg = make_project(tmp_path, cases=echo_cases(1))
    (tmp_path / "fixtures" / "cost").write_text(echo_cases(1).replace("robustness", "cost"))
    code, out = _main("check", cfg, capsys)
    assert code == 2 and "cost is not a folder, so the cost layer's cases would not be loaded" in out, out
    (tmp_path / "fixtures" / "cost").unlink()
    (tmp_path / "fixtures" / "cost").mkdir()
    assert _main("check", cfg, capsys)[0] == 0
