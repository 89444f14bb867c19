"""``harness calibrate``: is the suite sensitive? Runs it against the reference agent clean
(``--repeat K`` times, and again under noise) and with each seeded regression switched on,
one at a time, and reports the catch matrix: which cases caught each regression, which
regressions were missed, and the clean agent's false alarms.

A case "catches" a regression when it fails (fail or error) with the regression on and
never failed in any clean run: a case that also fails clean is a false alarm, not a catch.
Each catch is also told by the kind of evidence that failed in it (``caught_by_kind``,
``evidence_kind``): the case's own ``hand-written`` checks, ``baseline`` invariants learned
from the accepted nights, the ``judges`` (critic, similarity), or the checks the harness adds
itself (``defaults``: the layer's default checks, the variants' equivalence, budget and
anomaly guards); a case that errored with no failing check is ``error``.
Runs are independent (own sandbox, own docbot process) and several run at once, because a
run spends most of its time waiting for the agent, not computing.

A seeded regression is caught at its first hard failure, so by default its run stops there
(``RunOptions.maxfail`` 1: no case starts after the first failure; the cases already running
finish). A regression the last calibration caught (``<cache_dir>/calibrate/last.json``) first
runs the cases that caught it then, alone (``FIRST_TRY`` of them), once the accepted nights
have learned their invariants (it waits for them without holding a slot); only when none of
them catches it now does the rest of the suite run, its own layer's cases first, as for a
regression with no record. Its ``caught_by`` holds the cases seen failing before the stop
(``stopped_early`` in calibration.json). A regression last caught by the run-wide latency
trend after a run that went to the end (``needs_whole``) runs the whole suite at once. The one
clean run (or ``--repeat K`` of them) tells every regression's false alarms: a regression run
that stopped only on cases that also fail clean runs again without them, and one whose
stopping failure did not stand (late replies re-decided it after the stop) runs again, the
whole suite. A run whose target did not start runs once more (``_one_run``).
``full=True`` (``--full``) runs the whole suite against every regression: the complete catch
matrix.

Every run goes at once, as ``parallel`` allows: the accepted nights the baseline is learned
from (``BaselineBook``), the clean and noisy runs and the regressions held to it, which wait
case by case for what the nights learned, not for the nights to end.
"""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Mapping, Sequence

from harness.config import Config, python_command
from harness.errors import TargetError
from harness.run.runner import RunOptions, run_suite
from harness.services import Services
from harness import layer as layer_registry
from harness.types import Case, CaseResult, RunReport

log = logging.getLogger("harness.night.calibrate")

NOISE_ENV = "DOCBOT_NOISE"
#: The kinds of evidence a catch is told by, in the order the matrix prints them.
KINDS = ("hand-written", "baseline", "judges", "defaults", "error")
#: Check families judged by a model (an LLM critic, an embedder): the ``judges`` kind.
JUDGE_FAMILIES = ("critic", "similarity")
#: Checks the harness derives itself even where a case's turn carries them: the variants'
#: metamorphic comparison (layers/variants.py writes it into the derived turns).
DERIVED_CHECKS = ("equivalent",)


def _written(case: Case, turn: int | None, check: str) -> bool:
    """``check`` is one the case file wrote on that turn (any turn for case-level evidence)."""
    turns = case.turns if turn is None or not 0 <= turn < len(case.turns) else (case.turns[turn],)
    return any(check == s.name or check.startswith(s.name + ".") for t in turns for s in t.checks)


def evidence_kind(check: str, turn: int | None, case: Case | None) -> str:
    """Which kind of evidence ``check`` (on ``turn`` of ``case``) is: ``baseline`` (``baseline.*``),
    ``judges`` (critic, similarity), ``hand-written`` (a check the case's own file wrote) or
    ``defaults`` (what the harness adds: the layer's default checks, the variants' ``equivalent``,
    ``budget.*``, ``anomaly.*``). ``case`` is the case as loaded, before the layer's defaults were
    added; None (unknown case) leaves ``defaults`` for anything not told by its name."""
    family = check.split(".", 1)[0]
    if family == "baseline":
        return "baseline"
    if family in JUDGE_FAMILIES:
        return "judges"
    if case is not None and family not in DERIVED_CHECKS and _written(case, turn, check):
        return "hand-written"
    return "defaults"


@dataclass(frozen=True)
class Regression:
    name: str
    layer: str
    description: str


