"""``harness judges``: derive wrong answers, judge them with the case's own checks, report.

``run_judges(config, options, cases)`` returns the judges.json dict (and writes it with
judges.html). The cases are handed in (the command line loads them: ``harness.cases`` sits on
the floor above the judges). Services are the run's own (harness.services: the configured embedder and
critic); an LLM critic backend is used only with ``llm_critic=True`` (it costs money),
otherwise the offline critic stands in and the report says so.
"""

from __future__ import annotations

import asyncio
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from harness.judges import cache as C
from harness.judges import thresholds as T
from harness.judges import ahead as A
from harness.judges.evaluate import Plan, judge, plan
from harness.judges.mutate import KINDS
from harness.judges.suite import Mutation, Subject, mutations, subjects
from harness.types import Case

CONCURRENCY = 64
"""Verdicts in flight at once with an LLM critic (its requests). With the offline critic every
verdict is in flight at once: their texts were sent to the model ahead (judges/ahead.py), and
each verdict is judged as soon as its group's texts are encoded."""
#: The most seconds ``harness judges`` stays silent: a phase that says nothing for this long
#: (judging, threshold proposals, the critic's health) gets a progress line.
PROGRESS_S = 5.0


@dataclass
class JudgeOptions:
    out: Path
    golden: Path | None = None
    min_catch: float = 0.9
    seed: int = 11
    llm_critic: bool = False
    use_cache: bool = True
    progress: Callable[[str], None] | None = None
    notes: list[str] = field(default_factory=list)
    services: Any = None
    """Made ahead by ``preload`` (the CLI: the model loads while the cases do); else made here."""


def preload(config, options: JudgeOptions) -> None:
    """Make the services now and start the embedding model's load in a daemon thread, before
    the cases and goldens are read: the model's process (torch's import, 3-4 s here) is the
    longest part of a cold judges run, so it starts first. A failure here is left for the run
    to meet and report where the model is needed (``load_now`` tries again there)."""
    import threading

    notes = len(options.notes)
    try:
        services = make_services(config, options)
        front = getattr(services.get("embedder"), "front", None)
        load = getattr(front, "load_now", None)
    except Exception:  # the run makes its services again and says what is wrong
        del options.notes[notes:]
        return
    options.services = services
    if load is None:
        return

    def quietly() -> None:
        try:
            load()
        except Exception:  # raised again, and reported, where the run asks for the model
            pass

    threading.Thread(target=quietly, name="judges-model-preload", daemon=True).start()


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def make_services(config, options: JudgeOptions):
    from harness.models import settings as S
    from harness.services import Services, default_factories

    factories = default_factories()
    cfg = S.critic_settings(config)
    if cfg.backend != "offline" and not options.llm_critic:
        from harness.models.critic_offline import OfflineCritic
        from harness.models.factories import CriticService, golden_dir

        def offline(services):
            backend = OfflineCritic(services.get("embedder"), support_min=cfg.support_min,
                                    unsupported_below=cfg.unsupported_below)
            return CriticService(backend, config.resolve(config.sandbox.docs_dir), golden_dir(services) / "critic")

        factories["critic"] = offline
        options.notes.append(f"[critic] backend {cfg.backend!r} not used (it costs money): the offline critic judged; "
                             "pass --llm-critic to use it")
    # mutations say nothing of what a nightly's embedder needs (embed_record); --no-cache: no
    # mutated reply's vector from the disk cache either (goldens and documents still are)
    return Services(config, factories=factories, golden_dir=options.golden, embed_cache_all=options.use_cache,
                    embed_record=False)


def _settings(config) -> dict:
    from harness.models import settings as S

    return {"embeddings": S.embedding_settings(config).__dict__, "critic": {
        k: v for k, v in S.critic_settings(config).__dict__.items() if k != "api_key_env"}}


def _checks_of(subject: Subject) -> list:
    return [(s.name, s.params) for s in subject.case.turns[subject.turn].checks]


