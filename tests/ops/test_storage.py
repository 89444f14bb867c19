"""Object storage against a real S3-compatible server (moto) on loopback: layout, index, spool, no duplicates."""

from __future__ import annotations

import json

import pytest
from ops_support import ACCESS_KEY, SECRET_KEY, make_project

from harness import cli
from harness.config import load_config
from harness.errors import ConfigError, StorageError
from harness.night.storage import list_pending
from harness.night.store import S3Store, storage_config

RUN_ID = "20250102-030405-abcd"
PREFIX = f"chatbot/runs/2025/01/02/{RUN_ID}"
RUN_FILES = {"junit.xml", "manifest.json", "report.html", "results.json", "results.jsonl", "summary.md"}


def _no_secret(capsys) -> str:
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert SECRET_KEY not in text
    return text


def test_run_lands_under_the_dated_prefix_with_an_index(tmp_path, s3, capsys):
    cfg = make_project(tmp_path, storage=s3)
    code = cli.main(["run", "--config", str(cfg), "--quiet", "--run-id", RUN_ID])
    out = _no_secret(capsys)
    assert code == 0, out
    assert f"uploaded {RUN_ID} -> {PREFIX}/ (6 put, 0 already there)" in out
    assert set(s3.keys()) == {"chatbot/index.json"} | {f"{PREFIX}/{f}" for f in RUN_FILES}
    index = s3.get_json("chatbot/index.json")
    assert [e["run_id"] for e in index["runs"]] == [RUN_ID]
    assert index["runs"][0]["prefix"] == PREFIX and index["runs"][0]["verdict"] == "pass"
    stored = s3.get_json(f"{PREFIX}/results.json")
    local = json.loads((tmp_path / "reports" / RUN_ID / "results.json").read_text())
    assert stored == local
    assert not list_pending(tmp_path / "reports")

    # Uploading the same run again writes nothing: every object is already there.
    assert cli.main(["upload", RUN_ID, "--config", str(cfg)]) == 0
    assert "(0 put, 6 already there)" in _no_secret(capsys)
    versions = s3.versions()
    assert all(versions[f"{PREFIX}/{f}"] == 1 for f in RUN_FILES), versions


def test_storage_going_away_mid_upload_spools_then_upload_pending_completes(tmp_path, s3, capsys, monkeypatch):
    cfg = make_project(tmp_path, storage=s3)
    real_put = S3Store.put
    puts: list[str] = []

    def put_then_die(self, key, data, *a, **kw):
        real_put(self, key, data, *a, **kw)
        puts.append(key)
        if len(puts) == 2:
            s3.stop()  # the server goes away after two objects

    monkeypatch.setattr(S3Store, "put", put_then_die)
    code = cli.main(["run", "--config", str(cfg), "--quiet", "--run-id", RUN_ID])
    out = _no_secret(capsys)
    assert code == 0, out  # the run's verdict does not depend on the upload
    assert "PENDING" in out and "harness upload --pending" in out
    reports = tmp_path / "reports"
    assert (reports / RUN_ID / "results.json").is_file()  # results kept locally
    [pending] = list_pending(reports)
    assert pending.run_id == RUN_ID and len(pending.done) == 2 and pending.index is not None
    assert {f["rel"] for f in pending.files} == RUN_FILES - {k.rsplit("/", 1)[1] for k in puts}
    assert pending.files[-1]["rel"] == "results.json"  # written last, so its presence means complete

    # While storage is still down, --pending keeps everything and says so (exit 1).
    assert cli.main(["upload", "--pending", "--config", str(cfg)]) == StorageError.exit_code
    assert "PENDING" in _no_secret(capsys)
    assert len(list_pending(reports)) == 1

    monkeypatch.setattr(S3Store, "put", real_put)
    s3.start()
    assert cli.main(["upload", "--pending", "--config", str(cfg)]) == 0
    out = _no_secret(capsys)
    assert f"uploaded {RUN_ID}" in out and "(4 put, 0 already there)" in out
    assert not list_pending(reports)
    assert {f"{PREFIX}/{f}" for f in RUN_FILES} <= set(s3.keys())
    versions = s3.versions()
    assert all(versions[f"{PREFIX}/{f}"] == 1 for f in RUN_FILES), versions  # nothing uploaded twice
    index = s3.get_json("chatbot/index.json")
    assert [e["run_id"] for e in index["runs"]] == [RUN_ID]
    assert cli.main(["upload", "--pending", "--config", str(cfg)]) == 0
    assert "nothing pending" in _no_secret(capsys)


def test_the_next_run_retries_the_spool(tmp_path, s3, capsys):
    cfg = make_project(tmp_path, storage=s3)
    s3.stop()
    assert cli.main(["run", "--config", str(cfg), "--quiet", "--run-id", "20250101-000000-aaaa"]) == 0
    assert len(list_pending(tmp_path / "reports")) == 1
    s3.start()
    assert cli.main(["run", "--config", str(cfg), "--quiet", "--run-id", "20250102-000000-bbbb"]) == 0
    out = _no_secret(capsys)
    assert "uploaded 20250102-000000-bbbb" in out and "uploaded 20250101-000000-aaaa" in out
    assert not list_pending(tmp_path / "reports")
    index = s3.get_json("chatbot/index.json")
    assert [e["run_id"] for e in index["runs"]] == ["20250101-000000-aaaa", "20250102-000000-bbbb"]
    assert "chatbot/runs/2025/01/01/20250101-000000-aaaa/results.json" in s3.keys()


