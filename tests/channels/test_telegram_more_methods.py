"""The Bot API methods bots call beyond text, documents and photos (harness/channels/telegram_sends.py):
each answers as the server does, and a send shows the user something (a Reply of its kind).
Before, every one of them was a 404 Not Found, which the real server never answers for them:
a bot answering with a voice note, an album or a poll failed every case (a false alarm). Each
well-formed call has its malformed twin, refused with the server's text."""

from __future__ import annotations

import json

import aiohttp
import pytest

from harness.channels.telegram import BotApiEmulator
from harness.sandbox.server import listen

TOKEN = "123456:ABC-def_ghi"
CHAT = 777


@pytest.fixture
async def emu():
    events = []
    em = BotApiEmulator(TOKEN, events.append)
    srv = await listen(em.app(), "telegram")
    async with aiohttp.ClientSession() as session:
        async def call(method, body):
            async with session.post(f"{srv.base_url}/bot{TOKEN}/{method}", data=json.dumps(body),
                                    headers={"Content-Type": "application/json"}) as resp:
                return resp.status, await resp.json(content_type=None)
        yield call, events
    await srv.stop()


@pytest.mark.parametrize("method, body, key, kind, text", [
    ("sendVoice", {"voice": "AwACAgIAAx", "caption": "your summary, spoken"}, "voice", "voice", "your summary, spoken"),
    ("sendAudio", {"audio": "CQACAgIAAx", "title": "t"}, "audio", "audio", ""),
    ("sendVideo", {"video": "BAACAgIAAx", "caption": "<b>clip</b>", "parse_mode": "HTML"}, "video", "video", "clip"),
    ("sendAnimation", {"animation": "CgACAgIAAx"}, "animation", "animation", ""),
    ("sendVideoNote", {"video_note": "DQACAgIAAx"}, "video_note", "video_note", ""),
    ("sendSticker", {"sticker": "CAACAgIAAx"}, "sticker", "sticker", ""),
    ("sendLocation", {"latitude": 52.5, "longitude": 13.4}, "location", "location", ""),
    ("sendVenue", {"latitude": 52.5, "longitude": 13.4, "title": "Cafe", "address": "Main St 1"}, "venue", "venue",
     "Cafe Main St 1"),
    ("sendContact", {"phone_number": "+4930123", "first_name": "Ada"}, "contact", "contact", "Ada +4930123"),
    ("sendPoll", {"question": "Which summary?", "options": ["short", "long"]}, "poll", "poll", "Which summary?"),
    ("sendDice", {}, "dice", "dice", ""),
])
async def test_a_send_the_bot_api_has_is_answered_with_its_message_and_shown(emu, method, body, key, kind, text):
    call, events = emu
    status, answer = await call(method, {"chat_id": CHAT, **body})
    assert status == 200, answer
    assert key in answer["result"] and answer["result"]["chat"]["id"] == CHAT
    reply = events[-1].reply
    assert reply is not None and reply.kind == kind and reply.text == text


@pytest.mark.parametrize("method, body, says", [
    ("sendVoice", {}, "Bad Request: there is no voice in the request"),
    ("sendVideoNote", {}, "Bad Request: there is no video note in the request"),
    ("sendLocation", {"longitude": 13.4}, "Bad Request: latitude is empty"),
    ("sendMediaGroup", {"media": "x"}, "Bad Request: Expected an Array of InputMedia"),
    ("sendMediaGroup", {"media": [{"type": "photo", "media": "a"}]}, "Bad Request: Too few media in a media group"),
    ("copyMessage", {"message_id": 1}, "Bad Request: from_chat_id is empty"),
    ("sendVoice", {"voice": "x", "caption": "y" * 1025}, "Bad Request: message caption is too long"),
])
async def test_the_malformed_twin_is_refused_with_the_servers_text(emu, method, body, says):
    call, events = emu
    status, answer = await call(method, {"chat_id": CHAT, **body})
    assert status == 400 and answer["description"] == says, answer
    assert events[-1].reply is None


async def test_an_album_is_one_reply_with_its_captions(emu):
    call, events = emu
    media = [{"type": "photo", "media": "a", "caption": "page 1"}, {"type": "photo", "media": "b", "caption": "page 2"}]
    status, answer = await call("sendMediaGroup", {"chat_id": CHAT, "media": media})
    assert status == 200 and len(answer["result"]) == 2
    assert events[-1].reply.kind == "media_group" and events[-1].reply.text == "page 1\npage 2"


async def test_a_copy_shows_the_copied_text_and_a_caption_edit_is_an_edit(emu):
    call, events = emu
    _, sent = await call("sendMessage", {"chat_id": CHAT, "text": "the findings"})
    status, answer = await call("copyMessage", {"chat_id": CHAT, "from_chat_id": CHAT,
                                                "message_id": sent["result"]["message_id"]})
    assert status == 200 and set(answer["result"]) == {"message_id"}
    assert events[-1].reply.kind == "copy" and events[-1].reply.text == "the findings"
    _, voice = await call("sendVoice", {"chat_id": CHAT, "voice": "x", "caption": "old"})
    status, answer = await call("editMessageCaption", {"chat_id": CHAT, "message_id": voice["result"]["message_id"],
                                                       "caption": "new"})
    assert status == 200 and answer["result"]["caption"] == "new" and events[-1].reply.kind == "edit"
    status, answer = await call("editMessageCaption", {"chat_id": CHAT, "message_id": 99999, "caption": "x"})
    assert status == 400 and answer["description"] == "Bad Request: message to edit not found"


async def test_an_unknown_method_is_still_not_found(emu):
    call, _ = emu
    status, answer = await call("sendTelepathy", {"chat_id": CHAT})
    assert status == 404 and answer["description"] == "Not Found"


async def test_a_streamed_draft_is_no_reply_and_the_answer_after_it_is_one(emu):
    """sendMessageDraft (Bot API 9.3) previews an answer being written: a bot streaming its
    model's answer sends drafts, then the message. Counting the drafts as replies would fail
    every `replies: {max: 1}` (a false alarm); refusing them a bot that streams."""
    call, events = emu
    for part in ("The fin", "The findings are"):
        status, answer = await call("sendMessageDraft", {"chat_id": CHAT, "draft_id": 7, "text": part})
        assert status == 200 and answer["result"] is True and events[-1].reply is None
    status, _ = await call("sendMessage", {"chat_id": CHAT, "text": "The findings are clear."})
    assert status == 200 and events[-1].reply.text == "The findings are clear."
    status, answer = await call("sendMessageDraft", {"chat_id": CHAT, "draft_id": 0, "text": "x"})  # the twin
    assert status == 400 and answer["description"] == "Bad Request: draft_id must be non-zero"
    status, answer = await call("sendMessageDraft", {"chat_id": CHAT, "draft_id": 7, "text": "<b>x", "parse_mode": "HTML"})
    assert status == 400 and "can't parse entities" in answer["description"]
