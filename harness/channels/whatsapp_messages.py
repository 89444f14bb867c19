"""What a Cloud API message is and what Graph refuses in one: the message types and the
interactive limits, Graph's ``{"error": {...}}`` answers, and the text and buttons a message
shows the user. The server that applies them: whatsapp_emulator.py."""

from __future__ import annotations

import re
import secrets
import string
from typing import Any


MAX_TEXT = 4096
MESSAGE_TYPES: tuple[str, ...] = (
    "text", "image", "document", "interactive", "template",
    "reaction", "audio", "video", "sticker", "location", "contacts",
)
MEDIA_TYPES = ("image", "document", "audio", "video", "sticker")


#: Limits of interactive messages (developers.facebook.com/docs/whatsapp/cloud-api/messages/
#: interactive-list-messages, interactive-reply-buttons-messages, interactive-cta-url-messages).
LIMITS = {
    "body_button": 1024, "body_list": 4096, "body_cta_url": 1024, "header": 60, "footer": 60,
    "button_title": 20, "button_id": 256, "buttons": 3, "list_button": 20, "sections": 10, "rows": 10,
    "row_title": 24, "row_description": 72, "row_id": 200, "section_title": 24, "cta_display_text": 20,
}


def _fbtrace_id() -> str:
    alphabet = string.ascii_letters + string.digits
    return "A" + "".join(secrets.choice(alphabet) for _ in range(22))


def graph_error(
    message: str,
    code: int,
    *,
    type_: str = "OAuthException",
    subcode: int | None = None,
    details: str | None = None,
) -> dict[str, Any]:
    """A Graph API error body: ``{"error": {message, type, code, [error_subcode], [error_data], fbtrace_id}}``."""
    error: dict[str, Any] = {"message": message, "type": type_, "code": code}
    if subcode is not None:
        error["error_subcode"] = subcode
    if details is not None:
        error["error_data"] = {"messaging_product": "whatsapp", "details": details}
    error["fbtrace_id"] = _fbtrace_id()
    return {"error": error}


class _Rejected(Exception):
    """A request the Cloud API would refuse: carries the HTTP status and error body."""

    def __init__(self, status: int, body: dict[str, Any]):
        super().__init__(body["error"]["message"])
        self.status = status
        self.body = body


def _invalid(details: str) -> _Rejected:
    return _Rejected(400, graph_error("(#100) Invalid parameter", 100, details=details))


def _undeliverable(code: int = 131026, title: str = "Message undeliverable") -> dict[str, Any]:
    """The ``errors[]`` item of a ``failed`` status (Cloud API error codes)."""
    return {"code": code, "title": title, "message": title, "error_data": {"details": title + "."}}


def _not_valid(details: str) -> _Rejected:
    """Cloud API error 131009: a parameter has a value the API does not accept (a limit, a duplicate)."""
    return _Rejected(400, graph_error("(#131009) Parameter value is not valid", 131009, details=details))


def _length(value: Any, what: str, maximum: int, *, required: bool = True) -> str:
    """A text parameter within its published length (1..maximum characters)."""
    if value is None and not required:
        return ""
    if not isinstance(value, str) or not value:
        raise _Rejected(400, graph_error("(#131008) Required parameter is missing", 131008,
                                         details=f"Parameter '{what}' is required"))
    if len(value) > maximum:
        raise _not_valid(f"{what} length invalid. Min length: 1, Max length: {maximum}; got {len(value)}")
    return value


def _items(action: dict[str, Any], key: str, what: str) -> list:
    """A list parameter ``action.<key>`` within its published count (1..LIMITS[key] items)."""
    raw = action.get(key)
    if not isinstance(raw, list) or not raw:
        raise _Rejected(400, graph_error("(#131008) Required parameter is missing", 131008,
                                         details=f"Parameter 'action.{key}' is required"))
    if len(raw) > LIMITS[key]:
        raise _not_valid(f"{what} count invalid. Max allowed count: {LIMITS[key]}; got {len(raw)}")
    return raw


