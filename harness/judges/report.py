"""judges.json and judges.html; ``latest_figures`` for a run's report.

judges.json (contract, /work/shared/DESIGN.md)::

    {"kinds": {KIND: {"mutations": N, "caught": M}},
     "goldens": {"total": N, "passed": M},
     "health": {"examples": N, "accuracy_all": X, "kappa": K, "undecided": U},
     "cases": [{"id", "kind", "mutation", "caught_by"}],
     ...}  # beyond the contract: thresholds, golden_failures, health_detail, meta
"""

from __future__ import annotations

import html
import json
import os
import tempfile
from pathlib import Path
from typing import Any

FILE = "judges.json"
PAGE = "judges.html"


def _atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def write(out: Path, result: dict[str, Any]) -> None:
    """judges.json and judges.html, through the run's redactor (a golden or a reply may quote a key)."""
    from harness import redact

    out = Path(out)
    clean = redact.active().data(result)
    _atomic(out / FILE, json.dumps(clean, indent=1, ensure_ascii=False) + "\n")
    _atomic(out / PAGE, render_html(clean))


def rate(kind: dict[str, int]) -> float | None:
    return kind["caught"] / kind["mutations"] if kind.get("mutations") else None


def summary_lines(result: dict[str, Any]) -> list[str]:
    """Short plain lines: per-kind catch rates, goldens, health (for terminals and reports)."""
    lines = []
    for name, k in result["kinds"].items():
        r = rate(k)
        lines.append(f"{name}: {k['caught']}/{k['mutations']} caught" + (f" ({r:.0%})" if r is not None else ""))
    g = result["goldens"]
    lines.append(f"goldens: {g['passed']}/{g['total']} pass their own case's checks")
    h = result["health"]
    if h.get("examples"):
        kappa = f"{h['kappa']:.2f}" if isinstance(h.get("kappa"), (int, float)) else "undefined"
        lines.append(f"critic health: {h['examples']} examples, accuracy (undecided counted wrong) "
                     f"{h['accuracy_all']:.2f}, kappa {kappa}, undecided {h['undecided']}")
    return lines


def latest_figures(*folders: str | os.PathLike) -> dict[str, Any] | None:
    """The newest judges.json under the given folders (each folder itself or any folder
    below it, one level deep), with ``path`` and ``lines`` (summary_lines) added; None
    when there is none. For a run's report: "judges: the latest figures"."""
    found: list[Path] = []
    for folder in folders:
        root = Path(folder)
        if not root.is_dir():
            continue
        found.extend(p for p in [root / FILE, *root.glob(f"*/{FILE}")] if p.is_file())
    for path in sorted(found, key=lambda p: p.stat().st_mtime, reverse=True):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            data["lines"] = summary_lines(data)
        except (OSError, ValueError, KeyError, TypeError):
            continue
        data["path"] = str(path)
        return data
    return None


def render_html(result: dict[str, Any]) -> str:
    e = html.escape
    meta = result.get("meta", {})
    rows = []
    for name, k in result["kinds"].items():
        r = rate(k)
        ok = r is not None and r >= meta.get("min_catch", 0.9)
        rows.append(f"<tr class='{'ok' if ok else 'bad'}'><td>{e(name)}</td><td>{k['mutations']}</td>"
                    f"<td>{k['caught']}</td><td>{'' if r is None else f'{r:.0%}'}</td></tr>")
    missed = [c for c in result["cases"] if not c["caught_by"]]
    missed_rows = "".join(f"<tr><td>{e(c['id'])}</td><td>{e(c['kind'])}</td><td>{e(c['mutation'])}</td></tr>"
                          for c in missed)
    gf = "".join(f"<li><b>{e(g['id'])}</b> answer #{g['answer']}: {e('; '.join(g['failures']))}</li>"
                 for g in result.get("golden_failures", []))
    th_rows = "".join(
        f"<tr><td>{e(cid)}</td><td>{t['current']:.2f}</td><td>{'' if t['proposed'] is None else t['proposed']}</td>"
        f"<td>{'' if t['right_min'] is None else t['right_min']}</td>"
        f"<td>{'' if t['wrong_whole_max'] is None else t['wrong_whole_max']}</td>"
        f"<td>{t['mutations_passing_current']}</td><td>{e(t.get('reason') or '')}</td></tr>"
        for cid, t in sorted(result.get("thresholds", {}).items()))
    h = result["health"]
    notes = "".join(f"<li>{e(n)}</li>" for n in meta.get("notes", []))
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>harness judges</title>
<style>body{{font:14px system-ui,sans-serif;margin:2em;max-width:1200px}}table{{border-collapse:collapse;margin:1em 0}}
td,th{{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}}tr.bad td{{background:#fdd}}
tr.ok td{{background:#efe}}</style></head><body>
<h1>Judges: mutation testing</h1>
<p>Wrong answers derived from every golden answer, judged by the case's own checks (critic {e(str(meta.get('critic')))},
embedder {e(str(meta.get('embedder')))}, seed {meta.get('seed')}). A mutation is caught when any check fails on it.
Minimum catch rate per kind: {meta.get('min_catch')}. Generated {e(str(meta.get('generated', '')))}.</p>
<table><tr><th>kind</th><th>mutations</th><th>caught</th><th>rate</th></tr>{''.join(rows)}</table>
<p>Goldens: {result['goldens']['passed']}/{result['goldens']['total']} pass their own case's checks.</p>
{f'<h2>Goldens that fail their own checks</h2><ul>{gf}</ul>' if gf else ''}
<h2>Critic health</h2><p>{h.get('examples')} labelled examples; accuracy with undecided counted wrong
{h.get('accuracy_all')}; kappa {h.get('kappa')}; undecided {h.get('undecided')}.</p>
<h2>Missed mutations ({len(missed)})</h2>
<table><tr><th>case</th><th>kind</th><th>mutation</th></tr>{missed_rows}</table>
<h2>Similarity thresholds from data</h2>
<table><tr><th>case</th><th>current</th><th>proposed</th><th>right answers, lowest</th><th>whole wrong answers,
highest</th><th>mutations at or above current</th><th>reason in the case file</th></tr>{th_rows}</table>
{f'<h2>Notes</h2><ul>{notes}</ul>' if notes else ''}
</body></html>
"""
