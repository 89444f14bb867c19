"""report.html's "Changed against the baseline": tonight's reply beside the accepted one.

One heading per kind of change (``changes.baseline_changes``), each case once under it with
what changed (expected -> observed) and, for the kinds about the reply, both replies side by
side, every message in its own box, the changed facts in ``<mark>``. Drawn by
templates/report/changes.html.j2 from plain data: every text is untrusted and escaped by the
template; only the ``<mark>`` tags around escaped text are ours.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

from harness.report.changes import CaseChange, Group, Pair, distinct
from harness.report.templating import fragment

#: Cases drawn in full per group; the rest are named with a link to their case.
MAX_DRAWN = 40

#: The section's style: templates/report/changes.css.


#: The statuses report.html's badges have a colour for.
STATUSES = ("pass", "soft", "fail", "error", "unavailable", "skipped")


def case_anchor(case_id: Any) -> str:
    """The id of a case's drill-down on report.html (``html._anchor`` is this)."""
    return "case-" + re.sub(r"[^A-Za-z0-9_-]", "-", str(case_id))


_anchor = case_anchor


def marked_html(pair: Pair, text: str, side: str) -> str:
    """One message as escaped text with its changed facts in ``<mark>``."""
    return fragment("report/mark.html.j2", spans=pair.spans(text, side))


def _side(pair: Pair, messages: Sequence[str] | None, side: str) -> list[list[tuple[str, bool]]] | None:
    """One side's messages as (text, marked) spans (None: the accepted reply is not known)."""
    if messages is None:
        return None
    return [list(pair.spans(m, side)) for m in messages]


def _view(cc: CaseChange) -> dict[str, Any]:
    """What templates/report/changes.html.j2 draws of one case's changes."""
    facts = [{"turn": c.turn, "kind": c.kind, "expected": c.expected or "-", "observed": c.observed or "-", "n": n,
              "change": c.change, "reason": c.reason} for c, n in distinct(cc.changes)]
    pairs = [{"turn": p.turn, "baseline": _side(p, p.baseline, "baseline"), "tonight": _side(p, p.tonight, "tonight")}
             for p in cc.pairs]
    return {"status": cc.status, "anchor": _anchor(cc.id), "id": cc.id, "layer": cc.layer,
            "accepted_from": cc.accepted_from, "facts": facts, "pairs": pairs}


def pairs_html(cc: CaseChange) -> str:
    """The case's changes as a list and its turns side by side (accepted left, tonight right)."""
    return fragment("report/changes.html.j2", mode="pairs", cc=_view(cc))


def changes_html(groups: Sequence[Group]) -> str:
    """The section (empty when nothing changed against the baseline)."""
    if not groups:
        return ""
    view = [{"key": g.key, "heading": g.heading, "drawn": [_view(cc) for cc in g.cases[:MAX_DRAWN]],
             "rest": [{"anchor": _anchor(cc.id), "id": cc.id} for cc in g.cases[MAX_DRAWN:]]} for g in groups]
    return fragment("report/changes.html.j2", mode="section", groups=view)


def case_block(entries: Sequence[tuple[Group, CaseChange]]) -> str:
    """Inside a case's drill-down: its changes against the baseline, one kind after the other."""
    if not entries:
        return ""
    return fragment("report/changes.html.j2", mode="case", entries=[(g.title, _view(cc)) for g, cc in entries])


def by_case(groups: Sequence[Group]) -> Mapping[str, list[tuple[Group, CaseChange]]]:
    out: dict[str, list[tuple[Group, CaseChange]]] = {}
    for g in groups:
        for cc in g.cases:
            out.setdefault(cc.id, []).append((g, cc))
    return out
