"""The ``harness`` command line's argparse parser: every command and option (its handlers are
in harness/cli/__init__.py's ``_main``)."""

from __future__ import annotations

import argparse

from harness import __version__
from harness import layer as layer_registry
from harness.cli.options import add_reports_option

#: The most repeats a run or a calibration takes (each repeat runs the whole selection again).
MAX_REPEAT = 1000


#: The exit codes, in every command's help (``harness --help``, ``harness run --help``).
EXIT_CODES = """exit codes:
  0    every hard check held (soft errors within budget)
  1    a regression or a hard failure (or an incomplete night: a check was unavailable)
  2    usage, config or fixture error: nothing was run
  3    the cost budget was exceeded
  4    the target or the sandbox could not be brought up
  70   an internal error of the harness (a crash log is written)
  130  interrupted (Ctrl-C, SIGTERM)"""

#: The commands in the order a newcomer needs them (``harness --help`` lists them so).
ORDER = ("init", "check", "run", "report", "diff", "history", "baseline", "golden", "judges", "calibrate",
         "schema", "upload", "merge", "schedule")

def _ordered(sub) -> None:
    """List the commands in ``ORDER`` (argparse keeps the order they were added in)."""
    rank = {name: i for i, name in enumerate(ORDER)}
    sub._choices_actions.sort(key=lambda a: rank.get(a.dest, len(rank)))
    ordered = sorted(sub.choices.items(), key=lambda kv: rank.get(kv[0], len(rank)))
    sub.choices.clear()
    sub.choices.update(ordered)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="harness", description="Nightly regression harness for LLM chat agents. "
                                "New here: harness init, then harness check, then harness run.",
                                epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"harness {__version__}",
                   help="print the harness's version and exit")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND",
                           title="commands (in the order you need them)")

    run = sub.add_parser("run", help="run the suite (or some layers / cases) against the target",
                         epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    what = run.add_argument_group("which cases, how often (any of these makes the run partial, a repeat or a shard: not the night)")
    what.add_argument("--layer", action="append", default=[], choices=layer_registry.names(),
                      help="run only this layer (repeatable)")
    what.add_argument("--case", action="append", default=[], metavar="GLOB", help="run only cases whose id matches")
    what.add_argument("-k", dest="keyword", metavar="EXPR", default=None,
                      help="only cases whose id or tags match EXPR: words with and/or/not/(), "
                           "e.g. -k 'url and not malformed' (as pytest -k)")
    what.add_argument("--lf", "--last-failed", dest="last_failed", action="store_true",
                      help="run only the cases that did not pass in the newest run in --out (all of them when none failed)")
    what.add_argument("-x", "--exitfirst", dest="maxfail", action="store_const", const=1,
                      help="start no new case after the first failure (--maxfail 1)")
    what.add_argument("--maxfail", type=int, default=None, metavar="N",
                      help="start no new case after N cases failed or errored; the rest are reported skipped")
    what.add_argument("--repeat", type=int, default=1, metavar="K", help="run every case K times (pass@k, pass^k)")
    what.add_argument("--shard", metavar="I/N", help="run one slice of the suite")

    where = run.add_argument_group("files and folders")
    where.add_argument("--config", help="config file (default: ./harness.toml)")
    where.add_argument("--fixtures", default=None, help="case files folder (default: fixtures/ next to the config)")
    where.add_argument("--golden", default=None, help="golden answers folder (default: golden/)")
    add_reports_option(where, "the reports folder: the run is written to DIR/<run_id> (default: reports/)")
    where.add_argument("--run-id", default=None, help="name the run (shards of one run share it)")
    where.add_argument("--resume", metavar="RUN_ID", help="continue a killed run from its journal")

    how = run.add_argument_group("how it runs and what it prints")
    how.add_argument("--concurrency", type=int, default=None, metavar="N", help="cases at once (default 8)")
    how.add_argument("--budget-usd", type=float, default=None, metavar="USD",
                     help="hard cost budget for the run: no new case starts once it is spent (exit 3)")
    how.add_argument("-v", "--verbose", action="store_true",
                     help="a line for every case (by default only those that did not pass, and off a terminal a "
                          "count line every few seconds)")
    how.add_argument("--quiet", action="store_true", help="no progress output")

    night = run.add_argument_group("the nights")
    up = night.add_mutually_exclusive_group()
    up.add_argument("--upload", dest="upload", action="store_true", default=None,
                    help="upload the run to [storage] (the default when [storage] is configured)")
    up.add_argument("--no-upload", dest="upload", action="store_false", help="do not upload the run to [storage]")
    from harness.run.kind import KINDS

    night.add_argument("--kind", choices=KINDS, default=None,
                       help="record the run as this kind (results.json run.kind; default: nightly for the whole "
                            "suite run once, else partial, repeat or shard); harness schedule's run is a nightly "
                            "whatever [schedule] selects")
    night.add_argument("--against", metavar="RUN", default=None,
                       help="diff this run against RUN (an id, a unique prefix or latest) instead of the accepted "
                            "baseline or the last full nightly run")

    rep = sub.add_parser("report", help="render a finished run's report again")
    rep.add_argument("run_dir", help="the run's folder (reports/<run_id>)")
    rep.add_argument("--format", choices=("html", "md", "junit", "json", "github"), default="md",
                     help="github: Markdown for a PR comment or $GITHUB_STEP_SUMMARY, printed to stdout")

    cal = sub.add_parser("calibrate", help="run the suite against every seeded regression of the reference agent")
    cal.add_argument("--config", help="config file (default: ./harness.toml)")
    cal.add_argument("--fixtures", default=None, help="case files folder (default: fixtures/ next to the config)")
    cal.add_argument("--out", default=None, help="output folder (default: reports/calibration-<time>)")
    cal.add_argument("--repeat", type=int, default=1, metavar="K", help="clean (and noisy) runs")
    cal.add_argument("--parallel", type=int, default=None, metavar="N",
                     help="runs at once (default: one more than the cores, at most 8)")
    cal.add_argument("--concurrency", type=int, default=None, metavar="N", help="cases at once within a run")
    cal.add_argument("--layer", action="append", default=[], choices=layer_registry.names(),
                     help="calibrate only this layer's cases (repeatable)")
    cal.add_argument("--regression", action="append", default=[], metavar="NAME",
                     help="only these seeded regressions (repeatable; python -m docbot --regressions lists them)")
    cal.add_argument("--no-noise", action="store_true", help="skip the noisy clean runs")
    cal.add_argument("--no-baseline", dest="baseline", action="store_false",
                     help="no learned baseline: skip the accepted-nights run (3 noisy attempts per case) that "
                          "every later run is held to (baseline.* evidence)")

    cal.add_argument("--full", action="store_true",
                     help="run the whole suite against every regression (the complete catch matrix); "
                          "default: stop each regression's run at its first hard failure")

    ini = sub.add_parser("init", help="scaffold a harness.toml and example cases for your own bot")
    ini.add_argument("dir", nargs="?", default=".", help="the project folder (default: the current folder)")
    ini.add_argument("--channel", choices=("telegram", "whatsapp"), default="telegram",
                     help="the channel your bot speaks (default: telegram)")
    ini.add_argument("--no-llm", dest="llm", action="store_false",
                     help="a bot without an LLM or documents: leave out the examples and settings that assume one")

    chk = sub.add_parser("check", help="validate config and fixtures; list what would run")
    chk.add_argument("--config", help="config file (default: ./harness.toml)")
    chk.add_argument("--fixtures", default=None, help="case files folder (default: fixtures/ next to the config)")
    chk.add_argument("--golden", default=None, help="golden answers folder (default: golden/)")
    chk.add_argument("--layer", action="append", default=[], choices=layer_registry.names(),
                     help="check only this layer (repeatable)")
    chk.add_argument("--case", action="append", default=[], metavar="GLOB", help="check only cases whose id matches")

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
    _ordered(sub)
    return p