@dataclass
class RunOutcome:
    """One calibration run: what was switched on, its report and how long it took."""

    label: str
    regression: str | None
    noise: bool
    report: RunReport | None
    seconds: float
    error: str = ""
    verdict: str = ""
    """A regression run's line, once the clean runs are in: ``caught by <case> (<kind>)`` or ``missed``."""
    partial: bool = False
    """The run was handed only part of the suite (a regression's last catchers, ``FIRST_TRY``)."""

    @property
    def stopped_early(self) -> bool:
        """Cases were left unstarted: the run reached its --maxfail, or it ran only the cases
        that caught its regression last time and one of them failed."""
        return self.report is not None and (self.partial or any(
            c.status == "skipped" and c.error.startswith("not started: --maxfail") for c in self.report.cases))

    def failing(self) -> dict[str, dict]:
        """Failing case id -> its first failing evidence (as a dict)."""
        out: dict[str, dict] = {}
        if self.report is None:
            return out
        for c in self.report.cases:
            if c.status in ("fail", "error"):
                first = next((e for e in c.evidence if e.passed is False), None)
                out[c.id] = {"layer": c.layer, "status": c.status, "check": first.check if first else "",
                             "turn": first.turn if first else None,
                             "expected": first.expected if first else "",
                             "observed": first.observed if first else "",
                             "reason": first.reason if first else c.error}
        return out

    def soft(self) -> int:
        return 0 if self.report is None else sum(1 for c in self.report.cases if c.status == "soft")

    def failing_kinds(self, cases: Mapping[str, Case]) -> dict[str, list[str]]:
        """Failing case id -> the kinds of its failing evidence (``KINDS`` order; ``error`` when
        the case errored with no failing evidence)."""
        out: dict[str, list[str]] = {}
        if self.report is None:
            return out
        for c in self.report.cases:
            if c.status not in ("fail", "error"):
                continue
            kinds = {evidence_kind(e.check, e.turn, cases.get(c.id)) for e in c.evidence if e.passed is False}
            out[c.id] = [k for k in KINDS if k in kinds] or ["error"]
        return out


def list_regressions(config: Config) -> list[Regression]:
    """Ask the target itself (``<command> --regressions``): name<TAB>layer<TAB>what it breaks."""
    t = config.target
    if not t.command:
        raise TargetError("calibration needs a target with a command that lists its regressions",
                          fix="set [target].command to the reference agent (python -m docbot)")
    cwd = config.resolve(t.cwd) if t.cwd else config.root
    done = subprocess.run([*python_command(t.command), "--regressions"], cwd=cwd, capture_output=True, text=True,
                          timeout=60)
    if done.returncode != 0:
        raise TargetError(f"`{' '.join(t.command)} --regressions` failed: {done.stderr.strip()[:500]}")
    regressions = []
    for line in done.stdout.splitlines():
        parts = line.split("\t")
        if len(parts) >= 3:
            regressions.append(Regression(parts[0].strip(), parts[1].strip(), parts[2].strip()))
    if not regressions:
        raise TargetError("the target listed no seeded regressions")
    return regressions


#: The accepted nights calibrate learns its baseline from: this many noisy clean runs of every
#: case (each a night, as a repeat of a run counts as one), the fewest nights the facts need.
BASELINE_NIGHTS = 3


class BaselineBook:
    """The calibration's baseline, learned case by case while its accepted nights run.

    The nights are ``BASELINE_NIGHTS`` noisy clean runs side by side (not one run of K attempts:
    a case's attempts follow one another, so a 44-turn conversation under noise took three of its
    own lengths). A case's invariants are learned as soon as every night has finished it (or
    has ended without it), from its passing attempts, the first night's first: what
    ``learn.learn`` makes of the nights' results.json, one case at a time (it learns every case
    on its own). The runs held to the baseline run beside the nights; a case of theirs waits for
    its own invariants before its ``baseline.*`` evidence, their latency trend for all of them
    (``RunOptions.baseline_wait``). ``baseline`` is the value handed to those runs; its ``cases``
    fill in as the nights go."""

    def __init__(self, settings, nights: Sequence[str]):
        from harness.checks.baseline import Baseline

        self.nights = tuple(nights)
        self.baseline = Baseline(accepted=self.nights[0], runs=self.nights, cases={}, settings=settings,
                                 note=f"calibration baseline: {len(self.nights)} noisy clean nights of every case "
                                      f"({', '.join(self.nights)})")
        self._seen: dict[str, dict[str, CaseResult]] = {}
        self._over: set[str] = set()
        self._ready: dict[str, asyncio.Event] = {}
        self._learning: set[str] = set()
        self._busy = 0
        self._all = asyncio.Event()

    def _event(self, case_id: str) -> asyncio.Event:
        return self._ready.setdefault(case_id, asyncio.Event())

    def add(self, night: str, result: CaseResult) -> None:
        """A night finished a case (``RunOptions.on_case``)."""
        self._seen.setdefault(result.id, {})[night] = result
        self._settle(result.id)

    def night_over(self, night: str) -> None:
        """A night ended (also one that broke): its cases not in by now never will be."""
        self._over.add(night)
        for case_id in list(self._ready) + list(self._seen):
            self._settle(case_id)
        self._maybe_all()

    def _maybe_all(self) -> None:
        if len(self._over) == len(self.nights) and not self._busy:
            self._all.set()

    def _settle(self, case_id: str) -> None:
        seen = self._seen.get(case_id, {})
        if case_id in self._learning or not all(n in seen or n in self._over for n in self.nights):
            return
        self._learning.add(case_id)
        self._busy += 1
        task = asyncio.ensure_future(self._learn(case_id, [(n, seen[n]) for n in self.nights if n in seen]))
        task.add_done_callback(lambda t: t.cancelled() or t.exception())

    async def _learn(self, case_id: str, results: list[tuple[str, CaseResult]]) -> None:
        from harness.checks.baseline.learn import learn
        from harness.report.jsonfile import case_to_dict

        def work():  # a worker thread: a long conversation's facts take ~0.3 s, every running case's clock
            runs = [{"run_id": n, "cases": [case_to_dict(r)]} for n, r in results]
            return learn(runs, self.baseline.settings).get(case_id) if runs else None

        try:
            learned = await asyncio.to_thread(work)
            if learned is not None:
                self.baseline.cases[case_id] = learned  # type: ignore[index]  # the book's own dict
        finally:
            self._busy -= 1
            self._event(case_id).set()  # a case that could not be learned is held to nothing, as before
            self._maybe_all()

    async def wait(self, case_id: str | None) -> None:
        """Until ``case_id``'s invariants are learned. None (the run's latency trend): at once,
        because the trend reads the invariants of the cases the run finished only, and each of
        them waited for its own before its evidence; a regression's run stopped at its first
        failure so ends there, not when the nights end (``all_learned`` waits for every case)."""
        if case_id is None:
            return
        self._settle(case_id)  # every night over already without it: held to nothing
        await self._event(case_id).wait()

    async def all_learned(self) -> None:
        """Until every case the nights finished is learned (and every night is over)."""
        await self._all.wait()


