"""The order cases start in: the longest chains first (``longest_first``).

A run is never shorter than its longest chain of cases that wait for one another: a case and
the metamorphic variants that borrow its turns (``reuse.py``; the variants of one case also
run one after another, ``textlocks.py``). Started last, a long chain runs alone at the end
while the other slots are idle; started first, everything else overlaps it. How long a case
takes is estimated from what the previous run in the same ``--out`` folder observed (the span
of its turns: delivery of the first to the last reply or call), else from its shape: its
turns, their ``wait_s``, and the faults that make the agent wait (a hang or an LLM timeout:
up to the reply timeout; a delay; a ``retry_after``). A chain whose checks wait for a model
(similarity, critic) counts ``JUDGED_S`` more: started early, the judging overlaps the rest.

Only the start order changes: results are reported in the cases' own order. A run with
``--maxfail`` or a hard cost budget keeps the given order (which cases run before the stop is
the caller's choice: ``harness calibrate`` puts a regression's own layer first).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from harness.run import reuse
from harness.run.warm import encodes
from harness.sandbox.faults import parse as parse_faults
from harness.types import Case

log = logging.getLogger("harness.run.order")

#: A turn's own cost when nothing else is known: delivery, a short answer, the quiet window.
TURN_S = 0.1
#: What a chain with a check judged by a model (similarity, critic) adds: its verdict waits for
#: the model, which loads in the background and judges beside the other cases when started early.
JUDGED_S = 5.0
#: The newest earlier run's journal read for durations is skipped beyond this size (a run's
#: start is not spent reading an archive).
MAX_JOURNAL_BYTES = 64_000_000


def shape_s(case: Case, reply_timeout_s: float, skip: int = 0) -> float:
    """A case's duration from its shape (the turns from ``skip`` on)."""
    total = 0.0
    for turn in case.turns[skip:]:
        total += TURN_S + max(0.0, turn.wait_s or 0.0)
        try:
            faults = parse_faults(turn.faults or {})
        except Exception:  # a malformed fault table is the loader's to report
            faults = []
        for f in faults:
            times = f.times if f.times else 1
            if f.kind == "hang":
                total += reply_timeout_s * min(times, 2)
            elif f.kind == "delay":
                total += f.delay_ms / 1000 * min(times, 3)
            elif f.retry_after:
                total += float(f.retry_after) * min(times, 3)
    if case.timeout_s:
        total = min(total, float(case.timeout_s))
    return total


def observed_s(record: Mapping) -> float | None:
    """How long a journaled case's own turns took: the first turn's delivery to the last reply
    or call (None when the line holds no turn)."""
    first, last = None, None
    for t in record.get("turns") or ():
        if not isinstance(t, Mapping) or t.get("borrowed"):
            continue
        sent = t.get("sent_at")
        if not isinstance(sent, (int, float)):
            continue
        first = sent if first is None else min(first, sent)
        ends = [sent] + [r.get("at") for r in t.get("replies") or () if isinstance(r, Mapping)]
        ends += [c.get("at", 0) + (c.get("duration_ms") or 0) / 1000 for c in t.get("calls") or ()
                 if isinstance(c, Mapping) and isinstance(c.get("at"), (int, float))]
        ends = [e for e in ends if isinstance(e, (int, float))]
        last = max([last or sent, *ends])
    if first is None or last is None:
        return None
    return max(0.0, last - first)


def previous_durations(out_dir: Path, this_run: str = "") -> dict[str, float]:
    """Per case id, ``observed_s`` from the newest earlier run's journal in ``out_dir`` ({}
    when there is none or it cannot be read: the shapes decide)."""
    try:
        runs = sorted((p for p in Path(out_dir).iterdir()
                       if p.is_dir() and p.name != this_run and (p / "results.jsonl").is_file()),
                      key=lambda p: p.name, reverse=True)
    except OSError:
        return {}
    for run in runs[:1]:
        path = run / "results.jsonl"
        try:
            if path.stat().st_size > MAX_JOURNAL_BYTES:
                return {}
            out: dict[str, float] = {}
            with open(path, encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    try:
                        record = json.loads(line)
                    except ValueError:
                        continue  # a torn last line of a killed run
                    if isinstance(record, dict) and isinstance(record.get("id"), str):
                        seconds = observed_s(record)
                        if seconds is not None:
                            out[record["id"]] = seconds  # the later line stands
            return out
        except OSError as exc:
            log.info("earlier durations not read from %s: %s", path, exc)
    return {}


def text_groups(cases: Sequence[Case], locks: Mapping[str, Iterable[str]]) -> dict[str, str]:
    """Per case id, its group: cases linked by the texts they send (two that share one never run
    side by side, ``textlocks.py``: a group runs one case after another where its texts meet)."""
    parent = {c.id: c.id for c in cases}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    holder: dict[str, str] = {}
    for c in cases:
        for text in locks.get(c.id, ()):
            if text in holder:
                a, b = find(holder[text]), find(c.id)
                if a != b:
                    parent[b] = a
            else:
                holder[text] = c.id
    return {c.id: find(c.id) for c in cases}


def longest_first(cases: Sequence[Case], reply_timeout_s: float, planned: set[str],
                  restored: set[str] = frozenset(), known: Mapping[str, float] | None = None,
                  locks: Mapping[str, Iterable[str]] | None = None) -> list[Case]:
    """``cases`` with the longest chains (an original and its borrowing variants) first; a
    chain's cases keep their order, ties keep the given order. With ``locks`` (the texts each
    case sends), a chain is also as long as its text group (``text_groups``): cases sharing
    "/cancel" or "help" run one after another, so their group starts first, not as the run's tail."""
    known = known or {}

    def own(case: Case) -> float:
        if case.id in known:
            return known[case.id]
        source = reuse.plan(case, planned, restored)
        return shape_s(case, reply_timeout_s, reuse.leading(case) if source is not None else 0)

    root = {c.id: (reuse.plan(c, planned, restored) or c.id) for c in cases}
    chain: dict[str, float] = {}
    judged: set[str] = set()
    for c in cases:
        chain[root[c.id]] = chain.get(root[c.id], 0.0) + own(c)
        if encodes(c):
            judged.add(root[c.id])
    for r in judged:  # once per chain: its cases are judged side by side
        chain[r] += JUDGED_S
    # a text group is a chain too: its cases wait for one another's texts; its longest chain
    # goes first in it (started first, the others run beside it where their texts allow)
    span = dict(chain)
    if locks:
        group = text_groups(cases, locks)
        serial: dict[str, float] = {}
        for c in cases:
            serial[group[c.id]] = serial.get(group[c.id], 0.0) + own(c)
        for c in cases:
            span[root[c.id]] = max(span[root[c.id]], serial[group[c.id]])
    position = {c.id: i for i, c in enumerate(cases)}
    first_of = {}
    for c in cases:
        first_of.setdefault(root[c.id], position[c.id])
    return sorted(cases, key=lambda c: (-span[root[c.id]], -chain[root[c.id]], first_of[root[c.id]],
                                        position[c.id]))
