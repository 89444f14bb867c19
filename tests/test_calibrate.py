"""harness calibrate: a regression counts as caught only by cases that hold on the clean agent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.night.calibrate import calibrate, matrix_lines, write_calibration
from harness.cases import load_cases
from harness.config import load_config

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _own_record(tmp_path, monkeypatch):
    """Each test's calibrations keep their record (``last.json``) in its own folder: a test's
    few regressions must not rewrite the project's, which the next real calibration reads."""
    from harness.night import calibrate as cal_mod

    monkeypatch.setattr(cal_mod, "_record_path", lambda config: tmp_path / "record" / "last.json")


async def test_calibration_catches_and_counts_false_alarms(tmp_path):
    from harness.night import calibrate as cal_mod

    config = load_config(ROOT / "harness.toml", environ={})
    cases = load_cases(ROOT / "fixtures", layers=["robustness"], globs=["input-empty*", "cmd-*"])
    cal = await calibrate(config, cases, tmp_path / "runs", repeat=1, parallel=3, noise=False, concurrency=1,
                          only=["crash_on_empty", "unsupported_types_accepted"])
    data = write_calibration(cal, tmp_path)
    rows = {r["name"]: r for r in data["regressions"]}
    assert rows["crash_on_empty"]["caught_by"]
    # its run stopped at its first hard failure: the cases after it were never started
    assert data["early_stop"] is True and rows["crash_on_empty"]["stopped_early"] is True
    skipped = [c for c in cal.broken[0].report.cases if c.status == "skipped"]
    assert skipped and all(c.error.startswith("not started: --maxfail 1") for c in skipped)
    assert rows["unsupported_types_accepted"]["stopped_early"] is False  # nothing failed: it ran them all
    assert rows["crash_on_empty"]["first_evidence"]["check"]
    # every catch is told by at least one kind of evidence, and by none that did not catch
    by_kind = rows["crash_on_empty"]["caught_by_kind"]
    assert sorted({cid for ids in by_kind.values() for cid in ids}) == rows["crash_on_empty"]["caught_by"]
    assert rows["crash_on_empty"]["first_evidence"]["kind"] in by_kind
    # none of the selected cases exercise links, so this one must be reported as missed
    assert rows["unsupported_types_accepted"]["caught_by"] == []
    assert data["missed"] == ["unsupported_types_accepted"]
    assert data["clean"] == {**data["clean"], "runs": 1, "hard_failures": 0}
    saved = json.loads((tmp_path / "calibration.json").read_text())
    assert saved["schema"] == "harness.calibration/1"
    html = (tmp_path / "calibration.html").read_text()
    assert "crash_on_empty" in html and "missed" in html
    assert any("MISSED" in line for line in matrix_lines(data))
    # the next calibration tries the cases that caught it (its record) alone, and is caught again
    again = await calibrate(config, cases, tmp_path / "runs2", repeat=1, parallel=3, noise=False, concurrency=1,
                            only=["crash_on_empty"])
    row = again.to_dict()["regressions"][0]
    tried = [c.id for c in again.broken[0].report.cases]
    assert tried == rows["crash_on_empty"]["caught_by"][:cal_mod.FIRST_TRY]
    assert row["caught_by"] and row["stopped_early"] is True


def test_calibration_files_pass_the_redactor(tmp_path, monkeypatch):
    from harness import redact
    from harness.night.calibrate import Calibration

    key = "sk-" + "Q" * 30  # a key shape an agent's reply might echo into a failure's evidence
    cal = Calibration(regressions=[], clean=[], noisy=[], broken=[], seconds=0.0)
    plain = cal.to_dict()
    monkeypatch.setattr(Calibration, "to_dict", lambda self: {**plain, "clean": {**plain["clean"], "errors": [key]}})
    previous = redact.install(redact.Redactor({}))
    try:
        write_calibration(cal, tmp_path)
    finally:
        redact.install(previous)
    for name in ("calibration.json", "calibration.html"):
        text = (tmp_path / name).read_text()
        assert key not in text and "QQQQQQQQ" not in text, name
    assert "[redacted:" in (tmp_path / "calibration.json").read_text()


