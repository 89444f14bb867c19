"""Running a suite: sandbox up, target up, cases concurrently, evidence, journal, report.

The runner takes cases and a config and returns a RunReport; every finished case is
appended to ``results.jsonl`` at once, so a killed run loses nothing it had finished.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import socket
import time
import traceback
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Mapping, Sequence

import aiohttp

from harness import __version__
from harness import layer as layer_registry
from harness import redact
from harness.cases.case import overlap_groups
from harness.fileio import make_folder
from harness.run.aggregate import case_status, combine_attempts, exit_code, observation_metrics, summarize
from harness.run.aggregate import apply_soft_budget
from harness.models.settings import soft_budget
from harness.soft import is_soft, reevaluate
from harness.textgen import render
from harness.checks import REGISTRY
from harness.checks.baseline import Baseline, unchecked
from harness.checks.baseline.trend import Trend
from harness.run import held
from harness.config import Config
from harness.run.driver import Driver, Identity, make_identity
from harness.run.early import EarlyStart, new_run_id, remove_fresh
from harness.run.machine import MachineMonitor
from harness.run.overload import excuse
from harness.run.perf import BUDGET_EXIT, RunMeter
from harness.run.quiet import Limiter, QuietWindow, Slot
from harness.errors import MissingExtra, TargetError
from harness.report.journal import Journal
from harness.report.jsonfile import case_to_dict
from harness.sandbox.router import CaseRecorder
from harness.sandbox.world import Sandbox
from harness.services import Services, default_factories
from harness.targets.base import Endpoints
from harness.targets.http import HttpTarget
from harness.targets.inprocess import InProcessTarget
from harness.types import (SOURCE_DOUBLE, Case, CaseResult, Event, Evidence, Observation, Reply, RunReport, Turn,
                           TurnObservation)

log = logging.getLogger("harness.run.runner")

# A turn whose update got no answer at all is not waited on for the full reply timeout.
GRACE_AFTER_FAILED_DELIVERY_S = 1.0


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
    baseline_note: str = ""
    """Why there is no ``baseline`` (results.json ``summary.baseline.note``)."""
    machine: MachineMonitor | None = None
    """The machine monitor (``machine.py``); None: the runner starts its own for the run."""


@dataclass
class _Attempt:
    """Mutable bookkeeping of one case attempt while it runs."""

    case: Case
    rec: CaseRecorder
    users: dict[str, Identity]
    """Every simulated user's identity, by name (``users:``); one entry '' for a one-user case."""
    turns: list[TurnObservation] = field(default_factory=list)
    current: int = -1
    current_sent_at: float = 0.0
    current_delivery: tuple[int | None, str] | None = None
    """The in-flight turn's webhook answer (status, error) once it came: a timeout keeps it."""
    bot_message_ids: dict[str, str] = field(default_factory=dict)
    """The last message the agent sent each user (callbacks press its buttons)."""
    seen: int | None = None
    """How many of the recorder's events the turns observed so far hold (late replies come after)."""
    scripts: list = field(default_factory=list)
    """The in-flight turn's armed model scripts (``model:``, harness/sandbox/model_double.py)."""
    settle_timed_out: bool = False
    """The last ``_settle`` gave up at the reply timeout (extended by the harness's own loop lag)."""

    @property
    def ident(self) -> Identity:
        """The first (or only) user's identity: the case's chat."""
        return next(iter(self.users.values()))

    def user_of(self, turn: Turn) -> str:
        return turn.user or next(iter(self.users))

    def ident_of(self, turn: Turn) -> Identity:
        return self.users[self.user_of(turn)]


def unattributed_notes(events: Sequence, cases_from: float, concurrency: int) -> list[str]:
    """The run's notes on calls no case could claim: those before the first case are the
    target's start-up (getMe, setWebhook), not an attribution failure."""
    notes = []
    startup = [e for e in events if e.at < cases_from]
    later = [e for e in events if e.at >= cases_from]
    if startup:
        notes.append(f"{len(startup)} boundary call(s) during target start-up, before the first case "
                     f"({', '.join(sorted({e.name for e in startup}))}): attributed to \"target start-up\"")
    if later:
        notes.append(f"{len(later)} boundary call(s) could not be attributed to a case "
                     f"({', '.join(sorted({e.name for e in later}))})"
                     + ("; run with --concurrency 1 to attribute every call" if concurrency > 1 else
                        ": made while no case was running"))
    return notes


def case_texts(case: Case) -> list[str]:
    """The texts a case's users send, as written (normalised: case and spacing), sorted: cases
    sharing one are not run side by side (``Runner._run_cases``)."""
    out = set()
    for turn in case.turns:
        if turn.kind in ("callback", "forged"):
            continue
        for t in [turn.send, *(turn.options.get("texts") or [])]:
            if isinstance(t, str) and t.strip():
                out.add(" ".join(t.split()).lower())
    return sorted(out)


def turn_texts(turn: Turn, values: Mapping[str, str]) -> list[str]:
    """What the user says in ``turn`` as the driver sends it (placeholders filled): the text,
    a burst's texts, a caption; a button's data and a refused (forged) delivery say nothing."""
    if turn.kind in ("callback", "forged"):
        return []
    raw = [turn.send] + list(turn.options.get("texts") or []) + [turn.options.get("caption")]
    out = []
    for t in raw:
        if isinstance(t, str) and t.strip():
            try:
                out.append(render(t, values))
            except (KeyError, ValueError, IndexError):  # a caption the driver sends as written
                out.append(t)
    return out

