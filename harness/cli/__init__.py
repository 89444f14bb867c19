"""The ``harness`` command line (contract in DESIGN.md).

Exit codes: 0 every hard check held; 1 regression or hard failure; 2 usage, config or
fixture error (nothing was run); 3 cost budget exceeded; 4 the target or the sandbox
could not be brought up.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import logging
import math
import os
import signal
import sys
import time
from pathlib import Path

from harness import __version__
from harness.errors import ConfigError, FixtureErrors, HarnessError, SandboxError, TargetError, UsageError
from harness import layer as layer_registry
from harness import redact


#: When this command started: the wall time of ``harness overhead`` counts from here. For the
#: process's own command the process's start (``_command_start``), else ``main``'s call.
_started_at = time.time()
_own_command = False

#: The most repeats a run or a calibration takes (each repeat runs the whole selection again).
MAX_REPEAT = 1000


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="harness", description="Nightly regression harness for LLM chat agents.")
    p.add_argument("--version", action="version", version=f"harness {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run the suite (or some layers / cases) against the target")
    run.add_argument("--config", help="config file (default: ./harness.toml)")
    run.add_argument("--fixtures", default=None, help="case files folder (default: fixtures/ next to the config)")
    run.add_argument("--golden", default=None, help="golden answers folder (default: golden/)")
    run.add_argument("--layer", action="append", default=[], choices=layer_registry.names(), help="run only this layer (repeatable)")
    run.add_argument("--case", action="append", default=[], metavar="GLOB", help="run only cases whose id matches")
    run.add_argument("--repeat", type=int, default=1, metavar="K", help="run every case K times (pass@k, pass^k)")
    run.add_argument("--concurrency", type=int, default=None, metavar="N", help="cases at once (default 8)")
    run.add_argument("--out", default=None, help="output folder (default: reports/)")
    run.add_argument("--budget-usd", type=float, default=None, help="hard cost budget for the run")
    up = run.add_mutually_exclusive_group()
    up.add_argument("--upload", dest="upload", action="store_true", default=None)
    up.add_argument("--no-upload", dest="upload", action="store_false")
    run.add_argument("--resume", metavar="RUN_ID", help="continue a killed run from its journal")
    run.add_argument("--shard", metavar="I/N", help="run one slice of the suite")
    run.add_argument("--run-id", default=None, help="name the run (shards of one run share it)")
    run.add_argument("--quiet", action="store_true", help="no progress output")
    run.add_argument("-k", dest="keyword", metavar="EXPR", default=None,
                     help="only cases whose id or tags match EXPR: words with and/or/not/(), "
                          "e.g. -k 'url and not malformed' (as pytest -k)")
    run.add_argument("-x", "--exitfirst", dest="maxfail", action="store_const", const=1,
                     help="start no new case after the first failure (--maxfail 1)")
    run.add_argument("--maxfail", type=int, default=None, metavar="N",
                     help="start no new case after N cases failed or errored; the rest are reported skipped")
    run.add_argument("--lf", "--last-failed", dest="last_failed", action="store_true",
                     help="run only the cases that did not pass in the newest run in --out (all of them when none failed)")
    run.add_argument("-v", "--verbose", action="store_true", help="a line for every case, also on a terminal")

    rep = sub.add_parser("report", help="render a finished run's report again")
    rep.add_argument("run_dir")
    rep.add_argument("--format", choices=("html", "md", "junit", "json", "github"), default="md",
                     help="github: Markdown for a PR comment or $GITHUB_STEP_SUMMARY, printed to stdout")

    cal = sub.add_parser("calibrate", help="run the suite against every seeded regression of the reference agent")
    cal.add_argument("--config")
    cal.add_argument("--fixtures", default=None)
    cal.add_argument("--out", default=None, help="output folder (default: reports/calibration-<time>)")
    cal.add_argument("--repeat", type=int, default=1, metavar="K", help="clean (and noisy) runs")
    cal.add_argument("--parallel", type=int, default=None, metavar="N",
                     help="runs at once (default: one more than the cores, at most 8)")
    cal.add_argument("--concurrency", type=int, default=None, metavar="N", help="cases at once within a run")
    cal.add_argument("--layer", action="append", default=[], choices=layer_registry.names())
    cal.add_argument("--regression", action="append", default=[], help="only these regressions")
    cal.add_argument("--no-noise", action="store_true", help="skip the noisy clean runs")
    cal.add_argument("--no-baseline", dest="baseline", action="store_false",
                     help="no learned baseline: skip the accepted-nights run (3 noisy attempts per case) that "
                          "every later run is held to (baseline.* evidence)")

    cal.add_argument("--full", action="store_true",
                     help="run the whole suite against every regression (the complete catch matrix); "
                          "default: stop each regression's run at its first hard failure")

    ini = sub.add_parser("init", help="scaffold a harness.toml and example cases for your own bot")
    ini.add_argument("dir", nargs="?", default=".")
    ini.add_argument("--channel", choices=("telegram", "whatsapp"), default="telegram")
    ini.add_argument("--no-llm", dest="llm", action="store_false",
                     help="a bot without an LLM or documents: leave out the examples and settings that assume one")

    chk = sub.add_parser("check", help="validate config and fixtures; list what would run")
    chk.add_argument("--config")
    chk.add_argument("--fixtures", default=None)
    chk.add_argument("--golden", default=None, help="golden answers folder (default: golden/)")
    chk.add_argument("--layer", action="append", default=[], choices=layer_registry.names())
    chk.add_argument("--case", action="append", default=[], metavar="GLOB")

    from harness.cli.nightly import add_parsers as add_nightly_parsers  # history, diff, baseline

    add_nightly_parsers(sub)
    from harness.cli.goldens import add_parsers as add_golden_parsers  # golden accept

    add_golden_parsers(sub)
    from harness.cli.ops import add_parsers as add_ops_parsers  # upload, merge, schedule

    add_ops_parsers(sub)
    from harness.cli.judges import add_parser as add_judges_parser  # judges (mutation testing)
    add_judges_parser(sub)
    sch = sub.add_parser("schema", help="write the JSON Schema of case files and of harness.toml (for editors)")
    sch.add_argument("--out", default="schemas", help="output folder (default: schemas/)")
    return p


def _fixtures_dir(args, config) -> Path:
    return Path(args.fixtures) if args.fixtures else config.fixtures_dir()  # [suite] fixtures


def _cmd_calibrate(args) -> int:
    from datetime import datetime

    from harness.night.calibrate import calibrate, default_parallel, matrix_lines, write_calibration
    from harness.cases import load_cases
    from harness.config import load_config

    if args.parallel is None:
        args.parallel = default_parallel()
    if not (1 <= args.repeat <= MAX_REPEAT and 1 <= args.parallel <= 64):
        raise UsageError(f"--repeat must be 1-{MAX_REPEAT} and --parallel 1-64",
                         fix="--repeat 3 --parallel 2, for example")
    config = load_config(args.config)
    redact.for_run(config)
    cases = load_cases(_fixtures_dir(args, config), layers=args.layer, config=config)
    out = Path(args.out) if args.out else config.resolve("reports") / datetime.now().strftime("calibration-%Y%m%d-%H%M%S")
    from harness.schema.files import output_dir_problem

    if output_dir_problem(out):
        raise UsageError(output_dir_problem(out), fix="--out names a folder for the calibration (created if missing)")
    if (out / "runs").is_dir() and any((out / "runs").iterdir()):
        raise UsageError(f"{out} already holds a calibration", fix="pass another --out (or remove that folder)")

    def progress(outcome) -> None:  # as each run finishes; a regression's once the clean runs are in
        r = outcome.report
        state = outcome.error or (f"{r.summary.failed} failed, {r.summary.errored} errored" if r else "")
        if outcome.regression:
            stop = ", stopped at its first failure" if outcome.stopped_early else ""
            print(f"  {outcome.regression}: {outcome.verdict} ({outcome.seconds:.0f}s{stop})", flush=True)
        else:
            print(f"  {outcome.label}: {outcome.seconds:.0f}s, {state}", flush=True)

    print(f"harness calibrate: {'the whole suite per regression (--full)' if args.full else 'each regression stops at its first hard failure'}"
          f", {args.parallel} runs at once", flush=True)
    cal = asyncio.run(calibrate(config, cases, out / "runs", repeat=args.repeat, parallel=args.parallel,
                                baseline=args.baseline,
                                concurrency=args.concurrency, noise=not args.no_noise, only=args.regression,
                                on_run=progress, full=args.full))
    data = write_calibration(cal, out)
    print("\n".join(matrix_lines(data)))
    print(f"wrote {out / 'calibration.json'} and {out / 'calibration.html'}")
    ok = not data["missed"] and data["clean"]["hard_failures"] == 0 and data["noise"]["hard_failures"] == 0
    return 0 if ok else 1


def _cmd_init(args) -> int:
    from harness.cli.scaffold import init_project

    written = init_project(args.dir, args.channel, llm=args.llm)
    for path in written:
        print(f"wrote {path}")
    print("next: edit [target] command in harness.toml to start your bot, then `harness check` and `harness run`"
          " (docs/QUICKSTART.md)")
    return 0


def _validate_suite(args, config):
    """Everything a run reads, validated before anything runs (a problem exits 2): cases,
    quarantine, goldens, and the [embeddings] [critic] [budget] [alerts] [storage] sections.
    ``harness run`` and ``harness check`` share it, so check says what run would."""
    from harness.night.alerts import validate as validate_alerts
    from harness.run.budget import budget_settings
    from harness.cases import load_cases
    from harness.cli.nightly import load_run_quarantine
    from harness.golden import load_goldens
    from harness.models.settings import validate as validate_reasoning_settings
    from harness.night.storage import storage_config

    from harness.schema.files import output_dir_problem

    out = Path(args.out) if getattr(args, "out", None) else config.resolve("reports")
    problem = output_dir_problem(out)
    if problem:
        raise UsageError(problem, fix="--out names a folder for the runs (created if missing), with no folder named .harness.lock in it")
    fixtures = _fixtures_dir(args, config)
    cases = load_cases(fixtures, layers=args.layer, globs=args.case,
                       docs_dir=config.resolve(config.sandbox.docs_dir), config=config)
    if getattr(args, "keyword", None):
        from harness.cli.select import keyword_filter

        cases = [c for c in cases if keyword_filter(args.keyword)(c.id, c.tags)]
    if getattr(args, "last_failed", False):
        from harness.cli.select import last_failed

        wanted, note = last_failed(out)
        print(f"harness: --lf: {note}", file=sys.stderr)
        if wanted:
            cases = [c for c in cases if c.id in wanted]
    if not cases:
        message, fix = _no_case(fixtures, args)
        raise UsageError(message, fix=fix)
    quarantine = load_run_quarantine(_fixtures_dir(args, config))
    validate_reasoning_settings(config)
    validate_alerts(config)
    budget_settings(config)
    storage_config(config)
    if (config.sections.get("schedule") or {}):
        from harness.night.schedule import schedule_config

        schedule_config(config)  # what `harness schedule` would refuse, check refuses
    _validate_files(config)
    _validate_command(config)
    golden_dir = Path(args.golden) if getattr(args, "golden", None) else config.golden_dir()  # [suite] golden
    if getattr(args, "golden", None) and not golden_dir.is_dir():
        raise UsageError(f"--golden {args.golden}: {'no such folder' if not golden_dir.exists() else 'not a folder'}",
                         fix="--golden names the folder of approved answers (default: golden/ next to the config)")
    if not getattr(args, "golden", None) and os.path.lexists(golden_dir) and not golden_dir.is_dir():
        # a missing default folder is no golden yet; a file (or a dangling link) there is a mistake
        raise ConfigError(f"[suite] golden = {str(golden_dir)!r} is not a folder", file=str(config.path or ""),
                          fix="[suite] golden names the folder of approved answers (default: golden)")
    goldens = load_goldens(golden_dir)
    return cases, quarantine, golden_dir, goldens


def _no_case(fixtures: Path, args) -> tuple[str, str]:
    """Why nothing was selected, and the fix: an empty or wrong folder, or a selection matching nothing."""
    names = layer_registry.names()
    if not fixtures.is_dir():
        return (f"the fixtures folder {fixtures} {'does not exist' if not fixtures.exists() else 'is not a folder'}",
                "--fixtures names the folder holding one sub-folder per layer (default: fixtures/)")
    if not any((fixtures / n).is_dir() for n in names):
        return (f"{fixtures} holds no case folder ({', '.join(n + '/' for n in names)})",
                "--fixtures names the folder holding one sub-folder per layer, each with *.yaml case files")
    wanted = ", ".join([*(f"--layer {x}" for x in args.layer), *(f"--case {c}" for c in args.case)])
    return (f"no case matches the selection{' (' + wanted + ')' if wanted else ''} in {fixtures}",
            "check --layer and --case (harness check lists cases)")


def _validate_command(config) -> None:
    """[target].command can be started: what the start would refuse, check refuses too."""
    import os

    from harness.config import python_command
    from harness.errors import ConfigError
    from harness.targets.http import command_problem

    t = config.target
    if t.command:
        cwd = config.resolve(t.cwd) if t.cwd else config.root
        env = {**os.environ, **{k: str(v) for k, v in t.env.items()}}
        # placeholders ({port}, {run_dir}...) are only known at run time: a program named by one is not judged
        cmd = python_command(t.command)
        if cmd and "{" not in cmd[0]:
            problem = command_problem(cmd, cwd, env)
            if problem:
                raise ConfigError(problem, file=str(config.path or ""),
                                  fix='[target].command is the argv that starts your bot, e.g. ["python", "mybot.py"], '
                                      "run in [target].cwd (default: the config's folder)")
    if t.inprocess:  # imported as the run would: a module that fails, a name that is no factory
        from harness.targets.inprocess import load_object

        try:
            load_object(t.inprocess)
        except ConfigError as exc:
            exc.file = exc.file or str(config.path or "")
            raise


def _validate_files(config) -> None:
    """The files the sandbox reads at start-up, read now: the replay/record cassette and the prices."""
    from harness.errors import ConfigError
    from harness.models.prices import load_prices
    from harness.sandbox.cassettes import cassette_from_config

    try:
        cassette_from_config(config)  # llm_mode record/replay: a missing or broken cassette is exit 2
    except (OSError, ValueError) as exc:  # unreadable or not UTF-8 (ConfigError is not one of these)
        raise ConfigError(f"[sandbox] cassette cannot be read ({type(exc).__name__}: {exc})",
                          file=str(config.path or ""), fix='re-record it with llm_mode = "record"') from None
    prices = (config.sections.get("budget") or {}).get("prices")
    if prices:
        path = config.resolve(str(prices))
        try:
            load_prices(str(path))
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ConfigError(f"[budget] prices: {path} is not a price table ({type(exc).__name__}: {exc})",
                              file=str(config.path or ""), fix="see harness/data/prices.toml for the format") from None


def _cmd_check(args) -> int:
    from harness.config import load_config

    config = load_config(args.config)
    cases, quarantine, golden_dir, goldens = _validate_suite(args, config)
    from harness.cli.goldens import missing_goldens

    missing = missing_goldens(cases, goldens, golden_dir)
    if missing:  # run would judge them unavailable and the night incomplete: check says so first
        raise FixtureErrors(missing)
    by_layer: dict[str, list] = {}
    for c in cases:
        by_layer.setdefault(c.layer, []).append(c)
    print(redact.inert(f"config: {config.path or '(defaults)'}; target: {config.target.name}"))
    for layer, items in by_layer.items():
        chans = sorted({c.channel for c in items})
        print(f"  {layer}: {len(items)} cases ({', '.join(chans)})")
        for c in items:
            print(f"    {c.id} [{c.channel}] {len(c.turns)} turn(s), "
                  f"{sum(len(t.checks) for t in c.turns)} check(s)")
    print(redact.inert(f"goldens: {golden_dir} (version {goldens.version})"))
    from harness import layer as registry
    from harness.judges.warnings import mutation_warnings

    for problem in registry.problems():
        print(redact.inert(f"warning: layer plugin: {problem}"))
    reports = config.resolve("reports")
    for line in mutation_warnings(cases, reports, reports / "judges"):
        print(f"warning: {line}")
    from harness.checks.compat import suite_warnings  # meanings changed since the suite was written

    for line in suite_warnings(cases):
        print(f"warning: {line}")
    if not args.layer and not args.case:  # a quarantine naming no case (renamed, deleted) quarantines nothing
        ids = {c.id for c in cases}
        for entry in quarantine or ():
            if entry.id not in ids:
                print(f"warning: fixtures/quarantine.yaml: {entry.id!r} names no case of the suite, so it "
                      "quarantines nothing (renamed or removed? remove the entry)")
    print(f"{len(cases)} cases would run")
    return 0


def _cmd_run(args) -> int:
    from harness.config import load_config

    if not 1 <= args.repeat <= MAX_REPEAT:
        raise UsageError(f"--repeat {args.repeat} is not between 1 and {MAX_REPEAT}",
                         fix="--repeat 3 runs every case three times")
    if args.maxfail is not None and args.maxfail < 1:
        raise UsageError("--maxfail must be at least 1", fix="-x stops at the first failure, --maxfail 3 after three")
    if args.concurrency is not None and args.concurrency < 1:
        raise UsageError("--concurrency must be at least 1", fix="--concurrency 1 runs one case at a time")
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

    def on_start(total: int) -> None:  # the header line before the first case (pytest's "collected N items")
        from collections import Counter

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
                         on_case=(progress.advance if progress else None), budget_usd=args.budget_usd,
                         on_note=(progress.note if progress else None),
                         golden_dir=Path(args.golden) if args.golden else config.golden_dir(),
                         run_id=args.flow.run_id, identity_offset=args.flow.identity_offset,
                         maxfail=args.maxfail)
    quarantine = None

    def load():  # in a worker thread, while the sandbox and the target come up (run_loading)
        nonlocal quarantine
        cases, quarantine, _golden_dir, goldens = _validate_suite(args, config)
        cases = args.flow.select(cases)  # --shard (harness.night.runflow)
        selected[:] = cases
        options.golden_version, options.prior = goldens.version, args.flow.begin(cases)  # lock, manifest, --resume
        options.baseline, options.baseline_note = _learned(config, out, args.concurrency)  # baseline.* checks
        return cases

    from harness.cli import cost as cli_cost
    _loaded()  # start-up's modules are in: garbage collection as usual from here (main)
    try:
        report = asyncio.run(run_loading(config, options, load, early))
    except (TargetError, SandboxError) as exc:  # exit 4: alert that the run failed to start
        cli_cost.start_failed(config, exc)
        raise
    finally:
        if progress:
            progress.stop()
    run_dir = out / report.run_id
    report, nightly, d = finish_run(report, out, config, quarantine)  # quarantine, history, diff; d: its dict, built once
    report = cli_cost.after_run(config, report, run_dir, d)  # budget breach on stderr; alerts (notes into d too)
    report, overhead = _overhead(report, d, args.concurrency or config.sandbox.concurrency,
                                 resumed=set(options.prior or ()))
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
    args.flow.upload(run_dir, quiet=args.quiet)  # [storage]: this run, then the pending spool
    return report.exit_code


def _learned(config, out: Path, concurrency: int | None):
    """What the accepted nights held (harness.night.learned), or (None, why not): never fatal."""
    from harness.cli.nightly import source_for
    from harness.night.learned import load_baseline

    try:
        return load_baseline(config, out, concurrency or config.sandbox.concurrency, source=source_for(out, config))
    except Exception as exc:  # a broken history must not stop the night; the run says why
        return None, f"baseline not loaded: {type(exc).__name__}: {exc}"

def _overhead(report, d: dict, concurrency: int, resumed: set[str] = frozenset()):
    """The run's overhead (harness/run/overhead.py) into results.json ``summary.overhead`` and
    the run's notes (summary.md); (report, the line ``harness run`` prints last). Cases a
    ``--resume`` kept from the killed run ran in another process: not on this wall's path."""
    from dataclasses import replace

    from harness.report.jsonfile import jsonable
    from harness.run.overhead import overhead_line, run_overhead

    figure = run_overhead([c for c in report.cases if c.id not in resumed], time.time() - _command_start(),
                          concurrency)
    line = overhead_line(figure)
    report = replace(report, notes=tuple(report.notes) + (line,),
                     perf={**report.perf, "summary": {**(report.perf or {}).get("summary", {}), "overhead": figure}})
    d.setdefault("summary", {})["overhead"] = figure
    d["notes"] = jsonable(list(report.notes))
    return report, line


