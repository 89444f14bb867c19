"""A loopback stand-in for the WhatsApp Cloud API (graph.facebook.com) messages endpoint.

The agent under test is configured with this server's base URL instead of Meta's. Every
call it makes, good or bad, becomes an ``Event`` handed to ``sink``; a successful send
also carries the ``Reply`` the simulated user would see. Validation follows the Cloud API
closely enough that a request this emulator accepts is one Meta would accept too, and
errors use Graph's ``{"error": {...}}`` shape so the agent's error handling is exercised.
What a message is and what Graph refuses in one: whatsapp_messages.py.
"""

from __future__ import annotations

import hmac
import json
import logging
import time
from collections import deque
from typing import Any, Callable

from aiohttp import web

from harness.channels.media import InboundFile
from harness.channels.whatsapp_media import ATTACHMENTS, MediaDownloads
from harness.channels.whatsapp_messages import (
    MEDIA_TYPES, MESSAGE_TYPES, _content_text, _invalid, _not_valid, _Rejected, _undeliverable, _utf8_only, _wa_id,
    graph_error, offered_options,
)
from harness.channels.whatsapp_payloads import new_media_id, new_wamid
from harness.types import Event, Reply, doc_token_keys

SOURCE = "whatsapp"


#: Graph versions look like v21.0 (major.minor); clients may also call without one (the app's
#: default version). Anything else ("v21", "21.0", "latest") is an unknown path (code 2500).
VERSION = r"v\d+\.\d+"


log = logging.getLogger("harness.whatsapp_emulator")


