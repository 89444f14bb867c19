"""report.html's "Changed against the baseline": tonight's reply beside the accepted one.

One heading per kind of change (``changes.baseline_changes``), each case once under it with
what changed (expected -> observed) and, for the kinds about the reply, both replies side by
side, every message in its own box, the changed facts in ``<mark>``. Every text is untrusted
and goes through ``esc``; only the ``<mark>`` tags around escaped text are ours.
"""

from __future__ import annotations

import html
import re
from typing import Any, Mapping, Sequence

from harness.report.changes import CaseChange, Group, Pair, distinct

#: Cases drawn in full per group; the rest are named with a link to their case.
MAX_DRAWN = 40

CSS = """
section.changes h3{font-size:15px;margin:16px 0 6px}
div.change{border:1px solid var(--line);border-radius:6px;margin:6px 0;padding:6px 10px}
div.change ul.facts{margin:4px 0 6px 18px;padding:0}
table.sbs{table-layout:fixed}table.sbs th{width:50%}
table.sbs pre.msg{margin:0 0 4px}
mark{background:#fff8c5;color:inherit;outline:1px solid #d4a72c;border-radius:2px}
td.gone{color:var(--muted)}
"""


#: The statuses report.html's badges have a colour for.
STATUSES = ("pass", "soft", "fail", "error", "unavailable", "skipped")


def _esc(value: Any) -> str:
    """Untrusted value as HTML text (report.html's ``esc``: quotes too)."""
    return html.escape("" if value is None else str(value), quote=True)


def case_anchor(case_id: Any) -> str:
    """The id of a case's drill-down on report.html (``html._anchor`` is this)."""
    return "case-" + re.sub(r"[^A-Za-z0-9_-]", "-", str(case_id))


_anchor = case_anchor


def _badge(status: str) -> str:
    cls = status if status in STATUSES else "skipped"
    return f'<span class="badge b-{cls}">{_esc(status)}</span>'


def marked_html(pair: Pair, text: str, side: str) -> str:
    """One message as escaped text with its changed facts in ``<mark>``."""
    return "".join(f"<mark>{_esc(seg)}</mark>" if marked else _esc(seg) for seg, marked in pair.spans(text, side))


def _messages_html(pair: Pair, messages: Sequence[str] | None, side: str) -> str:
    if messages is None:
        return ('<td class="gone">the accepted reply is not known here (the baseline run is not readable from '
                'this machine, and results.json keeps no copy of it)</td>')
    if not messages:
        return '<td class="gone">no reply</td>'
    count = f'<div class="muted">{len(messages)} messages</div>' if len(messages) > 1 else ""
    return "<td>" + count + "".join(f'<pre class="msg">{marked_html(pair, m, side)}</pre>' for m in messages) + "</td>"


def pairs_html(cc: CaseChange) -> str:
    """The case's changes as a list and its turns side by side (accepted left, tonight right)."""
    facts = "".join(
        f"<li>{'turn ' + _esc(c.turn) if c.turn is not None else 'case'} · {_esc(c.kind)}: "
        f"<code>{_esc(c.expected or '-')}</code> → <code>{_esc(c.observed or '-')}</code>"
        + (f" ×{n}" if n > 1 else "") +
        f' <span class="muted">({_esc(c.change)}{"; " + _esc(c.reason) if c.reason else ""})</span></li>'
        for c, n in distinct(cc.changes))
    tables = "".join(
        f'<table class="sbs"><tr><th>accepted (turn {_esc(p.turn)})</th><th>tonight (turn {_esc(p.turn)})</th></tr>'
        f"<tr>{_messages_html(p, p.baseline, 'baseline')}{_messages_html(p, p.tonight, 'tonight')}</tr></table>"
        for p in cc.pairs)
    return f'<ul class="facts">{facts}</ul>{tables}'


def _case_head(cc: CaseChange) -> str:
    accepted = (f' · <span class="muted">accepted on its own from {_esc(cc.accepted_from)}</span>'
                if cc.accepted_from else "")
    return (f'<div>{_badge(cc.status)} <a href="#{_esc(_anchor(cc.id))}"><b>{_esc(cc.id)}</b></a> '
            f'<span class="muted">{_esc(cc.layer)}</span>{accepted}</div>')


def changes_html(groups: Sequence[Group]) -> str:
    """The section (empty when nothing changed against the baseline)."""
    if not groups:
        return ""
    parts = ['<section class="changes" id="changes"><h2>Changed against the baseline</h2>'
             '<p class="muted">Cases whose <code>baseline.*</code> evidence failed or is soft, by what changed; '
             "the accepted reply left, tonight's right, the changed facts marked. Accept a change on purpose "
             "with <code>harness baseline accept RUN --case ID --reason TEXT</code>.</p>"]
    for g in groups:
        parts.append(f'<h3 data-kind="{_esc(g.key)}">{_esc(g.heading)}</h3>')
        for cc in g.cases[:MAX_DRAWN]:
            parts.append(f'<div class="change">{_case_head(cc)}{pairs_html(cc)}</div>')
        rest = g.cases[MAX_DRAWN:]
        if rest:
            parts.append("<p>… and " + str(len(rest)) + " more: " + ", ".join(
                f'<a href="#{_esc(_anchor(cc.id))}">{_esc(cc.id)}</a>' for cc in rest) + "</p>")
    parts.append("</section>")
    return "".join(parts)


def case_block(entries: Sequence[tuple[Group, CaseChange]]) -> str:
    """Inside a case's drill-down: its changes against the baseline, one kind after the other."""
    if not entries:
        return ""
    return "<h3>Against the baseline</h3>" + "".join(
        f'<div class="change"><div class="muted">{_esc(g.title)}</div>{pairs_html(cc)}</div>' for g, cc in entries)


def by_case(groups: Sequence[Group]) -> Mapping[str, list[tuple[Group, CaseChange]]]:
    out: dict[str, list[tuple[Group, CaseChange]]] = {}
    for g in groups:
        for cc in g.cases:
            out.setdefault(cc.id, []).append((g, cc))
    return out
