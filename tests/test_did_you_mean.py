"""Misspelt keys and checks get "did you mean" (issue 25), not a list of 60 names."""

from __future__ import annotations

import pytest

from harness.cases import load_cases
from harness.errors import FixtureErrors


@pytest.mark.parametrize("expect, says", [
    ("contians: [x]", "did you mean 'reply.contains'?"),
    ("replys: {min: 1}", "'replies'"),
    ("reply: {contians: x}", "did you mean 'reply.contains'?"),
    ("tool_called: [a]", "did you mean 'tools_called'?"),
    ("lantency_ms: {max: 5}", "did you mean 'latency_ms'?"),
    # a grouped check written as one key: its fix says how to write it (it was "did you mean
    # 'reply.regex'?" for reply.regex, naming the very key it refused)
    ('reply.regex: "x"', "write it as reply: {regex: ...}"),
    ("replies.min: 1", "write it as replies: {min: ...}"),
])
def test_a_misspelt_check_gets_the_nearest_name(tmp_path, expect, says):
    (tmp_path / "robustness").mkdir()
    (tmp_path / "robustness" / "a.yaml").write_text(
        f"layer: robustness\ncases:\n  - id: a\n    send: hi\n    expect: {{{expect}}}\n")
    with pytest.raises(FixtureErrors) as err:
        load_cases(tmp_path, derive=False)
    text = str(err.value)
    assert says in text, text
    assert text.count(",") < 10  # not the whole list of checks


def test_a_misspelt_case_key_gets_the_nearest_key(tmp_path):
    (tmp_path / "robustness").mkdir()
    (tmp_path / "robustness" / "a.yaml").write_text(
        "layer: robustness\ncases:\n  - id: a\n    send: hi\n    expects: {replies: {min: 1}}\n")
    with pytest.raises(FixtureErrors) as err:
        load_cases(tmp_path, derive=False)
    assert "did you mean 'expect'?" in str(err.value)


def test_nothing_close_gets_no_guess(tmp_path):
    (tmp_path / "robustness").mkdir()
    (tmp_path / "robustness" / "a.yaml").write_text(
        "layer: robustness\ncases:\n  - id: a\n    send: hi\n    expect: {zzzqqq: 1}\n")
    with pytest.raises(FixtureErrors) as err:
        load_cases(tmp_path, derive=False)
    assert "did you mean" not in str(err.value) and "docs/CASES.md" in str(err.value)


def test_a_refusal_before_the_cases_are_read_still_names_the_case(tmp_path):
    """Issue 24: a file the YAML loader refuses (a key written twice) names the case it sits in."""
    (tmp_path / "robustness").mkdir()
    (tmp_path / "robustness" / "a.yaml").write_text(
        "layer: robustness\ncases:\n  - id: first\n    send: hi\n    expect: {replies: {min: 1}}\n"
        "  - id: second-one\n    send: hi\n    expect: {replies: {min: 1}}\n    expect: {replies: {min: 2}}\n")
    with pytest.raises(FixtureErrors) as err:
        load_cases(tmp_path, derive=False)
    assert "case 'second-one'" in str(err.value) and "written twice" in str(err.value)
