"""Small hand-built RunReports covering every status the writers must render."""

from __future__ import annotations

import pytest

from harness.types import (
    SOURCE_DOUBLE,
    CaseResult,
    Counts,
    Event,
    Evidence,
    Observation,
    Reply,
    RunReport,
    Tokens,
    TurnObservation,
)

XSS = "<script>alert(1)</script>"
T0 = 1_700_000_000.0


def ev(check: str, passed: bool | None, *, availability: str = "ready", reason: str = "", turn: int | None = 0,
       score: float | None = None, expected: str = "", observed: str = "", source: str = "real") -> Evidence:
    return Evidence(check=check, turn=turn, availability=availability, passed=passed, score=score,
                    expected=expected, observed=observed, reason=reason, evaluator=f"{check}@1", source=source)


def observation(case_id: str, reply_text: str, *, state=None) -> Observation:
    """One turn: the driver delivers 'summarize ...', the agent calls the LLM and replies."""
    reply = Reply(channel="telegram", chat="1001", text=reply_text, at=T0 + 0.82, method="sendMessage",
                  buttons=("OK",), raw={"token": "secret-bot-token"})
    events = (
        Event(source="driver", name="update", at=T0, status=200,
              request={"update_id": 1, "message": {"chat": {"id": 1001}, "text": "summarize {docs}/a.pdf"}}),
        Event(source="gateway", name="llm", at=T0 + 0.1, status=200, duration_ms=512.0,
              request={"api_key": "sk-secret"}, meta={"model": "offline"}),
        Event(source="telegram", name="telegram.sendMessage", at=T0 + 0.82, status=200, reply=reply),
    )
    turn = TurnObservation(index=0, sent_at=T0, delivery_status=200, delivery_error="", replies=(reply,),
                           events=events, settled_after_s=1.5, state=state)
    return Observation(case_id=case_id, channel="telegram", chat_id="1001", turns=(turn,),
                       started_at=T0 - 0.1, finished_at=T0 + 1.9)


def cases() -> tuple[CaseResult, ...]:
    return (
        CaseResult(id="url-ok", layer="robustness", channel="telegram", status="pass",
                   evidence=(ev("reply.regex", True, reason="matched"),), passes=1, latency_ms=820.0,
                   llm_calls=1, tokens=Tokens(120, 40), cost_usd=0.0012, file="fixtures/robustness/url.yaml",
                   tags=("url", XSS), observation=observation("url-ok", f"Summary {XSS}", state={"task": XSS})),
        CaseResult(id="url-malformed-scheme", layer="robustness", channel="telegram", status="fail",
                   evidence=(ev("reply.not_contains", True),
                             ev("reply.regex", False, reason="no match for (?i)invalid.*url",
                                expected="(?i)invalid.*url", observed="Traceback: boom"),
                             ev("tools_not_called", False, turn=None, reason="fetch_document was called",
                                expected="not fetch_document", observed="fetch_document x1")),
                   latency_ms=1200.0, observation=observation("url-malformed-scheme", "Traceback: boom")),
        CaseResult(id="summary-faithful", layer="reasoning", channel="whatsapp", status="soft",
                   evidence=(ev("similarity", True, score=0.71, reason="similarity 0.71 in soft band",
                                source=SOURCE_DOUBLE),), passes=1, latency_ms=2400.0),
        CaseResult(id="critic-facts", layer="reasoning", channel="telegram", status="unavailable",
                   evidence=(ev("critic", None, availability="unavailable", reason="critic backend down"),)),
        CaseResult(id="cancel-mid-task", layer="multiturn", channel="whatsapp", status="error",
                   evidence=(), error="timeout after 30s waiting for turn 1"),
        CaseResult(id="cost-golden", layer="cost", channel="telegram", status="unavailable",
                   evidence=(ev("cost_usd", None, availability="unavailable", reason="price table missing"),)),
    )


def make_report(cases_: tuple[CaseResult, ...] | None = None, **overrides) -> RunReport:
    cs = cases() if cases_ is None else cases_
    fields = dict(
        run_id="20240101-020000-abcd", started_at="2024-01-01T02:00:00Z", finished_at="2024-01-01T02:05:00Z",
        harness_version="0.1.0", target={"name": "docbot", "version": "1.2"}, golden_version="g7",
        models={"embedder": "all-MiniLM-L6-v2", "critic": "offline"},
        summary=Counts(planned=7, executed=6, decidable=4, passed=1, soft=1, failed=1, errored=1,
                       unavailable=2, skipped=1, cost_usd=0.0012, verdict="fail"),
        layers={
            "robustness": Counts(planned=2, executed=2, decidable=2, passed=1, failed=1, cost_usd=0.0012,
                                 verdict="fail"),
            "reasoning": Counts(planned=2, executed=2, decidable=1, soft=1, unavailable=1),
            "multiturn": Counts(planned=2, executed=1, decidable=1, errored=1, skipped=1, verdict="fail"),
            "cost": Counts(planned=1, executed=1, decidable=0, unavailable=1),
        },
        cases=cs, exit_code=1, notes=(f"unattributed call: POST /sendMessage {XSS}",),
    )
    fields.update(overrides)
    return RunReport(**fields)


@pytest.fixture
def report() -> RunReport:
    return make_report()


@pytest.fixture
def build_report():
    """``build_report(cases=None, **RunReport fields)``: a variant of the standard report."""
    return make_report


@pytest.fixture
def evidence():
    """``evidence(check, passed, **fields)``: one Evidence item."""
    return ev


@pytest.fixture
def xss() -> str:
    """The untrusted string planted in replies, tags, state and notes."""
    return XSS
