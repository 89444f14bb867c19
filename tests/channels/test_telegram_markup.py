"""Telegram's parse_mode parsers (MarkdownV2, Markdown, HTML): what the user sees, and TDLib's refusals.

Each row is a text a bot might send; the expected rendering and entities, or the exact
message the Bot API puts after "Bad Request: can't parse entities: ". Through the emulator,
python-telegram-bot and aiogram raise their own BadRequest types with that text.
"""

from __future__ import annotations

import aiohttp
import pytest

from harness.channels.telegram import BotApiEmulator
from harness.channels.telegram_markup import ParseError, parse, utf16_len
from harness.sandbox.server import listen
from harness.types import Event

OK = [
    # (mode, text, rendered, entities as (type, offset, length[, extra]))
    ("MarkdownV2", "Done\\. Your total is *42 EUR*\\.", "Done. Your total is 42 EUR.", [("bold", 20, 6)]),
    ("MarkdownV2", "_it_ __under__ ~gone~ ||secret|| `a.b`", "it under gone secret a.b",
     [("italic", 0, 2), ("underline", 3, 5), ("strikethrough", 9, 4), ("spoiler", 14, 6), ("code", 21, 3)]),
    ("MarkdownV2", "[docs](https://example.com/a\\)b) \\(x\\)", "docs (x)",
     [("text_link", 0, 4, {"url": "https://example.com/a)b"})]),
    ("MarkdownV2", "```python\nprint(1)\n```", "print(1)\n", [("pre", 0, 9, {"language": "python"})]),
    ("MarkdownV2", "🎉 *bold*", "🎉 bold", [("bold", 3, 4)]),  # the emoji counts 2 UTF-16 units
    ("MarkdownV2", ">quoted\n>two\nplain", "quoted\ntwo\nplain", [("blockquote", 0, 10)]),
    ("Markdown", "*bold* _it_ `code` [l](https://a.io) 3.5-1=2.5!", "bold it code l 3.5-1=2.5!",
     [("bold", 0, 4), ("italic", 5, 2), ("code", 8, 4), ("text_link", 13, 1, {"url": "https://a.io"})]),
    ("HTML", "You picked <b>Tuesday</b> &amp; <i>10:00</i> &lt;3", "You picked Tuesday & 10:00 <3",
     [("bold", 11, 7), ("italic", 21, 5)]),
    ("HTML", '<a href="https://x.org/?a=1&amp;b=2">link</a> <tg-spoiler>s</tg-spoiler>', "link s",
     [("text_link", 0, 4, {"url": "https://x.org/?a=1&b=2"}), ("spoiler", 5, 1)]),
    ("HTML", '<pre><code class="language-py">x = 1</code></pre>', "x = 1", [("pre", 0, 5, {"language": "py"})]),
    ("HTML", "a &unknown; b &#128512;", "a &unknown; b 😀", []),
    ("HTML", "<B>caps</B> <strong>s</strong>", "caps s", [("bold", 0, 4), ("bold", 5, 1)]),
    (None, "*not parsed* <b>", "*not parsed* <b>", []),
]

ERRORS = [
    ("MarkdownV2", "Done. Thanks", "Character '.' is reserved and must be escaped with the preceding '\\'"),
    ("MarkdownV2", "well-known", "Character '-' is reserved and must be escaped with the preceding '\\'"),
    ("MarkdownV2", "call me (maybe)", "Character '(' is reserved and must be escaped with the preceding '\\'"),
    ("MarkdownV2", "x *bold", "Can't find end of Bold entity at byte offset 2"),
    ("MarkdownV2", "é _it", "Can't find end of Italic entity at byte offset 3"),  # bytes, not characters
    ("MarkdownV2", "[a](https://x.org", "Can't find end of a URL at byte offset 4"),
    ("Markdown", "snake_case name", "Can't find end of the entity starting at byte offset 5"),
    ("HTML", "You picked <b>Tuesday", 'Can\'t find end tag corresponding to start tag "b"'),
    ("HTML", "line<br>break", 'Unsupported start tag "br" at byte offset 4'),
    ("HTML", "<b>x</i>", 'Unmatched end tag at byte offset 4, expected "</b>", found "</i>"'),
    ("HTML", "a </b>", "Unexpected end tag at byte offset 2"),
    ("HTML", "1 < 2 <b", "Unsupported start tag \"\" at byte offset 2"),
    ("HTML", '<span class="x">s</span>', 'Tag "span" must have class "tg-spoiler" at byte offset 0'),
    ("HTML", "<b", "Unclosed start tag at byte offset 0"),
]


