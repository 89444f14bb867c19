"""The machine rule (harness/run/machine.py, harness/run/overload.py): latency only a starved machine explains is
unavailable, never a failure; the same breach on a quiet machine still fails. The monitor's
readings are injected (``record``): no assertion depends on the wall clock."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from harness.run.machine import LAG_OVERLOAD_S, OTHERS_MIN_CORES, MachineMonitor, Sample
from harness.run.overload import abandoned_calls, excuse
from harness.types import Case, CaseResult, CheckSpec, Event, Evidence, Observation, Reply, Turn, TurnObservation

T0 = 1_000_000.0


def monitor(*, lag=0.0, others=0.0, wait=None, runnable=None, load=None, own_wait=None, start=T0 - 1, end=T0 + 30,
            cores=2):
    """A monitor with one reading every 0.2 s; ``own_wait``: seconds the run waited for a CPU per reading."""
    m = MachineMonitor(cores=cores)
    at = start
    while at < end:
        at += 0.2
        m.record(Sample(at=at, span_s=0.2, lag_s=lag, others_cores=others, own_cores=0.8, cpu_wait=wait,
                        runnable=runnable, load1=load, own_wait_s=own_wait))
    return m


QUIET = dict(lag=0.001, others=0.05, wait=0.02, runnable=1, load=0.4)
BUSY = dict(lag=2.3, others=1.6, wait=0.9, runnable=9, load=4.1)
#: Starved by another job, but the harness's loop kept running (no freeze of the sandbox).
STARVED = dict(BUSY, lag=0.3)


def reply(at: float, text: str = "ok") -> Reply:
    return Reply(channel="telegram", chat="1", text=text, at=at, method="sendMessage")


def llm(at: float, seconds: float, error: str = "", prompt: int = 100) -> Event:
    return Event(source="gateway", name="llm", at=at, status=200 if not error else 504, duration_ms=seconds * 1000,
                 request={"model": "m", "messages": 2, "prompt_chars": prompt}, error=error)


def case_and_obs(first_reply_s: float, bound_ms: int = 5000, events=()) -> tuple[Case, Observation]:
    turn = Turn(send="hi", checks=(CheckSpec("latency_ms", {"first_reply_max": bound_ms}),))
    case = Case(id="c", layer="robustness", channel="telegram", turns=(turn,))
    t = TurnObservation(index=0, sent_at=T0, delivery_status=200, delivery_error="",
                        replies=(reply(T0 + first_reply_s),), events=tuple(events), settled_after_s=first_reply_s)
    return case, Observation(case_id="c", channel="telegram", chat_id="1", turns=(t,), started_at=T0,
                             finished_at=T0 + first_reply_s + 0.5)


def latency_failure(first_reply_s: float, bound_ms: int = 5000) -> Evidence:
    ms = first_reply_s * 1000
    return Evidence(check="latency_ms", turn=0, availability="ready", passed=False,
                    expected=f"first_reply_max {bound_ms}ms", observed=f"first reply {ms:.0f}ms",
                    reason=f"first reply {ms:.0f}ms > threshold {bound_ms}ms", evaluator="latency@1")


def result(case: Case, obs: Observation, *evidence: Evidence) -> CaseResult:
    return CaseResult(id=case.id, layer=case.layer, channel=case.channel, status="fail", evidence=evidence,
                      observation=obs)


# -- the latency rule: (machine, breach) -> status ----------------------------------------------------------------

@pytest.mark.parametrize("machine, first_reply_s, bound_ms, status", [
    (BUSY, 7.5, 5000, "unavailable"),       # the 7.5 s against 5 s, both cores taken by another job
    (QUIET, 7.5, 5000, "fail"),             # the same breach on a quiet machine: the agent is slow
    (dict(BUSY, others=0.1), 7.5, 5000, "fail"),  # starved by the run itself (the agent burns CPU): no excuse
    (dict(QUIET, lag=LAG_OVERLOAD_S + 0.1, others=OTHERS_MIN_CORES + 0.1), 5.3, 5000, "unavailable"),  # lag alone
    (dict(QUIET, wait=0.7, others=1.0), 7.5, 5000, "unavailable"),  # CPU pressure alone, the loop on time
    (dict(QUIET, wait=None, runnable=6, others=1.0), 7.5, 5000, "unavailable"),  # no PSI: runnable tasks per core
    (dict(QUIET, wait=None, runnable=3, others=1.0), 7.5, 5000, "fail"),  # 1.5 per core is not more than 1.5
    (dict(BUSY, lag=0.0, wait=0.6), 30.0, 5000, "fail"),  # 25 s over: more than the 18 s the machine stalled
    # the run's own processes' run-queue wait measures the stall where it is known:
    (dict(BUSY, lag=0.1, own_wait=0.15), 7.5, 5000, "unavailable"),  # waited 5.6 s of 7.5: explains 2.5 s over
    (dict(BUSY, lag=0.1, own_wait=0.01), 7.5, 5000, "fail"),  # waited 0.4 s: a busy machine, a slow agent
])
def test_latency_breach_against_the_machine(machine, first_reply_s, bound_ms, status):
    case, obs = case_and_obs(first_reply_s, bound_ms)
    m = monitor(**machine)
    out = excuse(case, result(case, obs, latency_failure(first_reply_s, bound_ms)), m)
    assert out.status == status, [e.reason for e in out.evidence]
    e = out.evidence[0]
    if status == "unavailable":
        assert e.availability == "unavailable" and e.passed is None
        assert e.reason.startswith("machine overloaded (loop lag ")
        assert "on 2 cores" in e.reason and "was: first reply" in e.reason
        assert m.describe()["excused"] == {"latency": 1, "agent_timeout": 0, "frozen": 0}
    else:
        assert e.passed is False and m.describe()["excused"]["latency"] == 0


def test_reason_names_lag_and_load():
    case, obs = case_and_obs(7.5)
    out = excuse(case, result(case, obs, latency_failure(7.5)), monitor(**BUSY))
    assert "machine overloaded (loop lag 2.3 s, load 4.1 on 2 cores" in out.evidence[0].reason


def test_only_latency_evidence_is_excused():
    case, obs = case_and_obs(7.5)
    wrong = Evidence(check="reply.regex", turn=0, availability="ready", passed=False, reason="no match")
    out = excuse(case, result(case, obs, latency_failure(7.5), wrong), monitor(**STARVED))
    assert out.status == "fail"
    assert [e.availability for e in out.evidence] == ["unavailable", "ready"]


def test_a_missing_reply_is_not_a_latency_to_excuse():
    case, obs = case_and_obs(7.5)
    none = Evidence(check="latency_ms", turn=0, availability="ready", passed=False, observed="no reply",
                    reason="no reply arrived")
    assert excuse(case, result(case, obs, none), monitor(**STARVED)).status == "fail"


def test_anomaly_latency_is_excused_on_the_case_window():
    case, obs = case_and_obs(2.0)
    anomaly = Evidence(check="anomaly.latency_ms", turn=None, availability="ready", passed=False,
                       observed="9000ms", reason="latency_ms 9000ms is 3.00x the baseline")
    assert excuse(case, result(case, obs, anomaly), monitor(**BUSY)).status == "unavailable"
    assert excuse(case, result(case, obs, anomaly), monitor(**QUIET)).status == "fail"


def test_a_window_without_samples_excuses_nothing():
    case, obs = case_and_obs(7.5)
    empty = MachineMonitor(cores=2)
    assert excuse(case, result(case, obs, latency_failure(7.5)), empty).status == "fail"
    busy_elsewhere = monitor(**BUSY, start=T0 + 100, end=T0 + 200)  # overloaded, but not during this case
    assert excuse(case, result(case, obs, latency_failure(7.5)), busy_elsewhere).status == "fail"


def test_the_history_is_bounded():
    m = MachineMonitor(cores=2, history=50)
    for i in range(500):
        m.record(Sample(at=T0 + i * 0.2, span_s=0.2, lag_s=0.0))
    assert len(m.samples) == 50 and m.describe()["samples"] == 50


# -- the agent's own timeouts -------------------------------------------------------------------------------------

def failed_reply_case(events, reply_at: float):
    turn = Turn(send="summarize", checks=(CheckSpec("reply.regex", {"pattern": "Summary"}),))
    case = Case(id="t", layer="multiturn", channel="telegram", turns=(turn,))
    t = TurnObservation(index=0, sent_at=T0, delivery_status=200, delivery_error="",
                        replies=(reply(reply_at, "Sorry, something went wrong"),), events=tuple(events),
                        settled_after_s=reply_at - T0)
    obs = Observation(case_id="t", channel="telegram", chat_id="1", turns=(t,), started_at=T0,
                      finished_at=reply_at + 1)
    wrong = Evidence(check="reply.regex", turn=0, availability="ready", passed=False, reason="no match")
    return case, result(case, obs, wrong)


# A clean agent on a starved machine: its 4 s timeout fired on a real call (retried), then on the retry.
GAVE_UP = [llm(T0 + 0.1, 5.2), llm(T0 + 4.2, 4.5)]
# no_retry_after_llm_error: the harness's injected hang times out, the agent never retries.
INJECTED = [llm(T0 + 0.1, 4.1, error="injected hang (answered 504 when released)")]
# A clean agent retrying a failure the gateway answered at once (a 500 from upstream): nothing abandoned.
ANSWERED = [Event(source="gateway", name="llm", at=T0 + 0.1, status=500, duration_ms=30,
                  request={"model": "m", "messages": 2, "prompt_chars": 100}, error="upstream answered 500")]


@pytest.mark.parametrize("events, reply_s, machine, status", [
    (GAVE_UP, 8.5, BUSY, "unavailable"),
    (GAVE_UP, 8.5, QUIET, "fail"),        # the agent gave up on a quiet machine: its timeout is too short
    (INJECTED, 4.3, STARVED, "fail"),     # the regression the case seeds is caught under load too
    (ANSWERED, 0.5, STARVED, "fail"),     # a failure the gateway answered is the agent's own
])
def test_agent_timeout_against_the_machine(events, reply_s, machine, status):
    case, r = failed_reply_case(events, T0 + reply_s)
    m = monitor(**machine)
    out = excuse(case, r, m)
    assert out.status == status
    if status == "unavailable":
        assert "the agent's own timeout fired" in out.evidence[0].reason
        assert m.describe()["excused"]["agent_timeout"] == 1


def test_abandoned_calls():
    case, r = failed_reply_case(GAVE_UP, T0 + 8.5)
    assert [round(c.duration_ms) for _, c in abandoned_calls(r.observation)] == [5200, 4500]
    injected_then_real = [*INJECTED, llm(T0 + 4.3, 0.4)]  # the retry answered in time
    _, r = failed_reply_case(injected_then_real, T0 + 5.0)
    assert abandoned_calls(r.observation) == []
    parallel = [llm(T0 + 0.1, 2.0, prompt=100), llm(T0 + 0.2, 2.0, prompt=300)]  # two different requests at once
    _, r = failed_reply_case(parallel, T0 + 2.5)
    assert abandoned_calls(r.observation) == []


# -- the run-level figures ----------------------------------------------------------------------------------------

def test_describe_and_note():
    m = monitor(**BUSY)
    d = m.describe()
    assert d["loop_lag_max_s"] == 2.3 and d["load1_max"] == 4.1 and d["cores"] == 2 and d["pressure"] is True
    assert d["overloaded_s"] > 0 and d["thresholds"]["loop_lag_s"] == LAG_OVERLOAD_S
    assert m.note() == ""  # nothing excused: the figures are in summary.machine only
    case, obs = case_and_obs(7.5)
    excuse(case, result(case, obs, latency_failure(7.5)), m)
    assert m.note().startswith("machine: max loop lag 2.30 s, load up to 4.1 on 2 cores")
    assert m.note().endswith("1 latency check(s), 0 agent-timeout failure(s) and 0 failure(s) in a frozen sandbox "
                             "reported unavailable (machine overloaded) in 1 case(s): c")
    quiet = monitor(**QUIET).describe()
    assert quiet["overloaded_s"] == 0


async def test_the_monitor_samples_and_stops():
    class Fixed:
        cores = 2

        def busy_s(self):
            return 0.0

        def own_s(self):
            return 0.0

        def cpu_stall_us(self):
            return None

        def runnable(self):
            return 1

        def load1(self):
            return 0.5

    m = MachineMonitor(interval_s=0.01, probe=Fixed())
    m.start()
    for _ in range(200):  # no wall-clock bound: wait for the samples, however slow the machine
        if len(m.samples) >= 3:
            break
        await asyncio.sleep(0.01)
    await m.stop()
    assert len(m.samples) >= 3 and m.samples[-1].load1 == 0.5
    n = len(m.samples)
    await asyncio.sleep(0.05)
    assert len(m.samples) == n  # stopped


# -- a variant's trajectory that differs only by the agent's retries ---------------------------------------------

def variant_case(variant_calls, original_calls):
    """Turn 0 the original, turn 1 the variant (``equivalent: {to: 0}``), one reply each."""
    turns = (Turn(send="summarize x", user="original"),
             Turn(send="SUMMARIZE x", user="variant", checks=(CheckSpec("equivalent", {"to": 0, "min": 0.85}),)))
    case = Case(id="v--case", layer="robustness", channel="telegram", turns=turns, users=("original", "variant"))
    obs_turns = []
    for i, calls in enumerate((original_calls, variant_calls)):
        sent = T0 + 20 * i
        events = tuple(llm(sent + at, 0.5, prompt=p) for at, p in calls)
        obs_turns.append(TurnObservation(index=i, sent_at=sent, delivery_status=200, delivery_error="",
                                         replies=(reply(sent + 9),), events=events, settled_after_s=9.5))
    obs = Observation(case_id=case.id, channel="telegram", chat_id="1", turns=tuple(obs_turns), started_at=T0,
                      finished_at=T0 + 40)
    counts = (len(variant_calls), len(original_calls))
    failed = Evidence(check="equivalent", turn=1, availability="ready", passed=False,
                      reason=f"another trajectory: variant llm×{counts[0]}; original (turn 0) llm×{counts[1]}")
    return case, result(case, obs, failed)


SUMMARY, POST = 4895, 5200  # two different requests (prompt sizes) of one turn
TWO = [(0.1, SUMMARY), (1.0, POST)]
RETRIED = [(0.1, SUMMARY), (4.4, SUMMARY), (5.0, POST)]  # the summary call sent again after a timeout
EXTRA = [(0.1, SUMMARY), (1.0, POST), (2.0, 7000)]       # a call the original never made


@pytest.mark.parametrize("variant, original, machine, status", [
    (RETRIED, TWO, BUSY, "unavailable"),
    (TWO, RETRIED, BUSY, "unavailable"),  # the original's turn retried
    (RETRIED, TWO, QUIET, "fail"),        # a retry on a quiet machine is the agent's own doing
    (EXTRA, TWO, STARVED, "fail"),        # another request is another trajectory, whatever the load
])
def test_variant_retry_against_the_machine(variant, original, machine, status):
    case, r = variant_case(variant, original)
    m = monitor(**machine, end=T0 + 45)
    out = excuse(case, r, m)
    assert out.status == status, [e.reason for e in out.evidence]
    if status == "unavailable":
        assert "repeated word for word (the agent's retry)" in out.evidence[0].reason


async def test_a_window_sees_the_lag_the_monitor_has_not_sampled_yet():
    """A starved loop is late to sample too: a case evaluated before the monitor wakes still sees it."""
    now = {"mono": 100.0, "wall": T0}

    class Busy:
        cores = 2

        def busy_s(self):
            return now["mono"] * 2  # both cores busy...

        def own_s(self):
            return now["mono"] * 0.2  # ...and the run got a fifth of one

        def cpu_stall_us(self):
            return now["mono"] * 1e6

        def runnable(self):
            return 8

        def load1(self):
            return 6.0

    m = MachineMonitor(interval_s=0.2, probe=Busy(), clock=lambda: now["wall"], monotonic=lambda: now["mono"])
    m.start()
    await asyncio.sleep(0)  # the task reads its first counters and goes to sleep
    m.record(Sample(at=T0, span_s=0.2, lag_s=0.0, others_cores=1.8, cpu_wait=1.0, load1=6.0))  # the last sample
    now["mono"] += 3.0  # the loop then did not run for 3 s
    now["wall"] += 3.0
    w = m.window(T0, T0 + 3.0)
    await m.stop()
    assert w.samples == 2 and w.lag_max_s == pytest.approx(2.8)  # the pending interval: the lag so far
    assert w.others_cores == pytest.approx(1.8) and w.cpu_wait == 1.0 and w.overloaded  # at the last rates
    assert len(m.samples) == 1  # a pending reading is not recorded


def test_every_case_carries_its_window_and_it_survives_the_journal():
    from harness.report.jsonfile import case_to_dict
    from harness.report.jsonread import case_from_dict

    case, obs = case_and_obs(1.0)
    ok = Evidence(check="latency_ms", turn=0, availability="ready", passed=True, reason="within")
    out = excuse(case, replace(result(case, obs, ok), status="pass"), monitor(**BUSY))
    assert out.status == "pass" and out.machine["overloaded"] is True and out.machine["loop_lag_max_s"] == 2.3
    again = case_from_dict(case_to_dict(out))
    assert again.machine == out.machine
    assert excuse(case, result(case, obs, ok), MachineMonitor(cores=2)).machine is None  # never measured


def test_the_probe_reads_this_machine():
    """Whatever this machine offers, the probe's readings are numbers or None, never an exception."""
    from harness.run.probe import Probe

    p = Probe()
    cpu, wait = p.own()
    assert cpu >= 0 and (wait is None or wait >= 0)
    assert p.busy_s() >= 0 and p.cores >= 1
    for value in (p.cpu_stall_us(), p.runnable(), p.load1()):
        assert value is None or value >= 0


