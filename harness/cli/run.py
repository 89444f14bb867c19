"""``harness run``: the options checked, the target started early, the run with its progress
on the terminal, then quarantine, history, diff, cost and the reports (harness/cli/nightly.py,
cost.py), the overhead line and the upload."""

from __future__ import annotations

import asyncio
import math
import sys
import time
from pathlib import Path

from harness import redact
from harness.cli import process, suite
from harness.cli.parser import MAX_REPEAT
from harness.errors import SandboxError, TargetError, UsageError


def cmd_run(args) -> int:
    from harness.config import load_config

    if not 1 <= args.repeat <= MAX_REPEAT:
        raise UsageError(f"--repeat {args.repeat} is not between 1 and {MAX_REPEAT}",
                         fix="--repeat 3 runs every case three times")
    if args.maxfail is not None and args.maxfail < 1:
        raise UsageError("--maxfail must be at least 1", fix="-x stops at the first failure, --maxfail 3 after three")
    if args.concurrency is not None and not 1 <= args.concurrency <= 1000:  # as [sandbox] concurrency
        raise UsageError(f"--concurrency {args.concurrency} is not between 1 and 1000",
                         fix="--concurrency 1 runs one case at a time ([sandbox] concurrency takes 1-1000 too)")
    if args.budget_usd is not None and not (math.isfinite(args.budget_usd) and args.budget_usd >= 0):
        raise UsageError(f"--budget-usd {args.budget_usd} is not an amount", fix="a finite number of dollars >= 0, e.g. 0.5")
    config = load_config(args.config)
    redact.for_run(config)  # the run's redactor: every sink applies it (harness/redact.py)
    out = Path(args.out) if args.out else config.resolve("reports")
    from harness.schema.files import output_dir_problem

    problem = output_dir_problem(out)  # before anything looks at it (a name too long crashed the start)
    if problem:
        raise UsageError(problem, fix="--out names a folder for the runs (created if missing), with no folder named "
                                      ".harness.lock in it")
    if args.against:  # a run to diff with that is not there is refused before anything starts
        from harness.cli.nightly import source_for
        from harness.night.baseline import load_run, resolve_run_id

        source = source_for(out, config)
        args.against = resolve_run_id(source, args.against)
        load_run(source, args.against)  # one that is there but unreadable too (the diff was dropped, exit 0)
    from harness.run.early import start_early

    # The target starts now, before the heavy imports below and the cases' validation: its own
    # start-up runs beside the harness's (harness/run/early.py). The runner takes it over.
    early = start_early(config, out, args.flow.run_id)
    try:
        return _run(args, config, out, early)
    except BaseException:
        if early is not None and not early.taken:  # ended before the runner took it: no trace left
            early.discard()
        raise


