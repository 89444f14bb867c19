"""harness.night.history: run sources, per-run metrics, honest rates, pandas frames, parquet, text."""

from __future__ import annotations

import math

import pytest

from harness.night.history import (
    LocalRunSource,
    cases_frame,
    load_history,
    p95,
    run_record,
    runs_frame,
    write_parquet,
)
from harness.night.history_text import render_history


def test_local_source_lists_runs_oldest_first_and_skips_unreadable(tmp_path, make_run, make_case, save_run, caplog):
    save_run(tmp_path, make_run("20240102-020000-bbbb", [make_case("a")]))
    save_run(tmp_path, make_run("20240101-020000-aaaa", [make_case("a")]))
    broken = tmp_path / "20240103-020000-cccc"
    broken.mkdir()
    (broken / "results.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "notes").mkdir()  # a folder without results.json is not a run
    hist = load_history(LocalRunSource(tmp_path))
    assert hist.run_ids == ["20240101-020000-aaaa", "20240102-020000-bbbb"]
    assert len(hist.warnings) == 1 and "20240103-020000-cccc" in hist.warnings[0]
    assert "skipped run 20240103-020000-cccc" in caplog.text


def test_last_and_until_select_a_window(tmp_path, make_run, make_case, save_run):
    for day in range(1, 6):
        save_run(tmp_path, make_run(f"2024010{day}-020000-aaaa", [make_case("a")]))
    src = LocalRunSource(tmp_path)
    assert load_history(src, last=2).run_ids == ["20240104-020000-aaaa", "20240105-020000-aaaa"]
    assert load_history(src, last=2, until="20240103-020000-aaaa").run_ids == [
        "20240102-020000-aaaa", "20240103-020000-aaaa"]


def test_pass_rate_is_none_when_nothing_was_decidable(make_run, make_case):
    rec = run_record(make_run("r1", [make_case("a", "unavailable", layer="reasoning"),
                                     make_case("b", "pass"), make_case("c", "fail")]))
    assert rec["layers"]["reasoning"]["pass_rate"] is None  # never 100% of nothing
    assert rec["layers"]["robustness"]["pass_rate"] == 0.5
    assert rec["total"]["pass_rate"] == 0.5


def test_metrics_p95_similarity_tokens_cost(make_run, make_case):
    cases = [make_case(f"c{i}", latency=float(i), similarity=0.5 + i / 100, cost=0.01) for i in range(1, 21)]
    rec = run_record(make_run("r1", cases))
    m = rec["layers"]["robustness"]
    assert m["latency_p95_ms"] == 19.0  # nearest rank: 19th of 20
    assert m["similarity"] == pytest.approx(sum(0.5 + i / 100 for i in range(1, 21)) / 20)
    assert m["tokens"] == 20 * 120
    assert m["cost_usd"] == pytest.approx(0.2)
    assert p95([]) is None and p95([None, 5]) == 5


def test_unavailable_similarity_is_not_averaged(make_run, make_case):
    c = make_case("a", similarity=0.9)
    c["evidence"][1]["availability"] = "unavailable"
    assert run_record(make_run("r1", [c]))["total"]["similarity"] is None


def test_frames_and_parquet_roundtrip(tmp_path, make_run, make_case):
    pd = pytest.importorskip("pandas")
    runs = [make_run("r1", [make_case("a"), make_case("b", "unavailable", layer="reasoning")]),
            make_run("r2", [make_case("a", "fail"), make_case("b", "pass", layer="reasoning", similarity=0.8)])]
    long = cases_frame(runs)
    assert list(long["status"]) == ["pass", "unavailable", "fail", "pass"]
    per = runs_frame(runs)
    r1_reasoning = per[(per.run_id == "r1") & (per.layer == "reasoning")]["pass_rate"].iloc[0]
    assert math.isnan(r1_reasoning)  # NaN, not 1.0
    path = write_parquet(runs, tmp_path / "h.parquet")
    back = pd.read_parquet(path)
    assert len(back) == 4 and set(back.columns) >= {"run_id", "case_id", "status", "latency_ms", "similarity"}
    assert back.loc[3, "similarity"] == pytest.approx(0.8)


def test_render_history_shows_layers_and_a_status_strip(make_run, make_case):
    from harness.night.history import History

    hist = History(runs=[make_run("20240101-020000-aaaa", [make_case("a"), make_case("b")]),
                         make_run("20240102-020000-bbbb", [make_case("a", "fail"), make_case("b")])])
    text = render_history(hist)
    assert "[robustness]" in text and "[total]" in text
    assert "100.0%" in text and "50.0%" in text and "1/2" in text
    lines = text.splitlines()
    a_line = next(line for line in lines if line.strip().startswith("a "))
    assert a_line.rstrip().endswith(".F")
    # the case that went wrong is listed before the one that never did
    assert lines.index(a_line) < next(i for i, line in enumerate(lines) if line.strip().startswith("b "))
    assert render_history(History()).startswith("no runs found")


def test_remote_and_combined_sources_read_object_storage(tmp_path, make_run, make_case, save_run):
    """Runs uploaded by harness.night.storage to a moto S3 server on loopback come back as history."""
    pytest.importorskip("moto")
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parents[1] / "ops"))
    from ops_support import ACCESS_KEY, SECRET_KEY, MotoS3

    from harness.config import load_config
    from harness.night.history import CombinedRunSource, RemoteRunSource
    from harness.night.storage import upload_run
    from harness.night.store import open_store

    server = MotoS3()
    try:
        cfg = tmp_path / "harness.toml"
        cfg.write_text(f'[storage]\nurl = "s3://{server.bucket}/nightly"\nendpoint_url = "{server.endpoint}"\n'
                       'region = "us-east-1"\naddressing_style = "path"\nretries = 1\nretry_backoff_s = 0\n',
                       encoding="utf-8")
        env = {"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY}
        config = load_config(cfg, environ=env)
        elsewhere, here = tmp_path / "ci-machine", tmp_path / "reports"
        for rid, status in (("20240101-020000-aaaa", "pass"), ("20240102-020000-bbbb", "fail")):
            folder = save_run(elsewhere, make_run(rid, [make_case("a", status)]))
            upload_run(config, folder, elsewhere, store=open_store(config, env))
        save_run(here, make_run("20240103-020000-cccc", [make_case("a")]))

        remote = RemoteRunSource(open_store(config, env))
        assert remote.run_ids() == ["20240101-020000-aaaa", "20240102-020000-bbbb"]
        combined = CombinedRunSource(LocalRunSource(here), remote)
        hist = load_history(combined)
        assert hist.run_ids == ["20240101-020000-aaaa", "20240102-020000-bbbb", "20240103-020000-cccc"]
        assert [r["cases"][0]["status"] for r in hist.runs] == ["pass", "fail", "pass"]

        server.stop()  # storage down: the local runs still come back, with a warning
        down = load_history(CombinedRunSource(LocalRunSource(here), RemoteRunSource(open_store(config, env))))
        assert down.run_ids == ["20240103-020000-cccc"]
        assert down.warnings and "remote runs not listed" in down.warnings[0]
    finally:
        server.stop()
