"""The reasoning layer's configuration: ``[embeddings]``, ``[critic]`` and the soft budget in ``[budget]``.

Each section is its pydantic model (``harness.schema.models.EmbeddingsModel``, ``CriticModel``,
``BudgetModel``), validated once when the config is loaded (a bad value is a ConfigError,
exit 2, before anything runs; ``HARNESS_CRITIC_BACKEND=openai`` and friends are applied
before that). The keys, their defaults and their meaning are the models' fields (docs/CONFIG.md).
"""

from __future__ import annotations

from pathlib import Path

from harness.config import config_section
from harness.schema.models import BudgetModel, CriticModel, EmbeddingsModel


def embedding_settings(config) -> EmbeddingsModel:
    return config_section(config, "embeddings")


def critic_settings(config) -> CriticModel:
    return config_section(config, "critic")


def soft_budget(config) -> BudgetModel:
    """``[budget]``: its ``soft_max_fraction_per_layer`` and ``soft_max_per_run`` (harness/soft.py)."""
    return config_section(config, "budget")


def cache_dir(config) -> Path:
    return config.resolve(embedding_settings(config).cache_dir)


def cache_subdir(config, name: str) -> Path | None:
    """``<cache_dir>/<name>``, or None for a stand-in config without the setting (the caller then
    keeps nothing: e.g. the history digests, every file read whole)."""
    try:
        return cache_dir(config) / name
    except Exception:  # noqa: BLE001 - a config the settings cannot read
        return None


def validate(config) -> None:
    """Raise ConfigError (exit 2) for any bad reasoning-layer setting, before the run starts
    (a loaded Config was validated whole by its schema; a stand-in's raw tables are checked here)."""
    embedding_settings(config)
    critic_settings(config)
    soft_budget(config)
