"""Which nights the baseline is learned from (night/learned.py), and results.json's new fields."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from harness.night.learned import load_baseline
from harness.run.anomaly import basis
from tests.baseline.helpers import SUMMARY, case_dict, run_dict, turn_dict


def _config():
    return SimpleNamespace(target=SimpleNamespace(name="docbot"), sections={"target": {"name": "docbot"}})


CONFIG = _config()
BASIS = basis(CONFIG, 8)


def _write(reports: Path, run_id: str, *, name="docbot", basis_=None, status="pass", text=SUMMARY):
    folder = reports / run_id
    folder.mkdir(parents=True)
    run = run_dict(run_id, [case_dict("c", [turn_dict(text)], status=status)], name=name, basis=basis_ or BASIS)
    (folder / "results.json").write_text(json.dumps(run), encoding="utf-8")


def _accept(reports: Path, run_id: str):
    (reports / "baseline.json").write_text(json.dumps({"schema": "harness.baseline/1", "run_id": run_id}))


def test_the_accepted_night_and_the_ones_like_it_before_it(tmp_path):
    for rid in ("20261120-020000-aaaa", "20261121-020000-bbbb", "20261122-020000-cccc", "20261123-020000-dddd"):
        _write(tmp_path, rid)
    _write(tmp_path, "20261119-020000-eeee", name="otherbot")                       # another target
    _write(tmp_path, "20261118-020000-ffff", basis_={"concurrency": 1, "config": BASIS["config"]})  # run unlike it
    _write(tmp_path, "clean", )                                                     # calibration's label
    _accept(tmp_path, "20261122-020000-cccc")
    baseline, why = load_baseline(CONFIG, tmp_path, 8)
    assert why == "" and baseline.accepted == "20261122-020000-cccc"
    assert baseline.runs == ("20261122-020000-cccc", "20261121-020000-bbbb", "20261120-020000-aaaa")  # not after it
    assert baseline.cases["c"].samples == 3


def test_no_baseline_is_a_note_never_a_pass(tmp_path):
    _write(tmp_path, "20261120-020000-aaaa")
    baseline, why = load_baseline(CONFIG, tmp_path, 8)
    assert baseline is None and "no accepted baseline" in why
    _accept(tmp_path, "20261120-020000-aaaa")
    baseline, why = load_baseline(CONFIG, tmp_path, 4)  # tonight runs at another concurrency
    assert baseline is None and "concurrency 4 tonight, 8 on the accepted nights" in why
    _accept(tmp_path, "20261199-020000-gone")
    baseline, why = load_baseline(CONFIG, tmp_path, 8)
    assert baseline is None and "unreadable" in why


def test_switched_off(tmp_path):
    _write(tmp_path, "20261120-020000-aaaa")
    _accept(tmp_path, "20261120-020000-aaaa")
    config = SimpleNamespace(target=CONFIG.target, sections={**CONFIG.sections, "baseline": {"enabled": False}})
    baseline, why = load_baseline(config, tmp_path, 8)
    assert baseline is None and "off" in why


def test_results_json_keeps_posts_other_attempts_and_baseline():
    from harness.report.jsonfile import case_to_dict
    from harness.report.jsonread import case_from_dict
    from harness.types import CaseResult, Event, Observation, Reply, TurnObservation

    def obs(text, t0):
        reply = Reply(channel="telegram", chat="1", text=text, at=t0 + 1.0, method="sendMessage")
        post = Reply(channel="whatsapp", chat="4999", text="a post", at=t0 + 1.5, method="messages")
        events = (Event(source="telegram", name="telegram.sendMessage", at=t0 + 1.0, status=200, reply=reply),
                  Event(source="whatsapp", name="whatsapp.send", at=t0 + 1.5, status=200, reply=post))
        turn = TurnObservation(index=0, sent_at=t0, delivery_status=200, delivery_error="", replies=(reply,),
                               events=events, settled_after_s=1.0)
        return Observation(case_id="c", channel="telegram", chat_id="1", turns=(turn,), started_at=t0,
                           finished_at=t0 + 2)

    first, last = obs("first", 100.0), obs("second", 200.0)
    result = CaseResult(id="c", layer="cost", channel="telegram", status="pass", evidence=(), attempts=2,
                        observation=last, attempt_observations=(first, last), baseline={"nights": 3, "changes": []})
    d = case_to_dict(result)
    assert d["turns"][0]["posts"] == [{"channel": "whatsapp", "text": "a post", "kind": "text"}]
    assert [a["turns"][0]["replies"][0]["text"] for a in d["other_attempts"]] == ["first"]
    assert d["other_attempts"][0]["latency_ms"] == 1000.0
    assert d["baseline"] == {"nights": 3, "changes": []} and case_from_dict(d).baseline == d["baseline"]


def test_cases_accepted_from_another_run(tmp_path):
    _write(tmp_path, "20261120-020000-aaaa")
    _write(tmp_path, "20261121-020000-bbbb", text="Another accepted reply about Bergen in 2024.")
    (tmp_path / "baseline.json").write_text(json.dumps({
        "schema": "harness.baseline/1", "run_id": "20261120-020000-aaaa",
        "cases": [{"glob": "c*", "run_id": "20261121-020000-bbbb", "accepted_by": "alice", "note": "on purpose"}]}))
    baseline, why = load_baseline(CONFIG, tmp_path, 8)
    assert why == "" and "bergen" in baseline.cases["c"].turns[0].text.lower()
    assert baseline.cases["c"].runs[0] == "20261121-020000-bbbb"


def test_a_labelled_accepted_run_is_learned_alone(tmp_path):
    _write(tmp_path, "20261120-020000-aaaa")
    _write(tmp_path, "clean")
    _accept(tmp_path, "clean")
    baseline, why = load_baseline(CONFIG, tmp_path, 8)
    assert why == "" and baseline.runs == ("clean",)


def test_repeats_keep_every_attempts_observation():
    from harness.run.aggregate import combine_attempts
    from harness.types import CaseResult, Observation

    obs = [Observation(case_id="c", channel="telegram", chat_id=str(i), turns=(), started_at=0, finished_at=1)
           for i in range(3)]
    attempts = [CaseResult(id="c", layer="cost", channel="telegram", status="pass", evidence=(), observation=o)
                for o in obs]
    combined = combine_attempts(attempts)
    assert combined.attempt_observations == tuple(obs) and combined.observation is obs[-1]
