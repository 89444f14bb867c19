"""What ``harness judges`` will embed, sent to the embedding model ahead of the verdicts.

A verdict's service checks embed a few texts each (similarity: the reply and the golden
answers; critic.factuality: the claims and the source's sentences; critic.answer: the reply
and the expected answer's pieces; the threshold scores: every framed golden and mutation).
Asked verdict by verdict, they reach the model in batches of ~50 texts of every length, each
padded to its longest: on the suite, 1,516 texts took 36-69 s of the model's CPU that way.
Known ahead, they go in a few large requests that the model encodes sorted by length.

Nothing here decides a verdict: the checks run as before, and find their texts in the
embedder's memory (``EmbedderService``: a text asked again, or one already on its way to the
model, is not encoded twice). A text this module does not foresee is embedded by its check as
it would have been; a text it foresees that no check asks for costs model time, not a verdict.

``groups`` orders the requests so that the model and the rules overlap: each group of cases
is one request, and its verdicts are judged (on the event loop, CPU-bound rules) while the
model encodes the next group; the texts only the threshold scores read come last.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any, Iterable

from harness.checks.base import joined_text

#: Texts per request, about: large enough that sorting by length leaves little padding, small
#: enough that the rules start on the first group while the model encodes the next.
GROUP_TEXTS = 200


@dataclass
class Texts:
    """Texts to embed: ``cached`` the embedder keeps on disk (golden answers, source sentences),
    ``plain`` the rest (replies, claims); in first-asked order, without repeats."""

    cached: dict[str, None] = field(default_factory=dict)
    plain: dict[str, None] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.cached) + len(self.plain)

    def add(self, texts: Iterable[str], *, cached: bool = False) -> None:
        (self.cached if cached else self.plain).update(dict.fromkeys(t for t in texts if t and t.strip()))

    def without(self, seen: set[str]) -> "Texts":
        out = Texts()
        out.cached = {t: None for t in self.cached if t not in seen}
        out.plain = {t: None for t in self.plain if t not in seen}
        return out


def _live_answers(goldens, golden_id: str, today: date) -> list[str]:
    golden = goldens.get(golden_id) if goldens is not None else None
    return [a.text for a in golden.answers if not a.expired(today)] if golden is not None else []


def check_texts(case, turn: int, obs, deferred, services, into: Texts) -> None:
    """Add what the service checks ``deferred`` ((spec, definition) pairs, evaluate.plan) will
    embed for this observation."""
    from harness.models.claims import content_text

    today = date.today()
    for spec, _ in deferred:
        params: Any = spec.params if isinstance(spec.params, dict) else {}
        of = params.get("of", "reply")
        if spec.name == "similarity":
            goldens = services.get("goldens")
            into.add(_live_answers(goldens, params.get("golden") or case.id, today), cached=True)
            into.add([content_text(joined_text(obs, turn, of))])
            for gid in params.get("contrast") or ():
                into.add(_live_answers(goldens, gid, today), cached=True)
        elif spec.name in ("critic.factuality", "critic.answer"):
            backend = services.get("critic").backend
            text = joined_text(obs, turn, of)
            if not text.strip():
                continue
            if spec.name == "critic.factuality" and case.source and hasattr(backend, "factuality_texts"):
                try:
                    source = services.get("critic").source_text(case.source)
                except (OSError, ValueError):
                    continue
                src, claim_list = backend.factuality_texts(source, text)
                into.add(src, cached=True)
                into.add(claim_list)
            elif spec.name == "critic.answer" and hasattr(backend, "answer_texts") and params.get("expected"):
                into.add(backend.answer_texts(text, params["expected"]))


async def send(embedder, texts: Texts) -> None:
    """One request per kind (disk-kept, plain) for ``texts``, both queued at once (the model
    takes requests in the order they came)."""
    import asyncio

    await asyncio.gather(*([embedder.embed(list(texts.cached), cache=True)] if texts.cached else []),
                         *([embedder.embed(list(texts.plain))] if texts.plain else []))


def groups(per_case: list[Texts], last: Texts, size: int = GROUP_TEXTS) -> list[Texts]:
    """``per_case`` (in the order the verdicts are judged) cut into requests of about ``size``
    texts, each text in the first request that holds it; then ``last`` (what is left of it)."""
    out: list[Texts] = []
    seen: set[str] = set()
    current = Texts()
    for texts in per_case:
        fresh = texts.without(seen)
        current.cached.update(fresh.cached)
        current.plain.update(fresh.plain)
        seen.update(fresh.cached, fresh.plain)
        if len(current) >= size:
            out.append(current)
            current = Texts()
    rest = last.without(seen)
    current.cached.update(rest.cached)
    current.plain.update(rest.plain)
    if len(current):
        out.append(current)
    return out