# -- a sandbox that froze ----------------------------------------------------------------------------------------

def two_turns(fail_turn: int):
    """Turn 0 at T0..T0+3, turn 1 at T0+20..T0+23; the failing reply check on ``fail_turn``."""
    turns = (Turn(send="summarize x"), Turn(send="and the post?"))
    case = Case(id="f", layer="multiturn", channel="telegram", turns=turns)
    obs_turns = tuple(TurnObservation(index=i, sent_at=T0 + 20 * i, delivery_status=200, delivery_error="",
                                      replies=(reply(T0 + 20 * i + 3),), events=(), settled_after_s=3.5)
                      for i in range(2))
    obs = Observation(case_id="f", channel="telegram", chat_id="1", turns=obs_turns, started_at=T0,
                      finished_at=T0 + 24)
    wrong = Evidence(check="reply.regex", turn=fail_turn, availability="ready", passed=False,
                     reason="I couldn't download the document")
    return case, result(case, obs, wrong)


def frozen_at(turn: int, lag: float = 10.8, others: float = 1.7) -> MachineMonitor:
    """A starved machine whose loop stalled ``lag`` s once, in turn ``turn``'s window."""
    m = monitor(**STARVED, end=T0 + 25)
    at = T0 + 20 * turn + 2.0
    m.record(Sample(at=at, span_s=lag + 0.2, lag_s=lag, others_cores=others, cpu_wait=0.95, load1=9.7))
    m.samples = type(m.samples)(sorted(m.samples, key=lambda s: s.at), maxlen=m.samples.maxlen)
    m._times = None
    return m


