"""Test doubles (labelled): an OpenAI-compatible and an Anthropic-compatible server on 127.0.0.1.

Each answers from a script of behaviours, one per request, then repeats the last:
``("429", seconds)`` rate-limits with Retry-After, ``("500",)`` fails, ``("sleep", s)``
answers late, ``("text", content)`` answers with that content, ``("judge",)`` answers
like a naive judge: "Yes" when the statement's words occur in the document, else "No".
Every answer carries ``X-Test-Double: 1`` so the critic labels its verdicts test-double.
"""

from __future__ import annotations

import asyncio
import json
import re
import time

from aiohttp import web


class ScriptedLLM:
    def __init__(self, kind: str, script: list[tuple]):
        self.kind = kind  # "openai" | "anthropic"
        self.script = list(script)
        self.requests: list[dict] = []
        self.times: list[float] = []
        self.answered_late = 0
        """Answers of ``sleep`` steps sent (after their sleep)."""
        self.runner: web.AppRunner | None = None
        self.base_url = ""

    def _content(self, body: dict) -> str:
        if self.kind == "openai":
            return body["messages"][-1]["content"]
        return body["messages"][-1]["content"]

    def _answer(self, text: str) -> web.Response:
        if self.kind == "openai":
            data = {"id": "x", "object": "chat.completion", "model": "m",
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                 "finish_reason": "stop"}]}
        else:
            data = {"id": "x", "type": "message", "role": "assistant", "model": "m",
                    "content": [{"type": "text", "text": text}], "stop_reason": "end_turn"}
        return web.json_response(data, headers={"X-Test-Double": "1"})

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append({"path": request.path, "headers": dict(request.headers), "body": body})
        self.times.append(time.monotonic())
        step = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        kind = step[0]
        if kind == "429":
            return web.json_response({"error": "rate limited"}, status=429,
                                     headers={"Retry-After": str(step[1]), "X-Test-Double": "1"})
        if kind == "500":
            return web.json_response({"error": "boom"}, status=500, headers={"X-Test-Double": "1"})
        if kind == "sleep":
            await asyncio.sleep(step[1])
            self.answered_late += 1
            return self._answer('{"verdict": "Yes", "explanation": "late"}')
        if kind == "text":
            return self._answer(step[1])
        if kind == "judge":
            user = self._content(body)
            blocks = dict(re.findall(r"BEGIN (DATA-\w+ \w+)\n(.*?)\nEND \1", user, re.S))
            doc = next((v for k, v in blocks.items() if k.endswith("DOCUMENT")), "")
            stmt = next((v for k, v in blocks.items() if k.endswith("STATEMENT")), "")
            words = [w for w in re.findall(r"[a-z0-9]+", stmt.lower()) if len(w) > 3]
            yes = all(w in doc.lower() for w in words)
            return self._answer(json.dumps({"verdict": "Yes" if yes else "No", "explanation": "naive word match"}))
        raise AssertionError(f"unknown step {step}")

    async def __aenter__(self) -> "ScriptedLLM":
        app = web.Application()
        path = "/v1/chat/completions" if self.kind == "openai" else "/v1/messages"
        app.router.add_post(path, self.handle)
        self.runner = web.AppRunner(app, shutdown_timeout=1.0)  # a sleeping handler is cancelled, not waited for
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.base_url = f"http://127.0.0.1:{port}/v1" if self.kind == "openai" else f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc) -> None:
        if self.runner:
            await self.runner.cleanup()