async def run_judges(config, options: JudgeOptions, cases: Sequence[Case]) -> dict[str, Any]:
    """Judge ``cases`` (every case with a golden is judged, whatever its layer)."""
    shown = options.progress or _stderr
    started = time.monotonic()
    last = [started]
    state: dict[str, Any] = {"phase": "loading the cases", "done": 0, "jobs": 0, "cache": None}

    def say(line: str) -> None:
        last[0] = time.monotonic()
        shown(line)

    async def heartbeat() -> None:  # no phase goes silent for longer than PROGRESS_S
        while True:
            await asyncio.sleep(max(0.05, last[0] + PROGRESS_S - time.monotonic()))
            if time.monotonic() - last[0] >= PROGRESS_S:
                hits = state["cache"].hits if state["cache"] is not None else 0
                say(f"judges: {state['phase']}: {state['done']}/{state['jobs']} judged ({hits} from the cache), "
                    f"{time.monotonic() - started:.0f}s")

    beat = asyncio.ensure_future(heartbeat())
    try:
        return await _judges(config, options, cases, say, state, started)
    finally:
        beat.cancel()


async def _judges(config, options: JudgeOptions, cases: Sequence[Case], say: Callable[[str], None],
                  state: dict[str, Any], started: float) -> dict[str, Any]:
    from harness.golden import load_goldens

    golden_path = Path(options.golden or config.golden_dir())  # [suite] golden
    goldens = load_goldens(golden_path)
    services = options.services if options.services is not None else make_services(config, options)
    loading = _load_model(services.get("embedder"))  # beside the mutations' derivation (or joins preload's)
    critic = services.get("critic")
    subs, notes = subjects(cases, goldens, critic.source_text)
    options.notes.extend(notes)
    muts: dict[str, list[Mutation]] = {s.case.id: mutations(s, subs, options.seed) for s in subs}
    total = sum(len(v) for v in muts.values())
    say(f"judges: {len(subs)} judged cases, {sum(len(s.answers) for s in subs)} golden answers, {total} mutations "
        f"(critic {critic.name})")
    from harness.models import settings as S

    cache = state["cache"] = C.VerdictCache(S.cache_dir(config) if options.use_cache else None)
    base = C.digest(C.code_digest(), C.files_digest(golden_path.glob("*.y*ml")), _settings(config), critic.name)
    state["jobs"], state["phase"] = total + sum(len(s.answers) for s in subs), "judging"
    sem = asyncio.Semaphore(CONCURRENCY if options.llm_critic else max(1, state["jobs"]))

    def key_of(subject: Subject, reply: str, post: str, all_checks: bool) -> str:
        return C.digest(base, subject.case.id, subject.turn, _checks_of(subject), subject.source,
                        C.digest(subject.document), reply, post, all_checks)

    async def verdict(subject: Subject, reply: str, post: str, *, all_checks: bool = False,
                      planned: Plan | None = None) -> dict:
        key = key_of(subject, reply, post, all_checks)
        hit = cache.get(key)
        if hit is not None:
            return hit
        async with sem:
            v = await judge(subject.case, subject.turn, reply, post, services, all_checks=all_checks,
                            planned=planned)
        value = {"caught_by": v.caught_by, "passed": v.passed, "soft": v.soft, "unavailable": v.unavailable,
                 "failures": [f"{e.check}: {e.reason}" for e in v.evidence if e.passed is not True][:4]}
        cache.put(key, value)
        return value

    async def tick(coro):
        result = await coro
        state["done"] += 1
        if state["done"] % 50 == 0:
            say(f"judges: {state['done']}/{total + sum(len(s.answers) for s in subs)} judged "
                f"({cache.hits} from the cache, {time.monotonic() - started:.0f}s)")
        return result

    golden_jobs = [(s, i, s.render(a)) for s in subs for i, a in enumerate(s.answers)]
    mut_list = [(subjects_by_id, m) for subjects_by_id in [{s.case.id: s for s in subs}] for ms in muts.values()
                for m in ms]
    # Independent work at once: every golden's and mutation's verdict, the threshold scores
    # (they read no verdict) and the critic's health set (it reads neither). What they will
    # embed goes to the model first, in large requests (judges/ahead.py): the health set's
    # (its rules run while the model encodes the cases'), the cases' group by group, the texts
    # only the threshold scores read last. A verdict from the cache needs none of it.
    golden_plans = [None if cache.has(key_of(s, r, p, True)) else plan(s.case, s.turn, r, p, all_checks=True)
                    for s, _, (r, p) in golden_jobs]
    mut_plans = [None if cache.has(key_of(sid[m.case], m.reply, m.post, False))
                 else plan(sid[m.case].case, sid[m.case].turn, m.reply, m.post) for sid, m in mut_list]
    health_job = asyncio.ensure_future(_health(critic, golden_path, cache, base))
    await asyncio.sleep(0)  # the health set's requests are the model's first
    embedder = services.get("embedder")
    sends = [asyncio.ensure_future(A.send(embedder, texts))
             for texts in _ahead(subs, muts, golden_jobs, golden_plans, mut_list, mut_plans, services, cache, base)]
    proposals_job = asyncio.ensure_future(T.propose(subs, muts, services, cache, base))
    try:
        results = await asyncio.gather(*(tick(verdict(s, r, p, all_checks=True, planned=pl))
                                         for (s, _, (r, p)), pl in zip(golden_jobs, golden_plans)),
                                       *(tick(verdict(sid[m.case], m.reply, m.post, planned=pl))
                                         for (sid, m), pl in zip(mut_list, mut_plans)))
    except BaseException:
        proposals_job.cancel()
        health_job.cancel()
        raise
    golden_results, mut_results = results[:len(golden_jobs)], results[len(golden_jobs):]

    # A check catches a mutation only if it held on the right answer the mutation came from:
    # a check that already fails the golden (a judge's false alarm) proves nothing.
    failed_on: dict[tuple[str, int], set[str]] = {(s.case.id, i): set(res["caught_by"])
                                                  for (s, i, _), res in zip(golden_jobs, golden_results)}
    kinds: dict[str, dict[str, int]] = {k: {"mutations": 0, "caught": 0} for k in KINDS}
    entries = []
    discounted = 0
    for (sid, m), res in zip(mut_list, mut_results):
        if m.answer >= 0:
            origin = failed_on.get((m.case, m.answer), set())
        else:
            sets = [failed_on[(m.case, i)] for i in range(len(sid[m.case].answers))]
            origin = set.intersection(*sets) if sets else set()
        caught_by = [c for c in res["caught_by"] if c not in origin]
        discounted += bool(res["caught_by"]) and not caught_by
        kinds[m.kind]["mutations"] += 1
        kinds[m.kind]["caught"] += bool(caught_by)
        entries.append({"id": m.case, "kind": m.kind, "mutation": m.label, "caught_by": caught_by})
    if discounted:
        options.notes.append(f"{discounted} mutation(s) failed only checks that also fail the golden answer they "
                             "came from: not counted as caught")
    golden_failures = [{"id": s.case.id, "answer": i, "failures": res["failures"]}
                       for (s, i, _), res in zip(golden_jobs, golden_results) if not res["passed"]]

    if not proposals_job.done():
        state["phase"] = "similarity scores for threshold proposals"
        say("judges: similarity scores for threshold proposals")
    proposals = await proposals_job
    if not health_job.done():
        state["phase"] = "critic health"
        say("judges: critic health")
    health = await health_job
    await asyncio.gather(*sends, loading, return_exceptions=True)  # a failed request failed its checks already
    cache.save()
    await services.aclose()

    below = {k: v for k, v in kinds.items() if v["mutations"] and v["caught"] / v["mutations"] < options.min_catch}
    result = {
        "kinds": kinds,
        "goldens": {"total": len(golden_jobs), "passed": len(golden_jobs) - len(golden_failures)},
        "health": {k: health.get(k) for k in ("examples", "accuracy_all", "kappa", "undecided")},
        "cases": entries,
        # beyond the contract: what the figures rest on
        "thresholds": proposals,
        "golden_failures": golden_failures,
        "health_detail": health,
        "meta": {"seed": options.seed, "min_catch": options.min_catch, "critic": critic.name,
                 "embedder": services.get("embedder").name, "judged_cases": len(subs),
                 "cache": {"hits": cache.hits, "misses": cache.misses}, "seconds": round(time.monotonic() - started, 1),
                 "below_min_catch": sorted(below), "notes": options.notes,
                 "generated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
    }
    from harness.judges.report import write

    write(options.out, result)
    say(f"judges: wrote {options.out / 'judges.json'} and judges.html in {result['meta']['seconds']}s "
        f"({cache.hits} cached verdicts)")
    return result


def _load_model(embedder) -> asyncio.Future:
    """Start loading the embedding model now, in a worker thread (its own process: the event
    loop is not held), while the cases, goldens and mutations are made."""
    front = getattr(embedder, "front", None)
    load = getattr(front, "load_now", None)
    return asyncio.ensure_future(asyncio.to_thread(load)) if load else asyncio.ensure_future(asyncio.sleep(0))


def _ahead(subs: list[Subject], muts: dict[str, list[Mutation]], golden_jobs, golden_plans, mut_list, mut_plans,
           services, cache, base: str) -> list[A.Texts]:
    """The requests to send the model ahead (judges/ahead.py): each case's verdicts' texts, case
    by case in the order they are judged, then the threshold scores' (when not cached)."""
    per_case: dict[str, A.Texts] = {s.case.id: A.Texts() for s in subs}
    for (s, _, _), planned in zip(golden_jobs, golden_plans):
        if planned is not None:
            A.check_texts(s.case, s.turn, planned.obs, planned.deferred, services, per_case[s.case.id])
    for (sid, m), planned in zip(mut_list, mut_plans):
        if planned is not None:
            s = sid[m.case]
            A.check_texts(s.case, s.turn, planned.obs, planned.deferred, services, per_case[m.case])
    last = A.Texts()
    for s in subs:
        if not cache.has(T.key_of(s, muts.get(s.case.id, []), base)):
            answers, framed, wrong = T.texts(s, muts.get(s.case.id, []))
            last.add(answers, cached=True)
            last.add(framed + wrong)
    return A.groups(list(per_case.values()), last)


async def _health(critic, golden_path: Path, cache, base: str) -> dict:
    """The critic's health on ``<golden>/critic/`` (kept by content in ``cache``)."""
    from harness.models import critic_health as H

    health_dir = golden_path / "critic"
    hkey = C.digest(base, "health", C.files_digest(health_dir.glob("*.y*ml")) if health_dir.is_dir() else "")
    health = cache.get(hkey)
    if health is not None:
        return health
    try:
        examples = H.load_examples(health_dir)
        a = await H.score_critic(critic.backend, examples, critic.source_text)
        n = a.decided + a.undecided
        health = {"examples": n, "accuracy_all": round((a.tp + a.tn) / n, 4) if n else None,
                  "kappa": round(a.kappa, 4) if a.kappa is not None else None, "undecided": a.undecided,
                  "accuracy_decided": round(a.accuracy, 4) if a.accuracy is not None else None,
                  "counts": {"true_positive": a.tp, "true_negative": a.tn, "false_positive": a.fp,
                             "false_negative": a.fn}}
        cache.put(hkey, health)
    except Exception as exc:  # a broken health set is reported, not fatal
        health = {"examples": 0, "accuracy_all": None, "kappa": None, "undecided": 0, "error": str(exc)}
    return health


def exit_code(result: dict) -> int:
    """1 when a kind's catch rate is under --min-catch or a golden fails its own checks."""
    return 1 if result["meta"]["below_min_catch"] or result["golden_failures"] else 0
