"""harness.night.diff: every category, quarantine, flakiness, drift and reference changes."""

from __future__ import annotations

import pytest

from harness.config import load_config
from harness.night.diff import diff_runs, flips
from harness.schema.models import BudgetModel
from harness.report.diff_text import render_diff_markdown, render_diff_text
from harness.errors import ConfigError


def ids(entries):
    return [e["id"] for e in entries]


def test_categories(make_run, make_case):
    base = make_run("r1", [make_case("reg"), make_case("soft-reg", "soft"), make_case("fix", "fail"),
                           make_case("still", "error"), make_case("chg"), make_case("gone")])
    new = make_run("r2", [make_case("reg", "fail"), make_case("soft-reg", "error"), make_case("fix", "pass"),
                          make_case("still", "fail"), make_case("chg", "unavailable"), make_case("born")])
    d = diff_runs(base, new)
    assert ids(d["regressions"]) == ["reg", "soft-reg"]
    assert ids(d["fixed"]) == ["fix"]
    assert ids(d["still_failing"]) == ["still"]
    assert ids(d["changed"]) == ["chg"]
    assert ids(d["new"]) == ["born"] and ids(d["removed"]) == ["gone"]
    assert d["exit_code"] == 1 and d["counts"]["blocking_regressions"] == 2
    assert d["base_run"]["run_id"] == "r1" and d["new_run"]["run_id"] == "r2"


def test_no_regression_exits_0(make_run, make_case):
    d = diff_runs(make_run("r1", [make_case("a", "fail")]), make_run("r2", [make_case("a")]))
    assert d["exit_code"] == 0 and d["regressions"] == []


def test_quarantined_regression_is_listed_but_not_blocking(make_run, make_case):
    d = diff_runs(make_run("r1", [make_case("a")]), make_run("r2", [make_case("a", "fail", quarantined=True)]))
    assert ids(d["regressions"]) == ["a"] and d["regressions"][0]["quarantined"] is True
    assert d["exit_code"] == 0
    assert "[quarantined]" in render_diff_text(d)


def test_flaky_needs_three_flips_in_the_window(make_run, make_case):
    seq = ["pass", "fail", "pass", "fail", "pass"]
    runs = [make_run(f"r{i}", [make_case("wobbly", s), make_case("broke", "pass" if i < 4 else "fail"),
                               make_case("bad-night", "fail" if i == 2 else "pass")])
            for i, s in enumerate(seq)]
    d = diff_runs(runs[-2], runs[-1], recent=runs)
    # 'broke' flipped once (a regression); 'bad-night' failed one night and recovered (a fix), not flakes
    assert ids(d["flaky"]) == ["wobbly"]
    assert d["flaky"][0]["flips"] == 4
    narrow = diff_runs(runs[-2], runs[-1], recent=runs, thresholds=BudgetModel(drift_flaky_nights=3))
    assert narrow["flaky"] == []
    lax = diff_runs(runs[-2], runs[-1], recent=runs, thresholds=BudgetModel(drift_flaky_min_flips=2))
    assert ids(lax["flaky"]) == ["wobbly", "bad-night"]  # most flips first
    assert flips(["pass", "unavailable", "fail", None, "soft"]) == 2


def test_drift_on_shared_cases_beyond_ratios(make_run, make_case):
    base = make_run("r1", [make_case("a", cost=0.01, tokens=(100, 0), latency=1000.0, similarity=0.9),
                           make_case("b", layer="reasoning", cost=0.01)])
    new = make_run("r2", [make_case("a", cost=0.02, tokens=(200, 0), latency=2000.0, similarity=0.6),
                          make_case("b", layer="reasoning", cost=0.01),
                          make_case("extra", cost=5.0)])  # a new case does not make the run "more expensive"
    d = diff_runs(base, new)
    got = {(x["scope"], x["metric"]) for x in d["drift"]}
    assert {("layer robustness", "cost_usd"), ("layer robustness", "tokens"),
            ("layer robustness", "latency_p95_ms"), ("layer robustness", "similarity"),
            ("case a", "similarity")} <= got
    assert ("layer reasoning", "cost_usd") not in got
    total_cost = next(x for x in d["drift"] if x["scope"] == "total" and x["metric"] == "cost_usd")
    assert total_cost["before"] == pytest.approx(0.02) and total_cost["after"] == pytest.approx(0.03)
    lax = diff_runs(base, new, thresholds=BudgetModel(drift_cost_ratio=3, drift_tokens_ratio=3,
                                                        drift_latency_ratio=3, drift_similarity_ratio=0.5))
    assert lax["drift"] == []


