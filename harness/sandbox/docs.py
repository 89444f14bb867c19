"""The document server: serves ``fixtures/documents/`` to the agent as ``{docs}/<file>``.

Each case's ``{docs}`` is ``http://127.0.0.1:<port>/c/<token>``: the token in the path
attributes the fetch to the case (``tok:<token>``) without the agent's cooperation.
"""

from __future__ import annotations

import mimetypes
import time
from pathlib import Path
from typing import Callable

from aiohttp import web

from harness.types import Event

EXTRA_TYPES = {".md": "text/markdown", ".txt": "text/plain", ".html": "text/html", ".pdf": "application/pdf"}


class DocumentServer:
    def __init__(self, root: Path, sink: Callable[[Event], None], clock: Callable[[], float] = time.time):
        self.root = root.resolve()
        self.sink = sink
        self.clock = clock
        self.faults = None  # a harness.sandbox.faults.FaultBook, set by the sandbox

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("GET", "/c/{token}/{path:.*}", self.serve)
        app.router.add_route("HEAD", "/c/{token}/{path:.*}", self.serve)
        app.router.add_route("GET", "/{path:.*}", self.serve)
        return app

    def _resolve(self, rel: str) -> Path | None:
        candidate = (self.root / rel).resolve()
        if self.root not in candidate.parents or not candidate.is_file():
            return None
        return candidate

    async def serve(self, request: web.Request) -> web.StreamResponse:
        at = self.clock()
        t0 = time.perf_counter()
        token = request.match_info.get("token", "")
        rel = request.match_info.get("path", "")
        if self.faults is not None:  # scripted per-case faults (harness/sandbox/faults.py)
            injected = await self.faults.before_docs(token, request)
            if injected is not None:
                self.sink(Event(source="docs", name="fetch_document", at=at, status=injected.status,
                                duration_ms=(time.perf_counter() - t0) * 1000,
                                request={"method": request.method, "path": rel}, response=None,
                                keys=(f"tok:{token}",) if token else (), error=injected.error,
                                meta={"fault": injected.fault}))
                return injected.response
        path = self._resolve(rel)
        if path is None:
            status, resp, size, ctype = 404, web.Response(status=404, text="not found"), 0, ""
        else:
            ctype = EXTRA_TYPES.get(path.suffix.lower()) or mimetypes.guess_type(path.name)[0] or "application/octet-stream"
            data = path.read_bytes()
            size = len(data)
            charset = "utf-8" if ctype.startswith("text/") else None
            status = 200
            resp = web.Response(body=data if request.method == "GET" else None, content_type=ctype, charset=charset)
            if request.method == "HEAD":
                resp.content_length = size
        self.sink(Event(source="docs", name="fetch_document", at=at, status=status,
                        duration_ms=(time.perf_counter() - t0) * 1000,
                        request={"method": request.method, "path": rel, "user_agent": request.headers.get("User-Agent", "")},
                        response={"content_type": ctype, "bytes": size},
                        keys=(f"tok:{token}",) if token else (),
                        error="" if status == 200 else f"{rel} not found"))
        return resp