def learn_baseline(outcomes: Sequence["RunOutcome"], config: Config):
    """The baseline learned from the nights' finished reports (the first night's attempts
    first); None when baseline checks are off or no night has a report. What ``BaselineBook``
    learns case by case, in one go."""
    from harness.checks.baseline import Baseline
    from harness.checks.baseline.learn import learn
    from harness.checks.baseline.settings import baseline_settings
    from harness.report.jsonfile import report_to_dict

    done = [o for o in outcomes if o.report is not None]
    settings = baseline_settings(config)
    if not done or not settings.enabled:
        return None
    labels = tuple(o.label for o in done)
    cases = learn([report_to_dict(o.report) for o in done], settings)
    return Baseline(accepted=labels[0], runs=labels, cases=cases, settings=settings,
                    note=f"calibration baseline: {len(labels)} noisy clean nights of every case ({', '.join(labels)})")


def _with_env(config: Config, extra: dict[str, str]) -> Config:
    return config.with_sections(target=config.target.model_copy(update={"env": {**config.target.env, **extra}}))


def own_layer_first(cases: Sequence[Case], layer: str, caught_before: Sequence[str] = ()) -> list[Case]:
    """The cases that caught the regression last time first (``caught_before``, in that order),
    then its own layer's cases (where its first failure most likely is), the rest after, each
    in the suite's order: the same cases, only the first failure comes sooner."""
    first = {cid: i for i, cid in enumerate(caught_before)}
    known = sorted((c for c in cases if c.id in first), key=lambda c: first[c.id])
    rest = [c for c in cases if c.id not in first]
    return known + [c for c in rest if c.layer == layer] + [c for c in rest if c.layer != layer]


def longest_first(cases: Sequence[Case], seconds: Mapping[str, float] = (), wanted: Sequence[str] = ()) -> list[Case]:
    """The suite with its longest chains first: a case and its variants (``<id>--<variant>``,
    which wait for it and for one another) are one chain, as long as their ``seconds`` in the
    last calibration (or half a second a turn where none is known); chains keep their own
    order. A whole-suite run ends with its longest chain, so that one starts at once.

    ``wanted``: cases the regressions' runs are expected to stop on (the last calibration's
    catchers): their chains come right after the long ones (at least a quarter of the longest),
    so the accepted nights learn them early and those runs end early, freeing their slots."""
    seconds = dict(seconds or {})
    chains: dict[str, list[Case]] = {}
    for c in cases:
        chains.setdefault(c.id.split("--", 1)[0], []).append(c)

    def length(chain: list[Case]) -> float:
        return sum(float(seconds[c.id]) if c.id in seconds else 0.5 * len(c.turns) for c in chain)

    order = sorted(chains.values(), key=length, reverse=True)  # stable: equal chains keep the suite's order
    if wanted and order:
        want = set(wanted)
        top = length(order[0]) / 4
        long = [ch for ch in order if length(ch) >= top]
        rest = [ch for ch in order if length(ch) < top]
        order = long + [ch for ch in rest if any(c.id in want for c in ch)] + \
            [ch for ch in rest if not any(c.id in want for c in ch)]
    return [c for chain in order for c in chain]


