"""The registry of seeded regressions.

Each regression is switched on by name through DOCBOT_REGRESSION (comma separated). The
code that each one changes is marked at its single switch point with a comment
``# REGRESSION <name>``; grep for it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Regression:
    name: str
    layer: str
    description: str


REGISTRY: tuple[Regression, ...] = (
    Regression("url_validation_removed", "robustness",
               "malformed links (htps://, bare domains, ftp://) are fetched instead of rejected"),
    Regression("crash_on_empty", "robustness",
               "an empty or blank message raises in the handler; the user gets no reply"),
    Regression("english_only_removed", "robustness",
               "non-English requests are processed instead of politely refused"),
    Regression("no_length_limit", "robustness",
               "10,000-word pastes are sent to the LLM instead of being refused"),
    Regression("duplicate_replies", "robustness", "every reply is sent twice"),
    Regression("no_update_dedup", "robustness",
               "a redelivered update (same update_id or wamid) is processed again"),
    Regression("unsupported_types_accepted", "robustness",
               '.jpg/.mp4 links are fetched and "summarized"'),
)

NAMES = frozenset(r.name for r in REGISTRY)


class UnknownRegression(ValueError):
    """DOCBOT_REGRESSION names a regression that does not exist."""


def parse(value: str | None) -> frozenset[str]:
    """The set of regressions named in ``value`` (comma/space separated); unknown -> error."""
    names = {n.strip() for n in (value or "").replace(" ", ",").split(",") if n.strip()}
    unknown = sorted(names - NAMES)
    if unknown:
        raise UnknownRegression(
            f"unknown regression(s) in DOCBOT_REGRESSION: {', '.join(unknown)} "
            f"(known: {', '.join(r.name for r in REGISTRY)})")
    return frozenset(names)


def active(value: str | None = None) -> frozenset[str]:
    """Regressions switched on; reads DOCBOT_REGRESSION when ``value`` is None."""
    if value is None:
        import os
        value = os.environ.get("DOCBOT_REGRESSION", "")
    return parse(value)


def listing() -> str:
    """``name<TAB>layer<TAB>what it breaks``, one line per regression."""
    return "\n".join(f"{r.name}\t{r.layer}\t{r.description}" for r in REGISTRY)
