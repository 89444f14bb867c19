"""Run records edited by hand or by another program (issue 24, round 3, session 29): a journal
line, a manifest, a results.json or a baseline.json holding values of another type. `--resume`
runs such a case again, `report`, `golden accept` and `baseline` refuse the file naming the
place (exit 2), history and diff skip the run saying why; before, each crashed (exit 70). Each
bad record has its well-formed twin, which still works."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ops"))

from ops_support import echo_cases, make_project  # noqa: E402

from harness import cli  # noqa: E402


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """A project with two finished runs of three echo cases (r1, r2)."""
    root = tmp_path_factory.mktemp("records")
    cfg = make_project(root, cases=echo_cases(3))
    for run_id in ("r1", "r2"):
        assert cli.main(["run", "--config", str(cfg), "--quiet", "--run-id", run_id]) == 0
    return root


@pytest.fixture
def project(finished, tmp_path, monkeypatch) -> Path:
    copy = tmp_path / "p"
    shutil.copytree(finished, copy)
    text = (copy / "harness.toml").read_text()
    (copy / "harness.toml").write_text(text)
    monkeypatch.chdir(copy)
    return copy


def _main(argv, capsys) -> tuple[int, str]:
    capsys.readouterr()
    code = cli.main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out + out.err


def _edit_json(path: Path, edit) -> None:
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))


GOOD_LINE = {"id": "echo-0", "layer": "robustness", "channel": "telegram", "status": "pass"}


@pytest.mark.parametrize("line", [
    json.dumps({**GOOD_LINE, "tokens": 5}),
    json.dumps({**GOOD_LINE, "attempts": [1]}),
    json.dumps({**GOOD_LINE, "evidence": [5]}),
    json.dumps(GOOD_LINE)[:-1] + ', "attempts": 1e400}',
    json.dumps(GOOD_LINE)[:-1] + ', "cost_usd": NaN}',  # kept as it was, it made results.json unwritable
    "[" * 100_000 + "]" * 100_000,
], ids=["tokens-int", "attempts-list", "evidence-int", "attempts-inf", "cost-nan", "deep"])
def test_a_resumed_journal_line_of_other_types_runs_its_case_again(project, capsys, line):
    journal = project / "reports" / "r1" / "results.jsonl"
    journal.write_text(line + "\n")
    code, out = _main(["run", "--config", "harness.toml", "--quiet", "--resume", "r1"], capsys)
    assert code == 0 and "internal error" not in out, out
    notes = json.loads((project / "reports" / "r1" / "results.json").read_text())["notes"]
    assert any("0 case(s) kept from the journal" in n for n in notes) or not any("kept from" in n for n in notes)
    journal.write_text(json.dumps({**GOOD_LINE, "evidence": []}) + "\n")  # the twin: kept
    code, out = _main(["run", "--config", "harness.toml", "--quiet", "--resume", "r1"], capsys)
    notes = json.loads((project / "reports" / "r1" / "results.json").read_text())["notes"]
    assert code == 0 and any("resumed: 1 case(s) kept from the journal" in n for n in notes), (out, notes)


def test_a_manifest_selection_of_numbers_is_refused(project, capsys):
    manifest = project / "reports" / "r1" / "manifest.json"
    _edit_json(manifest, lambda m: m.setdefault("selection", {}).update(cases=[5]))
    code, out = _main(["run", "--config", "harness.toml", "--quiet", "--resume", "r1"], capsys)
    assert code == 2 and "selection.cases is [5], not a list of texts" in out and "fix:" in out, out
    _edit_json(manifest, lambda m: m["selection"].update(cases=["echo-*"]))
    assert _main(["run", "--config", "harness.toml", "--quiet", "--resume", "r1"], capsys)[0] == 0


@pytest.mark.parametrize("edit, says", [
    (lambda d: d.update(cases=[5]), "cases[0] is int, not an object"),
    (lambda d: d.update(target="x"), "target is str, not an object"),
    (lambda d: d["cases"][1].update(evidence=[3]), "cases[1].evidence[0] is not an object"),
    (lambda d: d["cases"][0].update(latency_ms="slow"), "cases[0].latency_ms is 'slow', not a number"),
    (lambda d: d["summary"].update(cost_usd="lots"), "summary.cost_usd is 'lots', not a number"),
    (lambda d: d["summary"].update(latency={"first_reply_ms": {"p50": "a", "p95": 1}}),
     "holds a value the report cannot show"),
])
@pytest.mark.parametrize("fmt", ["html", "md", "junit", "github"])
def test_report_on_an_edited_results_json_is_refused_naming_the_place(project, capsys, edit, says, fmt):
    if fmt in ("junit", "github") and "cannot show" in says:
        pytest.skip("junit.xml and the GitHub summary show no latency figure: nothing they read was edited")
    results = project / "reports" / "r1" / "results.json"
    original = results.read_text()
    _edit_json(results, edit)
    code, out = _main(["report", "reports/r1", "--format", fmt], capsys)
    assert code == 2 and says in out and "fix:" in out and "internal error" not in out, out
    results.write_text(original)
    assert _main(["report", "reports/r1", "--format", fmt], capsys)[0] == 0


@pytest.mark.parametrize("command", [["history", "--local"], ["diff", "--local"]])
def test_history_and_diff_skip_an_edited_run_saying_why(project, capsys, command):
    _edit_json(project / "reports" / "r2" / "results.json", lambda d: d["cases"].append(5))
    code, out = _main([*command, "--config", "harness.toml"], capsys)
    assert code in (0, 2) and "internal error" not in out, out  # diff: r1 alone is nothing to compare with
    assert ("skipped run r2" in out or "run r2 is unreadable" in out) and "cases[3] is int, not an object" in out, out
    _edit_json(project / "reports" / "r2" / "results.json", lambda d: d["cases"].pop())
    code, out = _main([*command, "--config", "harness.toml"], capsys)
    assert code == 0 and "skipped run" not in out, out


def test_golden_accept_refuses_an_edited_run(project, capsys):
    results = project / "reports" / "r1" / "results.json"
    _edit_json(results, lambda d: d.update(cases=[5]))
    code, out = _main(["golden", "accept", "reports/r1"], capsys)
    assert code == 2 and "cases[0] is int, not an object" in out, out  # exit 0, "0 draft(s)" before
    _edit_json(results, lambda d: d.update(cases=[]))
    assert _main(["golden", "accept", "reports/r1"], capsys)[0] == 0


def test_a_damaged_baseline_record_is_said_and_never_written_over(project, capsys):
    record = project / "reports" / "baseline.json"
    record.write_text('{"run_id": "r1", "cases": "x", "log": 7}')
    code, out = _main(["baseline", "--config", "harness.toml", "show"], capsys)
    assert code == 2 and "is not a baseline record" in out, out  # exit 70 before
    record.write_text("[1, 2]")
    code, out = _main(["baseline", "--config", "harness.toml", "show"], capsys)
    assert code == 2 and "is not a baseline record" in out, out  # "no baseline accepted" before
    code, out = _main(["baseline", "--config", "harness.toml", "accept", "r2", "--reason", "x"], capsys)
    assert code == 2 and "refusing to write over it" in out and record.read_text() == "[1, 2]", out
    record.unlink()
    assert _main(["baseline", "--config", "harness.toml", "accept", "r2", "--reason", "x"], capsys)[0] == 0
    code, out = _main(["baseline", "--config", "harness.toml", "show"], capsys)
    assert code == 0 and "r2" in out, out


@pytest.mark.parametrize("argv, says, twin", [
    (["history", "--local", "--parquet", "reports"], "--parquet 'reports' is a folder",
     ["history", "--local", "--parquet", "h.parquet"]),
    (["run", "--quiet", "--run-id", "judges"], "is the name of `harness judges`'s folder",
     ["run", "--quiet", "--run-id", "judges-1"]),
    (["run", "--quiet", "--run-id", "baseline.json"], "the accepted baseline record",
     ["run", "--quiet", "--run-id", "baseline-1"]),
    (["run", "--quiet", "--concurrency", "1001"], "--concurrency 1001 is not between 1 and 1000",
     ["run", "--quiet", "--concurrency", "1000"]),
])
def test_command_line_values_the_harness_cannot_use_are_refused(project, capsys, argv, says, twin):
    code, out = _main([argv[0], "--config", "harness.toml", *argv[1:]], capsys)
    assert code == 2 and says in out and "fix:" in out, out
    if "--parquet" in twin:
        pytest.importorskip("pyarrow")
    code, out = _main([twin[0], "--config", "harness.toml", *twin[1:]], capsys)
    assert code == 0 and "internal error" not in out, out


def test_run_against_an_unreadable_run_is_refused_before_it_starts(project, capsys):
    _edit_json(project / "reports" / "r2" / "results.json", lambda d: d.update(cases=[5]))
    code, out = _main(["run", "--config", "harness.toml", "--quiet", "--against", "r2", "--run-id", "r3"], capsys)
    assert code == 2 and "run r2 is unreadable" in out and "cases[0] is int" in out, out  # ran, dropped the diff, exit 0
    assert not (project / "reports" / "r3").exists()
    code, out = _main(["run", "--config", "harness.toml", "--quiet", "--against", "r1", "--run-id", "r3"], capsys)
    assert code == 0 and "history/diff left out" not in out, out


def test_a_run_whose_summary_counts_are_text_is_skipped_and_never_accepted(project, capsys):
    _edit_json(project / "reports" / "r2" / "results.json", lambda d: d["summary"].update(executed="many"))
    code, out = _main(["history", "--config", "harness.toml", "--local"], capsys)
    assert code == 0 and "summary.executed is 'many', not a number" in out, out  # exit 70 before
    code, out = _main(["baseline", "--config", "harness.toml", "accept", "r2", "--reason", "x"], capsys)
    assert code == 2 and "run r2 is unreadable" in out and not (project / "reports" / "baseline.json").exists(), out
    assert _main(["baseline", "--config", "harness.toml", "accept", "r1", "--reason", "x"], capsys)[0] == 0
