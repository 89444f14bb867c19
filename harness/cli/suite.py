"""What a run reads, validated before anything runs (``harness run`` and ``harness check``
share it, so check says what run would), and ``harness check`` itself."""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path

from harness import layer as layer_registry
from harness import redact
from harness.errors import FixtureErrors, MissingExtra, UsageError


def fixtures_dir(args, config) -> Path:
    return Path(args.fixtures) if args.fixtures else config.fixtures_dir()  # [suite] fixtures



def validate_suite(args, config):
    """Everything a run reads, validated before anything runs (a problem exits 2): cases,
    quarantine, goldens, and the [embeddings] [critic] [budget] [alerts] [storage] sections.
    ``harness run`` and ``harness check`` share it, so check says what run would."""
    from harness.night.alerts import validate as validate_alerts
    from harness.run.budget import budget_settings
    from harness.cases import load_cases
    from harness.cli.nightly import load_run_quarantine
    from harness.golden import load_goldens
    from harness.models.settings import validate as validate_reasoning_settings
    from harness.night.store import storage_config

    from harness.schema.files import output_dir_problem

    out = Path(args.out) if getattr(args, "out", None) else config.resolve("reports")
    problem = output_dir_problem(out)
    if problem:
        raise UsageError(problem, fix="--out names a folder for the runs (created if missing), with no folder named .harness.lock in it")
    fixtures = fixtures_dir(args, config)
    if config.path is None and not getattr(args, "fixtures", None) and not fixtures.exists():
        raise UsageError(f"no harness.toml in {Path.cwd()} (and no fixtures/ folder): this is not a harness project",
                         fix="`harness init` writes a harness.toml and example cases here (docs/QUICKSTART.md); "
                             "or pass --config FILE")
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
        else:  # nothing failed: the whole selection runs, and the run is no narrower for it (run.kind)
            args.last_failed = False
    if not cases:
        message, fix = _no_case(fixtures, args)
        raise UsageError(message, fix=fix)
    quarantine = load_run_quarantine(fixtures_dir(args, config))
    validate_reasoning_settings(config)
    validate_alerts(config)
    budget_settings(config)
    storage_config(config)
    if (config.sections.get("schedule") or {}):
        from harness.night.schedule import schedule_config

        sc = schedule_config(config)  # what `harness schedule` would refuse, check refuses
        if sc.cases or sc.layers:  # a selection the nightly run would find empty: every night "failed to start"
            night_fixtures = config.resolve(sc.fixtures) if sc.fixtures else config.fixtures_dir()
            chosen = load_cases(night_fixtures, layers=sc.layers, globs=sc.cases,
                                docs_dir=config.resolve(config.sandbox.docs_dir), config=config)
            if not chosen:
                from harness.errors import ConfigError

                what = " and ".join(f"{key} {list(value)}" for key, value in (("layers", sc.layers), ("cases", sc.cases))
                                    if value)
                raise ConfigError(f"[schedule] {what} match no case in {night_fixtures}: every nightly run would be "
                                  "refused (\"failed to start\")", file=str(config.path or ""),
                                  fix="correct the globs (harness check --case GLOB lists what one matches)")
    _validate_files(config)
    _validate_command(config)
    golden_dir = Path(args.golden) if getattr(args, "golden", None) else config.golden_dir()  # [suite] golden
    if getattr(args, "golden", None) and not golden_dir.is_dir():
        raise UsageError(f"--golden {args.golden}: {'no such folder' if not golden_dir.exists() else 'not a folder'}",
                         fix="--golden names the folder of approved answers (default: golden/ next to the config)")
    if not getattr(args, "golden", None) and os.path.lexists(golden_dir) and not golden_dir.is_dir():
        # a missing default folder is no golden yet; a file (or a dangling link) there is a mistake
        from harness.errors import ConfigError

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
    wanted = ", ".join([*(f"--layer {x}" for x in args.layer), *(f"--case {c}" for c in args.case),
                        *([f"-k {args.keyword}"] if getattr(args, "keyword", None) else [])])
    if not wanted:
        return (f"no case in {fixtures}: its layer folders hold no case file, so there is nothing to run",
                "write a case file such as fixtures/<layer>/hello.yaml (docs/CASES.md), or `harness init` "
                "for examples")
    return (f"no case matches the selection{' (' + wanted + ')' if wanted else ''} in {fixtures}",
            "check --layer and --case (harness check lists cases)")


def _validate_command(config) -> None:
    """[target].command can be started: what the start would refuse, check refuses too."""
    import os

    from harness.config import python_command
    from harness.errors import ConfigError
    from harness.targets.command import command_problem

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
            table = load_prices(str(path))
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ConfigError(f"[budget] prices: {path} is not a price table ({type(exc).__name__}: {exc})",
                              file=str(config.path or ""), fix="see harness/data/prices.toml for the format") from None
        bad = next((p for p in table.prices.values() if not all(
            math.isfinite(x) and x >= 0 for x in (p.input_per_m, p.output_per_m, p.per_call))), None)
        if not table.prices or bad is not None:  # every cost would be unavailable, or nan / negative dollars
            what = (f"prices {bad.model} at {bad.input_per_m}/{bad.output_per_m} per million tokens "
                    f"(per call {bad.per_call}): a price is a finite number >= 0" if bad is not None else
                    "holds no price ([providers.<name>.models.<model>] tables with input_per_m and output_per_m)")
            raise ConfigError(f"[budget] prices: {path} {what}", file=str(config.path or ""),
                              fix="see harness/data/prices.toml for the format") from None


def cmd_check(args) -> int:
    from harness.config import load_config

    config = load_config(args.config)
    cases, quarantine, golden_dir, goldens = validate_suite(args, config)
    from harness.cli.goldens import missing_goldens

    missing = missing_goldens(cases, goldens, golden_dir)
    if missing:  # run would judge them unavailable and the night incomplete: check says so first
        raise FixtureErrors(missing)
    from harness.models.extra import suite_problem

    problem = suite_problem(cases, config)  # harness[models] missing for similarity / offline critic checks
    if problem:
        raise MissingExtra(problem)
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
    for note in registry.install_notes(config.sections):  # e.g. no default variants on the core install
        print(f"note: {note}")
    if not args.layer and not args.case:  # a quarantine naming no case (renamed, deleted) quarantines nothing
        ids = {c.id for c in cases}
        for entry in quarantine or ():
            if entry.id not in ids:
                print(f"warning: fixtures/quarantine.yaml: {entry.id!r} names no case of the suite, so it "
                      "quarantines nothing (renamed or removed? remove the entry)")
    print(f"{len(cases)} cases would run")
    return 0

