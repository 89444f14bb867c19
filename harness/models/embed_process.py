"""The embedding model in a child process (``embed_worker.py`` runs there): the harness's side of
the pipe. The model's load and its encodes never hold the harness's event loop, and torch is
never imported by the harness itself (``harness.models.embedder.minilm_embedder`` uses it)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Callable


class MiniLMProcess:
    """The real model in a child process (``embed_worker.py``): loaded and encoding beside the
    harness's event loop, never on it. ``load`` starts the child and waits until the model is
    in; ``encode`` sends one batch and reads its vectors (both block: the batching front calls
    them in a worker thread, one at a time)."""

    def __init__(self, model_dir: Callable[[], Path], batch_size: int = 32):
        self.model_dir = model_dir
        """Where the model's files are (``embedder.model_dir``; MissingExtra without the extra)."""
        self.batch_size = batch_size
        self._proc = None
        self._lock = threading.Lock()
        self.dim = 384

    def load(self) -> None:
        import subprocess
        import sys

        with self._lock:
            if self._proc is not None and self._proc.poll() is None:
                return
            worker = Path(__file__).with_name("embed_worker.py")
            proc = subprocess.Popen([sys.executable, str(worker), str(self.model_dir()), str(self.batch_size)],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            line = proc.stdout.readline().decode("utf-8", "replace").strip()
            if not line.startswith("READY"):
                proc.kill()
                proc.wait()
                raise RuntimeError(f"the embedding model did not load: {line[6:] if line.startswith('ERROR') else line or 'the model process exited'}")
            self.dim = int(line.split()[1])
            self._proc = proc

    def encode(self, texts: list[str]):
        import json
        import struct

        import numpy as np

        self.load()
        with self._lock:
            proc = self._proc
            body = json.dumps(list(texts), ensure_ascii=False).encode("utf-8")
            try:
                proc.stdin.write(struct.pack(">I", len(body)) + body)
                proc.stdin.flush()
                (rows,) = struct.unpack(">I", _read_exact(proc.stdout, 4))
                data = _read_exact(proc.stdout, rows * self.dim * 4)
            except (OSError, EOFError, struct.error) as exc:
                self._proc = None
                proc.kill()
                raise RuntimeError(f"the embedding model process failed: {type(exc).__name__}: {exc}") from exc
        return np.frombuffer(data, dtype=np.float32).reshape(rows, self.dim).copy()

    def close(self) -> None:
        with self._lock:
            proc, self._proc = self._proc, None
        if proc is not None:  # it holds nothing worth a clean exit (torch's teardown takes seconds)
            try:
                proc.stdin.close()
            except OSError:  # pragma: no cover - already gone
                pass
            proc.kill()
            proc.wait()


def _read_exact(stream, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = stream.read(n - len(data))
        if not chunk:
            raise EOFError("the embedding model process ended")
        data += chunk
    return data
