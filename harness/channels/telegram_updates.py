"""Builders for real Telegram Bot API ``Update`` dicts, as Telegram would deliver them.

The simulated user's actions become the exact JSON shapes of core.telegram.org/bots/api
so an agent's real framework (python-telegram-bot, aiogram, ...) parses them unchanged.
Entity offsets count UTF-16 code units, like Telegram's: frameworks slice text with
them, so a wrong offset shows up as a mangled command or URL in the agent.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import re
import time
from typing import Any, Callable

from harness.channels.telegram_entities import text_entities

#: The bot the builders put under callback messages (the emulator's getMe agrees by default).
DEFAULT_BOT_USER: dict[str, Any] = {
    "id": 1000001,
    "is_bot": True,
    "first_name": "Harness Bot",
    "username": "harness_test_bot",
}


class MessageIds:
    """Per-chat increasing message ids, shareable by the builders and the emulator.

    In Telegram a chat has one id sequence for the user's and the bot's messages; sharing
    one counter keeps the simulated chat realistic (a callback points at a bot message
    whose id the emulator assigned).
    """

    def __init__(self, start: int = 1) -> None:
        self._start = start
        self._last: dict[int, int] = {}

    def next(self, chat_id: int) -> int:
        n = self._last.get(chat_id, self._start - 1) + 1
        self._last[chat_id] = n
        return n

    def last(self, chat_id: int) -> int:
        """The highest id issued in ``chat_id`` so far (0 when none)."""
        return self._last.get(chat_id, 0)

    def observe(self, chat_id: int, message_id: int) -> None:
        """Make sure later ids in ``chat_id`` are above an explicitly chosen one."""
        if message_id > self._last.get(chat_id, self._start - 1):
            self._last[chat_id] = message_id


def _file_ids(seed: str, prefix: str) -> tuple[str, str]:
    """A deterministic (file_id, file_unique_id) pair shaped like Telegram's."""
    digest = hashlib.sha256(seed.encode()).hexdigest()
    return f"{prefix}{digest[:60]}", f"AgAD{digest[60:64]}{digest[:8]}"


