"""pytest's habits on `harness run` (issue 25): -k EXPR, -x / --maxfail N, --lf, -v."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "ops"))

from ops_support import make_project  # noqa: E402

from harness import cli  # noqa: E402
from harness.cli.select import keyword_filter  # noqa: E402
from harness.errors import UsageError  # noqa: E402

CASES = "layer: robustness\ncases:\n" + "".join(
    f'  - id: {cid}\n    tags: [{tag}]\n    send: "m{i}"\n    expect: {{reply: {{contains: "{want}"}}}}\n'
    for i, (cid, tag, want) in enumerate([("url-good", "url", "echo: m0"), ("url-bad", "url", "nope"),
                                          ("empty-text", "input", "echo: m2"), ("long-text", "input", "nope")]))


@pytest.mark.parametrize("expr, picked", [
    ("url", {"url-good", "url-bad"}),
    ("url and not bad", {"url-good"}),
    ("input or good", {"url-good", "empty-text", "long-text"}),
    ("(url or input) and not text", {"url-good", "url-bad"}),
    ("URL", {"url-good", "url-bad"}),
])
def test_keyword_expressions(expr, picked):
    cases = [("url-good", ["url"]), ("url-bad", ["url"]), ("empty-text", ["input"]), ("long-text", ["input"])]
    match = keyword_filter(expr)
    assert {cid for cid, tags in cases if match(cid, tags)} == picked


@pytest.mark.parametrize("expr", ["url and", "(url", "and", "__import__('os')"])
def test_a_bad_keyword_expression_is_refused(expr):
    with pytest.raises(UsageError):
        keyword_filter(expr)("x", ())


def _ids(tmp_path, run_id):
    return {c["id"]: c["status"] for c in json.loads((tmp_path / "reports" / run_id / "results.json").read_text())["cases"]}


def test_k_x_and_lf_through_the_command_line(tmp_path, capsys):
    cfg = make_project(tmp_path, cases=CASES)
    assert cli.main(["run", "--config", str(cfg), "--quiet", "--run-id", "k", "-k", "url and not bad"]) == 0
    assert _ids(tmp_path, "k") == {"url-good": "pass"}
    assert cli.main(["run", "--config", str(cfg), "--quiet", "--run-id", "all"]) == 1
    assert cli.main(["run", "--config", str(cfg), "--quiet", "--run-id", "lf", "--lf"]) == 1
    assert set(_ids(tmp_path, "lf")) == {"url-bad", "long-text"}
    assert "running the 2 case(s) that did not pass in run all" in capsys.readouterr().err
    assert cli.main(["run", "--config", str(cfg), "--quiet", "--run-id", "x", "-x"]) == 1
    statuses = _ids(tmp_path, "x")
    # concurrency 1: under --maxfail a case starts only once the verdict before it is in
    assert statuses == {"url-good": "pass", "url-bad": "fail", "empty-text": "skipped", "long-text": "skipped"}
    skipped = json.loads((tmp_path / "reports" / "x" / "results.json").read_text())["cases"]
    assert any("--maxfail 1 reached" in (c.get("error") or "") for c in skipped if c["status"] == "skipped")


def test_the_selection_makes_the_run_partial_and_an_lf_that_narrows_nothing_does_not(tmp_path, capsys):
    """results.json run.kind (issue 25 item 10): -k, --lf and -x runs are partial, not the night."""
    cfg = make_project(tmp_path, cases=CASES)

    def kind(run_id: str) -> dict:
        return json.loads((tmp_path / "reports" / run_id / "results.json").read_text())["run"]

    cli.main(["run", "--config", str(cfg), "--quiet", "--run-id", "a1", "-k", "url"])
    assert kind("a1") == {"kind": "partial", "selection": ["-k", "url"]}
    cli.main(["run", "--config", str(cfg), "--quiet", "--run-id", "a2", "-x"])
    assert kind("a2")["kind"] == "partial"
    cli.main(["run", "--config", str(cfg), "--quiet", "--run-id", "a3", "--lf"])  # a2 failed: a narrower run
    assert kind("a3") == {"kind": "partial", "selection": ["--lf"]}
    empty = tmp_path / "empty-reports"
    cli.main(["run", "--config", str(cfg), "--quiet", "--run-id", "a4", "--lf", "--out", str(empty)])
    assert json.loads((empty / "a4" / "results.json").read_text())["run"] == {"kind": "nightly"}  # ran everything
