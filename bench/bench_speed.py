"""Benchmark: the harness against promptfoo and the floor, side by side, on the same 131 cases and replies.

    .venv/bin/python bench/bench_speed.py [--repeats 3] [--only one,conc8,seq] [--json out.json] [--settle-s S]
    (in a worktree without its own .venv: PYTHONPATH=$PWD /work/main/.venv/bin/python bench/bench_speed.py)

Three clients, one run, the same 131 questions and the same check (the answer contains the
question's last word; one reply), against one bot (bench/speed/bot.py, answers 50 ms after a
message):

- the harness drives the bot's Telegram face (``harness run --config bench/speed/harness.toml``:
  the bot started and stopped by the harness, so its start-up is on the harness's clock; its
  replies come through the harness's Bot API emulator);
- promptfoo 0.121.20 drives the bot's HTTP twin (``POST /chat``, started once by this script)
  with its ``http`` provider;
- the floor (bench/speed/floor.py, ~40 lines of stdlib ``http.client``) sends the same requests
  to the same twin and checks the same thing, with nothing else: what any tool must cost at least.

bench/speed/make_cases.py writes the harness's and promptfoo's case files from one list; the
floor reads that list. That all three saw the very same replies is checked, not assumed: the
digest of the (question, reply) pairs of every harness run (its results.json), of every floor
run (its last line) and of one untimed promptfoo run (``-o``) must equal the digest of
``bot.answer`` over the questions, or the bench stops.

Each scenario runs ``--repeats`` times per tool, tools interleaved (harness, floor, promptfoo),
after one untimed warm-up each; the medians are compared with issue 26's targets. Wall time is
from the command's start to its exit; peak memory is the command's own maximum resident set
(``wait4``), its CPU the user + system time of the command and of the children it waited for
(the harness's includes its bot's: the harness starts and stops it; the floor's and promptfoo's
include what the HTTP twin used during their run, from /proc), medians. The load average is printed at the start, before every round and at the end, with the
commit measured.

The harness listens after a reply, the floor and promptfoo do not: a turn's quiet window ends
early on evidence that the bot is idle, but the run's last one is ``[sandbox] settle_s`` (0.6 s in
bench/speed/harness.toml, as in the project's; the schema's default is 1.0), heard out after the
last reply whatever the evidence says (a reply sent on a timer). ``--settle-s S`` runs the harness
with another settle_s (a copy of the config in the bench's temporary folder), to tell that wait
from the harness's own costs; the table's line above it says which one was measured.

Offline: the script re-runs itself inside a fresh network namespace that has only loopback
(``unshare -n``; root). promptfoo gets PROMPTFOO_DISABLE_TELEMETRY, _UPDATE, _REMOTE_GENERATION,
_SHARING; even so it POSTs a "telemetry disabled" event to r.promptfoo.app (0.121.20,
``Telemetry.recordTelemetryDisabled``), so its HTTP(S)_PROXY also points at a closed loopback
port (NO_PROXY=127.0.0.1 for the twin): the event dies on loopback, without even a DNS query
(checked with ``strace -f -e trace=connect``: its only connections are 127.0.0.1).

Install promptfoo (Node >= 20; not needed by .ci/run or the tests, which never look for it):

    npm install --prefix ~/.cache/harness-bench/promptfoo promptfoo@0.121.20

The bench looks for ``$BENCH_PROMPTFOO`` (the executable), then that prefix's
``node_modules/.bin/promptfoo``, then ``bench/promptfoo-env`` (older sessions' place). Without
it the harness and the floor still run and the table says promptfoo was skipped.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPEED = ROOT / "bench" / "speed"
#: where promptfoo 0.121.20 is looked for: $BENCH_PROMPTFOO (the executable), else the npm prefix
#: ~/.cache/harness-bench/promptfoo, else bench/promptfoo-env (older sessions' place)
PROMPTFOO_PREFIXES = (Path.home() / ".cache" / "harness-bench" / "promptfoo", ROOT / "bench" / "promptfoo-env")
HARNESS = ROOT / ".venv" / "bin" / "harness"
SCENARIOS = ("one", "conc8", "seq")
LABELS = {"one": "one case", "conc8": "131 cases, concurrency 8", "seq": "131 cases, sequential"}
#: harness / promptfoo and harness / floor at most (issue 26 "Done when"; None: no target)
TARGETS = {"conc8": 0.40, "seq": 0.75, "one": 0.35}
FLOOR_TARGETS = {"conc8": 1.5, "seq": 1.15, "one": None}


def find_promptfoo() -> Path:
    if os.environ.get("BENCH_PROMPTFOO"):
        return Path(os.environ["BENCH_PROMPTFOO"])
    for prefix in PROMPTFOO_PREFIXES:
        exe = prefix / "node_modules" / ".bin" / "promptfoo"
        if exe.exists():
            return exe
    return PROMPTFOO_PREFIXES[0] / "node_modules" / ".bin" / "promptfoo"


PROMPTFOO = find_promptfoo()


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


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def commit() -> str:
    try:
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return head + (" (with uncommitted changes)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def digest(pairs: dict[str, str]) -> str:
    """The same digest floor.py prints: sha256 of the sorted question<TAB>reply lines, 16 hex digits."""
    text = "".join(f"{q}\t{a}\n" for q, a in sorted(pairs.items()))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


EXPECTED: dict[bool, str] = {}
"""The digest of bot.answer over the questions (all of them, or only the first: True)."""


def expected_digests() -> None:
    """bench/speed/bot.py's answers, the one function behind both faces, computed in a child
    process: importing bot.py here (aiohttp) would grow this process, and every command it
    forks starts as a copy of it (their peak RSS would count it)."""
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); from bot import answer; "
            "from make_cases import questions; print(json.dumps([(q, answer(q)) for _, q in questions()]))")
    pairs = json.loads(subprocess.run([sys.executable, "-c", code, str(SPEED)], capture_output=True, text=True,
                                      check=True).stdout)
    EXPECTED.update({False: digest(dict(pairs)), True: digest(dict(pairs[:1]))})


def harness_digest(out: Path) -> str:
    (results,) = out.glob("*/results.json")
    pairs = {}
    for case in json.loads(results.read_text(encoding="utf-8"))["cases"]:
        for turn in case["turns"]:
            pairs[turn["sent"]] = "\n".join(r["text"] for r in turn["replies"])
    return digest(pairs)


def promptfoo_digest(path: Path) -> str:
    rows = json.loads(path.read_text(encoding="utf-8"))["results"]["results"]
    return digest({r["vars"]["q"]: (r.get("response") or {}).get("output") for r in rows})


def cpu_of(pid: int) -> float:
    """User + system seconds a running process has used so far (``/proc/PID/stat``)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, float, int, str]:
    """(wall seconds, peak RSS MB, CPU seconds, exit code, output) of one command; its CPU is
    user + system of the command and the children it waited for (the harness's: its bot)."""
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
    return wall, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime, proc.returncode, text