def _entities(rows):
    out = []
    for row in rows:
        kind, offset, length, *extra = row
        out.append({"type": kind, "offset": offset, "length": length, **(extra[0] if extra else {})})
    return out


@pytest.mark.parametrize("mode,text,rendered,entities", OK, ids=[f"{r[0]}:{r[1][:24]}" for r in OK])
def test_renders(mode, text, rendered, entities):
    got = parse(text, mode)
    assert got.text == rendered
    assert list(got.entities) == _entities(entities)


@pytest.mark.parametrize("mode,text,message", ERRORS, ids=[f"{r[0]}:{r[1][:24]}" for r in ERRORS])
def test_refuses_with_tdlib_message(mode, text, message):
    with pytest.raises(ParseError) as info:
        parse(text, mode)
    assert str(info.value) == message


# -- through the emulator --------------------------------------------------------------------
TOKEN = "123456:ABC-markup"


@pytest.fixture
async def api():
    events: list[Event] = []
    emu = BotApiEmulator(TOKEN, events.append)
    srv = await listen(emu.app(), "telegram-markup")
    async with aiohttp.ClientSession() as session:
        async def call(method, body):
            async with session.post(f"{srv.base_url}/bot{TOKEN}/{method}", json=body) as resp:
                return resp.status, await resp.json()
        yield call, events, srv.base_url
    await srv.stop()


async def test_unescaped_markdown_v2_is_a_400_and_no_reply(api):
    call, events, _ = api
    status, body = await call("sendMessage", {"chat_id": 5, "text": "Done. Thanks", "parse_mode": "MarkdownV2"})
    assert (status, body) == (400, {"ok": False, "error_code": 400, "description":
                                    "Bad Request: can't parse entities: Character '.' is reserved and must be "
                                    "escaped with the preceding '\\'"})
    assert events[-1].reply is None and events[-1].status == 400


async def test_reply_records_rendered_raw_entities_and_parse_mode(api):
    call, events, _ = api
    status, body = await call("sendMessage", {"chat_id": 5, "text": "You picked <b>Tuesday</b>", "parse_mode": "html"})
    assert status == 200
    assert body["result"]["text"] == "You picked Tuesday"
    assert body["result"]["entities"] == [{"type": "bold", "offset": 11, "length": 7}]
    reply = events[-1].reply
    assert (reply.text, reply.sent_text, reply.parse_mode) == ("You picked Tuesday", "You picked <b>Tuesday</b>", "HTML")
    assert [dict(e) for e in reply.entities] == [{"type": "bold", "offset": 11, "length": 7}]


async def test_limit_counts_rendered_utf16_units(api):
    call, _, _ = api
    # 4,096 rendered characters pass even with markup around them ...
    ok = "<b>" + "x" * 4096 + "</b>"
    assert (await call("sendMessage", {"chat_id": 5, "text": ok, "parse_mode": "HTML"}))[0] == 200
    # ... and 2,049 emoji are 4,098 UTF-16 units: too long, though only 2,049 characters
    emoji = "😀" * 2049
    assert utf16_len(emoji) == 4098
    status, body = await call("sendMessage", {"chat_id": 5, "text": emoji})
    assert (status, body["description"]) == (400, "Bad Request: message is too long")
    status, body = await call("sendMessage", {"chat_id": 5, "text": "<b> </b>", "parse_mode": "HTML"})
    assert (status, body["description"]) == (400, "Bad Request: message text is empty")


async def test_caption_is_parsed_and_limited(api):
    call, _, _ = api
    status, body = await call("sendPhoto", {"chat_id": 5, "photo": "AgAD", "caption": "*x", "parse_mode": "Markdown"})
    assert (status, body["description"]) == (400, "Bad Request: can't parse entities: Can't find end of the entity "
                                                  "starting at byte offset 0")
    status, body = await call("sendPhoto", {"chat_id": 5, "photo": "AgAD", "caption": "<i>" + "y" * 1025 + "</i>",
                                            "parse_mode": "HTML"})
    assert (status, body["description"]) == (400, "Bad Request: message caption is too long")


