"""The run manifest: what a night ran with, so any night can be explained later.

Written twice: ``<run>/manifest.json`` when the run starts (with the selection, which is
what ``--resume`` reads back) and as the top-level ``manifest`` object of results.json at
the end (completed with what only the run could tell: the agent's reported version, the
models the gateway saw). summary.md shows it in one line.

The config hash is the SHA-256 of the effective configuration (file plus environment
overrides), canonical JSON, with every key that names a secret left out, so two nights
with the same hash ran with the same settings.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shlex
import socket
import sys
from pathlib import Path
from typing import Any, Iterable, Mapping

from harness import __version__

MANIFEST_FILE = "manifest.json"


def _secret_key(key: str) -> bool:
    from harness.config import NOT_SECRET, SECRET_WORDS

    low = key.lower()
    return low not in NOT_SECRET and any(w in low for w in SECRET_WORDS)


def _scrub(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _scrub(v) for k, v in value.items() if not _secret_key(str(k))}
    if isinstance(value, (list, tuple)):
        return [_scrub(v) for v in value]
    return value


def config_hash(config: Any) -> str:
    """sha256 of the effective config (sections after env overrides), secrets excluded."""
    sections = _scrub(dict(getattr(config, "sections", {}) or {}))
    sections = {k: v for k, v in sections.items() if v != {}}  # a section holding only a secret is no setting
    canonical = json.dumps(sections, sort_keys=True, separators=(",", ":"), default=str)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def git_sha(start: str | os.PathLike[str]) -> str:
    """The commit checked out in the repository holding ``start``, read from .git (no git binary).

    Empty when there is no repository or it cannot be read.
    """
    path = Path(start).resolve()
    for folder in (path, *path.parents):
        dot = folder / ".git"
        if dot.is_file():  # a worktree or submodule: "gitdir: <path>"
            text = dot.read_text(encoding="utf-8", errors="replace").strip()
            if text.startswith("gitdir:"):
                dot = (folder / text.split(":", 1)[1].strip()).resolve()
        if not dot.is_dir():
            continue
        try:
            head = (dot / "HEAD").read_text(encoding="utf-8").strip()
        except OSError:
            return ""
        if not head.startswith("ref:"):
            return head[:40]
        ref = head.split(":", 1)[1].strip()
        common = dot
        if (dot / "commondir").is_file():
            common = (dot / (dot / "commondir").read_text().strip()).resolve()
        for base in (dot, common):
            if (base / ref).is_file():
                return (base / ref).read_text(encoding="utf-8").strip()[:40]
        packed = common / "packed-refs"
        if packed.is_file():
            for line in packed.read_text(encoding="utf-8", errors="replace").splitlines():
                parts = line.split()
                if len(parts) == 2 and parts[1] == ref:
                    return parts[0][:40]
        return ""
    return ""


def price_table_version(config: Any) -> str:
    """The version of the cost layer's price table, or "none" when there is none."""
    try:
        from harness.models.prices import load_prices
    except ImportError:
        return "none"
    budget = (getattr(config, "sections", {}) or {}).get("budget") or {}
    path = budget.get("prices") or budget.get("price_table") or None
    try:
        return str(load_prices(str(config.resolve(path)) if path else None).version)
    except Exception:  # a broken price file is the cost layer's error to report, not ours
        return "none"


def target_dir(config: Any) -> Path:
    t = config.target
    return config.resolve(t.cwd) if getattr(t, "cwd", "") else Path(getattr(config, "root", "."))


def start_manifest(config: Any, argv: Iterable[str] | None, selection: Mapping[str, Any]) -> dict[str, Any]:
    """What is known before the run: versions, config hash, host, command, selection."""
    t = config.target
    return {
        "harness_version": __version__,
        "agent": {"name": t.name, "version": t.version or "", "git_sha": git_sha(target_dir(config))},
        "harness_git_sha": git_sha(Path(__file__).parent),
        "models": {},
        "golden_version": "",
        "price_table_version": price_table_version(config),
        "config_hash": config_hash(config),
        "config_file": str(config.path or ""),
        "host": socket.gethostname(),
        "platform": platform.platform(terse=True),
        "python": platform.python_version(),
        "command": "harness " + shlex.join(list(argv if argv is not None else sys.argv[1:])),
        "selection": dict(selection),
    }


def llm_models(cases: Iterable[Any]) -> list[str]:
    """Model names the gateway saw in this run's LLM calls (from the observations)."""
    seen: set[str] = set()
    for case in cases:
        obs = getattr(case, "observation", None)
        for e in getattr(obs, "events", ()) if obs is not None else ():
            if getattr(e, "name", "") == "llm":
                for key in ("model", "upstream_model"):
                    if (e.meta or {}).get(key):
                        seen.add(str(e.meta[key]))
    return sorted(seen)


def finish_manifest(manifest: Mapping[str, Any], report: Mapping[str, Any], llm: Iterable[str] = ()) -> dict[str, Any]:
    """Complete the start manifest with what the run found out (report in results.json form)."""
    m = dict(manifest)
    target = report.get("target") or {}
    agent = dict(m.get("agent") or {})
    agent["version"] = target.get("version") or agent.get("version") or "unknown"
    agent["name"] = target.get("name") or agent.get("name", "")
    if not agent.get("git_sha"):
        agent["git_sha"] = ""
    m["agent"] = agent
    models = {k: v for k, v in (report.get("models") or {}).items()}
    previous = list((m.get("models") or {}).get("llm") or ())
    models["llm"] = sorted(set(previous) | set(llm))
    m["models"] = models
    m["golden_version"] = report.get("golden_version") or "none"
    m.setdefault("price_table_version", "none")
    return m
