"""``harness baseline accept RUN --case GLOB --reason TEXT --by NAME``: accepting some cases on
purpose, like a snapshot update; who, why and when recorded; history and diff say so; locally
and through object storage (a moto S3 server on loopback)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from harness.cli import main
from harness.night.baseline import baseline_results, baseline_run_of, read_baseline
from harness.night.history import LocalRunSource

R1, R2, R3, R4 = "20240101-020000-aaaa", "20240102-020000-bbbb", "20240103-020000-cccc", "20240104-020000-dddd"


def _setup(tmp_path, make_run, make_case, save_run, storage: str = ""):
    reports = tmp_path / "reports"
    save_run(reports, make_run(R1, [make_case("url-a", reply="a1"), make_case("url-b", reply="b1"),
                                    make_case("cmd-help", reply="h1")]))
    # night 2: url-a and url-b changed on purpose (fail against night 1's checks), cmd-help did not
    save_run(reports, make_run(R2, [make_case("url-a", "fail", reply="a2"), make_case("url-b", "fail", reply="b2"),
                                    make_case("cmd-help", reply="h2")]))
    (tmp_path / "harness.toml").write_text("[target]\nname = 'x'\n" + storage, encoding="utf-8")
    return reports, ["--config", str(tmp_path / "harness.toml"), "--out", str(reports)]


def test_accept_cases_replaces_only_those_records(tmp_path, make_run, make_case, save_run, capsys, monkeypatch):
    reports, opts = _setup(tmp_path, make_run, make_case, save_run)
    monkeypatch.setenv("USER", "alice")
    assert main(["baseline", *opts, "accept", R1, "--reason", "first good night"]) == 0
    capsys.readouterr()
    assert main(["baseline", *opts, "accept", R2, "--case", "url-*", "--reason", "new link wording, PR 41",
                 "--by", "bob"]) == 0
    out, err = capsys.readouterr()
    assert f"accepted 2 case(s) of {R2} into the baseline {R1} (by bob" in out and "url-a, url-b" in out
    assert "accepted though not passing" in err and "url-a" in err  # said, not refused: it is on purpose
    record = read_baseline(reports)
    assert record["run_id"] == R1 and record["accepted_by"] == "alice" and record["reason"] == "first good night"
    assert set(record["cases"]) == {"url-a", "url-b"}
    assert record["cases"]["url-a"]["run_id"] == R2 and record["cases"]["url-a"]["accepted_by"] == "bob"
    assert record["cases"]["url-a"]["reason"] == "new link wording, PR 41" and record["cases"]["url-a"]["accepted_at"]
    assert [e["cases"] for e in record["log"]] == [None, ["url-a", "url-b"]]
    assert baseline_run_of(record, "url-a") == R2 and baseline_run_of(record, "cmd-help") == R1
    composite = baseline_results(LocalRunSource(reports), record)
    replies = {c["id"]: c["turns"][0]["replies"][0]["text"] for c in composite["cases"]}
    assert replies == {"url-a": "a2", "url-b": "b2", "cmd-help": "h1"}  # the rest of the baseline stays

    # tonight equals night 2: against the composite baseline nothing regressed
    save_run(reports, make_run(R3, [make_case("url-a", "fail", reply="a2"), make_case("url-b", "fail", reply="b2"),
                                    make_case("cmd-help", reply="h2")]))
    assert main(["diff", *opts, "--json", "--no-write"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["base_run"]["run_id"] == R1 and d["regressions"] == []
    assert d["baseline"]["accepted_by"] == "alice" and d["baseline"]["cases"]["url-b"]["reason"] == "new link wording, PR 41"
    assert main(["diff", *opts, "--no-write"]) == 0
    text = capsys.readouterr().out
    assert f"baseline {R1} accepted by alice at" in text and ": first good night" in text
    assert f"url-a, url-b <- {R2} by bob at" in text and "new link wording, PR 41" in text

    assert main(["history", *opts]) == 0
    hist = capsys.readouterr().out
    assert f"baseline {R1} accepted by alice" in hist and "2 case(s) accepted since from later runs:" in hist
    assert main(["baseline", *opts, "show"]) == 0
    shown = capsys.readouterr().out
    assert "2 acceptances, newest last:" in shown and "(2 case(s): url-a, url-b): new link wording, PR 41" in shown

    # accepting a case back from the baseline run itself drops its own record
    assert main(["baseline", *opts, "accept", R1, "--case", "url-b"]) == 0
    assert set(read_baseline(reports)["cases"]) == {"url-a"}
    # a whole-run acceptance starts over; the log keeps everything
    assert main(["baseline", *opts, "accept", R2, "--note", "all of night 2"]) == 0
    record = read_baseline(reports)
    assert record["run_id"] == R2 and record["cases"] == {} and record["note"] == record["reason"] == "all of night 2"
    assert len(record["log"]) == 4


def test_accept_case_errors_name_the_fix(tmp_path, make_run, make_case, save_run, capsys):
    reports, opts = _setup(tmp_path, make_run, make_case, save_run)
    assert main(["baseline", *opts, "accept", R2, "--case", "url-a"]) == 2
    err = capsys.readouterr().err
    assert "none was accepted yet" in err and f"harness baseline accept {R2}" in err
    assert main(["baseline", *opts, "accept", R1]) == 0
    assert main(["baseline", *opts, "accept", R2, "--case", "nope-*"]) == 2
    assert "matches no case of run" in capsys.readouterr().err
    assert read_baseline(reports)["cases"] == {}  # nothing written by a refused acceptance


def test_accept_over_object_storage(tmp_path, make_run, make_case, save_run, capsys, monkeypatch):
    """A run kept only in storage is accepted case by case from a machine that never had it;
    baseline.json goes to storage too, and another machine's history and diff read it there."""
    pytest.importorskip("moto")
    sys.path.insert(0, str(Path(__file__).parents[1] / "ops"))
    from ops_support import ACCESS_KEY, SECRET_KEY, MotoS3

    from harness.config import load_config
    from harness.night.storage import upload_run
    from harness.night.store import open_store

    server = MotoS3()
    try:
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
        storage = (f'[storage]\nurl = "s3://{server.bucket}/nightly"\nendpoint_url = "{server.endpoint}"\n'
                   'region = "us-east-1"\naddressing_style = "path"\nretries = 1\nretry_backoff_s = 0\n')
        ci = tmp_path / "ci"
        ci.mkdir()
        ci_reports, ci_opts = _setup(ci, make_run, make_case, save_run, storage)
        config = load_config(ci / "harness.toml")
        for rid in (R1, R2):
            upload_run(config, ci_reports / rid, ci_reports, store=open_store(config))
        laptop = tmp_path / "laptop"
        laptop.mkdir()
        (laptop / "harness.toml").write_text("[target]\nname = 'x'\n" + storage, encoding="utf-8")
        opts = ["--config", str(laptop / "harness.toml"), "--out", str(laptop / "reports")]
        monkeypatch.setenv("USER", "carol")
        assert main(["baseline", *opts, "accept", R1, "--reason", "night 1"]) == 0
        assert main(["baseline", *opts, "accept", R2, "--case", "url-a", "--reason", "on purpose"]) == 0
        out = capsys.readouterr().out
        assert f"s3://{server.bucket}/nightly/baseline.json" in out
        stored = server.get_json("nightly/baseline.json")
        assert stored["cases"]["url-a"] == {**stored["cases"]["url-a"], "run_id": R2, "accepted_by": "carol",
                                            "reason": "on purpose"}
        # the CI machine never ran `accept`: it reads the stored record
        assert read_baseline(ci_reports) is None
        save_run(ci_reports, make_run(R4, [make_case("url-a", "fail", reply="a2"), make_case("url-b", reply="b1"),
                                           make_case("cmd-help", reply="h1")]))
        assert main(["diff", *ci_opts, "--json", "--no-write"]) == 0  # url-a was accepted failing: no regression
        d = json.loads(capsys.readouterr().out)
        assert d["base_run"]["run_id"] == R1 and d["baseline"]["cases"]["url-a"]["run_id"] == R2
        assert main(["history", *ci_opts]) == 0
        assert "url-a <- 20240102-020000-bbbb by carol" in capsys.readouterr().out
        # storage down: the local copy (the laptop's) still answers
        server.stop()
        assert main(["baseline", *opts, "show"]) == 0
        assert "baseline: 20240101-020000-aaaa" in capsys.readouterr().out
        # ...and an acceptance made now (of a run this machine has) is kept here, with an error
        # saying storage did not get it
        save_run(laptop / "reports", make_run(R3, [make_case("url-a")]))
        assert main(["baseline", *opts, "accept", R3, "--reason", "offline"]) == 1
        err = capsys.readouterr().err
        assert "but not to storage" in err and "run the same `harness baseline accept` again" in err
        assert read_baseline(laptop / "reports")["reason"] == "offline"
    finally:
        server.stop()