@pytest.mark.parametrize("markup,description", [
    ({"inline_keyboard": [[{"text": "A", "callback_data": "x" * 65}]]}, "Bad Request: BUTTON_DATA_INVALID"),
    ({"inline_keyboard": [[{"text": "A", "callback_data": "é" * 33}]]}, "Bad Request: BUTTON_DATA_INVALID"),
    ({"inline_keyboard": [[{"text": "A", "callback_data": ""}]]}, "Bad Request: BUTTON_DATA_INVALID"),
    ({"inline_keyboard": [[{"text": "A"}]]},
     "Bad Request: can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard"),
    ({"inline_keyboard": [[{"callback_data": "a"}]]},
     "Bad Request: can't parse inline keyboard button: Can't find field \"text\""),
    ({"inline_keyboard": [["A"]]}, "Bad Request: can't parse inline keyboard button: InlineKeyboardButton must be "
                                   "an Object"),
    ({"inline_keyboard": [[{"text": f"{i}", "callback_data": f"{i}"} for i in range(101)]]},
     "Bad Request: REPLY_MARKUP_TOO_LONG"),
])
async def test_inline_keyboard_rules(api, markup, description):
    call, _, _ = api
    status, body = await call("sendMessage", {"chat_id": 5, "text": "pick", "reply_markup": markup})
    assert (status, body["description"]) == (400, description)


async def test_inline_keyboard_limits_hold_at_the_edge(api):
    call, _, _ = api
    markup = {"inline_keyboard": [[{"text": "A", "callback_data": "x" * 64}],
                                  [{"text": f"{i}", "callback_data": f"{i}"} for i in range(99)]]}
    assert (await call("sendMessage", {"chat_id": 5, "text": "pick", "reply_markup": markup}))[0] == 200


async def test_identical_edit_after_parsing_is_not_modified(api):
    call, _, _ = api
    _, sent = await call("sendMessage", {"chat_id": 5, "text": "*hi*", "parse_mode": "MarkdownV2"})
    mid = sent["result"]["message_id"]
    # the same rendered text and entities, written in another markup: still not modified
    status, body = await call("editMessageText", {"chat_id": 5, "message_id": mid, "text": "<b>hi</b>",
                                                  "parse_mode": "HTML"})
    assert status == 400 and body["description"].startswith("Bad Request: message is not modified")
    status, _ = await call("editMessageText", {"chat_id": 5, "message_id": mid, "text": "<i>hi</i>",
                                               "parse_mode": "HTML"})
    assert status == 200


async def test_python_telegram_bot_raises_bad_request_with_the_text(api):
    telegram = pytest.importorskip("telegram")
    _, _, base = api
    bot = telegram.Bot(TOKEN, base_url=f"{base}/bot")
    async with bot:
        with pytest.raises(telegram.error.BadRequest, match="Can't parse entities: character '.' is reserved"):
            await bot.send_message(5, "Done. Thanks", parse_mode="MarkdownV2")
        with pytest.raises(telegram.error.BadRequest, match="Button_data_invalid"):
            await bot.send_message(5, "x", reply_markup=telegram.InlineKeyboardMarkup(
                [[telegram.InlineKeyboardButton("A", callback_data="x" * 65)]]))
        msg = await bot.send_message(5, "<b>ok</b>", parse_mode="HTML")
        assert msg.text == "ok" and msg.entities[0].type == "bold"
        with pytest.raises(telegram.error.BadRequest, match="Message is not modified"):
            await bot.edit_message_text("<b>ok</b>", chat_id=5, message_id=msg.message_id, parse_mode="HTML")


async def test_aiogram_raises_telegram_bad_request_with_the_text(api):
    aiogram = pytest.importorskip("aiogram")
    from aiogram.client.session.aiohttp import AiohttpSession
    from aiogram.client.telegram import TelegramAPIServer
    from aiogram.exceptions import TelegramBadRequest

    _, _, base = api
    bot = aiogram.Bot(TOKEN, session=AiohttpSession(api=TelegramAPIServer.from_base(base)))
    try:
        with pytest.raises(TelegramBadRequest, match="can't parse entities: Can't find end tag corresponding to "
                                                     "start tag \"b\""):
            await bot.send_message(5, "<b>open", parse_mode="HTML")
        msg = await bot.send_message(5, "You picked <b>Tuesday</b>", parse_mode="HTML")
        assert msg.text == "You picked Tuesday" and msg.entities[0].type == "bold"
    finally:
        await bot.session.close()


async def test_explicit_entities_win_over_parse_mode(api):
    call, events, _ = api
    status, body = await call("sendMessage", {"chat_id": 5, "text": "<b>as is", "parse_mode": "HTML",
                                              "entities": [{"type": "italic", "offset": 0, "length": 3}]})
    assert status == 200 and body["result"]["text"] == "<b>as is"
    assert body["result"]["entities"] == [{"type": "italic", "offset": 0, "length": 3}]
