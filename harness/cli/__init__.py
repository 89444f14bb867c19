"""The ``harness`` command line (contract in DESIGN.md): ``main`` and the dispatch to the
commands. The parser is in parser.py; ``run`` in run.py; ``check`` and the validation a run
shares with it in suite.py; calibrate, init, schema and report in tools.py; the nightly
commands in nightly.py, goldens.py, ops.py, judges.py; the process's start-up in process.py.

Exit codes: 0 every hard check held; 1 regression or hard failure; 2 usage, config or
fixture error (nothing was run); 3 cost budget exceeded; 4 the target or the sandbox
could not be brought up.
"""

from __future__ import annotations

import errno
import logging
import os
import signal
import sys
import time
from pathlib import Path

from harness import __version__
from harness.cli import process
from harness.errors import HarnessError, TargetError, UsageError
from harness import redact


#: Exit code of an unexpected internal error (sysexits EX_SOFTWARE): never a verdict's code.
CRASH_EXIT = 70


def main(argv: list[str] | None = None) -> int:
    from harness.redact import RedactingStream

    # The console is a sink too: everything printed or logged passes the run's redactor.
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = (s if isinstance(s, RedactingStream) else RedactingStream(s) for s in saved)
    term = process.sigterm_interrupts()
    own = argv is None  # the process's own command line (the harness script, python -m harness.cli)
    process.own_command = own
    if own:
        process.loading()
    else:  # an in-process command (tests, the scheduler): its wall time starts now
        process.started_at = time.time()
    try:
        return _main(argv)
    finally:
        sys.stdout, sys.stderr = saved
        if term is not None:
            signal.signal(signal.SIGTERM, term)
        if own:
            process.loaded()
            process.exiting()



def _main(argv: list[str] | None) -> int:
    logging.basicConfig(level=os.environ.get("HARNESS_LOG_LEVEL", "WARNING"),
                        format="%(levelname)s %(name)s: %(message)s")
    from harness.cli.parser import build_parser
    from harness.cli import run as cli_run, suite, tools

    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors already
        return int(exc.code or 0)
    from harness.cli.options import reports_alias

    reports_alias(args, lambda line: print(line, file=sys.stderr))  # --reports is --out
    handlers = {"run": cli_run.cmd_run, "report": tools.cmd_report, "check": suite.cmd_check, "init": tools.cmd_init,
                "calibrate": tools.cmd_calibrate, "schema": tools.cmd_schema}
    from harness.cli.nightly import HANDLERS as nightly_handlers

    handlers.update(nightly_handlers)
    from harness.cli.goldens import HANDLERS as golden_handlers

    handlers.update(golden_handlers)
    from harness.cli.ops import HANDLERS as ops_handlers, with_flow

    handlers.update(ops_handlers)
    from harness.cli.judges import run as judges_handler
    handlers["judges"] = judges_handler
    handlers["run"] = with_flow(handlers["run"])  # run lock, --resume, --shard, manifest, upload
    if args.command != "run":  # a run turns collection back on itself, once its modules are in (cmd_run)
        process.loaded()
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
