"""The smaller commands: ``harness calibrate``, ``init``, ``schema`` and ``report``."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from harness import redact
from harness.cli.parser import MAX_REPEAT
from harness.cli.suite import fixtures_dir
from harness.errors import MissingExtra, UsageError


def cmd_calibrate(args) -> int:
    from datetime import datetime

    from harness.night.calibrate import calibrate, default_parallel, matrix_lines, write_calibration
    from harness.cases import load_cases
    from harness.config import load_config

    if not (1 <= args.repeat <= MAX_REPEAT and (args.parallel is None or 1 <= args.parallel <= 64)):
        raise UsageError(f"--repeat must be 1-{MAX_REPEAT} and --parallel 1-64",
                         fix="--repeat 3 --parallel 2, for example")
    config = load_config(args.config)
    if args.parallel is None:
        args.parallel = default_parallel(config)
    redact.for_run(config)
    cases = load_cases(fixtures_dir(args, config), layers=args.layer, config=config)
    from harness.models.extra import suite_problem

    problem = suite_problem(cases, config)  # a calibration of checks that cannot judge proves nothing
    if problem:
        raise MissingExtra(problem)
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



def cmd_init(args) -> int:
    from harness.cli.scaffold import init_project

    written = init_project(args.dir, args.channel, llm=args.llm)
    for path in written:
        print(f"wrote {path}")
    print("next: the bot's own venv in .venv (python3 -m venv .venv; .venv/bin/pip install its packages) or another"
          " [target] command in harness.toml, then `harness check` and `harness run` (docs/QUICKSTART.md)")
    return 0



def cmd_schema(args) -> int:
    from harness.cases import file_model
    from harness.schema.export import write_schemas
    from harness.schema.files import output_dir_problem

    problem = output_dir_problem(args.out)
    if problem:
        raise UsageError(problem, fix="--out names a folder (created if missing)")
    for path in write_schemas(Path(args.out), file_model()):
        print(f"wrote {path}")
    return 0


def cmd_report(args) -> int:
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
    try:
        path = render(where, args.format, context=nights_around)
    except (TypeError, AttributeError, ValueError, KeyError, IndexError, OverflowError) as exc:
        if isinstance(exc, UsageError):
            raise
        # results.json of the right shape (jsonread.results_problem) with a value of another type deeper
        # in (a summary figure as text, say): the file was edited, and no renderer crashes on it (issue 24)
        raise UsageError(f"{where / 'results.json'} holds a value the report cannot show "
                         f"({type(exc).__name__}: {str(exc)[:200]})",
                         fix="restore the file (it was edited by hand or by another program), or run again") from None
    if args.format in ("md", "github"):
        sys.stdout.write(path.read_text(encoding="utf-8"))
    # github: stdout is the Markdown alone (>> $GITHUB_STEP_SUMMARY, gh pr comment --body-file -)
    print(f"wrote {path}", file=sys.stderr if args.format == "github" else sys.stdout)
    return 0