HARNESS_CONFIG = SPEED / "harness.toml"


def settle_config(settle_s: float, work: Path) -> Path:
    """bench/speed/harness.toml with another ``[sandbox] settle_s`` (``--settle-s``), written into
    ``work``: the target's folder made absolute, the cases read from bench/speed/fixtures."""
    text = (SPEED / "harness.toml").read_text(encoding="utf-8")
    text, cwd = re.subn(r'(?m)^cwd = ".*"$', f"cwd = {json.dumps(str(SPEED))}", text)
    text, settle = re.subn(r"(?m)^settle_s = [0-9.]+", f"settle_s = {settle_s}", text)
    if (cwd, settle) != (1, 1):
        sys.exit("bench_speed: bench/speed/harness.toml has no single cwd and settle_s line to set")
    path = work / "harness.toml"
    path.write_text(text, encoding="utf-8")
    return path


def harness_cmd(scenario: str, out: Path) -> list[str]:
    # the installed script, or this tree's harness (a worktree has no .venv of its own: PYTHONPATH=ROOT)
    exe = [str(HARNESS)] if HARNESS.exists() else [sys.executable, "-m", "harness.cli"]
    cmd = [*exe, "run", "--config", str(HARNESS_CONFIG), "--fixtures", str(SPEED / "fixtures"), "--layer", "robustness",
           "--quiet", "--no-upload", "--out", str(out)]
    if scenario == "one":
        return cmd + ["--case", "bench-000"]
    return cmd + ["--concurrency", "8" if scenario == "conc8" else "1"]


def overhead_of(out: Path) -> str:
    said = []
    for results in out.glob("*/results.json"):  # the run's own figure (results.json summary.overhead)
        o = (json.loads(results.read_text(encoding="utf-8")).get("summary") or {}).get("overhead") or {}
        said.append(f"overhead {o.get('wall_s')} s / {o.get('agent_critical_path_s')} s = {o.get('ratio')}x"
                    if o else "no overhead figure")
    return ", ".join(said)


