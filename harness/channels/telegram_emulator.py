"""A loopback Telegram Bot API: answers the agent like api.telegram.org and records every call.

The agent's real framework is pointed here (``base_url``) instead of Telegram. Each call
becomes an ``Event`` for the router; the user-visible ones (sendMessage, sendDocument,
sendPhoto, editMessageText) also carry a ``Reply``. Errors use Telegram's own status codes
and descriptions, because agents branch on them (e.g. retry on 429, give up on 400).
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping
from urllib.parse import parse_qsl

from aiohttp import web

from harness.channels.telegram_markup import Formatted, ParseError, canonical_mode, parse, utf16_len
from harness.channels.telegram_updates import DEFAULT_BOT_USER, MessageIds, callback_chat
from harness.sandbox.router import doc_token_keys
from harness.types import Event, Reply

log = logging.getLogger(__name__)

#: Bot API method names in their canonical spelling; requests match them case-insensitively.
KNOWN_METHODS: tuple[str, ...] = (
    "getMe", "logOut", "close", "getUpdates", "setWebhook", "deleteWebhook", "getWebhookInfo",
    "sendMessage", "sendChatAction", "sendDocument", "sendPhoto", "editMessageText",
    "editMessageReplyMarkup", "answerCallbackQuery", "deleteMessage", "getFile", "getChat",
    "setMyCommands", "deleteMyCommands", "getMyCommands", "setChatMenuButton",
    "setMessageReaction", "setMyDescription", "setMyShortDescription", "setMyName",
)
_CANONICAL = {m.lower(): m for m in KNOWN_METHODS}

#: Methods whose success shows the user something, and the Reply.kind they produce.
REPLY_KINDS: dict[str, str] = {
    "sendMessage": "text",
    "sendDocument": "document",
    "sendPhoto": "photo",
    "editMessageText": "edit",
}
#: Methods that send a message (a reply to a missing message is refused).
_SEND_METHODS = {"sendMessage", "sendDocument", "sendPhoto"}
_CHAT_METHODS = {
    "sendMessage", "sendChatAction", "sendDocument", "sendPhoto", "deleteMessage", "getChat",
    "setMessageReaction",
}
# Form and multipart bodies carry nested values as JSON strings.
_JSON_FIELDS = {
    "reply_markup", "entities", "caption_entities", "allowed_updates", "reply_parameters",
    "link_preview_options", "commands", "scope", "menu_button", "reaction",
}
_SECRET_FIELDS = {"secret_token"}
_CHAT_ACTIONS = {
    "typing", "upload_photo", "record_video", "upload_video", "record_voice", "upload_voice",
    "upload_document", "choose_sticker", "find_location", "record_video_note",
    "upload_video_note",
}
_SECRET_RE = re.compile(r"^[A-Za-z0-9_-]{1,256}$")
MAX_TEXT = 4096
MAX_CAPTION = 1024
#: callback_data is 1-64 bytes (core.telegram.org/bots/api#inlinekeyboardbutton).
MAX_CALLBACK_DATA = 64
#: Buttons in one inline keyboard before Telegram answers REPLY_MARKUP_TOO_LONG (observed; unpublished).
MAX_BUTTONS = 100
_INLINE_ACTIONS = ("url", "callback_data", "web_app", "login_url", "switch_inline_query",
                   "switch_inline_query_current_chat", "switch_inline_query_chosen_chat", "copy_text",
                   "callback_game", "pay")


class ApiError(Exception):
    """A Telegram-style failure answer: HTTP ``code`` with ``{"ok": false, ...}``."""

    def __init__(self, code: int, description: str, retry_after: int | None = None):
        super().__init__(description)
        self.code = code
        self.description = description
        self.retry_after = retry_after

    def body(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ok": False, "error_code": self.code, "description": self.description}
        if self.retry_after is not None:
            out["parameters"] = {"retry_after": self.retry_after}
        return out


def _bad(description: str) -> ApiError:
    return ApiError(400, f"Bad Request: {description}")


# -- conversion shared by the emulator and webhook answers --------------------------------
def canonical_method(name: str) -> str | None:
    """``SENDMESSAGE`` -> ``sendMessage``; None for a method the emulator does not know."""
    return _CANONICAL.get((name or "").lower())


def normalize_params(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Decode JSON-string fields of form bodies so every body type looks alike."""
    out = dict(raw)
    for key in ("chat_id", "message_id"):
        # forms carry numbers as strings; JSON bodies as numbers: record one shape
        if isinstance(out.get(key), str) and re.fullmatch(r"-?\d{1,20}", out[key].strip()):
            out[key] = int(out[key])
    for key in _JSON_FIELDS & out.keys():
        if isinstance(out[key], str):
            try:
                out[key] = json.loads(out[key])
            except (ValueError, RecursionError):
                pass  # left as is; validation reports what Telegram would
    return out


