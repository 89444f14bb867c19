"""What a Bot API call is: the method names, Telegram's error answer, and the conversions the
emulator and the webhook answers share (parameters normalised, the chat and correlation keys of
a call, the ``Reply`` a user-visible call delivers, its text as the user sees it)."""

from __future__ import annotations

import json
import re
from typing import Any, Mapping

from harness.channels.telegram_markup import Formatted, ParseError, canonical_mode, parse
from harness.channels.telegram_updates import callback_chat
from harness.types import Reply, doc_token_keys


#: Bot API method names in their canonical spelling; requests match them case-insensitively.
KNOWN_METHODS: tuple[str, ...] = (
    "getMe", "logOut", "close", "getUpdates", "setWebhook", "deleteWebhook", "getWebhookInfo",
    "sendMessage", "sendChatAction", "sendDocument", "sendPhoto", "editMessageText",
    "editMessageReplyMarkup", "answerCallbackQuery", "deleteMessage", "getFile", "getChat",
    "setMyCommands", "deleteMyCommands", "getMyCommands", "setChatMenuButton",
    "setMessageReaction", "setMyDescription", "setMyShortDescription", "setMyName",
    # what bots also send and ask (core.telegram.org/bots/api): answered as the server does
    "sendAudio", "sendVoice", "sendVideo", "sendAnimation", "sendVideoNote", "sendSticker", "sendLocation",
    "sendVenue", "sendContact", "sendPoll", "sendDice", "sendMediaGroup", "copyMessage", "forwardMessage",
    "editMessageCaption", "pinChatMessage", "unpinChatMessage", "unpinAllChatMessages", "getChatMember",
    "getChatMemberCount", "getChatAdministrators", "answerInlineQuery", "getUserProfilePhotos", "leaveChat",
    "getMyDescription", "getMyShortDescription", "getMyName", "getChatMenuButton",
    # Bot API 9.3's streamed draft of an answer (a preview while the model writes; not a message)
    "sendMessageDraft", "deleteMessages", "editMessageMedia", "stopPoll", "setChatTitle", "setChatDescription",
)
_CANONICAL = {m.lower(): m for m in KNOWN_METHODS}

#: Media a bot sends: the method, and the key its file goes under (in the call and in the Message).
MEDIA_SENDS: dict[str, str] = {"sendAudio": "audio", "sendVoice": "voice", "sendVideo": "video",
                               "sendAnimation": "animation", "sendVideoNote": "video_note", "sendSticker": "sticker"}
#: Other messages a bot sends, and the Message key they produce.
OTHER_SENDS: dict[str, str] = {"sendLocation": "location", "sendVenue": "venue", "sendContact": "contact",
                               "sendPoll": "poll", "sendDice": "dice"}
#: Methods whose text field is ``caption`` (with ``caption_entities``).
CAPTION_METHODS = {"sendDocument", "sendPhoto", "editMessageCaption", *(m for m in MEDIA_SENDS
                                                                       if m not in ("sendVideoNote", "sendSticker"))}

#: Methods whose success shows the user something, and the Reply.kind they produce.
REPLY_KINDS: dict[str, str] = {
    "sendMessage": "text",
    "sendDocument": "document",
    "sendPhoto": "photo",
    "editMessageText": "edit",
    "editMessageCaption": "edit",
    **MEDIA_SENDS,
    **OTHER_SENDS,
    "sendMediaGroup": "media_group",
    "copyMessage": "copy",
    "forwardMessage": "forward",
}
#: Methods that send a message (a reply to a missing message is refused).
_SEND_METHODS = {"sendMessage", "sendDocument", "sendPhoto", *MEDIA_SENDS, *OTHER_SENDS, "sendMediaGroup",
                 "copyMessage"}


# Form and multipart bodies carry nested values as JSON strings.
_JSON_FIELDS = {
    "reply_markup", "entities", "caption_entities", "allowed_updates", "reply_parameters",
    "link_preview_options", "commands", "scope", "menu_button", "reaction",
}
_SECRET_FIELDS = {"secret_token"}
#: Fields the Bot API reads as text: a JSON body's number or boolean there is its JSON text
#: (``"text": 123`` sends "123", ``true`` sends "true"), as the server's parser keeps every
#: non-string value of the body's object as its JSON text (td::HttpReader).
_TEXT_FIELDS = {"text", "caption", "parse_mode", "action", "callback_query_id", "inline_message_id", "url",
                "secret_token", "file_id", "ip_address"}


def to_bool(value: Any) -> bool:
    """A boolean parameter as the Bot API reads it (Client::to_bool): true, yes or 1 (any case,
    spaces trimmed) is true, anything else ("false", "0", "no") false; a JSON true is true."""
    if isinstance(value, bool):
        return value
    if value is None or isinstance(value, (Mapping, list)):
        return False
    return str(value).strip().lower() in ("true", "yes", "1")


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
    for key in _TEXT_FIELDS & out.keys():
        value = out[key]
        if isinstance(value, bool):
            out[key] = "true" if value else "false"
        elif isinstance(value, (int, float)):
            out[key] = json.dumps(value)
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
    text = params.get("caption") if method in CAPTION_METHODS else params.get("text")
    if method == "sendPoll":
        text = params.get("question")
    elif method == "sendMediaGroup":  # an album: its captions, in order
        items = params.get("media") if isinstance(params.get("media"), list) else []
        text = "\n".join(m["caption"] for m in items if isinstance(m, Mapping) and isinstance(m.get("caption"), str))
    elif method in ("sendVenue", "sendContact"):
        text = " ".join(str(params[k]) for k in ("title", "address", "first_name", "last_name", "phone_number")
                        if isinstance(params.get(k), (str, int)) and not isinstance(params.get(k), bool))
    text = text if isinstance(text, str) else ""
    try:
        shown = formatted(method, params) if method in CAPTION_METHODS or kind in ("text", "edit") else Formatted(text)
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
    field_name = "caption" if method in CAPTION_METHODS else "text"
    text = params.get(field_name)
    if not isinstance(text, str):
        return Formatted("")
    given = params.get("caption_entities" if field_name == "caption" else "entities")
    if isinstance(given, list):
        return Formatted(text, tuple(e for e in given if isinstance(e, Mapping)))
    return parse(text, params.get("parse_mode"))