#: What the last calibration saw per regression (``<cache_dir>/calibrate/last.json``): the cases
#: that caught it (tried first next time) and how long its run took (the longest start first).
LAST = "calibrate/last.json"
#: How many of the cases that caught a regression last time its run tries first, alone.
FIRST_TRY = 3
#: The run-wide check only a whole run can fail (``checks/baseline/trend.py``).
TREND = "baseline.latency_trend"


def _record_path(config: Config) -> Path | None:
    """``<cache_dir>/calibrate/last.json`` (None: no config to tell the cache folder)."""
    from harness.models.settings import cache_dir

    try:
        return cache_dir(config) / LAST
    except Exception:  # a stand-in config (the scheduling tests) has no cache folder: no record
        return None


def read_last(config: Config) -> dict[str, dict]:
    """The last calibration's record (empty when there is none or it does not read)."""
    path = _record_path(config)
    if path is None:
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    regs = data.get("regressions") if isinstance(data, dict) else None
    return {k: v for k, v in regs.items() if isinstance(v, dict)} if isinstance(regs, dict) else {}


def read_case_seconds(config: Config) -> dict[str, float]:
    """How long each case took in the last calibration's first night (empty: no record)."""
    path = _record_path(config)
    if path is None:
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        cases = data.get("case_seconds") or {}
        return {str(k): float(v) for k, v in cases.items() if isinstance(v, (int, float))}
    except (OSError, ValueError, AttributeError, TypeError):
        return {}


def caught_by_trend(run: RunOutcome, clean_fail: set[str]) -> bool:
    """The run-wide latency trend, which only a long run can fail, was among what caught the
    run's regression (``slow_leak``: each reply slower than the last)."""
    if run.report is None:
        return False
    return any(e.check == TREND and e.passed is False for c in run.report.cases
               if c.status in ("fail", "error") and c.id not in clean_fail for e in c.evidence)


def needs_whole(run: RunOutcome, clean_fail: set[str]) -> bool:
    """A regression's next run takes the whole suite at once: this calibration's run of it went
    to the end (nothing stopped it early) and the latency trend caught it (``caught_by_trend``)."""
    return not run.stopped_early and caught_by_trend(run, clean_fail)


#: The order a regression's catchers are tried in next time: the kinds of evidence that do not
#: vary from night to night first (a case's own checks, the harness's), the baseline's last.
STEADY_FIRST = {"hand-written": 0, "defaults": 0, "error": 1, "judges": 1, "baseline": 2}


def tries_first(row: Mapping, seconds: Mapping[str, float]) -> list[str]:
    """``row``'s catchers in the order its next run tries them (``FIRST_TRY`` of them alone):
    by the steadiest kind of evidence that caught each (``STEADY_FIRST``), then the shortest
    (the last calibration's first night), then by name."""
    kinds = row.get("caught_by_kind") or {}

    def rank(cid: str) -> tuple:
        steady = min((STEADY_FIRST.get(k, 2) for k, ids in kinds.items() if cid in ids), default=2)
        return steady, float(seconds.get(cid, 1e9)), cid

    return sorted(row["caught_by"], key=rank)


def write_last(config: Config, rows: Sequence[Mapping], last: Mapping[str, dict],
               report: RunReport | None = None, whole: Mapping[str, bool] | None = None,
               trend: Mapping[str, bool] | None = None) -> None:
    """Keep what this calibration saw for the next one, over ``last`` (the record it read: a
    calibration of a few regressions keeps the others'); a failure to write is no failure.
    Each regression's catchers are kept in the order its next run tries them (``tries_first``).
    ``whole``: regression -> its next run takes the whole suite (``needs_whole``); ``trend``:
    the latency trend caught it (``caught_by_trend``: no catcher alone can catch it again); a
    regression named in neither keeps what its record said."""
    path = _record_path(config)
    if path is None:
        return
    seconds = read_case_seconds(config)
    if report is not None:  # the first night's cases (a noisy run: its chains are the longest)
        seconds.update({c.id: round(c.observation.finished_at - c.observation.started_at, 2)
                        for c in report.cases if c.observation is not None})

    def flag(table: Mapping[str, bool] | None, name: str, key: str) -> bool:
        return bool((table or {}).get(name, (last.get(name) or {}).get(key)))

    regs = {**last, **{r["name"]: {"caught_by": tries_first(r, seconds)[:20], "seconds": r["seconds"],
                                   "whole": flag(whole, r["name"], "whole"), "trend": flag(trend, r["name"], "trend")}
                       for r in rows if not r.get("error")}}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        record: dict = {"regressions": regs, "case_seconds": seconds}
        path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    except OSError:
        pass


