"""Run-wide services of the reasoning layer: embedder, goldens, critic (built on first use).

``harness.services.default_factories`` maps the names to these functions; importing this
module imports no torch (the embedder loads the model at its first ``embed``).
Each service may offer ``report_models() -> dict`` (merged into results.json ``models``),
``report_notes() -> list[str]`` (run notes), ``begin()`` (called on the event loop when the
run's last case has started: the critic starts scoring its health set there, beside the
run's tail) and ``async finalize()`` (run once after the cases, before the report: the
critic's health score is awaited there).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from harness.models import settings as S


#: Vectors an ``EmbedderService`` keeps in memory, by text (~1.5 kB each at 384 dimensions).
MEMORY_TEXTS = 50_000


class EmbedderService:
    """The run's embedder plus what the report says about it.

    A text asked for again (a reply every calibration run gets alike, a claim a paraphrase
    left as it was, a golden a second check reads) is answered from memory, and a text already
    on its way to the model is waited for, not sent twice: the same text gives the same
    vector, so only the model's work changes (``memory_hits`` in ``embedder_stats``)."""

    def __init__(self, front, memory: int = MEMORY_TEXTS):
        from collections import OrderedDict

        self.front = front
        self.name = front.name
        self.source = front.source
        self.memory = memory
        self.memory_hits = 0
        self._memory: "OrderedDict[str, Any]" = OrderedDict()
        self._inflight: dict[str, Any] = {}

    async def embed(self, texts, *, cache: bool = False):
        import asyncio

        import numpy as np

        texts = [t if isinstance(t, str) else str(t) for t in texts]
        if not self.memory:
            return await self.front.embed(texts, cache=cache)
        rows: list[Any] = [None] * len(texts)
        pending: dict[str, Any] = {}
        new: list[str] = []
        for i, t in enumerate(texts):
            known = self._memory.get(t)
            if known is not None:
                self._memory.move_to_end(t)
                rows[i] = known
                self.memory_hits += 1
            elif t in self._inflight:
                pending[t] = self._inflight[t]
                self.memory_hits += 1
            elif t not in pending:
                new.append(t)
                pending[t] = None
        if new:  # one encode for them, not tied to this caller: a cancelled case leaves it to the others
            task = asyncio.ensure_future(self._encode(new, cache))
            task.add_done_callback(lambda t: t.cancelled() or t.exception())
            for t in new:
                pending[t] = self._inflight[t] = task
        found: dict[str, Any] = {}
        for task in dict.fromkeys(pending.values()):
            found.update(await asyncio.shield(task))
        for i, t in enumerate(texts):
            if rows[i] is None:
                rows[i] = found[t]
        if not rows:
            return np.zeros((0, self.front.dim), dtype=np.float32)
        return np.vstack(rows).astype(np.float32)

    async def _encode(self, texts: list[str], cache: bool) -> dict[str, Any]:
        try:
            vectors = await self.front.embed(texts, cache=cache)
        finally:
            for t in texts:
                self._inflight.pop(t, None)
        out = dict(zip(texts, vectors))
        self._memory.update(out)
        while len(self._memory) > self.memory:
            self._memory.popitem(last=False)
        return out

    @property
    def stats(self):
        return self.front.stats

    @property
    def loaded(self) -> bool:
        """Is the model in memory (False until the first text is encoded)?"""
        return self.front.loaded

    def report_models(self) -> dict[str, Any]:
        return {"embedder": self.name, "embedder_stats": {**self.front.report(), "memory_hits": self.memory_hits}}

    def report_notes(self) -> list[str]:
        s = self.front.stats
        rate = f", {s.texts_encoded / s.encode_s:.0f} texts/s in the model" if s.encode_s > 0 else ""
        return [f"embeddings ({self.name}): {s.texts_encoded} texts encoded in {s.batches} batches{rate}; "
                f"{s.cache_hits} disk-cache hits, {self.memory_hits} from memory; model load {s.load_s:.1f}s"]

    async def aclose(self) -> None:
        await self.front.aclose()


