"""Synthetic results.json dicts and run folders for history, diff, baseline and the dashboard."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

XSS = "<script>document.title='pwned';alert(1)</script>"


def case(cid: str, status: str = "pass", *, layer: str = "robustness", latency: float | None = 100.0,
         cost: float | None = 0.001, tokens: tuple[int, int] = (100, 20), similarity: float | None = None,
         reply: str = "ok", quarantined: bool = False) -> dict:
    passed = status in ("pass", "soft")
    evidence = [{"check": "reply.regex", "turn": 0, "availability": "ready", "passed": passed,
                 "score": None, "expected": "ok", "observed": reply,
                 "reason": "matched" if passed else f"no match in {reply}", "evaluator": "regex@1", "source": "real"}]
    if similarity is not None:
        evidence.append({"check": "similarity", "turn": 0, "availability": "ready", "passed": True,
                         "score": similarity, "expected": "golden g1", "observed": "", "reason": "",
                         "evaluator": "minilm@1", "source": "real"})
    d = {"id": cid, "layer": layer, "channel": "telegram", "status": status, "attempts": 1,
         "pass_at_k": None, "pass_hat_k": None, "latency_ms": latency, "llm_calls": 1,
         "tokens": {"input": tokens[0], "output": tokens[1]}, "cost_usd": cost, "evidence": evidence,
         "passes": 1 if status == "pass" else 0, "error": "", "file": "", "tags": [],
         "turns": [{"index": 0, "sent": "hello", "sent_at": 1.0, "delivery_status": 200, "delivery_error": "",
                    "timed_out": False, "replies": [{"text": reply, "at": 1.5, "method": "sendMessage",
                                                     "kind": "text", "buttons": []}],
                    "calls": [{"source": "gateway", "name": "llm", "status": 200, "duration_ms": 50.0,
                               "error": ""}], "state": None}]}
    if quarantined:
        d["quarantined"] = True
    return d


def counts(cases: list[dict]) -> dict:
    by: dict[str, int] = {}
    for c in cases:
        by[c["status"]] = by.get(c["status"], 0) + 1
    dec = by.get("pass", 0) + by.get("soft", 0) + by.get("fail", 0)
    return {"planned": len(cases), "executed": len(cases), "decidable": dec, "passed": by.get("pass", 0),
            "soft": by.get("soft", 0), "failed": by.get("fail", 0), "errored": by.get("error", 0),
            "unavailable": by.get("unavailable", 0), "skipped": 0,
            "cost_usd": round(sum(c["cost_usd"] or 0 for c in cases), 6),
            "verdict": "fail" if by.get("fail") or by.get("error") else "pass"}


def run(run_id: str, cases: list[dict], **over) -> dict:
    layers = {}
    for c in cases:
        layers.setdefault(c["layer"], []).append(c)
    d = {"schema": "harness.results/1", "run_id": run_id, "started_at": f"{run_id[:4]}-01-01T02:00:00+00:00",
         "finished_at": "", "harness_version": "0.1.0", "target": {"name": "docbot", "version": "1.0"},
         "golden_version": "g1", "models": {"embedder": "minilm", "critic": "none"},
         "summary": counts(cases), "layers": {k: counts(v) for k, v in layers.items()}, "cases": cases,
         "notes": [], "exit_code": 0}
    d.update(over)
    return d


def write_run(reports: Path, d: dict) -> Path:
    folder = reports / d["run_id"]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "results.json").write_text(json.dumps(d), encoding="utf-8")
    return folder


@pytest.fixture
def make_case():
    return case


@pytest.fixture
def make_run():
    return run


@pytest.fixture
def save_run():
    return write_run
