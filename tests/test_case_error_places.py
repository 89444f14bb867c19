"""Case-file errors a newcomer can act on (issue 25 item 8): at the line of the bad value, with
no "turn 0" on a single-turn case, and an unknown key's fix pointing at docs/CASES.md."""

from __future__ import annotations

import pytest

from harness.cases import load_cases
from harness.errors import FixtureErrors


def _errors(tmp_path, text: str) -> list:
    (tmp_path / "robustness").mkdir(exist_ok=True)
    (tmp_path / "robustness" / "a.yaml").write_text(text)
    with pytest.raises(FixtureErrors) as err:
        load_cases(tmp_path, derive=False)
    return list(err.value.errors)


SINGLE = """layer: robustness
cases:
  - id: a
    send: hi
    expect:
      reply: {contains: x}
      replies: {exactly: 1}
"""

GROUPED = """layer: robustness
cases:
  - id: a
    send: hi
    expect:
      replies: {min: 1}
      reply:
        contains: x
        regex: 5
"""

MULTI = """layer: robustness
cases:
  - id: a
    turns:
      - send: hi
      - send: again
        expect:
          replies: {exactly: 1}
"""


def test_a_bad_replies_value_is_reported_at_its_own_line(tmp_path):
    (e,) = _errors(tmp_path, SINGLE)
    assert "replies" in e.message and "exactly" in e.message
    assert e.line == 7  # `replies: {exactly: 1}`, not `expect:` (5) nor its first check (6)


def test_a_bad_grouped_check_is_reported_at_its_own_line(tmp_path):
    (e,) = _errors(tmp_path, GROUPED)
    assert "reply.regex" in e.message and e.line == 9


def test_a_single_turn_case_says_no_turn_0(tmp_path):
    (e,) = _errors(tmp_path, SINGLE)
    assert "turn 0" not in e.render() and e.message.startswith(("replies ", "expect.replies"))


def test_a_multi_turn_case_still_names_the_turn(tmp_path):
    (e,) = _errors(tmp_path, MULTI)
    assert e.message.startswith(("turn 1: replies ", "turns[1].expect.replies")) and e.line == 8


def test_an_unknown_case_key_points_at_the_case_reference(tmp_path):
    (e,) = _errors(tmp_path, "layer: robustness\ncases:\n  - id: a\n    send: hi\n    expect: {replies: {min: 1}}\n"
                             "    colour: red\n")
    assert "docs/CASES.md" in e.fix and "CONFIG.md" not in e.fix


def test_an_unknown_config_key_points_at_the_config_reference(tmp_path):
    from harness.config import load_config
    from harness.errors import ConfigError

    (tmp_path / "harness.toml").write_text("[target]\nnmae = 'x'\n")
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path / "harness.toml")
    assert "docs/CONFIG.md" in err.value.render() and "CASES.md" not in err.value.render()


def test_a_case_whose_checks_were_refused_is_not_also_said_to_have_none(tmp_path):
    errors = _errors(tmp_path, MULTI)
    assert not any("has no checks" in e.message for e in errors)
    bare = _errors(tmp_path, "layer: robustness\ncases:\n  - id: a\n    send: hi\n")
    assert any("has no checks" in e.message for e in bare)  # its right twin: no check at all is still refused
