"""bench/critic_compare.py, the proof that a refactor of the critic's rules kept every verdict:
it must say "identical" only when two runs agree to the example, and name what moved otherwise
(without showing a blind set's examples under --blind)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("critic_compare", ROOT / "bench" / "critic_compare.py")
compare = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(compare)


def _heldout(said: bool | None, explanation: str = "supported") -> dict:
    return {"critic": "offline-grounding@test", "examples": [
        {"id": "0:doc.txt", "source": "doc.txt", "reply": "Secret reply text.", "label": True, "note": "paraphrase",
         "said": said, "unavailable": "", "claims": [{"claim": "Secret reply text.", "supported": said,
                                                       "explanation": explanation}]}]}


def _judges(caught_by: list[str]) -> dict:
    return {"kinds": {"number": {"mutations": 1, "caught": len(caught_by) > 0}}, "goldens": {"total": 1, "passed": 1},
            "health": {}, "health_detail": {"kappa": 0.9}, "thresholds": {}, "golden_failures": [],
            "cases": [{"id": "case-a", "kind": "number", "mutation": "digit", "caught_by": caught_by}],
            "meta": {"critic": "x"}}


def _run(tmp_path, a: dict, b: dict, *extra: str) -> int:
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    pa.write_text(json.dumps(a))
    pb.write_text(json.dumps(b))
    return compare.main([str(pa), str(pb), *extra])


def test_identical_runs_pass_and_a_moved_verdict_fails(tmp_path, capsys):
    assert _run(tmp_path, _heldout(True), _heldout(True)) == 0
    assert "identical" in capsys.readouterr().out
    assert _run(tmp_path, _heldout(True), _heldout(False)) == 1
    out = capsys.readouterr().out
    assert "right->wrong" in out and "Secret reply text" in out
    # an explanation that changed is a difference too, even with the same verdict
    assert _run(tmp_path, _heldout(True), _heldout(True, "supported by another sentence")) == 1


def test_blind_shows_counts_never_examples(tmp_path, capsys):
    assert _run(tmp_path, _heldout(True), _heldout(False), "--blind") == 1
    out = capsys.readouterr().out
    assert "1 right->wrong" in out and "Secret" not in out


def test_judges_runs_compared_mutation_by_mutation(tmp_path, capsys):
    assert _run(tmp_path, _judges(["critic.factuality"]), _judges(["critic.factuality"])) == 0
    assert _run(tmp_path, _judges(["critic.factuality"]), _judges([])) == 1
    assert "case case-a" in capsys.readouterr().out


def test_two_kinds_of_file_are_refused(tmp_path, capsys):
    assert _run(tmp_path, _heldout(True), _judges([])) == 2
    assert "are not two" in capsys.readouterr().err
