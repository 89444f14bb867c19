"""The tool spy: ``{tools_url}/<tool>`` logs every tool call an agent routes through the sandbox.

An agent whose tools are HTTP calls points them here (or the spy is put in front of the
real tool service); ``tools_called`` checks then see calls the agent really made.
"""

from __future__ import annotations

import json
import time
from typing import Any, Callable, Mapping

from aiohttp import web

from harness.sandbox.router import doc_token_keys
from harness.types import Event


class ToolSpy:
    def __init__(self, sink: Callable[[Event], None], responses: Mapping[str, Any] | None = None,
                 clock: Callable[[], float] = time.time):
        self.sink = sink
        self.responses = dict(responses or {})
        self.clock = clock

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("*", "/{tool}", self.call)
        return app

    async def call(self, request: web.Request) -> web.Response:
        at = self.clock()
        tool = request.match_info["tool"]
        raw = await request.text()
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {"raw": raw[:2000]}
        keys = []
        if isinstance(body, dict):
            for field in ("user", "chat_id", "wa_id"):
                if body.get(field):
                    keys.append(f"user:{body[field]}")
        keys.extend(doc_token_keys(raw))
        answer = self.responses.get(tool, {"ok": True})
        self.sink(Event(source="tools", name=tool, at=at, status=200, request=body if isinstance(body, dict) else {},
                        response=answer, keys=tuple(keys)))
        return web.json_response(answer)