def _command_start() -> float:
    """The process's start (the interpreter's own start-up included) for the process's own
    command, else when ``main`` was called. Linux tells a process's age to the clock tick
    (/proc/self/stat starttime against /proc/uptime); psutil's create_time is not used: it
    adds the boot time in whole seconds, up to a second off."""
    if _own_command:
        try:
            with open("/proc/self/stat", encoding="ascii") as fh:
                start_ticks = int(fh.read().rsplit(")", 1)[1].split()[19])  # field 22, starttime
            with open("/proc/uptime", encoding="ascii") as fh:
                age = float(fh.read().split()[0]) - start_ticks / os.sysconf("SC_CLK_TCK")
            if 0 <= age:
                return min(_started_at, time.time() - age)
        except (OSError, ValueError, IndexError):  # not Linux: from the CLI module's import
            pass
    return _started_at


def _cmd_schema(args) -> int:
    from harness.cases import file_model
    from harness.schema.export import write_schemas
    from harness.schema.files import output_dir_problem

    problem = output_dir_problem(args.out)
    if problem:
        raise UsageError(problem, fix="--out names a folder (created if missing)")
    for path in write_schemas(Path(args.out), file_model()):
        print(f"wrote {path}")
    return 0


def _cmd_report(args) -> int:
    from harness.night.context import nights_around
    from harness.report import render

    where = Path(args.run_dir)
    fix = "harness report RUN_DIR names a folder written by `harness run` (reports/<run_id>)"
    try:
        if not where.exists():
            raise UsageError(f"{where}: no such folder", fix=fix)
        if not where.is_dir():
            raise UsageError(f"{where} is a file, not a run folder", fix=fix)
    except OSError as exc:  # a name too long, a link loop
        raise UsageError(f"{where} cannot be read: {exc.strerror or exc}", fix=fix) from None
    path = render(where, args.format, context=nights_around)
    if args.format in ("md", "github"):
        sys.stdout.write(path.read_text(encoding="utf-8"))
    # github: stdout is the Markdown alone (>> $GITHUB_STEP_SUMMARY, gh pr comment --body-file -)
    print(f"wrote {path}", file=sys.stderr if args.format == "github" else sys.stdout)
    return 0


