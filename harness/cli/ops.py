"""The operations commands: ``harness upload``, ``harness merge``, ``harness schedule``.

Kept out of cli.py so the shared command-line module only gains a few hook lines; the
``harness run`` side of operations (lock, resume, shard, manifest, upload) is
``harness.night.runflow``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from harness import redact
from harness.errors import StorageError, UsageError


def add_parsers(sub: Any) -> None:

    up = sub.add_parser("upload", help="put runs into object storage ([storage]); --pending retries the spool")
    up.add_argument("run_ids", nargs="*", metavar="RUN_ID", help="local runs to upload")
    up.add_argument("--pending", action="store_true", help="retry every upload kept in the pending spool")
    up.add_argument("--reindex", action="store_true", help="rebuild index.json from the stored runs")
    up.add_argument("--config", help="config file (default: ./harness.toml)")
    from harness.cli.options import add_reports_option

    add_reports_option(up)

    mg = sub.add_parser("merge", help="merge the stored shards of a run into one report (also with shards missing)")
    mg.add_argument("run_id", help="the run whose shards are merged (its id in the storage index)")
    mg.add_argument("--config", help="config file (default: ./harness.toml)")

    add_schedule_parser(sub)


def _store(config):
    from harness.night.store import S3Store, describe, storage_config

    sc = storage_config(config)
    if sc is None:
        raise UsageError("no [storage] section in the config: nothing to upload to",
                         fix='[storage] url = "s3://bucket/prefix" (docs/OPERATIONS.md)')
    return S3Store(sc), describe(sc)


def cmd_upload(args) -> int:
    from harness.config import load_config
    from harness.night.runlock import RunLock
    from harness.night.runindex import rebuild_index
    from harness.night.storage import list_pending, upload_pending, upload_run

    if not (args.run_ids or args.pending or args.reindex):
        raise UsageError("nothing to upload", fix="harness upload --pending, or harness upload RUN_ID")
    config = load_config(args.config)
    redact.for_run(config)  # every uploaded object passes the redactor (S3Store.put)
    out = Path(args.out) if args.out else config.resolve("reports")
    store, where = _store(config)
    code = 0
    for run_id in args.run_ids:
        run_dir = inside_reports(out, run_id)
        if not (run_dir / "results.json").is_file():
            raise UsageError(f"{run_dir} has no results.json", fix="name a finished run in the reports folder")
        res = upload_run(config, run_dir, out, store)
        print(f"{res.line()} [{where}]")
        code = code or (0 if res.complete else StorageError.exit_code)
    if args.pending:
        # The lock keeps this from racing a run's own spool retry at its end.
        with RunLock(out, command="harness upload --pending"):
            unreadable: list[str] = []
            before = list_pending(out, unreadable)
            for line in unreadable:  # said on the console too, not only in the log
                print(f"harness: warning: {line}", file=sys.stderr)
            if not before:
                print(f"nothing {'else ' if unreadable else ''}pending in {out / '.pending'}")
            for res in upload_pending(config, out, store):
                print(f"{res.line()} [{where}]")
                code = code or (0 if res.complete else StorageError.exit_code)
    if args.reindex:
        index = rebuild_index(store)
        print(f"index.json rebuilt: {len(index['runs'])} run(s) [{where}]")
    return code


def inside_reports(out: Path, run_id: str) -> Path:
    """The run folder ``run_id`` names, refused (exit 2) unless it lies inside the reports
    folder once links are followed: ``harness upload`` never carries anything else away."""
    reports = Path(out).resolve()
    run_dir = (reports / run_id).resolve()
    if run_dir == reports or reports not in run_dir.parents:
        raise UsageError(f"{run_id!r} is not a run inside the reports folder {reports}",
                         fix="name a run by its id (a folder of the reports folder); "
                             "pass --out to name another reports folder")
    return run_dir


def cmd_merge(args) -> int:
    from harness.config import load_config
    from harness.night.runindex import read_index
    from harness.night.storage import merge_shards

    config = load_config(args.config)
    store, where = _store(config)
    entry = next((e for e in read_index(store)["runs"] if e.get("run_id") == args.run_id), None)
    if entry is None:
        raise UsageError(f"run {args.run_id} is not in the storage index", fix="harness upload --reindex, then retry")
    merged = merge_shards(store, args.run_id, entry["prefix"], entry.get("shard_count"), force=True)
    if merged is None:
        print(f"run {args.run_id}: no shard results in storage", file=sys.stderr)
        return 1
    s = merged["shard"]
    missing = f"; missing shards {', '.join(map(str, s['missing']))}" if s["missing"] else ""
    print(f"merged {s['merged']} of {s['count']} shards of {args.run_id} -> {entry['prefix']}/results.json "
          f"(verdict {merged['summary']['verdict']}{missing}) [{where}]")
    return merged["exit_code"]


def cmd_schedule(args: Any) -> int:
    """``harness schedule``: one cycle now (``--once``) or the daemon; ``args.main`` is the CLI's entry point."""
    from harness.config import load_config
    from harness.night.crontab import make_trigger, next_fire_times
    from harness.night.schedule import configure_logging, run_cycle, schedule_config, serve

    configure_logging()
    config = load_config(args.config)
    sc = schedule_config(config, args.cron, args.tz)
    make_trigger(sc.cron, sc.tz)  # a bad expression or zone exits 2 before anything runs
    if args.once:
        result = run_cycle(args.config, sc.cron, sc.tz, run=args.main, quiet=args.quiet)
        print(f"nightly cycle: {result.line()}")
        for line in result.alerts + result.notes:
            print(f"  {line}")
        nxt = next_fire_times(sc.cron, sc.tz, 1)
        if nxt:
            print(f"next scheduled fire ({sc.cron} {sc.tz}): {nxt[0].isoformat()}")
        return result.exit_code
    return serve(args.config, sc.cron, sc.tz, run=args.main)


def add_schedule_parser(sub: Any) -> None:
    from harness.night.schedule import DEFAULT_CRON

    s = sub.add_parser("schedule", help="run the nightly cycle on a cron schedule (or once, now)")
    s.add_argument("--config", help="config file (default: ./harness.toml)")
    s.add_argument("--cron", default=None, metavar="EXPR", help=f'crontab expression (default [schedule] cron or "{DEFAULT_CRON}")')
    s.add_argument("--tz", default=None, metavar="ZONE", help="IANA time zone (default [schedule] tz or UTC)")
    s.add_argument("--once", action="store_true", help="run one cycle now and exit with the run's code")
    s.add_argument("--quiet", action="store_true", help="no progress output from the run")




HANDLERS = {"upload": cmd_upload, "merge": cmd_merge, "schedule": cmd_schedule}


def with_flow(cmd_run):
    """``harness run`` inside a ``RunFlow``: the run lock, --resume, --shard, manifest, upload."""
    def run(args) -> int:
        from harness.night.runflow import RunFlow

        with RunFlow(args):
            return cmd_run(args)

    return run