def test_small_latency_growth_is_noise(make_run, make_case):
    d = diff_runs(make_run("r1", [make_case("a", latency=40.0)]), make_run("r2", [make_case("a", latency=120.0)]))
    assert not [x for x in d["drift"] if x["metric"] == "latency_p95_ms"]


def test_reference_changes_are_shown(make_run, make_case):
    base = make_run("r1", [make_case("a")])
    new = make_run("r2", [make_case("a")], golden_version="g2",
                   models={"embedder": "minilm", "critic": "gpt-x"}, target={"name": "docbot", "version": "1.1"})
    d = diff_runs(base, new)
    what = {r["what"]: (r["before"], r["after"]) for r in d["references"]}
    assert what == {"golden version": ("g1", "g2"), "agent version": ("1.0", "1.1"),
                    "model critic": ("none", "gpt-x")}
    assert "golden version: g1 -> g2" in render_diff_text(d)
    assert any("References changed" in line for line in render_diff_markdown(d))


def test_markdown_escapes_untrusted_reasons(make_run, make_case):
    d = diff_runs(make_run("r1", [make_case("a")]), make_run("r2", [make_case("a", "fail", reply="<b>x</b>")]))
    text = "\n".join(render_diff_markdown(d))
    assert "<b>" not in text and "&lt;b&gt;" in text


def test_thresholds_from_config(tmp_path):
    cfg = tmp_path / "harness.toml"
    cfg.write_text("[budget]\ndrift_cost_ratio = 2\ndrift_flaky_nights = 3\n", encoding="utf-8")
    t = load_config(cfg, environ={}).settings.budget
    assert t.drift_cost_ratio == 2.0 and t.drift_flaky_nights == 3 and isinstance(t.drift_flaky_nights, int)
    cfg.write_text('[budget]\ndrift_cost_ratio = "lots"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="drift_cost_ratio"):
        load_config(cfg, environ={})


def test_night_statistics_and_a_missing_manifest_are_not_reference_changes(make_run, make_case):
    stats = {"embedder": "minilm", "critic": "off", "embedder_stats": {"calls": 1}, "critic_health": {"kappa": 0.8}}
    base = make_run("r1", [make_case("a")], models=stats)
    base["manifest"] = {"config_hash": "sha256:a", "price_table_version": "2026-11"}
    new = make_run("r2", [make_case("a")], models={**stats, "embedder_stats": {"calls": 9},
                                                   "critic_health": {"kappa": 0.5}})
    assert diff_runs(base, new)["references"] == []
    new["manifest"] = {"config_hash": "sha256:b", "price_table_version": "2026-11"}
    assert [r["what"] for r in diff_runs(base, new)["references"]] == ["config hash"]


def test_cases_of_a_layer_not_selected_tonight_are_not_removed(make_run, make_case):
    base = make_run("r1", [make_case("a"), make_case("b")])
    base["cases"][1]["layer"] = "cost"
    new = make_run("r2", [make_case("a")])
    new["layers"] = {"robustness": {}}
    d = diff_runs(base, new)
    assert d["counts"]["removed"] == 0 and [e["id"] for e in d["not_run"]] == ["b"]
    assert "1 not run tonight" in render_diff_text(d)


def test_a_model_a_night_did_not_use_is_no_reference_change(make_run, make_case):
    """issue 25 item 6: the "References changed" banner appeared only because tonight ran without
    the reasoning layer (no critic, no embedder); another model name is still a change."""
    base = make_run("r1", [make_case("a")], models={"embedder": "minilm", "critic": "offline"})
    tonight = make_run("r2", [make_case("a")], models={"embedder": "minilm"})
    assert diff_runs(base, tonight)["references"] == []
    other = make_run("r3", [make_case("a")], models={"embedder": "hash", "critic": "offline"})
    assert [r["what"] for r in diff_runs(base, other)["references"]] == ["model embedder"]
