"""End to end against docbot: three noisy clean nights accepted; a fourth passes; a seeded
regression no hand-written check of these cases pins (a digit swap) fails on baseline.* evidence, and so
does the history sent again with every LLM call (tokens per turn)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CASES = ["--layer", "cost", "--case", "cost-interaction-*", "--case", "cost-calls-article-whatsapp"]


def harness(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "DOCBOT_NOISE": "1", **(env or {})}, timeout=300)


def latest(out: Path) -> dict:
    run = sorted(p for p in out.iterdir() if (p / "results.json").is_file())[-1]
    return json.loads((run / "results.json").read_text(encoding="utf-8"))


def baseline_evidence(results: dict) -> list[tuple[str, str, bool | None]]:
    return [(c["id"], e["check"], e["passed"]) for c in results["cases"] for e in c["evidence"]
            if e["check"].startswith("baseline.")]


def test_accepted_noisy_nights_hold_and_regressions_fail(tmp_path):
    out = tmp_path / "reports"
    for _ in range(3):
        done = harness("run", *CASES, "--out", str(out), "--quiet", env={"DOCBOT_REGRESSION": ""})
        assert done.returncode == 0, done.stdout + done.stderr
    first = latest(out)
    assert first["summary"]["baseline"]["checked"] is False  # nothing accepted yet: no baseline checks at all
    assert not baseline_evidence(first)
    accepted = first["run_id"]
    assert harness("baseline", "--out", str(out), "accept", accepted).returncode == 0

    done = harness("run", *CASES, "--out", str(out), "--quiet", env={"DOCBOT_REGRESSION": ""})
    clean = latest(out)
    assert clean["summary"]["baseline"]["checked"] is True and len(clean["summary"]["baseline"]["nights"]) == 3
    held = baseline_evidence(clean)
    assert {check for _, check, _ in held} >= {"baseline.replies", "baseline.facts", "baseline.tokens",
                                                "baseline.latency", "baseline.tools", "baseline.llm_calls"}
    assert [h for h in held if h[2] is not True] == [], held
    assert done.returncode == 0, done.stdout + done.stderr
    case = next(c for c in clean["cases"] if c["id"] == "cost-interaction-paper-telegram")
    assert case["baseline"]["nights"] == 3 and case["baseline"]["turns"][0]["text"]

    done = harness("run", *CASES, "--out", str(out), "--quiet", env={"DOCBOT_REGRESSION": "digit_swap"})
    broken = latest(out)
    assert done.returncode == 1
    failed = {(cid, check) for cid, check, ok in baseline_evidence(broken) if ok is False}
    assert ("cost-interaction-paper-telegram", "baseline.facts") in failed
    other = [e for c in broken["cases"] for e in c["evidence"] if e["passed"] is False
             and not e["check"].startswith(("baseline.", "anomaly."))]
    assert other == []  # the hand-written checks of these cases do not see it
    changes = [ch for c in broken["cases"] for ch in (c.get("baseline") or {}).get("changes", ())]
    assert any(ch["kind"] == "number" and ch["change"] == "contradicted" for ch in changes)

    done = harness("run", *CASES, "--out", str(out), "--quiet", env={"DOCBOT_REGRESSION": "history_resent"})
    resent = latest(out)
    assert done.returncode == 1
    failed = {(cid, check) for cid, check, ok in baseline_evidence(resent) if ok is False}
    assert ("cost-interaction-paper-telegram", "baseline.tokens") in failed

    done = harness("run", *CASES, "--out", str(out), "--quiet", env={"DOCBOT_REGRESSION": "name_swap"})
    swapped = latest(out)
    assert done.returncode == 1
    changes = [ch for c in swapped["cases"] for ch in (c.get("baseline") or {}).get("changes", ())]
    assert any(ch["kind"] == "name" and ch["change"] == "contradicted" for ch in changes), changes
    other = [e for c in swapped["cases"] for e in c["evidence"] if e["passed"] is False
             and not e["check"].startswith(("baseline.", "anomaly."))]
    assert other == []  # a name swapped in a cost case's reply: only the accepted nights know the names