def double_notes(gateway, scripts=None) -> list[str]:
    """The run's notes on the model double: how many LLM calls it answered, scripted or not,
    and how many calls could not be tied to a scripted turn."""
    n = getattr(gateway, "double_calls", 0) if gateway is not None else 0
    notes = []
    if n:
        scripted = gateway.double_scripted
        notes.append(f"the model double answered {n} LLM call(s) ({scripted} from the cases' model: scripts, "
                     f"{n - scripted} with its default answer: no script and no upstream for them); their "
                     f"evidence is labelled source {SOURCE_DOUBLE}")
    unmatched = getattr(scripts, "unmatched", 0)
    if unmatched:
        notes.append(f"{unmatched} LLM call(s) came while scripted turns ran but carried nothing that ties them "
                     f"to a case (no user field, no document token), so no model: script answered them; run "
                     f"with --concurrency 1 to give each call the script of the turn in flight")
    return notes


def _warm_encodings() -> None:
    try:
        from harness.models.tokens import warm

        warm()
    except Exception as exc:  # counting falls back to 'missing' tokens, reported per call
        log.warning("tiktoken encodings could not be loaded in advance: %s", exc)


def _warm_language() -> None:
    try:
        from harness.checks.form import _detector

        _detector()
    except Exception as exc:  # the language check reports it as unavailable
        log.warning("the language detector could not be loaded in advance: %s", exc)


def _expected_reply_bounds(turn: Turn) -> tuple[int, int | None]:
    """How many replies the turn's own checks expect (default: at least one)."""
    for spec in turn.checks:
        if spec.name == "replies":
            p = spec.params
            lo = p.get("exact", p.get("min", 0))
            return lo, p.get("exact", p.get("max"))
    return 1, None


async def evaluate(case: Case, obs: Observation, services: Services | None = None) -> list[Evidence]:
    """Run every check of every turn through the dispatch table.

    Pure checks first; checks that use services (similarity, critic) run only when every
    pure check passed, since judging the content of a reply that already failed costs
    money and time and cannot change the verdict.
    """
    evidence, deferred = _pure_evidence(case, obs)
    if not deferred:
        return evidence
    if any(e.passed is False for e in evidence):
        for index, spec, definition in deferred:
            evidence.append(Evidence(check=spec.name, turn=index, availability="unavailable", passed=None,
                                     reason="not evaluated: a deterministic check of this case already failed",
                                     evaluator=definition.evaluator))
        return evidence
    for index, spec, definition in deferred:
        try:
            first = await definition.fn(case, obs, index, spec.params, services)
            if is_soft(first):  # one automatic re-evaluation (harness/soft.py); the second verdict stands
                first = await reevaluate(first, lambda d=definition, i=index, p=spec.params:
                                         d.fn(case, obs, i, p, services))
            evidence.append(first)
        except MissingExtra as exc:  # harness[models] not installed: its one line is the reason (no traceback)
            evidence.append(Evidence(check=spec.name, turn=index, availability="unavailable", passed=None,
                                     reason=exc.message, evaluator=definition.evaluator))
        except Exception as exc:  # an unreachable judge is unavailable evidence, never a crash
            log.exception("check %s crashed on case %s", spec.name, case.id)
            evidence.append(_crashed(definition, spec, index, exc))
    return evidence


def _pure_evidence(case: Case, obs: Observation) -> tuple[list[Evidence], list]:
    """The deterministic checks' evidence, and the (turn, spec, definition) of the checks that use services."""
    evidence: list[Evidence] = []
    deferred = []
    for index, turn in enumerate(case.turns):
        for spec in turn.checks:
            definition = REGISTRY[spec.name]
            if definition.uses_services:
                deferred.append((index, spec, definition))
                continue
            evidence.append(_guarded(definition, spec, index, case, lambda d=definition, i=index, p=spec.params:
                                     d.fn(case, obs, i, p)))
    return evidence, deferred


def _with_late(obs: Observation, late: Sequence[Event], recorded: int) -> Observation:
    """``obs`` with what came after it was taken: late replies go to the turn of their chat, every
    other late event to the turn recorded under ``recorded`` (the last group's first turn)."""
    turns = []
    for t in obs.turns:
        if t.index < recorded:
            turns.append(t)
            continue
        have = {id(e) for e in t.events}
        chat = t.chat or obs.chat_id
        mine = [e for e in late if id(e) not in have and (
            (e.reply.chat == chat) if e.reply is not None else t.index == recorded)]
        replies = tuple(e.reply for e in mine if e.reply is not None and e.reply.channel == obs.channel)
        turns.append(replace(t, replies=t.replies + replies, events=t.events + tuple(mine)) if mine else t)
    return replace(obs, turns=tuple(turns))


@dataclass
class _Listening:
    """A finished attempt whose chats stay open until the run ends (late replies are still its own)."""

    case: Case
    rec: CaseRecorder
    seen: int
    """How many of ``rec.events`` the attempt's observation holds."""
    result: CaseResult
    """The attempt's own result (before repeats were combined)."""
    number: int = 0
    """Which attempt of the case (``--repeat``)."""


def _crashed(definition, spec, index: int, exc: Exception) -> Evidence:
    return Evidence(check=spec.name, turn=index, availability="unavailable", passed=None,
                    reason=f"the check itself crashed: {type(exc).__name__}: {exc}", evaluator=definition.evaluator)


