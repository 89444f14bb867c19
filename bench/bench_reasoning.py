"""Reasoning-layer benchmark: embedding throughput, golden cache hits, peak memory.

    .venv/bin/python bench/bench_reasoning.py

1. The model's own rates on this machine: 400 short sentences encoded with batch_size 32,
   and 100 encoded one at a time.
2. A run that uses similarity and the offline critic, against docbot (the real target from
   harness.toml), twice with one fresh embedding cache: embeddings encoded per second during
   the run (texts the model encoded / seconds inside the model, and / wall time), and the
   second run's golden-embedding cache hits. When fixtures/reasoning exists (the suite's own
   50 cases), that layer is run; otherwise a small bench suite written to a temp folder.
3. Peak memory (ru_maxrss of the harness process) of a robustness-only run (no torch) versus
   the run of (2).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = str(ROOT / ".venv" / "bin" / "python")

WORDS = ("trial symptoms patients results funding method sample growth policy bridge council kettle warranty "
         "carbon farms yields release latency budget rotation incident alert review market investors").split()


def sentences(n: int) -> list[str]:
    return [f"Sentence {i}: the {WORDS[i % len(WORDS)]} and the {WORDS[(i * 7) % len(WORDS)]} changed by "
            f"{i % 50} percent in {2000 + i % 25}." for i in range(n)]


def model_rates() -> dict:
    from harness.models.embedder import _MiniLM

    m = _MiniLM()
    t = time.perf_counter()
    m.load()
    load_s = time.perf_counter() - t
    m.encode(sentences(32))  # warm-up
    batch = sentences(400)
    t = time.perf_counter()
    m.model.encode(batch, batch_size=32, normalize_embeddings=True, show_progress_bar=False)
    batched = 400 / (time.perf_counter() - t)
    single = sentences(100)
    t = time.perf_counter()
    for s in single:
        m.model.encode([s], normalize_embeddings=True, show_progress_bar=False)
    one = 100 / (time.perf_counter() - t)
    return {"load_s": round(load_s, 2), "batched_per_s": round(batched, 1), "one_at_a_time_per_s": round(one, 1)}


BENCH_CASES = """
layer: reasoning
defaults: {channel: telegram}
cases:
"""
DOCS = [("notes.txt", "The platform team deployed release 3.2 without rollbacks, fixed a staging disk incident "
                      "and agreed a new on-call rotation; cloud spending was twelve percent over plan."),
        ("article.html", None), ("paper.pdf", None)]
PLATFORMS = ["twitter", "linkedin", "telegram"]


def bench_suite(folder: Path) -> tuple[Path, Path]:
    """A small reasoning suite (bench-only goldens, not the suite's): 3 documents x 3 platforms x 2 phrasings."""
    fixtures = folder / "fixtures"
    (fixtures / "reasoning").mkdir(parents=True)
    gold = folder / "golden"
    gold.mkdir()
    (gold / "VERSION").write_text("bench-1\n")
    lines = [BENCH_CASES]
    for doc, _ in DOCS:
        for platform in PLATFORMS:
            for k, verb in enumerate(("summarize", "write a post about")):
                cid = f"bench-{doc.split('.')[0]}-{platform}-{k}"
                lines.append(f"  - id: {cid}\n    source: {doc}\n    send: \"{verb} {{docs}}/{doc} for {platform}\"\n"
                             f"    expect:\n      replies: {{min: 1}}\n      similarity: {{min: 0.3, golden: bench-{doc.split('.')[0]}, of: post}}\n"
                             f"      critic: {{factuality: {{of: post}}}}\n")
    (fixtures / "reasoning" / "bench.yaml").write_text("".join(lines))
    from harness.models.claims import document_text

    for doc, text in DOCS:
        text = text or " ".join(document_text(ROOT / "fixtures" / "documents" / doc).split()[:60])
        (gold / f"bench-{doc.split('.')[0]}.yaml").write_text(
            f"case: bench-{doc.split('.')[0]}\nanswers:\n  - text: {json.dumps(text)}\n"
            f"    author: model-drafted-approved\n    approved: 2026-11-30\n")
    (fixtures / "documents").symlink_to(ROOT / "fixtures" / "documents")
    return fixtures, gold


def harness_run(args: list[str], env: dict) -> dict:
    """One `harness run` in a fresh interpreter; returns its exit code, wall time, ru_maxrss and results."""
    script = textwrap.dedent(f"""
        import json, resource, sys, time
        from harness.cli import main
        t = time.perf_counter()
        code = main({args!r})
        wall = time.perf_counter() - t
        print("BENCH", json.dumps({{"exit": code, "wall_s": wall,
              "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
              "torch": "torch" in sys.modules}}))
    """)
    out = subprocess.run([PY, "-c", script], capture_output=True, text=True, cwd=ROOT, env={**os.environ, **env},
                         timeout=900)
    line = next((ln for ln in out.stdout.splitlines() if ln.startswith("BENCH ")), None)
    if line is None:
        raise SystemExit(f"run failed:\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
    data = json.loads(line[6:])
    outdir = Path(args[args.index("--out") + 1])
    latest = max(outdir.glob("*/results.json"), key=lambda p: p.stat().st_mtime)
    data["results"] = json.loads(latest.read_text())
    return data


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        env = {"HARNESS_EMBEDDINGS_CACHE_DIR": str(tmp / "cache"), "HARNESS_LOG_LEVEL": "ERROR"}
        if (ROOT / "fixtures" / "reasoning").is_dir():
            sel = ["--layer", "reasoning"]
            what = "the suite's reasoning layer"
        else:
            fixtures, gold = bench_suite(tmp)
            sel = ["--fixtures", str(fixtures), "--golden", str(gold)]
            what = "bench suite (18 cases, fixtures/reasoning absent)"
        runs = []
        for i in range(2):
            r = harness_run(["run", *sel, "--quiet", "--no-upload", "--out", str(tmp / "out")], env)
            stats = r["results"]["models"].get("embedder_stats", {})
            s = r["results"]["summary"]
            print(f"{what} run {i + 1}: exit {r['exit']}, wall {r['wall_s']:.1f}s, maxrss {r['maxrss_mb']:.0f} MB, "
                  f"torch loaded {r['torch']}, cases {s['planned']} (passed {s['passed']}, soft {s['soft']}, "
                  f"failed {s['failed']}, unavailable {s['unavailable']})", flush=True)
            enc, es = stats.get("texts_encoded", 0), stats.get("encode_s", 0) or 0
            print(f"  embeddings: {enc} encoded in {stats.get('batches')} batches, {es:.2f}s in the model "
                  f"({enc / es if es else 0:.0f}/s in the model, {enc / r['wall_s']:.1f}/s of wall), "
                  f"cache hits {stats.get('cache_hits')}, model load {stats.get('load_s')}s", flush=True)
            health = r["results"]["models"].get("critic_health")
            if health:
                print(f"  critic health: accuracy {health['accuracy']} kappa {health['kappa']} "
                      f"({health['decided']} decided, {health['undecided']} undecided)", flush=True)
            runs.append(r)
        rob = harness_run(["run", "--layer", "robustness", "--quiet", "--no-upload", "--out", str(tmp / "out")], env)
        print(f"robustness-only run: exit {rob['exit']}, wall {rob['wall_s']:.1f}s, maxrss {rob['maxrss_mb']:.0f} MB, "
              f"torch loaded {rob['torch']}", flush=True)
    # Last: ru_maxrss survives fork+exec, so the model must not be loaded in this process before the runs.
    print("model rates (400 sentences, batch_size 32 / 100 one at a time):", flush=True)
    print(" ", model_rates(), flush=True)
    print("load average (1, 5, 15 min) at the end:", os.getloadavg(), "on", os.cpu_count(), "cores", flush=True)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
