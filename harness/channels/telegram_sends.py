"""The Bot API methods beyond text, documents and photos that bots call (core.telegram.org/bots/api):
voice, audio, video, animation, video notes and stickers; locations, venues, contacts, polls, dice;
albums (sendMediaGroup); copies and forwards; caption edits; pins and the chat queries. Each
answers as the Bot API server does (the Message it returns, or True), so a bot that sends a voice
answer or an album is judged on what it sent, not refused with a 404 the real server never gives.
Mixed into ``BotApiMethods`` (telegram_methods.py): ``_new_message``, ``_store``, ``_file``,
``_caption``, ``_chat``, ``_state`` and ``bot_user`` are its."""

from __future__ import annotations

from typing import Any, Mapping

from harness.channels.telegram_calls import MEDIA_SENDS, OTHER_SENDS, _bad, formatted
from harness.channels.telegram_limits import _int, _int_chat


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise _bad("invalid request: a number expected") from None


class MoreSends:
    """Media, places, polls, albums, copies, pins and chat queries (see the module's text)."""

    _new_message: Any
    _store: Any
    _file: Any
    _caption: Any
    _chat: Any
    _message_to_edit: Any
    _state: Any
    bot_user: dict[str, Any]

    async def _media(self, method: str, params: Mapping[str, Any], at: float) -> Any:
        key = MEDIA_SENDS[method]
        msg = self._new_message(params, at)
        item = self._file(params[key], key)
        given = params[key]
        if isinstance(given, Mapping) and given.get("content_type"):
            item["mime_type"] = given["content_type"]
        for extra in ("duration", "width", "height", "length", "title", "performer", "emoji"):
            if isinstance(params.get(extra), (int, str)) and not isinstance(params.get(extra), bool):
                item[extra] = params[extra]
        msg[key] = item
        if key not in ("video_note", "sticker"):
            self._caption(msg, params)
        return self._store(msg)

    async def _other(self, method: str, params: Mapping[str, Any], at: float) -> Any:
        key = OTHER_SENDS[method]
        msg = self._new_message(params, at)
        if key in ("location", "venue"):
            place = {"latitude": _number(params.get("latitude")), "longitude": _number(params.get("longitude"))}
            msg["location"] = place
            if key == "venue":
                msg["venue"] = {"location": place, "title": str(params.get("title") or ""),
                                "address": str(params.get("address") or "")}
        elif key == "contact":
            msg["contact"] = {k: str(params[k]) for k in ("phone_number", "first_name", "last_name")
                              if params.get(k) not in (None, "")}
        elif key == "poll":
            options = params.get("options") if isinstance(params.get("options"), list) else []
            msg["poll"] = {"id": f"poll{msg['message_id']}", "question": str(params.get("question") or ""),
                           "options": [{"text": o if isinstance(o, str) else str((o or {}).get("text", "")),
                                        "voter_count": 0} for o in options],
                           "total_voter_count": 0, "is_closed": False, "is_anonymous": True, "type": "regular",
                           "allows_multiple_answers": False}
        else:  # dice
            msg["dice"] = {"emoji": str(params.get("emoji") or "🎲"), "value": 1 + msg["message_id"] % 6}
        return self._store(msg)

    async def _m_sendMediaGroup(self, params: Mapping[str, Any], at: float) -> Any:
        items = params["media"]
        if not 2 <= len(items) <= 10:
            raise _bad("Too few media in a media group" if len(items) < 2 else "Too many media in a media group")
        out = []
        for item in items:
            if not isinstance(item, Mapping) or item.get("type") not in ("photo", "video", "audio", "document"):
                raise _bad("Can't parse InputMedia: Media type must be specified")
            msg = self._new_message(params, at)
            msg["media_group_id"] = f"group{at:.0f}"
            kind = item["type"]
            file = self._file(item.get("media"), kind)
            msg[kind] = [{**file, "width": 800, "height": 600}] if kind == "photo" else file
            if isinstance(item.get("caption"), str) and item["caption"]:
                shown = formatted("sendPhoto", item)
                msg["caption"] = shown.text
            out.append(self._store(msg))
        return out

    async def _m_copyMessage(self, params: Mapping[str, Any], at: float) -> Any:
        source = self._source(params, "message to copy not found")
        msg = self._new_message(params, at)
        self._store({**source, **{k: msg[k] for k in ("message_id", "chat", "date", "from")}})
        return {"message_id": msg["message_id"]}

    async def _m_forwardMessage(self, params: Mapping[str, Any], at: float) -> Any:
        source = self._source(params, "message to forward not found")
        msg = self._new_message(params, at)
        return self._store({**source, **{k: msg[k] for k in ("message_id", "chat", "date", "from")},
                            "forward_origin": {"type": "user", "sender_user": dict(self.bot_user),
                                               "date": source.get("date", int(at))}})

    def _source(self, params: Mapping[str, Any], missing: str) -> dict[str, Any]:
        key = (_int_chat(params["from_chat_id"]), _int(params["message_id"]))
        source = self._state.messages.get(key)
        if source is None:  # the user's own messages are not stored: a copy of one carries no text here
            if key[1] <= 0:
                raise _bad(missing)
            source = {"message_id": key[1], "chat": self._chat(key[0])}
        return dict(source)

    async def _m_editMessageCaption(self, params: Mapping[str, Any], at: float) -> Any:
        if params.get("inline_message_id"):
            return True
        msg = {**self._message_to_edit(params), "edit_date": int(at)}
        self._caption(msg, params)
        return self._store(msg)

    async def _m_pinChatMessage(self, params: Mapping[str, Any], at: float) -> Any:
        if params.get("message_id") in (None, ""):
            raise _bad("message identifier is not specified")
        return True

    async def _m_unpinChatMessage(self, params: Mapping[str, Any], at: float) -> Any:
        return True

    _m_unpinAllChatMessages = _m_unpinChatMessage
    _m_leaveChat = _m_unpinChatMessage

    async def _m_answerInlineQuery(self, params: Mapping[str, Any], at: float) -> Any:
        if not params.get("inline_query_id"):
            raise _bad("query is too old and response timeout expired or query ID is invalid")
        return True

    async def _m_getChatMember(self, params: Mapping[str, Any], at: float) -> Any:
        user = _int(params.get("user_id"))
        if user == self.bot_user.get("id"):
            return {"status": "member", "user": dict(self.bot_user)}
        return {"status": "member", "user": {"id": user, "is_bot": False, "first_name": "Tester"}}

    async def _m_getChatMemberCount(self, params: Mapping[str, Any], at: float) -> Any:
        return 2

    async def _m_getChatAdministrators(self, params: Mapping[str, Any], at: float) -> Any:
        return []

    async def _m_getUserProfilePhotos(self, params: Mapping[str, Any], at: float) -> Any:
        return {"total_count": 0, "photos": []}

    async def _m_getMyDescription(self, params: Mapping[str, Any], at: float) -> Any:
        return {"description": ""}

    async def _m_getMyShortDescription(self, params: Mapping[str, Any], at: float) -> Any:
        return {"short_description": ""}

    async def _m_getMyName(self, params: Mapping[str, Any], at: float) -> Any:
        return {"name": str(self.bot_user.get("first_name") or "")}

    async def _m_getChatMenuButton(self, params: Mapping[str, Any], at: float) -> Any:
        return {"type": "default"}

    async def _m_sendMessageDraft(self, params: Mapping[str, Any], at: float) -> Any:
        """A preview of an answer being written (Bot API 9.3): shown while it lasts, no message,
        so no reply (the answer the user keeps is the sendMessage that follows)."""
        try:
            draft = int(str(params.get("draft_id") or 0))
        except ValueError:
            draft = 0
        if draft == 0:
            raise _bad("draft_id must be non-zero")
        return True

    async def _m_deleteMessages(self, params: Mapping[str, Any], at: float) -> Any:
        ids = params.get("message_ids")
        if not isinstance(ids, list) or not 1 <= len(ids) <= 100:
            raise _bad("message_ids must be an array of 1-100 message identifiers")
        chat = _int_chat(params["chat_id"])
        for mid in ids:
            self._state.messages.pop((chat, _int(mid)), None)
        return True

    async def _m_editMessageMedia(self, params: Mapping[str, Any], at: float) -> Any:
        if params.get("inline_message_id"):
            return True
        old = self._message_to_edit(params)
        media = params.get("media")
        if not isinstance(media, Mapping) or media.get("type") not in ("photo", "video", "audio", "document",
                                                                       "animation"):
            raise _bad("can't parse InputMedia: Media type must be specified")
        kind = str(media["type"])
        msg = {k: v for k, v in old.items() if k not in ("photo", "video", "audio", "document", "animation")}
        file = self._file(media.get("media"), kind)
        msg[kind] = [{**file, "width": 800, "height": 600}] if kind == "photo" else file
        msg["edit_date"] = int(at)
        return self._store(msg)

    async def _m_stopPoll(self, params: Mapping[str, Any], at: float) -> Any:
        old = self._state.messages.get((_int_chat(params.get("chat_id")), _int(params.get("message_id"))))
        if old is None or "poll" not in old:
            raise _bad("message with poll to stop not found")
        return {**old["poll"], "is_closed": True}

    _m_setChatTitle = _m_unpinChatMessage
    _m_setChatDescription = _m_unpinChatMessage


def _bind(method: str, handler: str) -> Any:
    async def call(self: MoreSends, params: Mapping[str, Any], at: float) -> Any:
        return await getattr(self, handler)(method, params, at)
    call.__name__ = f"_m_{method}"
    return call


for _method in MEDIA_SENDS:
    setattr(MoreSends, f"_m_{_method}", _bind(_method, "_media"))
for _method in OTHER_SENDS:
    setattr(MoreSends, f"_m_{_method}", _bind(_method, "_other"))
