"""``equivalent``: this turn's answer is the same answer as an earlier turn's (metamorphic).

``equivalent: {to: 0, min: 0.85}`` compares the turn with turn ``to`` of the same case,
typically one user's original request and another user's variant of it (a typo, other
letter case, a greeting...), which must not change the answer:

- the same number of replies;
- the same tool trajectory: the same calls to the document server, the tools and the LLM
  (by name, with their counts), and the same number of posts;
- replies that mean the same: the same text once both are normalised (``normalised``:
  Unicode compatibility forms, letter case, accents, Cyrillic look-alike letters, runs of
  whitespace, each user's own chat id) passes at once; otherwise the cosine of the two
  joined texts (all-MiniLM-L6-v2) must be at least ``min`` (default ``DEFAULT_MIN``).

Cheap first: counts and trajectory failures fail, and equal normalised texts pass, without
the embedder; the model is loaded only when a comparison needs it, and the run says so
once on the console ("loading the embedding model for variant comparisons ..."). An
unreachable embedder is unavailable evidence, never a pass.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from typing import Any, Iterable

from pydantic import ConfigDict, Field

from harness.checks.params import Count, Params, Score, examples
from harness.checks.base import CheckDef, clip, joined_text, posts, turn_never_ran, turn_obs, unavailable, verdict
from harness.errors import MissingExtra
from harness.types import Case, Evidence, Observation

NAME = "equivalent"
EVAL = "equivalent@2"  # 2: replies equal once normalised pass without the embedder
DEFAULT_MIN = 0.85
#: Boundary calls that make up a trajectory (the channel sends are the replies, compared by count).
TRAJECTORY_SOURCES = ("docs", "tools", "gateway")
#: Cyrillic letters that look like Latin ones (the ``lookalike`` variants type them), folded back.
CONFUSABLES = {"а": "a", "е": "e", "о": "o", "с": "c", "р": "p", "х": "x", "у": "y", "і": "i"}
_FOLD = str.maketrans(CONFUSABLES)
_SPACE = re.compile(r"\s+")


def normalised(text: str, chats: tuple[str, ...] = ()) -> str:
    """``text`` as the cheap comparison reads it: NFKC, look-alikes folded, accents dropped,
    case folded, whitespace runs as one space, and each of ``chats`` (the users' own chat ids,
    which a bot may echo) as ``<chat>``."""
    for chat in sorted((c for c in chats if c), key=len, reverse=True):
        text = text.replace(chat, "<chat>")
    text = unicodedata.normalize("NFKC", text).translate(_FOLD)
    text = "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))
    return _SPACE.sub(" ", text.casefold()).strip()


class Equivalent(Params):
    """The turn's answer is the same as an earlier turn's (the metamorphic variants)."""

    model_config = ConfigDict(json_schema_extra=examples({"to": 0, "min": 0.85}))
    to: Count = Field(..., description="the earlier turn's index")
    min: Score = Field(DEFAULT_MIN, description="the least cosine of the joined replies")
    trajectory: bool = Field(True, description="compare the calls made too")


def trajectory(obs: Observation, turn: int) -> Counter:
    t = turn_obs(obs, turn)
    return Counter(e.name for e in (t.events if t else ()) if e.source in TRAJECTORY_SOURCES)


def _fmt(c: Counter) -> str:
    return ", ".join(f"{name}×{n}" for name, n in sorted(c.items())) or "no calls"


async def equivalent(case: Case, obs: Observation, turn: int, params: Any, services) -> Evidence:
    to = int(params["to"])
    minimum = float(params.get("min", DEFAULT_MIN))
    expected = f"the same answer as turn {to}: reply count, trajectory, cosine >= {minimum:.2f}"
    mine, theirs = turn_obs(obs, turn), turn_obs(obs, to)
    if mine is None or theirs is None:
        return turn_never_ran(NAME, turn if mine is None else to, obs, EVAL, expected)
    if to >= turn:
        return unavailable(NAME, turn, expected=expected, evaluator=EVAL,
                           reason=f"turn {to} is not earlier than turn {turn}")
    n_mine, n_theirs = len(mine.replies), len(theirs.replies)
    if n_mine != n_theirs:
        return verdict(NAME, turn, False, expected=expected, observed=f"{n_mine} vs {n_theirs} replies",
                       reason=f"{n_mine} repl{'y' if n_mine == 1 else 'ies'} to the variant, {n_theirs} to the "
                              f"original (turn {to})", evaluator=EVAL)
    if params.get("trajectory", True):
        a, b = trajectory(obs, turn), trajectory(obs, to)
        pa, pb = len(posts(obs, turn)), len(posts(obs, to))
        if a != b or pa != pb:
            return verdict(NAME, turn, False, expected=expected, observed=f"{_fmt(a)}; {pa} posts",
                           reason=f"another trajectory: variant {_fmt(a)}, {pa} post(s); original (turn {to}) "
                                  f"{_fmt(b)}, {pb} post(s)", evaluator=EVAL)
    text, original = joined_text(obs, turn), joined_text(obs, to)
    chats = tuple(dict.fromkeys(c for c in (mine.chat, theirs.chat, obs.chat_id) if c))
    same = "word for word" if text == original else (
        "the same once normalised (case, spacing, accents, look-alike letters, the users' own ids)"
        if normalised(text, chats) == normalised(original, chats) else "")
    tally = getattr(services, "tally", None)
    if same:
        if tally is not None:
            tally("variant comparisons", cheap=True)
        return Evidence(check=NAME, turn=turn, availability="ready", passed=True, score=1.0, expected=expected,
                        observed=clip(text), reason=f"the same {n_mine} repl{'y' if n_mine == 1 else 'ies'}, "
                                                    f"{same}, and the same trajectory as turn {to}",
                        evaluator=EVAL)
    if tally is not None:
        tally("variant comparisons", cheap=False)
    try:
        embedder = services.get("embedder")
        from harness.models.embedder import cosine_matrix

        vecs = await embedder.embed([text, original])
    except Exception as exc:  # an unreachable judge is unavailable evidence
        why = getattr(exc, "message", None) if isinstance(exc, MissingExtra) else f"{type(exc).__name__}: {exc}"
        return unavailable(NAME, turn, expected=expected, evaluator=EVAL, reason=f"the embedder is unavailable: {why}")
    score = round(max(0.0, float(cosine_matrix(vecs[:1], vecs[1:])[0][0])), 4)
    ok = score >= minimum
    return Evidence(check=NAME, turn=turn, availability="ready", passed=ok, score=score, expected=expected,
                    observed=clip(text),
                    reason=(f"cosine {score:.2f} to the original's replies (turn {to}) "
                            f"{'>=' if ok else '<'} {minimum:.2f}; original: {clip(original, 160)!r}"),
                    evaluator=f"{EVAL}+{embedder.name}", source=embedder.source)


def decided_by(evidence: Iterable[Evidence]) -> dict[str, int]:
    """How the ``equivalent`` checks among ``evidence`` were decided: ``without_model`` (reply
    counts, trajectories, the same replies once normalised) or ``by_embedder`` (a cosine, or
    unavailable for want of the embedder)."""
    out = {"without_model": 0, "by_embedder": 0}
    for e in evidence:
        if e.check != NAME:
            continue
        if e.evaluator.startswith(f"{EVAL}+") or (e.availability == "unavailable" and "embedder" in e.reason):
            out["by_embedder"] += 1
        elif e.availability == "ready":
            out["without_model"] += 1
    return out


CHECKS = (CheckDef(NAME, equivalent, Equivalent, EVAL, uses_services=True),)