#: Exit code of an unexpected internal error (sysexits EX_SOFTWARE): never a verdict's code.
CRASH_EXIT = 70


def main(argv: list[str] | None = None) -> int:
    from harness.redact import RedactingStream

    # The console is a sink too: everything printed or logged passes the run's redactor.
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = (s if isinstance(s, RedactingStream) else RedactingStream(s) for s in saved)
    term = _sigterm_interrupts()
    own = argv is None  # the process's own command line (the harness script, python -m harness.cli)
    global _started_at, _own_command
    _own_command = own
    if own:
        _loading()
    else:  # an in-process command (tests, the scheduler): its wall time starts now
        _started_at = time.time()
    try:
        return _main(argv)
    finally:
        sys.stdout, sys.stderr = saved
        if term is not None:
            signal.signal(signal.SIGTERM, term)
        if own:
            _loaded()
            _exiting()


_gc_paused = False


def _loading() -> None:
    """Start-up of the process's own command: no garbage collection while the modules load
    (most of what start-up allocates is module objects that live until the end; collecting
    meanwhile costs 30-40 ms before a run's target can start). ``_loaded`` turns it back on."""
    import gc

    global _gc_paused
    if gc.isenabled():
        gc.disable()
        _gc_paused = True


def _loaded() -> None:
    """The modules are loaded (``_cmd_run`` calls it before the run starts, ``_main`` for the
    other commands): freeze what loaded out of the collector's reach and collect again as usual."""
    import gc

    global _gc_paused
    if _gc_paused:
        _gc_paused = False
        gc.freeze()
        gc.enable()