async def _one_run(config: Config, cases: Sequence[Case], label: str, regression: str | None, noise: bool,
                   out: Path, concurrency: int | None, services, maxfail: int | None = None,
                   run_id: str | None = None, baseline=None, repeat: int = 1, baseline_wait=None,
                   on_case=None, machine=None) -> RunOutcome:
    env = {"DOCBOT_REGRESSION": regression or ""}
    if noise:
        env[NOISE_ENV] = "1"
    started = time.perf_counter()
    tries = [run_id or label, f"{run_id or label}-restarted"]
    for k, rid in enumerate(tries):
        try:
            report = await run_suite(_with_env(config, env), cases,
                                     RunOptions(out_dir=out, run_id=rid, concurrency=concurrency,
                                                services=services, maxfail=maxfail, baseline=baseline, repeat=repeat,
                                                baseline_wait=baseline_wait if baseline is not None else None,
                                                on_case=on_case, machine=machine))
            return RunOutcome(label, regression, noise, report, time.perf_counter() - started)
        except TargetError as exc:
            # the target did not come up (raised before any case ran): once more, in a folder of its
            # own. Seen: the free port the target was given, bound by another of the runs side by
            # side before the target bound it (something already answers there)
            if k + 1 < len(tries):
                log.warning("calibration run %s: the target did not start (%s): starting it again", rid,
                            str(exc).splitlines()[0][:300])
                continue
            error = f"{type(exc).__name__}: {exc}"
        except Exception as exc:  # one broken run must not sink the calibration; it is reported
            error = f"{type(exc).__name__}: {exc}"
        break
    return RunOutcome(label, regression, noise, None, time.perf_counter() - started, error=error)


@dataclass
class Calibration:
    regressions: list[Regression]
    clean: list[RunOutcome]
    noisy: list[RunOutcome]
    broken: list[RunOutcome]
    seconds: float
    matrix: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    cases: dict[str, Case] = field(default_factory=dict)
    """The suite as loaded (case id -> case, before layer defaults): tells hand-written checks."""
    full: bool = True
    """Every regression ran the whole suite (``--full``); False: each stopped at its first failure."""
    nights: list[RunOutcome] = field(default_factory=list)
    """The accepted nights the baseline was learned from (``BASELINE_NIGHTS`` noisy clean runs)."""
    relearned: list[str] = field(default_factory=list)
    """Cases whose invariants from the nights' final reports differ from those learned as each
    night finished the case (late activity re-decided it after): the held runs saw the first."""

    def false_alarms(self, runs: list[RunOutcome]) -> set[str]:
        return {cid for r in runs for cid in r.failing()}

    def to_dict(self) -> dict:
        clean_fail = self.false_alarms(self.clean)
        noisy_fail = self.false_alarms(self.noisy)
        rows = [regression_row(reg, run, clean_fail, self.cases)
                for reg, run in zip(self.regressions, self.broken)]

        def block(runs: list[RunOutcome]) -> dict:
            return {"runs": len(runs),
                    "hard_failures": sum(len(r.failing()) for r in runs),
                    "soft": sum(r.soft() for r in runs),
                    "failing_cases": sorted({cid for r in runs for cid in r.failing()}),
                    "errors": [r.error for r in runs if r.error],
                    "seconds": [round(r.seconds, 1) for r in runs]}

        return {"schema": "harness.calibration/1",
                "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "early_stop": not self.full,
                "regressions": rows, "clean": block(self.clean), "noise": block(self.noisy),
                "baseline_nights": {**block(self.nights), "relearned": self.relearned},
                "missed": [r["name"] for r in rows if not r["caught_by"]],
                "by_kind": kind_totals({"regressions": rows}),
                "wall_seconds": round(self.seconds, 1),
                "false_alarms": {"clean": sorted(clean_fail), "noise": sorted(noisy_fail)}}


class _Unscored(Services):
    """The calibration's shared services (the same embedder, critic, verdict caches) without
    the end-of-run work: a run's ``finalize`` scores the critic on its health set, 240 judgements
    queued behind the other runs' embeddings, minutes that tell nothing about a catch. The first
    clean run keeps it (its report is the night calibration compares with)."""

    def begin(self) -> None:
        return None

    async def finalize(self) -> None:
        return None


def _shared_monitor():
    """One machine monitor for every calibration run: they all run in this process, and a
    monitor samples this process and its children every 0.2 s (8 runs' monitors read the same
    figures 8 times). Started by the first run that starts, stopped by the last that stops. A
    case's window (what excuses its latency) is read as from its own; a run's ``summary.machine``
    covers the calibration's samples so far (calibration.json reads none of it)."""
    from harness.run.machine import MachineMonitor

    class Shared(MachineMonitor):
        users = 0

        def start(self) -> None:
            self.users += 1
            super().start()

        async def stop(self) -> None:
            self.users = max(0, self.users - 1)
            if not self.users:
                await super().stop()

    return Shared()


