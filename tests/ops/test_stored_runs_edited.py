"""Stored results.json edited into another shape (issue 24, round 3, session 29): `harness upload
--reindex` and `harness merge` skip it saying why instead of crashing (exit 70 on `cases: [5]` or a
JSON array); the runs that are as the harness wrote them are indexed and merged."""

from __future__ import annotations

import json

import pytest
from ops_support import echo_cases, make_project

from harness import cli


def _stored(s3, suffix: str) -> str:
    return next(k for k in s3.keys() if k.endswith(suffix))


@pytest.mark.parametrize("body", [json.dumps({"schema": "harness.results/1", "run_id": "r1", "cases": [5],
                                              "summary": {}}), "[1, 2]", "[" * 50_000 + "]" * 50_000])
def test_reindex_skips_a_stored_run_edited_into_another_shape(tmp_path, s3, capsys, body):
    cfg = make_project(tmp_path, cases=echo_cases(1), storage=s3)
    for run_id in ("r1", "r2"):
        assert cli.main(["run", "--config", str(cfg), "--quiet", "--run-id", run_id]) == 0
    s3.client().put_object(Bucket=s3.bucket, Key=_stored(s3, "r1/results.json"), Body=body.encode())
    capsys.readouterr()
    assert cli.main(["upload", "--reindex", "--config", str(cfg)]) == 0
    assert "index.json rebuilt: 1 run(s)" in capsys.readouterr().out
    assert [e["run_id"] for e in s3.get_json("chatbot/index.json")["runs"]] == ["r2"]


def test_merge_skips_a_stored_shard_edited_into_another_shape(tmp_path, s3, capsys):
    cfg = make_project(tmp_path, cases=echo_cases(2), storage=s3)
    for i, shard in enumerate(("1/2", "2/2")):  # two machines: a reports folder each
        assert cli.main(["run", "--config", str(cfg), "--quiet", "--run-id", "s", "--shard", shard,
                         "--out", str(tmp_path / f"m{i}")]) == 0
    key = _stored(s3, "shards/2-of-2/results.json")
    good = s3.client().get_object(Bucket=s3.bucket, Key=key)["Body"].read()
    s3.client().put_object(Bucket=s3.bucket, Key=key, Body=json.dumps({**json.loads(good), "cases": [5]}).encode())
    capsys.readouterr()
    code = cli.main(["merge", "--config", str(cfg), "s"])
    out = capsys.readouterr()
    assert code in (0, 1) and "internal error" not in out.out + out.err, out  # one shard missing is said
    s3.client().put_object(Bucket=s3.bucket, Key=key, Body=good)
    assert cli.main(["merge", "--config", str(cfg), "s"]) == 0
    merged = json.loads(s3.client().get_object(Bucket=s3.bucket, Key=_stored(s3, "/s/results.json"))["Body"].read())
    assert len(merged["cases"]) == 2
