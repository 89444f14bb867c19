"""The Graph API emulator: what it accepts, what it refuses, and what it records."""

from __future__ import annotations

import aiohttp
import pytest

from harness.channels.whatsapp import GraphApiEmulator
from harness.sandbox.server import listen
from harness.types import Event

PNID, TOKEN, TO = "106540352242922", "EAAG-test-token", "16505551234"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
async def graph():
    events: list[Event] = []
    emu = GraphApiEmulator(PNID, TOKEN, events.append, clock=lambda: 1_700_000_000.5)
    srv = await listen(emu.app(), "whatsapp-graph")
    async with aiohttp.ClientSession() as session:
        yield emu, srv.base_url, session, events
    await srv.stop()


async def post(session, url, body, headers=AUTH):
    async with session.post(url, json=body, headers=headers) as resp:
        return resp.status, await resp.json()


def text(body="hello", **extra):
    return {"messaging_product": "whatsapp", "recipient_type": "individual", "to": TO,
            "type": "text", "text": {"body": body, "preview_url": False}, **extra}


BUTTONS = {
    "messaging_product": "whatsapp", "to": TO, "type": "interactive",
    "interactive": {"type": "button", "body": {"text": "Pick one"},
                    "action": {"buttons": [{"type": "reply", "reply": {"id": "a", "title": "Yes"}},
                                           {"type": "reply", "reply": {"id": "b", "title": "No"}}]}},
}

#: (label, path, body, expected reply kind, expected reply text, expected buttons)
GOOD_SENDS = [
    ("text", "/v21.0/{p}/messages", text("see http://127.0.0.1:1/c/abcdef123456/x"), "text",
     "see http://127.0.0.1:1/c/abcdef123456/x", ()),
    ("no version prefix", "/{p}/messages", text(), "text", "hello", ()),
    ("type defaults to text", "/v26.0/{p}/messages",
     {"messaging_product": "whatsapp", "to": TO, "text": {"body": "hi"}}, "text", "hi", ()),
    ("4096 chars", "/v21.0/{p}/messages", text("x" * 4096), "text", "x" * 4096, ()),
    ("document", "/v21.0/{p}/messages",
     {"messaging_product": "whatsapp", "to": TO, "type": "document",
      "document": {"link": "http://127.0.0.1:1/r.pdf", "caption": "your report", "filename": "r.pdf"}},
     "document", "your report", ()),
    ("image by id", "/v21.0/{p}/messages",
     {"messaging_product": "whatsapp", "to": TO, "type": "image", "image": {"id": "1234"}}, "image", "", ()),
    ("buttons", "/v21.0/{p}/messages", BUTTONS, "interactive", "Pick one", ("Yes", "No")),
    ("template", "/v21.0/{p}/messages",
     {"messaging_product": "whatsapp", "to": TO, "type": "template",
      "template": {"name": "hello_world", "language": {"code": "en_US"}}}, "template", "hello_world", ()),
    ("reaction", "/v21.0/{p}/messages",
     {"messaging_product": "whatsapp", "to": TO, "type": "reaction",
      "reaction": {"message_id": "wamid.x", "emoji": "\U0001f44d"}}, "reaction", "\U0001f44d", ()),
    # a contact card (its object is an array; it was refused as an unknown type)
    ("contacts", "/v21.0/{p}/messages",
     {"messaging_product": "whatsapp", "to": TO, "type": "contacts",
      "contacts": [{"name": {"formatted_name": "Support Desk", "first_name": "Support"},
                    "phones": [{"phone": "+4930123456", "type": "WORK"}]}]}, "contacts", "Support Desk +4930123456", ()),
]


@pytest.mark.parametrize("label,path,body,kind,reply_text,buttons", GOOD_SENDS, ids=[g[0] for g in GOOD_SENDS])
async def test_good_send(graph, label, path, body, kind, reply_text, buttons):
    emu, base, session, events = graph
    emu.note_media("1234")  # a media id is only valid once uploaded (or received)
    status, answer = await post(session, base + path.format(p=PNID), body)
    assert status == 200, answer
    assert answer["messaging_product"] == "whatsapp"
    assert answer["contacts"] == [{"input": TO, "wa_id": TO}]
    (msg,) = answer["messages"]
    assert msg["id"].startswith("wamid.") and msg["message_status"] == "accepted"
    (event,) = events
    assert (event.source, event.name, event.status, event.at) == ("whatsapp", "whatsapp.send", 200, 1_700_000_000.5)
    assert event.request == body and event.response == answer
    assert event.keys[0] == f"wa:{TO}"
    reply = event.reply
    assert (reply.channel, reply.chat, reply.method, reply.kind) == ("whatsapp", TO, "messages", kind)
    assert (reply.text, reply.buttons, reply.message_id) == (reply_text, buttons, msg["id"])