@pytest.mark.parametrize("fail_turn, froze, lag, others, status", [
    (0, 0, 10.8, 1.7, "unavailable"),   # the document fetch timed out while the harness did not run
    (1, 0, 10.8, 1.7, "unavailable"),   # a later turn builds on the frozen one
    (0, 1, 10.8, 1.7, "fail"),          # the failure came before the freeze
    (0, 0, 1.5, 1.7, "fail"),           # a stall shorter than FROZEN_S explains no timeout
    (0, 0, 10.8, 0.1, "fail"),          # the harness stalled on its own (no other job): its own bug
])
def test_a_frozen_sandbox(fail_turn, froze, lag, others, status):
    case, r = two_turns(fail_turn)
    m = frozen_at(froze, lag, others)
    out = excuse(case, r, m)
    assert out.status == status, [e.reason for e in out.evidence]
    if status == "unavailable":
        assert f"stalled {lag:.1f} s in turn {froze + 1}" in out.evidence[0].reason
        assert m.describe()["excused"]["frozen"] == 1


def test_lag_since_counts_the_lag_after_an_instant():
    m = frozen_at(0)
    assert m.lag_since(T0 + 1) == pytest.approx(sum(s.lag_s for s in m.samples if s.at > T0 + 1))
    assert m.lag_since(T0 + 1) > 10.8
    assert m.lag_since(T0 + 100) == 0.0


