"""Options several commands share (kept apart from parser.py, which imports the command
modules that use them)."""

from __future__ import annotations

import argparse

REPORTS_HELP = "the reports folder, where runs are written and read (default: reports/ next to the config)"


def add_reports_option(p: argparse.ArgumentParser, help: str = REPORTS_HELP) -> None:
    """``--out DIR``, the reports folder, on every command that writes or reads runs; ``--reports``
    is its old name on the nightly commands (deprecated: ``reports_alias`` says so)."""
    p.add_argument("--out", default=None, metavar="DIR", help=help)
    p.add_argument("--reports", default=None, metavar="DIR", help="deprecated: the old name of --out (the same folder)")


def reports_alias(args: argparse.Namespace, warn) -> None:
    """``--reports DIR`` is ``--out DIR`` (one folder, one name): a note, then ``args.out``."""
    old = getattr(args, "reports", None)
    if old is None:
        return
    warn("harness: note: --reports is deprecated, it is now --out (the same folder)")
    if getattr(args, "out", None) is None:
        args.out = old
    args.reports = None
