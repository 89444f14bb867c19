"""The anomaly history reads each earlier night's digest (run/anomaly.night_digest), kept in the
cache by the results.json's path, size and modification time: the same History as parsing every
file, a changed or rewritten file read again, a broken digest computed again."""

from __future__ import annotations

import json
import os

from harness.fileio import prune_kept
from harness.run.anomaly import load_history
from tests.cost.test_cost_checks_anomaly_budget import hist_case, write_run


def _nights(reports):
    for i, tok in enumerate((1000, 1010, 990, 1005, 995)):
        write_run(reports, f"2026110{i}-000000-aaaa", [hist_case("c1", tokens=tok), hist_case("c2", status="fail")])
    write_run(reports, "20261106-000000-cccc", [hist_case("c1", tokens=10)], target="otherbot")
    (reports / "20261107-000000-dddd").mkdir()
    (reports / "20261107-000000-dddd" / "results.json").write_text("{torn")


def _same(a, b):
    return [(e.run_id, dict(e.basis), e.passed, e.calls_ms) for e in a.entries] == \
        [(e.run_id, dict(e.basis), e.passed, e.calls_ms) for e in b.entries]


def test_digests_give_the_history_parsing_gives(tmp_path):
    reports, cache = tmp_path / "reports", tmp_path / "cache"
    _nights(reports)
    plain = load_history(reports, "docbot")
    first = load_history(reports, "docbot", cache=cache)  # computes and keeps the digests
    assert len(list(cache.glob("*.json"))) == 6  # five nights and the other target's; not the torn file
    again = load_history(reports, "docbot", cache=cache)  # reads them
    assert _same(plain, first) and _same(plain, again)
    assert again.baseline("c1", "tokens", 7) == (1000.0, 5) and "c2" not in again.by_case


def test_a_rewritten_night_is_read_again_and_a_broken_digest_computed_again(tmp_path):
    reports, cache = tmp_path / "reports", tmp_path / "cache"
    _nights(reports)
    load_history(reports, "docbot", cache=cache)
    # the wrong twin: a night rewritten in place (another size and time) must not keep its old figures
    path = reports / "20261104-000000-aaaa" / "results.json"
    data = json.loads(path.read_text())
    data["cases"][0]["tokens"] = {"input": 4900, "output": 100}
    path.write_text(json.dumps(data))
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
    assert load_history(reports, "docbot", cache=cache).values("c1", "tokens")[0] == 5000.0
    for f in cache.glob("*.json"):
        f.write_text("not json")
    assert _same(load_history(reports, "docbot"), load_history(reports, "docbot", cache=cache))


def test_the_cache_is_pruned_to_its_cap(tmp_path):
    from harness.run import anomaly

    reports, cache = tmp_path / "reports", tmp_path / "cache"
    _nights(reports)
    anomaly.load_history(reports, "docbot", cache=cache)
    prune_kept(cache, keep=3)
    assert len(list(cache.glob("*.json"))) == 3
    assert json.loads(next(cache.glob("*.json")).read_text())["version"] == anomaly.DIGEST_VERSION
