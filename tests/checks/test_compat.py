"""Upgrade warnings (issue 21): a reply.* pattern that spells Telegram markup is named by
``harness check`` with the fix (reply_raw.*), and a failing reply.* check whose raw text would
pass says so in its reason. Each input that must warn has a twin that must not."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from harness.checks import REGISTRY
from harness.checks.compat import markup_in, suite_warnings
from harness.types import Case, CheckSpec, Observation, Reply, Turn, TurnObservation

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("value, regex, what", [
    ("*Tuesday*", False, "*bold*"),
    ("**Tuesday**", False, "*bold*"),
    ("You picked <b>Tuesday</b>", False, "an HTML tag"),
    ("_Tuesday_", False, "_italic_"),
    ("run `pip install`", False, "`code`"),
    ("[docs](https://example.com)", False, "a [text](url) link"),
    ("~gone~", False, "~strikethrough~"),
    ("||secret||", False, "||spoiler||"),
    ("Booked\\!", False, "a MarkdownV2 escape"),
    (r"\*Tuesday\*", True, "*bold*"),
    (r"(?i)<b>tuesday</b>", True, "an HTML tag"),
    (r"\[docs\]\(https://example\.com\)", True, "a [text](url) link"),
    # the right twins: no markup
    ("Tuesday", False, None),
    ("my_var_name", False, None),
    ("2*3*4", False, None),
    ("see example.com", False, None),
    (r"(?i)invalid.*(url|link)", True, None),
    (r"^Hi! What's your name\?$", True, None),
    (r"a*b*c", True, None),
    (r"[A-Z](foo)", True, None),
    (r"\d+ items_left", True, None),
])
def test_markup_in(value, regex, what):
    assert markup_in(value, regex=regex) == what


def _case(channel="telegram", **checks):
    return Case(id="c", layer="multiturn", channel=channel, file="fixtures/multiturn/a.yaml",
                turns=(Turn(send="hi", checks=tuple(CheckSpec(k.replace("__", "."), v) for k, v in checks.items())),))


def test_suite_warnings_name_the_case_the_turn_and_the_fix():
    (line,) = suite_warnings([_case(reply__contains=["Booked", "*Tuesday*"])])
    assert "fixtures/multiturn/a.yaml: case 'c': turn 0: reply.contains '*Tuesday*' holds markup (*bold*)" in line
    assert "use reply_raw.contains" in line and "rendered text" in line
    assert "use reply_raw.regex" in suite_warnings([_case(reply__regex=r"<b>Tuesday</b>")])[0]
    (negative,) = suite_warnings([_case(reply__not_contains=["<b>"])])
    assert "holds whenever Telegram parses that markup: add reply_raw.not_contains" in negative
    assert suite_warnings([_case(reply__not_contains=["<b>"], reply_raw__not_contains=["<b>"])]) == []
    # twins: no markup, reply_raw already, or WhatsApp (its text is not parsed)
    assert suite_warnings([_case(reply__contains="Tuesday"), _case(reply_raw__contains="*Tuesday*"),
                           _case("whatsapp", reply__contains="*Tuesday*")]) == []


T0 = 1_000.0


def _obs(sent: str, shown: str) -> Observation:
    reply = Reply("telegram", "1", shown, T0 + 1, "sendMessage", raw_text=sent)
    t = TurnObservation(index=0, sent_at=T0, delivery_status=200, delivery_error="", replies=(reply,), events=(),
                        settled_after_s=1)
    return Observation(case_id="c", channel="telegram", chat_id="1", turns=(t,), started_at=T0, finished_at=T0 + 2)


@pytest.mark.parametrize("name, params, hinted", [
    ("reply.contains", "<b>Tuesday</b>", "matches: use reply_raw.contains"),
    ("reply.regex", r"\*Tuesday\*", None),  # the raw text is HTML here: no match either, no hint
    ("reply.regex", r"<b>Tuesday</b>", "matches: use reply_raw.regex"),
    ("reply.contains", "Wednesday", None),  # fails on both texts: no hint
])
def test_a_failing_reply_check_says_when_the_raw_text_would_pass(name, params, hinted):
    e = REGISTRY[name].fn(_case(), _obs("You picked <b>Tuesday</b>", "You picked Tuesday"), 0, params)
    assert e.passed is False
    assert (hinted in e.reason) if hinted else ("reply_raw" not in e.reason), e.reason


def test_a_passing_check_and_an_unformatted_reply_get_no_hint():
    e = REGISTRY["reply.contains"].fn(_case(), _obs("You picked <b>Tuesday</b>", "You picked Tuesday"), 0, "Tuesday")
    assert e.passed is True and "reply_raw" not in e.reason
    plain = REGISTRY["reply.contains"].fn(_case(), _obs("You picked Tuesday", "You picked Tuesday"), 0, "Friday")
    assert plain.passed is False and "reply_raw" not in plain.reason


def test_harness_check_warns_and_exits_0(tmp_path):
    (tmp_path / "fixtures" / "multiturn").mkdir(parents=True)
    (tmp_path / "fixtures" / "multiturn" / "old.yaml").write_text(textwrap.dedent("""
        layer: multiturn
        defaults: {channel: telegram}
        cases:
          - id: old-suite
            send: "book me in"
            expect: {reply: {contains: "You picked <b>Tuesday</b>"}}
        """))
    (tmp_path / "harness.toml").write_text('[target]\nname = "old"\n')
    done = subprocess.run([sys.executable, "-m", "harness.cli", "check"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    warning = next(line for line in done.stdout.splitlines() if "old-suite" in line and line.startswith("warning:"))
    assert "reply.contains 'You picked <b>Tuesday</b>' holds markup (an HTML tag)" in warning
    assert "use reply_raw.contains" in warning