def redact(params: Mapping[str, Any]) -> dict[str, Any]:
    """Params fit for an event: the webhook secret is replaced (the bot token never gets in)."""
    return {k: ("***" if k in _SECRET_FIELDS and v else v) for k, v in params.items()}


def chat_of(method: str, params: Mapping[str, Any]) -> str:
    """The chat a call concerns, as a string ('' when none can be told)."""
    if params.get("chat_id") not in (None, ""):
        return str(params["chat_id"])
    if method == "answerCallbackQuery":
        chat = callback_chat(str(params.get("callback_query_id", "")))
        return "" if chat is None else str(chat)
    return ""


def call_keys(method: str, params: Mapping[str, Any]) -> tuple[str, ...]:
    """Correlation keys: the chat, and any document token the text or caption names."""
    chat = chat_of(method, params)
    keys = [f"tg:{chat}"] if chat else []
    for field_name in ("text", "caption"):
        value = params.get(field_name)
        if isinstance(value, str):
            keys += doc_token_keys(value)
    return tuple(dict.fromkeys(keys))


def reply_buttons(markup: Any) -> tuple[str, ...]:
    """Button labels of an inline keyboard (or a reply keyboard), in reading order."""
    if not isinstance(markup, Mapping):
        return ()
    rows = markup.get("inline_keyboard") or markup.get("keyboard") or []
    labels: list[str] = []
    for row in rows if isinstance(rows, list) else []:
        for button in row if isinstance(row, list) else []:
            if isinstance(button, Mapping) and isinstance(button.get("text"), str):
                labels.append(button["text"])
            elif isinstance(button, str):
                labels.append(button)
    return tuple(labels)


def make_reply(
    method: str, params: Mapping[str, Any], *, at: float, via: str, message_id: Any = ""
) -> Reply | None:
    """The Reply a successful user-visible call delivers; None for other methods."""
    kind = REPLY_KINDS.get(method)
    if kind is None:
        return None
    text = params.get("caption") if kind in ("document", "photo") else params.get("text")
    text = text if isinstance(text, str) else ""
    try:
        shown = formatted(method, params)
    except ParseError:  # only reached for calls that were not validated first
        shown = Formatted(text)
    return Reply(
        channel="telegram",
        chat=chat_of(method, params),
        text=shown.text,
        at=at,
        method=via,
        kind=kind,
        message_id="" if message_id in (None, "") else str(message_id),
        buttons=reply_buttons(params.get("reply_markup")),
        raw=redact(params),
        raw_text=text,
        parse_mode=canonical_mode(params.get("parse_mode")) or "",
        entities=shown.entities,
    )


def formatted(method: str, params: Mapping[str, Any]) -> Formatted:
    """The text (or caption) of a call as the user sees it, with its entities.

    Explicit ``entities`` / ``caption_entities`` win over ``parse_mode``, as in the Bot API.
    Raises ``ParseError`` with TDLib's message when the markup does not parse.
    """
    field_name = "caption" if method in ("sendDocument", "sendPhoto") else "text"
    text = params.get(field_name)
    if not isinstance(text, str):
        return Formatted("")
    given = params.get("caption_entities" if field_name == "caption" else "entities")
    if isinstance(given, list):
        return Formatted(text, tuple(e for e in given if isinstance(e, Mapping)))
    return parse(text, params.get("parse_mode"))