def _guarded(definition, spec, index: int, case: Case, call) -> Evidence:
    try:
        return call()
    except Exception as exc:  # a check bug must not pass or crash the run
        log.exception("check %s crashed on case %s", spec.name, case.id)
        return _crashed(definition, spec, index, exc)


class Runner:
    def __init__(self, config: Config, options: RunOptions, early: EarlyStart | None = None):
        self.config = config
        self.options = options
        self.run_id = options.run_id or new_run_id()
        self.run_dir = options.out_dir / self.run_id
        if early is not None:
            early.taken = True  # this runner stops it (shut_down), also when it never comes up
            if early.run_dir != self.run_dir:  # pragma: no cover - the CLI starts it for this run
                early.discard()
                early = None
        self._early = early
        """The target ``harness run`` started before its imports (``early.py``), until ``_bring_up``."""
        self.sandbox = Sandbox(config)
        self.endpoints = Endpoints()
        self._counter = options.identity_offset
        self._target = None
        self._notes: list[str] = []
        self._own_services = options.services is None
        self.services = options.services or Services(config, factories=default_factories())
        if options.on_note is not None and self.services.say is None:
            self.services.say = options.on_note
        if options.golden_dir is not None:
            self.services.golden_dir = options.golden_dir
        self.meter = RunMeter(config, options.out_dir, self.run_id, options.budget_usd,  # cost layer (perf.py)
                              concurrency=options.concurrency)
        self.quiet = QuietWindow(config.sandbox.settle_s)  # quiet windows learned from the agent (quiet.py)
        # the harness's loop lag and the CPU it is given: latency only a starved machine explains (machine.py)
        self.machine = options.machine if options.machine is not None else MachineMonitor()
        self._listening: list[_Listening] = []
        self._attempts: dict[str, list[CaseResult]] = {}
        self._up: asyncio.Future | None = None
        self._placeholders: dict[str, str] = {}
        self._appending: set[asyncio.Future] = set()
        self._trend: Trend | None = None

    def _warm_services(self, cases: Sequence[Case]):
        """Start building the services the selected layers declare, in a worker thread."""
        judged = dict.fromkeys(c.layer for c in cases
                               if any(REGISTRY[s.name].uses_services for t in c.turns for s in t.checks))
        declared = (s for name in judged for s in getattr(layer_registry.get(name), "services", ()))
        wanted = [s for s in dict.fromkeys(declared) if s in self.services.factories and not self.services.made(s)]
        if not wanted:
            return None

        # a similarity or critic check always encodes: its model is loaded now, not mid-run (where it
        # would stall the loop every case in flight is timed on); a variant's comparison often needs
        # no model at all (checks/equivalence.py), so for variants alone it stays lazy
        encodes = any(s.name == "similarity" or s.name.startswith("critic.") for c in cases
                      for t in c.turns for s in t.checks)

        def build() -> None:
            for name in wanted:
                try:
                    service = self.services.get(name)
                    front = getattr(service, "front", None)
                    if encodes and front is not None and hasattr(front, "load_now"):  # the embedder's model
                        front.load_now()
                except MissingExtra:  # harness[models]: the command line said so once, each check says it again
                    pass
                except Exception as exc:  # the check that needs it reports it as unavailable
                    log.warning("service %s could not be built in advance: %s", name, exc)

        return asyncio.get_running_loop().run_in_executor(None, build)

    def _next_identity(self) -> Identity:
        self._counter += 1
        return make_identity(self._counter, secrets.token_hex(6))

    def _make_target(self):
        t = self.config.target
        if t.inprocess:
            return InProcessTarget(t.inprocess, dict(t.env), state_path="/state/{chat_id}" if t.state_url else "")
        return HttpTarget(self.config, log_path=self.run_dir / "target.log")

    async def run(self, cases: Sequence[Case]) -> RunReport:
        started = datetime.now(timezone.utc)
        redact.for_run(self.config)  # the run's redactor (built by the CLI already; here for direct callers)
        make_folder(self.run_dir)  # a file an agent left in its place is moved aside (harness.fileio)
        journal = Journal(self.run_dir / "results.jsonl")
        results: list[CaseResult] = []
        cases_from = float("inf")
        self.meter.start(cases)
        self.machine.start()
        try:
            early = self._up is not None  # the CLI brought the target up while it loaded the cases
            await self.bring_up(cases)
            warm = self._warm_services(cases) if early else None
            if warm is not None:
                await warm
            placeholders = self._placeholders
            # Each layer's default checks (harness.layer): the webhook answered, no leak, the state probe...
            context = {"state_probe": bool(self.endpoints.state_url)}
            cases = [layer_registry.with_default_checks(c, context) for c in cases]
            cases_from = time.time()  # a call before this is the target's own start-up (getMe, setWebhook)
            if self.options.on_start:
                self.options.on_start(len(cases))
            timeout = aiohttp.ClientTimeout(total=None)
            async with aiohttp.ClientSession(timeout=timeout) as session:
                driver = Driver(self.config, self.endpoints, self.sandbox.router, session, placeholders,
                                whatsapp_emulator=self.sandbox.whatsapp, telegram_emulator=self.sandbox.telegram)
                if self.options.identity_offset:  # --resume: update ids past the killed process's
                    from harness.channels.telegram_updates import TelegramUpdates

                    driver.tg = TelegramUpdates(start_update_id=self.options.identity_offset + 1,
                                                message_ids=driver.tg.message_ids, bot_user=driver.tg.bot_user)
                await driver.handshake(cases)  # Meta's GET verification of the WhatsApp webhook (exit 4)
                # one case at a time: a call with no key takes the script of the turn in flight (model_double.py)
                self.sandbox.scripts.solo = (self.options.concurrency or self.config.sandbox.concurrency) == 1 \
                    or len(cases) == 1
                await self._run_cases(cases, driver, journal, results)
            try:  # services' end-of-run work, e.g. the critic's judge-health score
                await self.services.finalize()
            except Exception as exc:
                log.exception("services finalize failed")
                self._notes.append(f"end-of-run service work failed: {type(exc).__name__}: {exc}")
        finally:
            await self.machine.stop()
            await self.shut_down()
            if self._own_services:
                await self.services.aclose()
            if self._appending:  # lines handed to a worker thread are on disk before the journal closes
                await asyncio.gather(*self._appending, return_exceptions=True)
            journal.close()
        self._notes += unattributed_notes(self.sandbox.router.unattributed, cases_from,
                                          self.options.concurrency or self.config.sandbox.concurrency)
        self._notes += double_notes(self.sandbox.gateway, self.sandbox.scripts)
        return self._report(cases, results, started)

    async def bring_up(self, cases: Sequence[Case] = ()) -> None:
        """Sandbox and target up (once). ``run`` calls it; the CLI calls it first, while it
        still loads the cases (``run_loading``), so the target's start-up costs no wall time."""
        if self._up is None:
            self._up = asyncio.ensure_future(self._bring_up(cases))
        await self._up

    async def _bring_up(self, cases: Sequence[Case]) -> None:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        early, self._early = self._early, None
        if early is not None:  # started already, with the sockets the sandbox now serves
            target = self._target = early.target
        else:
            target = self._target = self._make_target()
        self.sandbox.target_port = getattr(target, "port", None)
        await self.sandbox.start(early.reserved if early is not None else None)
        placeholders = self.sandbox.placeholders(run_dir=str(self.run_dir.resolve()))
        if getattr(target, "port", None) is not None:
            placeholders["port"] = str(target.port)
        self._placeholders = placeholders
        if early is not None and early.error is not None:
            raise early.error  # the target could not be started (exit 4)
        warm = self._warm_services(cases) if cases else None  # e.g. the embedder loads while the target starts
        # tiktoken's encodings load now, not on the bot's first LLM call (the gateway counts tokens)
        encodings = asyncio.get_running_loop().run_in_executor(None, _warm_encodings)
        # so does the language detector when a case checks a reply's language: built inside a
        # check it would hold the event loop (every running case's clock) for seconds
        judges_language = self.options.baseline is not None or any(
            s.name.endswith(".language") for c in cases for t in c.turns for s in t.checks)  # baseline.language too
        detector = asyncio.get_running_loop().run_in_executor(None, _warm_language) if judges_language else None
        self.endpoints = await target.start(placeholders)
        await encodings
        if detector is not None:
            await detector
        if warm is not None:
            await warm

    async def shut_down(self) -> None:
        """Target and sandbox down (whatever of them came up)."""
        early, self._early = self._early, None
        if early is not None:  # never brought up (the cases failed to load first): stop what started early
            await asyncio.to_thread(early.stop)
        if self._target is not None:
            await self._target.stop()
        await self.sandbox.stop()

    async def _run_cases(self, cases: Sequence[Case], driver: Driver, journal: Journal,
                         results: list[CaseResult]) -> None:
        # Concurrency bounds the cases the agent works on: a case that only watches its last
        # quiet window has given its slot back (quiet.py); a started case's next attempt goes first.
        limit = Limiter(self.options.concurrency or self.config.sandbox.concurrency)
        self._failed = 0
        # Cases that send the same text never run at the same time: a call that names no case
        # (no user field, most bots) is attributed by the text it carries (sandbox/router.py), and
        # a text two running cases sent would identify neither (a metamorphic variant replays its
        # original's turns word for word). Taken in sorted order, before the slot: no deadlock.
        text_locks: dict[str, asyncio.Lock] = {}

        async def one(case: Case) -> None:
            if case.id in self.options.prior:  # --resume: finished before the kill, already journaled
                results.append(self.options.prior[case.id])
                if self.options.on_case:
                    self.options.on_case(self.options.prior[case.id])
                return
            slot = Slot(limit)
            held: list[asyncio.Lock] = []
            try:
                for text in case_texts(case):
                    lock = text_locks.setdefault(text, asyncio.Lock())
                    await lock.acquire()
                    held.append(lock)
                await slot.take()
                skipped = self.meter.gate(case)  # the cost budget: no new case once its projection is crossed
                if skipped is None and self.options.maxfail is not None and self._failed >= self.options.maxfail:
                    skipped = CaseResult(id=case.id, layer=case.layer, channel=case.channel, status="skipped",
                                         evidence=(), attempts=0, cost_usd=0.0, file=case.file, tags=case.tags,
                                         error=f"not started: --maxfail {self.options.maxfail} reached "
                                               f"({self._failed} case(s) failed or errored)")
                attempts = []
                # Under a hard cost budget a case keeps its slot until it is measured: the guard
                # projects from finished cases, so none may start on a spend it cannot see yet.
                # So does --maxfail: a case may start only once the verdicts before it are in.
                early = slot if self.meter.guard.limit is None and self.options.maxfail is None else None
                self._attempts[case.id] = attempts  # late activity may re-decide one (_late_replies)
                for k in range(0 if skipped else max(1, self.options.repeat)):
                    await slot.take(priority=0 if k else 1)
                    attempts.append(self.meter.measure(excuse(case, await self._attempt(case, driver, early, k),
                                                              self.machine)))
                result = skipped or excuse(case, self.meter.finish(case, attempts, combine_attempts(attempts)),
                                           self.machine)
            finally:
                slot.give()
                for lock in reversed(held):
                    lock.release()
            results.append(result)
            if result.status in ("fail", "error"):
                self._failed += 1
            await self._journal(journal, case_to_dict(result))
            if self.options.on_case:
                self.options.on_case(result)

        await asyncio.gather(*(one(c) for c in cases))
        await self._run_quiet()
        await self._late_replies(results, journal)
        order = {c.id: i for i, c in enumerate(cases)}
        results.sort(key=lambda r: order.get(r.id, 0))
        await self._latency_trend(cases, results, journal)

    async def _baseline_evidence(self, case: Case, obs: Observation, latency: float | None,
                                 evidence: list[Evidence]) -> tuple[list[Evidence], dict | None]:
        return await held.with_baseline(self.options.baseline, case, obs, latency, evidence)

    async def _latency_trend(self, cases: Sequence[Case], results: list[CaseResult], journal: Journal) -> None:
        if self.options.baseline is None:
            return
        self._trend, changed = held.apply_trend(self.options.baseline, cases, results)
        for i in changed:
            await self._journal(journal, case_to_dict(results[i]))  # the later line stands

    async def _journal(self, journal: Journal, record: dict) -> None:
        """Append a finished case's line in a worker thread: its fsync holds up this case only,
        not the event loop of every other case. The line is on disk when this returns (as with
        ``Journal.append``); a cancelled case's line already handed over is still written, and
        ``run`` waits for it before it closes the journal."""
        future = asyncio.ensure_future(asyncio.to_thread(journal.append, record))
        self._appending.add(future)
        future.add_done_callback(self._appending.discard)
        await asyncio.shield(future)

    async def _run_quiet(self) -> None:
        """One quiet window for the whole run: wait until nothing reached the sandbox for one
        closing window (``quiet.py``; at most ``reply_timeout_s``), so a late reply to any case is still seen."""
        sb = self.config.sandbox
        start = time.time()
        while True:
            now = time.time()
            last = self.sandbox.router.last_event_at or start  # a case's own window may already cover it
            quiet, window = now - last, self.quiet.closing
            if quiet >= window or now - start >= sb.reply_timeout_s:
                return
            await asyncio.sleep(window - quiet + 0.002)

    async def _late_replies(self, results: list[CaseResult], journal: Journal) -> None:
        """What reached a case after it was reported (a reply in its chat, a call naming it): the
        attempt is evaluated again with it, on the turn it came in. A check it breaks fails the
        case (a duplicate is a regression however late it comes); a check it completes (the real
        answer after a "working on it") holds. A case whose verdict or evidence changed has its
        journal line written again (the later line stands)."""
        by_id = {r.id: i for i, r in enumerate(results)}
        redone: dict[str, dict[int, tuple[CaseResult, list[Evidence]]]] = {}
        case_of = {item.case.id: item.case for item in self._listening}
        for item in self._listening:
            self.sandbox.router.close(item.rec)
            obs = item.result.observation
            late = [e for _, e in item.rec.events[item.seen:] if e.source != "driver"]  # the agent's doing
            if obs is None or not late or item.case.id not in by_id:
                continue
            new_obs = _with_late(obs, late, item.rec.turn)
            if any(e.reply is not None for e in late):
                evidence = await evaluate(item.case, new_obs, self.services)
            else:  # calls only: what judged the replies stands, the deterministic checks run again
                pure, _ = _pure_evidence(item.case, new_obs)
                written = [e for e in item.result.evidence if not e.check.startswith("baseline.")]
                kept = [e for e in written if REGISTRY[e.check].uses_services] \
                    if all(e.check in REGISTRY for e in written) else []
                evidence = pure + kept
            evidence, base_info = await self._baseline_evidence(item.case, new_obs, observation_metrics(new_obs)[0],
                                                           evidence)
            delay = late[0].at - obs.finished_at
            why = (f"late ({len(late)} event(s) after the case was reported, the first {delay:.2f}s after; "
                   f"{sum(1 for e in late if e.reply is not None)} repl(ies))")
            before = {(e.check, e.turn): e.passed for e in item.result.evidence}
            marked = [replace(e, reason=f"{why}: {e.reason}") if before.get((e.check, e.turn)) != e.passed else e
                      for e in evidence]
            latency, calls, tokens = observation_metrics(new_obs)
            again = replace(item.result, evidence=tuple(marked), status=case_status(marked, item.result.error),
                            observation=new_obs, latency_ms=latency, llm_calls=calls, tokens=tokens, baseline=base_info)
            again = excuse(item.case, again, self.machine)
            redone.setdefault(item.case.id, {})[item.number] = (self.meter.measure(again), list(again.evidence))
        self._listening.clear()
        for case_id, changed in redone.items():
            i, old = by_id[case_id], results[by_id[case_id]]
            attempts = list(self._attempts.get(case_id) or [])
            for n, (again, _) in changed.items():
                if n < len(attempts):
                    attempts[n] = again
            if not attempts:
                continue
            combined = combine_attempts(attempts)
            extras = tuple(e for e in old.evidence if e.check == "budget.case_usd" or e.check.startswith("anomaly."))
            evidence = tuple(combined.evidence) + extras
            status = "fail" if any(e.passed is False for e in extras) else combined.status
            result = replace(combined, evidence=evidence, status=status, cost_usd=old.cost_usd, metrics=old.metrics)
            result = excuse(case_of[case_id], result, self.machine)
            if (result.status, result.evidence) != (old.status, old.evidence):
                results[i] = result
                journal.append(case_to_dict(result))  # the later line stands (--resume reads the last one)
                if result.status != old.status:
                    self._notes.append(f"case {case_id}: {old.status} -> {result.status} after what reached it "
                                       "once it had been reported (late replies or calls)")

    async def _attempt(self, case: Case, driver: Driver, slot: Slot | None = None, number: int = 0) -> CaseResult:
        users = {name: self._next_identity() for name in (case.users or ("",))}
        rec = self.sandbox.router.open(case.id, [k for u in users.values() for k in u.keys()])
        att = _Attempt(case=case, rec=rec, users=users)
        started = time.time()
        error = ""
        timeout = case.timeout_s or self.config.sandbox.case_timeout_s
        try:
            await asyncio.wait_for(self._turns(att, driver, slot), timeout)
        except asyncio.TimeoutError:
            error = f"case timed out after {timeout:.0f}s"
            if att.current >= len(att.turns):  # the turn in flight: keep what it saw
                status, why = att.current_delivery or (None, "the case timed out before the webhook answered")
                t_obs = self._turn_observation(att, att.current, att.current_sent_at, status, why,
                                               time.time() - att.current_sent_at, True, turn=case.turns[att.current])
                att.turns.append(t_obs)
                error += (f" in turn {att.current + 1} of {len(case.turns)}: "
                          + (f"webhook had answered {status}" if status is not None else "webhook had not answered")
                          + f", {len(t_obs.replies)} repl{'y' if len(t_obs.replies) == 1 else 'ies'} delivered by then")
        except Exception as exc:
            log.error("case %s: %s", case.id, traceback.format_exc())
            error = f"harness error: {type(exc).__name__}: {exc}"
        finally:
            if error or att.seen is None:
                self.sandbox.router.close(rec)
            else:  # the chats stay open until the run ends: a late reply is still this case's (_late_replies)
                self.sandbox.router.retire(rec)
            for user in users.values():
                driver.forget(user)
        if not error and not self._target.alive():
            error = "the target process exited during the case"
        obs = Observation(case_id=case.id, channel=case.channel, chat_id=att.ident.chat_for(case.channel),
                          turns=tuple(att.turns), started_at=started, finished_at=time.time(), error=error,
                          user_chats=tuple(u.chat_for(case.channel) for u in users.values()) if case.users else ())
        evidence = await evaluate(case, obs, self.services)
        latency, calls, tokens = observation_metrics(obs)
        evidence, base_info = await self._baseline_evidence(case, obs, latency, evidence)
        result = CaseResult(id=case.id, layer=case.layer, channel=case.channel, status=case_status(evidence, error),
                            evidence=tuple(evidence), latency_ms=latency, llm_calls=calls, tokens=tokens,
                            cost_usd=None, error=error, file=case.file, tags=case.tags, observation=obs,
                            baseline=base_info)
        if not error and att.seen is not None:
            self._listening.append(_Listening(case=case, rec=rec, seen=att.seen, result=result, number=number))
        return result

    async def _turns(self, att: _Attempt, driver: Driver, slot: Slot | None = None) -> None:
        """Deliver the turns in order; overlapping turns (several users) go out together and
        settle together (``cases.overlap_groups``). The last group's quiet window is watched
        without the concurrency slot."""
        sb = self.config.sandbox
        groups = overlap_groups(att.case.turns)
        for g, group in enumerate(groups):
            first = group[0]
            att.current = first
            att.rec.turn = first  # a group's events are recorded under its first turn
            deliveries = []
            armed = []
            tool_scripts = []
            scripts = att.scripts = []
            try:
                for index in group:
                    turn = att.case.turns[index]
                    if turn.wait_s:
                        await asyncio.sleep(turn.wait_s)
                    if index == first:
                        att.current_sent_at = time.time()
                        att.current_delivery = None
                    # scripted faults live exactly as long as the turn (harness/sandbox/faults.py)
                    ident = att.ident_of(turn)
                    if turn.faults:
                        armed.append(self.sandbox.faults.arm(ident.keys(), turn.faults))
                    if turn.tools:  # the tool double's script, armed like faults (sandbox/spy.py)
                        tool_scripts.append(self.sandbox.tool_scripts.arm(ident.keys(), turn.tools))
                    # what the user says, so calls that name no id are still this case's (router.py)
                    self.sandbox.router.sent(att.rec, turn_texts(turn, driver.values_for(ident)))
                    # the model double's script (model_double.py), armed like a fault; a turn without
                    # one is armed too: a keyless call while it runs is not another case's
                    scripts.append(self.sandbox.scripts.arm(ident.keys(), list(turn.model)))
                    deliveries.append(await driver.deliver(
                        att.case, turn, ident, sb.reply_timeout_s, att.bot_message_ids.get(att.user_of(turn), "")))
                    att.current_delivery = (deliveries[-1].status, deliveries[-1].error)
                waited = await self._settle(att, [(att.case.turns[i], d.status is not None and d.status < 500)
                                                  for i, d in zip(group, deliveries)],
                                            slot, last=g == len(groups) - 1)
            finally:
                for a in armed:
                    self.sandbox.faults.disarm(a)
                for a in tool_scripts:
                    self.sandbox.tool_scripts.disarm(a)
                for a in scripts:
                    self.sandbox.scripts.disarm(a)
            att.seen = len(att.rec.events)
            for index, delivery in zip(group, deliveries):
                turn = att.case.turns[index]
                t_obs = self._turn_observation(att, index, delivery.sent_at, delivery.status, delivery.error, waited,
                                               att.settle_timed_out, turn=turn, recorded=first)
                if self.endpoints.state_url:
                    t_obs = await self._probe_state(att, t_obs, driver, att.ident_of(turn))
                att.turns.append(t_obs)
                self.quiet.learn(t_obs.replies)
                if t_obs.replies:
                    att.bot_message_ids[att.user_of(turn)] = t_obs.replies[-1].message_id

    def _own(self, att: _Attempt, index: int, turn: Turn | None = None) -> list[Reply]:
        """Replies recorded under turn ``index`` in the chat of ``turn``'s user (default: the case's chat)."""
        chat = (att.ident_of(turn) if turn is not None else att.ident).chat_for(att.case.channel)
        return [e.reply for e in att.rec.of_turn(index)
                if e.reply is not None and e.reply.channel == att.case.channel and e.reply.chat == chat]

    def _count(self, att: _Attempt, index: int, turn: Turn | None = None) -> int:
        """Like ``len(_own(...))``, plus the replies counted beyond the router's per-turn caps."""
        chat = (att.ident_of(turn) if turn is not None else att.ident).chat_for(att.case.channel)
        return len(self._own(att, index, turn)) + att.rec.dropped_replies(index, chat)

    async def _settle(self, att: _Attempt, turns: list[tuple[Turn, bool]], slot: Slot | None = None,
                      last: bool = False) -> float:
        """Wait until every turn's expected replies are in (each in its own user's chat) and the
        agent has then been quiet for one quiet window (learned, ``quiet.py``), or the reply
        timeout passes. After the case's ``last`` turn, the window is the closing one and the
        ``slot`` is given back once the replies are in: watching is no work for the agent.
        Returns the seconds waited."""
        sb = self.config.sandbox
        wants = []
        for turn, delivered in turns:
            lo, _hi = _expected_reply_bounds(turn)
            wants.append((turn, lo if delivered else 0))  # an undelivered update expects no reply
        start = time.time()
        att.settle_timed_out = False
        while True:
            now = time.time()
            replies_in = all(self._count(att, att.current, turn) >= lo for turn, lo in wants)
            if replies_in and last and slot is not None:
                slot.give()
                for script in att.scripts:  # the next case starts: a keyless call is its, not this one's
                    script.watching = True
            window = self.quiet.closing if last else self.quiet.value
            quiet = now - max(att.rec.last_activity, start)
            if replies_in and quiet >= window:
                self.quiet.used(window)
                return now - start
            # the reply timeout counts only time the harness ran: a loop that stalled 10 s (a starved
            # machine) heard nothing in them, and the agent's replies wait in its sockets (machine.py)
            if now - start >= sb.reply_timeout_s and now - start >= sb.reply_timeout_s + min(
                    2 * sb.reply_timeout_s, self.machine.lag_since(start)):
                att.settle_timed_out = True
                return now - start
            await att.rec.wait_activity(min(0.002 + max(0.0, window - quiet), sb.reply_timeout_s))

    def _turn_observation(self, att: _Attempt, index: int, sent_at: float, status: int | None, error: str,
                          waited: float, timed_out: bool, *, turn: Turn | None = None,
                          recorded: int | None = None) -> TurnObservation:
        """``recorded``: the turn whose events these are (an overlap group's first turn)."""
        recorded = index if recorded is None else recorded
        events = tuple(att.rec.of_turn(recorded))
        chat = att.ident_of(turn).chat_for(att.case.channel) if turn is not None and att.case.users else ""
        if chat:  # an overlap group's events are shared, but each turn's own update is its user's
            key = ("tg:" if att.case.channel == "telegram" else "wa:") + chat
            events = tuple(e for e in events if e.source != "driver" or key in e.keys)
        until = time.time()
        stray = tuple(e.reply for e in self.sandbox.router.unattributed
                      if e.reply is not None and sent_at <= e.at <= until)
        return TurnObservation(index=index, sent_at=sent_at, delivery_status=status, delivery_error=error or "",
                               replies=tuple(self._own(att, recorded, turn)), events=events, settled_after_s=waited,
                               timed_out=timed_out, chat=chat, unattributed=stray,
                               overflow=att.rec.overflow_of(recorded),
                               unattributed_calls=att.rec.unattributed_of(recorded))

    async def _probe_state(self, att: _Attempt, t_obs: TurnObservation, driver: Driver,
                           ident: Identity) -> TurnObservation:
        """The state of ``ident``'s chat after the turn (the probe is asked per chat)."""
        url = self.endpoints.state_url.replace("{chat_id}", ident.chat_for(att.case.channel))
        try:
            async with driver.session.get(url, timeout=aiohttp.ClientTimeout(total=5)) as resp:
                if resp.status != 200:
                    return replace(t_obs, state_error=f"state probe answered HTTP {resp.status}")
                from harness.channels import read_capped

                raw = await read_capped(resp, 4_000_000)  # an endless or nested-past-parsing answer: an error
                if len(raw) > 4_000_000:
                    return replace(t_obs, state_error="state probe answered over 4 MB")
                data = json.loads(raw)
                return replace(t_obs, state=data if isinstance(data, dict) else {"value": data})
        except (aiohttp.ClientError, asyncio.TimeoutError, ValueError, RecursionError) as exc:
            return replace(t_obs, state_error=f"state probe failed: {type(exc).__name__}: {exc}")

    def _report(self, cases: Sequence[Case], results: list[CaseResult], started: datetime) -> RunReport:
        planned: dict[str, int] = {}
        for c in cases:
            planned[c.layer] = planned.get(c.layer, 0) + 1
        summary, layers = summarize(results, planned)
        budget = soft_budget(self.config)  # too many soft errors fail the run (harness/soft.py)
        summary, layers, soft_notes = apply_soft_budget(summary, layers, budget.soft_max_fraction_per_layer,
                                                        budget.soft_max_per_run)
        service_models, service_notes = self.services.describe()
        cost_notes, perf, breached = self.meter.report_parts(results, list(layers))
        perf["summary"]["quiet_window"] = self.quiet.describe()  # results.json summary.quiet_window
        perf["summary"]["baseline"] = self._baseline_summary()
        perf["summary"]["machine"] = self.machine.describe()  # results.json summary.machine (machine.py)
        machine_note = self.machine.note()
        code = BUDGET_EXIT if breached else exit_code(summary)
        if breached:
            summary = replace(summary, verdict="budget")
        t = self.config.target
        return RunReport(run_id=self.run_id, started_at=started.isoformat(timespec="seconds"),
                         finished_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                         harness_version=__version__,
                         target={"name": t.name, "version": self.endpoints.version or t.version or "unknown",
                                 "host": socket.gethostname()},
                         golden_version=self.options.golden_version or "none",
                         models={"embedder": "none", "critic": "none", **service_models},
                         summary=summary, layers=layers, cases=tuple(results), exit_code=code,
                         notes=tuple(self._notes + cost_notes + service_notes + soft_notes + self._baseline_notes()
                                     + ([machine_note] if machine_note else [])), perf=perf,
                         layer_metrics=self._layer_metrics(results, perf, {"critic": "none", **service_models}))

    def _baseline_notes(self) -> list[str]:
        """A baseline that exists but could not be used tonight is worth a line (not "none accepted")."""
        note = self.options.baseline_note
        if self.options.baseline is None and note and not note.startswith(("no accepted baseline", "baseline checks are off")):
            return [note]
        trend = self._trend
        return [f"baseline: {len(trend.affected)} case(s) slower the later they ran (rho {trend.rho:.2f})"] \
            if trend is not None and trend.leak else []

    def _baseline_summary(self) -> dict:
        """results.json ``summary.baseline`` (docs/CASES.md "Baseline checks")."""
        baseline = self.options.baseline
        if baseline is None:
            return unchecked(self.options.baseline_note or "no baseline given to this run")
        out = baseline.summary()
        out["trend"] = self._trend.as_dict() if self._trend is not None else {"checked": False, "note": "not run"}
        return out

    def _layer_metrics(self, results: list[CaseResult], perf: dict, models: dict) -> dict[str, dict]:
        """Each layer's summary metrics (``Layer.metrics``), for results.json ``layers.<name>``."""
        context = {"perf": perf, "models": models, "out_dir": self.options.out_dir,
                   "reports_dir": self.config.resolve("reports")}
        out: dict[str, dict] = {}
        for name in dict.fromkeys(r.layer for r in results):
            layer = layer_registry.get(name)
            if layer is None:
                continue
            try:
                m = layer.metrics([r for r in results if r.layer == name], context)
            except Exception as exc:  # a layer's metrics bug must not lose the run's report
                log.exception("layer %s metrics failed", name)
                m = {"metrics_error": f"{type(exc).__name__}: {exc}"}
            if m:
                out[name] = m
        return out