def _unscored(services: Services) -> Services:
    return _Unscored(services.config, services.factories, services._made, services.golden_dir)


def regression_row(reg: Regression, run: RunOutcome, clean_fail: set[str], cases: Mapping[str, Case]) -> dict:
    """One regression's entry of calibration.json ``regressions``."""
    failing = run.failing()
    caught = sorted(cid for cid in failing if cid not in clean_fail)
    same_layer = [cid for cid in caught if failing[cid]["layer"] == reg.layer]
    shown = (same_layer or caught)[0] if caught else None  # the first evidence shown: its own layer first
    first = failing[shown] if shown else None
    if first:
        first = {"case": shown, **first, "kind": evidence_kind(first["check"], first["turn"], cases.get(shown))
                 if first["check"] else "error"}
    kinds = run.failing_kinds(cases)
    return {"name": reg.name, "layer": reg.layer, "description": reg.description,
            "caught_by": caught,
            "caught_by_kind": {kind: [cid for cid in caught if kind in kinds.get(cid, ())] for kind in KINDS},
            "by_layer": {layer: sorted(c for c in caught if failing[c]["layer"] == layer)
                         for layer in layer_registry.names()},
            "first_evidence": first,
            "stopped_early": run.stopped_early,
            "seconds": round(run.seconds, 1), "error": run.error}


def verdict_line(row: Mapping) -> str:
    """``caught by <case> (<kind>)`` or ``missed`` (and why, when its run broke)."""
    fe = row.get("first_evidence")
    if row.get("caught_by") and fe:
        more = len(row["caught_by"]) - 1
        return f"caught by {fe['case']} ({fe['kind']})" + (f" and {more} more" if more > 0 else "")
    return "missed" + (f" (run failed: {row['error']})" if row.get("error") else "")


def default_parallel(config: Config | None = None) -> int:
    """Calibration runs at once: the whole-suite runs (the nights, clean, noise, and the
    regressions the last calibration caught by the latency trend, ``needs_whole``) and one more
    than the cores beside them (a run mostly waits for the agent; measured on 2 cores, 8 at
    once took 180 s against 433-658 s for 3 phases of 3, bench/RESULTS.md)."""
    import os

    whole = sum(1 for r in read_last(config).values() if r.get("whole")) if config is not None else 0
    return max(2, min(16, BASELINE_NIGHTS + 2 + whole + (os.cpu_count() or 1) + 1))


