"""The Cloud API's published limits, held by the Graph emulator with the Cloud API's error codes,
and recognised by pywa's own error types (131009 -> InvalidParameter, 131008 ->
MissingRequiredParameter)."""

from __future__ import annotations

import aiohttp
import httpx
import pytest

from harness.channels.whatsapp import GraphApiEmulator
from harness.sandbox.server import listen
from harness.types import Event

PNID, TOKEN, TO = "106540352242922", "EAAG-test-token", "16505551234"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
async def graph():
    events: list[Event] = []
    emu = GraphApiEmulator(PNID, TOKEN, events.append)
    srv = await listen(emu.app(), "whatsapp-limits")
    async with aiohttp.ClientSession() as session:
        yield emu, srv.base_url, session, events
    await srv.stop()


async def post(session, url, body):
    async with session.post(url, json=body, headers=AUTH) as resp:
        return resp.status, await resp.json()


def rows(n, title="Row", start=0):
    return [{"id": f"r{i}", "title": f"{title} {i}"[:24] if title != "LONG" else "x" * 25} for i in range(start, start + n)]


def listing(sections=None, button="Choose", body="Pick one", **extra):
    return {"messaging_product": "whatsapp", "to": TO, "type": "interactive", "interactive": {
        "type": "list", "body": {"text": body}, **extra,
        "action": {"button": button, "sections": sections or [{"title": "Days", "rows": rows(3)}]}}}


def buttons(items, body="Pick one", **extra):
    return {"messaging_product": "whatsapp", "to": TO, "type": "interactive", "interactive": {
        "type": "button", "body": {"text": body}, **extra,
        "action": {"buttons": [{"type": "reply", "reply": {"id": i, "title": t}} for i, t in items]}}}


def cta(label="Open", url="https://example.com", body="See"):
    return {"messaging_product": "whatsapp", "to": TO, "type": "interactive", "interactive": {
        "type": "cta_url", "body": {"text": body},
        "action": {"name": "cta_url", "parameters": {"display_text": label, "url": url}}}}


REFUSED = [
    ("11 rows", listing([{"title": "A", "rows": rows(6)}, {"title": "B", "rows": rows(5, start=6)}]), 131009,
     "Total row count exceed max allowed count: 10"),
    ("row title 25", listing([{"title": "A", "rows": [{"id": "a", "title": "x" * 25}]}]), 131009,
     "Row title length invalid. Min length: 1, Max length: 24"),
    ("row description 73", listing([{"title": "A", "rows": [{"id": "a", "title": "t", "description": "d" * 73}]}]),
     131009, "Row description length invalid. Min length: 1, Max length: 72"),
    ("list button 21", listing(button="b" * 21), 131009, "Button label length invalid. Min length: 1, Max length: 20"),
    ("duplicate row ids", listing([{"title": "A", "rows": [{"id": "a", "title": "x"}, {"id": "a", "title": "y"}]}]),
     131009, "Row ids must be unique; 'a' is used twice"),
    ("two sections, one untitled", listing([{"rows": rows(1)}, {"title": "B", "rows": rows(1, start=1)}]), 131008,
     "Parameter 'Section title' is required"),
    ("list body 4097", listing(body="b" * 4097), 131009, "Body text length invalid. Min length: 1, Max length: 4096"),
    ("list media header", listing(header={"type": "image", "image": {"link": "https://x/y.png"}}), 131009,
     "Header type must be text for list messages"),
    ("4 reply buttons", buttons([(str(i), f"B{i}") for i in range(4)]), 131009, "Max allowed count: 3"),
    ("button title 21", buttons([("a", "t" * 21)]), 131009, "Button title length invalid. Min length: 1, Max length: 20"),
    ("duplicate button ids", buttons([("a", "Yes"), ("a", "No")]), 131009, "Button ids must be unique; 'a' is used twice"),
    ("button body 1025", buttons([("a", "Yes")], body="b" * 1025), 131009,
     "Body text length invalid. Min length: 1, Max length: 1024"),
    ("header 61", buttons([("a", "Yes")], header={"type": "text", "text": "h" * 61}), 131009,
     "Header text length invalid. Min length: 1, Max length: 60"),
    ("footer 61", buttons([("a", "Yes")], footer={"text": "f" * 61}), 131009,
     "Footer text length invalid. Min length: 1, Max length: 60"),
    ("empty title", buttons([("a", "")]), 131008, "Parameter 'Button title' is required"),
    ("cta label 21", cta(label="l" * 21), 131009, "Display text length invalid. Min length: 1, Max length: 20"),
    ("cta url", cta(url="ftp://x"), 131009, "URL is not valid: 'ftp://x'"),
    ("unknown media id", {"messaging_product": "whatsapp", "to": TO, "type": "image", "image": {"id": "999"}}, 131009,
     "Invalid media id '999'"),
]