def _exiting() -> None:
    """The process ends next: take what the command made out of the garbage collector's
    reach (``gc.freeze``), so the interpreter's last collection does not walk all of it
    (50-100 ms after a run, only to free memory the OS takes back anyway). Everything the
    command writes is written and closed by now; atexit handlers and the final flush of
    stdout and stderr still run. In-process callers pass ``argv`` and are not affected."""
    import gc

    gc.freeze()


def _interrupted(signum, frame) -> None:
    raise KeyboardInterrupt


def _sigterm_interrupts():
    """SIGTERM (CI cancelling a job, systemd stopping a unit) ends a run like Ctrl-C: the run's
    finally blocks stop the target's whole process tree instead of the interpreter dying at once.
    Returns the handler it replaced (None off the main thread, where signals cannot be set)."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None
    previous = signal.getsignal(signal.SIGTERM)
    if previous not in (signal.SIG_DFL, None):  # someone (a test runner, the scheduler) handles it already
        return None
    signal.signal(signal.SIGTERM, _interrupted)
    return previous


def _main(argv: list[str] | None) -> int:
    logging.basicConfig(level=os.environ.get("HARNESS_LOG_LEVEL", "WARNING"),
                        format="%(levelname)s %(name)s: %(message)s")
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors already
        return int(exc.code or 0)
    handlers = {"run": _cmd_run, "report": _cmd_report, "check": _cmd_check, "init": _cmd_init, "calibrate": _cmd_calibrate,
                "schema": _cmd_schema}
    from harness.cli.nightly import HANDLERS as nightly_handlers

    handlers.update(nightly_handlers)
    from harness.cli.goldens import HANDLERS as golden_handlers

    handlers.update(golden_handlers)
    from harness.cli.ops import HANDLERS as ops_handlers, with_flow

    handlers.update(ops_handlers)
    from harness.cli.judges import run as judges_handler
    handlers["judges"] = judges_handler
    handlers["run"] = with_flow(handlers["run"])  # run lock, --resume, --shard, manifest, upload
    if args.command != "run":  # a run turns collection back on itself, once its modules are in (_cmd_run)
        _loaded()
    args.argv = argv if argv is not None else sys.argv[1:]
    try:
        args.main = main  # for the scheduler's in-process runs (harness.night.schedule.run_cycle)
        return handlers[args.command](args)
    except HarnessError as exc:
        print(f"harness: {redact.inert(exc.render())}", file=sys.stderr)  # may quote the agent's output
        return exc.exit_code
    except KeyboardInterrupt:
        print("harness: interrupted; finished cases are in the run's results.jsonl", file=sys.stderr)
        return 130
    except SystemExit as exc:  # the harness never exits from inside a command: code it loaded did (an in-process agent)
        print(f"harness: sys.exit({exc.code!r}) was called inside the harness's process before `harness "
              f"{args.command}` finished (by the in-process target's code?): nothing was judged\n"
              "  fix: an in-process agent must not call sys.exit; run it as [target].command instead",
              file=sys.stderr)
        return TargetError.exit_code
    except OSError as exc:
        if exc.errno in _PATH_ERRNOS and exc.filename:  # a path given that no file system takes: the input's
            print(f"harness: {redact.inert(str(exc.filename))}: {exc.strerror}\n  fix: check the paths on the "
                  "command line and in harness.toml (a name too long, a link loop, a file where a folder "
                  "should be)", file=sys.stderr)
            return UsageError.exit_code
        return _crashed(exc, args)
    except Exception as exc:  # a bug of ours: one line and a crash log, never a bare traceback
        return _crashed(exc, args)


#: OSError numbers that say a path given as input cannot be used, not that the harness is wrong.
_PATH_ERRNOS = frozenset({errno.ENAMETOOLONG, errno.ELOOP, errno.ENOTDIR})


def _crashed(exc: BaseException, args) -> int:
    """Write the traceback (redacted) to a crash log under --out or the temp folder; say one line."""
    import tempfile
    import traceback
    from datetime import datetime, timezone

    from harness.fileio import atomic_write_text
    from harness.redact import active

    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    text = (f"harness {__version__} crashed at {stamp} UTC\ncommand: harness {' '.join(map(str, args.argv))}\n\n"
            + "".join(traceback.format_exception(exc)))
    where = "(the crash log could not be written)"
    for folder in (getattr(args, "out", None), tempfile.gettempdir()):
        try:
            if not folder or not Path(folder).is_dir():
                continue
        except (OSError, ValueError):  # a name too long, a NUL: not a folder to write to
            continue
        try:
            where = str(atomic_write_text(Path(folder) / f"harness-crash-{stamp}-{os.getpid()}.log",
                                          active().text(text)))
            break
        except OSError:
            continue
    first = (str(exc).splitlines() or [""])[0][:200]
    print(f"harness: internal error ({type(exc).__name__}: {first}); this is a bug in the harness, "
          f"please report it with the crash log: {where}", file=sys.stderr)
    return CRASH_EXIT


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
