"""What reaches a case after it was reported (``LateReplies``, a part of the ``Runner``): one
run-wide quiet window, then each finished attempt evaluated again with its late events."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, replace

from harness.checks import REGISTRY
from harness.report.journal import Journal
from harness.report.jsonfile import case_to_dict
from harness.run.aggregate import case_status, combine_attempts, observation_metrics
from harness.run.evaluate import evaluate, pure_evidence, with_late
from harness.run import reuse
from harness.run.overload import excuse
from harness.run.reuse import Borrowed
from harness.sandbox.router import CaseRecorder
from harness.types import Case, CaseResult, Evidence


@dataclass
class Listening:
    """A finished attempt whose chats stay open until the run ends (late replies are still its own)."""

    case: Case
    rec: CaseRecorder
    seen: int
    """How many of ``rec.events`` the attempt's observation holds."""
    result: CaseResult
    """The attempt's own result (before repeats were combined)."""
    number: int = 0
    """Which attempt of the case (``--repeat``)."""
    borrowed: Borrowed | None = None
    """The original's turns the attempt borrowed (a metamorphic variant, ``reuse.py``)."""


class LateReplies:
    """The runner's end of run (mixed into ``Runner``)."""

    async def _run_quiet(self) -> None:
        """One quiet window for the whole run: wait until nothing reached the sandbox for the
        run's last window (``QuietWindow.run_end``; at most ``reply_timeout_s``), so a late reply
        to any case is still seen."""
        sb = self.config.sandbox
        start = time.time()
        ear = self.stalls.ear()
        while True:
            now = time.time()
            if await ear.drain(now):  # a stall of the harness's own loop is no quiet heard
                continue
            last = self.sandbox.router.last_event_at or start  # a case's own window may already cover it
            quiet, window = ear.heard(last, now), self.quiet.run_end
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
            new_obs = with_late(obs, late, item.rec.turn)
            judged = reuse.judged(item.case, item.borrowed) if item.borrowed is not None else item.case
            if any(e.reply is not None for e in late):
                evidence = await evaluate(judged, new_obs, self.services)
            else:  # calls only: what judged the replies stands, the deterministic checks run again
                pure, _ = pure_evidence(judged, new_obs)
                written = [e for e in item.result.evidence if not e.check.startswith("baseline.")]
                kept = [e for e in written if REGISTRY[e.check].uses_services] \
                    if all(e.check in REGISTRY for e in written) else []
                evidence = pure + kept
            evidence, base_info = await self._baseline_evidence(item.case, new_obs, observation_metrics(new_obs)[0],
                                                           evidence)
            if item.borrowed is not None:
                evidence = reuse.own_evidence(item.case, item.borrowed, evidence)
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