def _run(args, config, out: Path, early) -> int:
    from harness.report import write_all
    from harness.run.runner import RunOptions, run_loading
    from harness.cli.nightly import diff_line, finish_run

    console = progress = None
    if not args.quiet:  # --quiet prints nothing: rich (harness.report.terminal) is not even imported
        from harness.report.terminal import Progress, make_console

        console = make_console(stderr=False)  # off a terminal: no width limit, nothing cut
        progress = Progress(console, every_case=args.verbose)
    selected: list = []
    from harness.report.phases import Phase, phase

    say = progress.note if progress else None  # a phase over ~2 s gets a line (harness/report/phases.py)

    def starting_what() -> str:
        encodes = any(s.name == "similarity" or s.name.startswith("critic.")
                      for c in selected for t in c.turns for s in t.checks)
        return ("starting the sandbox and the target" + ("" if selected else ", reading the cases")
                + (", loading the embedding model (similarity and critic checks)" if encodes else ""))

    starting = Phase(starting_what, say).start()
    after = Phase("after the last case: the services' end-of-run work, stopping the target and the sandbox", say)

    def on_case(result) -> None:
        progress.advance(result)
        if progress.done >= progress.total:  # the last count line now, then whatever runs after the cases
            progress.stop()
            after.start()

    def on_start(total: int) -> None:  # the header line before the first case (pytest's "collected N items")
        from collections import Counter

        starting.end()

        layers = Counter(c.layer for c in selected)
        by_layer = ", ".join(f"{n} {name}" for name, n in layers.items())
        conc = args.concurrency or config.sandbox.concurrency
        console.print(redact.inert(f"harness run: {total} case(s)" + (f" ({by_layer})" if by_layer else "")
                                   + (f" x {args.repeat} repeats" if args.repeat > 1 else "")
                                   + f" · target {config.target.name} · concurrency {conc} · "
                                     f"writing {out / args.flow.run_id}"),
                      markup=False, highlight=False, soft_wrap=True)
        progress.start(total)

    options = RunOptions(out_dir=out, repeat=args.repeat, concurrency=args.concurrency,
                         on_start=(on_start if progress else None),
                         on_case=(on_case if progress else None), budget_usd=args.budget_usd,
                         on_note=(progress.note if progress else None),
                         golden_dir=Path(args.golden) if args.golden else config.golden_dir(),
                         run_id=args.flow.run_id, identity_offset=args.flow.identity_offset,
                         maxfail=args.maxfail)
    quarantine = None

    def load():  # in a worker thread, while the sandbox and the target come up (run_loading)
        nonlocal quarantine
        cases, quarantine, _golden_dir, goldens = suite.validate_suite(args, config)
        cases = args.flow.select(cases)  # --shard (harness.night.runflow)
        selected[:] = cases
        from harness.models.extra import suite_problem

        problem = suite_problem(cases, config)  # harness[models] missing: those checks will be unavailable
        if problem:
            print(f"harness: {problem}; those checks will be unavailable", file=sys.stderr)
        elif not args.quiet:  # (the extra's line above covers what the notes would say)
            from harness import layer as layer_registry

            for note in layer_registry.install_notes(config.sections):  # e.g. no default variants on the core install
                print(f"harness: {note}", file=sys.stderr)
        options.golden_version, options.prior = goldens.version, args.flow.begin(cases)  # lock, manifest, --resume
        options.baseline, options.baseline_note = _learned(config, out, args.concurrency)  # baseline.* checks
        return cases

    process.loaded()  # start-up's modules are in: garbage collection as usual from here (main)
    try:
        report = asyncio.run(run_loading(config, options, load, early, prewarm=_after_run_modules))
    except (TargetError, SandboxError) as exc:  # exit 4: alert that the run failed to start
        from harness.cli import cost as cli_cost

        cli_cost.start_failed(config, exc)
        raise
    finally:
        starting.end()
        after.end()
        if progress:
            progress.stop()
    from harness.cli import cost as cli_cost  # loaded by now (_after_run_modules)

    run_dir = out / report.run_id
    with phase("reading the earlier runs for the history and the diff", say):
        report, nightly, d = finish_run(report, out, config, quarantine, run=run_kind(args), against=args.against)  # quarantine, history, diff; d: its dict, built once
    with phase("the budget and the alerts", say):
        report = cli_cost.after_run(config, report, run_dir, d)  # budget breach on stderr; alerts (notes into d too)
    report, overhead = with_overhead(report, d, args.concurrency or config.sandbox.concurrency,
                                     resumed=set(options.prior or ()))
    with phase(f"writing the reports into {run_dir}", say):
        files = write_all(args.flow.finish(report, d), run_dir, **nightly)  # + manifest, shard (harness.night.runflow)
    if not args.quiet:
        from harness.report.terminal import print_table

        print_table(report, console)
        console.print(redact.inert(diff_line(nightly["diff"])), markup=False)
        from harness.report.changes import changes_line, changes_or_note

        changed = changes_line(changes_or_note(d, nightly.get("base"))[0])  # tonight beside the accepted replies
        if changed:
            console.print(redact.inert(changed), markup=False)
        console.print(overhead, markup=False, highlight=False)
        console.print(redact.inert(f"report: {files.get('html', run_dir)}"), markup=False, highlight=False)
    with phase("uploading the run to [storage]", say):
        args.flow.upload(run_dir, quiet=args.quiet)  # [storage]: this run, then the pending spool
    return report.exit_code


def _after_run_modules() -> None:
    """What only the end of ``harness run`` needs, loaded while the run waits out its last quiet
    window (``Runner.prewarm``), not on the way to the first case: the report writers and their
    templates, the budget and alerts (``cli/cost.py``: night.alerts, tenacity), the overhead."""
    from harness.report import prewarm

    prewarm()
    from harness.cli import cost  # noqa: F401
    from harness.run import kind, overhead  # noqa: F401


def run_kind(args) -> dict:
    """results.json's ``run`` object: the run's kind from its selection and repeat (harness.run.kind)."""
    from harness.run.kind import run_info

    selection = [*(x for layer in args.layer for x in ("--layer", layer)),
                 *(x for case in args.case for x in ("--case", case)),
                 *(["-k", args.keyword] if args.keyword else []), *(["--lf"] if args.last_failed else []),
                 *(["--maxfail", str(args.maxfail)] if args.maxfail is not None else [])]
    return run_info(selection=selection, repeat=args.repeat, shard=args.shard, kind=getattr(args, "kind", None))


def _learned(config, out: Path, concurrency: int | None):
    """What the accepted nights held (harness.night.learned), or (None, why not): never fatal."""
    from harness.cli.nightly import source_for
    from harness.night.learned import load_baseline

    try:
        return load_baseline(config, out, concurrency or config.sandbox.concurrency, source=source_for(out, config))
    except Exception as exc:  # a broken history must not stop the night; the run says why
        return None, f"baseline not loaded: {type(exc).__name__}: {exc}"

def with_overhead(report, d: dict, concurrency: int, resumed: set[str] = frozenset()):
    """The run's overhead (harness/run/overhead.py) into results.json ``summary.overhead`` and
    the run's notes (summary.md); (report, the line ``harness run`` prints last). Cases a
    ``--resume`` kept from the killed run ran in another process: not on this wall's path."""
    from dataclasses import replace

    from harness.report.jsonfile import jsonable
    from harness.run.overhead import overhead_line, run_overhead

    figure = run_overhead([c for c in report.cases if c.id not in resumed], time.time() - process.command_start(),
                          concurrency)
    line = overhead_line(figure)
    report = replace(report, notes=tuple(report.notes) + (line,),
                     perf={**report.perf, "summary": {**(report.perf or {}).get("summary", {}), "overhead": figure}})
    d.setdefault("summary", {})["overhead"] = figure
    d["notes"] = jsonable(list(report.notes))
    return report, line