def _utf8_only(value: Any, depth: int = 0) -> Any:
    """``value`` unchanged, or a (#100) refusal when a string in it is not UTF-8 (a lone surrogate
    from a ``"\\udc00"`` escape): the Graph API refuses such text."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise _invalid("a string parameter is not valid UTF-8") from None
    elif depth <= 32 and isinstance(value, dict):
        for k, v in value.items():
            _utf8_only(k, depth + 1)
            _utf8_only(v, depth + 1)
    elif depth <= 32 and isinstance(value, list):
        for v in value:
            _utf8_only(v, depth + 1)
    return value


def _wa_id(to: str) -> str:
    # The Cloud API normalizes "+1 555-123" style inputs to bare digits in contacts[].wa_id.
    digits = re.sub(r"[^0-9]", "", to)
    return digits or to.strip()


def _content_text(type_: str, content: dict[str, Any]) -> tuple[str, tuple[str, ...], str]:
    """Validate one message object; return (user-visible text, button titles, other text for keys)."""
    if type_ == "text":
        body = content.get("body")
        if not isinstance(body, str) or not body:
            raise _invalid("text.body is required and must be a non-empty string")
        if len(body) > MAX_TEXT:
            raise _invalid(f"text.body is {len(body)} characters long; the maximum is {MAX_TEXT}")
        return body, (), ""
    if type_ in MEDIA_TYPES:
        if not content.get("id") and not content.get("link"):
            raise _invalid(f"{type_} needs either an 'id' (uploaded media) or a 'link'")
        caption = content.get("caption") or ""
        if not isinstance(caption, str):
            raise _invalid(f"{type_}.caption must be a string")
        return caption, (), str(content.get("link") or "") + " " + str(content.get("filename") or "")
    if type_ == "interactive":
        return _interactive_text(content)
    if type_ == "template":
        name = content.get("name")
        if not isinstance(name, str) or not name:
            raise _invalid("template.name is required")
        if not isinstance(content.get("language"), dict) or not content["language"].get("code"):
            raise _invalid("template.language.code is required")
        params = [
            p.get("text", "")
            for c in content.get("components") or []
            if isinstance(c, dict)
            for p in c.get("parameters") or []
            if isinstance(p, dict) and p.get("type") == "text"
        ]
        return " ".join(params) or name, (), ""
    if type_ == "reaction":
        if not content.get("message_id") or "emoji" not in content:
            raise _invalid("reaction needs message_id and emoji")
        return str(content["emoji"]), (), ""
    if type_ == "contacts":  # contacts: [{name: {formatted_name, ...}, phones: [{phone}], ...}]
        cards = content.get("contacts")
        if not isinstance(cards, list) or not cards:
            raise _invalid("contacts must be a non-empty array of contact objects")
        shown = []
        for card in cards:
            name = card.get("name") if isinstance(card, dict) else None
            if not isinstance(name, dict) or not isinstance(name.get("formatted_name"), str) or not name["formatted_name"]:
                raise _invalid("contacts[].name.formatted_name is required")
            phones = [str(p.get("phone")) for p in card.get("phones") or [] if isinstance(p, dict) and p.get("phone")]
            shown.append(" ".join([name["formatted_name"], *phones]))
        return "\n".join(shown), (), ""
    # location
    for key in ("latitude", "longitude"):
        if key not in content:
            raise _invalid(f"location.{key} is required")
    return " ".join(str(content.get(k) or "") for k in ("name", "address")).strip(), (), ""


def offered_options(content: dict[str, Any]) -> list[tuple[str, str]]:
    """(id, title) of each reply button or list row an interactive message offered."""
    action = content.get("action") if isinstance(content.get("action"), dict) else {}
    if content.get("type") == "button":
        return [(str(b["reply"].get("id", "")), str(b["reply"].get("title", ""))) for b in action.get("buttons") or []
                if isinstance(b, dict) and isinstance(b.get("reply"), dict)]
    if content.get("type") == "list":
        return [(str(r.get("id", "")), str(r.get("title", ""))) for sec in action.get("sections") or []
                if isinstance(sec, dict) for r in sec.get("rows") or [] if isinstance(r, dict)]
    return []


def _check_header_footer(content: dict[str, Any], kind: str) -> None:
    header = content.get("header")
    if header is not None:
        if not isinstance(header, dict) or header.get("type") not in ("text", "image", "video", "document"):
            raise _invalid("interactive.header.type must be text, image, video or document")
        if header["type"] == "text":
            _length(header.get("text"), "Header text", LIMITS["header"])
        elif kind == "list":
            raise _not_valid("Header type must be text for list messages")
    footer = content.get("footer")
    if footer is not None:
        _length(footer.get("text") if isinstance(footer, dict) else None, "Footer text", LIMITS["footer"])


def _unique(ids: list[str], what: str) -> None:
    seen: set[str] = set()
    for i in ids:
        if i in seen:
            raise _not_valid(f"{what} ids must be unique; {i!r} is used twice")
        seen.add(i)


def _interactive_text(content: dict[str, Any]) -> tuple[str, tuple[str, ...], str]:
    kind = content.get("type")
    action = content.get("action")
    if kind not in ("button", "list", "cta_url", "product", "product_list", "flow", "location_request_message"):
        raise _invalid(f"interactive.type {kind!r} is not supported")
    if not isinstance(action, dict):
        raise _invalid("interactive.action is required")
    body = content.get("body")
    text = body.get("text") if isinstance(body, dict) else None
    if kind in ("button", "list", "cta_url"):
        _length(text, "Body text", LIMITS[f"body_{kind}"])
        _check_header_footer(content, kind)
    buttons: tuple[str, ...] = ()
    extra = ""
    if kind == "button":
        ids, titles = [], []
        for b in _items(action, "buttons", "Buttons"):
            reply = b.get("reply") if isinstance(b, dict) else None
            if not isinstance(b, dict) or b.get("type") != "reply" or not isinstance(reply, dict):
                raise _invalid("each interactive button must be {type: reply, reply: {id, title}}")
            titles.append(_length(reply.get("title"), "Button title", LIMITS["button_title"]))
            ids.append(_length(reply.get("id"), "Button id", LIMITS["button_id"]))
        _unique(ids, "Button")
        buttons = tuple(titles)
    elif kind == "list":
        _length(action.get("button"), "Button label", LIMITS["list_button"])
        sections = _items(action, "sections", "Sections")
        ids, titles, total = [], [], 0
        for sec in sections:
            if not isinstance(sec, dict) or not isinstance(sec.get("rows"), list) or not sec["rows"]:
                raise _not_valid("Each section needs at least one row")
            if len(sections) > 1 or sec.get("title") is not None:
                _length(sec.get("title"), "Section title", LIMITS["section_title"])
            for row in sec["rows"]:
                if not isinstance(row, dict):
                    raise _invalid("each list row must be an object {id, title, description}")
                total += 1
                titles.append(_length(row.get("title"), "Row title", LIMITS["row_title"]))
                ids.append(_length(row.get("id"), "Row id", LIMITS["row_id"]))
                _length(row.get("description"), "Row description", LIMITS["row_description"], required=False)
        if total > LIMITS["rows"]:
            raise _not_valid(f"Total row count exceed max allowed count: {LIMITS['rows']}")
        _unique(ids, "Row")
        buttons = tuple(titles)
    elif kind == "cta_url":
        params = action.get("parameters")
        if action.get("name") != "cta_url" or not isinstance(params, dict):
            raise _invalid("interactive cta_url: action {name: cta_url, parameters: {display_text, url}} is required")
        label = _length(params.get("display_text"), "Display text", LIMITS["cta_display_text"])
        url = params.get("url")
        if not isinstance(url, str) or not re.match(r"^https?://\S+$", url):
            raise _not_valid(f"URL is not valid: {url!r}")
        buttons = (label,)
        extra = url
    return text or "", buttons, extra