def make_embedder(services) -> EmbedderService:
    cfg = S.embedding_settings(services.config)
    cache = S.cache_dir(services.config)
    from harness.models import embedder as E

    make = E.hash_embedder if cfg.backend == "hash" else E.minilm_embedder
    front = make(cache, max_batch=cfg.max_batch, max_wait_s=cfg.max_wait_ms / 1000)
    front.cache_all = getattr(services, "embed_cache_all", True)
    front.record = getattr(services, "embed_record", True)
    say = getattr(services, "say", None)
    if say is not None:
        front.on_load = lambda waiting: say(f"loading the embedding model: {waiting} text(s) not in its disk cache "
                                            f"({cache / 'embeddings'}); the cases go on meanwhile")
    return EmbedderService(front)


def model_needed_last_run(config) -> bool:
    """Did the last run that used the embedding model with this config's cache have texts the
    disk cache did not hold (True also when no such run is on record)? A run whose texts were
    all there (a bot answering as it did) need not load the model ahead (harness/run/warm.py)."""
    from harness.models.embed_cache import last_run

    record = last_run(S.cache_dir(config))
    return record is None or record["texts_encoded"] > 0


def golden_dir(services) -> Path:
    return Path(getattr(services, "golden_dir", None) or services.config.golden_dir())


def make_goldens(services):
    from harness.golden import load_goldens

    return load_goldens(golden_dir(services))


class CriticService:
    """The configured critic, the source documents it judges against, and its health."""

    def __init__(self, backend, docs_dir: Path, health_dir: Path, say=None, cache_dir: Path | None = None):
        self._backend = backend
        self.docs_dir = docs_dir
        self.health_dir = health_dir
        self.cache_dir = cache_dir
        """Where a deterministic critic's health figures are kept by content (None: not kept)."""
        self._texts: dict[str, str] = {}
        self.health: dict[str, Any] | None = None
        self.health_line = ""
        self.used = False
        """Did a check ask the critic anything (``backend`` was read)? The service is built before
        the cases when a layer declares it; a run whose cases never reached a critic check (budget
        stop, similarity checks only) scores no judge-health set at its end."""
        self.say = say
        """One line on the run's console (``Services.say``); None: logged only."""
        self._scoring = None

    @property
    def backend(self):
        """The critic itself; reading it marks the service used (``finalize`` scores health only then)."""
        self.used = True
        return self._backend

    @property
    def name(self) -> str:
        return self._backend.name

    @property
    def source(self) -> str:
        return self._backend.source

    def source_text(self, name: str) -> str:
        """The text of a document in fixtures/documents (OSError/ValueError if unreadable)."""
        if name not in self._texts:
            from harness.models.claims import document_text

            path = (self.docs_dir / name).resolve()
            if self.docs_dir.resolve() not in path.parents:
                raise OSError(f"{name!r} is outside the documents folder")
            self._texts[name] = document_text(path)
        return self._texts[name]

    def begin(self) -> None:
        """Start scoring the health set now, in the background (``finalize`` awaits it)."""
        import asyncio

        if self._scoring is None and self.health is None and self.used:  # not for a run no critic check reached
            self._scoring = asyncio.ensure_future(self._score())

    async def finalize(self) -> None:
        """Score the critic on its labelled health set, once per service: runs that share it
        (``harness calibrate``) share its score, as they share its verdicts."""
        self.begin()
        if self._scoring is not None:
            await self._scoring
        elif self.health is None:
            self.health_line = "critic health not measured: no case was judged by the critic"

    async def _score(self) -> None:
        from harness.models import critic_health as H

        if self.health is not None:
            return
        if not self.used:  # no case was judged: nothing to score the judge for (issue 25)
            self.health_line = "critic health not measured: no case was judged by the critic"
            return
        try:
            examples = H.load_examples(self.health_dir)
        except Exception as exc:  # a broken health set is reported, it does not sink the run
            self.health_line = f"critic health not measured: {exc}"
            return
        if not examples:
            self.health_line = f"critic health not measured: no labelled examples in {self.health_dir}"
            return
        path = self._health_path(examples)
        kept = _read_json(path)
        if kept is not None:
            self.health = kept["health"]
            self.health_line = kept["line"] + " (kept from an earlier run: the same critic code, examples and documents)"
            return
        import logging
        import time

        say = self.say or logging.getLogger("harness.models").info
        started = time.monotonic()
        say(f"judge health: scoring the critic ({self.name}) on {len(examples)} labelled examples "
            f"in {self.health_dir} ...")
        agreement = await H.score_critic(self._backend, examples, self.source_text)
        self.health = {"critic": self.name, "source": self.source, **agreement.as_dict()}
        self.health_line = H.describe(self.name, agreement)
        say(f"judge health: done in {time.monotonic() - started:.1f} s")
        if path is not None:
            _write_json(path, {"health": self.health, "line": self.health_line})

    def _health_path(self, examples) -> Path | None:
        """``<cache>/critic_health/<key>.json`` for a deterministic critic, keyed by everything its
        figures depend on: the models' code, the critic's name (its rules and embedder), every
        example and the text of every document they name; None when not kept."""
        if self.cache_dir is None or not getattr(self._backend, "deterministic", False):
            return None
        import hashlib

        import harness

        h = hashlib.sha256()
        root = Path(harness.__file__).parent / "models"
        for p in sorted([*root.glob("*.py"), *root.glob("rules/*.py")]):
            h.update(p.name.encode() + b"\0" + p.read_bytes())
        h.update(self.name.encode() + b"\0")
        for ex in examples:
            try:
                text = ex.source_text or self.source_text(ex.source)
            except (OSError, ValueError):
                text = "\0unreadable"
            h.update("\x1e".join([ex.reply, ex.source, text, str(ex.verdict)]).encode() + b"\x1f")
        return self.cache_dir / "critic_health" / f"{h.hexdigest()}.json"

    def report_models(self) -> dict[str, Any]:
        out: dict[str, Any] = {"critic": self.name}
        if self.health is not None:
            out["critic_health"] = self.health
        report = getattr(self._backend, "report", None)
        if report:
            out["critic_stats"] = report()
        return out

    def report_notes(self) -> list[str]:
        return [self.health_line] if self.health_line else []

    async def aclose(self) -> None:
        close = getattr(self._backend, "aclose", None)
        if close:
            await close()