def test_with_case_acceptances_gives_a_learner_the_accepted_records(tmp_path, make_run, make_case, save_run,
                                                                     monkeypatch):
    from harness.night.baseline import accept_baseline, with_case_acceptances

    reports, _ = _setup(tmp_path, make_run, make_case, save_run)
    save_run(reports, make_run(R3, [make_case("url-a", reply="a3"), make_case("url-b", reply="b3"),
                                    make_case("cmd-help", reply="h3")]))
    source = LocalRunSource(reports)
    monkeypatch.setenv("USER", "alice")
    record = accept_baseline(reports, source, R2)
    nights = [source.load(R2), source.load(R1)]  # the accepted run first, then the nights like it
    assert with_case_acceptances(source, record, nights) == nights  # nothing accepted on its own

    record = accept_baseline(reports, source, R3, "a3 is right", cases=["url-a"])
    first, older = with_case_acceptances(source, record, nights)
    texts = {c["id"]: c["turns"][0]["replies"][0]["text"] for c in first["cases"]}
    assert texts == {"url-a": "a3", "url-b": "b2", "cmd-help": "h2"}
    assert [c["id"] for c in older["cases"]] == ["url-b", "cmd-help"]  # url-a's old behaviour is not learned
    assert [c["id"] for c in nights[1]["cases"]] == ["url-a", "url-b", "cmd-help"]  # the input is untouched


