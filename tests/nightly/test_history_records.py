"""A run's end reads the older nights' records from digests (night/records.py): the history and
the diff are those of reading every night whole, a night rewritten in place is read again."""

from __future__ import annotations

import json
import os

from harness.night.context import run_context
from harness.night.history import LocalRunSource, load_history, run_records
from tests.nightly.conftest import case, run, write_run


def _folder(reports):
    for i in range(14):
        status = "fail" if i in (3, 9, 11) else "pass"
        write_run(reports, run(f"202611{i + 10:02d}-020000-aaaa", [case("c1", status), case("c2", latency=100.0 + i)]))
    # an ad-hoc run (no night) and a torn file among them
    write_run(reports, run("20261119-030000-bbbb", [case("c1")], run={"kind": "adhoc"}))
    (reports / "20261120-030000-cccc").mkdir()
    (reports / "20261120-030000-cccc" / "results.json").write_text("{torn")
    return run("20261201-020000-dddd", [case("c1", "fail"), case("c2", latency=400.0)])


def _old_history(source, tonight, last=30, drift=7):
    """What run_context's history was before the digests (every night read whole)."""
    hist = load_history(source, last=max(last, drift), until=tonight["run_id"], kind="nightly")
    runs = [r for r in hist.runs if r.get("run_id") != tonight["run_id"] and r["run_id"] < tonight["run_id"]]
    return run_records((runs + [tonight])[-last:])


def test_digests_give_the_history_and_diff_of_reading_every_night(tmp_path):
    reports, digests = tmp_path / "reports", tmp_path / "digests"
    tonight = _folder(reports)
    whole = run_context(tonight, reports, source=LocalRunSource(reports))
    cold = run_context(tonight, reports, source=LocalRunSource(reports, digests=digests))
    warm = run_context(tonight, reports, source=LocalRunSource(reports, digests=digests))
    assert len(list(digests.glob("*.json"))) >= 6  # the nights older than the last eight
    for ctx in (whole, cold, warm):
        assert ctx.history == _old_history(LocalRunSource(reports), tonight)
        assert json.dumps(ctx.diff, sort_keys=True, default=str) == json.dumps(whole.diff, sort_keys=True, default=str)
        assert ctx.base == whole.base
    assert any("20261120-030000-cccc" in w for w in warm.warnings)  # the torn night is still said
    assert len(warm.history) == 15  # thirteen readable nights, not the ad-hoc run, and tonight


def test_a_night_rewritten_in_place_is_read_again(tmp_path):
    reports, digests = tmp_path / "reports", tmp_path / "digests"
    tonight = _folder(reports)
    run_context(tonight, reports, source=LocalRunSource(reports, digests=digests))
    path = reports / "20261110-020000-aaaa" / "results.json"  # the oldest: from its digest
    data = json.loads(path.read_text())
    data["cases"][0]["status"] = "fail"
    data["summary"]["passed"] -= 1
    path.write_text(json.dumps(data))
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
    again = run_context(tonight, reports, source=LocalRunSource(reports, digests=digests))
    assert again.history == _old_history(LocalRunSource(reports), tonight)
