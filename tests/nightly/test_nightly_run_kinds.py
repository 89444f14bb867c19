"""Runs have a kind (issue 25 item 10): only full nightly runs are the previous night for
`harness diff`, the trend charts and the anomaly history; a --repeat K run is compared per attempt."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from harness.night.baseline import choose_base
from harness.night.context import run_context
from harness.night.diff import diff_runs
from harness.night.history import LocalRunSource, load_history
from harness.run.kind import kind_of, run_info
from tests.nightly.conftest import case, run, write_run

NIGHT_1, ADHOC, NEW = "20240101-020000-aaaa", "20240101-120000-bbbb", "20240102-020000-cccc"


def _suite(n: int = 20, status: str = "pass") -> list[dict]:
    return [case(f"c{i}", status) for i in range(n)]


@pytest.fixture
def reports(tmp_path):
    """A nightly, then an 11-case --case run, then tonight's nightly."""
    r = tmp_path / "reports"
    write_run(r, run(NIGHT_1, _suite(), run={"kind": "nightly"}))
    write_run(r, run(ADHOC, _suite(11), run={"kind": "partial", "selection": ["--case", "c1*"]}))
    return r


@pytest.mark.parametrize("selection, repeat, shard, kind", [
    ([], 1, None, "nightly"),
    (["--case", "url-*"], 1, None, "partial"),
    (["-k", "url"], 1, None, "partial"),
    (["--lf"], 1, None, "partial"),
    ([], 3, None, "repeat"),
    (["--case", "x"], 3, None, "repeat"),
    ([], 1, "1/2", "shard"),
])
def test_the_kind_follows_the_selection(selection, repeat, shard, kind):
    assert run_info(selection=selection, repeat=repeat, shard=shard)["kind"] == kind


def test_a_run_before_the_field_is_a_nightly():
    assert kind_of(run(NIGHT_1, [])) == "nightly"
    assert kind_of(run(NIGHT_1, [], run={"kind": "partial"})) == "partial"


def test_an_adhoc_run_is_not_the_previous_night(reports):
    source = LocalRunSource(reports)
    base, why = choose_base(source, reports, NEW)
    assert base == NIGHT_1 and "1 later run(s) of another kind passed over" in why
    assert choose_base(source, reports, NEW, kind="any")[0] == ADHOC  # asked for: any run


def test_an_adhoc_run_is_no_point_on_the_trend_charts_nor_in_the_diff(reports):
    tonight = run(NEW, _suite(), run={"kind": "nightly"})
    ctx = run_context(tonight, reports)
    assert [h["run_id"] for h in ctx.history] == [NIGHT_1, NEW]
    assert ctx.diff["base_run"]["run_id"] == NIGHT_1
    assert ctx.diff["counts"]["new"] == 0  # against the 11-case run, 9 cases were "new"


def test_history_leaves_other_kinds_out_unless_asked(reports):
    source = LocalRunSource(reports)
    hist = load_history(source, kind="nightly")
    assert [r["run_id"] for r in hist.runs] == [NIGHT_1] and hist.left_out == 1
    assert len(load_history(source, kind="any").runs) == 2


def test_the_anomaly_history_holds_only_nightly_runs(reports):
    from harness.run.anomaly import load_history as anomaly_history

    hist = anomaly_history(reports, "docbot")
    assert [e.run_id for e in hist.entries] == [NIGHT_1]


def _repeat_case(cid: str, passes: int, k: int = 3) -> dict:
    c = case(cid, "fail" if passes < k else "pass", cost=0.003, tokens=(300, 60))
    c.update(attempts=k, passes=passes, flaky=0 < passes < k, pass_at_k=passes > 0, pass_hat_k=passes == k)
    return c


def test_a_repeat_run_is_compared_per_attempt():
    base = run(NIGHT_1, _suite(10))  # one attempt each: cost 0.001, 120 tokens
    new = run(NEW, [_repeat_case(f"c{i}", 2) for i in range(6)] + [_repeat_case(f"c{i}", 3) for i in range(6, 10)],
              run={"kind": "repeat", "repeat": 3})
    d = diff_runs(base, new)
    assert d["counts"]["regressions"] == 0 and d["counts"]["flaky"] == 6  # as the repeats section says
    assert {f["id"] for f in d["flaky"]} == {f"c{i}" for i in range(6)}
    assert all(f["attempts"] == 3 and f["passes"] == 2 for f in d["flaky"])
    assert d["drift"] == []  # three times the spend of three attempts is not drift


def test_per_attempt_still_catches_real_regressions_and_drift():
    base = run(NIGHT_1, _suite(4))
    new = run(NEW, [_repeat_case("c0", 0)] + [_repeat_case(f"c{i}", 3) for i in (1, 2, 3)])
    for c in new["cases"]:
        c["cost_usd"] = 0.006  # 0.002 per attempt: twice the night's
    d = diff_runs(base, new)
    assert [r["id"] for r in d["regressions"]] == ["c0"] and d["counts"]["flaky"] == 0
    assert any(x["metric"] == "cost_usd" and x["scope"] == "total" for x in d["drift"])


def test_the_diff_text_says_a_repeat_flake_is_attempts_that_disagreed():
    from harness.report.diff_text import render_diff_text

    d = diff_runs(run(NIGHT_1, _suite(1)), run(NEW, [_repeat_case("c0", 1)]))
    assert "c0: passed 1 of 3 attempts in run " + NEW in render_diff_text(d)


