"""--resume keeps no verdict reached on another basis (issue 24): a resumed run whose config,
goldens or documents changed since it started runs every case again, says so on stderr and in
the notes; unchanged, the finished cases are kept."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ops"))

from ops_support import echo_cases, make_project  # noqa: E402

from harness import cli  # noqa: E402


def _run(cfg: Path, capsys, *argv: str) -> tuple[int, str, dict]:
    capsys.readouterr()
    code = cli.main(["run", "--config", str(cfg), "--quiet", *argv])
    err = capsys.readouterr().err
    results = json.loads((cfg.parent / "reports" / "r1" / "results.json").read_text())
    return code, err, results


def test_a_changed_config_drops_every_verdict_on_resume(tmp_path, capsys):
    cfg = make_project(tmp_path, cases=echo_cases(2))
    assert _run(cfg, capsys, "--run-id", "r1")[0] == 0
    code, err, results = _run(cfg, capsys, "--resume", "r1")
    assert code == 0 and "run again" not in err  # nothing changed: both kept
    assert any("2 case(s) kept from the journal" in n for n in results["notes"])
    cfg.write_text(cfg.read_text() + 'ECHO_MODE = "double"\n')  # the bot now replies twice: exact 1 fails
    code, err, results = _run(cfg, capsys, "--resume", "r1")
    assert code == 1, err  # the old passes are not kept under the new config
    assert "the config changed since run r1 was started" in err
    assert results["summary"]["failed"] == 2
    assert any("every case ran again" in n for n in results["notes"])
    assert results["manifest"]["config_hash"] == results["manifest"]["basis"]["config"]
    code, err, _ = _run(cfg, capsys, "--resume", "r1")  # resumed again under the same config: kept
    assert code == 1 and "changed since" not in err


def test_changed_goldens_or_documents_run_every_case_again(tmp_path, capsys):
    cfg = make_project(tmp_path, cases=echo_cases(1))
    (tmp_path / "golden").mkdir()  # an empty folder is no golden: not a change
    assert _run(cfg, capsys, "--run-id", "r1")[0] == 0
    assert "changed since" not in _run(cfg, capsys, "--resume", "r1")[1]
    (tmp_path / "fixtures" / "documents" / "faq.md").write_text("new facts\n")
    code, err, results = _run(cfg, capsys, "--resume", "r1")
    assert code == 0 and "the documents changed since run r1" in err
    assert any("every case ran again" in n for n in results["notes"]), results["notes"]


def test_a_hand_edited_basis_is_no_crash(tmp_path, capsys):
    cfg = make_project(tmp_path, cases=echo_cases(1))
    assert _run(cfg, capsys, "--run-id", "r1")[0] == 0
    manifest = tmp_path / "reports" / "r1" / "manifest.json"
    data = json.loads(manifest.read_text())
    data["basis"] = ["not", "a", "table"]
    manifest.write_text(json.dumps(data))
    code, err, _ = _run(cfg, capsys, "--resume", "r1")
    assert code == 0 and "internal error" not in err
