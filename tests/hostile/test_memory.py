"""Bounded memory under floods: per turn the router stores at most so many replies, bytes and
events, counts the rest, and the evidence and results.json say so. (The 300 MB figure for
6,000 replies of 4,000 characters is measured by bench/bench_memory.py, bench/RESULTS.md.)"""

from __future__ import annotations

import json
import time

from harness.sandbox import router as router_mod
from harness.sandbox.router import CaseRecorder
from harness.types import Event, Reply
from tests.hostile._project import bot_config, harness_cli, write_cases


def reply_event(i: int, text: str, chat: str = "7") -> Event:
    return Event(source="telegram", name="telegram.sendMessage", at=time.time(), status=200, keys=(f"tg:{chat}",),
                 reply=Reply(channel="telegram", chat=chat, text=text, at=time.time(), method="sendMessage",
                             message_id=str(i)))


def test_the_recorder_stores_up_to_the_caps_and_counts_the_rest():
    rec = CaseRecorder("c", ["tg:7"])
    n = router_mod.MAX_REPLIES_PER_TURN + 250
    for i in range(n):
        rec.add(reply_event(i, "x" * 100))
    assert len(rec.of_turn(0)) == router_mod.MAX_REPLIES_PER_TURN
    over = rec.overflow_of(0)
    assert over["replies"] == 250 and over["reply_bytes"] == 250 * 100 and over["chats"] == {"7": 250}
    assert rec.dropped_replies(0, "7") == 250 and rec.dropped_replies(0, "8") == 0
    rec.turn = 1  # the caps are per turn
    rec.add(reply_event(0, "y"))
    assert len(rec.of_turn(1)) == 1 and rec.overflow_of(1) == {}


def test_the_byte_cap_holds_for_few_long_replies():
    rec = CaseRecorder("c", ["tg:7"])
    big = "z" * (router_mod.MAX_REPLY_BYTES_PER_TURN // 4 + 1)
    for i in range(6):
        rec.add(reply_event(i, big))
    stored = sum(len(e.reply.text) for e in rec.of_turn(0))
    assert stored <= router_mod.MAX_REPLY_BYTES_PER_TURN
    assert rec.overflow_of(0)["replies"] == 6 - len(rec.of_turn(0)) >= 3


def test_a_flooding_agent_is_counted_in_the_evidence_and_results(tmp_path):
    n = router_mod.MAX_REPLIES_PER_TURN + 120
    write_cases(tmp_path, "flood.yaml", f"""
        layer: robustness
        cases:
          - id: flood
            send: "go"
            expect: {{replies: {{min: {n}, max: {n}}}}}
          - id: flood-over-the-max
            send: "go"
            expect: {{replies: {{exact: {router_mod.MAX_REPLIES_PER_TURN}}}}}
        """)
    cfg = bot_config(tmp_path, "flood", name="flood", env={"FLOOD_N": str(n), "FLOOD_CHARS": "1000"}, tables="""
        [sandbox]
        settle_s = 0.5
        reply_timeout_s = 60
        """)
    out = tmp_path / "out"
    done = harness_cli("run", "--config", cfg, "--out", out, "--quiet", "--concurrency", "1", cwd=tmp_path,
                       timeout=240)
    assert "Traceback" not in done.stderr
    results = json.loads(next(out.glob("*/results.json")).read_text())
    by = {c["id"]: c for c in results["cases"]}
    turn = by["flood"]["turns"][0]
    assert len(turn["replies"]) == router_mod.MAX_REPLIES_PER_TURN
    assert turn["overflow"]["replies"] == 120 and turn["overflow"]["max_replies"] == router_mod.MAX_REPLIES_PER_TURN
    count = next(e for e in by["flood"]["evidence"] if e["check"] == "replies")
    assert count["passed"] is True and "120 beyond the harness's cap" in count["reason"]
    over = next(e for e in by["flood-over-the-max"]["evidence"] if e["check"] == "replies")
    assert over["passed"] is False and over["reason"].startswith(f"{n} replies")  # the cap hides no failure
    assert done.returncode == 1
