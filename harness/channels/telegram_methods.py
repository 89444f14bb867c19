"""The Bot API methods the emulator answers, one handler each (``_m_<method>``: returns the
call's ``result`` or raises ``ApiError``), and the message store they share. Mixed into
``BotApiEmulator`` (telegram_emulator.py), which routes, authenticates and records the calls."""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass
from typing import Any, Mapping

from harness.channels.media import TELEGRAM_DOWNLOAD_MAX
from harness.channels.telegram_calls import ApiError, _bad, formatted
from harness.channels.telegram_limits import _int, _int_chat, _seconds
from harness.channels.telegram_markup import Formatted
from harness.channels.telegram_sends import MoreSends


_SECRET_RE = re.compile(r"^[A-Za-z0-9_-]{1,256}$")


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


class BotApiMethods(MoreSends):
    """The method handlers of ``BotApiEmulator`` and the message store they read and write
    (``self._state``, ``self.message_ids``, ``self.webhook``, ``self._pending``: set by the
    emulator's ``__init__``)."""

    files: dict[str, Any]  # file_id -> media.InboundFile: what the simulated users sent
    _file_paths: dict[str, str]  # getFile's file_path -> file_id

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
            if mid > 0 and self._message_exists(chat_id, mid):  # (_check_reply_target refused a missing one unless allowed)
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
        timeout = max(0.0, _seconds(params.get("timeout")))
        # the server's own guard against a bot polling in a tight loop (Client.cpp,
        # process_get_updates_query): the same offset again within 3 s waits at least 3 s, and
        # within 0.5 s gets one update at most
        now = time.monotonic()
        previous = getattr(self, "_last_poll", None)
        if previous is not None and previous[0] == offset:
            if timeout < 3 and now < previous[1] + 3.0:
                timeout = 3.0
            if now < previous[1] + 0.5:
                limit = 1
        self._last_poll = (offset, now)
        # long polling: wait a little for updates, capped so servers stop promptly
        wait = min(timeout, 5.0)
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

    def _message_to_edit(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """The stored message an edit names (chat_id and message_id), as the Bot API refuses one it
        cannot find."""
        if params.get("chat_id") in (None, ""):
            raise _bad("chat_id is empty")
        old = self._state.messages.get((_int_chat(params["chat_id"]), _int(params.get("message_id"))))
        if old is None:
            raise _bad("message to edit not found")
        return old

    async def _m_editMessageReplyMarkup(self, params: Mapping[str, Any], at: float) -> Any:
        if params.get("inline_message_id"):
            return True
        old = self._message_to_edit(params)
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
        sent = self.files.get(file_id)
        if sent is None:  # not a file the user sent (e.g. one the bot uploaded): described, not served
            return {"file_id": file_id, "file_unique_id": "AgAD" + file_id[-6:], "file_size": 12_345,
                    "file_path": f"documents/file_{abs(hash(file_id)) % 1000}.bin"}
        if sent.byte_size > TELEGRAM_DOWNLOAD_MAX:  # bots download at most 20 MB
            raise _bad("file is too big")
        path = next((p for p, f in self._file_paths.items() if f == file_id), None)
        if path is None:  # Telegram's shape: <folder>/file_<n>.<ext>
            kind = sent.mime_type.split("/")[0]
            folder = ("voice" if sent.mime_type.startswith("audio/ogg") else
                      {"image": "photos", "audio": "music", "video": "videos"}.get(kind, "documents"))
            ext = sent.name.rsplit(".", 1)[-1] if "." in sent.name[1:] else ""
            ext = ext if re.fullmatch(r"[A-Za-z0-9]{1,10}", ext) else ""
            path = f"{folder}/file_{len(self._file_paths)}" + (f".{ext}" if ext else "")
            self._file_paths[path] = file_id
        return {"file_id": file_id, "file_unique_id": "AgAD" + file_id[-6:], "file_size": sent.byte_size,
                "file_path": path}

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