async def calibrate(config: Config, cases: Sequence[Case], out: Path, *, repeat: int = 1, parallel: int = 3,
                    concurrency: int | None = None, noise: bool = True, only: Sequence[str] = (),
                    on_run=None, full: bool = False, baseline: bool = True) -> Calibration:
    """Run clean x repeat, noisy x repeat and every regression once; ``parallel`` runs at a time.

    ``baseline``: ``BASELINE_NIGHTS`` noisy clean runs (the accepted nights) start first, and
    every other run is held to the baseline learned from them, case by case as the nights
    finish each case (``BaselineBook``): the seeded regressions only the accepted nights reveal
    are caught by ``baseline.*`` evidence; the clean and noisy runs must not trip it.

    ``full`` False: a regression's run stops at its first hard failure (module docstring);
    ``on_run`` is called with each finished run, a regression's once the clean runs are in
    and its ``verdict`` is set."""
    from harness.checks.baseline.settings import baseline_settings
    from harness.services import default_factories

    regressions = list_regressions(config)
    if only:
        regressions = [r for r in regressions if r.name in only]
    # one embedder/critic for all runs; seeded regressions say nothing of the next nightly's needs
    services = Services(config, factories=default_factories(), embed_record=False)
    unscored = _unscored(services)  # the same services, no critic-health scoring at each run's end
    settings = baseline_settings(config) if baseline else None
    nights = [f"night-{i + 1}" for i in range(BASELINE_NIGHTS)] if settings is not None and settings.enabled else []
    book = BaselineBook(settings, nights) if nights else None
    held = book.baseline if book else None
    plan: list[tuple[str, str | None, bool]] = [(f"clean-{i + 1}", None, False) for i in range(repeat)]
    last = read_last(config) if not full else {}
    # the regressions whose runs took longest last time start first (they bound the wall)
    ordered = sorted(regressions, key=lambda r: -float((last.get(r.name) or {}).get("seconds") or 0))
    reg_plan = [(f"regression-{r.name}", r.name, False) for r in ordered]
    noise_plan = [(f"noise-{i + 1}", None, True) for i in range(repeat)] if noise else []
    # the whole-suite runs first (clean: every regression's verdict waits for it; noise: the
    # longest), the regressions' short runs through the slots left
    plan += noise_plan + reg_plan
    limit = asyncio.Semaphore(parallel)
    started = time.perf_counter()
    clean_runs: list[RunOutcome] = []
    clean_in = asyncio.Event()
    by_name = {r.name: r for r in regressions}
    suite = {c.id: c for c in cases}
    wait = book.wait if book else None
    # the whole-suite runs: longest chains first, then what the regressions' runs wait on
    whole = longest_first(cases, read_case_seconds(config),
                          [str(c) for r in regressions for c in ((last.get(r.name) or {}).get("caught_by") or ())[:1]])

    nights_out = out / "baseline-nights" if out is not None else None  # runs/baseline-nights/night-<k>
    machine = _shared_monitor()

    async def night(label: str) -> RunOutcome:
        assert book is not None
        try:
            async with limit:
                outcome = await _one_run(config, whole, label, None, True, nights_out, concurrency,
                                         unscored, on_case=lambda r: book.add(label, r), machine=machine)
        finally:
            book.night_over(label)
        if on_run:
            on_run(outcome)
        return outcome

    async def run(run_cases: Sequence[Case], label: str, reg: str | None, noisy: bool, maxfail: int | None,
                  shared: Services, run_id: str | None = None) -> RunOutcome:
        async with limit:
            return await _one_run(config, run_cases, label, reg, noisy, out, concurrency, shared, maxfail,
                                  run_id=run_id, baseline=held, baseline_wait=wait, machine=machine)

    async def go(label: str, reg: str | None, noisy: bool) -> RunOutcome:
        record = (last.get(reg) or {}) if reg else {}
        # a regression its last calibration caught only by the run-wide latency trend runs the
        # whole suite at once (a first stop would tell nothing, and it ran again whole)
        maxfail = None if full or reg is None or record.get("whole") else 1
        before = [str(c) for c in record.get("caught_by") or ()]
        run_cases = own_layer_first(cases, by_name[reg].layer, before) if maxfail else whole
        shared = services if label == "clean-1" else unscored
        # (not one the latency trend caught: a few cases alone show no trend)
        first = [suite[c] for c in before if c in suite][:FIRST_TRY] if maxfail and not record.get("trend") else []
        if first:
            # the cases that caught it last time, alone: it waits (without a slot) for their
            # invariants, then its run is a start-up and a few cases, not the suite's first cases
            # run side by side with them until they end (a case that waits out its timeout)
            if wait is not None:
                for c in first:
                    await wait(c.id)
            outcome = await run(first, label, reg, noisy, maxfail, shared)
            outcome.partial = True
        else:
            outcome = await run(run_cases, label, reg, noisy, maxfail, shared)
        if reg is None and not noisy:
            clean_runs.append(outcome)
            if len(clean_runs) == repeat:
                clean_in.set()
        if reg is not None:
            await clean_in.wait()
            clean_fail = {cid for r in clean_runs for cid in r.failing()}
            # last time's catchers judged passing now (one the overloaded machine left unjudged,
            # ``unavailable``, runs again with the rest)
            tried = {c.id for c in outcome.report.cases if c.status == "pass"} if first and outcome.report else set()
            if first and set(outcome.failing()) <= clean_fail:
                # last time's catchers did not catch it (or only where the clean agent fails too):
                # the rest of the suite, as a regression with no record runs it
                rest = [c for c in run_cases if c.id not in tried and c.id not in clean_fail]
                if rest:
                    nxt = await run(rest, label, reg, noisy, maxfail, unscored, run_id=f"{label}-rest")
                    nxt.seconds += outcome.seconds
                    outcome = nxt
            if outcome.stopped_early and not outcome.partial and set(outcome.failing()) <= clean_fail:
                # stopped by the clean agent's own false alarms only: again without those cases; or
                # stopped by a failure that did not stand (a late reply re-decided it after the stop):
                # again, the whole suite (the regression may need every case, e.g. a latency trend)
                standing = bool(outcome.failing())  # the whole suite when not: last time's catchers too
                rest = [c for c in run_cases if c.id not in clean_fail and not (standing and c.id in tried)]
                if rest:
                    again = await run(rest, label, reg, noisy, maxfail if standing else None, unscored,
                                      run_id=f"{label}-again")
                    again.seconds += outcome.seconds
                    outcome = again
            outcome.verdict = verdict_line(regression_row(by_name[reg], outcome, clean_fail, suite))
        if on_run:
            on_run(outcome)
        return outcome

    try:
        # the nights first in the queue for a slot (every held run's cases wait for what they
        # learn), then the rest in plan order; all of it side by side as ``parallel`` allows
        jobs = [night(n) for n in nights] + [go(*p) for p in plan]
        done = await asyncio.gather(*jobs)
    finally:
        await services.aclose()
    night_runs, outcomes = list(done[:len(nights)]), done[len(nights):]
    by_label = {o.label: o for o in outcomes}
    cal = Calibration(regressions=regressions,
                      clean=[by_label[p[0]] for p in plan if p[1] is None and not p[2]],
                      noisy=[by_label[p[0]] for p in plan if p[1] is None and p[2]],
                      broken=[by_label[f"regression-{r.name}"] for r in regressions],
                      seconds=time.perf_counter() - started, cases=suite, full=full, nights=night_runs)
    clean_fail = cal.false_alarms(cal.clean)
    write_last(config, [regression_row(r, o, clean_fail, suite) for r, o in zip(cal.regressions, cal.broken)],
               read_last(config), night_runs[0].report if night_runs else None,
               {} if full else {r.name: needs_whole(o, clean_fail) for r, o in zip(cal.regressions, cal.broken)},
               {} if full else {r.name: caught_by_trend(o, clean_fail) for r, o in zip(cal.regressions, cal.broken)})
    if book is not None:  # late replies re-decide a case after it was reported: the nights' final word
        final = learn_baseline(night_runs, config)
        if final is not None:
            cal.relearned = sorted(cid for cid in set(final.cases) | set(held.cases)
                                   if final.cases.get(cid) != held.cases.get(cid))
    return cal


