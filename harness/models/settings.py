"""The reasoning layer's configuration: ``[embeddings]``, ``[critic]`` and the soft budget in ``[budget]``.

Read from ``Config.sections`` (so ``HARNESS_CRITIC_BACKEND=openai`` and friends work) and
validated up front by ``validate`` (a bad value is a ConfigError, exit 2, before anything
runs). Keys, with their defaults::

    [embeddings]
    backend = "minilm"        # minilm (all-MiniLM-L6-v2, offline) | hash (test double)
    threshold = 0.75          # similarity passes at or above (per case: similarity.min)
    fail_below = 0.5          # similarity fails below; in between is a soft error
    cache_dir = ".harness-cache"   # golden/document embeddings and critic answers
    max_batch = 64            # the most texts in one batch
    max_wait_ms = 0           # from idle, wait this long for company (texts that arrive
                              # while the model encodes always go together in the next batch)

    [critic]
    backend = "offline"       # offline | openai (any OpenAI-compatible server) | anthropic
    model = ""                # e.g. "gpt-4o-mini", "llama-3.1-8b-instant", "claude-3-5-haiku-latest"
    base_url = ""             # default per backend; Groq/OCI/vLLM/Ollama: their OpenAI-compatible /v1
    api_key_env = ""          # the environment variable holding the key (never the key itself)
    timeout_s = 30
    max_retries = 3           # on 429 / 5xx / timeouts, honouring Retry-After
    fail_below = 0.5          # rubric / answer scores below fail; [min, 1] pass; between: soft
    support_min = 0.55        # offline critic: cosine at which a claim is supported...
    unsupported_below = 0.35  # ...and below which it is unsupported (between: soft)
    max_source_chars = 40000  # LLM critics: the document is cut to this many characters

    [budget]
    soft_max_fraction_per_layer = 0.334   # more soft cases than this share of a layer's decidable -> fail
    soft_max_per_run = 2                  # more soft cases than this in the run -> fail
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Mapping

from harness.errors import ConfigError

EMBED_BACKENDS = ("minilm", "hash")
CRITIC_BACKENDS = ("offline", "openai", "anthropic")


@dataclass(frozen=True)
class EmbeddingSettings:
    backend: str = "minilm"
    threshold: float = 0.75
    fail_below: float = 0.5
    cache_dir: str = ".harness-cache"
    max_batch: int = 64
    max_wait_ms: float = 0.0


@dataclass(frozen=True)
class CriticSettings:
    backend: str = "offline"
    model: str = ""
    base_url: str = ""
    api_key_env: str = ""
    timeout_s: float = 30.0
    max_retries: int = 3
    fail_below: float = 0.5
    support_min: float = 0.55
    unsupported_below: float = 0.35
    max_source_chars: int = 40000


@dataclass(frozen=True)
class SoftBudget:
    soft_max_fraction_per_layer: float = 0.334
    soft_max_per_run: int = 2


def _read(cls: type, table: Mapping[str, Any], section: str, *, strict: bool) -> Any:
    known = {f.name: f for f in fields(cls)}
    kwargs = {}
    for key, value in (table or {}).items():
        if key not in known:
            if strict:
                raise ConfigError(f"[{section}] unknown key {key!r}", fix=f"known keys: {', '.join(sorted(known))}")
            continue  # [budget] is shared with the cost layer: its keys are not ours
        default = getattr(cls(), key)
        if isinstance(default, float):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ConfigError(f"[{section}] {key} must be a number, got {value!r}")
            value = float(value)
        elif isinstance(default, int):
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConfigError(f"[{section}] {key} must be an integer, got {value!r}")
        elif isinstance(default, str) and not isinstance(value, str):
            raise ConfigError(f"[{section}] {key} must be a string, got {value!r}")
        kwargs[key] = value
    return cls(**kwargs)


def embedding_settings(config) -> EmbeddingSettings:
    s = _read(EmbeddingSettings, config.sections.get("embeddings", {}), "embeddings", strict=True)
    if s.backend not in EMBED_BACKENDS:
        raise ConfigError(f"[embeddings] backend {s.backend!r} is not one of {', '.join(EMBED_BACKENDS)}")
    if not 0 <= s.fail_below <= s.threshold <= 1:
        raise ConfigError("[embeddings] needs 0 <= fail_below <= threshold <= 1",
                          fix="e.g. threshold = 0.75, fail_below = 0.5")
    return s


def critic_settings(config) -> CriticSettings:
    s = _read(CriticSettings, config.sections.get("critic", {}), "critic", strict=True)
    if s.backend not in CRITIC_BACKENDS:
        raise ConfigError(f"[critic] backend {s.backend!r} is not one of {', '.join(CRITIC_BACKENDS)}")
    if s.backend != "offline" and not s.model:
        raise ConfigError(f"[critic] backend {s.backend!r} needs a model", fix='model = "gpt-4o-mini"')
    if not 0 <= s.unsupported_below <= s.support_min <= 1 or not 0 <= s.fail_below <= 1:
        raise ConfigError("[critic] needs 0 <= unsupported_below <= support_min <= 1 and 0 <= fail_below <= 1")
    return s


def soft_budget(config) -> SoftBudget:
    s = _read(SoftBudget, config.sections.get("budget", {}), "budget", strict=False)
    if not 0 <= s.soft_max_fraction_per_layer <= 1 or s.soft_max_per_run < 0:
        raise ConfigError("[budget] soft_max_fraction_per_layer must be in [0, 1] and soft_max_per_run >= 0")
    return s


def cache_dir(config) -> Path:
    return config.resolve(embedding_settings(config).cache_dir)


def validate(config) -> None:
    """Raise ConfigError (exit 2) for any bad reasoning-layer setting, before the run starts."""
    embedding_settings(config)
    critic_settings(config)
    soft_budget(config)