def test_accept_never_writes_over_a_stored_baseline_it_could_not_read(tmp_path, make_run, make_case, save_run,
                                                                      capsys, monkeypatch):
    """Issue 24: a portal's page answered for baseline.json made an accept start from the local
    record and write over the stored one: every other machine's acceptance and the log were lost."""
    pytest.importorskip("moto")
    sys.path.insert(0, str(Path(__file__).parents[1] / "ops"))
    from ops_support import ACCESS_KEY, SECRET_KEY, MotoS3

    server = MotoS3()
    try:
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
        storage = (f'[storage]\nurl = "s3://{server.bucket}/nightly"\nendpoint_url = "{server.endpoint}"\n'
                   'region = "us-east-1"\naddressing_style = "path"\nretries = 1\nretry_backoff_s = 0\n')
        reports, opts = _setup(tmp_path, make_run, make_case, save_run, storage)
        portal = b"<html><title>Sign in to the Wi-Fi</title></html>"
        server.client().put_object(Bucket=server.bucket, Key="nightly/baseline.json", Body=portal)
        assert main(["baseline", *opts, "accept", R1, "--reason", "night 1"]) == 1  # a StorageError, nothing written
        err = capsys.readouterr().err
        assert "is not a baseline record" in err and "refusing to write over it" in err, err
        assert server.client().get_object(Bucket=server.bucket, Key="nightly/baseline.json")["Body"].read() == portal
        assert read_baseline(reports) is None  # nothing written locally either
    finally:
        server.stop()