def build_critic(services):
    """The configured backend (the offline one takes the run's embedder)."""
    cfg = S.critic_settings(services.config)
    if cfg.backend == "offline":
        from harness.models.critic_offline import OfflineCritic

        return OfflineCritic(services.get("embedder"), support_min=cfg.support_min,
                             unsupported_below=cfg.unsupported_below)
    from harness.models.critic_llm import AnthropicCritic, OpenAICritic

    cls = OpenAICritic if cfg.backend == "openai" else AnthropicCritic
    key = os.environ.get(cfg.api_key_env, "") if cfg.api_key_env else ""
    return cls(model=cfg.model, base_url=cfg.base_url, api_key=key, timeout_s=cfg.timeout_s,
               max_retries=cfg.max_retries, cache_dir=S.cache_dir(services.config),
               max_source_chars=cfg.max_source_chars)


def make_critic(services) -> CriticService:
    config = services.config
    return CriticService(build_critic(services), config.resolve(config.sandbox.docs_dir),
                         golden_dir(services) / "critic", say=lambda line: services.say(line) if services.say else None,
                         cache_dir=S.cache_dir(config))


def _read_json(path: Path | None) -> dict | None:
    if path is None:
        return None
    import json

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("health"), dict) and data.get("line") else None


def _write_json(path: Path, data: dict) -> None:
    import json

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:  # a read-only cache keeps nothing; the figures were still measured
        pass


FACTORIES = {"embedder": make_embedder, "goldens": make_goldens, "critic": make_critic}
