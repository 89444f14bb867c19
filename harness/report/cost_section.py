"""The cost layer's section of summary.md and report.html: spend, tokens, latency, budget.

Rendered from the results.json dict (``summary`` keys written by harness/perf.py); a report
without them (an older run) renders nothing. Simulated spend is labelled SIMULATED
wherever a dollar figure appears.
"""

from __future__ import annotations

from typing import Any, Mapping


def _usd(v: Any) -> str:
    return "-" if v is None else f"${v:.4f}"


def _ms(block: Mapping[str, Any] | None) -> str:
    if not block or block.get("p50") is None:
        return "-"
    return f"p50 {block['p50']:.0f}ms / p95 {block['p95']:.0f}ms (n={block.get('n', 0)})"


def cost_lines(d: Mapping[str, Any]) -> list[str]:
    """Plain lines (no markup): the facts both renderers show."""
    s = d.get("summary") or {}
    if "latency" not in s:
        return []
    sim = " SIMULATED (offline model priced at the named models' list prices; nothing billed)" \
        if s.get("simulated") else ""
    tokens = s.get("tokens") or {}
    lines = [
        f"Agent spend: {_usd(s.get('cost_usd'))}{sim}; prices {s.get('prices_version', '?')}"
        + (f"; cost unavailable for {s['cost_unavailable']} case(s)" if s.get("cost_unavailable") else ""),
        f"Harness spend (critic etc., apart from the agent's): {_usd(s.get('harness_cost_usd'))} over "
        f"{s.get('harness_calls', 0)} call(s)",
        f"LLM calls {s.get('llm_calls', 0)} · fetches {s.get('fetches', 0)} · sends {s.get('sends', 0)} · "
        f"non-2xx calls {s.get('errors', 0)} · tokens in {tokens.get('input', 0)} / out {tokens.get('output', 0)}"
        + (" (some estimated)" if tokens.get("estimated") else ""),
    ]
    lat = s.get("latency") or {}
    lines.append(f"Latency: first reply {_ms(lat.get('first_reply_ms'))}; last reply {_ms(lat.get('last_reply_ms'))}; "
                 f"LLM call {_ms(lat.get('llm_call_ms'))}; fetch {_ms(lat.get('fetch_ms'))}")
    if s.get("replayed_cases"):
        lines.append(f"Replayed from a cassette: {s['replayed_cases']} case(s); replay misses {s.get('replay_misses', 0)}")
    budget = s.get("budget") or {}
    if budget.get("limit_usd") is not None:
        state = "EXCEEDED" if budget.get("breached") else "held"
        lines.append(f"Budget {_usd(budget['limit_usd'])}: {state}; spent {_usd(budget.get('spent_usd'))}"
                     + (f"; {budget['reason']}" if budget.get("reason") else "")
                     + (f"; {budget.get('skipped', 0)} case(s) not started" if budget.get("skipped") else ""))
        if budget.get("breached") and budget.get("spent_by"):
            lines.append("Spent by: " + ", ".join(f"{b['id']} {_usd(b['cost_usd'])}" for b in budget["spent_by"][:10]))
    return lines


def cost_markdown(d: Mapping[str, Any], md) -> list[str]:
    """summary.md lines (``md`` is the markdown writer's escaper)."""
    lines = cost_lines(d)
    if not lines:
        return []
    return ["### Cost and performance", ""] + [f"- {md(line, 600)}" for line in lines] + [""]


def cost_html(d: Mapping[str, Any]) -> str:
    lines = cost_lines(d)
    if not lines:
        return ""
    from harness.report.templating import fragment

    return fragment("report/cost.html.j2", lines=lines)