async def test_doc_token_becomes_a_key(graph):
    _, base, session, events = graph
    await post(session, f"{base}/v21.0/{PNID}/messages", text("read http://127.0.0.1:1/c/abcdef123456/doc"))
    assert events[0].keys == (f"wa:{TO}", "tok:abcdef123456")


async def test_plus_prefixed_recipient_is_normalized(graph):
    _, base, session, events = graph
    status, answer = await post(session, f"{base}/v21.0/{PNID}/messages", text(to="+" + TO))
    assert status == 200 and answer["contacts"] == [{"input": "+" + TO, "wa_id": TO}]
    assert events[0].reply.chat == TO and events[0].keys == (f"wa:{TO}",)


@pytest.mark.parametrize("known", [True, False])
async def test_send_by_business_scoped_id(graph, known):
    emu, base, session, events = graph
    if known:
        emu.note_user(TO, "US.12345678901234567890")
    body = {"messaging_product": "whatsapp", "recipient": "US.12345678901234567890", "type": "text",
            "text": {"body": "hi"}}
    status, answer = await post(session, f"{base}/v21.0/{PNID}/messages", body)
    assert status == 200
    assert answer["contacts"] == [{"input": "US.12345678901234567890", "user_id": "US.12345678901234567890"}]
    chat = TO if known else "US.12345678901234567890"
    assert events[0].reply.chat == chat and events[0].keys == (f"wa:{chat}",)


#: (label, path, body, headers, status, graph error code, fragment of message or details)
BAD_CALLS = [
    ("no token", "/v21.0/{p}/messages", text(), {}, 401, 190, "Invalid OAuth access token"),
    ("wrong token", "/v21.0/{p}/messages", text(), {"Authorization": "Bearer nope"}, 401, 190, "Cannot parse"),
    ("not bearer", "/v21.0/{p}/messages", text(), {"Authorization": TOKEN}, 401, 190, "Invalid OAuth"),
    ("unknown phone id", "/v21.0/999/messages", text(), AUTH, 400, 100, "Unsupported post request"),
    ("wrong product", "/v21.0/{p}/messages", text(messaging_product="sms"), AUTH, 400, 100, "messaging_product"),
    ("missing product", "/v21.0/{p}/messages", {"to": TO, "type": "text", "text": {"body": "x"}}, AUTH, 400, 100,
     "messaging_product"),
    ("missing to", "/v21.0/{p}/messages", {"messaging_product": "whatsapp", "type": "text", "text": {"body": "x"}},
     AUTH, 400, 100, "'to' is required"),
    ("empty to", "/v21.0/{p}/messages", text(to=""), AUTH, 400, 100, "'to' is required"),
    ("too long", "/v21.0/{p}/messages", text("x" * 4097), AUTH, 400, 100, "4097 characters"),
    ("empty body", "/v21.0/{p}/messages", text(""), AUTH, 400, 100, "text.body"),
    ("no text object", "/v21.0/{p}/messages", {"messaging_product": "whatsapp", "to": TO, "type": "text"}, AUTH,
     400, 100, "'text'"),
    ("unknown type", "/v21.0/{p}/messages", {"messaging_product": "whatsapp", "to": TO, "type": "fax", "fax": {}},
     AUTH, 400, 100, "type must be one of"),
    ("media without id or link", "/v21.0/{p}/messages",
     {"messaging_product": "whatsapp", "to": TO, "type": "image", "image": {"caption": "x"}}, AUTH, 400, 100, "link"),
    ("four buttons", "/v21.0/{p}/messages",
     {**BUTTONS, "interactive": {**BUTTONS["interactive"], "action": {"buttons": [
         {"type": "reply", "reply": {"id": str(i), "title": f"B{i}"}} for i in range(4)]}}},
     AUTH, 400, 131009, "Max allowed count: 3"),
    ("contact without its name", "/v21.0/{p}/messages",
     {"messaging_product": "whatsapp", "to": TO, "type": "contacts", "contacts": [{"phones": [{"phone": "1"}]}]},
     AUTH, 400, 100, "formatted_name"),
    ("contacts empty", "/v21.0/{p}/messages",
     {"messaging_product": "whatsapp", "to": TO, "type": "contacts", "contacts": []}, AUTH, 400, 100, "contacts"),
    ("template without language", "/v21.0/{p}/messages",
     {"messaging_product": "whatsapp", "to": TO, "type": "template", "template": {"name": "x"}},
     AUTH, 400, 100, "language"),
]