def test_harness_run_records_its_kind(tmp_path):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ops"))
    from ops_support import echo_cases, make_project

    from harness import cli

    cfg = make_project(tmp_path, cases=echo_cases(2))
    assert cli.main(["run", "--config", str(cfg), "--run-id", "20240101-000000-full", "--quiet"]) == 0
    assert cli.main(["run", "--config", str(cfg), "--run-id", "20240101-000001-part", "--quiet",
                     "--case", "echo-1"]) == 0
    reports = tmp_path / "reports"
    full = json.loads((reports / "20240101-000000-full" / "results.json").read_text())
    part = json.loads((reports / "20240101-000001-part" / "results.json").read_text())
    assert full["run"] == {"kind": "nightly"}
    assert part["run"] == {"kind": "partial", "selection": ["--case", "echo-1"]}
    assert cli.main(["diff", "--config", str(cfg), "--local", "--no-write"]) == 0  # latest: part vs full
    assert cli.main(["run", "--config", str(cfg), "--run-id", "20240101-000002-full", "--quiet"]) == 0
    diff = json.loads((reports / "20240101-000002-full" / "diff.json").read_text())
    assert diff["base_run"]["run_id"] == "20240101-000000-full"  # not the --case run
    # asked for: the --case run is the base
    assert cli.main(["run", "--config", str(cfg), "--run-id", "20240101-000003-full", "--quiet",
                     "--against", "20240101-000001"]) == 0
    diff = json.loads((reports / "20240101-000003-full" / "diff.json").read_text())
    assert diff["base_run"]["run_id"] == "20240101-000001-part" and diff["base_run"]["why"] == "named with --against"
    assert cli.main(["run", "--config", str(cfg), "--quiet", "--against", "nosuchrun"]) == 2  # before anything runs


def test_a_repeat_case_s_summed_spend_is_no_anomaly(tmp_path):
    from harness.run.anomaly import anomalies, load_history as anomaly_history
    from harness.types import CaseResult, Tokens

    for i in range(5):
        write_run(tmp_path, run(f"2026110{i}-000000-aaaa", [case("c1", cost=0.004, tokens=(900, 100))]))
    hist = anomaly_history(tmp_path, "docbot")

    def tonight(k: int, factor: float) -> CaseResult:
        return CaseResult(id="c1", layer="cost", channel="telegram", status="pass", evidence=(), latency_ms=100.0,
                          llm_calls=int(k * factor), tokens=Tokens(int(900 * k * factor), int(100 * k * factor)),
                          cost_usd=0.004 * k * factor, attempts=k)

    assert anomalies(tonight(3, 1.0), hist, ratio=1.5) == []  # three attempts, three times the spend
    assert {e.check for e in anomalies(tonight(3, 2.0), hist, ratio=1.5)} >= {"anomaly.tokens", "anomaly.cost_usd"}


def test_a_kind_given_stands():
    assert run_info(selection=["--layer", "robustness"], kind="nightly") == {
        "kind": "nightly", "selection": ["--layer", "robustness"]}
    assert run_info(kind="nightly", shard="1/2")["kind"] == "shard"  # a slice until merged


def test_harness_history_and_diff_take_kind(reports, tmp_path, monkeypatch, capsys):
    from harness import cli

    monkeypatch.chdir(tmp_path)
    write_run(reports, run(NEW, _suite(), run={"kind": "nightly"}))
    assert cli.main(["history", "--out", str(reports), "--local"]) == 0
    out = capsys.readouterr().out
    assert ADHOC not in out and "1 run(s) that are not nightly runs left out; --kind any lists every run" in out
    assert cli.main(["history", "--out", str(reports), "--local", "--kind", "any"]) == 0
    assert ADHOC in capsys.readouterr().out
    assert cli.main(["diff", "--out", str(reports), "--local", "--json", "--no-write"]) == 0
    assert json.loads(capsys.readouterr().out)["base_run"]["run_id"] == NIGHT_1
    assert cli.main(["diff", "--out", str(reports), "--local", "--json", "--no-write", "--kind", "any"]) == 0
    assert json.loads(capsys.readouterr().out)["base_run"]["run_id"] == ADHOC


def test_merged_shards_of_a_night_are_a_nightly():
    from harness.night.shards import merge_results

    shards = [run(NEW, [case(f"c{i}")], run={"kind": "shard", "shard": f"{i}/2"}, shard={"index": i, "count": 2})
              for i in (1, 2)]
    assert merge_results(shards, 2)["run"] == {"kind": "nightly"}
    partial = [run(NEW, [case("c1")], run={"kind": "partial", "selection": ["--layer", "cost"], "shard": "1/1"},
                   shard={"index": 1, "count": 1})]
    assert merge_results(partial, 1)["run"] == {"kind": "partial", "selection": ["--layer", "cost"]}


def test_a_partial_run_says_so_in_its_first_sentence():
    from harness.report.format import tonight_sentence

    d = run(NEW, _suite(2), run={"kind": "partial", "selection": ["--case", "c1*"]})
    assert tonight_sentence(d).endswith("a partial run (--case c1*), not a night of the trends")
    assert "not a night" not in tonight_sentence(run(NEW, _suite(2)))
