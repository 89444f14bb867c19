"""`harness run` end to end against the bundled reference agent, as a user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SECRETS = {"HARNESS_BOT_TOKEN": "123456789:SECRET-bot-token-for-the-test",
           "HARNESS_WEBHOOK_SECRET": "SECRET-webhook-secret", "HARNESS_APP_SECRET": "SECRET-app-secret"}
CONTRACT_FILES = ("results.json", "results.jsonl", "junit.xml", "summary.md", "report.html")


def harness(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=300)


def only_run(out: Path) -> Path:
    runs = [p for p in out.iterdir() if p.is_dir()]
    assert len(runs) == 1
    return runs[0]


def test_clean_docbot_passes_and_writes_the_five_files(tmp_path):
    out = tmp_path / "out"
    proc = harness("run", "--layer", "robustness", "--case", "url-*", "--case", "sanity-*", "--case", "wa-*",
                   "--out", str(out), "--quiet", env={"DOCBOT_REGRESSION": "", **SECRETS})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run = only_run(out)
    for name in CONTRACT_FILES:
        assert (run / name).is_file(), name
    results = json.loads((run / "results.json").read_text())
    assert results["schema"] == "harness.results/1"
    assert results["target"]["name"] == "docbot" and results["target"]["version"] != "unknown"
    n = len(results["cases"])
    assert n >= 20 and results["summary"]["passed"] == n
    suite = ET.parse(run / "junit.xml").getroot()
    assert len(suite.findall(".//testcase")) == n
    assert len((run / "results.jsonl").read_text().splitlines()) == n
    written = "".join((run / name).read_text() for name in CONTRACT_FILES)
    for secret in SECRETS.values():
        assert secret not in written  # the sandbox's credentials never reach a report


def test_seeded_regression_is_caught_with_evidence(tmp_path):
    out = tmp_path / "out"
    proc = harness("run", "--layer", "robustness", "--case", "input-empty*", "--out", str(out), "--quiet",
                   env={"DOCBOT_REGRESSION": "crash_on_empty"})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    results = json.loads((only_run(out) / "results.json").read_text())
    failed = [c for c in results["cases"] if c["status"] == "fail"]
    assert failed
    reasons = [e["reason"] for c in failed for e in c["evidence"] if e["passed"] is False]
    assert any("no reply" in r or "0 replies" in r for r in reasons), reasons
    # docbot's traceback is in the target log kept with the run
    assert "Traceback" in (only_run(out) / "target.log").read_text()


def test_target_that_cannot_start_exits_4(tmp_path):
    cfg = tmp_path / "harness.toml"
    cfg.write_text('[target]\nname = "broken"\ncommand = ["python", "-c", "import sys; sys.exit(3)"]\n'
                   'ready_url = "http://127.0.0.1:{port}/healthz"\nport = 0\nready_timeout_s = 5\n'
                   'telegram_webhook = "http://127.0.0.1:{port}/telegram"\n')
    proc = harness("run", "--config", str(cfg), "--fixtures", str(ROOT / "fixtures"), "--layer", "robustness",
                   "--case", "cmd-start", "--out", str(tmp_path / "out"), "--quiet")
    assert proc.returncode == 4, proc.stderr
    assert "exited with code 3" in proc.stderr


def _processes_with_env(fragment: str) -> list[int]:
    pids = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if fragment.encode() in (proc / "environ").read_bytes():
                    pids.append(int(proc.name))
            except OSError:
                continue
    return pids


def test_killed_harness_does_not_leave_the_agent_running(tmp_path):
    import signal
    import time

    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "harness.cli", "run", "--layer", "robustness", "--concurrency", "1",
                             "--out", str(out), "--quiet"], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 60
        while time.time() < deadline and not _processes_with_env(str(out)):
            time.sleep(0.1)
        agents = _processes_with_env(str(out))
        assert agents, "docbot never started"
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        deadline = time.time() + 10
        while time.time() < deadline and _processes_with_env(str(out)):
            time.sleep(0.1)
        assert _processes_with_env(str(out)) == []
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in _processes_with_env(str(out)):
            os.kill(pid, signal.SIGKILL)