@pytest.mark.parametrize("label,path,body,headers,status,code,fragment", BAD_CALLS, ids=[b[0] for b in BAD_CALLS])
async def test_bad_call(graph, label, path, body, headers, status, code, fragment):
    _, base, session, events = graph
    got, answer = await post(session, base + path.format(p=PNID), body, headers)
    assert got == status
    error = answer["error"]
    assert error["code"] == code and error["fbtrace_id"]
    described = error["message"] + " " + error.get("error_data", {}).get("details", "")
    assert fragment in described
    if code == 100 and status == 400 and "Unsupported" not in fragment:
        assert error["message"] == "(#100) Invalid parameter"
    (event,) = events  # refused calls are recorded too, without a reply
    assert event.status == status and event.reply is None and event.error
    assert TOKEN not in repr(event)


async def test_token_in_query_is_accepted_and_not_recorded(graph):
    _, base, session, events = graph
    status, _ = await post(session, f"{base}/v21.0/{PNID}/messages?access_token={TOKEN}", text(), headers={})
    assert status == 200
    assert TOKEN not in repr(events[0])


@pytest.mark.parametrize("typing", [False, True])
async def test_mark_read(graph, typing):
    emu, base, session, events = graph
    emu.note_inbound("wamid.in1", TO)
    body = {"messaging_product": "whatsapp", "status": "read", "message_id": "wamid.in1"}
    if typing:
        body["typing_indicator"] = {"type": "text"}
    status, answer = await post(session, f"{base}/v21.0/{PNID}/messages", body)
    assert (status, answer) == (200, {"success": True})
    (event,) = events
    assert event.name == "whatsapp.mark_read" and event.reply is None
    assert event.keys == (f"wa:{TO}",) and event.meta.get("typing", False) is typing


@pytest.mark.parametrize(
    "body",
    [
        {"messaging_product": "whatsapp", "status": "read"},
        {"messaging_product": "whatsapp", "status": "read", "message_id": "m", "typing_indicator": {"type": "audio"}},
    ],
)
async def test_mark_read_invalid(graph, body):
    _, base, session, events = graph
    status, answer = await post(session, f"{base}/v21.0/{PNID}/messages", body)
    assert status == 400 and answer["error"]["code"] == 100
    assert events[0].name == "whatsapp.mark_read" and events[0].status == 400


async def test_fail_next_answers_one_send_with_the_fault(graph):
    emu, base, session, events = graph
    emu.fail_next(429, 130429, "(#130429) Rate limit hit")
    emu.note_inbound("wamid.in1", TO)
    read = {"messaging_product": "whatsapp", "status": "read", "message_id": "wamid.in1"}
    assert (await post(session, f"{base}/v21.0/{PNID}/messages", read))[0] == 200  # does not consume it
    status, answer = await post(session, f"{base}/v21.0/{PNID}/messages", text())
    assert status == 429 and answer["error"]["code"] == 130429
    assert events[-1].status == 429 and events[-1].reply is None and events[-1].keys == (f"wa:{TO}",)
    assert (await post(session, f"{base}/v21.0/{PNID}/messages", text()))[0] == 200


@pytest.mark.parametrize(
    "path,headers,status",
    [
        ("/v21.0/{p}", AUTH, 200),
        ("/{p}", AUTH, 200),
        ("/v21.0/{p}", {}, 401),
        ("/v21.0/42", AUTH, 400),
    ],
)
async def test_phone_info(graph, path, headers, status):
    _, base, session, events = graph
    async with session.get(base + path.format(p=PNID), headers=headers) as resp:
        assert resp.status == status
        answer = await resp.json()
    if status == 200:
        assert answer["id"] == PNID and answer["verified_name"] and answer["display_phone_number"]
    assert events[0].name == "whatsapp.phone_info" and events[0].status == status


async def test_unknown_path_is_recorded(graph):
    _, base, session, events = graph
    async with session.post(f"{base}/v21.0/{PNID}/message_templates", headers=AUTH) as resp:
        assert resp.status == 400
    assert events[0].name == "whatsapp.unknown" and "Unknown path" in events[0].error
