"""``--repeat K``: pass@k, pass^k, and flaky cases (pass count + Wilson interval), end to end
through the CLI against a deterministic flaky test-double agent (tests/agents/flaky.py)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from harness.run.aggregate import combine_attempts, wilson_interval
from harness.cli import main
from harness.types import CaseResult

CASES = """
layer: multiturn
defaults: {variants: none}
cases:
  - id: multi-flaky-flip
    turns:
      - send: "hello"
        expect: {reply: {regex: "^echo: hello$"}}
      - send: "flip a coin"
        expect: {reply: {regex: "^echo: flip a coin$"}}
  - id: multi-stable
    send: "steady"
    expect: {reply: {regex: "^echo: steady$"}}
"""


def _setup(tmp_path: Path) -> Path:
    (tmp_path / "fx" / "multiturn").mkdir(parents=True)
    (tmp_path / "fx" / "multiturn" / "flaky.yaml").write_text(textwrap.dedent(CASES))
    cfg = tmp_path / "harness.toml"
    cfg.write_text('[target]\nname = "flaky"\ninprocess = "tests.agents.flaky:make_app"\n'
                   '[sandbox]\nsettle_s = 0.2\nreply_timeout_s = 3\n'
                   '[target.env]\nTELEGRAM_API_BASE = "{telegram_api}"\nTELEGRAM_BOT_TOKEN = "{bot_token}"\n'
                   'TELEGRAM_WEBHOOK_SECRET = "{webhook_secret}"\n')
    return cfg


def test_repeat_3_flags_the_flaky_case(tmp_path):
    cfg = _setup(tmp_path)
    code = main(["run", "--config", str(cfg), "--fixtures", str(tmp_path / "fx"), "--repeat", "3",
                 "--concurrency", "1", "--out", str(tmp_path / "out"), "--quiet"])
    assert code == 1  # the worst attempt stands: a flaky case fails the run
    (run,) = list((tmp_path / "out").iterdir())
    d = json.loads((run / "results.json").read_text())
    by = {c["id"]: c for c in d["cases"]}
    flaky, stable = by["multi-flaky-flip"], by["multi-stable"]
    assert (flaky["attempts"], flaky["passes"], flaky["flaky"]) == (3, 2, True)
    assert flaky["pass_at_k"] is True and flaky["pass_hat_k"] is False
    lo, hi = flaky["pass_rate_ci"]
    assert 0.2 < lo < 0.67 < hi < 1.0
    assert (stable["passes"], stable["flaky"], stable["pass_at_k"], stable["pass_hat_k"]) == (3, False, True, True)
    failing = [e for e in flaky["evidence"] if e["passed"] is False]
    assert [(e["turn"], e["check"]) for e in failing] == [(1, "reply.regex")]
    summary = (run / "summary.md").read_text()
    assert "### Repeats (k=3)" in summary and "pass@3: 2/2" in summary and "pass^3: 1/2" in summary
    assert "multi-flaky-flip" in summary and "2/3" in summary
    assert 'class="flaky"' in (run / "report.html").read_text()


def _result(status: str) -> CaseResult:
    return CaseResult(id="c", layer="multiturn", channel="telegram", status=status, evidence=())


def test_combine_attempts_flaky_only_when_outcomes_differ():
    assert combine_attempts([_result("pass")] * 3).flaky is False
    assert combine_attempts([_result("fail")] * 3).flaky is False
    mixed = combine_attempts([_result("pass"), _result("fail"), _result("pass")])
    assert mixed.flaky and mixed.passes == 2 and mixed.status == "fail"
    assert combine_attempts([_result("pass")]).pass_rate_ci is None
    # an attempt the machine (or a judge) left undecided is no disagreement: not flaky, still not a pass
    undecided = combine_attempts([_result("pass"), _result("unavailable"), _result("pass")])
    assert not undecided.flaky and undecided.status == "unavailable" and undecided.passes == 2
    both = combine_attempts([_result("pass"), _result("unavailable"), _result("fail")])
    assert both.flaky and both.status == "fail"


def test_wilson_interval_is_honest_at_the_edges():
    assert wilson_interval(0, 0) is None
    lo, hi = wilson_interval(3, 3)
    assert hi == 1.0 and lo < 0.5  # three passes out of three is not certainty
    lo, hi = wilson_interval(0, 3)
    assert lo == 0.0 and hi > 0.5
    lo, hi = wilson_interval(50, 100)
    assert 0.40 < lo < 0.41 and 0.59 < hi < 0.60
