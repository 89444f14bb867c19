"""The dispatch table: every check the case files can name, in one place.

Families live one per module (text, trajectory, budget, ...). ``expect`` keys with a
table of sub-checks (``reply: {regex: .., max_chars: ..}``) expand to one check per
sub-key (``reply.regex``, ``reply.max_chars``); the other keys are one check each.
"""

from __future__ import annotations

from typing import Any

from harness.checks import budget, cost, form, text, trajectory
from harness.checks.base import CheckDef

#: ``expect`` keys whose table holds several sub-checks.
GROUPED = ("reply", "post", "critic", "reply_raw")  # critic: factuality, rubric, answer

# Text comparisons and their parameters' types; each is offered on the replies to the
# user (``reply.*``: the text as the user sees it, Telegram markup parsed away), on the same
# replies as the agent sent them, markup included (``reply_raw.*``), and on the posts the
# agent sent elsewhere (``post.*``).
_TEXT = {
    "regex": (text.regex, text.RegexParam),
    "not_regex": (text.not_regex, text.RegexParam),
    "contains": (text.contains, text.StringsParam),
    "contains_all": (text.contains_all, text.StringsParam),
    "not_contains": (text.not_contains, text.StringsParam),
    "max_chars": (text.max_chars, text.CharsParam),
    "min_chars": (text.min_chars, text.CharsParam),
    "bullets": (form.bullets, form.Bullets),
    "language": (form.language, form.Language),
    "json": (form.json_check, form.Json),
}

REGISTRY: dict[str, CheckDef] = {
    d.name: d
    for d in (
        *(CheckDef(f"{of}.{key}", text.text_check(f"{of}.{key}", compare, of), params, text.EVAL)
          for of in ("reply", "post", "reply_raw") for key, (compare, params) in _TEXT.items()),
        CheckDef("replies", text.replies, text.Replies, "count@1"),
        CheckDef("tools_called", trajectory.tools_called, trajectory.Tools, trajectory.EVAL),
        CheckDef("tools_not_called", trajectory.tools_not_called, trajectory.Tools, trajectory.EVAL),
        CheckDef("llm_calls", trajectory.llm_calls, trajectory.LlmCalls, trajectory.EVAL),
        CheckDef("delivery", trajectory.delivery, trajectory.Delivery, trajectory.EVAL),
        CheckDef("latency_ms", budget.latency_ms, budget.Latency, budget.EVAL),
        CheckDef("tokens", cost.tokens, cost.Tokens, cost.EVAL),
        CheckDef("cost_usd", cost.cost_usd, cost.CostUsd, cost.EVAL),
        CheckDef("error_rate", cost.error_rate, cost.ErrorRate, cost.EVAL),
    )
}


#: Case keys that parameterise checks outside REGISTRY, by their type: ``baseline:`` says which
#: ``baseline.*`` checks (checks/baseline) hold the case.
from harness.checks.baseline.settings import PARAMS as _BASELINE_PARAMS  # noqa: E402

KEY_PARAMS: dict[str, Any] = {"baseline": _BASELINE_PARAMS}


def register(definition: CheckDef) -> None:
    """Add a check family's entry (layers add theirs at import; a clash is a bug)."""
    if definition.name in REGISTRY:
        raise ValueError(f"check {definition.name!r} is registered twice")
    REGISTRY[definition.name] = definition


def known_names() -> list[str]:
    return sorted(REGISTRY)


# Turn hygiene: what layers apply to every case by default (harness.layer, layers/).
from harness.checks import basics as _basics  # noqa: E402

for _definition in _basics.CHECKS:
    register(_definition)

# The reasoning layer's checks (async, use services; their modules import no torch).
from harness.checks import critic as _critic, equivalence as _equivalence, similarity as _similarity  # noqa: E402

for _definition in (*_similarity.CHECKS, *_critic.CHECKS, *_equivalence.CHECKS):
    register(_definition)

# The multi-turn layer's checks: state probe, trajectories over time, rich replies, slots.
from harness.checks import rich as _rich, sequence as _sequence, slots as _slots, state as _state  # noqa: E402

for _definition in (*_state.CHECKS, *_sequence.CHECKS, *_rich.CHECKS, *_slots.CHECKS):
    register(_definition)

# What the channels enforce: the formatting the user sees, callback queries answered.
from harness.checks import callbacks as _callbacks, entities as _entities  # noqa: E402

for _definition in (*_entities.CHECKS, *_callbacks.CHECKS):
    register(_definition)

# What the agent asked of its tools and how it paced retries (the tool double's records).
from harness.checks import tools as _tools  # noqa: E402

for _definition in _tools.CHECKS:
    register(_definition)