def test_no_upload_and_no_storage(tmp_path, s3, capsys):
    cfg = make_project(tmp_path, storage=s3)
    assert cli.main(["run", "--config", str(cfg), "--quiet", "--no-upload", "--run-id", RUN_ID]) == 0
    assert s3.keys() == []
    bare = make_project(tmp_path / "bare")
    assert cli.main(["run", "--config", str(bare), "--quiet", "--upload"]) == 2  # --upload needs [storage]
    assert "--upload needs a [storage] section" in capsys.readouterr().err


def test_missing_credentials_spool_instead_of_failing_the_run(tmp_path, s3, capsys, monkeypatch):
    cfg = make_project(tmp_path, storage=s3)
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    assert cli.main(["run", "--config", str(cfg), "--quiet", "--run-id", RUN_ID]) == 0
    assert "storage credentials are missing" in capsys.readouterr().err
    assert len(list_pending(tmp_path / "reports")) == 1


@pytest.mark.parametrize("table,problem", [
    ('url = "https://bucket/prefix"', "is not s3://bucket/prefix"),
    ('url = "s3://b/p"\naddressing_style = "sideways"', "addressing_style"),
    ('url = "s3://b/p"\nbucket_color = "red"', "unknown key"),
    ('url = "s3://b/p"\naccess_key = "AKIA"', "secrets are not allowed"),
])
def test_bad_storage_config_is_a_config_error(tmp_path, table, problem):
    cfg = tmp_path / "harness.toml"
    cfg.write_text(f'[target]\nname = "x"\n[storage]\n{table}\n')
    with pytest.raises(ConfigError, match=problem):
        storage_config(load_config(cfg, environ={}))