#: Seeded regressions the battery cases' hand-written checks do not pin: a digit swapped, percent said as
#: points, hedges removed, a long answer split into several messages (issue 22 Done-when 2).
BASELINE_ONLY = ("digit_swap", "percent_points", "hedges_removed", "replies_split")


async def test_calibration_holds_every_run_to_a_baseline_learned_first(tmp_path):
    """Issue 22 item 5: the regressions only the accepted nights reveal are caught by baseline.*
    evidence, learned from a noisy clean run of three attempts per case; the clean run trips none."""
    config = load_config(ROOT / "harness.toml", environ={})
    cases = load_cases(ROOT / "fixtures", layers=["reasoning"], globs=["reason-battery-*"])
    cal = await calibrate(config, cases, tmp_path / "runs", repeat=1, parallel=2, noise=False,
                          only=list(BASELINE_ONLY))
    data = write_calibration(cal, tmp_path)
    rows = {r["name"]: r for r in data["regressions"]}
    assert data["clean"]["hard_failures"] == 0, data["clean"]
    for name in BASELINE_ONLY:
        assert rows[name]["caught_by_kind"]["baseline"], rows[name]
    assert (tmp_path / "runs" / "baseline-nights").is_dir()
    # the nights ran side by side and the baseline learned case by case as they went is the one
    # their final reports give (learn.learn over the three): no case was held to anything else
    nights = data["baseline_nights"]
    assert nights["runs"] == 3 and nights["hard_failures"] == 0 and nights["relearned"] == []
    assert len(cal.nights) == 3 and all(n.report is not None for n in cal.nights)


# -- issue 26 item 3: calibrate that goes side by side -------------------------------------------

def test_the_cases_that_caught_a_regression_last_time_run_first_then_its_layer():
    from harness.night.calibrate import own_layer_first

    cases = load_cases(ROOT / "fixtures", globs=["input-empty*", "cost-calls-*", "multi-cancel-mid-task"])
    ids = [c.id for c in cases]
    layer_of = {c.id: c.layer for c in cases}
    # no record: the regression's own layer first, the rest after, each in the suite's order
    plain = [c.id for c in own_layer_first(cases, "cost")]
    assert sorted(plain) == sorted(ids) and plain == [i for i in ids if layer_of[i] == "cost"] + \
        [i for i in ids if layer_of[i] != "cost"]
    # a record: its catchers first in its order (an id no longer in the suite is ignored), nothing lost
    before = ["multi-cancel-mid-task", "gone-case", "input-empty-then-help"]
    ordered = [c.id for c in own_layer_first(cases, "cost", before)]
    assert ordered[:2] == ["multi-cancel-mid-task", "input-empty-then-help"]
    assert sorted(ordered) == sorted(ids) and len(ordered) == len(ids)
    assert ordered[2:] == [i for i in plain if i not in before]


def test_whole_suite_runs_start_their_longest_chain_first():
    from harness.night.calibrate import longest_first

    cases = load_cases(ROOT / "fixtures", globs=["cmd-*", "multi-long-conversation*"])
    out = [c.id for c in longest_first(cases)]
    assert sorted(out) == sorted(c.id for c in cases)
    # the 44-turn conversation and its variants (which wait for it) form the first chain, original first
    chain = [c.id for c in cases if c.id.split("--")[0] == "multi-long-conversation"]
    assert len(chain) >= 2 and out[:len(chain)] == chain
    # the last calibration's seconds rule over the turn count: a short case said to be slow goes first
    slow = [c.id for c in cases if c.id.startswith("cmd-")][-1]
    assert longest_first(cases, {slow: 500.0})[0].id == slow
    # what the regressions' runs wait on comes right after the long chains, before longer short ones
    short = [c.id for c in cases if c.id.startswith("cmd-")]
    wanted = longest_first(cases, wanted=[short[-1]])
    assert [c.id for c in wanted][:len(chain) + 1] == chain + [short[-1]]
    assert sorted(c.id for c in wanted) == sorted(out)