def floor_cmd(scenario: str, port: int) -> list[str]:
    cmd = [sys.executable, str(SPEED / "floor.py"), "--port", str(port)]
    if scenario == "one":
        return cmd + ["--one"]
    return cmd + ["--concurrency", "8" if scenario == "conc8" else "1"]


def promptfoo_cmd(scenario: str, output: Path | None = None) -> list[str]:
    cmd = [str(PROMPTFOO), "eval", "-c", str(SPEED / "promptfooconfig.yaml"), "--no-cache", "--no-table",
           "--no-progress-bar"]
    if output is not None:
        cmd += ["-o", str(output)]
    if scenario == "one":
        return cmd + ["-n", "1", "-j", "1"]
    return cmd + ["-j", "8" if scenario == "conc8" else "1"]


def promptfoo_env(env: dict[str, str], port: int, work: Path) -> dict[str, str]:
    dead = f"http://127.0.0.1:{free_port()}"  # nothing listens there: a request to the internet ends on loopback
    return {**env, "BENCH_TWIN_PORT": str(port), "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1",
            "PROMPTFOO_DISABLE_REMOTE_GENERATION": "1", "PROMPTFOO_DISABLE_REDTEAM_REMOTE_GENERATION": "1",
            "PROMPTFOO_DISABLE_SHARING": "1", "HTTPS_PROXY": dead, "HTTP_PROXY": dead, "https_proxy": dead,
            "http_proxy": dead, "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
            "PROMPTFOO_CONFIG_DIR": str(work / "promptfoo-home"), "NO_COLOR": "1"}


