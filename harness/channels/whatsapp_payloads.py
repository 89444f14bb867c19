"""WhatsApp Cloud API webhook envelopes, as Meta delivers them to an agent's webhook.

Every builder returns a plain dict shaped like the WhatsApp webhooks reference
(``object`` = ``whatsapp_business_account``, one ``entry`` with one ``changes`` item whose
``value`` carries ``metadata`` plus ``contacts``/``messages`` or ``statuses``). Details that
agents commonly get wrong are reproduced on purpose: timestamps are *strings* of unix
seconds, message ids are opaque ``wamid.`` strings, and a redelivery is byte-identical.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import secrets
import time
from typing import Any, Callable

#: Error a failed status carries when the caller gives none (Meta's "undeliverable").
DEFAULT_STATUS_ERROR: dict[str, Any] = {
    "code": 131026,
    "title": "Message undeliverable",
    "message": "Message undeliverable",
    "error_data": {"details": "Message Undeliverable."},
}

STATUSES: tuple[str, ...] = ("sent", "delivered", "read", "failed")


def new_wamid() -> str:
    """A fresh message id in Meta's style: ``wamid.`` + base64 of opaque bytes.

    Real wamids are base64 of a binary blob; agents must treat them as opaque strings,
    so random bytes (with base64 padding and ``+``/``/`` characters) are a fair stand-in.
    """
    return "wamid." + base64.b64encode(b"\x15\x02\x00\x11\x18\x14" + secrets.token_bytes(18)).decode()


def new_media_id() -> str:
    """A media id: Meta's are long decimal strings."""
    return str(10**15 + secrets.randbelow(9 * 10**15))


