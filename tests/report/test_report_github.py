"""`harness report RUN --format github`: the night's sentence, regressions and layers as a PR
comment / $GITHUB_STEP_SUMMARY, within GitHub's 65,536-character comment limit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from harness.night.context import nights_around
from harness.report import render
from harness.report.github import GITHUB_COMMENT_LIMIT, render_github
from tests.nightly.conftest import case, run, write_run

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = "Traceback <b>boom</b> [link](http://x) | `tick` " + "long " * 200


def _night(n: int, failing: set[int], total: int) -> dict:
    layers = ("robustness", "reasoning", "multiturn", "cost")
    cases = [case(f"case-{i:05d}", "fail" if i in failing else "pass", layer=layers[i % 4],
                  reply=HOSTILE if i in failing else "ok") for i in range(total)]
    return run(f"2026112{n}-020000-abcd", cases, started_at=f"2026-11-2{n}T02:00:00+00:00")


def _report(run_dir: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness.cli", "report", str(run_dir), "--format", "github"],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)


def test_a_10000_case_run_fits_in_one_github_comment(tmp_path):
    reports = tmp_path / "reports"
    write_run(reports, _night(7, set(), 10_000))
    tonight = write_run(reports, _night(8, set(range(0, 10_000, 3)), 10_000))  # 3,334 regressions
    proc = _report(tonight)
    assert proc.returncode == 0, proc.stderr[-2000:]
    md = proc.stdout
    assert len(md) <= GITHUB_COMMENT_LIMIT, len(md)
    assert md.startswith("### ❌ docbot 1.0: 6666 of 10000 passed (3334 failed); 3334 regressions since 27 Nov")
    assert "New failures (regressions):" in md and "- … and 3309 more (diff.json)" in md
    assert "| **total** | 10000 | 6666 | 3334 |" in md
    assert "<b>" not in md and "[link](http" not in md  # agent text is inert (escaped)
    assert "wrote" in proc.stderr and "wrote" not in md  # stdout is the Markdown alone
    assert (tonight / "summary-github.md").read_text(encoding="utf-8") == md


def test_first_night_and_a_clean_night(tmp_path):
    reports = tmp_path / "reports"
    first = write_run(reports, _night(7, set(), 12))
    text = render(first, "github", context=nights_around).read_text(encoding="utf-8")
    assert text.splitlines()[0] == "### ✅ docbot 1.0: 12 of 12 passed; first night: no history yet"
    second = write_run(reports, _night(8, set(), 12))
    text = render(second, "github", context=nights_around).read_text(encoding="utf-8")
    assert text.splitlines()[0] == "### ✅ docbot 1.0: 12 of 12 passed; no regressions since 27 Nov"
    assert "None" not in text


def test_lists_shrink_until_the_page_fits():
    d = _night(8, set(range(500)), 500)
    d["notes"] = ["n" * 300] * 500
    diff = {"base_run": {"run_id": "x", "started_at": "2026-11-27"}, "counts": {"regressions": 500},
            "regressions": [{"id": f"case-{i:05d}" + "x" * 70, "before": "pass", "after": "fail",
                             "why": "w" * 300} for i in range(500)]}
    text = render_github(d, diff)
    assert len(text) <= 60_000 and "500 regressions since 27 Nov" in text.splitlines()[0]
