"""The case-file keys of issue 15's turn actions: what loads, and what is a fixture error naming
the file, case, turn and fix (exit 2, nothing run)."""

from __future__ import annotations

import pytest

from harness.cases import load_cases
from harness.errors import FixtureErrors

GOOD = """
layer: multiturn
defaults: {variants: none}
cases:
  - id: actions
    turns:
      - send: "hi"
        expect: {replies: {min: 1}}
      - location: {latitude: 52.52, longitude: 13.405, title: Office, address: "Main St 1"}
      - contact: {phone_number: "+49 30 123456", first_name: Ada, last_name: Lovelace}
      - voice: {duration: 3}
      - audio:
      - reaction: "👍"
      - reaction: {emoji: "🎉", to: 0}
      - forward: {text: "look {docs}/a.pdf", from: Bob}
      - send: "this one"
        reply_to: 0
      - send: "that one"
        reply_to: {bot: 1}
      - send: "the last"
        reply_to: bot
      - callback: {data: "yes", turn: 0}
      - callback: "no"
      - forged: missing
      - forged: {signature: stale, send: "pay"}
        expect: {webhook_2xx: true}
"""


def _load(tmp_path, text):
    (tmp_path / "multiturn").mkdir(exist_ok=True)
    (tmp_path / "multiturn" / "a.yaml").write_text(text)
    return load_cases(tmp_path, derive=False)


def test_every_action_loads(tmp_path):
    (case,) = _load(tmp_path, GOOD)
    kinds = [t.kind for t in case.turns]
    assert kinds == ["text", "location", "contact", "voice", "audio", "reaction", "reaction", "forward", "text",
                     "text", "text", "callback", "callback", "forged", "forged"]
    t = case.turns
    assert t[1].options == {"latitude": 52.52, "longitude": 13.405, "title": "Office", "address": "Main St 1"}
    assert t[5].options == {"emoji": "👍"} and t[6].options == {"emoji": "🎉", "to": 0}
    assert (t[7].send, t[7].options) == ("look {docs}/a.pdf", {"from": "Bob"})
    assert t[8].options == {"reply_to": 0} and t[9].options == {"reply_to": {"bot": 1}}
    assert (t[11].send, t[11].options) == ("yes", {"turn": 0}) and (t[12].send, t[12].options) == ("no", {})
    assert (t[13].send, t[13].options) == ("hello", {"signature": "missing"})
    # a forged turn expects no reply unless the case says otherwise
    assert [(c.name, c.params) for c in t[13].checks] == [("replies", {"exact": 0})]
    assert {c.name for c in t[14].checks} == {"webhook_2xx", "replies"}
    # a Telegram button press must be answered (answerCallbackQuery) unless the case says otherwise
    assert [(c.name, c.params) for c in t[12].checks] == [("callbacks_answered", True)]


@pytest.mark.parametrize("turn,message", [
    ("location: {latitude: 100, longitude: 0}", "latitude must be -90..90"),
    ("location: {latitude: 1}", "location: missing longitude"),
    ("location: {latitude: 1, longitude: 2, city: x}", "unknown key(s) ['city']"),
    ("contact: {phone_number: call-me, first_name: A}", "is not a phone number"),
    ("voice: {duration: 0}", "duration must be a positive number"),
    ("reaction: {emoji: x, to: 3}", "to must be bot"),
    ("forged: bogus", "signature must be one of forged, stale, missing"),
    ("forward: {from: Bob}", "forward: missing text"),
    ("callback: {data: x, turn: 1}", "turn must be an earlier turn's index"),
    ("callback: {turn: 0}", "callback: missing data"),
    ("send: x\n        reply_to: 1", "reply_to must be bot"),
    ("send: x\n        reply_to: {bot: 5}", "reply_to must be bot"),
    ("edit: x\n        reply_to: 0", "reply_to goes with send"),
    ("forward: \"{nope}\"", "unknown placeholder {nope}"),
])
def test_bad_actions_are_fixture_errors(tmp_path, turn, message):
    text = ("layer: multiturn\ndefaults: {variants: none}\ncases:\n  - id: bad\n    turns:\n"
            "      - send: hi\n        expect: {replies: {min: 1}}\n      - " + turn + "\n")
    with pytest.raises(FixtureErrors) as info:
        _load(tmp_path, text)
    text = str(info.value)
    assert message in text and "case 'bad'" in text and "a.yaml" in text, text
