"""Delivering a case's turns and watching for their replies (``Turns``, a part of the ``Runner``):
an overlap group goes out together and settles together; each turn's observation is taken
from what the sandbox recorded under it."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field, replace
from typing import Awaitable, Callable, Mapping

import aiohttp

from harness.cases.case import overlap_groups
from harness.run import idle
from harness.run.driver import Driver, Identity
from harness.run.quiet import Slot
from harness.sandbox.router import CaseRecorder
from harness.textgen import render
from harness.types import Case, Reply, Turn, TurnObservation

# A turn whose update got no answer at all is not waited on for the full reply timeout.
GRACE_AFTER_FAILED_DELIVERY_S = 1.0

@dataclass
class Attempt:
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
    skip: int = 0
    """The leading turns not sent: borrowed from the original case (``reuse.py``), already in ``turns``."""
    more: Callable[[int], Awaitable[None]] | None = None
    """Takes the text locks of the segment that starts at a turn, before it is sent (``textlocks.py``)."""

    @property
    def ident(self) -> Identity:
        """The first (or only) user's identity: the case's chat."""
        return next(iter(self.users.values()))

    def user_of(self, turn: Turn) -> str:
        return turn.user or next(iter(self.users))

    def ident_of(self, turn: Turn) -> Identity:
        return self.users[self.user_of(turn)]


#: A placeholder the driver fills per attempt (its document token): a text holding it is unique.
PER_ATTEMPT = "{docs}"


def case_texts(case: Case, skip: int = 0) -> list[str]:
    """The texts a case's users send, as written (normalised: case and spacing), sorted: cases
    sharing one are not run side by side (``Runner._run_cases``). ``skip``: the leading turns
    not sent (borrowed from the original case, ``reuse.py``). A text holding ``{docs}`` is left
    out: the driver fills it with the attempt's own document link (``Driver.values_for``), so
    no two attempts ever send it alike."""
    out = set()
    for turn in case.turns[skip:]:
        out |= _locked_texts(turn)
    return sorted(out)


def _locked_texts(turn: Turn) -> set[str]:
    out = set()
    if turn.kind in ("callback", "forged"):
        return out
    for t in [turn.send, *(turn.options.get("texts") or [])]:
        if isinstance(t, str) and t.strip() and PER_ATTEMPT not in t:
            out.add(" ".join(t.split()).lower())
    if turn.kind == "document":  # its content is a text the bot's prompt holds (run/inbound.py)
        out.add(f"document: {turn.options.get('source') or turn.options.get('file_name')}".lower())
    return out


def case_text_segments(case: Case, skip: int = 0) -> list[tuple[int, list[str]]]:
    """``case_texts`` in segments, split before each turn group (``cases.overlap_groups``) whose
    first turn waits before it is sent (``wait_s``): (the segment's first turn, its texts). The
    first segment's texts are taken before the case starts, a later one's when its first turn is
    sent (``textlocks.TextGate.more``), so a case does not hold "/help" through a 3 s wait."""
    segments: list[tuple[int, set[str]]] = []
    for group in overlap_groups(case.turns):
        if group[0] < skip:
            continue
        if not segments or (case.turns[group[0]].wait_s or 0) > 0:
            segments.append((group[0], set()))
        for i in group:
            segments[-1][1].update(_locked_texts(case.turns[i]))
    return [(start, sorted(texts)) for start, texts in segments] or [(skip, [])]


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


def expected_reply_bounds(turn: Turn) -> tuple[int, int | None]:
    """How many replies the turn's own checks expect (default: at least one)."""
    for spec in turn.checks:
        if spec.name == "replies":
            p = spec.params
            lo = p.get("exact", p.get("min", 0))
            return lo, p.get("exact", p.get("max"))
    return 1, None


def expected_tools(turn: Turn) -> list[str]:
    """The tools the turn's own ``tools_called`` check expects to see called in it (lowercase)."""
    out: list[str] = []
    for spec in turn.checks:
        if spec.name == "tools_called":
            p = spec.params
            if isinstance(p, dict):
                p = p.get("tools", ())
            out += [p.lower()] if isinstance(p, str) else [t.lower() for t in p if isinstance(t, str)]
    return out


class Turns:
    """The runner's turn delivery (mixed into ``Runner``, whose sandbox, quiet window, machine
    monitor and endpoints it uses)."""

    async def _turns(self, att: Attempt, driver: Driver, slot: Slot | None = None) -> None:
        """Deliver the turns in order; overlapping turns (several users) go out together and
        settle together (``cases.overlap_groups``). The last group's quiet window is watched
        without the concurrency slot."""
        sb = self.config.sandbox
        groups = overlap_groups(att.case.turns)
        for g, group in enumerate(groups):
            if group[0] < att.skip:  # observed in the original's own case (reuse.py)
                continue
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
                    if index == first and att.more is not None:  # a later segment's texts, once waited
                        await att.more(first)
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
                self.quiet.learn(t_obs.replies, t_obs.events)
                if t_obs.replies:
                    att.bot_message_ids[att.user_of(turn)] = t_obs.replies[-1].message_id

    def _own(self, att: Attempt, index: int, turn: Turn | None = None) -> list[Reply]:
        """Replies recorded under turn ``index`` in the chat of ``turn``'s user (default: the case's chat)."""
        chat = (att.ident_of(turn) if turn is not None else att.ident).chat_for(att.case.channel)
        return [e.reply for e in att.rec.of_turn(index)
                if e.reply is not None and e.reply.channel == att.case.channel and e.reply.chat == chat]

    def _count(self, att: Attempt, index: int, turn: Turn | None = None) -> int:
        """Like ``len(_own(...))``, plus the replies counted beyond the router's per-turn caps."""
        chat = (att.ident_of(turn) if turn is not None else att.ident).chat_for(att.case.channel)
        return len(self._own(att, index, turn)) + att.rec.dropped_replies(index, chat)

    async def _settle(self, att: Attempt, turns: list[tuple[Turn, bool]], slot: Slot | None = None,
                      last: bool = False) -> float:
        """Wait until every turn's expected replies are in (each in its own user's chat) and the
        agent has then been quiet for one quiet window (learned, ``quiet.py``), or the reply
        timeout passes. After the case's ``last`` turn, the window is the closing one and the
        ``slot`` is given back once the replies are in: watching is no work for the agent.
        Returns the seconds waited."""
        sb = self.config.sandbox
        wants = []
        tools: set[str] = set()
        for turn, delivered in turns:
            lo, _hi = expected_reply_bounds(turn)
            wants.append((turn, lo if delivered else 0))  # an undelivered update expects no reply
            if delivered:  # a turn that expects a tool called waits for the call as for a reply
                tools.update(expected_tools(turn))
        start = time.time()
        router = self.sandbox.router

        def tools_in() -> bool:
            """Every expected tool was called in the turn: recorded as the case's, or as nobody's
            (a call the router could not attribute: waiting longer would not make it the case's)."""
            if not tools:
                return True
            seen = {e.name.lower() for e in att.rec.of_turn(att.current) if e.source != "driver"}
            if tools <= seen:
                return True
            for e in reversed(router.unattributed):
                if e.at < start:
                    break
                seen.add(e.name.lower())
            return tools <= seen
        att.settle_timed_out = False
        # the window may end early on evidence that the agent is idle (idle.py); never for a
        # turn that expects no reply: only the window itself can tell that none comes
        probe = self.idle if self.idle is not None and self.idle.available and any(lo for _, lo in wants) else None
        next_probe, backoff = 0.0, idle.MIN_QUIET_S
        ear = self.stalls.ear()  # a window that passed while the harness's own loop stalled heard nothing
        while True:
            now = time.time()
            if await ear.drain(now):  # what came meanwhile is recorded first
                continue
            replies_in = all(self._count(att, att.current, turn) >= lo for turn, lo in wants) and tools_in()
            if replies_in and last and slot is not None:
                slot.give()
                for script in att.scripts:  # the next case starts: a keyless call is its, not this one's
                    script.watching = True
            window = self.quiet.closing if last else self.quiet.value
            quiet = ear.heard(max(att.rec.last_activity, start), now)
            if replies_in and quiet >= window:
                self.quiet.used(window)
                return now - start
            if replies_in and probe is not None and quiet >= idle.MIN_QUIET_S and time.time() >= next_probe:
                mark = ear.mark()
                if await probe.idle(att.rec) and ear.undisturbed(mark, time.time()):
                    now = time.time()
                    self.quiet.used(now - max(att.rec.last_activity, start), idle=True)
                    return now - start
                # not at rest: the next look a little later each time (the agent works on)
                next_probe, backoff = time.time() + backoff, min(idle.MAX_BACKOFF_S, 2 * backoff)
                continue
            # the reply timeout counts only time the harness ran: a loop that stalled 10 s (a starved
            # machine) heard nothing in them, and the agent's replies wait in its sockets (machine.py)
            if now - start >= sb.reply_timeout_s and now - start >= sb.reply_timeout_s + min(
                    2 * sb.reply_timeout_s, self.machine.lag_since(start)):
                att.settle_timed_out = True
                return now - start
            left = window - quiet
            if replies_in and probe is not None:  # the probe starts once the last event is MIN_QUIET_S old
                left = min(left, max(idle.MIN_QUIET_S - quiet, next_probe - now))
            await att.rec.wait_activity(min(0.002 + max(0.0, left), sb.reply_timeout_s))

    def _turn_observation(self, att: Attempt, index: int, sent_at: float, status: int | None, error: str,
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

    async def _probe_state(self, att: Attempt, t_obs: TurnObservation, driver: Driver,
                           ident: Identity) -> TurnObservation:
        """The state of ``ident``'s chat after the turn (the probe is asked per chat)."""
        url = self.endpoints.state_url.replace("{chat_id}", ident.chat_for(att.case.channel))
        try:
            async with driver.session.get(url, timeout=aiohttp.ClientTimeout(total=5), allow_redirects=False) as resp:
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
