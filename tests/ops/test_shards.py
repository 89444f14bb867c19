"""--shard I/N: deterministic slices, and the slices of one run merged into one report in storage."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from ops_support import echo_cases, make_project

from harness import cli
from harness.errors import UsageError
from harness.night.shards import merge_results, parse_shard, select_shard

RUN_ID = "20250203-020000-shrd"
PREFIX = f"chatbot/runs/2025/02/03/{RUN_ID}"


def _cases(ids):
    return [SimpleNamespace(id=i) for i in ids]


def test_slices_are_deterministic_disjoint_balanced_and_complete():
    ids = [f"case-{i:02d}" for i in range(11)]
    shuffled = list(reversed(ids))
    slices = [[c.id for c in select_shard(_cases(shuffled), i, 3)] for i in (1, 2, 3)]
    assert sorted(sum(slices, [])) == sorted(ids)  # complete, no case twice
    assert [len(s) for s in slices] == [4, 4, 3]  # round-robin: sizes differ by at most one
    # The same slice whatever order the cases were loaded in (every machine agrees).
    assert [c.id for c in select_shard(_cases(ids), 2, 3)] == sorted(slices[1])
    assert slices[0] == ["case-09", "case-06", "case-03", "case-00"]  # suite order kept within a slice


@pytest.mark.parametrize("text", ["0/3", "4/3", "1/0", "a/b", "1", "", "2 of 3"])
def test_bad_shard_is_a_usage_error(text):
    with pytest.raises(UsageError):
        parse_shard(text)


def test_parse_shard():
    assert parse_shard("2/4") == (2, 4)
    assert parse_shard(" 1 / 1 ") == (1, 1)


def _shard_results(index, count, statuses):
    cases = [{"id": f"c{index}-{n}", "layer": "robustness", "channel": "telegram", "status": st, "evidence": [
        {"check": "reply.contains", "availability": "ready", "passed": st == "pass"}]} for n, st in enumerate(statuses)]
    return {"schema": "harness.results/1", "run_id": "r", "started_at": f"2025-01-0{index}T00:00:00+00:00",
            "finished_at": f"2025-01-0{index}T01:00:00+00:00", "harness_version": "0.1.0",
            "target": {"name": "echo"}, "golden_version": "g1", "models": {"embedder": "none"},
            "summary": {}, "layers": {"robustness": {"planned": len(statuses)}}, "cases": cases,
            "notes": [], "exit_code": 0 if all(s == "pass" for s in statuses) else 1,
            "shard": {"index": index, "count": count}, "manifest": {"host": f"h{index}"}}


def test_merge_recomputes_counts_and_never_passes_with_a_shard_missing():
    merged = merge_results([_shard_results(1, 2, ["pass", "pass"]), _shard_results(2, 2, ["pass", "fail"])], 2)
    assert merged["summary"]["planned"] == 4 and merged["summary"]["passed"] == 3
    assert merged["summary"]["failed"] == 1 and merged["summary"]["verdict"] == "fail"
    assert merged["exit_code"] == 1 and merged["shard"] == {"merged": 2, "count": 2, "missing": []}
    assert merged["started_at"].startswith("2025-01-01") and merged["finished_at"].startswith("2025-01-02")
    assert [s["host"] for s in merged["manifest"]["shards"]] == ["h1", "h2"]

    partial = merge_results([_shard_results(1, 3, ["pass"])], 3)
    assert partial["summary"]["verdict"] == "incomplete" and partial["exit_code"] == 1
    assert partial["shard"]["missing"] == [2, 3]


def test_two_shards_upload_and_merge_into_one_report(tmp_path, s3, capsys):
    cfg = make_project(tmp_path, storage=s3, cases=echo_cases(5))
    for i in (1, 2):
        code = cli.main(["run", "--config", str(cfg), "--quiet", "--shard", f"{i}/2", "--run-id", RUN_ID,
                         "--out", str(tmp_path / f"machine-{i}")])
        assert code == 0, capsys.readouterr()
        local = json.loads((tmp_path / f"machine-{i}" / RUN_ID / "results.json").read_text())
        assert local["shard"]["index"] == i and local["shard"]["count"] == 2
        assert local["summary"]["planned"] == (3 if i == 1 else 2)
        assert local["manifest"]["selection"]["shard"] == f"{i}/2"
        if i == 1:  # half the run is in: no merged report yet, the index says which shard is in
            assert f"{PREFIX}/results.json" not in s3.keys()
            entry = s3.get_json("chatbot/index.json")["runs"][0]
            assert entry["verdict"] == "incomplete" and list(entry["shards"]) == ["1/2"]
    out = capsys.readouterr().out
    assert "shards merged" in out
    keys = s3.keys()
    assert f"{PREFIX}/shards/1-of-2/results.json" in keys and f"{PREFIX}/shards/2-of-2/results.json" in keys
    merged = s3.get_json(f"{PREFIX}/results.json")
    assert sorted(c["id"] for c in merged["cases"]) == [f"echo-{i}" for i in range(5)]
    assert merged["summary"]["planned"] == merged["summary"]["passed"] == 5
    assert merged["summary"]["verdict"] == "pass" and merged["exit_code"] == 0
    assert {f"{PREFIX}/{f}" for f in ("summary.md", "junit.xml", "report.html")} <= set(keys)
    [entry] = s3.get_json("chatbot/index.json")["runs"]
    assert entry["run_id"] == RUN_ID and entry["verdict"] == "pass" and entry["prefix"] == PREFIX
    assert sorted(entry["shards"]) == ["1/2", "2/2"] and entry["shard_count"] == 2

    # By hand, too (idempotent): the same merged report.
    assert cli.main(["merge", RUN_ID, "--config", str(cfg)]) == 0
    assert "merged 2 of 2 shards" in capsys.readouterr().out
    assert s3.get_json(f"{PREFIX}/results.json")["summary"] == merged["summary"]


def test_a_run_id_already_used_is_refused(tmp_path, capsys):
    cfg = make_project(tmp_path)
    assert cli.main(["run", "--config", str(cfg), "--quiet", "--run-id", "r1", "--case", "echo-0"]) == 0
    assert cli.main(["run", "--config", str(cfg), "--quiet", "--run-id", "r1"]) == 2
    assert "--resume r1 continues it" in capsys.readouterr().err
    assert cli.main(["run", "--config", str(cfg), "--quiet", "--run-id", "../x"]) == 2
