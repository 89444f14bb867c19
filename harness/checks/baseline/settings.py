"""``[baseline]`` settings (``harness.schema.models.BaselineModel``, which also says which kinds
a case is held to) and a case's ``baseline:`` key (docs/CONFIG.md, docs/CASES.md)."""

from __future__ import annotations

from typing import Annotated, Any, Mapping

from pydantic import BeforeValidator, Field, create_model

from harness.checks.params import FIX, Params, examples, problem
from harness.config import config_section
from harness.schema.models import BASELINE_KINDS as KINDS
from harness.schema.models import BaselineModel


def baseline_settings(config: Any) -> BaselineModel:
    """``[baseline]`` of ``config`` (validated when it was loaded)."""
    return config_section(config, "baseline")


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
