"""The run manifest (``harness.night.manifest``) as one small-print line of summary.md."""

from __future__ import annotations

from typing import Any, Mapping

from harness.report.format import md


def render_manifest_md(manifest: Mapping[str, Any] | None) -> str:
    """One small-print line for summary.md (empty without a manifest)."""
    if not manifest:
        return ""
    agent = manifest.get("agent") or {}
    models = manifest.get("models") or {}
    llm = ", ".join(models.get("llm") or ()) or "none seen"
    sha = (agent.get("git_sha") or "")[:12]
    parts = [f"agent {md(agent.get('name'), 40)} {md(agent.get('version'), 40)}" + (f" @{md(sha, 12)}" if sha else ""),
             f"llm {md(llm, 120)}",
             f"prices {md(manifest.get('price_table_version'), 40)}",
             f"config {md(str(manifest.get('config_hash', ''))[:19], 19)}",
             f"host {md(manifest.get('host'), 60)}", f"python {md(manifest.get('python'), 20)}",
             f"command {md(manifest.get('command'), 200)}"]
    shard = manifest.get("selection", {}).get("shard") if isinstance(manifest.get("selection"), Mapping) else None
    if shard:
        parts.append(f"shard {md(shard, 20)}")
    return "<sub>manifest: " + " · ".join(parts) + "</sub>"
