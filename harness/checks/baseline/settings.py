"""``[baseline]`` settings, and which kinds a case is held to (docs/CONFIG.md, docs/CASES.md).

Precedence: the case's ``baseline:`` key, then ``[baseline.layers.<layer>]``, then
``[baseline]``. ``baseline: false`` (or ``enabled = false``) switches every kind off;
``{facts: false}`` one kind.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Annotated, Any, Mapping

from pydantic import BeforeValidator, Field, create_model

from harness.checks.params import FIX, Params, examples, problem

#: Kinds learned from the code path: one accepted night says what they are.
STRUCTURE = ("replies", "post", "tools", "llm_calls", "state")
#: Kinds a real model varies: several nights tell what held from what varied.
VARYING = ("length", "language", "links", "tokens", "facts", "latency", "latency_trend")
KINDS = STRUCTURE + VARYING


@dataclass(frozen=True)
class BaselineSettings:
    """What ``[baseline]`` says (every number documented in docs/CONFIG.md)."""

    enabled: bool = True
    min_nights: int = 3
    min_nights_structure: int = 1
    window: int = 10
    length_tolerance: float = 0.3
    length_slack_chars: float = 40.0
    tokens_tolerance: float = 0.25
    tokens_slack: float = 50.0
    latency_ratio: float = 2.0
    latency_min_ms: float = 2000.0
    trend_min_cases: int = 12
    trend_min_rho: float = 0.5
    trend_min_ms: float = 750.0
    kinds: Mapping[str, bool] = field(default_factory=dict)
    """Per kind on/off for the project (absent: on)."""
    layers: Mapping[str, Mapping[str, bool]] = field(default_factory=dict)
    """``[baseline.layers.<layer>]``: ``enabled`` and per kind on/off for one layer."""

    def needed(self, kind: str) -> int:
        return self.min_nights_structure if kind in STRUCTURE else self.min_nights

    def kinds_for(self, layer: str, case_setting: Any = None) -> frozenset[str]:
        """The kinds a case of ``layer`` with ``baseline: case_setting`` is held to."""
        on = {k: self.enabled and self.kinds.get(k, True) for k in KINDS}
        lay = self.layers.get(layer) or {}
        if lay.get("enabled") is False:
            on = dict.fromkeys(KINDS, False)
        for k in KINDS:
            if k in lay:
                on[k] = bool(lay[k]) and lay.get("enabled", True) is not False
        if case_setting is False:
            return frozenset()
        if case_setting is True:  # the case asks for it back where its layer switched it off
            on = {k: self.kinds.get(k, True) for k in KINDS}
        elif isinstance(case_setting, Mapping):
            if case_setting.get("enabled") is False:
                return frozenset()
            for k in KINDS:
                if k in case_setting:
                    on[k] = bool(case_setting[k])
        return frozenset(k for k, v in on.items() if v)


_NUMBERS = {f.name for f in fields(BaselineSettings)} - {"enabled", "kinds", "layers"}


def baseline_settings(config: Any) -> BaselineSettings:
    """The settings from ``config.sections["baseline"]`` (validated by the schema before)."""
    raw = dict((getattr(config, "sections", {}) or {}).get("baseline") or {})
    kinds = {k: bool(raw[k]) for k in KINDS if k in raw}
    layers = {str(name): {str(k): bool(v) for k, v in table.items()}
              for name, table in (raw.get("layers") or {}).items() if isinstance(table, Mapping)}
    numbers = {}
    for name in _NUMBERS:
        if name in raw:
            default = getattr(BaselineSettings, name)
            numbers[name] = type(default)(raw[name])
    return BaselineSettings(enabled=bool(raw.get("enabled", True)), kinds=kinds, layers=layers, **numbers)


def _known_kinds(value: Any) -> Any:
    if isinstance(value, Mapping):
        unknown = sorted(set(map(str, value)) - set(KINDS) - {"enabled"})
        if unknown:
            raise ValueError(f"unknown kind(s) {', '.join(map(repr, unknown))} (kinds: {', '.join(KINDS)})"
                             f"{FIX}baseline: false, "
                             "or e.g. baseline: {facts: false, latency: false} (docs/CASES.md 'Baseline checks')")
    return value


#: A case's ``baseline:`` key, the parameters of its ``baseline.*`` checks (harness/checks/params.py).
CaseBaseline = create_model(
    "CaseBaseline", __base__=Params, __doc__="The baseline.* kinds a case is held to: each on (true) or off (false).",
    enabled=(bool, Field(None, description="false: no baseline check for the case")),
    **{k: (bool, Field(None, description="that baseline.<kind> on (true) or off (false); absent: as configured"))
       for k in KINDS})
PARAMS = Annotated[bool | CaseBaseline, BeforeValidator(_known_kinds),
                   Field(description="the baseline.* checks: false (none), true (all, where the layer switched them "
                                     "off) or kinds on/off", json_schema_extra=examples({"facts": False}))]


def case_setting_error(value: Any) -> str | None:
    """What is wrong with a case's ``baseline:`` value (None when it is fine)."""
    return problem(PARAMS, value, "baseline")