def test_oci_style_config_parses_with_path_addressing_and_when_required_checksums(tmp_path):
    cfg = tmp_path / "harness.toml"
    cfg.write_text('[storage]\nurl = "s3://nightly-evals/chatbot"\n'
                   'endpoint_url = "https://ns.compat.objectstorage.eu-frankfurt-1.oraclecloud.com"\n'
                   'region = "eu-frankfurt-1"\naddressing_style = "path"\n')
    sc = storage_config(load_config(cfg, environ={}))
    assert (sc.bucket, sc.prefix, sc.region, sc.addressing_style) == ("nightly-evals", "chatbot", "eu-frankfurt-1",
                                                                        "path")
    store = S3Store(sc, environ={"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY})
    meta = store.client.meta
    assert meta.region_name == "eu-frankfurt-1"
    assert meta.endpoint_url == sc.endpoint_url
    assert meta.config.s3["addressing_style"] == "path"
    assert meta.config.request_checksum_calculation == "when_required"
    assert meta.config.response_checksum_validation == "when_required"


def test_an_index_that_is_not_an_index_is_never_overwritten(tmp_path, s3, capsys):
    """Issue 24: one 200 answer with an HTML body for index.json (a captive portal) must not start
    a new index holding only tonight: the run's upload is refused, kept pending, and says why."""
    cfg = make_project(tmp_path, storage=s3)
    assert cli.main(["run", "--config", str(cfg), "--quiet", "--run-id", RUN_ID]) == 0
    _no_secret(capsys)
    portal = b"<html><head><title>Sign in to the hotel Wi-Fi</title></head><body>...</body></html>"
    s3.client().put_object(Bucket=s3.bucket, Key="chatbot/index.json", Body=portal)
    second = "20250103-030405-abcd"
    cli.main(["run", "--config", str(cfg), "--quiet", "--run-id", second])
    out = _no_secret(capsys)
    assert "is not a harness index" in out and "--reindex" in out, out
    stored = s3.client().get_object(Bucket=s3.bucket, Key="chatbot/index.json")["Body"].read()
    assert stored == portal  # untouched
    assert [p.run_id for p in list_pending(tmp_path / "reports")] == [second]  # nothing lost
    # Once the real index is back, the kept upload goes through and both nights are there.
    assert cli.main(["upload", "--reindex", "--config", str(cfg)]) == 0
    assert cli.main(["upload", "--pending", "--config", str(cfg)]) == 0
    assert [e["run_id"] for e in s3.get_json("chatbot/index.json")["runs"]] == [RUN_ID, second]


def test_concurrent_index_writers_use_conditional_puts(tmp_path, s3):
    """A write over a version that changed since it was read is refused by the server (If-Match),
    so the writer reads again instead of dropping the other writer's entry."""
    from harness.night.runindex import read_index, update_index

    cfg = make_project(tmp_path, storage=s3)
    store = S3Store(storage_config(load_config(cfg, environ={})),
                    environ={"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY})
    real_get = store.get_tagged
    raced = []

    def get_then_other_writer(key):
        raw, etag = real_get(key)
        if not raced:  # another shard writes its entry between our read and our write
            raced.append(1)
            update_index(store, {"run_id": "other", "prefix": "p/other", "started_at": "2025-01-01T00:00:00"})
        return raw, etag

    store.get_tagged = get_then_other_writer
    update_index(store, {"run_id": "ours", "prefix": "p/ours", "started_at": "2025-01-02T00:00:00"})
    assert [e["run_id"] for e in read_index(store)["runs"]] == ["other", "ours"]

def _store(s3, bucket: str | None = None, retries: int = 3):
    """An S3Store on the moto server whose waits are recorded (``store.waits``), not slept, and
    whose requests are counted (``store.requests``)."""
    from harness.schema.models import StorageModel

    sc = StorageModel(url=f"s3://{bucket or s3.bucket}/p", endpoint_url=s3.endpoint, region="us-east-1",
                      addressing_style="path", retries=retries, retry_backoff_s=0.5)
    waits: list[float] = []
    store = S3Store(sc, environ={"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY},
                    sleep=waits.append)
    store.waits, store.requests = waits, []
    store.client.meta.events.register("before-send.s3", lambda **kw: store.requests.append(kw["request"].method))
    return store


def test_a_final_answer_is_not_asked_again(s3):
    """The hand-written loop put to a missing bucket three times (and botocore twice more each);
    a 404 NoSuchBucket or a 403 is final: one request, no wait."""
    store = _store(s3, bucket="no-such-bucket-here")
    with pytest.raises(StorageError, match="NoSuchBucket"):
        store.put("p/x.txt", b"x")
    assert store.requests == ["PUT"] and store.waits == []


def test_an_unreachable_store_is_retried_with_backoff_then_raised(s3):
    store = _store(s3, retries=3)
    s3.stop()
    with pytest.raises(StorageError, match="put p/x.txt"):
        store.put("p/x.txt", b"x")
    assert store.requests == ["PUT"] * 3 and len(store.waits) == 2  # one request a try: botocore adds none
    assert 0.5 <= store.waits[0] <= 1.0 and 1.0 <= store.waits[1] <= 1.5  # exponential, plus jitter


def test_every_read_goes_through_the_policy_too(s3):
    """History and merges read through get/list/head: those are retried like the puts."""
    store = _store(s3, retries=2)
    store.put("p/x.txt", b"x")
    s3.stop()
    for call in (lambda: store.get("p/x.txt"), lambda: store.list("p/"), lambda: store.head("p/x.txt")):
        store.requests.clear()
        store.waits.clear()
        with pytest.raises(StorageError):
            call()
        assert len(store.requests) == 2 and len(store.waits) == 1


def test_a_missing_index_while_runs_are_stored_is_rebuilt_not_restarted(tmp_path, s3, capsys):
    """Issue 24: index.json gone (deleted, or a 404 from a proxy) while earlier nights are stored:
    tonight's upload rebuilds the index from them instead of starting one with tonight alone."""
    cfg = make_project(tmp_path, storage=s3)
    assert cli.main(["run", "--config", str(cfg), "--quiet", "--run-id", RUN_ID]) == 0
    s3.client().delete_object(Bucket=s3.bucket, Key="chatbot/index.json")
    second = "20250103-030405-abcd"
    assert cli.main(["run", "--config", str(cfg), "--quiet", "--run-id", second]) == 0
    _no_secret(capsys)
    assert [e["run_id"] for e in s3.get_json("chatbot/index.json")["runs"]] == [RUN_ID, second]


def test_an_index_with_entries_that_are_not_objects_is_refused(tmp_path, s3, capsys):
    cfg = make_project(tmp_path, storage=s3)
    s3.client().put_object(Bucket=s3.bucket, Key="chatbot/index.json", Body=b'{"runs": [1, "x"]}')
    code = cli.main(["run", "--config", str(cfg), "--quiet", "--run-id", RUN_ID])
    out = _no_secret(capsys)
    assert code == 0 and "is not a harness index" in out and "internal error" not in out, out
    assert s3.client().get_object(Bucket=s3.bucket, Key="chatbot/index.json")["Body"].read() == b'{"runs": [1, "x"]}'


def test_reindex_never_replaces_an_index_with_an_empty_one(tmp_path, s3, capsys):
    """Issue 24: `harness upload --reindex` that lists no run (the runs were deleted, a wrong
    prefix) wrote an empty index over the one listing every night."""
    cfg = make_project(tmp_path, storage=s3)
    assert cli.main(["run", "--config", str(cfg), "--quiet", "--run-id", RUN_ID]) == 0
    client = s3.client()
    for key in s3.keys():
        if "/runs/" in key:
            client.delete_object(Bucket=s3.bucket, Key=key)
    before = s3.get_json("chatbot/index.json")
    assert cli.main(["upload", "--reindex", "--config", str(cfg)]) == 1
    out = _no_secret(capsys)
    assert "refusing to replace it with an empty index" in out, out
    assert s3.get_json("chatbot/index.json") == before
