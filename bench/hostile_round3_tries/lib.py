"""Try runner for hostileA: each try builds a project, runs the real CLI in a child, judges the outcome."""
import json, os, re, shutil, subprocess, sys, textwrap, time
from pathlib import Path
WT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(WT)); sys.path.insert(0, str(WT / "tests/ops"))
from ops_support import make_project, echo_cases, write_config  # noqa
PY = sys.executable
BASE = Path(os.environ.get("HOSTILE_TRIES_DIR", "/tmp/hostile-tries"))
ROWS = []

def cli(args, cwd, env=None, timeout=120, stdin=None):
    e = {**os.environ, "PYTHONPATH": str(WT), **(env or {})}
    t0 = time.time()
    try:
        p = subprocess.run([PY, "-m", "harness.cli", *map(str, args)], cwd=cwd, capture_output=True, text=True,
                           timeout=timeout, env=e, errors="replace", stdin=subprocess.DEVNULL)
        return p.returncode, p.stdout, p.stderr, time.time() - t0
    except subprocess.TimeoutExpired as exc:
        return "HANG", str(exc.stdout or ""), str(exc.stderr or ""), timeout

def project(name, cases=None, extra="", mode=""):
    d = BASE / name
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    make_project(d, cases=cases, extra=extra, mode=mode)
    return d

def bad(code, out, err, expect, says):
    why = []
    both = out + err
    if code == "HANG": why.append("hang")
    if code == 70: why.append("exit 70")
    if "Traceback" in both: why.append("traceback")
    if expect is not None and code not in expect: why.append(f"exit {code} not {expect}")
    if code == 2 and "fix" not in both: why.append("no fix")
    for s in ([says] if isinstance(says, str) else (says or [])):
        if s not in both: why.append(f"missing {s!r}")
    return why

def judge(name, input_desc, expected_desc, code, out, err, expect=(2,), says=None, extra_why=()):
    why = bad(code, out, err, expect, says) + list(extra_why)
    ROWS.append(dict(name=name, input=input_desc, expected=expected_desc, code=code, why=why,
                     err=(err.strip().splitlines() or [""])[-1][:300] if code != 0 else (out.strip().splitlines() or [""])[-1][:200],
                     full=(out + err)[-3000:]))
    print(("WRONG " if why else "ok    ") + f"{name}: exit {code} {why} | {ROWS[-1]['err'][:200]}", flush=True)

def check_run(name, d, input_desc, expected_desc, expect=(2,), says=None, env=None, args=(), run=True):
    """check and run on project d; both must give an expected code and agree."""
    cfg = d / "harness.toml"
    c1 = cli(["check", "--config", cfg, *[a for a in args if a != "--no-upload"]], d, env)
    extra = []
    if run:
        c2 = cli(["run", "--config", cfg, "--quiet", "--out", d / "reports", *args], d, env)
        if (c1[0] == 2) != (c2[0] == 2):
            extra.append(f"check {c1[0]} vs run {c2[0]}")
        judge(name + " [run]", input_desc, expected_desc, c2[0], c2[1], c2[2], expect, says, extra)
    judge(name + " [check]", input_desc, expected_desc, c1[0], c1[1], c1[2],
          tuple(sorted({0 if c in (1, 3) else c for c in expect})), says if c1[0] == 2 else None)
    return c1

def dump(path):
    Path(path).write_text(json.dumps(ROWS, indent=1))
