"""``[baseline]`` settings (``harness.schema.models.BaselineModel``, which also says which kinds
a case is held to) and a case's ``baseline:`` key (docs/CONFIG.md, docs/CASES.md)."""

from __future__ import annotations

from typing import Any, Mapping

from harness.config import config_section
from harness.schema.models import BASELINE_KINDS as KINDS
from harness.schema.models import BaselineModel


def baseline_settings(config: Any) -> BaselineModel:
    """``[baseline]`` of ``config`` (validated when it was loaded)."""
    return config_section(config, "baseline")


def case_setting_error(value: Any) -> str | None:
    """What is wrong with a case's ``baseline:`` value (None when it is fine)."""
    if isinstance(value, bool):
        return None
    if not isinstance(value, Mapping):
        return f"baseline must be true, false or a table of kinds, got {value!r}"
    unknown = sorted(set(map(str, value)) - set(KINDS) - {"enabled"})
    if unknown:
        return f"baseline: unknown kind(s) {', '.join(unknown)} (kinds: {', '.join(KINDS)})"
    bad = sorted(str(k) for k, v in value.items() if not isinstance(v, bool))
    if bad:
        return f"baseline: {', '.join(bad)} must be true or false"
    return None
