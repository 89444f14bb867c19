"""Benchmark: does a run stay linear? 1,000 and 10,000 single-turn cases x 3 repeats.

    .venv/bin/python bench/bench_scale.py [--small 1000] [--large 10000] [--repeat 3]

The target is bench/speed/bot.py with no delay (it answers at once), so the figures are the
harness's own cost. For each size: wall time and peak memory of ``harness run`` (wait4 of
the command), the size of results.json / results.jsonl / report.html / junit.xml, the time
of ``harness history`` and of ``harness report --format html`` over the run, and whether
headless Chromium opens the large run's report.html (it must print the DOM with every case
in it, within 120 s).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPEED = ROOT / "bench" / "speed"
HARNESS = ROOT / ".venv" / "bin" / "harness"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def project(folder: Path, n: int) -> Path:
    fx = folder / "fixtures" / "robustness"
    fx.mkdir(parents=True)
    (folder / "fixtures" / "documents").mkdir()
    (fx / "scale.yaml").write_text(
        "layer: robustness\ndefaults: {channel: telegram}\ncases:\n" + "".join(
            f"  - id: scale-{i:05d}\n    send: \"question {i} about item{i:05d}\"\n"
            f"    expect: {{reply: {{contains: \"item{i:05d}\"}}, replies: {{exact: 1}}}}\n" for i in range(n)),
        encoding="utf-8")
    toml = (SPEED / "harness.toml").read_text(encoding="utf-8")
    toml = toml.replace('command = ["python", "bot.py", "--telegram"]',
                        f'command = ["python", "{SPEED / "bot.py"}", "--telegram"]')
    toml = toml.replace('cwd = "."', f'cwd = "{SPEED}"')
    toml = toml.replace('[target.env]\n', '[target.env]\nBENCH_BOT_DELAY_S = "0"\n')
    (folder / "harness.toml").write_text(toml, encoding="utf-8")
    return folder / "harness.toml"


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float, int, str]:
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        out.seek(0)
        return wall, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status), out.read().decode()[-800:]


def chromium_opens(page: Path, expect_cases: int, work: Path) -> tuple[bool, float, str]:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        return False, 0.0, "no chromium on PATH"
    t0 = time.perf_counter()
    try:
        proc = subprocess.run([exe, *CHROMIUM_FLAGS, f"--user-data-dir={work / 'profile'}", "--dump-dom",
                               page.resolve().as_uri()], capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return False, 120.0, "timed out after 120 s"
    wall = time.perf_counter() - t0
    dom = proc.stdout
    ids = dom.count("scale-")
    ok = proc.returncode == 0 and ids >= expect_cases
    return ok, wall, f"exit {proc.returncode}, DOM {len(dom) / 1e6:.1f} MB, {ids} case-id mentions"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--small", type=int, default=1000)
    ap.add_argument("--large", type=int, default=10000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    rows = {}
    for n in (args.small, args.large):
        cfg = project(work / str(n), n)
        reports = work / str(n) / "reports"
        cmd = [str(HARNESS), "run", "--config", str(cfg), "--repeat", str(args.repeat), "--concurrency",
               str(args.concurrency), "--quiet", "--no-upload", "--out", str(reports)]
        wall, rss, code, tail = timed(cmd, env)
        run_dir = next(p for p in reports.iterdir() if p.is_dir() and p.name[:1].isdigit())
        results = json.loads((run_dir / "results.json").read_text())
        s = results["summary"]
        sizes = {f: (run_dir / f).stat().st_size / 1e6 for f in ("results.json", "results.jsonl", "report.html",
                                                                   "junit.xml", "summary.md")}
        h_wall, _, h_code, _ = timed([str(HARNESS), "history", "--config", str(cfg), "--reports", str(reports),
                                      "--local"], env)
        r_wall, r_rss, r_code, _ = timed([str(HARNESS), "report", str(run_dir), "--format", "html"], env)
        rows[n] = {"wall_s": wall, "peak_mb": rss, "exit": code, "passed": s["passed"], "planned": s["planned"],
                   "verdict": s["verdict"], "sizes_mb": sizes, "history_s": h_wall, "history_exit": h_code,
                   "report_html_s": r_wall, "report_html_mb": r_rss, "report_exit": r_code,
                   "quiet_window": s.get("quiet_window")}
        print(f"{n} cases x {args.repeat}: {wall:.1f}s, peak {rss:.0f} MB, exit {code}, {s['passed']}/{s['planned']} "
              f"passed; sizes {', '.join(f'{k} {v:.1f} MB' for k, v in sizes.items())}; history {h_wall:.2f}s; "
              f"report html {r_wall:.2f}s ({r_rss:.0f} MB)", flush=True)
        if code not in (0, 1):
            print(tail)
        if n == args.large:
            ok, c_wall, why = chromium_opens(run_dir / "report.html", n, work)
            rows[n]["chromium"] = {"opened": ok, "s": c_wall, "detail": why}
            print(f"chromium opens the {n * args.repeat}-attempt report.html: {ok} ({c_wall:.1f}s; {why})", flush=True)
    a, b = rows[args.small], rows[args.large]
    print(f"\ntime ratio {b['wall_s'] / a['wall_s']:.2f}x for {args.large / args.small:.0f}x the cases "
          f"(target <= 10.5x); peak memory {b['peak_mb']:.0f} MB (target < 1024 MB)")
    for f in a["sizes_mb"]:
        print(f"  {f}: {b['sizes_mb'][f] / max(a['sizes_mb'][f], 1e-9):.2f}x")
    print(f"  history: {b['history_s'] / a['history_s']:.2f}x; report html: {b['report_html_s'] / a['report_html_s']:.2f}x")
    (work / "scale.json").write_text(json.dumps(rows, indent=1))
    print(f"figures: {work / 'scale.json'}")
    if not args.keep:
        for n in (args.small, args.large):
            shutil.rmtree(work / str(n), ignore_errors=True)


if __name__ == "__main__":
    main()
