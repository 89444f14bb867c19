"""One error tree for the harness.

    HarnessError                 base; carries the exit code the CLI uses
    ├── UsageError               bad command line                        (exit 2)
    ├── ConfigError              bad harness.toml / env override         (exit 2)
    ├── FixtureError             bad case file / golden                  (exit 2)
    ├── MissingExtra             an optional extra the suite needs is not installed (exit 2)
    ├── TargetError              the agent could not be started/reached  (exit 4)
    ├── SandboxError             a loopback server could not start       (exit 4)
    ├── StorageError             object storage failed (kept for retry)  (exit 1)
    └── RunLocked                another harness run holds the run lock  (exit 4)

A misbehaving agent never raises: it becomes failing evidence. An unreachable judge
never raises: it becomes unavailable evidence.
"""

from __future__ import annotations


class HarnessError(Exception):
    exit_code = 1

    def __init__(self, message: str, *, file: str = "", case: str = "", fix: str = "", line: int | None = None):
        self.message = message
        self.file = file
        self.case = case
        self.fix = fix
        self.line = line
        super().__init__(self.render())

    def render(self) -> str:
        where = self.file
        if where and self.line is not None:
            where = f"{where}:{self.line}"
        parts = []
        if where:
            parts.append(where)
        if self.case:
            parts.append(f"case {self.case!r}")
        head = ": ".join(parts)
        text = f"{head}: {self.message}" if head else self.message
        if self.fix:
            text += f"\n  fix: {self.fix}"
        return text


class UsageError(HarnessError):
    exit_code = 2


class ConfigError(HarnessError):
    exit_code = 2


class FixtureError(HarnessError):
    exit_code = 2


class FixtureErrors(FixtureError):
    """Several fixture problems found in one validation pass (all are reported)."""

    def __init__(self, errors: list[FixtureError]):
        self.errors = errors
        super().__init__("\n".join(e.render() for e in errors))

    def render(self) -> str:  # message already holds every error
        return self.message


class MissingExtra(HarnessError):
    """A package extra (``harness[models]``) the selected checks need is not installed; the
    message names the extra and the install command (harness/models/extra.py). In a run it is
    the reason of the checks' unavailable evidence instead."""

    exit_code = 2


class TargetError(HarnessError):
    exit_code = 4


class SandboxError(HarnessError):
    exit_code = 4


class StorageError(HarnessError):
    exit_code = 1


class RunLocked(HarnessError):
    """Another harness run holds ``<reports>/.harness.lock``; this one did not start (harness.night.runlock)."""

    exit_code = 4