class GraphApiEmulator(MediaDownloads):
    """Answers ``POST /{version}/{phone_number_id}/messages`` and ``GET /{version}/{phone_number_id}``."""

    def __init__(
        self,
        phone_number_id: str,
        access_token: str,
        sink: Callable[[Event], None],
        *,
        clock: Callable[[], float] = time.time,
        verified_name: str = "Harness Test Business",
        display_phone_number: str = "+1 555-000-0000",
    ):
        self.phone_number_id = str(phone_number_id)
        self.access_token = access_token
        self.sink = sink
        self.clock = clock
        self.verified_name = verified_name
        self.display_phone_number = display_phone_number
        self._faults: deque[tuple[int, dict[str, Any]]] = deque()
        self.case_faults = None  # a harness.sandbox.faults.FaultBook, set by the sandbox
        self._inbound: dict[str, str] = {}
        self._bsuids: dict[str, str] = {}
        self._media: set[str] = set()
        #: the media the simulated users sent (media id -> bytes): GET /<media-id> and its download URL
        self.media_files: dict[str, InboundFile] = {}
        #: what each accepted interactive message offered: wamid -> [(id, title), ...]
        self.offered: dict[str, list[tuple[str, str]]] = {}
        #: called after every accepted send with (wa_id, wamid, errors or None): the driver
        #: answers it with ``statuses`` webhooks (sent, delivered, read; failed with errors)
        self.on_sent: Callable[[str, str, list[dict[str, Any]] | None], None] | None = None
        self._fail_delivery: deque[dict[str, Any]] = deque()

    # -- hooks for the driver ----------------------------------------------------------

    def fail_next(self, status: int, code: int, message: str) -> None:
        """Answer the next message send with this Graph error (e.g. 429, 130429, rate limit).

        Only sends consume a fault, not mark-as-read calls: agents often mark the inbound
        message read first, and that must not swallow the fault meant for the reply.
        """
        self._faults.append((status, graph_error(message, code)))

    def fail_delivery_next(self, code: int = 131026, title: str = "Message undeliverable") -> None:
        """Accept the next send (200 and a wamid) but report it ``failed`` with this error in its
        statuses webhook, as Meta does for failures found after acceptance."""
        self._fail_delivery.append(_undeliverable(code, title))

    def note_media(self, media_id: str) -> None:
        """A media id the agent may send (the user's own media, or one uploaded elsewhere)."""
        self._media.add(str(media_id))

    def note_inbound(self, message_id: str, wa_id: str) -> None:
        """Remember who sent an inbound message, so a mark-read of it is attributed to that user."""
        self._inbound[message_id] = wa_id

    def note_user(self, wa_id: str, bsuid: str) -> None:
        """Remember a user's business-scoped id (``WhatsAppUpdates.bsuid_of``).

        Clients may answer by BSUID (``recipient``) instead of phone number (``to``); pywa
        4.5 does so by default. Knowing the pair lets such replies count for that user.
        """
        self._bsuids[bsuid] = wa_id

    def app(self) -> web.Application:
        """The aiohttp application; start it with ``harness.sandbox.server.listen``."""
        app = web.Application(client_max_size=64 * 1024**2)
        app.router.add_post(rf"/{{version:{VERSION}}}/{{pnid}}/messages", self._messages)
        app.router.add_post("/{pnid}/messages", self._messages)
        app.router.add_post(rf"/{{version:{VERSION}}}/{{pnid}}/media", self._upload)
        app.router.add_post("/{pnid}/media", self._upload)
        app.router.add_get(rf"/{{version:{VERSION}}}/{{pnid}}", self._phone_info)
        app.router.add_get("/{pnid:[0-9A-Za-z_]+}", self._phone_info)
        app.router.add_get(ATTACHMENTS, self._attachment)  # the media's download URL (Meta: lookaside.fbsbx.com)
        app.router.add_route("*", "/{tail:.*}", self._unknown)
        return app

    # -- plumbing ------------------------------------------------------------------------

    def _authorize(self, request: web.Request) -> None:
        header = request.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() not in ("bearer", "oauth"):
            token = request.query.get("access_token", "")  # Graph also takes it as a param
        if not token or not hmac.compare_digest(token.strip().encode(), self.access_token.encode()):
            raise _Rejected(
                401,
                graph_error("Invalid OAuth access token - Cannot parse access token", 190),
            )

    def _check_phone(self, request: web.Request, verb: str) -> None:
        pnid = request.match_info["pnid"]
        if pnid != self.phone_number_id:
            raise _Rejected(
                400,
                graph_error(
                    f"Unsupported {verb} request. Object with ID '{pnid}' does not exist, cannot be loaded "
                    "due to missing permissions, or does not support this operation. Please read the "
                    "Graph API documentation at https://developers.facebook.com/docs/graph-api",
                    100,
                    type_="GraphMethodException",
                    subcode=33,
                ),
            )

    def _emit(self, name: str, started: float, at: float, status: int, request: Any, response: Any,
              keys: tuple[str, ...] = (), reply: Reply | None = None, error: str = "",
              meta: dict[str, Any] | None = None) -> None:
        self.sink(
            Event(
                source=SOURCE,
                name=name,
                at=at,
                status=status,
                duration_ms=(time.perf_counter() - started) * 1000,
                request=request if isinstance(request, dict) else {"body": request},
                response=response,
                keys=keys,
                reply=reply,
                error=error,
                meta=meta or {},
            )
        )

    # -- handlers --------------------------------------------------------------------------

    async def _messages(self, request: web.Request) -> web.Response:
        started, at = time.perf_counter(), self.clock()
        body: Any = {}
        name, keys, reply, meta = "whatsapp.send", (), None, {}
        undeliverable = False
        try:
            body = await _read_body(request)
            if isinstance(body, dict) and body.get("status") == "read":
                name = "whatsapp.mark_read"
            self._authorize(request)
            self._check_phone(request, "post")
            if name == "whatsapp.mark_read":
                answer, keys, meta = self._mark_read(body)
            else:
                if self._faults:
                    raise _Rejected(*self._faults.popleft())
                if self.case_faults is not None:  # per-case scripted faults (harness/sandbox/faults.py)
                    fault = await self.case_faults.before_channel("whatsapp", self._keys_of_refused(body))
                    if fault is not None and fault.kind == "undeliverable":  # accepted now, failed later
                        undeliverable = True
                        fault = None
                    if fault is not None:
                        raise _Rejected(fault.status, graph_error(f"Injected fault: {fault.describe()}",
                                                                  130429 if fault.status == 429 else 131000))
                answer, keys, reply = self._send(body, at)
        except Exception as exc:  # noqa: BLE001 - a malformed call: the Graph API answers 400, never 500
            rej = exc if isinstance(exc, _Rejected) else _invalid(f"malformed request ({type(exc).__name__})")
            if not isinstance(exc, _Rejected):
                log.debug("whatsapp emulator: send refused as malformed", exc_info=True)
            try:
                keys = self._keys_of_refused(body)
            except Exception:  # noqa: BLE001 - the body that broke the send may break this too
                keys = ()
            self._emit(name, started, at, rej.status, body, rej.body, keys, error=str(rej), meta=meta)
            return web.json_response(rej.body, status=rej.status)
        self._emit(name, started, at, 200, body, answer, keys, reply, meta=meta)
        if reply is not None:
            if reply.kind == "interactive":
                self.offered[reply.message_id] = offered_options(body.get("interactive") or {})
            if self.on_sent is not None:
                errors = ([_undeliverable()] if undeliverable else
                          [self._fail_delivery.popleft()] if self._fail_delivery else None)
                try:
                    self.on_sent(reply.chat, reply.message_id, errors)
                except Exception:  # statuses are a courtesy of the driver; never fail the send
                    pass
        return web.json_response(answer)

    async def _upload(self, request: web.Request) -> web.Response:
        """``POST /{pnid}/media`` (multipart: messaging_product, file, type) -> ``{"id": ...}``."""
        started, at = time.perf_counter(), self.clock()
        fields: dict[str, Any] = {}
        try:
            self._authorize(request)
            self._check_phone(request, "post")
            if request.content_type != "multipart/form-data":
                raise _invalid("media upload must be multipart/form-data with messaging_product, file and type")
            try:
                reader = await request.multipart()
                async for part in reader:
                    if part.filename is not None:
                        size = 0
                        while chunk := await part.read_chunk():
                            size += len(chunk)
                        fields[part.name or "file"] = {"upload": part.filename, "size": size}
                    elif part.name:
                        fields[part.name] = await part.text()
            except Exception:  # noqa: BLE001 - truncated parts, no boundary, undecodable text: Graph's 400
                log.debug("whatsapp emulator: media upload refused as malformed", exc_info=True)
                raise _invalid("the media upload is not a readable multipart/form-data body") from None
            if fields.get("messaging_product") != "whatsapp":
                raise _invalid("messaging_product must be 'whatsapp'")
            if not isinstance(fields.get("file"), dict):
                raise _Rejected(400, graph_error("(#131008) Required parameter is missing", 131008,
                                                 details="Parameter 'file' is required"))
        except _Rejected as rej:
            self._emit("whatsapp.media", started, at, rej.status, fields, rej.body, error=str(rej))
            return web.json_response(rej.body, status=rej.status)
        media_id = new_media_id()
        self._media.add(media_id)
        self._emit("whatsapp.media", started, at, 200, fields, {"id": media_id})
        return web.json_response({"id": media_id})

    def _keys_of_refused(self, body: Any) -> tuple[str, ...]:
        # A refused send still belongs to the user it was meant for.
        if not isinstance(body, dict):
            return ()
        if isinstance(body.get("to"), str) and body["to"].strip():
            return (f"wa:{_wa_id(body['to'])}",)
        if isinstance(body.get("recipient"), str) and body["recipient"].strip():
            return (f"wa:{self._bsuids.get(body['recipient'], body['recipient'])}",)
        return ()

    def _mark_read(self, body: dict[str, Any]) -> tuple[dict[str, Any], tuple[str, ...], dict[str, Any]]:
        if body.get("messaging_product") != "whatsapp":
            raise _invalid("messaging_product must be 'whatsapp'")
        message_id = body.get("message_id")
        if not isinstance(message_id, str) or not message_id:
            raise _invalid("message_id is required to mark a message as read")
        meta: dict[str, Any] = {"message_id": message_id}
        typing = body.get("typing_indicator")
        if typing is not None:
            if not isinstance(typing, dict) or typing.get("type") != "text":
                raise _invalid("typing_indicator.type must be 'text'")
            meta["typing"] = True
        wa_id = self._inbound.get(message_id)
        if wa_id is None:  # the Cloud API only marks messages this number received
            raise _invalid(f"Invalid message_id: no message {message_id!r} was received by this phone number")
        return {"success": True}, (f"wa:{wa_id}",), meta

    def _send(self, body: Any, at: float) -> tuple[dict[str, Any], tuple[str, ...], Reply]:
        if not isinstance(body, dict):
            raise _invalid("the request body must be a JSON object")
        if body.get("messaging_product") != "whatsapp":
            raise _invalid(f"messaging_product must be 'whatsapp', got {body.get('messaging_product')!r}")
        to, recipient = body.get("to"), body.get("recipient")
        if isinstance(to, str) and to.strip() and body.get("recipient_type") == "group":
            wa_id, contact = to, {"input": to, "wa_id": to}  # a group id is opaque, not a number
        elif isinstance(to, str) and to.strip():
            wa_id, contact = _wa_id(to), {"input": to, "wa_id": _wa_id(to)}
        elif isinstance(recipient, str) and recipient.strip():
            # A business-scoped user id: Meta answers with user_id instead of wa_id.
            wa_id, contact = self._bsuids.get(recipient, recipient), {"input": recipient, "user_id": recipient}
        else:
            raise _invalid("the parameter 'to' is required (or 'recipient', a business-scoped user id)")
        recipient_type = body.get("recipient_type", "individual")
        if recipient_type not in ("individual", "group"):
            raise _invalid(f"recipient_type must be 'individual' or 'group', got {recipient_type!r}")
        type_ = body.get("type", "text")  # the Cloud API defaults to text
        if type_ not in MESSAGE_TYPES:
            raise _invalid(f"type must be one of {', '.join(MESSAGE_TYPES)}, got {type_!r}")
        context = body.get("context")
        if context is not None and not (isinstance(context, dict) and isinstance(context.get("message_id"), str)):
            raise _invalid("context must be an object with the message_id (a string) of the message replied to")
        content = body.get(type_)
        if type_ == "contacts" and isinstance(content, list):  # the one type whose object is an array
            content = {"contacts": content}
        if not isinstance(content, dict):
            raise _invalid(f"the parameter '{type_}' (an object) is required for a {type_} message")
        if type_ in MEDIA_TYPES and content.get("id") and str(content["id"]) not in self._media:
            raise _not_valid(f"Invalid media id {content['id']!r}: upload the media first (POST /{{phone-number-id}}"
                             "/media) or send a link")
        text, buttons, extra_text = _content_text(type_, content)
        wamid = new_wamid()
        answer = {
            "messaging_product": "whatsapp",
            "contacts": [contact],
            "messages": [{"id": wamid, "message_status": "accepted"}],
        }
        reply = Reply(
            channel="whatsapp",
            chat=wa_id,
            text=text,
            at=at,
            method="messages",
            kind=type_,
            message_id=wamid,
            buttons=buttons,
            raw=body,
        )
        keys = (f"wa:{wa_id}",) + tuple(doc_token_keys(text + " " + extra_text))
        return answer, keys, reply

    async def _phone_info(self, request: web.Request) -> web.Response:
        started, at = time.perf_counter(), self.clock()
        query = {k: v for k, v in request.query.items() if k != "access_token"}
        media = self.media_files.get(request.match_info["pnid"])
        if media is not None:
            return self._media_info(request, request.match_info["pnid"], media, started, at)
        try:
            self._authorize(request)
            self._check_phone(request, "get")
        except _Rejected as rej:
            self._emit("whatsapp.phone_info", started, at, rej.status, query, rej.body, error=str(rej))
            return web.json_response(rej.body, status=rej.status)
        answer = {
            "verified_name": self.verified_name,
            "display_phone_number": self.display_phone_number,
            "id": self.phone_number_id,
            "quality_rating": "GREEN",
            "code_verification_status": "VERIFIED",
            "platform_type": "CLOUD_API",
            "throughput": {"level": "STANDARD"},
        }
        self._emit("whatsapp.phone_info", started, at, 200, query, answer)
        return web.json_response(answer)

    async def _unknown(self, request: web.Request) -> web.Response:
        # Recorded rather than a bare 404: an agent calling the wrong path is a finding.
        started, at = time.perf_counter(), self.clock()
        body = graph_error("Unknown path components: " + request.path, 2500)
        self._emit("whatsapp.unknown", started, at, 400, {"method": request.method, "path": request.path},
                   body, error=body["error"]["message"])
        return web.json_response(body, status=400)


async def _read_body(request: web.Request) -> Any:
    """The request parameters: JSON normally, form fields when a client posts a form."""
    raw = await request.read()
    if request.content_type == "application/x-www-form-urlencoded":
        form = await request.post()
        params: dict[str, Any] = {}
        for key, value in form.items():
            if key == "access_token":
                continue  # a secret: never recorded
            try:
                params[key] = json.loads(value) if isinstance(value, str) and value[:1] in "{[" else value
            except (ValueError, RecursionError):
                raise _invalid(f"parameter {key} is not valid JSON") from None
        return _utf8_only(params)
    if not raw:
        return {}
    try:
        return _utf8_only(json.loads(raw))
    except RecursionError:
        raise _invalid("the request body is nested too deeply") from None
    except ValueError:
        return raw.decode("utf-8", errors="replace")[:2000]
