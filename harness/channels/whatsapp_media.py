"""The user's media on the Graph API emulator: ``GET /<version>/<media-id>`` says where to download
it, and that URL serves its bytes to a caller with the access token (Meta: lookaside.fbsbx.com).
Mixed into ``GraphApiEmulator`` (whatsapp_emulator.py), whose ``_authorize`` and ``_emit`` it uses;
the bytes come from channels/media.py."""

from __future__ import annotations

import time
from typing import Any

from aiohttp import web

from harness.channels.media import InboundFile
from harness.channels.whatsapp_messages import _Rejected, graph_error

#: The path of a user's media download URL (Meta's is https://lookaside.fbsbx.com/whatsapp_business/attachments/).
ATTACHMENTS = "/whatsapp_business/attachments/"


class MediaDownloads:
    """The media handlers of ``GraphApiEmulator`` (``self.media_files``, ``self._media``,
    ``self._authorize``, ``self._emit`` and ``self.clock``: the emulator's)."""

    media_files: dict[str, InboundFile]
    _media: set[str]
    _authorize: Any
    _emit: Any
    clock: Any

    def note_file(self, media_id: str, file: InboundFile) -> None:
        """A user's media the agent may fetch: ``GET /<version>/<media-id>`` gives its URL, which serves it."""
        self.media_files[str(media_id)] = file
        self._media.add(str(media_id))

    def _media_info(self, request: web.Request, media_id: str, media: InboundFile, started: float,
                    at: float) -> web.Response:
        """``GET /<version>/<media-id>``: where to download a user's media (Graph's shape: the size a string)."""
        try:
            self._authorize(request)
        except _Rejected as rej:
            self._emit("whatsapp.media_url", started, at, rej.status, {"id": media_id}, rej.body, keys=media.keys,
                       error=str(rej))
            return web.json_response(rej.body, status=rej.status)
        url = f"{request.scheme}://{request.host}{ATTACHMENTS}?mid={media_id}&ext={int(at)}&hash={media.sha256_hex[:16]}"
        answer = {"messaging_product": "whatsapp", "url": url, "mime_type": media.mime_type,
                  "sha256": media.sha256_hex, "file_size": str(media.byte_size), "id": media_id}
        self._emit("whatsapp.media_url", started, at, 200, {"id": media_id}, answer, keys=media.keys)
        return web.json_response(answer)

    async def _attachment(self, request: web.Request) -> web.Response:
        """The media download URL: the bytes, with the access token as Meta requires (401 without)."""
        started, at = time.perf_counter(), self.clock()
        media_id = request.query.get("mid", "")
        media = self.media_files.get(media_id)
        try:
            self._authorize(request)
            if media is None or not media.served:  # (a file over media.READ_MAX is never read)
                raise _Rejected(404, graph_error("Media not found", 100))
        except _Rejected as rej:
            self._emit("whatsapp.media_download", started, at, rej.status, {"mid": media_id}, rej.body,
                       keys=media.keys if media else (), error=str(rej))
            return web.json_response(rej.body, status=rej.status)
        self._emit("whatsapp.media_download", started, at, 200, {"mid": media_id},
                   {"bytes": len(media.data), "origin": media.origin}, keys=media.keys)
        return web.Response(body=media.data, content_type=media.mime_type.split(";")[0].strip() or
                            "application/octet-stream")
