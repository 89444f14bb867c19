"""The nightly commands: ``harness history``, ``harness diff``, ``harness baseline``, and
the part of ``harness run`` that adds quarantine, history and the diff to a run's reports.

Kept out of cli.py so the command line's shared module only gains a few hook lines.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from harness.errors import UsageError


def add_parsers(sub) -> None:
    """Register history / diff / baseline on the ``harness`` sub-command parser."""
    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--config", help="config file (default: ./harness.toml)")
        from harness.cli.options import add_reports_option

        add_reports_option(p)

    h = sub.add_parser("history", help="pass rates, cost, latency and case status over the last runs")
    common(h)
    h.add_argument("--last", type=int, default=10, metavar="N", help="how many runs (default 10)")
    h.add_argument("--parquet", metavar="FILE", help="also export the per-case long table to parquet")

    d = sub.add_parser("diff", help="regressions, fixes, flakes and drift between two runs")
    common(d)
    d.add_argument("base_run", nargs="?", help="base run id (default: the accepted baseline, else the previous run)")
    d.add_argument("new_run", nargs="?", help="run to judge (default: the latest run)")
    d.add_argument("--json", action="store_true", help="print the diff as JSON")
    d.add_argument("--no-write", action="store_true", help="do not write <new run>/diff.json")
    from harness.run.kind import ANY, KINDS, NIGHTLY

    for p in (h, d):
        p.add_argument("--local", action="store_true", help="only the local reports folder, not [storage]")
        p.add_argument("--kind", choices=(*KINDS, ANY), default=NIGHTLY,
                       help="which runs are the nights (results.json run.kind): default nightly, the full "
                            "suite run once; partial (--case, -k, --layer, --lf), repeat (--repeat K), shard; "
                            "any: every run")

    b = sub.add_parser("baseline", help="accept a run as the baseline that diffs compare with, or show it")
    common(b)
    bsub = b.add_subparsers(dest="baseline_command", required=True)
    acc = bsub.add_parser("accept", help="bless RUN_ID as the baseline, or accept some of its cases into it (--case)")
    acc.add_argument("run_id", help="the run to accept (an id, a unique prefix, a run folder, or latest)")
    acc.add_argument("--case", action="append", default=[], metavar="GLOB", dest="cases",
                     help="accept only these cases of RUN_ID (repeatable; globs): their records replace the "
                          "baseline's, the rest of the baseline stays (like --snapshot-update for one snapshot)")
    acc.add_argument("--reason", "--note", default="", dest="reason", metavar="TEXT",
                     help="why (recorded with who and when; --note is its old name)")
    acc.add_argument("--by", default=None, metavar="NAME", help="who accepts (default: $USER, else git user.name)")
    bsub.add_parser("show", help="print the accepted baseline and its acceptances")


def _reports_and_config(args) -> tuple[Path, Any]:
    from harness.config import load_config

    config = load_config(args.config)
    reports = Path(args.out) if args.out else config.resolve("reports")
    if args.out and not reports.is_dir():  # a folder named on purpose: a typo must not read as "no runs yet"
        from harness.night.store import storage_config

        if reports.exists() or storage_config(config) is None:  # (with [storage] the runs may all be remote)
            raise UsageError(f"--out {args.out}: {'not a folder' if reports.exists() else 'no such folder'}",
                             fix="--out names the reports folder `harness run` wrote (default: reports/ next to "
                                 "the config)")
    return reports, config


def thresholds_of(config):
    """Drift thresholds: the config's ``[budget]`` (its ``drift_*`` keys)."""
    from harness.config import config_section

    return config_section(config, "budget")


def source_for(reports: Path, config, remote: bool = True):
    """Where runs are read from: the local reports folder, plus object storage when
    ``[storage]`` is configured (runs kept on other machines: CI, shards, earlier hosts)."""
    from harness.night.history import CombinedRunSource, LocalRunSource, RemoteRunSource

    from harness.models.settings import cache_subdir

    local = LocalRunSource(reports, digests=cache_subdir(config, "history-records"))  # night/records.py
    if not remote:
        return local
    from harness.errors import StorageError
    from harness.night.store import open_store

    try:
        store = open_store(config)
    except StorageError as exc:  # e.g. no credentials here: history from this machine's runs
        print(f"harness: warning: remote runs left out: {exc.message}", file=sys.stderr)
        return local
    return CombinedRunSource(local, RemoteRunSource(store)) if store else local


def cmd_history(args) -> int:
    from harness.night.history import load_history, write_parquet
    from harness.night.history_text import render_history

    if args.last < 1:
        raise UsageError(f"--last must be at least 1, got {args.last}", fix="--last N lists the newest N runs, e.g. --last 7")
    if args.parquet:  # said before the history is read, not as a crash of pyarrow after it (issue 24)
        from harness.schema.files import output_dir_problem

        parquet = Path(args.parquet)
        try:
            problem = (f"--parquet {args.parquet!r} is a folder" if parquet.is_dir()
                       else output_dir_problem(parquet.parent))
        except OSError as exc:
            problem = f"--parquet {args.parquet!r} cannot be used ({exc.strerror or exc})"
        if problem:
            raise UsageError(problem.replace("--out ", "the folder of --parquet "),
                             fix="--parquet names the file to write, e.g. --parquet history.parquet")
    from harness.night.baseline import acceptance_note, read_baseline

    reports, config = _reports_and_config(args)
    source = source_for(reports, config, remote=not args.local)
    hist = load_history(source, last=args.last, kind=args.kind)
    sys.stdout.write(render_history(hist, baseline=acceptance_note(read_baseline(reports, source))))
    if hist.left_out:
        print(f"({hist.left_out} run(s) that are not {args.kind} runs left out; --kind any lists every run)")
    if args.parquet:
        path = write_parquet(hist.runs, args.parquet)
        print(f"wrote {path} ({sum(len(r.get('cases') or []) for r in hist.runs)} rows)")
    return 0


