"""Formatting for people: one-line headlines, rates, money, durations, inert Markdown.

Shared by the writers (summary.md, report.html, junit.xml, the terminal) and by the
night's text forms (diff, history); reads the results.json dict form, writes nothing.
"""

from __future__ import annotations

from typing import Any, Mapping

#: Replies can be long; the journal and results.json keep them whole, but headlines
#: are one line.
HEADLINE_CHARS = 300
REASON_CHARS = 240


def failing_evidence(case: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Evidence that was gathered and did not hold (unavailable is not failing)."""
    return [e for e in case.get("evidence") or ()
            if e.get("availability") == "ready" and e.get("passed") is False]


def unavailable_evidence(case: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Evidence that could not be gathered (critic down, probe missing, golden missing)."""
    return [e for e in case.get("evidence") or () if e.get("availability") == "unavailable"]


def soft_evidence(case: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The evidence behind a soft verdict.

    The band lives in the aggregator; here, the items that did not plainly pass, else
    the scored items below the 0.8 pass line.
    """
    items = failing_evidence(case)
    if items:
        return items
    return [e for e in case.get("evidence") or ()
            if isinstance(e.get("score"), (int, float)) and e["score"] < 0.8]


def describe_evidence(e: Mapping[str, Any]) -> str:
    """One evidence item as a sentence: its reason, or what it wanted and saw."""
    turn = e.get("turn")
    where = f"{e.get('check', '?')}" + (f" (turn {turn})" if turn is not None else "")
    reason = e.get("reason") or ""
    if not reason:
        reason = f"expected {e.get('expected', '')!s}, observed {e.get('observed', '')!s}"
    return f"{where}: {reason}"


def headline(case: Mapping[str, Any], limit: int = HEADLINE_CHARS) -> str:
    """Why a case has its status, in one line: what a reader looks at first."""
    status = case.get("status")
    text = ""
    if status == "error":
        text = case.get("error") or ""
        if not text and failing_evidence(case):
            text = describe_evidence(failing_evidence(case)[0])
        text = text or "errored (no reason recorded)"
    elif status == "fail":
        items = failing_evidence(case)
        text = describe_evidence(items[0]) if items else (case.get("error") or "failed")
        if not case.get("evidence"):
            text = "no evidence: a case with no check never passes"
    elif status == "unavailable":
        items = unavailable_evidence(case)
        text = ("unavailable: " + describe_evidence(items[0])) if items else "unavailable"
    elif status == "soft":
        items = soft_evidence(case)
        text = ("soft: " + describe_evidence(items[0])) if items else "soft"
    elif status == "skipped":
        text = case.get("error") or "skipped"
    return one_line(text, limit)


def one_line(text: str, limit: int) -> str:
    """Collapse whitespace and cut to ``limit`` characters with an ellipsis; terminal control
    sequences (a reply quoted in a reason) are removed: the line is shown on consoles."""
    from harness.redact import inert

    text = " ".join(inert(str(text)).split())
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def pass_rate(counts: Mapping[str, Any]) -> str:
    """passed / decidable as a percentage; "n/a" when nothing was decidable.

    Never 100% of nothing: a layer whose every case was unavailable has no rate.
    """
    decidable = counts.get("decidable") or 0
    if decidable <= 0:
        return "n/a"
    pct = 100.0 * (counts.get("passed") or 0) / decidable
    # 99.95% must not round up to a clean-looking 100%.
    if pct < 100 and round(pct, 1) >= 100:
        return "99.9%"
    return f"{pct:.1f}%".replace(".0%", "%")


def format_cost(value: Any) -> str:
    """Dollars with enough digits for cheap runs; "-" when unknown."""
    if value is None:
        return "-"
    return f"${value:.4f}" if value < 1 else f"${value:.2f}"


def format_ms(value: Any) -> str:
    """Milliseconds as ``820ms`` / ``12.3s``; "-" when unknown."""
    if value is None:
        return "-"
    return f"{value:.0f}ms" if value < 10_000 else f"{value / 1000:.1f}s"


_MD_ESCAPES = str.maketrans({
    "\\": "\\\\", "`": "\\`", "*": "\\*", "_": "\\_", "[": "\\[", "]": "\\]", "|": "\\|",
    "~": "\\~", "#": "\\#", "<": "&lt;", ">": "&gt;", "&": "&amp;",
})


def md(text: Any, limit: int = REASON_CHARS) -> str:
    """Untrusted text as one inert Markdown line (no links, tags, tables or emphasis)."""
    return one_line("" if text is None else str(text), limit).translate(_MD_ESCAPES)


def md_span(text: Any) -> str:
    """Untrusted text escaped for Markdown as it is: no collapsing, no cut (a piece of a line)."""
    return ("" if text is None else str(text)).replace("\n", " ").translate(_MD_ESCAPES)


def code(text: Any, limit: int = 80) -> str:
    """Untrusted text as an inline code span (inside one, Markdown and HTML are inert)."""
    return "`" + one_line("" if text is None else str(text), limit).replace("`", "'") + "`"


def short_date(stamp: Any) -> str:
    """``2026-11-28T02:00:00Z`` (or a run id ``20261128-...``) as ``28 Nov``; "" when unreadable."""
    from datetime import datetime

    text = str(stamp or "")
    for fmt, size in (("%Y-%m-%d", 10), ("%Y%m%d", 8)):
        try:
            day = datetime.strptime(text[:size], fmt)
        except ValueError:
            continue
        return f"{day.day} {day.strftime('%b')}"
    return ""


def known_version(value: Any) -> str:
    """A version worth showing: "" for none, "unknown", "none" or "-"."""
    text = str(value or "").strip()
    return "" if text.lower() in ("", "unknown", "none", "null", "-", "n/a") else text


def tonight_sentence(d: Mapping[str, Any], diff: Mapping[str, Any] | None = None,
                     history: Any = None) -> str:
    """What happened tonight, in one sentence: the first thing report.html and the PR comment say.

    "173 of 173 passed; no regressions since 28 Nov", "170 of 173 passed; 3 failed (2 new
    since 28 Nov)", "12 of 12 passed; first night: no history yet".
    """
    s = d.get("summary") or {}
    planned, passed = int(s.get("planned") or 0), int(s.get("passed") or 0)
    parts = [f"{passed} of {planned} passed"]
    bad = [f"{s[k]} {word}" for k, word in (("failed", "failed"), ("errored", "errored"), ("soft", "soft"),
                                             ("unavailable", "could not be decided"), ("skipped", "skipped"))
           if s.get(k)]
    base = (diff or {}).get("base_run") or {}
    since = short_date(base.get("started_at") or base.get("run_id"))
    since_text = f"since {since}" if since else f"since run {base.get('run_id', '?')}"
    if diff:
        regressions = int(((diff.get("counts") or {}).get("regressions")) or 0)
        tail = (f"{regressions} regression{'s' if regressions != 1 else ''} {since_text}" if regressions
                else f"no regressions {since_text}")
    elif history is not None and len(history) <= 1:
        tail = "first night: no history yet"
    elif history is not None:
        tail = "no earlier night to compare with"
    else:  # rendered without the nights around it
        tail = ""
    if s.get("verdict") == "budget":
        bad.append("cost budget exceeded")
    run = d.get("run") if isinstance(d.get("run"), Mapping) else {}
    kind = str(run.get("kind") or "nightly")  # results.json run.kind (harness/run/kind.py)
    what = ""
    if kind != "nightly":
        chosen = " ".join(str(x) for x in run.get("selection") or ())
        what = f"a {kind} run{f' ({chosen})' if chosen else ''}, not a night of the trends"
    return "; ".join(x for x in (parts[0] + (f" ({', '.join(bad)})" if bad else ""), tail, what) if x)