def write_calibration(cal: Calibration, out: Path) -> dict:
    """calibration.json and calibration.html, through the run's redactor (a failure's evidence
    may quote what an agent said, keys included)."""
    from harness import redact

    data = redact.active().data(cal.to_dict())
    out.mkdir(parents=True, exist_ok=True)
    (out / "calibration.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    from harness.report.calibration_html import render_calibration_html

    (out / "calibration.html").write_text(render_calibration_html(data), encoding="utf-8")
    return data


def kinds_cell(row: Mapping) -> str:
    """``hand-written 3 · baseline 5``: how many catching cases each kind of evidence accounts for."""
    by_kind = row.get("caught_by_kind") or {}
    return " · ".join(f"{kind} {len(by_kind[kind])}" for kind in KINDS if by_kind.get(kind))


def kind_totals(data: Mapping) -> dict[str, int]:
    """Kind -> how many regressions it caught (a regression counts for each kind that caught it)."""
    return {kind: sum(1 for r in data["regressions"] if (r.get("caught_by_kind") or {}).get(kind)) for kind in KINDS}


def matrix_lines(data: dict) -> list[str]:
    """The catch matrix as plain text rows (rows: regressions; columns: layers)."""
    layers = [layer for layer in layer_registry.names()]
    width = max([len(r["name"]) for r in data["regressions"]] + [10])
    head = (f"{'regression'.ljust(width)}  {'layer':<10}  " + "  ".join(f"{layer:<12}" for layer in layers)
            + "  caught by (cases per kind of evidence)")
    lines = [head, "-" * len(head)]
    for r in data["regressions"]:
        cells = []
        for layer in layers:
            ids = r["by_layer"][layer]
            cells.append(f"{len(ids):>3} caught " if ids else "     -      ")
        mark = ("  " + kinds_cell(r)) if r["caught_by"] else "   MISSED"
        lines.append(f"{r['name'].ljust(width)}  {r['layer']:<10}  " + "  ".join(cells) + mark)
    c, n = data["clean"], data["noise"]
    lines.append("")
    lines.append(f"clean agent: {c['runs']} run(s), {c['hard_failures']} hard failures, {c['soft']} soft"
                 + (f" ({', '.join(c['failing_cases'][:8])})" if c["failing_cases"] else ""))
    if n["runs"]:
        lines.append(f"under noise: {n['runs']} run(s), {n['hard_failures']} hard failures, {n['soft']} soft"
                     + (f" ({', '.join(n['failing_cases'][:8])})" if n["failing_cases"] else ""))
    caught = sum(1 for r in data["regressions"] if r["caught_by"])
    lines.append(f"caught {caught} of {len(data['regressions'])} seeded regressions in {data['wall_seconds']}s"
                 + ("; each regression's run stopped at its first failure: its cases are those seen failing "
                    "(--full for the whole matrix)" if data.get("early_stop") else ""))
    totals = kind_totals(data)
    only = {kind: sum(1 for r in data["regressions"]
                      if {k for k, ids in (r.get("caught_by_kind") or {}).items() if ids} == {kind}) for kind in KINDS}
    lines.append("by kind of evidence: " + (", ".join(f"{kind} {n} ({only[kind]} by it alone)"
                                                       for kind, n in totals.items() if n) or "none"))
    for r in data["regressions"]:
        fe = r["first_evidence"]
        if fe:
            where = f" (turn {fe['turn']})" if fe.get("turn") is not None else ""  # a run-wide check has none
            lines.append(f"  {r['name']}: {fe['case']} {fe['check']}{where}: {fe['reason']}")
    return lines