class TelegramUpdates:
    """Builds the Updates a simulated private-chat user causes; every builder returns a dict."""

    def __init__(
        self,
        start_update_id: int = 1,
        *,
        message_ids: MessageIds | None = None,
        bot_user: dict[str, Any] | None = None,
        first_name: str = "Tester",
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._update_ids = itertools.count(start_update_id)
        self.message_ids = message_ids or MessageIds()
        self.bot_user = dict(bot_user or DEFAULT_BOT_USER)
        self.first_name = first_name
        self._clock = clock
        self._callbacks = itertools.count(1)
        self._files = itertools.count(1)
        # dates of built messages, so an edit keeps its original ``date``
        self._dates: dict[tuple[int, int], int] = {}

    # -- pieces ---------------------------------------------------------------------
    def user_for(self, chat_id: int) -> dict[str, Any]:
        """The User who writes in private chat ``chat_id`` (private chat id == user id)."""
        return {
            "id": chat_id,
            "is_bot": False,
            "first_name": self.first_name,
            "username": f"tester_{abs(chat_id)}",
            "language_code": "en",
        }

    def chat_for(self, chat_id: int) -> dict[str, Any]:
        return {"id": chat_id, "type": "private", "first_name": self.first_name}

    def _now(self) -> int:
        return int(self._clock())

    def _message(
        self, chat_id: int, user: dict[str, Any] | None, message_id: int | None
    ) -> dict[str, Any]:
        if message_id is None:
            message_id = self.message_ids.next(chat_id)
        else:
            self.message_ids.observe(chat_id, message_id)
        date = self._now()
        self._dates[(chat_id, message_id)] = date
        return {
            "message_id": message_id,
            "from": dict(user) if user else self.user_for(chat_id),
            "chat": self.chat_for(chat_id),
            "date": date,
        }

    def _update(self, key: str, body: dict[str, Any]) -> dict[str, Any]:
        return {"update_id": next(self._update_ids), key: body}

    @staticmethod
    def _with_caption(msg: dict[str, Any], caption: str | None) -> dict[str, Any]:
        if caption is not None:
            msg["caption"] = caption
            entities = [e for e in text_entities(caption) if e["type"] != "bot_command"]
            if entities:
                msg["caption_entities"] = entities
        return msg

    # -- updates --------------------------------------------------------------------
    def text(
        self,
        chat_id: int,
        text: str,
        *,
        user: dict[str, Any] | None = None,
        message_id: int | None = None,
    ) -> dict[str, Any]:
        """A text message; ``""`` is allowed (agents must cope with it)."""
        msg = self._message(chat_id, user, message_id)
        msg["text"] = text
        entities = text_entities(text)
        if entities:
            msg["entities"] = entities
        return self._update("message", msg)

    def document(
        self,
        chat_id: int,
        file_name: str,
        mime_type: str,
        file_size: int = 12_345,
        caption: str | None = None,
    ) -> dict[str, Any]:
        """A file sent as a document."""
        msg = self._message(chat_id, None, None)
        file_id, unique = _file_ids(f"doc:{chat_id}:{next(self._files)}:{file_name}", "BQACAgIAAxkBAAI")
        msg["document"] = {
            "file_name": file_name,
            "mime_type": mime_type,
            "file_id": file_id,
            "file_unique_id": unique,
            "file_size": file_size,
        }
        return self._update("message", self._with_caption(msg, caption))

    def photo(self, chat_id: int, caption: str | None = None) -> dict[str, Any]:
        """A photo: Telegram sends several sizes, smallest first."""
        msg = self._message(chat_id, None, None)
        n = next(self._files)
        sizes = []
        for width, height, size in ((90, 68, 1_452), (320, 240, 17_808), (800, 600, 71_330)):
            file_id, unique = _file_ids(f"photo:{chat_id}:{n}:{width}", "AgACAgIAAxkBAAI")
            sizes.append(
                {"file_id": file_id, "file_unique_id": unique, "file_size": size,
                 "width": width, "height": height}
            )
        msg["photo"] = sizes
        return self._update("message", self._with_caption(msg, caption))

    def sticker(self, chat_id: int, emoji: str = "😀") -> dict[str, Any]:
        """A static sticker with every field the Bot API marks as required."""
        msg = self._message(chat_id, None, None)
        file_id, unique = _file_ids(f"sticker:{chat_id}:{next(self._files)}", "CAACAgIAAxkBAAI")
        msg["sticker"] = {
            "file_id": file_id,
            "file_unique_id": unique,
            "type": "regular",
            "width": 512,
            "height": 512,
            "is_animated": False,
            "is_video": False,
            "emoji": emoji,
            "set_name": "HarnessStickers",
            "file_size": 24_000,
        }
        return self._update("message", msg)

    def edited(self, chat_id: int, message_id: int, new_text: str) -> dict[str, Any]:
        """The user edited message ``message_id`` to ``new_text``."""
        now = self._now()
        msg = {
            "message_id": message_id,
            "from": self.user_for(chat_id),
            "chat": self.chat_for(chat_id),
            "date": self._dates.get((chat_id, message_id), now),
            "edit_date": now,
            "text": new_text,
        }
        entities = text_entities(new_text)
        if entities:
            msg["entities"] = entities
        return self._update("edited_message", msg)

    def callback(
        self, chat_id: int, data: str, message_id: int, *, message_text: str = ""
    ) -> dict[str, Any]:
        """The user pressed an inline button with ``data`` under bot message ``message_id``.

        The query id ends in ``-<chat_id>``: ids are opaque to bots, and this lets the
        emulator attribute the ``answerCallbackQuery`` (which names no chat) to the case.
        """
        message: dict[str, Any] = {
            "message_id": message_id,
            "from": dict(self.bot_user),
            "chat": self.chat_for(chat_id),
            "date": self._dates.get((chat_id, message_id), self._now()),
        }
        if message_text:
            message["text"] = message_text
        query = {
            "id": f"{next(self._callbacks)}{abs(chat_id) % 10**6:06d}-{chat_id}",
            "from": self.user_for(chat_id),
            "chat_instance": str(int(hashlib.sha256(str(chat_id).encode()).hexdigest()[:15], 16)),
            "data": data,
            "message": message,
        }
        return self._update("callback_query", query)

    def _sent(self, chat_id: int) -> dict[str, Any]:
        return self._message(chat_id, None, None)

    def location(self, chat_id: int, latitude: float, longitude: float, *, live_period: int | None = None,
                 title: str | None = None, address: str | None = None) -> dict[str, Any]:
        """A shared location (``venue`` too when a title and an address are given, as Telegram does)."""
        msg = self._sent(chat_id)
        loc: dict[str, Any] = {"latitude": float(latitude), "longitude": float(longitude)}
        if live_period:
            loc["live_period"] = int(live_period)
        msg["location"] = loc
        if title and address:
            msg["venue"] = {"location": dict(loc), "title": title, "address": address}
        return self._update("message", msg)

    def contact(self, chat_id: int, phone_number: str, first_name: str, last_name: str | None = None,
                user_id: int | None = None) -> dict[str, Any]:
        """A shared contact card."""
        msg = self._sent(chat_id)
        contact: dict[str, Any] = {"phone_number": phone_number, "first_name": first_name}
        if last_name:
            contact["last_name"] = last_name
        if user_id is not None:
            contact["user_id"] = int(user_id)
        msg["contact"] = contact
        return self._update("message", msg)

    def audio(self, chat_id: int, *, voice: bool = False, duration: int = 7, mime_type: str | None = None,
              caption: str | None = None, file_name: str | None = None) -> dict[str, Any]:
        """A voice note (``voice``: recorded in the app, OGG/Opus) or an audio file (``audio``)."""
        msg = self._sent(chat_id)
        kind = "voice" if voice else "audio"
        file_id, unique = _file_ids(f"{kind}:{chat_id}:{next(self._files)}", "AwACAgIAAxkBAAI" if voice
                                    else "CQACAgIAAxkBAAI")
        media: dict[str, Any] = {"file_id": file_id, "file_unique_id": unique, "duration": int(duration),
                                 "mime_type": mime_type or ("audio/ogg" if voice else "audio/mpeg"),
                                 "file_size": 4_000 * int(duration) + 1_000}
        if not voice:
            media["file_name"] = file_name or "recording.mp3"
        msg[kind] = media
        return self._update("message", self._with_caption(msg, caption))

    def reaction(self, chat_id: int, message_id: int, emoji: str, *, old: str | None = None) -> dict[str, Any]:
        """The user reacted to message ``message_id`` with ``emoji`` (a ``message_reaction`` update;
        bots receive it only when they list it in ``allowed_updates``)."""
        body = {
            "chat": self.chat_for(chat_id),
            "message_id": int(message_id),
            "user": self.user_for(chat_id),
            "date": self._now(),
            "old_reaction": [{"type": "emoji", "emoji": old}] if old else [],
            "new_reaction": [{"type": "emoji", "emoji": emoji}] if emoji else [],
        }
        return self._update("message_reaction", body)

    def forwarded(self, chat_id: int, text: str, *, sender_name: str = "Alice Example",
                  sender_id: int | None = None, age_s: int = 3600) -> dict[str, Any]:
        """A text the user forwarded from someone else (``forward_origin``: a user, or a hidden user)."""
        update = self.text(chat_id, text)
        date = self._now() - int(age_s)
        if sender_id is not None:
            origin: dict[str, Any] = {"type": "user", "date": date, "sender_user": {
                "id": int(sender_id), "is_bot": False, "first_name": sender_name}}
        else:
            origin = {"type": "hidden_user", "date": date, "sender_user_name": sender_name}
        msg = update["message"]
        # Telegram puts forward_origin right after date; order does not matter to parsers
        update["message"] = {**{k: msg[k] for k in ("message_id", "from", "chat", "date")},
                             "forward_origin": origin, **{k: v for k, v in msg.items()
                                                          if k not in ("message_id", "from", "chat", "date")}}
        return update

    def reply_to(self, update: dict[str, Any], replied: dict[str, Any]) -> dict[str, Any]:
        """``update``'s message as a reply to ``replied`` (a Message dict, the user's or the bot's)."""
        update["message"]["reply_to_message"] = replied
        return update

    def earlier_message(self, chat_id: int, message_id: int, text: str, *, from_bot: bool) -> dict[str, Any]:
        """A Message dict for an earlier message of this chat (what ``reply_to_message`` carries)."""
        msg: dict[str, Any] = {
            "message_id": int(message_id),
            "from": dict(self.bot_user) if from_bot else self.user_for(chat_id),
            "chat": self.chat_for(chat_id),
            "date": self._dates.get((chat_id, int(message_id)), self._now()),
            "text": text,
        }
        entities = text_entities(text) if text else []
        if entities and not from_bot:
            msg["entities"] = entities
        return msg

    @staticmethod
    def redeliver(update: dict[str, Any]) -> dict[str, Any]:
        """The same update again, same ``update_id``: Telegram's at-least-once delivery."""
        return copy.deepcopy(update)


def callback_chat(query_id: str) -> int | None:
    """The chat id a builder-made callback query id carries, or None for a foreign id."""
    m = re.search(r"-(-?\d+)$", query_id or "")
    return int(m.group(1)) if m else None
