"""A streamed LLM answer read back as the gateway passes it through: ``StreamCapture`` is fed
the SSE bytes as they go to the agent (OpenAI ``chat.completion.chunk`` or Anthropic Messages
events) and rebuilds the completion, its usage chunk and the frames that did not parse, so a
streamed call is recorded and metered like a plain one."""

from __future__ import annotations

import json

#: A frame longer than this (a stream that never sends a blank line) is dropped as broken, and
#: the text read back stops at MAX_TEXT characters: an endless or hostile upstream costs the
#: gateway bounded memory and linear time, and the agent still gets every byte.
MAX_FRAME = 1 << 20
MAX_TEXT = 4_000_000


class StreamCapture:
    """Reads an SSE stream (OpenAI chunks or Anthropic events) as it passes, and gives it back
    as the provider's non-streamed JSON: text, refusal, tool calls with their arguments, the
    finish reason, and ``usage`` only when the stream carried one."""

    def __init__(self, provider: str):
        self.provider = provider
        self._buf = bytearray()
        self._scanned = 0  # where to look for the next blank line
        self._skipping = False  # the rest of a frame that grew past MAX_FRAME
        self._chars = 0
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
        if not data:
            return
        if self._buf.endswith(b"\r") and data.startswith(b"\n"):  # a CRLF cut between two chunks
            del self._buf[-1]
            self._scanned = max(0, len(self._buf) - 1)
        self._buf += data.replace(b"\r\n", b"\n")
        start = 0
        while True:  # (what was scanned before holds no blank line: look only from its last byte on)
            end = self._buf.find(b"\n\n", max(start, self._scanned))
            if end < 0:
                break
            frame = bytes(self._buf[start:end])
            start = end + 2
            if self._skipping:  # the tail of an oversized frame
                self._skipping = False
                continue
            self._frame(frame)
        del self._buf[:start]
        self._scanned = max(0, len(self._buf) - 1)
        if len(self._buf) > MAX_FRAME:
            self.broken += 1
            self._skipping = True
            self._buf.clear()
            self._scanned = 0

    def _frame(self, frame: bytes) -> None:
        lines = frame.decode("utf-8", "replace").split("\n")
        data = "\n".join(line[5:].lstrip() for line in lines if line.startswith("data:"))
        if not data or data.strip() == "[DONE]":
            return
        self.frames += 1
        try:
            obj = json.loads(data)
            if isinstance(obj, dict):
                (self._anthropic if self.provider == "anthropic" else self._openai)(obj)
        except (ValueError, RecursionError, TypeError, AttributeError, KeyError):
            # not JSON, or a chunk of the wrong shape (choices an object, an index "x"...): one
            # broken frame, never an exception out of the agent's stream
            self.broken += 1

    def _append(self, parts: list[str], text: str) -> None:
        if self._chars < MAX_TEXT:
            parts.append(text[:MAX_TEXT - self._chars])
            self._chars += len(text)

    def _openai(self, chunk: dict) -> None:
        self.model = self.model or str(chunk.get("model") or "")
        self.id = self.id or str(chunk.get("id") or "")
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        for choice in chunk.get("choices") or ():
            delta = choice.get("delta") or {}
            if isinstance(delta.get("content"), str):
                self._append(self.text, delta["content"])
            if isinstance(delta.get("refusal"), str):
                self._append(self.refusal, delta["refusal"])
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
            piece = str(delta.get("text" if delta.get("type") == "text_delta" else "partial_json", ""))
            if self._chars >= MAX_TEXT:
                pass
            elif delta.get("type") == "text_delta":
                block.setdefault("parts", []).append(piece)
            elif delta.get("type") == "input_json_delta":
                block.setdefault("partial_parts", []).append(piece)
            self._chars += len(piece)
        elif kind == "message_delta":
            self.finish = str((event.get("delta") or {}).get("stop_reason") or self.finish)
            usage = event.get("usage")
            if isinstance(usage, dict):
                self.usage = {**(self.usage or {}), **{k: v for k, v in usage.items() if v is not None}}

    def completion(self) -> dict:
        """The stream read back as the provider's non-streamed answer."""
        if self._buf.strip() and not self._skipping:
            self._frame(bytes(self._buf))
        self._buf.clear()
        if self.provider == "anthropic":
            content = []
            for _, block in sorted(self.blocks.items()):
                block = {**block}
                block["text"] = block.get("text", "") + "".join(block.pop("parts", ()))
                block["partial"] = block.get("partial", "") + "".join(block.pop("partial_parts", ()))
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
