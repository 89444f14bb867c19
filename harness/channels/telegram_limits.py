"""What the Bot API refuses before it acts (``validate_call``: Telegram's status codes and
descriptions, limits counted after parsing in UTF-16) and its flood limits (429 with
``retry_after``). Sources: docs/CHANNELS.md."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

from harness.channels.telegram_calls import CAPTION_METHODS, MEDIA_SENDS, OTHER_SENDS, ApiError, _bad, formatted
from harness.channels.telegram_markup import Formatted, ParseError, canonical_mode, utf16_len


_CHAT_METHODS = {
    "sendMessage", "sendChatAction", "sendDocument", "sendPhoto", "deleteMessage", "getChat",
    "setMessageReaction", *MEDIA_SENDS, *OTHER_SENDS, "sendMediaGroup", "copyMessage", "forwardMessage",
    "pinChatMessage", "unpinChatMessage", "unpinAllChatMessages", "getChatMember", "getChatMemberCount",
    "getChatAdministrators", "leaveChat", "sendMessageDraft", "deleteMessages", "setChatTitle", "setChatDescription",
}


_CHAT_ACTIONS = {
    "typing", "upload_photo", "record_video", "upload_video", "record_voice", "upload_voice",
    "upload_document", "choose_sticker", "find_location", "record_video_note",
    "upload_video_note",
}


MAX_TEXT = 4096
MAX_CAPTION = 1024
#: callback_data is 1-64 bytes (core.telegram.org/bots/api#inlinekeyboardbutton).
MAX_CALLBACK_DATA = 64
#: Buttons in one inline keyboard before Telegram answers REPLY_MARKUP_TOO_LONG (observed; unpublished).
MAX_BUTTONS = 100
_INLINE_ACTIONS = ("url", "callback_data", "web_app", "login_url", "switch_inline_query",
                   "switch_inline_query_current_chat", "switch_inline_query_chosen_chat", "copy_text",
                   "callback_game", "pay")


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
    for key, words in (("reply_parameters", "reply parameters"), ("link_preview_options", "link preview options")):
        value = params.get(key)
        if value in (None, "") or isinstance(value, Mapping):
            continue
        if isinstance(value, str):  # a form's JSON text that did not parse
            raise _bad(f"can't parse {words} JSON object")
        raise _bad(f"object expected as {words}")  # JSON, but an array, a number...
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
    if method in ("sendMessage", "editMessageText", "sendMessageDraft"):
        text = params.get("text")
        if not isinstance(text, str) or not text.strip():
            raise _bad("message text is empty")
        shown = _parsed(method, params)
        if not shown.text.strip():
            raise _bad("message text is empty")
        if utf16_len(shown.text) > MAX_TEXT:  # counted after parsing, in UTF-16 code units
            raise _bad("message is too long" if method == "sendMessage" else "MESSAGE_TOO_LONG")
    if method in ("sendDocument", "sendPhoto") or method in MEDIA_SENDS:
        what = MEDIA_SENDS.get(method) or ("document" if method == "sendDocument" else "photo")
        if params.get(what) in (None, ""):
            raise _bad(f"there is no {what.replace('_', ' ')} in the request")
    if method in CAPTION_METHODS and isinstance(params.get("caption"), str):
        if utf16_len(_parsed(method, params).text) > MAX_CAPTION:
            raise _bad("message caption is too long")
    if method in ("sendLocation", "sendVenue"):
        for key in ("latitude", "longitude"):
            if str(params.get(key) if params.get(key) is not None else "").strip() == "":
                raise _bad(f"{key} is empty")
    if method == "sendMediaGroup" and not isinstance(params.get("media"), list):
        raise _bad("Expected an Array of InputMedia")
    if method in ("copyMessage", "forwardMessage"):
        if params.get("from_chat_id") in (None, ""):
            raise _bad("from_chat_id is empty")
        if params.get("message_id") in (None, ""):
            raise _bad("message identifier is not specified")
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
    if markup not in (None, "") and not isinstance(markup, Mapping):
        raise _bad("can't parse reply keyboard markup JSON object" if isinstance(markup, str)
                   else "object expected as reply markup")
    if isinstance(markup, Mapping):
        for key in ("keyboard", "inline_keyboard"):  # Client::get_reply_markup's texts
            rows = markup.get(key)
            if key in markup and rows is not None and not isinstance(rows, list):
                raise _bad(f"field \"{key}\" must be of type Array")
            if isinstance(rows, list) and not all(isinstance(r, list) for r in rows):
                raise _bad(f"field \"{key}\" " + ("of the InlineKeyboardMarkup " if key == "inline_keyboard" else "")
                           + "must be an Array of Arrays")
        if isinstance(markup.get("inline_keyboard"), list):
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


# -- flood limits ---------------------------------------------------------------------------
#: Methods that put a message in a chat, counted by the flood limits.
FLOOD_METHODS = {"sendMessage", "sendDocument", "sendPhoto", "editMessageText", "editMessageReplyMarkup",
                 "editMessageCaption", *MEDIA_SENDS, *OTHER_SENDS, "sendMediaGroup", "copyMessage", "forwardMessage"}


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
