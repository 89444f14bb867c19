"""What ``harness run`` does before its heavy imports: the run id, and the target started early.

A run's target is started right after the config loads (``start_early``), before the harness
imports aiohttp, pydantic's case models and the runner, and before it validates the cases,
takes the run lock or reads the goldens: the agent's own start-up (a Python interpreter, its
imports) then runs beside the harness's instead of after it. To start the target, the sandbox's
listening sockets are bound first (``harness.sandbox.ports``): the target gets their addresses
now, and a request it sends before the sandbox serves them (getMe, setWebhook) waits in the
socket's backlog. The runner takes both over (``Runner(early=...)``): it serves the sockets and
waits for the target to be ready; a start that failed (``error``) is raised there, as exit 4,
after the cases were validated (a fixture error is still exit 2).

A run refused after this (exit 2: a bad case file, a held lock, no case selected; or Ctrl-C)
leaves no trace: ``run_loading`` (or ``discard``, when the run never got that far) stops the
target's whole process tree, closes the sockets and removes the run folder and the ``--out``
folder if this run created them. Everything here is standard library or light harness modules.
"""

from __future__ import annotations

import logging
import shutil
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from harness.errors import HarnessError, TargetError
from harness.sandbox.ports import Reserved, reserved_placeholders
from harness.schema.files import output_dir_problem
from harness.targets.http import HttpTarget

log = logging.getLogger("harness.run.early")


def new_run_id(now: datetime | None = None) -> str:
    """``YYYYMMDD-HHMMSS-xxxx`` (UTC): the four hex digits are the fraction of the second, so ids
    sort in start order even for two runs started within one second (history, diffs and the
    baseline read "earlier" as "sorts before")."""
    now = now or datetime.now(timezone.utc)
    return now.strftime("%Y%m%d-%H%M%S-") + f"{now.microsecond * 65536 // 1_000_000:04x}"


@dataclass
class EarlyStart:
    """A target started ahead of the run, with the sandbox sockets its environment names."""

    run_dir: Path
    fresh: list[Path]
    """The run folder and the ``--out`` folder, those of them that did not exist before: a
    refused run removes them again."""
    reserved: Reserved
    target: HttpTarget
    placeholders: dict[str, str] = field(repr=False)
    error: HarnessError | None = None
    """Why the target could not be started (raised when the runner brings it up: exit 4)."""
    taken: bool = False
    """The runner owns it now (``Runner(early=...)``): its ``shut_down`` stops what is left."""

    def stop(self) -> None:
        """Stop the target's whole process tree and close the sockets no server took."""
        try:
            self.target.stop_now()
        finally:
            self.reserved.close()

    def discard(self) -> None:
        """The run ended before the runner took this over: stop everything, remove the folders
        this run created (a refused run leaves no trace)."""
        self.stop()
        remove_fresh(self.fresh, self.run_dir, self.run_dir.parent)


def remove_fresh(fresh: list[Path], run_dir: Path, out_dir: Path) -> None:
    """Remove ``run_dir`` and then ``out_dir`` (only if empty), those of them ``fresh`` lists:
    the folders a refused run created."""
    if run_dir in fresh:
        shutil.rmtree(run_dir, ignore_errors=True)
    if out_dir in fresh:
        try:  # nor an --out folder it created (only when nothing else went in)
            out_dir.rmdir()
        except OSError:
            pass


def start_early(config: Any, out_dir: Path, run_id: str) -> EarlyStart | None:
    """Bind the sandbox's sockets and start ``[target].command`` now. None when there is
    nothing to start early (an in-process target, a target already running) or when the
    output folder cannot take the run (the run then refuses it, exit 2, as before)."""
    t = config.target
    if t.inprocess or not t.command or not run_id:
        return None
    if output_dir_problem(out_dir):
        return None
    run_dir = out_dir / run_id
    fresh = [p for p in (run_dir, out_dir) if not p.exists()]
    try:
        reserved = Reserved.bind()
    except HarnessError:  # the runner binds again and reports it (exit 4)
        return None
    target = HttpTarget(config, log_path=run_dir / "target.log")
    extra = {"run_dir": str(run_dir.resolve())}
    if target.port is not None:
        extra["port"] = str(target.port)
    early = EarlyStart(run_dir=run_dir, fresh=fresh, reserved=reserved, target=target,
                       placeholders=reserved_placeholders(config, reserved, **extra))
    try:
        target.spawn(early.placeholders)
    except TargetError as exc:  # reported where a run reports a target that fails to start
        early.error = exc
    except OSError as exc:  # e.g. the run folder cannot be made: the run finds out itself, as before
        log.debug("target not started early: %s", exc)
        early.discard()
        return None
    except BaseException:  # Ctrl-C, SIGTERM: nothing stays behind
        early.discard()
        raise
    return early