class WhatsAppUpdates:
    """Builds webhook payloads for one business phone number.

    ``phone_number_id`` and ``display_phone_number`` go in ``value.metadata`` (clients
    such as pywa drop updates addressed to another phone number id); ``waba_id`` is the
    ``entry[].id``.

    ``bsuid`` adds Meta's 2026 business-scoped user ids (``contacts[].user_id``,
    ``messages[].from_user_id``, ``statuses[].recipient_user_id`` plus a ``contacts``
    entry on statuses). On by default because current clients need them: pywa 4.5 fails
    to build a Message from a contact without ``user_id``. Turn it off to replay the
    older, phone-number-only shape.
    """

    def __init__(
        self,
        phone_number_id: str,
        display_phone_number: str,
        waba_id: str,
        *,
        clock: Callable[[], float] = time.time,
        bsuid: bool = True,
    ):
        self.phone_number_id = str(phone_number_id)
        self.display_phone_number = str(display_phone_number)
        self.waba_id = str(waba_id)
        self._clock = clock
        self._bsuid = bsuid

    def bsuid_of(self, wa_id: str) -> str:
        """The user's business-scoped id: stable per (business, user), like Meta's."""
        digest = hashlib.sha256(f"{self.waba_id}:{wa_id}".encode()).digest()
        return f"US.{int.from_bytes(digest[:8], 'big') % 10**20:020d}"

    # -- envelope -------------------------------------------------------------------

    def _timestamp(self) -> str:
        # A string, exactly as Meta sends it; agents doing arithmetic on it must convert.
        return str(int(self._clock()))

    def _envelope(self, value: dict[str, Any]) -> dict[str, Any]:
        return {
            "object": "whatsapp_business_account",
            "entry": [
                {
                    "id": self.waba_id,
                    "changes": [
                        {
                            "value": {
                                "messaging_product": "whatsapp",
                                "metadata": {
                                    "display_phone_number": self.display_phone_number,
                                    "phone_number_id": self.phone_number_id,
                                },
                                **value,
                            },
                            "field": "messages",
                        }
                    ],
                }
            ],
        }

    def _message(self, wa_id: str, name: str, type_: str, content: dict[str, Any], **extra: Any) -> dict[str, Any]:
        contact: dict[str, Any] = {"profile": {"name": name}, "wa_id": wa_id}
        message: dict[str, Any] = {"from": wa_id}
        if self._bsuid:
            contact["user_id"] = message["from_user_id"] = self.bsuid_of(wa_id)
        message.update({"id": new_wamid(), "timestamp": self._timestamp(), **extra, "type": type_})
        message[type_] = content
        return self._envelope({"contacts": [contact], "messages": [message]})

    # -- inbound messages -------------------------------------------------------------

    def text(self, wa_id: str, body: str, *, name: str = "Test User") -> dict[str, Any]:
        """A text message from ``wa_id``."""
        return self._message(wa_id, name, "text", {"body": body})

    def image(self, wa_id: str, caption: str | None = None, *, name: str = "Test User") -> dict[str, Any]:
        """A photo; the caption key is absent when there is none (as Meta does)."""
        media = {"mime_type": "image/jpeg", "sha256": _fake_sha256(), "id": new_media_id()}
        if caption is not None:
            media["caption"] = caption
        return self._message(wa_id, name, "image", media)

    def sticker(self, wa_id: str, *, name: str = "Test User") -> dict[str, Any]:
        """A (static) sticker: a message with no text at all."""
        media = {"mime_type": "image/webp", "sha256": _fake_sha256(), "id": new_media_id(), "animated": False}
        return self._message(wa_id, name, "sticker", media)

    def document(
        self,
        wa_id: str,
        filename: str,
        mime_type: str,
        caption: str | None = None,
        *,
        name: str = "Test User",
    ) -> dict[str, Any]:
        """A document; the agent must fetch the media by id to read it."""
        media = {"filename": filename, "mime_type": mime_type, "sha256": _fake_sha256(), "id": new_media_id()}
        if caption is not None:
            media["caption"] = caption
        return self._message(wa_id, name, "document", media)

    def interactive_reply(
        self,
        wa_id: str,
        button_id: str,
        title: str,
        context_message_id: str,
        *,
        name: str = "Test User",
    ) -> dict[str, Any]:
        """The user tapped a reply button of the agent's message ``context_message_id``."""
        return self._message(
            wa_id,
            name,
            "interactive",
            {"type": "button_reply", "button_reply": {"id": button_id, "title": title}},
            context={"from": self.display_phone_number, "id": context_message_id},
        )

    def list_reply(self, wa_id: str, row_id: str, title: str, context_message_id: str, *,
                   description: str | None = None, name: str = "Test User") -> dict[str, Any]:
        """The user picked row ``row_id`` of the agent's list message ``context_message_id``."""
        reply: dict[str, Any] = {"id": row_id, "title": title}
        if description:
            reply["description"] = description
        return self._message(wa_id, name, "interactive", {"type": "list_reply", "list_reply": reply},
                             context={"from": self.display_phone_number, "id": context_message_id})

    def location(self, wa_id: str, latitude: float, longitude: float, *, title: str | None = None,
                 address: str | None = None, name: str = "Test User") -> dict[str, Any]:
        """A shared location (a named place carries ``name`` and ``address``)."""
        loc: dict[str, Any] = {"latitude": float(latitude), "longitude": float(longitude)}
        if title:
            loc["name"] = title
        if address:
            loc["address"] = address
        return self._message(wa_id, name, "location", loc)

    def contacts(self, wa_id: str, phone_number: str, first_name: str, last_name: str | None = None, *,
                 name: str = "Test User") -> dict[str, Any]:
        """A shared contact card (``contacts`` is a list, as in the webhooks reference)."""
        formatted = " ".join(p for p in (first_name, last_name) if p)
        person: dict[str, Any] = {"formatted_name": formatted, "first_name": first_name}
        if last_name:
            person["last_name"] = last_name
        digits = "".join(ch for ch in phone_number if ch.isdigit())
        card = {"name": person, "phones": [{"phone": phone_number, "wa_id": digits, "type": "CELL"}]}
        return self._message(wa_id, name, "contacts", [card])

    def audio(self, wa_id: str, *, voice: bool = False, mime_type: str | None = None,
              name: str = "Test User") -> dict[str, Any]:
        """A voice note (``voice: true``, OGG/Opus) or an audio file."""
        media = {"mime_type": mime_type or ("audio/ogg; codecs=opus" if voice else "audio/mpeg"),
                 "sha256": _fake_sha256(), "id": new_media_id(), "voice": bool(voice)}
        return self._message(wa_id, name, "audio", media)

    def reaction(self, wa_id: str, message_id: str, emoji: str, *, name: str = "Test User") -> dict[str, Any]:
        """The user reacted to message ``message_id`` ('' emoji: the reaction was removed)."""
        return self._message(wa_id, name, "reaction", {"message_id": message_id, "emoji": emoji})

    def forwarded(self, wa_id: str, body: str, *, frequently: bool = False, name: str = "Test User") -> dict[str, Any]:
        """A text the user forwarded (``context.forwarded``; ``frequently_forwarded`` after 5 hops)."""
        context: dict[str, Any] = {"forwarded": True}
        if frequently:
            context["frequently_forwarded"] = True
        return self._message(wa_id, name, "text", {"body": body}, context=context)

    def reply(self, wa_id: str, body: str, context_message_id: str, *, quoted_from: str | None = None,
              name: str = "Test User") -> dict[str, Any]:
        """A text that quotes (replies to) message ``context_message_id``, sent by ``quoted_from``
        (default: the business, i.e. the agent's own message)."""
        return self._message(wa_id, name, "text", {"body": body},
                             context={"from": quoted_from or self.display_phone_number, "id": context_message_id})

    # -- delivery statuses --------------------------------------------------------------

    def status(
        self,
        recipient_id: str,
        message_id: str,
        status: str,
        errors: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """A status update for a message the agent sent (sent | delivered | read | failed).

        A ``failed`` status always carries ``errors[]`` (Meta's default "undeliverable"
        error when none is given); other statuses carry it only when asked to.
        """
        if status not in STATUSES:
            raise ValueError(f"unknown WhatsApp status {status!r}; expected one of {', '.join(STATUSES)}")
        item: dict[str, Any] = {
            "id": message_id,
            "status": status,
            "timestamp": self._timestamp(),
            "recipient_id": recipient_id,
        }
        if errors is None and status == "failed":
            errors = [copy.deepcopy(DEFAULT_STATUS_ERROR)]
        if errors is not None:
            item["errors"] = list(errors)
        value: dict[str, Any] = {"statuses": [item]}
        if self._bsuid:
            item["recipient_user_id"] = self.bsuid_of(recipient_id)
            value = {"contacts": [{"wa_id": recipient_id, "user_id": item["recipient_user_id"]}], **value}
        return self._envelope(value)

    @staticmethod
    def redeliver(payload: dict[str, Any]) -> dict[str, Any]:
        """The same payload again: Meta retries deliveries, so duplicates are normal.

        Returned as is (not copied) so it serializes to the identical bytes; clients such
        as pywa recognise duplicates by hashing the raw body.
        """
        return payload


def _fake_sha256() -> str:
    # Meta sends the media's SHA-256 base64-encoded; its value is irrelevant here.
    return base64.b64encode(secrets.token_bytes(32)).decode()
