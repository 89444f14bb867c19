"""Metamorphic variants of the suite's requests (the robustness layer's own cases): stub."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from harness.types import Case


def derive(cases: Sequence[Case], context: Mapping[str, Any]) -> list[Case]:
    return []
