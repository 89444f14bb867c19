"""Services that some checks need beyond the observation: embedder, goldens, critic, prices.

Built lazily by the runner, once per run, so a run whose checks need none of them never
loads them (no torch import for a robustness-only run). A check that uses services is
declared with ``CheckDef(uses_services=True)`` and is called as an async function
``fn(case, observation, turn, params, services) -> Evidence``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Callable

from harness.config import Config

log = logging.getLogger("harness.services")


@dataclass
class Services:
    """A bag of lazily created run-wide services; each factory runs at most once."""

    config: Config
    factories: dict[str, Callable[["Services"], Any]] = field(default_factory=dict)
    _made: dict[str, Any] = field(default_factory=dict)
    golden_dir: Any = None
    """The golden answers folder (``--golden``); None: ``golden/`` next to the config."""
    say: Callable[[str], None] | None = None
    """Shows one line on the run's console now (``RunOptions.on_note``); None: logged only."""
    comparisons: dict[str, list[int]] = field(default_factory=dict)
    """Per purpose (e.g. "variant comparisons"): [compared without the embedding model, with it],
    over the process (calibration's runs share one Services; each run's note counts its own
    evidence: ``checks.equivalence.comparison_note``)."""
    embed_cache_all: bool = True
    """The embedder keeps every text's vector on disk (False: goldens and documents only,
    ``harness judges --no-cache``)."""
    embed_record: bool = True
    """The embedder and lingua's memo write what this run needed of their models for the next
    run to read (``embeddings/last-run.json``, ``language/memo.json``); False for work unlike a
    nightly (``harness calibrate``'s seeded regressions, ``harness judges``' mutations), whose
    new texts say nothing of it."""
    _announced: bool = False

    def tally(self, purpose: str, *, cheap: bool) -> None:
        """Count one comparison; the first that needs the embedding model while it is not loaded
        yet says so on the console (loading it takes tens of seconds on a small machine)."""
        counts = self.comparisons.setdefault(purpose, [0, 0])
        counts[0 if cheap else 1] += 1
        if cheap or self._announced or getattr(self._made.get("embedder"), "loaded", False):
            return
        self._announced = True
        line = (f"loading the embedding model for {purpose}: {counts[1]} of {sum(counts)} so far differ in "
                f"wording ({counts[0]} compared without it) ...")
        (self.say or log.info)(line)

    def get(self, name: str) -> Any:
        if name not in self._made:
            if name not in self.factories:
                raise KeyError(f"no service named {name!r} is configured")
            self._made[name] = self.factories[name](self)
        return self._made[name]

    def made(self, name: str) -> bool:
        return name in self._made

    def begin(self) -> None:
        """The run's last case has started: services with ``begin()`` start their end-of-run work
        now, beside the run's tail (e.g. the critic's judge-health score). Only services the run made."""
        for obj in list(self._made.values()):
            start = getattr(obj, "begin", None)
            if start is not None:
                try:
                    start()
                except Exception:  # finalize does the work then, and reports its failure
                    log.exception("service begin failed")

    async def finalize(self) -> None:
        """After the cases, before the report: services with ``async finalize()`` run it
        (e.g. the critic scores its judge-health set). Only services the run made."""
        for obj in list(self._made.values()):
            fin = getattr(obj, "finalize", None)
            if fin is not None:
                await fin()

    def describe(self) -> tuple[dict[str, Any], list[str]]:
        """What the made services add to the report: ``models`` entries and run notes."""
        models: dict[str, Any] = {}
        notes: list[str] = []
        for obj in self._made.values():
            if hasattr(obj, "report_models"):
                models.update(obj.report_models())
            if hasattr(obj, "report_notes"):
                notes.extend(obj.report_notes())
        return models, notes

    async def aclose(self) -> None:
        for obj in self._made.values():
            close = getattr(obj, "aclose", None)
            if close is not None:
                await close()


def default_factories() -> dict[str, Callable[[Services], Any]]:
    """The services a run can use; each layer's module registers its factory here."""
    factories: dict[str, Callable[[Services], Any]] = {}
    from harness.models.factories import FACTORIES  # reasoning: embedder, goldens, critic (no torch here)

    factories.update(FACTORIES)
    return factories
