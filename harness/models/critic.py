"""The critic: one interface, three backends.

    Critic (protocol)          factuality / rubric / answer -> Judgement
    ├── OfflineCritic          default: embedding grounding against the source document
    │                          (harness.models.critic_offline), no network, deterministic
    ├── OpenAICritic           any OpenAI-compatible chat-completions server: OpenAI, Groq,
    │                          OCI Generative AI, vLLM, Ollama (harness.models.critic_llm)
    └── AnthropicCritic        the Anthropic Messages API (harness.models.critic_llm)

A Judgement either carries a verdict with its explanation or says why there is none
(``unavailable``): an unreachable judge or an unparseable verdict is never a pass or a
fail. Question types:

- factuality: each claim sentence of the reply, "given the document, is this true?" ->
  supported True / False / None (undecided), with the explanation (the supporting sentence)
- rubric: a question about the reply -> score 0..1 with an explanation
- answer: similarity of the reply to an expected answer -> score 0..1 with an explanation
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol

#: Set while a soft verdict is being re-evaluated: critics and caches that would only
#: repeat their first answer (a disk cache of an LLM verdict) are bypassed.
from harness.soft import REEVALUATING  # noqa: E402,F401


class CriticUnavailable(Exception):
    """The judge could not give a verdict (unreachable, refused, unparseable)."""


@dataclass(frozen=True)
class ClaimVerdict:
    """The critic's verdict on one claim sentence."""

    claim: str
    supported: bool | None
    """True: the source supports it; False: it does not; None: undecided (soft)."""
    explanation: str
    """Why: the supporting sentence, or what is missing from the source."""
    score: float | None = None
    """The backend's confidence or similarity, when it has one."""


@dataclass(frozen=True)
class Judgement:
    """What a critic said about one question."""

    score: float | None
    """0..1 (factuality: share of supported claims); None when unavailable."""
    explanation: str
    claims: tuple[ClaimVerdict, ...] = ()
    unavailable: str = ""
    """Non-empty: why there is no verdict."""
    cached: bool = False
    """True when every answer came from the critic's disk cache."""


@dataclass(frozen=True)
class RubricHints:
    """Machine-checkable hints that let the offline critic answer a rubric question."""

    about: tuple[str, ...] = ()
    """Terms the text must mention (case-insensitive word prefix)."""
    not_about: tuple[str, ...] = ()
    """Terms the text must not mention."""

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> "RubricHints":
        def terms(v: Any) -> tuple[str, ...]:
            return (v,) if isinstance(v, str) else tuple(v or ())

        return cls(about=terms(params.get("about")), not_about=terms(params.get("not_about")))

    def __bool__(self) -> bool:
        return bool(self.about or self.not_about)


class Critic(Protocol):
    name: str
    """``backend:model@version`` recorded in every verdict's evidence."""
    source: str
    """``real`` or ``test-double``."""

    async def factuality(self, source: str, reply: str) -> Judgement: ...

    async def rubric(self, source: str, reply: str, question: str, hints: RubricHints) -> Judgement: ...

    async def answer(self, reply: str, expected: str) -> Judgement: ...


@dataclass
class CriticStats:
    calls: int = 0
    cache_hits: int = 0
    http_requests: int = 0
    retries: int = 0
    unavailable: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "cache_hits": self.cache_hits, "http_requests": self.http_requests,
                "retries": self.retries, "unavailable": self.unavailable}
