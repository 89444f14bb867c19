"""The cost layer end to end: `harness run` against docbot, as a user runs it.

Receivers for the alerts (a webhook on http.server, SMTP on aiosmtpd) run in this process
on loopback; the harness runs as a subprocess.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def harness(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness.cli", "run", "--quiet", *args], cwd=ROOT,
                          capture_output=True, text=True, env={**os.environ, "DOCBOT_REGRESSION": "", **(env or {})},
                          timeout=300)


def runs(out: Path) -> list[dict]:
    return [json.loads((p / "results.json").read_text()) for p in sorted(out.iterdir()) if (p / "results.json").is_file()]


def why(out: Path, proc) -> str:
    """What failed, for the assertion message (the run is --quiet)."""
    lines = [proc.stderr[-2000:]]
    for r in runs(out) if out.is_dir() else []:
        for c in r["cases"]:
            lines += [f"{c['id']}: {e['check']}: {e['reason']}" for e in c["evidence"] if e["passed"] is False]
    return "\n".join(lines)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def webhook():
    posts: list = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            posts.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *a):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/hook", posts
    server.shutdown()


@pytest.fixture
def smtp():
    from aiosmtpd.controller import Controller

    mails: list = []

    class Sink:
        async def handle_DATA(self, server, session, envelope):
            mails.append(envelope.content.decode("utf-8", "replace"))
            return "250 OK"

    port = free_port()
    controller = Controller(Sink(), hostname="127.0.0.1", port=port)
    controller.start()
    yield port, mails
    controller.stop()


def test_clean_cost_layer_passes_and_totals_add_up(tmp_path):
    out = tmp_path / "out"
    proc = harness("--layer", "cost", "--case", "cost-*", "--case", "sanity-paper-*", "--out", str(out))
    assert proc.returncode == 0, why(out, proc)
    (r,) = runs(out)
    cost_cases = [c for c in r["cases"] if c["layer"] == "cost"]
    assert len(cost_cases) == 20 and all(c["status"] == "pass" for c in cost_cases)
    for c in r["cases"]:  # every case: latency, calls, tokens, cost (or unavailable with a reason)
        assert c["latency_ms"] is not None and "perf" in c and c["tokens"]["source"] in ("usage", "none")
        assert c["cost_usd"] is not None or c["cost_reason"]
    total = sum(c["cost_usd"] or 0 for c in r["cases"])
    assert r["summary"]["cost_usd"] == pytest.approx(total, abs=1e-6) and total > 0
    for name, layer in r["layers"].items():
        assert layer["cost_usd"] == pytest.approx(sum(c["cost_usd"] or 0 for c in r["cases"] if c["layer"] == name),
                                                  abs=1e-6)
        assert layer["latency"]["first_reply_ms"]["p50"] is not None
    assert r["summary"]["llm_calls"] == sum(c["llm_calls"] for c in r["cases"])
    assert r["summary"]["simulated"] is True and "harness_cost_usd" in r["summary"]
    summary_md = next(out.iterdir()).joinpath("summary.md").read_text()
    assert "SIMULATED" in summary_md and "Cost and performance" in summary_md


def test_budget_below_the_run_cost_exits_3_starts_fewer_cases_and_alerts(tmp_path, webhook, smtp):
    url, posts = webhook
    port, mails = smtp
    out = tmp_path / "out"
    proc = harness("--layer", "cost", "--budget-usd", "0.005", "--concurrency", "1", "--out", str(out),
                   env={"HARNESS_ALERTS_WEBHOOK_URL": url, "HARNESS_ALERTS_SMTP_HOST": "127.0.0.1",
                        "HARNESS_ALERTS_SMTP_PORT": str(port), "HARNESS_ALERTS_SMTP_STARTTLS": "false",
                        "HARNESS_ALERTS_SMTP_TO": '["oncall@example.org"]', "HARNESS_ALERTS_BACKOFF_S": "0.1"})
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "COST BUDGET EXCEEDED" in proc.stderr and "spent by: cost-" in proc.stderr
    (r,) = runs(out)
    s = r["summary"]
    assert s["executed"] < s["planned"] == 20 and s["skipped"] == s["planned"] - s["executed"]
    skipped = [c for c in r["cases"] if c["status"] == "skipped"]
    assert skipped and all("not started: projected run cost" in c["error"] for c in skipped)
    assert s["budget"]["breached"] and s["budget"]["spent_by"]
    assert any("cost budget exceeded" in n for n in r["notes"])
    assert any("alert budget via webhook: sent" in n for n in r["notes"])
    summary_md = (out / r["run_id"] / "summary.md").read_text()
    assert "EXCEEDED" in summary_md
    assert any("cost budget exceeded" in p["text"] and "report.html" in p["text"] for p in posts)
    assert any("cost budget exceeded" in m and "oncall@example.org" in m for m in mails)


def test_record_then_replay_runs_without_upstream_spend_and_reports_it(tmp_path):
    cassette = tmp_path / "cassettes" / "paper.jsonl"
    sel = ("--case", "cost-interaction-paper-*")
    rec = harness(*sel, "--out", str(tmp_path / "rec"),
                  env={"HARNESS_SANDBOX_LLM_MODE": "record", "HARNESS_SANDBOX_CASSETTE": str(cassette)})
    assert rec.returncode == 0, rec.stdout + rec.stderr
    assert len(cassette.read_text().splitlines()) == 2  # same request on both channels: one recording each call
    rep = harness(*sel, "--out", str(tmp_path / "rep"),
                  env={"HARNESS_SANDBOX_LLM_MODE": "replay", "HARNESS_SANDBOX_CASSETTE": str(cassette),
                       "HARNESS_SANDBOX_LLM_UPSTREAM": "http://127.0.0.1:9/nothing-here"})
    assert rep.returncode == 0, rep.stdout + rep.stderr
    (r,) = runs(tmp_path / "rep")
    assert r["summary"]["replayed_cases"] == 2 and all(c["replayed"] for c in r["cases"])
    assert r["summary"]["cost_usd"] == 0 and all(c["tokens"]["input"] > 0 for c in r["cases"])
    # a changed prompt misses the cassette: a 502 the agent sees, recorded as such
    miss = harness(*sel, "--out", str(tmp_path / "miss"),
                   env={"HARNESS_SANDBOX_LLM_MODE": "replay", "HARNESS_SANDBOX_CASSETTE": str(cassette),
                        "DOCBOT_REGRESSION": "prompt_sent_twice"})
    assert miss.returncode == 1
    (m,) = runs(tmp_path / "miss")
    assert m["summary"]["replay_misses"] >= 2


def test_anomaly_against_history_fails_a_case_under_its_absolute_threshold(tmp_path):
    out = tmp_path / "out"
    # one case, recorded as a nightly run on purpose: only nightly runs are anomaly history (issue 25)
    sel = ("--layer", "cost", "--case", "cost-interaction-long-report", "--kind", "nightly", "--out", str(out))
    one_night = {"HARNESS_BUDGET_ANOMALY_MIN_RUNS": "1"}  # the default wants 5 earlier nights (test_anomaly_nights)
    assert harness(*sel, env=one_night).returncode == 0
    proc = harness(*sel, env={"DOCBOT_REGRESSION": "summary_loop", **one_night})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    latest = runs(out)[-1]
    (case,) = latest["cases"]
    failed = {e["check"]: e for e in case["evidence"] if e["passed"] is False}
    assert "cost_usd" not in failed  # the absolute $0.03 still holds...
    assert {"anomaly.tokens", "anomaly.llm_calls"} <= set(failed)  # ...but it jumped against history
    assert "baseline" in failed["anomaly.llm_calls"]["reason"] and "x" in failed["anomaly.llm_calls"]["expected"]