def cmd_diff(args) -> int:
    from harness.night.baseline import acceptance_note, choose_base, load_base, load_run, resolve_run_id
    from harness.night.diff import diff_runs
    from harness.report.diff_text import render_diff_text
    from harness.night.history import load_history
    from harness.report.jsonfile import dumps
    from harness.fileio import atomic_write_text

    reports, config = _reports_and_config(args)
    source = source_for(reports, config, remote=not args.local)
    t = thresholds_of(config)
    if args.new_run:
        new_id = resolve_run_id(source, args.new_run)
    else:
        new_id = resolve_run_id(source, "latest")
    if args.base_run:
        base_id, why = resolve_run_id(source, args.base_run), "named on the command line"
    else:
        base_id, why = choose_base(source, reports, new_id, kind=args.kind)
        if base_id is None:
            raise UsageError(f"nothing to compare {new_id} with: {why}",
                             fix="run again, name two runs (harness diff BASE_RUN NEW_RUN), or --kind any")
    new = load_run(source, new_id)
    base = load_base(source, reports, base_id)  # the accepted baseline with its later per-case acceptances
    recent = load_history(source, last=t.drift_flaky_nights, until=new_id, kind=args.kind).runs
    diff = diff_runs(base, new, recent=recent, thresholds=t, base_reason=why)
    if base.get("baseline_record"):
        diff["baseline"] = acceptance_note(base["baseline_record"])
    if args.json:
        sys.stdout.write(dumps(diff))
    else:
        sys.stdout.write(render_diff_text(diff))
    if not args.no_write and (reports / new_id).is_dir():
        path = atomic_write_text(reports / new_id / "diff.json", dumps(diff))
        if not args.json:
            print(f"wrote {path}")
    return diff["exit_code"]


def cmd_baseline(args) -> int:
    from harness.night.baseline import accept_baseline, read_baseline, render_baseline

    reports, config = _reports_and_config(args)
    source = source_for(reports, config)
    if args.baseline_command == "accept":
        record = accept_baseline(reports, source, args.run_id, note=args.reason, cases=args.cases, by=args.by)
        last = record["log"][-1]
        if last["cases"] is None:
            print(f"accepted {record['run_id']} as the baseline (by {last['accepted_by']}, {last['accepted_at']})")
        else:
            ids = last["cases"]
            print(f"accepted {len(ids)} case(s) of {last['run_id']} into the baseline {record['run_id']} "
                  f"(by {last['accepted_by']}, {last['accepted_at']}): {', '.join(ids[:10])}"
                  + (f" and {len(ids) - 10} more" if len(ids) > 10 else ""))
            from harness.night.baseline import load_run

            bad = [c.get("id") for c in load_run(source, last["run_id"]).get("cases") or ()
                   if c.get("id") in ids and c.get("status") not in ("pass", "soft")]
            if bad:
                print(f"harness: warning: accepted though not passing in {last['run_id']}: {', '.join(bad[:10])}",
                      file=sys.stderr)
        print("wrote " + " and ".join(record["where"]))
        return 0
    from harness.night.baseline import local_record_problem

    problem = local_record_problem(reports)
    if problem:  # a damaged record is no "no baseline accepted"
        raise UsageError(problem, fix="restore it from storage or a backup; if it is really damaged, delete it "
                                      "and accept the baseline again (harness baseline accept RUN)")
    sys.stdout.write(render_baseline(read_baseline(reports, source)))
    return 0


HANDLERS = {"history": cmd_history, "diff": cmd_diff, "baseline": cmd_baseline}


# --------------------------------------------------------------------------- harness run


def load_run_quarantine(fixtures_dir: Path):
    """fixtures/quarantine.yaml, validated before anything runs (a bad file exits 2)."""
    from harness.night.quarantine import FILE, load_quarantine

    return load_quarantine(Path(fixtures_dir) / FILE)


def finish_run(report, out: Path, config, quarantine, run: dict[str, Any] | None = None,
               against: str | None = None) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """The runner's report with quarantine applied, ``write_all`` keyword arguments carrying
    the history, diff and base (the accepted baseline's results) of the reports folder ``out``, and the report's results.json dict
    (built once here; ``cost.after_run`` and ``RunFlow.finish`` reuse it). ``run``: results.json's
    ``run`` object (its kind: ``harness.run.kind.run_info``); ``against``: the run to diff with
    (``harness run --against RUN``, resolved already)."""
    from harness.night.context import run_context
    from harness.night.quarantine import apply_quarantine
    from harness.report.jsonfile import report_to_dict

    report = apply_quarantine(report, quarantine)
    d = report_to_dict(report)
    if run is not None:
        d["run"] = dict(run)
    ctx = run_context(d, out, source=source_for(out, config), thresholds=thresholds_of(config), against=against)
    for w in ctx.warnings:
        print(f"harness: warning: {w}", file=sys.stderr)
    return report, {"history": ctx.history, "diff": ctx.diff, "base": ctx.base}, d


def diff_line(diff: dict[str, Any] | None) -> str:
    """One line for the end of ``harness run``."""
    if not diff:
        return "diff: no earlier run to compare with"
    c = diff["counts"]
    regs = ", ".join(e["id"] for e in diff["regressions"][:5]) + (" ..." if len(diff["regressions"]) > 5 else "")
    return (f"diff vs {diff['base_run']['run_id']} ({diff['base_run'].get('why', '')}): {c['regressions']} regressions"
            + (f" ({regs})" if regs else "") + f", {c['fixed']} fixed, {c['flaky']} flaky, {c['drift']} drift")

