"""No silent minute (issue 25 item 2): a phase still running after about 2 s says so, and what
nothing uses is not done (no judge-health scoring when no case was judged)."""

from __future__ import annotations

import asyncio
import threading

from harness.report.phases import phase


def test_a_slow_phase_says_what_it_does_and_when_it_is_done():
    lines: list[str] = []
    announced = threading.Event()

    def say(line: str) -> None:
        lines.append(line)
        announced.set()

    with phase("writing the reports", say, after_s=0.0):
        assert announced.wait(30), "the phase never said it was still going"
    assert lines[0] == "writing the reports ..."
    assert lines[1].startswith("writing the reports: done in ") and lines[1].endswith(" s")


def test_a_quick_phase_says_nothing_and_quiet_says_nothing():
    lines: list[str] = []
    with phase("writing the reports", lines.append, after_s=3600):
        pass
    with phase("writing the reports", None, after_s=0.0):
        pass
    assert lines == []


def _critic(monkeypatch, tmp_path, scored):
    from harness.models import critic_health as H
    from harness.models.factories import CriticService

    monkeypatch.setattr(H, "load_examples", lambda d: ["ex1", "ex2", "ex3"])
    monkeypatch.setattr(H, "describe", lambda name, a: f"critic health of {name}")

    class Agreement:
        def as_dict(self):
            return {"accuracy": 1.0}

    async def score(critic, examples, read_source):
        scored.append(len(examples))
        return Agreement()

    monkeypatch.setattr(H, "score_critic", score)

    class Backend:
        name, source = "fake@1", "double"

    said: list[str] = []
    return CriticService(Backend(), tmp_path, tmp_path, say=said.append), said


def test_judge_health_only_when_a_case_was_judged(monkeypatch, tmp_path):
    scored: list[int] = []
    idle, said = _critic(monkeypatch, tmp_path, scored)
    asyncio.run(idle.finalize())  # built before the cases, then every case skipped (a budget stop)
    assert scored == [] and idle.health is None and said == []
    assert idle.report_notes() == ["critic health not measured: no case was judged by the critic"]

    judged, said = _critic(monkeypatch, tmp_path, scored)
    judged.backend  # a check asked it something (checks/critic.py reads .backend)
    asyncio.run(judged.finalize())
    assert scored == [3] and judged.health["accuracy"] == 1.0
    assert said[0].startswith("judge health: scoring the critic (fake@1) on 3 labelled examples")
    assert said[1].startswith("judge health: done in ")


def test_harness_run_names_every_phase_after_the_cases(tmp_path, monkeypatch, capsys):
    """Start-up, the end-of-run work, history and diff, alerts, the reports and the upload are
    each a phase that says what it does once it runs longer than about 2 s."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent / "ops"))
    from ops_support import echo_cases, make_project

    from harness import cli
    from harness.report import phases

    started: list[str] = []

    class Recorded(phases.Phase):
        def start(self):
            started.append(self.what() if callable(self.what) else self.what)
            return super().start()

    monkeypatch.setattr(phases, "Phase", Recorded)
    cfg = make_project(tmp_path, cases=echo_cases(2))
    assert cli.main(["run", "--config", str(cfg), "--run-id", "ph"]) == 0
    assert started[0].startswith("starting the sandbox and the target")
    assert started[1].startswith("after the last case: ")
    assert started[2:] == ["reading the earlier runs for the history and the diff", "the budget and the alerts",
                           f"writing the reports into {tmp_path / 'reports' / 'ph'}", "uploading the run to [storage]"]
