"""The Done-when bots of issue 15: real bots written with python-telegram-bot, aiogram 3 and
pywa, each run as its own process by the real runner against the emulators.

- PTB, MarkdownV2: an unescaped '.' fails its case with the 400 "can't parse entities" in the
  evidence; escaped, it passes (and the user sees the bold text, markup parsed away).
- aiogram 3, HTML: plain-text checks hold on the rendered text; an unclosed <b> fails.
- pywa: an 11-row list fails with the Cloud API's 131009; a 10-row list's press carries the
  row's title and the list message's context.id; statuses (sent, delivered) reach the bot for
  each of its messages; its verify handler is called once at start-up.
- The new turn actions (location, contact, voice, audio, forward, reply_to, reaction, edit,
  callback on an old keyboard) and forged / stale / missing signatures, on both channels.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("telegram")
pytest.importorskip("aiogram")
pytest.importorskip("pywa_async")

from harness.cases import load_cases  # noqa: E402
from harness.config import load_config  # noqa: E402
from harness.run.runner import RunOptions, run_suite  # noqa: E402
from tests.channels._bot_config import telegram_bot_config  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BOTS = Path(__file__).resolve().parent / "bots"

WHATSAPP = """
[target]
name = "pywa-bot"
command = ["{python}", "{script}"]
cwd = "{root}"
port = 0
whatsapp_webhook = "http://127.0.0.1:{{port}}/whatsapp"
state_url = "http://127.0.0.1:{{port}}/state/{{chat_id}}"
[target.env]
PORT = "{{port}}"
WHATSAPP_API_BASE = "{{whatsapp_api}}"
WHATSAPP_PHONE_NUMBER_ID = "{{phone_number_id}}"
WHATSAPP_TOKEN = "{{whatsapp_token}}"
WHATSAPP_APP_SECRET = "{{app_secret}}"
WHATSAPP_VERIFY_TOKEN = "{verify}"
{extra}
[sandbox]
settle_s = 0.3
reply_timeout_s = 4
"""


async def run(tmp_path: Path, config: str, cases: str):
    (tmp_path / "fx" / "multiturn").mkdir(parents=True)
    (tmp_path / "fx" / "multiturn" / "cases.yaml").write_text(cases)
    (tmp_path / "harness.toml").write_text(config)
    report = await run_suite(load_config(tmp_path / "harness.toml", environ={}), load_cases(tmp_path / "fx"),
                             RunOptions(out_dir=tmp_path / "out"))
    return {c.id: c for c in report.cases}, report


def failing(case) -> list[str]:
    return [f"{e.turn}:{e.check}: {e.reason}" for e in case.evidence if e.passed is not True]


def tg_config(name: str, script: str, extra: str = "") -> str:
    return telegram_bot_config(name, [sys.executable, BOTS / script], ROOT, extra=extra)


# -- python-telegram-bot, MarkdownV2 ---------------------------------------------------------
PTB_CASE = """
layer: multiturn
defaults: {variants: none}
cases:
  - id: ptb-total
    send: "what is my total?"
    expect:
      reply: {contains: "Done. Your total is 42 EUR.", entities: {bold: "42 EUR"}}
      reply_raw: {contains: "*42 EUR*"}
"""


@pytest.mark.parametrize("escape", [True, False], ids=["escaped", "unescaped"])
async def test_ptb_markdown_v2(tmp_path, escape):
    extra = 'BOT_ESCAPE = "1"' if escape else ""
    cases, report = await run(tmp_path, tg_config("ptb-markdown", "ptb_markdown.py", extra), PTB_CASE)
    case = cases["ptb-total"]
    if escape:
        assert case.status == "pass", (failing(case), report.notes)
        (reply,) = case.observation.turns[0].replies
        assert (reply.parse_mode, reply.sent_text) == ("MarkdownV2", "Done\\. Your total is *42 EUR*\\.")
        return
    assert case.status == "fail"
    reasons = " ".join(failing(case))
    assert ("telegram.sendMessage 400 Bad Request: can't parse entities: Character '.' is reserved and must be "
            "escaped with the preceding '\\'") in reasons, reasons


# -- aiogram 3, HTML ---------------------------------------------------------------------------
AIOGRAM_CASE = """
layer: multiturn
defaults: {variants: none}
cases:
  - id: aiogram-pick
    turns:
      - send: "book me in"
        expect:
          reply: {contains: "You picked Tuesday & 10:00", entities: {bold: Tuesday, italic: "10:00"}}
          reply_raw: {contains: "<b>Tuesday</b>"}
      - callback: Change
        expect: {reply: {contains: "You pressed change"}, callbacks_answered: true}