def test_the_last_calibration_is_kept_and_read_back(tmp_path, monkeypatch):
    from harness.night.calibrate import read_case_seconds, read_last, write_last

    monkeypatch.undo()  # the record where the config's cache folder says (tmp_path's own)

    (tmp_path / "harness.toml").write_text(f'[embeddings]\ncache_dir = "{tmp_path / "cache"}"\n')
    config = load_config(tmp_path / "harness.toml", environ={})
    assert read_last(config) == {} and read_case_seconds(config) == {}  # no record yet
    rows = [{"name": "a", "caught_by": ["x", "y"], "seconds": 3.5, "error": ""},
            {"name": "b", "caught_by": [], "seconds": 9.0, "error": "RuntimeError: broke"}]
    write_last(config, rows, {"b": {"caught_by": ["z"], "seconds": 1.0}, "c": {"caught_by": ["w"], "seconds": 2.0}})
    last = read_last(config)
    # this calibration's rows over the record read; a broken run's row does not replace what was known
    assert last == {"a": {"caught_by": ["x", "y"], "seconds": 3.5, "whole": False, "trend": False},
                    "b": {"caught_by": ["z"], "seconds": 1.0}, "c": {"caught_by": ["w"], "seconds": 2.0}}
    # the latency trend's regression takes the whole suite next time; one not told keeps its record
    write_last(config, rows[:1], {"c": {"caught_by": ["w"], "seconds": 2.0, "whole": True}}, whole={"a": True},
               trend={"a": True})
    last = read_last(config)
    assert last["a"]["whole"] is True and last["a"]["trend"] is True and last["c"]["whole"] is True
    # catchers kept steadiest first: a case's own check before the baseline's, then the shortest
    kinds = {"hand-written": ["y", "z"], "baseline": ["x", "y"], "judges": [], "defaults": [], "error": []}
    write_last(config, [{"name": "d", "caught_by": ["x", "y", "z"], "caught_by_kind": kinds, "seconds": 1.0}], last)
    assert read_last(config)["d"]["caught_by"] == ["y", "z", "x"]
    write_last(config, [{**rows[0], "name": "c"}], last)
    assert read_last(config)["c"]["whole"] is True
    from harness.night.calibrate import default_parallel

    assert default_parallel(config) == default_parallel() + 2  # a and c: whole-suite runs
    (tmp_path / "cache" / "calibrate" / "last.json").write_text("{not json")
    assert read_last(config) == {} and read_case_seconds(config) == {}  # a broken record is no record


async def test_a_case_no_night_reported_is_held_to_nothing_and_never_waits_forever():
    import asyncio

    from harness.checks.baseline.settings import baseline_settings
    from harness.night.calibrate import BaselineBook

    book = BaselineBook(baseline_settings(load_config(ROOT / "harness.toml", environ={})), ["night-1", "night-2"])
    waiting = asyncio.ensure_future(book.wait("some-case"))
    await asyncio.sleep(0.01)
    assert not waiting.done()  # the nights are still running: it waits
    book.night_over("night-1")
    await asyncio.sleep(0.01)
    assert not waiting.done()  # one night is still running
    book.night_over("night-2")
    await asyncio.wait_for(waiting, 2)
    await asyncio.wait_for(book.wait("asked-after-the-nights"), 2)
    await asyncio.wait_for(book.all_learned(), 2)
    await asyncio.wait_for(book.wait(None), 2)  # the trend: the run's own cases have waited already
    assert "some-case" not in book.baseline.cases
