"""``harness judges``: mutation testing of the judges (harness/judges/)."""

from __future__ import annotations

import asyncio
from pathlib import Path


def add_parser(sub) -> None:
    p = sub.add_parser("judges", help="mutation testing of the judges: wrong answers derived from every golden, "
                                      "judged by the case's own checks (judges.json, judges.html)")
    p.add_argument("--config", help="config file (default: ./harness.toml)")
    p.add_argument("--fixtures", default=None, help="case files folder (default: fixtures/ next to the config)")
    p.add_argument("--golden", default=None, help="golden answers folder (default: golden/)")
    p.add_argument("--out", default=None, help="folder for judges.json and judges.html (default: reports/judges)")
    p.add_argument("--min-catch", type=float, default=0.9, help="exit 1 when a kind's catch rate is under this")
    p.add_argument("--case", action="append", default=[], metavar="GLOB", help="judge only cases whose id matches")
    p.add_argument("--seed", type=int, default=11, help="seed of the mutations (deterministic)")
    p.add_argument("--llm-critic", action="store_true",
                   help="use the configured LLM critic backend (costs money); default: the offline critic")
    p.add_argument("--no-cache", action="store_true", help="judge everything again (.harness-cache/judges/)")


def run(args) -> int:
    from harness.cases import load_cases
    from harness.config import load_config
    from harness.errors import UsageError
    from harness.judges.report import summary_lines
    from harness.judges.run import JudgeOptions, exit_code, preload, run_judges

    if not 0 <= args.min_catch <= 1:
        raise UsageError("--min-catch must be between 0 and 1")
    config = load_config(args.config)
    from harness.models.settings import embedding_settings

    if embedding_settings(config).backend == "minilm":  # the judges' similarity and the offline critic embed
        from harness.models.extra import require

        require("harness judges")
    from harness import redact

    redact.for_run(config)  # judges.json, judges.html and the console pass the config's redactor
    out = Path(args.out) if args.out else config.resolve("reports") / "judges"
    from harness.schema.files import output_dir_problem

    problem = output_dir_problem(out)  # / , /proc, a dangling link: as run, calibrate and schema refuse them
    if problem:
        raise UsageError(problem, fix="--out names a folder for judges.json and judges.html (created if missing)")
    for flag, given in (("--fixtures", args.fixtures), ("--golden", args.golden)):
        if given and not Path(given).is_dir():
            raise UsageError(f"{flag} {given}: {'not a folder' if Path(given).exists() else 'no such folder'}",
                             fix=f"{flag} names a folder (harness judges --help)")
    options = JudgeOptions(out=out, golden=Path(args.golden) if args.golden else None, min_catch=args.min_catch,
                           seed=args.seed, llm_critic=args.llm_critic, use_cache=not args.no_cache)
    preload(config, options)  # the embedding model's process starts before the cases are read
    import sys

    from harness.report.phases import Phase

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    # the cases, the goldens and the critic (with its embedding model) load before the first line
    loading = Phase("judges: loading the cases, the goldens and the critic (its embedding model)", say).start()

    def progress(line: str) -> None:
        loading.end()
        say(line)

    options.progress = progress
    try:
        fixtures = Path(args.fixtures) if args.fixtures else config.fixtures_dir()  # [suite] fixtures
        cases = load_cases(fixtures, globs=tuple(args.case), derive=False)  # every case with a golden, any layer
        result = asyncio.run(run_judges(config, options, cases))
    finally:
        loading.end()
    print("\n".join(summary_lines(result)))
    for g in result["golden_failures"]:
        print(f"GOLDEN FAILS ITS OWN CHECKS: {g['id']} answer #{g['answer']}: {'; '.join(g['failures'])}")
    below = result["meta"]["below_min_catch"]
    if below:
        print(f"under --min-catch {args.min_catch}: {', '.join(below)}")
    print(f"wrote {out / 'judges.json'} and {out / 'judges.html'}")
    return exit_code(result)