def check_replies(tool: str, scenario: str, got: str) -> None:
    want = EXPECTED[scenario == "one"]
    if got != want:
        sys.exit(f"bench_speed: {tool} {scenario} saw other replies than the bot's answers (digest {got}, want {want})")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", default=",".join(SCENARIOS))
    ap.add_argument("--json", default=None, help="also write the raw figures here")
    ap.add_argument("--settle-s", type=float, default=None, metavar="S",
                    help="the harness's [sandbox] settle_s (default: bench/speed/harness.toml's 0.6, the project's). "
                         "With idle evidence the run's last quiet window is settle_s: it listens that long after "
                         "the last reply; the floor and promptfoo listen for no reply after the answer")
    args = ap.parse_args()
    if not in_loopback_namespace():
        if os.environ.get("BENCH_SPEED_NETNS"):
            sys.exit("bench_speed: the namespace still has links other than loopback")
        os.environ["BENCH_SPEED_NETNS"] = "1"
        reexec_in_namespace()
    started = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    load_start = load()
    measured = commit()
    print(f"bench_speed: {started}, commit {measured}, load average {load_start}", flush=True)
    promptfoo = PROMPTFOO.exists()
    if not promptfoo:
        print(f"bench_speed: promptfoo skipped: {PROMPTFOO} missing "
              "(npm install --prefix ~/.cache/harness-bench/promptfoo promptfoo@0.121.20); the harness and the floor run",
              flush=True)
    scenarios = [s for s in args.only.split(",") if s]
    expected_digests()
    work = Path(tempfile.mkdtemp(prefix="bench-speed-"))
    global HARNESS_CONFIG
    if args.settle_s is not None:
        HARNESS_CONFIG = settle_config(args.settle_s, work)
    settle = re.search(r"(?m)^settle_s = ([0-9.]+)", HARNESS_CONFIG.read_text(encoding="utf-8"))
    print(f"bench_speed: the harness's settle_s {settle.group(1) if settle else '?'} ({HARNESS_CONFIG})", flush=True)
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: bytecode cached after the first run
    if not HARNESS.exists():
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    port = free_port()
    pf_env = promptfoo_env(env, port, work)
    twin = subprocess.Popen([sys.executable, str(SPEED / "bot.py"), "--http", "--port", str(port)], env=env)
    tools = ("harness", "floor") + (("promptfoo",) if promptfoo else ())
    figures: dict[str, dict[str, list]] = {s: {t: [] for t in tools} for s in scenarios}
    try:
        wait_ready(f"http://127.0.0.1:{port}/healthz")
        # one warm-up each (bytecode, node's module cache on disk), not counted; promptfoo's is the
        # whole suite with its outputs written, to check its replies (its timed runs write none)
        timed(harness_cmd("one", work / "warm"), env, ROOT)
        timed(floor_cmd("one", port), env, ROOT)
        if promptfoo:
            wall, _, _, code, text = timed(promptfoo_cmd("conc8", work / "pf-check.json"), pf_env, work)
            if code != 0:
                sys.exit(f"bench_speed: promptfoo's check run exited {code}:\n{text[-600:]}")
            check_replies("promptfoo", "conc8", promptfoo_digest(work / "pf-check.json"))
            print(f"  promptfoo check run (untimed, -o): replies as the bot's ({wall:.2f}s)", flush=True)
        for rep in range(args.repeats):
            print(f"round {rep + 1}: load average {load()}", flush=True)
            for s in scenarios:
                runs = [("harness", harness_cmd(s, work / f"h-{s}-{rep}"), env), ("floor", floor_cmd(s, port), env)]
                if promptfoo:
                    runs.append(("promptfoo", promptfoo_cmd(s), pf_env))
                for tool, cmd, e in runs:
                    twin_before = cpu_of(twin.pid)
                    wall, rss, cpu, code, text = timed(cmd, e, work if tool == "promptfoo" else ROOT)
                    if tool != "harness":  # the twin served this run: its CPU is the run's, as the bot's is the harness's
                        cpu += cpu_of(twin.pid) - twin_before
                    if code != 0:
                        sys.exit(f"bench_speed: {tool} {s} exited {code}:\n{text[-600:]}")
                    said = ""
                    if tool == "harness":
                        check_replies(tool, s, harness_digest(work / f"h-{s}-{rep}"))
                        said = ", " + overhead_of(work / f"h-{s}-{rep}")
                    elif tool == "floor":
                        m = re.search(r"replies ([0-9a-f]{16})", text)
                        check_replies(tool, s, m.group(1) if m else "none")
                    figures[s][tool].append((wall, rss, cpu))
                    print(f"  {s} {tool} #{rep + 1}: {wall:.2f}s, {rss:.0f} MB, CPU {cpu:.2f}s{said}", flush=True)
    finally:
        twin.terminate()
        twin.wait()
    load_end = load()
    print(f"\nbench_speed: {started}, commit {measured}; load average at the start {load_start}, at the end {load_end}")
    print(f"replies: every run's (question, reply) pairs equal bot.answer's ({', '.join(tools)})\n")
    print(f"| scenario (medians of {args.repeats}) | harness s | floor s | promptfoo s | harness / floor | target "
          "| harness / promptfoo | target | peak MB harness / floor / promptfoo | CPU s harness / floor / promptfoo (each with its bot) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    summary: dict = {"started": started, "commit": measured, "load_start": load_start, "load_end": load_end,
                     "settle_s": float(settle.group(1)) if settle else None}

    def cell(tool: str, s: str) -> str:
        walls = [w for w, _, _ in figures[s][tool]]
        return f"{statistics.median(walls):.2f} ({', '.join(f'{w:.2f}' for w in walls)})"

    def verdict(ratio: float, target: float | None) -> tuple[str, str]:
        if target is None:
            return f"{ratio:.2f}", "-"
        return (f"{ratio:.2f}" if ratio <= target else f"**{ratio:.2f}**"), \
            f"<= {target} {'met' if ratio <= target else '**missed**'}"

    for s in scenarios:
        med = {t: statistics.median(w for w, _, _ in figures[s][t]) for t in figures[s]}
        mb = {t: max(m for _, m, _ in figures[s][t]) for t in figures[s]}
        cpu = {t: statistics.median(c for _, _, c in figures[s][t]) for t in figures[s]}
        h, f = med["harness"], med["floor"]
        summary[s] = {"harness_s": h, "floor_s": f, "floor_ratio": h / f, "harness_mb": mb["harness"],
                      "floor_mb": mb["floor"], "raw": figures[s]}
        fl, fl_t = verdict(h / f, FLOOR_TARGETS[s])
        pf, pf_r, pf_t, pf_mb, pf_cpu = "skipped", "skipped", "-", "skipped", "skipped"
        if promptfoo:
            p = med["promptfoo"]
            summary[s].update(promptfoo_s=p, ratio=h / p, promptfoo_mb=mb["promptfoo"])
            pf, (pf_r, pf_t), pf_mb = cell("promptfoo", s), verdict(h / p, TARGETS[s]), f"{mb['promptfoo']:.0f}"
            pf_cpu = f"{cpu['promptfoo']:.2f}"
        print(f"| {LABELS.get(s, s)} | {cell('harness', s)} | {cell('floor', s)} | {pf} | {fl} | {fl_t} | {pf_r} "
              f"| {pf_t} | {mb['harness']:.0f} / {mb['floor']:.0f} / {pf_mb} "
              f"| {cpu['harness']:.2f} / {cpu['floor']:.2f} / {pf_cpu} |")
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=1), encoding="utf-8")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
