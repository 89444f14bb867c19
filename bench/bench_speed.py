"""Benchmark: the harness against promptfoo and the floor, side by side, on the same 131 cases and replies.

    .venv/bin/python bench/bench_speed.py [--repeats 3] [--only one,conc8,seq]

The harness drives bench/speed/bot.py as a Telegram bot (its replies come 50 ms after the
update, through the harness's Bot API emulator); promptfoo 0.121.20 drives the same bot's
HTTP twin (``POST /chat``, answer after 50 ms) with its ``http`` provider; the floor
(bench/speed/floor.py, ~40 lines of stdlib ``http.client``) sends the same requests to the
same twin and checks the same thing, with nothing else: what any tool must cost at least.
All get the same 131 questions and the same check (bench/speed/make_cases.py writes the
harness's and promptfoo's files; the floor reads its list). Without promptfoo installed the
harness and the floor still run, and the table says promptfoo was skipped.

The script re-runs itself inside a fresh network namespace that has only loopback
(``unshare -n``; root), because promptfoo sends a telemetry event even with telemetry off.
Each scenario runs ``--repeats`` times per tool, interleaved, and the medians are compared.
Wall time is measured from the command's start to its exit; peak memory is the command's
own maximum resident set (``wait4``), the bot is not counted for either tool.

Install promptfoo for its column: ``npm install --prefix bench/promptfoo-env promptfoo@0.121.20``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPEED = ROOT / "bench" / "speed"
#: where promptfoo 0.121.20 is looked for: $BENCH_PROMPTFOO (the executable), else the npm prefix
#: ~/.cache/harness-bench/promptfoo, else bench/promptfoo-env (older sessions' place)
PROMPTFOO_PREFIXES = (Path.home() / ".cache" / "harness-bench" / "promptfoo", ROOT / "bench" / "promptfoo-env")


def find_promptfoo() -> Path:
    if os.environ.get("BENCH_PROMPTFOO"):
        return Path(os.environ["BENCH_PROMPTFOO"])
    for prefix in PROMPTFOO_PREFIXES:
        exe = prefix / "node_modules" / ".bin" / "promptfoo"
        if exe.exists():
            return exe
    return PROMPTFOO_PREFIXES[0] / "node_modules" / ".bin" / "promptfoo"


PROMPTFOO = find_promptfoo()
HARNESS = ROOT / ".venv" / "bin" / "harness"
SCENARIOS = ("one", "conc8", "seq")
#: harness / promptfoo and harness / floor at most (issue 26 "Done when"; None: no target)
TARGETS = {"conc8": 0.40, "seq": 0.75, "one": 0.35}
FLOOR_TARGETS = {"conc8": 1.5, "seq": 1.15, "one": None}


def in_loopback_namespace() -> bool:
    return [name for _, name in socket.if_nameindex()] == ["lo"]  # netlink: this namespace's links


def reexec_in_namespace() -> None:
    if shutil.which("unshare") is None:
        sys.exit("bench_speed: needs unshare (util-linux) and root, for a loopback-only network namespace")
    cmd = ["unshare", "-n", "--", "sh", "-c", 'ip link set lo up && exec "$@"', "sh",
           sys.executable, str(Path(__file__).resolve()), *sys.argv[1:]]
    os.execvp(cmd[0], cmd)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(url: str, timeout: float = 10.0) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=1) as resp:
                if resp.status == 200:
                    return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"bench_speed: {url} did not come up")


def timed(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, int, str]:
    """(wall seconds, peak RSS MB, exit code, last output lines) of one command."""
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        tail = out.read().decode("utf-8", "replace")[-600:]
    return wall, usage.ru_maxrss / 1024, proc.returncode, tail


def harness_cmd(scenario: str, out: Path) -> list[str]:
    # the installed script, or this tree's harness (a worktree has no .venv of its own: PYTHONPATH=ROOT)
    exe = [str(HARNESS)] if HARNESS.exists() else [sys.executable, "-m", "harness.cli"]
    cmd = [*exe, "run", "--config", str(SPEED / "harness.toml"), "--layer", "robustness",
           "--quiet", "--no-upload", "--out", str(out)]
    if scenario == "one":
        return cmd + ["--case", "bench-000"]
    return cmd + ["--concurrency", "8" if scenario == "conc8" else "1"]


def overhead_of(results: Path) -> str:
    o = (json.loads(results.read_text(encoding="utf-8")).get("summary") or {}).get("overhead") or {}
    return (f"overhead {o.get('wall_s')} s / {o.get('agent_critical_path_s')} s = {o.get('ratio')}x" if o
            else "no overhead figure")


def floor_cmd(scenario: str, port: int) -> list[str]:
    cmd = [sys.executable, str(SPEED / "floor.py"), "--port", str(port)]
    if scenario == "one":
        return cmd + ["--one"]
    return cmd + ["--concurrency", "8" if scenario == "conc8" else "1"]


def promptfoo_cmd(scenario: str) -> list[str]:
    cmd = [str(PROMPTFOO), "eval", "-c", str(SPEED / "promptfooconfig.yaml"), "--no-cache", "--no-table",
           "--no-progress-bar"]
    if scenario == "one":
        return cmd + ["-n", "1", "-j", "1"]
    return cmd + ["-j", "8" if scenario == "conc8" else "1"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", default=",".join(SCENARIOS))
    ap.add_argument("--json", default=None, help="also write the raw figures here")
    args = ap.parse_args()
    if not in_loopback_namespace():
        if os.environ.get("BENCH_SPEED_NETNS"):
            sys.exit("bench_speed: the namespace still has links other than loopback")
        os.environ["BENCH_SPEED_NETNS"] = "1"
        reexec_in_namespace()
    promptfoo = PROMPTFOO.exists()
    if not promptfoo:
        print(f"bench_speed: promptfoo skipped: {PROMPTFOO} missing "
              "(npm install --prefix bench/promptfoo-env promptfoo@0.121.20); the harness and the floor run", flush=True)
    scenarios = [s for s in args.only.split(",") if s]
    work = Path(tempfile.mkdtemp(prefix="bench-speed-"))
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: bytecode cached after the first run
    if not HARNESS.exists():
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    port = free_port()
    pf_env = {**env, "BENCH_TWIN_PORT": str(port), "PROMPTFOO_DISABLE_TELEMETRY": "1",
              "PROMPTFOO_DISABLE_UPDATE": "1", "PROMPTFOO_CONFIG_DIR": str(work / "promptfoo-home"),
              "NO_COLOR": "1"}
    twin = subprocess.Popen([sys.executable, str(SPEED / "bot.py"), "--http", "--port", str(port)], env=env)
    try:
        wait_ready(f"http://127.0.0.1:{port}/healthz")
        # one warm-up each (bytecode, node's module cache on disk), not counted
        timed(harness_cmd("one", work / "warm"), env, ROOT)
        timed(floor_cmd("one", port), env, ROOT)
        if promptfoo:
            timed(promptfoo_cmd("one"), pf_env, work)
        tools = ("harness", "floor") + (("promptfoo",) if promptfoo else ())
        figures: dict[str, dict[str, list]] = {s: {t: [] for t in tools} for s in scenarios}
        for rep in range(args.repeats):
            for s in scenarios:
                runs = [("harness", harness_cmd(s, work / f"h-{s}-{rep}"), env), ("floor", floor_cmd(s, port), env)]
                if promptfoo:
                    runs.append(("promptfoo", promptfoo_cmd(s), pf_env))
                for tool, cmd, e in runs:
                    wall, rss, code, tail = timed(cmd, e, work if tool == "promptfoo" else ROOT)
                    if code != 0:
                        sys.exit(f"bench_speed: {tool} {s} exited {code}:\n{tail}")
                    figures[s][tool].append((wall, rss))
                    said = ""
                    if tool == "harness":  # the run's own figure of its overhead (results.json summary.overhead)
                        said = "".join(f", {overhead_of(p)}" for p in (work / f"h-{s}-{rep}").glob("*/results.json"))
                    print(f"  {s} {tool} #{rep + 1}: {wall:.2f}s, {rss:.0f} MB{said}", flush=True)
    finally:
        twin.terminate()
        twin.wait()
    print(f"\nload average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("\n| scenario | harness s (median of %d) | floor s | harness / floor | promptfoo s | harness / promptfoo "
          "| harness MB | floor MB | promptfoo MB |" % args.repeats)
    print("|---|---|---|---|---|---|---|---|---|")
    summary = {}

    def verdict(ratio: float, target: float | None) -> str:
        return f"{ratio:.2f}" + (f" (<= {target} {'ok' if ratio <= target else 'MISSED'})" if target else "")

    for s in scenarios:
        med = {t: statistics.median(w for w, _ in figures[s][t]) for t in figures[s]}
        mb = {t: max(m for _, m in figures[s][t]) for t in figures[s]}
        h, f = med["harness"], med["floor"]
        summary[s] = {"harness_s": h, "floor_s": f, "floor_ratio": h / f, "harness_mb": mb["harness"],
                      "floor_mb": mb["floor"], "raw": figures[s]}
        pf = pf_ratio = "skipped"
        if promptfoo:
            p = med["promptfoo"]
            summary[s].update(promptfoo_s=p, ratio=h / p, promptfoo_mb=mb["promptfoo"])
            pf, pf_ratio = f"{p:.2f}", verdict(h / p, TARGETS[s])
        print(f"| {s} | {h:.2f} | {f:.2f} | {verdict(h / f, FLOOR_TARGETS[s])} | {pf} | {pf_ratio} "
              f"| {mb['harness']:.0f} | {mb['floor']:.0f} | {mb['promptfoo']:.0f} |" if promptfoo else
              f"| {s} | {h:.2f} | {f:.2f} | {verdict(h / f, FLOOR_TARGETS[s])} | {pf} | {pf_ratio} "
              f"| {mb['harness']:.0f} | {mb['floor']:.0f} | skipped |")
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=1), encoding="utf-8")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