@pytest.mark.parametrize("label,body,code,details", REFUSED, ids=[r[0] for r in REFUSED])
async def test_refused_with_the_cloud_api_error(graph, label, body, code, details):
    _, base, session, events = graph
    status, answer = await post(session, f"{base}/v21.0/{PNID}/messages", body)
    assert status == 400
    error = answer["error"]
    assert error["code"] == code and error["message"].startswith(f"(#{code}) ")
    assert error["type"] == "OAuthException" and error["fbtrace_id"]
    assert details in error["error_data"]["details"]
    assert events[-1].status == 400 and events[-1].reply is None


ACCEPTED = [
    ("10 rows in two sections", listing([{"title": "A", "rows": rows(5)}, {"title": "B", "rows": rows(5, start=5)}])),
    ("row title 24, description 72", listing([{"title": "A", "rows": [{"id": "a", "title": "x" * 24,
                                                                        "description": "d" * 72}]}])),
    ("list button 20, header and footer 60", listing(button="b" * 20, header={"type": "text", "text": "h" * 60},
                                                     footer={"text": "f" * 60})),
    ("3 buttons of 20, body 1024", buttons([("a", "t" * 20), ("b", "u"), ("c", "v")], body="b" * 1024)),
    ("cta", cta(label="l" * 20)),
]


@pytest.mark.parametrize("label,body", ACCEPTED, ids=[r[0] for r in ACCEPTED])
async def test_limits_hold_at_the_edge(graph, label, body):
    emu, base, session, events = graph
    status, answer = await post(session, f"{base}/v21.0/{PNID}/messages", body)
    assert status == 200, answer
    wamid = answer["messages"][0]["id"]
    assert answer["messages"][0]["message_status"] == "accepted" and wamid.startswith("wamid.")
    if body["interactive"]["type"] in ("list", "button"):
        assert emu.offered[wamid]  # what the message offered, for the driver's presses


@pytest.mark.parametrize("version,status", [("v21.0", 200), ("v9.1", 200), ("v21", 400), ("21.0", 400),
                                            ("latest", 400), ("v21.0.1", 400)])
async def test_version_format(graph, version, status):
    _, base, session, events = graph
    got, answer = await post(session, f"{base}/{version}/{PNID}/messages",
                             {"messaging_product": "whatsapp", "to": TO, "text": {"body": "hi"}})
    assert got == status
    if status == 400:
        assert answer["error"]["code"] == 2500 and "Unknown path components" in answer["error"]["message"]


async def test_mark_read_of_an_unknown_message_is_refused(graph):
    emu, base, session, _ = graph
    read = {"messaging_product": "whatsapp", "status": "read", "message_id": "wamid.never-received"}
    status, answer = await post(session, f"{base}/v21.0/{PNID}/messages", read)
    assert status == 400 and answer["error"]["code"] == 100 and "Invalid message_id" in answer["error"]["error_data"][
        "details"]
    emu.note_inbound("wamid.never-received", TO)
    assert (await post(session, f"{base}/v21.0/{PNID}/messages", read)) == (200, {"success": True})


