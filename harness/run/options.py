"""What ``harness run`` asks of the runner beyond the config (``RunOptions``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Awaitable, Callable, Mapping

from harness.checks.baseline import Baseline
from harness.run.machine import MachineMonitor
from harness.services import Services
from harness.types import CaseResult


@dataclass
class RunOptions:
    """What ``harness run`` asks for beyond the config."""

    out_dir: Path = Path("reports")
    repeat: int = 1
    concurrency: int | None = None
    run_id: str | None = None
    golden_version: str = ""
    on_case: Callable[[CaseResult], None] | None = None
    """Called as each case finishes (progress display)."""
    on_start: Callable[[int], None] | None = None
    """Called once with the number of planned cases, after the target is up."""
    on_note: Callable[[str], None] | None = None
    """Shows one line to the user while the run goes on (e.g. the embedding model starts loading)."""
    services: Services | None = None
    """Shared services (calibration runs share one embedder); the owner closes them."""
    golden_dir: Path | None = None
    """The golden answers folder (``--golden``); None: ``golden/`` next to the config."""
    budget_usd: float | None = None
    """Hard cost budget for the run (``--budget-usd``; overrides ``[budget] run_usd``)."""
    prior: Mapping[str, CaseResult] = field(default_factory=dict)
    """Cases a resumed run already finished (``--resume``): reported as they were, not run again."""
    maxfail: int | None = None
    """Start no new case once this many cases failed or errored (``-x`` / ``--maxfail N``); the
    rest are reported as skipped, with the reason."""
    identity_offset: int = 0
    """Chat ids and Telegram update ids start past this: a resumed run must not reuse the killed
    process's, which the agent may still remember (sessions, update de-duplication)."""
    baseline: Baseline | None = None
    """What the accepted nights held (``harness.night.learned``): every attempt gets its
    ``baseline.*`` evidence, the run its latency trend. None: no baseline checks."""
    baseline_wait: Callable[[str | None], Awaitable[None]] | None = None
    """Awaited before a case's ``baseline.*`` evidence (with its case id) and before the latency
    trend (with None): a ``baseline`` still being learned beside this run, case by case
    (``harness calibrate``: its accepted nights run at the same time as the runs held to them)."""
    baseline_note: str = ""
    """Why there is no ``baseline`` (results.json ``summary.baseline.note``)."""
    machine: MachineMonitor | None = None
    """The machine monitor (``machine.py``); None: the runner starts its own for the run."""