def _int(value: Any, default: int = 0) -> int:
    """An integer parameter; Telegram rejects what is not one."""
    if value in (None, ""):
        return default
    try:
        return int(str(value).strip())
    except ValueError:
        raise _bad("wrong parameter in request") from None


def _seconds(value: Any) -> float:
    """A number of seconds (``timeout``); Telegram rejects what is not a number."""
    if value in (None, ""):
        return 0.0
    try:
        out = float(str(value).strip())
    except ValueError:
        raise _bad("wrong parameter timeout in request") from None
    if out != out or out in (float("inf"), float("-inf")):
        raise _bad("wrong parameter timeout in request")
    return out


def _int_chat(value: Any) -> int:
    """A numeric chat id; Telegram answers "chat not found" to anything else."""
    try:
        return int(str(value).strip())
    except ValueError:
        raise _bad("chat not found") from None


def _not_utf8(value: Any, depth: int = 0) -> bool:
    """True when a string anywhere in ``value`` holds a lone surrogate (a JSON ``"\\ud800"`` escape):
    such text is not UTF-8, and the Bot API refuses it."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if depth > 32:
        return False
    if isinstance(value, Mapping):
        return any(_not_utf8(k, depth + 1) or _not_utf8(v, depth + 1) for k, v in value.items())
    if isinstance(value, list):
        return any(_not_utf8(v, depth + 1) for v in value)
    return False


#: Parameters that must be a string (or a number Telegram reads as one) when given.
_SCALARS = ("chat_id", "message_id", "text", "caption", "parse_mode", "action", "offset", "limit", "timeout",
            "callback_query_id", "inline_message_id", "url", "secret_token", "file_id")


def validate_call(method: str, params: Mapping[str, Any]) -> None:
    """Stateless checks Telegram makes before acting; raises ``ApiError`` like it would."""
    for key, value in params.items():
        if _not_utf8(value):
            raise _bad(f"{'text' if key in ('text', 'caption') else 'strings'} must be encoded in UTF-8")
    for key in _SCALARS:
        if isinstance(params.get(key), (Mapping, list)):
            raise _bad(f"field \"{key}\" must be of type {'Integer' if key in ('offset', 'limit', 'timeout', 'message_id') else 'String'}")
    for key in ("reply_parameters", "link_preview_options"):
        if key in params and params[key] is not None and not isinstance(params[key], Mapping):
            raise _bad(f"can't parse {key} JSON object")
    for key in ("entities", "caption_entities"):
        if key in params and params[key] is not None:
            _check_entities(params[key])
    if method in _CHAT_METHODS:
        if params.get("chat_id") in (None, ""):
            raise _bad("chat_id is empty")
        _int_chat(params["chat_id"])
    parse_mode = params.get("parse_mode")
    if canonical_mode(parse_mode) is None:
        raise _bad("unsupported parse_mode")
    if method in ("sendMessage", "editMessageText"):
        text = params.get("text")
        if not isinstance(text, str) or not text.strip():
            raise _bad("message text is empty")
        shown = _parsed(method, params)
        if not shown.text.strip():
            raise _bad("message text is empty")
        if utf16_len(shown.text) > MAX_TEXT:  # counted after parsing, in UTF-16 code units
            raise _bad("message is too long" if method == "sendMessage" else "MESSAGE_TOO_LONG")
    if method in ("sendDocument", "sendPhoto"):
        what = "document" if method == "sendDocument" else "photo"
        if params.get(what) in (None, ""):
            raise _bad(f"there is no {what} in the request")
        if isinstance(params.get("caption"), str):
            if utf16_len(_parsed(method, params).text) > MAX_CAPTION:
                raise _bad("message caption is too long")
    if method == "editMessageText":
        if params.get("inline_message_id") in (None, ""):
            if params.get("chat_id") in (None, ""):
                raise _bad("chat_id is empty")
            _int_chat(params["chat_id"])
            if params.get("message_id") in (None, ""):
                raise _bad("message identifier is not specified")
            _int(params["message_id"])
    if method == "sendChatAction" and params.get("action") not in _CHAT_ACTIONS:
        raise _bad("wrong parameter action in request")
    if method == "answerCallbackQuery" and not params.get("callback_query_id"):
        raise _bad("query is too old and response timeout expired or query ID is invalid")
    markup = params.get("reply_markup")
    if markup is not None and not isinstance(markup, Mapping):
        raise _bad("can't parse reply keyboard markup JSON object")
    if isinstance(markup, Mapping) and "inline_keyboard" in markup:
        _check_inline_keyboard(markup["inline_keyboard"])


def _check_entities(entities: Any) -> None:
    """Explicit ``entities``: a list of objects with a type and integer offset and length."""
    if not isinstance(entities, list):
        raise _bad("can't parse entities JSON object")
    for e in entities:
        if not isinstance(e, Mapping) or not isinstance(e.get("type"), str):
            raise _bad("can't parse MessageEntity: field \"type\" must be of type String")
        for field in ("offset", "length"):
            if isinstance(e.get(field), bool) or not isinstance(e.get(field), int):
                raise _bad(f"can't parse MessageEntity: field \"{field}\" must be of type Number")


def _parsed(method: str, params: Mapping[str, Any]) -> Formatted:
    try:
        return formatted(method, params)
    except ParseError as exc:
        raise _bad(f"can't parse entities: {exc}") from None


def _check_inline_keyboard(rows: Any) -> None:
    """The inline keyboard rules of the Bot API (InlineKeyboardMarkup, InlineKeyboardButton)."""
    if not isinstance(rows, list) or not all(isinstance(r, list) for r in rows):
        raise _bad("can't parse inline keyboard button: field \"inline_keyboard\" of the InlineKeyboardMarkup "
                   "must be an Array of Arrays")
    count = 0
    for row in rows:
        for button in row:
            count += 1
            if not isinstance(button, Mapping):
                raise _bad("can't parse inline keyboard button: InlineKeyboardButton must be an Object")
            if not isinstance(button.get("text"), str):
                raise _bad("can't parse inline keyboard button: Can't find field \"text\"")
            if not any(k in button for k in _INLINE_ACTIONS):
                raise _bad("can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard")
            if not button["text"].strip():
                raise _bad("BUTTON_TEXT_INVALID")
            if "callback_data" in button:
                data = button["callback_data"]
                if not isinstance(data, str) or not 1 <= len(data.encode("utf-8")) <= MAX_CALLBACK_DATA:
                    raise _bad("BUTTON_DATA_INVALID")
            if "url" in button and not str(button["url"]).strip():
                raise _bad("BUTTON_URL_INVALID")
    if count > MAX_BUTTONS:
        raise _bad("REPLY_MARKUP_TOO_LONG")


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


# -- flood limits ---------------------------------------------------------------------------
#: Methods that put a message in a chat, counted by the flood limits.
FLOOD_METHODS = {"sendMessage", "sendDocument", "sendPhoto", "editMessageText", "editMessageReplyMarkup"}


@dataclass
class FloodLimits:
    """Telegram's flood limits (core.telegram.org/bots/faq, "My bot is hitting limits"): about
    one message a second in a chat (short bursts allowed), 20 a minute in a group, 30 a second
    overall. Exceeding one is ``429 Too Many Requests: retry after N`` with
    ``parameters.retry_after``. Token buckets: ``burst`` messages, refilled at the rate."""

    per_chat_per_s: float = 1.0
    burst: int = 3
    per_group_per_min: int = 20
    global_per_s: int = 30
    _buckets: dict[str, tuple[float, float]] = field(default_factory=dict)

    def _take(self, key: str, capacity: float, rate: float, now: float) -> float:
        """0 when a message may go now (one token taken), else seconds until one may."""
        tokens, last = self._buckets.get(key, (capacity, now))
        tokens = min(capacity, tokens + (now - last) * rate)
        if tokens >= 1:
            self._buckets[key] = (tokens - 1, now)
            return 0.0
        self._buckets[key] = (tokens, now)
        return (1 - tokens) / rate

    def check(self, chat: str, now: float) -> None:
        """Raise the 429 Telegram would give a message to ``chat`` now."""
        wait = self._take("*", self.global_per_s, self.global_per_s, now)
        if not wait and chat:
            group = chat.startswith("-")
            wait = (self._take(chat, self.per_group_per_min, self.per_group_per_min / 60, now) if group
                    else self._take(chat, self.burst, self.per_chat_per_s, now))
        if wait:
            retry = max(1, math.ceil(wait))
            raise ApiError(429, f"Too Many Requests: retry after {retry}", retry_after=retry)


# -- the emulator -------------------------------------------------------------------------
@dataclass(frozen=True)
class WebhookSettings:
    """What the bot last asked for with setWebhook ('' url: no webhook)."""

    url: str = ""
    secret_token: str = ""
    max_connections: int = 40
    allowed_updates: tuple[str, ...] | None = None
    drop_pending_updates: bool = False
    ip_address: str = ""
    at: float = 0.0


@dataclass
class _Fault:
    code: int
    description: str
    retry_after: int | None


@dataclass
class _State:
    """Per-chat message texts, so edits and deletes can be checked like Telegram does."""

    messages: dict[tuple[int, int], dict[str, Any]] = field(default_factory=dict)


class BotApiEmulator:
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

    # -- test/harness controls ------------------------------------------------------
    def fail_next(
        self, method: str, error_code: int, description: str, retry_after: int | None = None
    ) -> None:
        """Answer the next call of ``method`` with this error (429 + retry_after for floods)."""
        name = canonical_method(method) or method
        self._faults.setdefault(name, []).append(_Fault(error_code, description, retry_after))

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
        m = re.fullmatch(r"/bot([^/]+)/([^/]+)/?", request.path)
        given = m.group(2) if m else request.path.rsplit("/", 1)[-1]
        method = canonical_method(given) or given
        params: dict[str, Any] = {}
        result: Any = None
        error: ApiError | None = None
        try:
            if m is None or request.method not in ("GET", "POST"):
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
        self._emit(
            Event(
                source="telegram",
                name=f"telegram.{method}",
                at=at,
                status=status,
                duration_ms=(time.perf_counter() - started) * 1000,
                request=redact(params),
                response=body,
                keys=call_keys(method, params),
                reply=reply,
                error=error.description if error else "",
            )
        )
        return web.json_response(body, status=status)

    def _check_reply_target(self, method: str, params: Mapping[str, Any]) -> None:
        """A reply must name a message of the chat (``reply_parameters.message_id`` or the older
        ``reply_to_message_id``): Telegram refuses it otherwise, unless the bot allowed sending
        without the reply."""
        if method not in _SEND_METHODS:
            return
        rp = params.get("reply_parameters")
        target, allow = None, bool(params.get("allow_sending_without_reply"))
        if isinstance(rp, Mapping) and rp.get("message_id") is not None:
            target, allow = rp.get("message_id"), allow or bool(rp.get("allow_sending_without_reply"))
            if rp.get("chat_id") not in (None, "", params.get("chat_id")):
                return  # a reply into another chat: not this emulator's to judge
        elif params.get("reply_to_message_id") not in (None, ""):
            target = params.get("reply_to_message_id")
        if target is None:
            return
        chat, mid = _int_chat(params.get("chat_id")), _int(target)
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
        params: dict[str, Any] = dict(request.query)
        if request.method != "POST" or not request.body_exists:
            return params
        ctype = request.content_type
        if ctype == "application/json":
            try:
                data = json.loads(await request.read())
            except (ValueError, RecursionError):  # bad UTF-8, not JSON, nested past the parser's depth
                raise _bad("can't parse JSON") from None
            if not isinstance(data, dict):
                raise _bad("can't parse JSON")
            params.update(data)
        elif ctype == "multipart/form-data":
            try:
                await _read_multipart(request, params)
            except ApiError:
                raise
            except Exception:  # truncated parts, a missing boundary, undecodable text
                raise _bad("can't parse multipart/form-data request") from None
        else:  # urlencoded, or a body without a usable type: Telegram reads it as a form
            try:
                raw = (await request.read()).decode("utf-8")
            except UnicodeDecodeError:
                raise _bad("can't parse request: not UTF-8") from None
            params.update(parse_qsl(raw, keep_blank_values=True))
        return params

    # -- helpers ----------------------------------------------------------------------
    def _chat(self, chat_id: int) -> dict[str, Any]:
        if chat_id > 0:
            return {"id": chat_id, "type": "private", "first_name": "Tester"}
        kind = "supergroup" if str(chat_id).startswith("-100") else "group"
        return {"id": chat_id, "type": kind, "title": "Harness group"}

    def _new_message(self, params: Mapping[str, Any], at: float) -> dict[str, Any]:
        chat_id = _int_chat(params["chat_id"])
        msg: dict[str, Any] = {
            "message_id": self.message_ids.next(chat_id),
            "from": dict(self.bot_user),
            "chat": self._chat(chat_id),
            "date": int(at),
        }
        if isinstance(params.get("reply_markup"), Mapping) and "inline_keyboard" in params["reply_markup"]:
            msg["reply_markup"] = params["reply_markup"]  # only inline keyboards are echoed
        rp = params.get("reply_parameters")
        target = rp.get("message_id") if isinstance(rp, Mapping) else params.get("reply_to_message_id")
        if target not in (None, "") and (not isinstance(rp, Mapping) or rp.get("chat_id") in (None, "", params["chat_id"])):
            mid = _int(target)
            if self._message_exists(chat_id, mid):  # (_check_reply_target refused a missing one unless allowed)
                msg["reply_to_message"] = self._state.messages.get(
                    (chat_id, mid), {"message_id": mid, "date": int(at), "chat": self._chat(chat_id)})
        return msg

    def _store(self, msg: dict[str, Any]) -> dict[str, Any]:
        self._state.messages[(msg["chat"]["id"], msg["message_id"])] = msg
        return msg

    def _file(self, value: Any, kind: str) -> dict[str, Any]:
        self._files += 1
        n = self._files
        name = value.get("upload") if isinstance(value, Mapping) else None
        size = value.get("size") if isinstance(value, Mapping) else None
        out: dict[str, Any] = {"file_id": f"{kind[:2].upper()}{n:08d}emu", "file_unique_id": f"AgAD{n:06d}"}
        if size is not None:
            out["file_size"] = size
        if name:
            out["file_name"] = name
        return out

    def _caption(self, msg: dict[str, Any], params: Mapping[str, Any]) -> None:
        if params.get("caption"):
            self._text(msg, formatted("sendDocument", params), "caption")

    # -- methods (each returns the ``result``, or raises ApiError) -----------------------
    async def _m_getMe(self, params: Mapping[str, Any], at: float) -> Any:
        return {
            **self.bot_user,
            "can_join_groups": True,
            "can_read_all_group_messages": False,
            "supports_inline_queries": False,
            "can_connect_to_business": False,
            "has_main_web_app": False,
        }

    async def _m_logOut(self, params: Mapping[str, Any], at: float) -> Any:
        return True

    _m_close = _m_logOut

    async def _m_setWebhook(self, params: Mapping[str, Any], at: float) -> Any:
        url = str(params.get("url") or "")
        secret = str(params.get("secret_token") or "")
        if url and not re.match(r"^[a-z][a-z0-9+.-]*://", url, re.I):
            raise _bad("invalid webhook URL specified")
        if secret and not _SECRET_RE.match(secret):
            raise _bad("secret token contains unallowed characters")
        allowed = params.get("allowed_updates")
        self.webhook = WebhookSettings(
            url=url,
            secret_token=secret,
            max_connections=_int(params.get("max_connections"), 40),
            allowed_updates=tuple(allowed) if isinstance(allowed, list) else None,
            drop_pending_updates=str(params.get("drop_pending_updates")).lower() in ("true", "1"),
            ip_address=str(params.get("ip_address") or ""),
            at=at,
        )
        self.webhook_history.append(self.webhook)
        if self.webhook.drop_pending_updates:
            self._pending.clear()
        return True

    async def _m_deleteWebhook(self, params: Mapping[str, Any], at: float) -> Any:
        self.webhook = WebhookSettings(at=at)
        self.webhook_history.append(self.webhook)
        if str(params.get("drop_pending_updates")).lower() in ("true", "1"):
            self._pending.clear()
        return True

    async def _m_getWebhookInfo(self, params: Mapping[str, Any], at: float) -> Any:
        hook = self.webhook
        info: dict[str, Any] = {
            "url": hook.url,
            "has_custom_certificate": False,
            "pending_update_count": len(self._pending),
        }
        if hook.url:
            info["max_connections"] = hook.max_connections
            if hook.ip_address:
                info["ip_address"] = hook.ip_address
            if hook.allowed_updates is not None:
                info["allowed_updates"] = list(hook.allowed_updates)
            if self.last_error:
                info["last_error_date"] = int(self.last_error[0])
                info["last_error_message"] = self.last_error[1]
        return info

    async def _m_getUpdates(self, params: Mapping[str, Any], at: float) -> Any:
        if self.webhook.url:
            raise ApiError(
                409,
                "Conflict: can't use getUpdates method while webhook is active; "
                "use deleteWebhook to delete the webhook first",
            )
        offset = _int(params.get("offset"))
        if offset:
            self._pending = [u for u in self._pending if u["update_id"] >= offset]
        limit = max(1, min(100, _int(params.get("limit"), 100)))
        # long polling: wait a little for updates, capped so servers stop promptly
        wait = min(max(0.0, _seconds(params.get("timeout"))), 5.0)
        if not self._pending and wait > 0:
            self._pending_changed.clear()
            try:
                await asyncio.wait_for(self._pending_changed.wait(), wait)
            except asyncio.TimeoutError:
                pass
        return self._pending[:limit]

    async def _m_sendMessage(self, params: Mapping[str, Any], at: float) -> Any:
        msg = self._new_message(params, at)
        self._text(msg, formatted("sendMessage", params), "text")
        return self._store(msg)

    @staticmethod
    def _text(msg: dict[str, Any], shown: Formatted, key: str) -> None:
        """Set the rendered text (or caption) and its entities, as Telegram returns them."""
        msg[key] = shown.text
        msg.pop("entities" if key == "text" else "caption_entities", None)
        if shown.entities:
            msg["entities" if key == "text" else "caption_entities"] = [dict(e) for e in shown.entities]

    async def _m_sendDocument(self, params: Mapping[str, Any], at: float) -> Any:
        msg = self._new_message(params, at)
        doc = self._file(params["document"], "document")
        if isinstance(params["document"], Mapping):
            doc["mime_type"] = params["document"].get("content_type") or "application/octet-stream"
        msg["document"] = doc
        self._caption(msg, params)
        return self._store(msg)

    async def _m_sendPhoto(self, params: Mapping[str, Any], at: float) -> Any:
        msg = self._new_message(params, at)
        base = self._file(params["photo"], "photo")
        base.pop("file_name", None)
        msg["photo"] = [{**base, "width": 800, "height": 600}]
        self._caption(msg, params)
        return self._store(msg)

    async def _m_sendChatAction(self, params: Mapping[str, Any], at: float) -> Any:
        return True

    async def _m_editMessageText(self, params: Mapping[str, Any], at: float) -> Any:
        if params.get("inline_message_id"):
            return True  # inline messages: Telegram answers true, not the message
        key = (_int_chat(params["chat_id"]), _int(params["message_id"]))
        old = self._state.messages.get(key)
        if old is None:
            raise _bad("message to edit not found")
        markup = params.get("reply_markup")
        shown = formatted("editMessageText", params)
        if (old.get("text") == shown.text and old.get("entities", []) == [dict(e) for e in shown.entities]
                and old.get("reply_markup") == markup):
            raise _bad(
                "message is not modified: specified new message content and reply markup "
                "are exactly the same as a current content and reply markup of the message"
            )
        msg = {**old, "edit_date": int(at)}
        self._text(msg, shown, "text")
        msg.pop("reply_markup", None)
        if isinstance(markup, Mapping) and "inline_keyboard" in markup:
            msg["reply_markup"] = markup
        return self._store(msg)

    async def _m_editMessageReplyMarkup(self, params: Mapping[str, Any], at: float) -> Any:
        if params.get("inline_message_id"):
            return True
        if params.get("chat_id") in (None, ""):
            raise _bad("chat_id is empty")
        key = (_int_chat(params["chat_id"]), _int(params.get("message_id")))
        old = self._state.messages.get(key)
        if old is None:
            raise _bad("message to edit not found")
        msg = {**old, "edit_date": int(at)}
        msg.pop("reply_markup", None)
        if isinstance(params.get("reply_markup"), Mapping):
            msg["reply_markup"] = params["reply_markup"]
        return self._store(msg)

    async def _m_answerCallbackQuery(self, params: Mapping[str, Any], at: float) -> Any:
        text = params.get("text")
        if isinstance(text, str) and len(text) > 200:
            raise _bad("MESSAGE_TOO_LONG")
        return True

    async def _m_deleteMessage(self, params: Mapping[str, Any], at: float) -> Any:
        if params.get("message_id") in (None, ""):
            raise _bad("message identifier is not specified")
        key = (_int_chat(params["chat_id"]), _int(params["message_id"]))
        if self._state.messages.pop(key, None) is None:
            raise _bad("message to delete not found")
        self._deleted.add(key)
        return True

    async def _m_getFile(self, params: Mapping[str, Any], at: float) -> Any:
        file_id = str(params.get("file_id") or "")
        if not file_id:
            raise _bad("file_id is empty")
        return {
            "file_id": file_id,
            "file_unique_id": "AgAD" + file_id[-6:],
            "file_size": 12_345,
            "file_path": f"documents/file_{abs(hash(file_id)) % 1000}.bin",
        }

    async def _m_getChat(self, params: Mapping[str, Any], at: float) -> Any:
        chat = self._chat(_int_chat(params["chat_id"]))
        return {**chat, "accent_color_id": 0, "max_reaction_count": 11, "accepted_gift_types": {
            "unlimited_gifts": False, "limited_gifts": False, "unique_gifts": False,
            "premium_subscription": False}}

    async def _m_getMyCommands(self, params: Mapping[str, Any], at: float) -> Any:
        return []

    async def _m_setMyCommands(self, params: Mapping[str, Any], at: float) -> Any:
        return True

    _m_deleteMyCommands = _m_setMyCommands
    _m_setChatMenuButton = _m_setMyCommands
    _m_setMessageReaction = _m_setMyCommands
    _m_setMyDescription = _m_setMyCommands
    _m_setMyShortDescription = _m_setMyCommands
    _m_setMyName = _m_setMyCommands


__all__ = [
    "ApiError", "BotApiEmulator", "FloodLimits", "KNOWN_METHODS", "REPLY_KINDS", "WebhookSettings",
    "call_keys", "canonical_method", "make_reply", "normalize_params", "reply_buttons",
    "validate_call", "webhook_reply_event",
]


async def _read_multipart(request: web.Request, params: dict[str, Any]) -> None:
    """A multipart body's fields into ``params`` (uploads summarized by name and size, never kept)."""
    reader = await request.multipart()
    async for part in reader:
        if part.name is None:
            continue
        if part.filename is not None:
            size = 0
            while chunk := await part.read_chunk():
                size += len(chunk)
            params[part.name] = {"upload": part.filename, "size": size,
                                 "content_type": part.headers.get("Content-Type", "")}
        else:
            params[part.name] = await part.text()
