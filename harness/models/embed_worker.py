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


#: The modules of a plain sentence-transformers model: what ``Plain`` computes itself.
PLAIN_MODULES = ("sentence_transformers.models.Transformer", "sentence_transformers.models.Pooling",
                 "sentence_transformers.models.Normalize")


def plain_layout(model_dir: str) -> int | None:
    """The max sequence length of a plain model (a transformer, mean pooling, normalisation, no
    prompts, no lower-casing: all-MiniLM-L6-v2's layout), else None (sentence-transformers loads it)."""
    from pathlib import Path

    root = Path(model_dir)
    try:
        modules = json.loads((root / "modules.json").read_text(encoding="utf-8"))
        if tuple(m.get("type") for m in modules) != PLAIN_MODULES or modules[0].get("path") not in ("", "."):
            return None
        pooling = json.loads((root / modules[1]["path"] / "config.json").read_text(encoding="utf-8"))
        modes = {k: v for k, v in pooling.items() if k.startswith("pooling_mode_")}
        if modes.get("pooling_mode_mean_tokens") is not True or any(v for k, v in modes.items()
                                                                   if k != "pooling_mode_mean_tokens"):
            return None
        if set(pooling) - {"word_embedding_dimension", "include_prompt", *modes}:
            return None
        bert = json.loads((root / "sentence_bert_config.json").read_text(encoding="utf-8"))
        if bert.get("do_lower_case") or set(bert) - {"max_seq_length", "do_lower_case"}:
            return None
        extra = root / "config_sentence_transformers.json"
        if extra.is_file():
            cfg = json.loads(extra.read_text(encoding="utf-8"))
            if cfg.get("prompts") or cfg.get("default_prompt_name") or cfg.get("similarity_fn_name") not in (None,
                                                                                                          "cosine"):
                return None
        length = bert.get("max_seq_length")
        return length if isinstance(length, int) and length > 0 else None
    except (OSError, ValueError, TypeError, KeyError, IndexError, AttributeError):
        return None


class Plain:
    """A plain model without sentence-transformers (whose import takes 3.8 s here, against 1.9 s
    for torch and transformers): the same tokenisation (padded per batch, truncated to the max
    sequence length), batches of texts sorted longest first as it sorts them, mean pooling over
    the attention mask, unit length. tests/models/test_embed_worker.py holds the two to 1e-6."""

    def __init__(self, model_dir: str, max_length: int):
        import torch
        from transformers import AutoModel, AutoTokenizer

        self.torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir)
        self.model = AutoModel.from_pretrained(model_dir)
        self.model.eval()
        self.max_length = max_length
        self.dim = int(self.model.config.hidden_size)

    def get_sentence_embedding_dimension(self) -> int:
        return self.dim

    def encode(self, texts, batch_size: int = 32, **_):
        import numpy as np

        torch = self.torch
        order = np.argsort([-len(t) for t in texts])
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        with torch.inference_mode():
            for start in range(0, len(texts), batch_size):
                idx = order[start:start + batch_size]
                features = self.tokenizer([texts[i] for i in idx], padding=True, truncation="longest_first",
                                          max_length=self.max_length, return_tensors="pt")
                hidden = self.model(**features)[0]
                mask = features["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                out[idx] = torch.nn.functional.normalize(pooled, p=2, dim=1).numpy()
        return out


def load(model_dir: str):
    """``Plain`` for a plain model, else sentence-transformers' own (also when ``Plain`` fails)."""
    length = plain_layout(model_dir)
    if length is not None:
        try:
            return Plain(model_dir, length)
        except Exception:  # noqa: BLE001 - an unexpected transformers: the library's own way
            pass
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(model_dir, device="cpu")


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

        model = load(model_dir)
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