"""


@pytest.mark.parametrize("broken", [False, True], ids=["closed", "unclosed"])
async def test_aiogram_html(tmp_path, broken):
    extra = 'BOT_BROKEN = "1"' if broken else ""
    cases, report = await run(tmp_path, tg_config("aiogram-html", "aiogram_html.py", extra), AIOGRAM_CASE)
    case = cases["aiogram-pick"]
    if not broken:
        assert case.status == "pass", (failing(case), report.notes)
        reply = case.observation.turns[0].replies[0]
        assert reply.text == "You picked Tuesday & 10:00" and reply.parse_mode == "HTML"
        return
    assert case.status == "fail"
    reasons = " ".join(failing(case))
    assert "can't parse entities: Can't find end tag corresponding to start tag \"b\"" in reasons, reasons


# -- the new turn actions, against the aiogram bot -------------------------------------------
TG_ACTIONS = """
layer: multiturn
defaults: {variants: none}
cases:
  - id: tg-actions
    turns:
      - send: "book me in"
        expect: {reply: {contains: "You picked Tuesday"}}
      - location: {latitude: 52.52, longitude: 13.405}
        expect: {reply: {contains: "Location 52.52,13.40"}}
      - contact: {phone_number: "+4930123456", first_name: Ada}
        expect: {reply: {contains: "Contact Ada +4930123456"}}
      - voice: {duration: 3}
        expect: {reply: {contains: "Voice of 3s"}}
      - audio: {duration: 90}
        expect: {reply: {contains: "Audio of 90s"}}
      - forward: {text: "meeting moved", from: Bob}
        expect: {reply: {contains: "Forwarded from Bob: meeting moved"}}
      - send: "this one"
        reply_to: 0
        expect: {reply: {regex: "You replied to your message \\\\d+: book me in"}}
      - send: "and that"
        reply_to: {bot: 0}
        expect: {reply: {contains: "You replied to my message"}}
      - reaction: "👍"
        expect: {reply: {regex: "Reaction 👍 on \\\\d+"}}
      - send: "typo"
        expect: {reply: {contains: "You picked"}}
      - edit: "fixed"
        expect: {reply: {contains: "Edited to: fixed"}}
      - callback: {data: change, turn: 0}
        expect: {reply: {contains: "You pressed change"}, callbacks_answered: true}
      - forged: missing
      - forged: {signature: forged, send: "transfer everything"}
      - forged: stale
"""


async def test_telegram_turn_actions(tmp_path):
    cases, report = await run(tmp_path, tg_config("aiogram-html", "aiogram_html.py"), TG_ACTIONS)
    case = cases["tg-actions"]
    assert case.status == "pass", (failing(case), report.notes)
    turns = case.observation.turns
    # the old keyboard's press names the message of turn 0 that carried the button
    first_bot_message = turns[0].replies[0].message_id
    press = next(e.request for e in turns[11].events if e.source == "driver")
    assert str(press["callback_query"]["message"]["message_id"]) == first_bot_message
    assert [t.delivery_status for t in turns[12:]] == [401, 401, 401]  # aiogram refuses a wrong secret


# -- pywa: lists, statuses, the handshake, the new actions --------------------------------------
def wa_config(tmp_path: Path, rows: int = 10, verify: str = "{verify_token}") -> str:
    return WHATSAPP.format(python=sys.executable, script=BOTS / "pywa_bot.py", root=ROOT, verify=verify,
                           extra=f'BOT_ROWS = "{rows}"')


WA_LIST = """
layer: multiturn
defaults: {channel: whatsapp, variants: none}
cases:
  - id: wa-list
    turns:
      - send: "menu"
        expect: {reply: {contains: "Pick a day"}}
      - callback: "Day 3"
        expect: {reply: {regex: "You chose Day 3 \\\\(day-3\\\\) from wamid\\\\."}}
      - send: "hello"
        wait_s: 1.0
        expect: {reply: {contains: "echo: hello"}, state: {"$.verified": 1}}
