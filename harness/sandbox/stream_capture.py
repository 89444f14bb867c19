"""A streamed LLM answer read back as the gateway passes it through: ``StreamCapture`` is fed
the SSE bytes as they go to the agent (OpenAI ``chat.completion.chunk`` or Anthropic Messages
events) and rebuilds the completion, its usage chunk and the frames that did not parse, so a
streamed call is recorded and metered like a plain one."""

from __future__ import annotations

import json


class StreamCapture:
    """Reads an SSE stream (OpenAI chunks or Anthropic events) as it passes, and gives it back
    as the provider's non-streamed JSON: text, refusal, tool calls with their arguments, the
    finish reason, and ``usage`` only when the stream carried one."""

    def __init__(self, provider: str):
        self.provider = provider
        self._buf = b""
        self.frames = 0
        self.broken = 0
        self.model = ""
        self.id = ""
        self.text: list[str] = []
        self.refusal: list[str] = []
        self.calls: dict[int, dict] = {}
        self.blocks: dict[int, dict] = {}
        self.finish = ""
        self.usage: dict | None = None

    def feed(self, data: bytes) -> None:
        self._buf = (self._buf + data).replace(b"\r\n", b"\n")
        while b"\n\n" in self._buf:
            frame, self._buf = self._buf.split(b"\n\n", 1)
            self._frame(frame)

    def _frame(self, frame: bytes) -> None:
        lines = frame.decode("utf-8", "replace").split("\n")
        data = "\n".join(line[5:].lstrip() for line in lines if line.startswith("data:"))
        if not data or data.strip() == "[DONE]":
            return
        self.frames += 1
        try:
            obj = json.loads(data)
        except (ValueError, RecursionError):
            self.broken += 1
            return
        if isinstance(obj, dict):
            (self._anthropic if self.provider == "anthropic" else self._openai)(obj)

    def _openai(self, chunk: dict) -> None:
        self.model = self.model or str(chunk.get("model") or "")
        self.id = self.id or str(chunk.get("id") or "")
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        for choice in chunk.get("choices") or ():
            delta = choice.get("delta") or {}
            if isinstance(delta.get("content"), str):
                self.text.append(delta["content"])
            if isinstance(delta.get("refusal"), str):
                self.refusal.append(delta["refusal"])
            for call in delta.get("tool_calls") or ():
                slot = self.calls.setdefault(int(call.get("index", 0)), {"id": "", "name": "", "arguments": ""})
                fn = call.get("function") or {}
                slot["id"] = slot["id"] or call.get("id") or ""
                slot["name"] += fn.get("name") or ""
                slot["arguments"] += fn.get("arguments") or ""
            if choice.get("finish_reason"):
                self.finish = choice["finish_reason"]

    def _anthropic(self, event: dict) -> None:
        kind = event.get("type")
        if kind == "message_start":
            msg = event.get("message") or {}
            self.model, self.id = str(msg.get("model") or ""), str(msg.get("id") or "")
            if isinstance(msg.get("usage"), dict):
                self.usage = dict(msg["usage"])
        elif kind == "content_block_start":
            block = dict(event.get("content_block") or {})
            block.setdefault("text", "") if block.get("type") == "text" else block.update(partial="")
            self.blocks[int(event.get("index", 0))] = block
        elif kind == "content_block_delta":
            block = self.blocks.setdefault(int(event.get("index", 0)), {"type": "text", "text": ""})
            delta = event.get("delta") or {}
            if delta.get("type") == "text_delta":
                block["text"] = block.get("text", "") + str(delta.get("text", ""))
            elif delta.get("type") == "input_json_delta":
                block["partial"] = block.get("partial", "") + str(delta.get("partial_json", ""))
        elif kind == "message_delta":
            self.finish = str((event.get("delta") or {}).get("stop_reason") or self.finish)
            usage = event.get("usage")
            if isinstance(usage, dict):
                self.usage = {**(self.usage or {}), **{k: v for k, v in usage.items() if v is not None}}

    def completion(self) -> dict:
        """The stream read back as the provider's non-streamed answer."""
        if self._buf.strip():
            self._frame(self._buf)
            self._buf = b""
        if self.provider == "anthropic":
            content = []
            for _, block in sorted(self.blocks.items()):
                if block.get("type") == "tool_use":
                    try:
                        args = json.loads(block.get("partial") or "{}")
                    except (ValueError, RecursionError):
                        args = {}
                    content.append({"type": "tool_use", "id": block.get("id", ""), "name": block.get("name", ""),
                                    "input": args})
                else:
                    content.append({"type": "text", "text": block.get("text", "")})
            out = {"id": self.id, "type": "message", "role": "assistant", "model": self.model, "content": content,
                   "stop_reason": self.finish or None}
        else:
            msg: dict = {"role": "assistant", "content": "".join(self.text) or None,
                         "refusal": "".join(self.refusal) or None}
            if self.calls:
                msg["tool_calls"] = [{"id": c["id"], "type": "function",
                                      "function": {"name": c["name"], "arguments": c["arguments"]}}
                                     for _, c in sorted(self.calls.items())]
            out = {"id": self.id, "object": "chat.completion", "model": self.model,
                   "choices": [{"index": 0, "message": msg, "finish_reason": self.finish or None}]}
        if self.usage is not None:
            out["usage"] = self.usage
        return out