async def run_loading(config: Config, options: RunOptions, load: Callable[[], Sequence[Case]],
                      early: EarlyStart | None = None) -> RunReport:
    """``run_suite`` for the command line: the sandbox and the target come up while ``load``
    (in a worker thread) reads, validates and selects the cases; ``early``: the target the
    CLI started already (``early.py``). When ``load`` raises (a fixture error: exit 2, no case
    ran), the target is stopped and the error goes on."""
    runner = Runner(config, options, early=early)
    taken = early is not None and runner._early is early  # the runner kept what the CLI started
    fresh = early.fresh if taken else [p for p in (runner.run_dir, runner.options.out_dir) if not p.exists()]
    up = asyncio.ensure_future(runner.bring_up())
    # run() awaits the same start-up and raises its error (exit 4); mark this wrapper's copy as
    # seen, or asyncio logs "Task exception was never retrieved" with a traceback on stderr.
    up.add_done_callback(lambda t: t.cancelled() or t.exception())
    try:
        cases = await asyncio.to_thread(load)
        if not cases:
            raise TargetError("no cases selected", fix="check --layer / --case")  # pragma: no cover - load guards
    except BaseException:
        up.cancel()
        try:
            await up
        except BaseException:  # the load error is the one to report
            pass
        await runner.shut_down()
        # a refused run (lock, fixture error) leaves no run folder behind, nor an --out folder it created
        remove_fresh(fresh, runner.run_dir, runner.options.out_dir)
        raise
    return await runner.run(cases)


async def run_suite(config: Config, cases: Sequence[Case], options: RunOptions) -> RunReport:
    """Run ``cases`` and return the report (the journal is written as cases finish)."""
    if not cases:
        raise TargetError("no cases selected", fix="check --layer / --case")  # pragma: no cover - CLI guards
    return await Runner(config, options).run(cases)
