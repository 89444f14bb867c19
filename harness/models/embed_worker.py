"""The embedding model in a child process: ``python -m harness.models.embed_worker MODEL_DIR BATCH``.

The harness's event loop serves the agent's LLM gateway, documents and channels, and every
case in flight is timed on it: importing torch and loading the model in a thread of that
process held it for up to half a second at a time (and the encodes after it), which the
cases measured as the agent's latency. In a child process the load and every encode run
beside the loop, never on it, at a lower CPU priority than the agent (``nice``), and torch is
never imported by the harness itself.

The protocol, over the child's stdin and stdout: the child writes one line, ``READY <dim>``
or ``ERROR <message>``; then each request is a 4-byte big-endian length and that many bytes
of a JSON list of texts, and each answer a 4-byte row count and the rows as float32
(``<dim>`` values each, unit length). The child ends at the end of its stdin.
"""

from __future__ import annotations

import json
import os
import struct
import sys

#: How much lower the child's CPU priority is than the harness's (the agent's work comes first).
NICE = 5


def _read_exact(stream, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = stream.read(n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def main(argv: list[str]) -> int:
    model_dir, batch_size = argv[0], int(argv[1]) if len(argv) > 1 else 32
    out, inp = sys.stdout.buffer, sys.stdin.buffer
    try:
        os.nice(NICE)
    except OSError:  # pragma: no cover - not allowed here: the same priority as the harness
        pass
    for key, value in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("TOKENIZERS_PARALLELISM", "false"),
                       ("HF_HUB_DISABLE_PROGRESS_BARS", "1"), ("TRANSFORMERS_VERBOSITY", "error"), ("TQDM_DISABLE", "1")):
        os.environ.setdefault(key, value)
    try:
        import numpy as np
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(model_dir, device="cpu")
        dim = int(model.get_sentence_embedding_dimension())
    except Exception as exc:  # the parent raises it where the model is needed
        out.write(f"ERROR {type(exc).__name__}: {exc}".replace("\n", " ").encode() + b"\n")
        out.flush()
        return 1
    out.write(f"READY {dim}\n".encode())
    out.flush()
    while True:
        try:
            (n,) = struct.unpack(">I", _read_exact(inp, 4))
            texts = json.loads(_read_exact(inp, n).decode("utf-8"))
        except EOFError:
            return 0
        vectors = model.encode(texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True,
                               show_progress_bar=False)
        rows = np.ascontiguousarray(vectors, dtype=np.float32)
        out.write(struct.pack(">I", len(rows)) + rows.tobytes())
        out.flush()


if __name__ == "__main__":  # pragma: no cover - started by embed_process.MiniLMProcess
    raise SystemExit(main(sys.argv[1:]))
