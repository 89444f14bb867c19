"""Running a suite: sandbox up, target up, cases concurrently, evidence, journal, report.

The runner takes cases and a config and returns a RunReport; every finished case is
appended to ``results.jsonl`` at once, so a killed run loses nothing it had finished.
Its parts: ``options`` (RunOptions), ``turns`` (delivering a case's turns, settling),
``evaluate`` (the checks), ``late`` (late replies after the run-wide quiet window) and
``reporting`` (the RunReport, the run's notes).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
import traceback
from datetime import datetime, timezone
from typing import Awaitable, Callable, Sequence

import aiohttp

from harness import layer as layer_registry
from harness import redact
from harness.checks.baseline.trend import Trend
from harness.config import Config
from harness.errors import TargetError
from harness.fileio import make_folder
from harness.report.journal import Journal
from harness.report.jsonfile import case_to_dict
from harness.run import held, idle, order, reuse, warm
from harness.run.idle import AgentIdle
from harness.run.aggregate import case_status, combine_attempts, observation_metrics
from harness.run.driver import Driver, Identity, make_identity
from harness.run.early import EarlyStart, new_run_id, remove_fresh
from harness.run.evaluate import evaluate
from harness.run.late import LateReplies, Listening
from harness.run.machine import MachineMonitor
from harness.run.options import RunOptions
from harness.run.overload import excuse
from harness.run.perf import RunMeter
from harness.run.quiet import Limiter, QuietWindow, Slot, Stalls
from harness.run.reporting import Reporting, double_notes, unattributed_notes
from harness.run.textlocks import Hold, TextGate
from harness.run.turns import Attempt, Turns
from harness.sandbox.world import Sandbox
from harness.services import Services, default_factories
from harness.targets.http import HttpTarget
from harness.targets.base import Endpoints
from harness.targets.inprocess import InProcessTarget
from harness.types import Case, CaseResult, Evidence, Observation, RunReport

log = logging.getLogger("harness.run.runner")

#: Loop turns a case waits, once its variants may start, before it gives its texts back: a
#: variant (a long chain's, ahead in the text queue) asks for them first, instead of after
#: every short case that shares one of them was let in.
HAND_OVER_TURNS = 8


class Runner(Turns, LateReplies, Reporting):
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
        self.stalls = Stalls()  # when the harness's own loop did not run: no quiet heard then (quiet.py)
        self._listening: list[Listening] = []
        self.idle: AgentIdle | None = None
        """Evidence that the agent is idle (idle.py), once the target is up."""
        self._attempts: dict[str, list[CaseResult]] = {}
        self._up: asyncio.Future | None = None
        self._placeholders: dict[str, str] = {}
        self._appending: set[asyncio.Future] = set()
        self._trend: Trend | None = None
        self._warming: asyncio.Future | None = None
        """The services building in a worker thread (``warm.services``), beside the cases."""
        self._observed: dict[str, asyncio.Future] = {}
        """Per case, its observation once its turns are in (its variants borrow them, ``reuse.py``)."""
        self._known: dict[str, float] | None = None
        """How long each case took in the previous run in ``--out`` (``order.previous_durations``)."""
        self.prewarm: Callable[[], None] | None = None
        """Work for after the run that needs none of its results (``harness run``: the report
        writers' imports and templates, ``harness.report.prewarm``): done in a worker thread
        while the run waits out its last quiet window, which holds nothing else to do."""

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
        self.stalls.start()
        try:
            early = self._up is not None  # the CLI brought the target up while it loaded the cases
            if early:  # the services start building now, beside the cases (not before them)
                self._warming = warm.services(self.services, cases)
            await self.bring_up(cases)
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
            if self._warming is not None:  # built by now (a check that needed one waited for it)
                await self._warming
            try:  # services' end-of-run work, e.g. the critic's judge-health score
                await self.services.finalize()
            except Exception as exc:
                log.exception("services finalize failed")
                self._notes.append(f"end-of-run service work failed: {type(exc).__name__}: {exc}")
        finally:
            await self.machine.stop()
            await self.stalls.stop()
            await self.shut_down()
            if self._own_services:
                await self.services.aclose()
            # lingua's answers kept for the next run
            await asyncio.to_thread(warm.finish, getattr(self.services, "embed_record", True))
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
        make_folder(self.run_dir)
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
        if cases and self._warming is None:  # e.g. the embedder loads while the target starts (not awaited)
            self._warming = warm.services(self.services, cases)
        # tiktoken's encodings load now, not on the bot's first LLM call (the gateway counts tokens;
        # an agent not given the gateway's address never calls it)
        encodings = asyncio.get_running_loop().run_in_executor(None, warm.encodings) \
            if warm.counts_tokens(self.config, cases) else None
        # so does the language detector when a case checks a reply's language: built inside a
        # check it would hold the event loop (every running case's clock) for seconds
        detector = asyncio.get_running_loop().run_in_executor(None, warm.language, self.config) \
            if warm.judges_language(cases, self.options.baseline) else None  # baseline.language too
        self.endpoints = await target.start(placeholders)
        # a turn's quiet window may end on evidence that the agent is idle (idle.py): a command
        # target's process tree at rest and nothing of the case's in flight in the sandbox
        self.idle = AgentIdle(self.sandbox.router, idle.tree_of(target))
        self.quiet.full_run_end = self.idle.available
        if encodings is not None:
            await encodings
        if detector is not None:
            await detector

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
        # a text two running cases sent would identify neither. A variant that borrows its
        # original's turns (reuse.py) sends only its own texts, and starts once the original is
        # done (textlocks.py: all of a case's texts at once, fairly).
        texts = TextGate()
        planned = {c.id for c in cases}
        segments = {c.id: reuse.lock_segments(c, planned, set(self.options.prior)) for c in cases}
        locked = {case_id: reuse.segment_texts(segs) for case_id, segs in segments.items()}
        loop = asyncio.get_running_loop()
        done: dict[str, asyncio.Future] = {c.id: loop.create_future() for c in cases}
        # a variant starts once its original's turns are observed, not once they are judged
        # (the original's checks may wait for the embedding model); --repeat: once all are done
        observed: dict[str, asyncio.Future] = {c.id: loop.create_future() for c in cases}
        self._observed = observed if max(1, self.options.repeat) == 1 else {}
        given = cases
        if self.options.maxfail is None and self.meter.guard.limit is None:
            # the longest chains first (order.py): the run's tail is not one long case alone
            if self._known is None:
                self._known = await asyncio.to_thread(order.previous_durations, self.options.out_dir, self.run_id)
            cases = order.longest_first(cases, self.config.sandbox.reply_timeout_s, planned,
                                        set(self.options.prior), self._known, locks=locked)
        # a case waiting for a slot goes before the cases after it in this order, also when it
        # could only start late (a variant once its original's turns are in)
        rank = {c.id: 1 + i / (len(cases) + 1) for i, c in enumerate(cases)}
        waiting = [len(cases)]

        def started() -> None:  # once per case: when the last has started, the services' end-of-run work begins
            waiting[0] -= 1
            if waiting[0] == 0:
                self.services.begin()  # beside the run's tail, not after it (the critic's judge health)

        def finished(case_id: str, result: CaseResult | None) -> None:
            for table in (done, observed):
                if not table[case_id].done():
                    table[case_id].set_result(result if table is done else None)

        async def one(case: Case) -> None:
            result = None
            try:
                result = await attempts_of(case)
            finally:
                finished(case.id, result)

        async def attempts_of(case: Case) -> CaseResult:
            if case.id in self.options.prior:  # --resume: finished before the kill, already journaled
                started()
                results.append(self.options.prior[case.id])
                if self.options.on_case:
                    self.options.on_case(self.options.prior[case.id])
                return self.options.prior[case.id]
            source = reuse.plan(case, planned, set(self.options.prior))
            original, seen = None, None
            if source is not None:
                await asyncio.wait([observed[source], done[source]], return_when=asyncio.FIRST_COMPLETED)
                seen = observed[source].result() if observed[source].done() else None
                original = None if seen is not None else await done[source]
            slot = Slot(limit)
            mine: Hold | frozenset[str] = frozenset()
            first, *later = segments[case.id]
            try:
                # the first segment's texts before the slot (no deadlock); a later one's (after a
                # turn's wait_s) once its turn comes, without the slot while it waits (textlocks.py)
                mine = hold = await texts.acquire(first[1], rank[case.id], later=[t for _, t in later])
                later_at = dict(later)

                async def more(index: int) -> None:
                    want = later_at.get(index)
                    if want is None or hold.released:
                        return
                    # free at once, or a budget or --maxfail run (its slot is kept until the case is measured)
                    if texts.free(hold, want) or early is None:
                        await texts.more(hold, want)
                        return
                    had = slot.held
                    slot.give()
                    await texts.more(hold, want)
                    if had:
                        await slot.take(priority=0)
                await slot.take(priority=rank[case.id])
                started()
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
                repeat = 0 if skipped else max(1, self.options.repeat)

                def release_texts() -> None:  # once the last attempt stopped sending (router.retire)
                    texts.release(mine)  # a Hold is released once: the finally below does nothing more

                for k in range(repeat):
                    await slot.take(priority=0 if k else rank[case.id])
                    borrowed = None if source is None else reuse.borrow(
                        case, source, original, self._attempts.get(source) or [], k, time.time(), observed=seen)
                    one_attempt = await self._attempt(case, driver, early, k, borrowed,
                                                      sent=release_texts if k == repeat - 1 else None, more=more)
                    attempts.append(self.meter.measure(excuse(case, one_attempt, self.machine)))
                result = skipped or excuse(case, self.meter.finish(case, attempts, combine_attempts(attempts)),
                                           self.machine)
            finally:
                slot.give()
                texts.release(mine)
            results.append(result)
            if result.status in ("fail", "error"):
                self._failed += 1
            finished(case.id, result)  # its variants start now, not after the journal's fsync
            await self._journal(journal, case_to_dict(result))
            if self.options.on_case:
                self.options.on_case(result)
            return result

        await asyncio.gather(*(one(c) for c in cases))
        self._start_prewarm()
        await self._run_quiet()
        await self._late_replies(results, journal)
        position = {c.id: i for i, c in enumerate(given)}  # reported in the cases' own order
        results.sort(key=lambda r: position.get(r.id, 0))
        await self._latency_trend(given, results, journal)

    def _start_prewarm(self) -> None:
        """``prewarm`` in a worker thread, not awaited: the run's last window goes on meanwhile
        (late replies are heard as before; the thread only shares the interpreter with the
        loop, which is waiting), and ``asyncio.run`` joins the thread when the run returns."""
        work, self.prewarm = self.prewarm, None
        if work is None:
            return

        def quietly() -> None:
            try:
                work()
            except Exception:  # what it prepares is done again where it is needed, and fails there
                log.debug("prewarm failed", exc_info=True)

        asyncio.get_running_loop().run_in_executor(None, quietly)

    async def _baseline_evidence(self, case: Case, obs: Observation, latency: float | None,
                                 evidence: list[Evidence]) -> tuple[list[Evidence], dict | None]:
        if self.options.baseline is not None and self.options.baseline_wait is not None:
            await self.options.baseline_wait(case.id)  # learned beside this run (calibrate): this case's is in
        return await held.with_baseline(self.options.baseline, case, obs, latency, evidence)

    async def _latency_trend(self, cases: Sequence[Case], results: list[CaseResult], journal: Journal) -> None:
        if self.options.baseline is None:
            return
        if self.options.baseline_wait is not None:
            await self.options.baseline_wait(None)  # every case's baseline is in
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

    async def _attempt(self, case: Case, driver: Driver, slot: Slot | None = None, number: int = 0,
                       borrowed: reuse.Borrowed | None = None, sent: Callable[[], None] | None = None,
                       more: Callable[[int], Awaitable[None]] | None = None) -> CaseResult:
        """One attempt of ``case``; ``borrowed``: its original's turns, observed in the original's
        own case (a metamorphic variant, ``reuse.py``), which are not sent again; ``sent``: called
        once its turns are over and observed (the case no longer claims calls by their text: its
        text locks go back before its checks run, which may wait for a model)."""
        users = {name: self._next_identity() for name in (case.users or ("",))}
        rec = self.sandbox.router.open(case.id, [k for u in users.values() for k in u.keys()])
        att = Attempt(case=case, rec=rec, users=users, more=more)
        if borrowed is not None:
            att.turns.extend(borrowed.turns)
            att.skip = borrowed.count
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
        chats = [u.chat_for(case.channel) for u in users.values()]
        if borrowed is not None and borrowed.chat:  # the first user's turns were the original's, in its chat
            chats[0] = borrowed.chat
        obs = Observation(case_id=case.id, channel=case.channel, chat_id=chats[0],
                          turns=tuple(att.turns), started_at=started, finished_at=time.time(), error=error,
                          user_chats=tuple(chats) if case.users else ())
        seen = self._observed.get(case.id)
        if seen is not None and not seen.done():  # its variants borrow these turns now (_run_cases)
            seen.set_result(obs)
            for _ in range(HAND_OVER_TURNS):  # they queue for the texts before they are given back
                await asyncio.sleep(0)
        if sent is not None:
            sent()
        evidence = await evaluate(reuse.judged(case, borrowed) if borrowed else case, obs, self.services)
        latency, calls, tokens = observation_metrics(obs)
        evidence, base_info = await self._baseline_evidence(case, obs, latency, evidence)
        if borrowed is not None:
            evidence = reuse.own_evidence(case, borrowed, evidence)
        result = CaseResult(id=case.id, layer=case.layer, channel=case.channel, status=case_status(evidence, error),
                            evidence=tuple(evidence), latency_ms=latency, llm_calls=calls, tokens=tokens,
                            cost_usd=None, error=error, file=case.file, tags=case.tags, observation=obs,
                            baseline=base_info)
        if not error and att.seen is not None:
            self._listening.append(Listening(case=case, rec=rec, seen=att.seen, result=result, number=number,
                                             borrowed=borrowed))
        return result


async def run_loading(config: Config, options: RunOptions, load: Callable[[], Sequence[Case]],
                      early: EarlyStart | None = None, prewarm: Callable[[], None] | None = None) -> RunReport:
    """``run_suite`` for the command line: the sandbox and the target come up while ``load``
    (in a worker thread) reads, validates and selects the cases; ``early``: the target the
    CLI started already (``early.py``); ``prewarm``: ``Runner.prewarm``. When ``load`` raises
    (a fixture error: exit 2, no case ran), the target is stopped and the error goes on."""
    runner = Runner(config, options, early=early)
    runner.prewarm = prewarm
    taken = early is not None and runner._early is early  # the runner kept what the CLI started
    fresh = early.fresh if taken else [p for p in (runner.run_dir, runner.options.out_dir) if not p.exists()]
    up = asyncio.ensure_future(runner.bring_up())
    # run() awaits the same start-up and raises its error (exit 4); mark this wrapper's copy as
    # seen, or asyncio logs "Task exception was never retrieved" with a traceback on stderr.
    up.add_done_callback(lambda t: t.cancelled() or t.exception())
    def load_and_warm():
        loaded = load()
        # the previous run's case durations (order.py), read here beside the target's start
        runner._known = order.previous_durations(runner.options.out_dir, runner.run_id)
        if warm.judges_language(loaded, options.baseline):  # before any case runs, beside the target's start
            warm.language(config)
        return loaded

    try:
        cases = await asyncio.to_thread(load_and_warm)
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