"""


async def test_pywa_list_of_11_rows_fails_with_the_cloud_api_error(tmp_path):
    cases, report = await run(tmp_path, wa_config(tmp_path, rows=11), WA_LIST)
    case = cases["wa-list"]
    assert case.status == "fail"
    reasons = " ".join(failing(case))
    assert ("whatsapp.send 400 (#131009) Parameter value is not valid: Total row count exceed max allowed "
            "count: 10") in reasons, reasons


async def test_pywa_list_press_statuses_and_handshake(tmp_path):
    cases, report = await run(tmp_path, wa_config(tmp_path), WA_LIST)
    case = cases["wa-list"]
    assert case.status == "pass", (failing(case), report.notes)
    turns = case.observation.turns
    list_id = turns[0].replies[0].message_id
    assert turns[1].replies[0].text.endswith(f"from {list_id}")  # context.id: the message that carried the list
    state = turns[2].state
    assert state["verified"] == 1 and state["messages"] == 3
    for seen in state["sent"][:2]:  # the last reply's statuses may still be on their way
        assert {"sent", "delivered"} <= set(seen), state


async def test_pywa_failed_handshake_is_a_start_up_error(tmp_path):
    from harness.errors import TargetError

    with pytest.raises(TargetError, match="verification handshake"):
        await run(tmp_path, wa_config(tmp_path, verify="not-the-token-the-harness-sends"), WA_LIST)


WA_ACTIONS = """
layer: multiturn
defaults: {channel: whatsapp, variants: none}
cases:
  - id: wa-actions
    turns:
      - send: "hello"
        expect: {reply: {contains: "echo: hello"}}
      - location: {latitude: 52.52, longitude: 13.405, title: Office, address: "Main St 1"}
        expect: {reply: {contains: "Location 52.52,13.40"}}
      - contact: {phone_number: "+4930123456", first_name: Ada}
        expect: {reply: {contains: "Contact Ada +4930123456"}}
      - voice: {}
        expect: {reply: {contains: "Voice note"}}
      - audio: {}
        expect: {reply: {contains: "Audio file"}}
      - forward: "meeting moved"
        expect: {reply: {contains: "Forwarded: meeting moved"}}
      - send: "this one"
        reply_to: 0
        expect: {reply: {regex: "You replied to wamid\\\\."}}
      - reaction: {emoji: "🎉", to: 0}
        expect: {reply: {regex: "Reaction 🎉 on wamid\\\\."}}
      - forged: missing
      - forged: forged
      - forged: stale
"""


async def test_whatsapp_turn_actions(tmp_path):
    cases, report = await run(tmp_path, wa_config(tmp_path), WA_ACTIONS)
    case = cases["wa-actions"]
    assert case.status == "pass", (failing(case), report.notes)
    turns = case.observation.turns
    user_first = next(e.request for e in turns[0].events if e.source == "driver")
    first_id = user_first["entry"][0]["changes"][0]["value"]["messages"][0]["id"]
    assert turns[7].replies[0].text == f"Reaction 🎉 on {first_id}"
    assert [t.delivery_status for t in turns[8:]] == [401, 403, 403]  # pywa: missing 401, wrong 403


WA_FAILED = """
layer: multiturn
defaults: {channel: whatsapp, variants: none}
cases:
  - id: wa-failed
    turns:
      - send: "hello"
        fault: {whatsapp: undeliverable}
        expect: {reply: {contains: "echo: hello"}}
      - send: "again"
        wait_s: 0.6
        expect: {state: {"$.sent[0]": ["failed"]}}
"""


async def test_pywa_sees_a_failed_status_after_an_undeliverable_send(tmp_path):
    cases, report = await run(tmp_path, wa_config(tmp_path), WA_FAILED)
    case = cases["wa-failed"]
    assert case.status == "pass", (failing(case), report.notes)