async def test_uploaded_media_id_can_be_sent(graph):
    _, base, session, events = graph
    form = aiohttp.FormData()
    form.add_field("messaging_product", "whatsapp")
    form.add_field("type", "image/png")
    form.add_field("file", b"\x89PNG....", filename="a.png", content_type="image/png")
    async with session.post(f"{base}/v21.0/{PNID}/media", data=form, headers=AUTH) as resp:
        assert resp.status == 200
        media_id = (await resp.json())["id"]
    assert media_id.isdigit()
    status, _ = await post(session, f"{base}/v21.0/{PNID}/messages",
                           {"messaging_product": "whatsapp", "to": TO, "type": "image", "image": {"id": media_id}})
    assert status == 200


async def test_accepted_send_calls_on_sent_with_a_delivery_failure_when_asked(graph):
    emu, base, session, _ = graph
    calls = []
    emu.on_sent = lambda wa_id, wamid, errors: calls.append((wa_id, wamid, errors))
    emu.fail_delivery_next(131026, "Message undeliverable")
    for _ in range(2):
        await post(session, f"{base}/v21.0/{PNID}/messages", {"messaging_product": "whatsapp", "to": TO,
                                                              "text": {"body": "hi"}})
    assert [c[0] for c in calls] == [TO, TO]
    assert calls[0][2][0]["code"] == 131026 and calls[1][2] is None


async def test_pywa_recognises_the_errors(graph):
    pywa = pytest.importorskip("pywa_async")
    from pywa import errors
    from pywa_async import WhatsApp, types

    _, base, _, _ = graph
    wa = WhatsApp(phone_id=PNID, token=TOKEN, session=httpx.AsyncClient())
    url = httpx.URL(base)
    wa.api._session.base_url = wa.api._session.base_url.copy_with(scheme=url.scheme, host=url.host, port=url.port)
    try:
        section = types.Section(title="Days", rows=[types.SectionRow(title=f"Day {i}", callback_data=f"d{i}")
                                                    for i in range(11)])
        with pytest.raises(errors.InvalidParameter) as info:
            await wa.send_message(to=TO, text="Pick", buttons=types.SectionList(button_title="Days",
                                                                                 sections=[section]))
        assert info.value.code == 131009 and "Total row count" in info.value.details
        with pytest.raises(errors.InvalidParameter):
            await wa.send_message(to=TO, text="b" * 1025, buttons=[types.Button(title="Yes", callback_data="y")])
        with pytest.raises(errors.WhatsAppError) as info:
            await wa.mark_message_as_read("wamid.unknown")
        assert info.value.code == 100
    finally:
        await wa.api._session.aclose()
    assert pywa


async def test_case_fault_undeliverable_accepts_then_fails(graph):
    from harness.sandbox.faults import FaultBook, validate

    emu, base, session, _ = graph
    assert validate({"whatsapp": "undeliverable"}) is None and "whatsapp only" in validate({"telegram": "undeliverable"})
    calls = []
    emu.on_sent = lambda wa_id, wamid, errors: calls.append(errors)
    book = FaultBook()
    emu.case_faults = book
    armed = book.arm((f"wa:{TO}",), {"whatsapp": "undeliverable"})
    body = {"messaging_product": "whatsapp", "to": TO, "text": {"body": "hi"}}
    assert (await post(session, f"{base}/v21.0/{PNID}/messages", body))[0] == 200
    # a refused send leaves nothing queued for the next one
    assert (await post(session, f"{base}/v21.0/{PNID}/messages", {**body, "text": {"body": ""}}))[0] == 400
    book.disarm(armed)
    assert (await post(session, f"{base}/v21.0/{PNID}/messages", body))[0] == 200
    assert [e and e[0]["code"] for e in calls] == [131026, None]