async def test_an_off_monitor_never_samples_nor_excuses():
    m = MachineMonitor.off()
    m.start()
    await asyncio.sleep(0.01)
    await m.stop()
    assert not m.samples and m.describe()["samples"] == 0
    case, obs = case_and_obs(7.5)
    assert excuse(case, result(case, obs, latency_failure(7.5)), m).status == "fail"


@pytest.mark.parametrize("lag, excess, others, explained", [
    (1.3, 1.0, 0.1, True),    # the harness's own loop stalled 1.3 s on a quiet machine: the reply was stamped late
    (1.3, 2.0, 0.1, False),   # more than the stall: the agent's own slowness, still a failure
    (0.2, 0.1, 0.1, False),   # no stall worth the name: a breach is a breach
    (1.3, None, 0.1, False),  # no measured excess: only an overloaded machine excuses that
])
def test_the_harness_s_own_stall_explains_no_more_than_itself(lag, excess, others, explained):
    from harness.run.machine import Window

    w = Window(start=0.0, end=10.0, cores=2, samples=50, lag_max_s=lag, others_cores=others, own_wait_s=0.0)
    assert not w.overloaded
    assert w.explains(excess) is explained


@pytest.mark.parametrize("others, observed, bound, explained", [
    (1.2, 3.1, 2.9, True),    # others held 1.2 of 2 cores: the agent's work runs up to 2.5x longer
    (1.2, 8.0, 2.9, False),   # far beyond what sharing explains: a real slowdown
    (0.1, 3.1, 2.9, False),   # a quiet machine: a breach is a breach
    (1.9, 11.0, 2.9, True),   # nearly all the machine taken: capped at 4x
    (1.9, 12.0, 2.9, False),
])
def test_a_machine_shared_with_other_processes_stretches_a_band_no_further_than_its_share(
        others, observed, bound, explained):
    from harness.run.machine import Window

    w = Window(start=0.0, end=10.0, cores=2, samples=50, lag_max_s=0.0, others_cores=others, own_wait_s=0.0)
    assert w.shared_explains(observed, bound) is explained
