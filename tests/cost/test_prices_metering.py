"""Prices, per-call metering at the gateway, and the case metrics that add them up."""

from __future__ import annotations

import pytest

from harness.run import cost
from harness.models.prices import load_prices, parse_prices
from harness.sandbox.metering import Meter, is_simulated
from harness.types import Event, Observation, Reply, TurnObservation


def test_bundled_table_is_versioned_dated_and_covers_the_providers():
    table = load_prices()
    assert table.version == "2026-11"
    providers = {p.provider for p in table.prices.values()}
    assert {"groq", "anthropic", "openai", "oci"} <= providers
    assert all(p.read for p in table.prices.values())
    sonnet = table.lookup("claude-3-sonnet-20240229")
    assert (sonnet.input_per_m, sonnet.output_per_m) == (3.0, 15.0)
    assert table.lookup("groq/llama-3.1-8b-instant").provider == "groq"
    assert table.lookup("gpt-4o-mini").model == "gpt-4o-mini"  # longest prefix, not gpt-4o


def test_cost_arithmetic_and_unknown_model_is_unavailable_not_zero():
    table = load_prices()
    c = table.cost("claude-3-sonnet-20240229", 1_000_000, 100_000)
    assert c.usd == pytest.approx(3.0 + 1.5)
    assert table.cost("test-priced-model", 1000, 500).usd == pytest.approx(0.001 + 0.001 + 0.001)  # per-call fee
    unknown = table.cost("mystery-model-9000", 10, 10)
    assert unknown.usd is None and "no price" in unknown.reason


def test_parse_prices_reads_a_custom_table():
    t = parse_prices({"version": "x1", "providers": {"p": {"models": {"M": {"input_per_m": 1, "output_per_m": 2}}}}},
                     "inline")
    assert t.version == "x1" and t.cost("m", 1_000_000, 0).usd == 1.0


def test_meter_trusts_provider_usage_and_marks_simulated():
    meter = Meter(load_prices(), simulated=True)
    meta = meter.annotate({"input_tokens": 1000, "output_tokens": 100, "tokens_source": "usage"},
                          {"model": "llama-3.1-8b-instant"}, {"usage": {"prompt_tokens": 1000}}, 200)
    assert meta["cost_usd"] == pytest.approx((1000 * 0.05 + 100 * 0.08) / 1e6)
    assert meta["simulated"] is True and meta["estimated"] is False


def test_meter_counts_with_tiktoken_when_usage_is_missing_and_labels_estimates():
    meter = Meter(load_prices())
    body = {"model": "claude-3-sonnet-20240229", "messages": [{"role": "user", "content": "hello world"}]}
    parsed = {"choices": [{"message": {"content": "hello world"}}]}
    meta = meter.annotate({"input_tokens": None, "output_tokens": None, "tokens_source": "missing"}, body, parsed, 200)
    assert (meta["input_tokens"], meta["output_tokens"]) == (9, 2)
    assert meta["tokens_source"] == "tiktoken:cl100k_base" and meta["estimated"] is True
    body["model"] = "gpt-4o"
    meta = meter.annotate({}, body, parsed, 200)
    assert meta["tokens_source"] == "tiktoken:o200k_base" and meta["estimated"] is False


def test_meter_failed_call_is_not_billed_and_unknown_model_is_unpriced():
    meter = Meter(load_prices())
    failed = meter.annotate({}, {"model": "gpt-4o", "messages": []}, None, 500)
    assert failed["cost_usd"] == 0.0 and "not billed" in failed["cost_reason"]
    unknown = meter.annotate({"input_tokens": 5, "output_tokens": 5}, {"model": "who-knows"},
                             {"usage": {"prompt_tokens": 5, "completion_tokens": 5}}, 200)
    assert unknown["cost_usd"] is None and "no price" in unknown["cost_reason"]


@pytest.mark.parametrize("setting,upstream,expected", [
    ("auto", "http://127.0.0.1:8081/offline/v1", True), ("auto", "https://api.groq.com/openai/v1", False),
    (True, "https://api.groq.com/openai/v1", True), (False, "http://localhost:1/v1", False),
])
def test_simulated_setting(setting, upstream, expected):
    assert is_simulated(setting, upstream) is expected


def _obs(*llm_costs, replies=1) -> Observation:
    events = [Event(source="driver", name="deliver.telegram", at=0.0, status=0)]
    events += [Event(source="gateway", name="llm", at=0.1, status=200, duration_ms=50.0 + i,
                     meta={"input_tokens": 100, "output_tokens": 10, "tokens_source": "usage", "cost_usd": c,
                           "cost_reason": "x" if c is not None else "no price for model 'q'"})
               for i, c in enumerate(llm_costs)]
    events.append(Event(source="docs", name="fetch_document", at=0.05, status=404, duration_ms=1.0))
    reps = tuple(Reply(channel="telegram", chat="1", text="hi", at=0.5 + i, method="sendMessage")
                 for i in range(replies))
    events += [Event(source="telegram", name="telegram.sendMessage", at=r.at, status=200, reply=r) for r in reps]
    t = TurnObservation(index=0, sent_at=0.0, delivery_status=200, delivery_error="", replies=reps,
                        events=tuple(events), settled_after_s=1.0)
    return Observation(case_id="c", channel="telegram", chat_id="1", turns=(t,), started_at=0.0, finished_at=2.0)


def test_case_metrics_from_the_sandbox_records():
    m = cost.measure(_obs(0.001, 0.002, replies=2))
    assert (m.llm_calls, m.fetches, m.sends, m.calls, m.errors) == (2, 1, 2, 5, 1)
    assert m.error_rate == pytest.approx(0.2)
    assert m.first_reply_ms == pytest.approx(500) and m.last_reply_ms == pytest.approx(1500)
    assert m.llm_ms == (50.0, 51.0) and (m.tokens_input, m.tokens_output) == (200, 20)
    assert m.cost_usd == pytest.approx(0.003)


def test_one_unpriced_call_makes_the_case_cost_unavailable_with_a_reason():
    m = cost.measure(_obs(0.001, None))
    assert m.cost_usd is None and "unpriced" in m.cost_reason and "no price" in m.cost_reason


def test_repeats_sum_spend_over_attempts():
    a, b = cost.measure(_obs(0.001)), cost.measure(_obs(0.002))
    both = cost.combine([a, b])
    assert both.cost_usd == pytest.approx(0.003) and both.llm_calls == 2


def test_harness_spend_is_kept_apart_and_priced():
    cost.HARNESS_SPEND.reset()
    cost.record_harness_spend("gpt-4o-mini", 1_000_000, 0, case_id="x")
    cost.record_harness_spend("unknown-judge", 10, 10)
    usd, unpriced = cost.HARNESS_SPEND.total()
    assert usd == pytest.approx(0.15) and unpriced == 1
    cost.HARNESS_SPEND.reset()


def test_percentiles_nearest_rank():
    assert cost.percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 50) == 5
    assert cost.percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 95) == 10
    assert cost.percentile([], 50) is None
