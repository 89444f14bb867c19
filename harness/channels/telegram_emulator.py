"""A loopback Telegram Bot API: answers the agent like api.telegram.org and records every call.

The agent's real framework is pointed here (``base_url``) instead of Telegram. Each call
becomes an ``Event`` for the router; the user-visible ones (sendMessage, sendDocument,
sendPhoto, editMessageText) also carry a ``Reply``. Errors use Telegram's own status codes
and descriptions, because agents branch on them (e.g. retry on 429, give up on 400).
What a call is: telegram_calls.py; what Telegram refuses: telegram_limits.py; the methods
themselves: telegram_methods.py.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping
from urllib.parse import parse_qsl

from aiohttp import web

from harness.channels.media import InboundFile
from harness.channels.telegram_calls import (
    _SEND_METHODS, ApiError, _bad, call_keys, canonical_method, chat_of, make_reply, normalize_params, redact,
    to_bool,
)
from harness.channels.telegram_limits import FLOOD_METHODS, FloodLimits, _int, _int_chat, validate_call
from harness.channels.telegram_methods import BotApiMethods, WebhookSettings
from harness.channels.telegram_updates import DEFAULT_BOT_USER, MessageIds
from harness.types import Event

log = logging.getLogger(__name__)


@dataclass
class _Fault:
    code: int
    description: str
    retry_after: int | None


@dataclass
class _State:
    """Per-chat message texts, so edits and deletes can be checked like Telegram does."""

    messages: dict[tuple[int, int], dict[str, Any]] = field(default_factory=dict)


class BotApiEmulator(BotApiMethods):
    """Answers ``/bot<token>/<method>`` like the Bot API and reports each call to ``sink``."""

    def __init__(
        self,
        token: str,
        sink: Callable[[Event], None],
        *,
        clock: Callable[[], float] = time.time,
        message_ids: MessageIds | None = None,
        bot_user: Mapping[str, Any] | None = None,
    ) -> None:
        self.token = token
        self.sink = sink
        self.clock = clock
        self.message_ids = message_ids or MessageIds()
        user = dict(bot_user or DEFAULT_BOT_USER)
        head = token.split(":", 1)[0]
        if bot_user is None and head.isdigit():
            user["id"] = int(head)  # Telegram tokens start with the bot's id
        self.bot_user = user
        self.webhook = WebhookSettings()
        self.webhook_history: list[WebhookSettings] = []
        self.last_error: tuple[float, str] | None = None
        self._faults: dict[str, list[_Fault]] = {}
        self.case_faults = None  # a harness.sandbox.faults.FaultBook, set by the sandbox
        self._state = _State()
        self._deleted: set[tuple[int, int]] = set()
        #: Telegram's flood limits for every chat (None: only where a case's ``fault: {telegram:
        #: flood}`` asks for them, in that case's chats)
        self.flood: FloodLimits | None = None
        self._case_flood = FloodLimits()
        self._pending: list[dict[str, Any]] = []
        self._pending_changed = asyncio.Event()
        self._files = 0
        #: the files the simulated users sent (file_id -> bytes), served by getFile and /file/bot...
        self.files: dict[str, InboundFile] = {}
        self._file_paths: dict[str, str] = {}

    # -- test/harness controls ------------------------------------------------------
    def fail_next(
        self, method: str, error_code: int, description: str, retry_after: int | None = None
    ) -> None:
        """Answer the next call of ``method`` with this error (429 + retry_after for floods)."""
        name = canonical_method(method) or method
        self._faults.setdefault(name, []).append(_Fault(error_code, description, retry_after))

    def note_file(self, file_id: str, file: InboundFile) -> None:
        """A file the driver sent as the user: ``getFile`` describes it, ``/file/bot<token>/...`` serves it."""
        self.files[str(file_id)] = file

    def note_delivery_error(self, message: str) -> None:
        """Remember a failed webhook delivery so getWebhookInfo reports it, like Telegram."""
        self.last_error = (self.clock(), message)

    def enqueue_update(self, update: dict[str, Any]) -> None:
        """Queue an update for a bot that polls with getUpdates (no webhook)."""
        self._pending.append(update)
        self._pending_changed.set()

    def app(self) -> web.Application:
        """The aiohttp application to serve (with ``harness.sandbox.server.listen``)."""
        app = web.Application(client_max_size=60 * 1024 * 1024)  # uploads up to 50 MB pass
        app.router.add_route("*", "/{path:.*}", self._handle)
        return app

    # -- HTTP -----------------------------------------------------------------------
    async def _handle(self, request: web.Request) -> web.Response:
        at = self.clock()
        started = time.perf_counter()
        if request.path.startswith("/file/bot"):
            return self._download(request, at, started)
        # /bot<token>/<method>, or /bot<token>/test/<method> (the test environment's path)
        m = re.fullmatch(r"/bot([^/]+)/(?:test/)?([^/]+)/?", request.path)
        given = m.group(2) if m else request.path.rsplit("/", 1)[-1]
        method = canonical_method(given) or given
        params: dict[str, Any] = {}
        result: Any = None
        error: ApiError | None = None
        try:
            if m is None:  # the Bot API server answers any HTTP method; only the path counts
                raise ApiError(404, "Not Found")
            if m.group(1) != self.token:
                raise ApiError(401, "Unauthorized")
            if canonical_method(given) is None:
                raise ApiError(404, "Not Found")
            params = normalize_params(await self._params(request))
            if self.case_faults is not None:  # per-case scripted faults (harness/sandbox/faults.py)
                fault = await self.case_faults.before_channel("telegram", call_keys(method, params), method)
                if fault is not None and fault.kind == "flood":
                    if method in FLOOD_METHODS:
                        self._case_flood.check(chat_of(method, params), at)
                    fault = None
                if fault is not None:
                    ra = fault.retry_after
                    raise ApiError(fault.status, f"Injected fault: {fault.describe()}",
                                   int(ra) if ra is not None else None)
            if self.flood is not None and method in FLOOD_METHODS:
                self.flood.check(chat_of(method, params), at)
            faults = self._faults.get(method)
            if faults:
                fault = faults.pop(0)
                raise ApiError(fault.code, fault.description, fault.retry_after)
            validate_call(method, params)
            self._check_reply_target(method, params)
            result = await getattr(self, f"_m_{method}")(params, at)
        except ApiError as exc:
            error = exc
        except web.HTTPRequestEntityTooLarge:  # over client_max_size: the server's own 413
            error = ApiError(413, "Request Entity Too Large")
        except Exception as exc:  # noqa: BLE001 - a malformed call Telegram answers 400, never a 500
            log.debug("telegram emulator: %s refused as malformed", method, exc_info=True)
            error = _bad(f"invalid request ({type(exc).__name__})")
        if error is None:
            body: dict[str, Any] = {"ok": True, "result": result}
            if method == "setWebhook":
                body["description"] = "Webhook was set" if self.webhook.url else "Webhook was deleted"
            elif method == "deleteWebhook":
                body["description"] = "Webhook was deleted"
            status = 200
        else:
            body, status = error.body(), error.code
        reply = None
        if error is None and isinstance(result, Mapping):
            reply = make_reply(method, params, at=at, via=method, message_id=result.get("message_id"))
            if reply is not None and method in ("copyMessage", "forwardMessage"):  # the user sees the source's text
                stored = self._state.messages.get((_int_chat(params.get("chat_id")), _int(result.get("message_id"))))
                shown = (stored or {}).get("text") or (stored or {}).get("caption") or ""
                reply = replace(reply, text=shown, raw_text=shown)
        elif error is None and isinstance(result, list) and result and isinstance(result[0], Mapping):
            reply = make_reply(method, params, at=at, via=method, message_id=result[0].get("message_id"))
        self._emit(
            Event(
                source="telegram",
                name=f"telegram.{method}",
                at=at,
                status=status,
                duration_ms=(time.perf_counter() - started) * 1000,
                request=redact(params),
                response=body,
                keys=call_keys(method, params) + self._file_keys(method, params),
                reply=reply,
                error=error.description if error else "",
            )
        )
        return web.json_response(body, status=status)

    def _file_keys(self, method: str, params: Mapping[str, Any]) -> tuple[str, ...]:
        """getFile of a file a user sent is that user's case's call."""
        if method != "getFile":
            return ()
        file = self.files.get(str(params.get("file_id") or ""))
        return file.keys if file is not None else ()

    def _download(self, request: web.Request, at: float, started: float) -> web.Response:
        """``GET /file/bot<token>/<file_path>``: the bytes of a file ``getFile`` described (404 else,
        as the Bot API server answers a path it does not hold)."""
        m = re.fullmatch(r"/file/bot([^/]+)/(.+)", request.path)
        file_id = self._file_paths.get(m.group(2)) if m and m.group(1) == self.token else None
        file = self.files.get(file_id) if file_id else None
        status = 200 if file is not None and request.method in ("GET", "HEAD") else 404
        self._emit(Event(source="telegram", name="telegram.download", at=at, status=status,
                         duration_ms=(time.perf_counter() - started) * 1000,
                         request={"file_path": m.group(2) if m else ""}, keys=file.keys if file else (),
                         response={"bytes": len(file.data), "origin": file.origin} if status == 200 and file else {},
                         error="" if status == 200 else "Not Found"))
        if status != 200 or file is None:
            return web.json_response({"ok": False, "error_code": 404, "description": "Not Found"}, status=404)
        return web.Response(body=file.data, content_type="application/octet-stream")

    def _check_reply_target(self, method: str, params: Mapping[str, Any]) -> None:
        """A reply must name a message of the chat (``reply_parameters.message_id`` or the older
        ``reply_to_message_id``): Telegram refuses it otherwise, unless the bot allowed sending
        without the reply."""
        if method not in _SEND_METHODS:
            return
        rp = params.get("reply_parameters")
        target, allow = None, to_bool(params.get("allow_sending_without_reply"))
        if isinstance(rp, Mapping):  # (then the top-level allow_sending_without_reply is not read)
            target, allow = rp.get("message_id"), to_bool(rp.get("allow_sending_without_reply"))
            if rp.get("chat_id") not in (None, "", params.get("chat_id")):
                return  # a reply into another chat: not this emulator's to judge
        elif params.get("reply_to_message_id") not in (None, ""):
            target = params.get("reply_to_message_id")
        if target in (None, ""):
            return
        chat, mid = _int_chat(params.get("chat_id")), _int(target)
        if mid <= 0:  # the Bot API reads a message id of 0 or less as no reply at all
            return
        if self._message_exists(chat, mid):
            return
        if not allow:
            raise _bad("message to be replied not found")

    def _message_exists(self, chat: int, mid: int) -> bool:
        """Sent by the bot and not deleted, or issued to the user's side of the chat (the driver's
        updates draw their ids from the same per-chat counter)."""
        if (chat, mid) in self._state.messages:
            return True
        if (chat, mid) in self._deleted:
            return False
        return 0 < mid <= self.message_ids.last(chat)

    def _emit(self, event: Event) -> None:
        try:
            self.sink(event)
        except Exception:  # a recording bug must not turn into a 500 the agent reacts to
            log.exception("telegram emulator: sink failed for %s", event.name)

    @staticmethod
    async def _params(request: web.Request) -> dict[str, Any]:
        """Query string plus JSON, urlencoded or multipart body (uploads summarized)."""
        params: dict[str, Any] = _form(request.rel_url.raw_query_string)
        if not request.body_exists:
            return params
        ctype = request.content_type
        if ctype == "application/json":
            raw = await request.read()
            try:
                if raw.startswith(b"\xef\xbb\xbf"):  # json.loads would skip a BOM; the Bot API does not
                    raise ValueError("BOM")
                data = json.loads(raw)
            except (ValueError, RecursionError):  # bad UTF-8, not JSON, nested past the parser's depth
                raise _bad("can't parse JSON") from None
            if not isinstance(data, dict):
                raise _bad("can't parse JSON")
            params.update(data)
        elif ctype == "multipart/form-data":
            try:
                await _read_multipart(request, params)
            except (ApiError, web.HTTPRequestEntityTooLarge):
                raise
            except Exception:  # truncated parts, a missing boundary, undecodable text
                raise _bad("can't parse multipart/form-data request") from None
        else:  # urlencoded, or a body without a usable type: Telegram reads it as a form
            try:
                raw = (await request.read()).decode("utf-8")
            except UnicodeDecodeError:
                raise _bad("can't parse request: not UTF-8") from None
            params.update(_form(raw))
        return params


def _form(raw: str) -> dict[str, Any]:
    """A query string or urlencoded body. A %-escape that is not UTF-8 (``%ED%A0%80``, a lone
    surrogate; ``%E9``, Latin-1) is refused as the Bot API refuses such text, not read as U+FFFD."""
    try:
        pairs = parse_qsl(raw, keep_blank_values=True, errors="strict")
    except UnicodeDecodeError:
        raise _bad("strings must be encoded in UTF-8") from None
    return dict(pairs)


def webhook_reply_event(body: Mapping[str, Any], at: float) -> Event:
    """The Event for a method call the bot made in its webhook answer's body.

    Telegram executes such calls without answering them, so an invalid one is recorded
    as failed (status 400) with no Reply: the user would have seen nothing.
    """
    given = str(body.get("method", ""))
    method = canonical_method(given) or given
    params = normalize_params({k: v for k, v in body.items() if k != "method"})
    status, error, reply = 200, "", None
    try:
        if canonical_method(given) is None:
            raise ApiError(404, "Not Found")
        validate_call(method, params)
        reply = make_reply(method, params, at=at, via="webhook-response")
    except ApiError as exc:
        status, error = exc.code, exc.description
    return Event(
        source="telegram",
        name=f"telegram.{method}",
        at=at,
        status=status,
        request=redact(params),
        keys=call_keys(method, params),
        reply=reply,
        error=error,
        meta={"via": "webhook-response"},
    )


#: What a bot may upload in one call (core.telegram.org/bots/api#sending-files: 50 MB); past
#: it the Bot API answers 413 Request Entity Too Large.
MAX_UPLOAD_BYTES = 50 * 1024 * 1024


async def _read_multipart(request: web.Request, params: dict[str, Any]) -> None:
    """A multipart body's fields into ``params`` (uploads summarized by name and size, never kept)."""
    reader = await request.multipart()
    total = [0]
    async for part in reader:
        if part.name is None:
            continue
        if part.filename is not None:
            size = 0
            while chunk := await part.read_chunk():
                size += len(chunk)
                total[0] += len(chunk)
                if total[0] > MAX_UPLOAD_BYTES:  # read on to no end, never kept
                    raise ApiError(413, "Request Entity Too Large")
            params[part.name] = {"upload": part.filename, "size": size,
                                 "content_type": part.headers.get("Content-Type", "")}
        else:
            params[part.name] = await part.text()


__all__ = ["BotApiEmulator", "webhook_reply_event"]
