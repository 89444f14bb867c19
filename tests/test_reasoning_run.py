"""The reasoning checks end to end: echo agent (test double) on loopback, hash embedder
(test double), offline critic, goldens, soft re-evaluation, the soft budget, and the
promise that a run without similarity never imports torch."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from harness.cases import load_cases
from harness.config import load_config
from harness.run.runner import RunOptions, run_suite
from tests.reasoning_project import write_project
from tests.test_runner import ENV

ROOT = Path(__file__).resolve().parents[1]

CASES = """
layer: reasoning
cases:
  - id: sim-pass
    source: doc.txt
    send: "The trial reduced symptoms by 30 percent in adults"
    expect:
      reply: {contains: "echo"}
      similarity: {}
      critic:
        factuality: {}
        rubric: {question: "Is it about the findings?", about: [symptoms], not_about: [funding]}
        answer: {expected: "echo The trial reduced symptoms by 30 percent in adults", min: 0.7}
  - id: sim-soft
    send: "alpha beta gamma delta"
    expect:
      similarity: {min: 0.75}
  - id: invented-number
    source: doc.txt
    send: "The trial reduced symptoms by 45 percent in adults"
    expect:
      critic: {factuality: {}}
"""
GOLDENS = {
    "sim-pass": "echo The trial reduced symptoms by 30 percent in adults",
    "sim-soft": "alpha beta gamma delta epsilon zeta",
}


def setup(tmp_path: Path, cases: str = CASES, budget: str = "", goldens=GOLDENS):
    gold = write_project(tmp_path, cases, "The trial reduced symptoms by 30 percent in adults. It was funded by a "
                                          "trust.\n", goldens, "2026.11.30-1")
    cfg = tmp_path / "harness.toml"
    cfg.write_text('[target]\nname = "echo"\ninprocess = "tests.agents.echo:make_app"\n'
                   '[sandbox]\nsettle_s = 0.2\nreply_timeout_s = 3\n'
                   f'[embeddings]\nbackend = "hash"\ncache_dir = "{tmp_path / "cache"}"\n{budget}' + ENV)
    return load_config(cfg, environ={}), load_cases(tmp_path / "fixtures"), gold


async def test_similarity_critic_soft_and_health(tmp_path):
    config, cases, gold = setup(tmp_path)
    report = await run_suite(config, cases, RunOptions(out_dir=tmp_path / "out", golden_dir=gold,
                                                       golden_version="2026.11.30-1"))
    by = {c.id: c for c in report.cases}
    ok = by["sim-pass"]
    assert ok.status == "pass", [(e.check, e.reason) for e in ok.evidence]
    sim = next(e for e in ok.evidence if e.check == "similarity")
    assert sim.score == 1.0 and "answer #0 (human" in sim.reason and "threshold 0.75" in sim.reason
    assert sim.source == "test-double" and sim.evaluator.startswith("similarity@1+hash-bow@1")
    checks = {e.check: e for e in ok.evidence}
    assert checks["critic.factuality"].passed and "supported" in checks["critic.factuality"].reason
    assert checks["critic.rubric"].score == 1.0 and "mentions 'symptoms': yes" in checks["critic.rubric"].reason
    assert checks["critic.factuality"].evaluator.startswith("offline-grounding@")
    soft = by["sim-soft"]
    assert soft.status == "soft"
    e = next(e for e in soft.evidence if e.check == "similarity")
    assert e.passed is None and e.availability == "ready" and 0.5 <= e.score < 0.75
    assert e.reason.startswith("re-evaluated once (first: score") and "still soft" in e.reason
    bad = by["invented-number"]
    assert bad.status == "fail"
    assert "number 45" in next(e for e in bad.evidence if e.check == "critic.factuality").reason
    # one soft case is within the default budget; the failure makes the run fail anyway
    assert report.summary.soft == 1 and report.exit_code == 1
    assert report.golden_version == "2026.11.30-1"
    assert report.models["embedder"] == "hash-bow@1"
    health = report.models["critic_health"]
    assert health["examples"] == 2 and health["counts"]["true_positive"] == 1
    assert any(n.startswith("critic health (offline-grounding@") for n in report.notes)
    assert any(n.startswith("embeddings (hash-bow@1)") for n in report.notes)


async def test_soft_budget_turns_soft_into_failure(tmp_path):
    config, cases, gold = setup(tmp_path, budget="[budget]\nsoft_max_per_run = 0\n")
    cases = [c for c in cases if c.id in ("sim-pass", "sim-soft")]
    report = await run_suite(config, cases, RunOptions(out_dir=tmp_path / "out", golden_dir=gold))
    assert [c.status for c in report.cases] == ["pass", "soft"]
    assert report.summary.failed == 0 and report.summary.soft == 1
    assert report.summary.verdict == "fail" and report.exit_code == 1
    assert any("soft budget exceeded for the run" in n for n in report.notes)
    # 1 soft of 2 decidable is over a third of the layer too
    assert report.layers["reasoning"].verdict == "fail"
    assert any("soft budget exceeded in layer reasoning" in n for n in report.notes)


async def test_within_budget_soft_run_passes(tmp_path):
    config, cases, gold = setup(tmp_path, budget="[budget]\nsoft_max_fraction_per_layer = 0.6\n")
    cases = [c for c in cases if c.id in ("sim-pass", "sim-soft")]
    report = await run_suite(config, cases, RunOptions(out_dir=tmp_path / "out", golden_dir=gold))
    assert report.summary.soft == 1 and report.exit_code == 0


async def test_missing_and_expired_goldens_are_unavailable(tmp_path):
    config, cases, gold = setup(tmp_path, goldens={})
    (gold / "sim-soft.yaml").write_text("case: sim-soft\nanswers:\n  - {text: 'alpha beta', author: human, "
                                        "approved: 2020-01-01, expires: 2021-01-01}\n")
    cases = [c for c in cases if c.id in ("sim-pass", "sim-soft")]
    report = await run_suite(config, cases, RunOptions(out_dir=tmp_path / "out", golden_dir=gold))
    by = {c.id: c for c in report.cases}
    sim = next(e for e in by["sim-pass"].evidence if e.check == "similarity")
    assert by["sim-pass"].status == "unavailable" and sim.passed is None and "no golden answer" in sim.reason
    assert by["sim-soft"].status == "unavailable" and "expired" in next(
        e for e in by["sim-soft"].evidence if e.check == "similarity").reason
    assert report.summary.passed == 0 and report.exit_code == 1
    assert any("expired golden answers were not used" in n for n in report.notes)


def test_bad_golden_exits_2_before_anything_runs(tmp_path):
    config, cases, gold = setup(tmp_path)
    (gold / "sim-pass.yaml").write_text("case: sim-pass\nanswers: []\n")
    out = subprocess.run([sys.executable, "-m", "harness.cli", "run", "--config", str(tmp_path / "harness.toml"),
                          "--golden", str(gold), "--quiet", "--no-upload"], capture_output=True, text=True,
                         cwd=ROOT, timeout=60)
    assert out.returncode == 2, out.stderr
    assert "sim-pass.yaml" in out.stderr and "fix:" in out.stderr


ROBUSTNESS = """
layer: robustness
cases:
  - id: echo-telegram
    send: "hello there"
    expect:
      reply: {regex: "^echo: hello there$"}
"""


def test_a_run_without_similarity_never_imports_torch(tmp_path):
    from tests.test_runner import setup as robustness_setup

    robustness_setup(tmp_path, cases=ROBUSTNESS)
    script = textwrap.dedent(f"""
        import sys
        from harness.cli import main
        code = main(["run", "--config", {str(tmp_path / 'harness.toml')!r}, "--quiet", "--no-upload",
                     "--out", {str(tmp_path / 'out')!r}])
        heavy = sorted(m for m in ("torch", "sentence_transformers", "transformers") if m in sys.modules)
        print("EXIT", code, "HEAVY", heavy)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert "EXIT 0 HEAVY []" in out.stdout, out.stdout + out.stderr
    results = json.loads(next((tmp_path / "out").glob("*/results.json")).read_text())
    assert results["models"]["embedder"] == "none"
