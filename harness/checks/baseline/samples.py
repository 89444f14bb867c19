"""One attempt of one case, as the baseline checks see it: a ``CaseSample`` of ``TurnSample``s.

Built the same way from an accepted night's results.json case (``from_case_dict``: its
``turns`` and, for a ``--repeat k`` night, each entry of ``other_attempts``) and from
tonight's ``Observation`` (``from_observation``), so the learner and the evidence compare
like with like.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from harness.checks.base import posts
from harness.checks.provider import call_durations, observed_durations
from harness.types import Observation

#: Boundary calls that are tools (the tool spy and the document server), not channel sends or LLM calls.
TOOL_SOURCES = ("tools", "docs")
_LINK = re.compile(r"https?://[^\s<>()\"']+")
_LOOPBACK = re.compile(r"^(https?://)(?:127\.0\.0\.1|localhost|\[::1\])(?::\d+)?", re.I)
_TOKEN_PATH = re.compile(r"/c/[0-9a-f]{6,}(?=/|$)", re.I)


@dataclass(frozen=True)
class TurnSample:
    """What one turn of one attempt did, reduced to what the baseline compares."""

    texts: tuple[str, ...] = ()
    """The replies to the user, as the user sees them, in arrival order."""
    kinds: tuple[str, ...] = ()
    buttons: tuple[tuple[str, ...], ...] = ()
    parse_modes: tuple[str, ...] = ()
    posts: int = 0
    """Messages to anyone but the user (a WhatsApp post)."""
    tools: tuple[str, ...] = ()
    """Tool calls in arrival order (spy and document fetches)."""
    llm_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    state: Mapping[str, Any] | None = None

    @property
    def text(self) -> str:
        return "\n".join(self.texts)


@dataclass(frozen=True)
class CaseSample:
    """One attempt of a case: its turns and its latency (None: no reply)."""

    run_id: str
    turns: tuple[TurnSample, ...]
    latency_ms: float | None = None
    order: float | None = None
    """When the attempt started (tonight's trend orders cases by it)."""
    llm_ms: tuple[float, ...] = ()
    """Every LLM call's duration in this attempt (``checks/provider.py`` explains slow spells by them)."""


def _num(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def answered(calls: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The LLM calls the agent used: answered 2xx, and not abandoned, i.e. not overtaken by the same
    request (model and input tokens) sent again before it was answered (a client timeout's retry on
    a slow machine). A failed call retried, or a timed-out one, is the machine's or the provider's
    doing; a second identical call sent after the first was answered (a loop) still counts."""
    ok = [c for c in calls if (isinstance(c.get("status"), int) and 200 <= c["status"] < 300)
          or c.get("status") is None]
    out = []
    for i, c in enumerate(ok):
        at, took = c.get("at"), c.get("duration_ms")
        if isinstance(at, (int, float)) and isinstance(took, (int, float)):
            end = at + took / 1000
            if any(d.get("model") == c.get("model") and d.get("input_tokens") == c.get("input_tokens")
                   and isinstance(d.get("at"), (int, float)) and at < d["at"] < end for d in ok[i + 1:]):
                continue
        out.append(c)
    return out


def turn_from_dict(turn: Mapping[str, Any]) -> TurnSample:
    replies = [r for r in turn.get("replies") or () if isinstance(r, Mapping)]
    calls = [c for c in turn.get("calls") or () if isinstance(c, Mapping)]
    llm = answered([c for c in calls if c.get("name") == "llm"])
    state = turn.get("state")
    return TurnSample(
        texts=tuple(str(r.get("text") or "") for r in replies),
        kinds=tuple(str(r.get("kind") or "text") for r in replies),
        buttons=tuple(tuple(str(b) for b in r.get("buttons") or ()) for r in replies),
        parse_modes=tuple(str(r.get("parse_mode") or "") for r in replies),
        posts=len(turn.get("posts") or ()),
        tools=tuple(str(c.get("name")) for c in calls if c.get("source") in TOOL_SOURCES),
        llm_calls=len(llm),
        tokens_in=sum(_num(c.get("input_tokens")) for c in llm),
        tokens_out=sum(_num(c.get("output_tokens")) for c in llm),
        state=state if isinstance(state, Mapping) else None)


def from_case_dict(run_id: str, case: Mapping[str, Any]) -> list[CaseSample]:
    """Every attempt a results.json case entry keeps: the shown one first, then ``other_attempts``."""
    out = []
    for attempt in (case, *(o for o in case.get("other_attempts") or () if isinstance(o, Mapping))):
        turns = [t for t in attempt.get("turns") or () if isinstance(t, Mapping)]
        lat = attempt.get("latency_ms")
        out.append(CaseSample(run_id, tuple(turn_from_dict(t) for t in turns),
                              lat if isinstance(lat, (int, float)) else None, llm_ms=tuple(call_durations(turns))))
    return out


def from_observation(obs: Observation, latency_ms: float | None, run_id: str = "tonight") -> CaseSample:
    """Tonight's attempt, from what the sandbox recorded."""
    turns = []
    for i, t in enumerate(obs.turns):
        llm = answered([{"status": e.status, "at": e.at, "duration_ms": e.duration_ms, "model": e.meta.get("model"),
                         "input_tokens": e.meta.get("input_tokens"), "output_tokens": e.meta.get("output_tokens")}
                        for e in t.events if e.name == "llm"])
        turns.append(TurnSample(
            texts=tuple(r.text for r in t.replies), kinds=tuple(r.kind for r in t.replies),
            buttons=tuple(tuple(r.buttons) for r in t.replies), parse_modes=tuple(r.parse_mode for r in t.replies),
            posts=len(posts(obs, i)), tools=tuple(e.name for e in t.events if e.source in TOOL_SOURCES),
            llm_calls=len(llm), tokens_in=sum(_num(c.get("input_tokens")) for c in llm),
            tokens_out=sum(_num(c.get("output_tokens")) for c in llm),
            state=t.state if isinstance(t.state, Mapping) else None))
    return CaseSample(run_id, tuple(turns), latency_ms, obs.started_at, llm_ms=tuple(observed_durations(obs)))


def links(text: str) -> frozenset[str]:
    """Links of a text with what changes every run normalised away (loopback ports, ``{docs}`` tokens)."""
    out = set()
    for m in _LINK.finditer(text or ""):
        url = m.group(0).rstrip(".,;:!?")
        url = _TOKEN_PATH.sub("/c/*", _LOOPBACK.sub(r"\g<1>127.0.0.1", url))
        out.add(url)
    return frozenset(out)


def hosts(found: frozenset[str]) -> frozenset[str]:
    return frozenset(re.sub(r"^https?://", "", u).split("/")[0].lower() for u in found)


def state_keys(state: Mapping[str, Any] | None) -> frozenset[str] | None:
    """Key paths two levels deep (values vary night to night and are not compared)."""
    if state is None:
        return None
    out = set()
    for k, v in state.items():
        out.add(str(k))
        if isinstance(v, Mapping):
            out.update(f"{k}.{sub}" for sub in v)
    return frozenset(out)


def tool_order(tools: Sequence[str]) -> tuple[str, ...]:
    """Distinct tools in first-call order (a retried fetch is the same step)."""
    return tuple(dict.fromkeys(tools))
