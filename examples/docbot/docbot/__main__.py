"""``python -m docbot`` (serve) and ``python -m docbot --regressions`` (list and exit)."""

from __future__ import annotations

import argparse
import logging
import sys

from aiohttp import web

from . import regressions


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="docbot", description="DocBot reference agent")
    parser.add_argument("--regressions", action="store_true",
                        help="list the seeded regressions (name<TAB>layer<TAB>what it breaks)")
    args = parser.parse_args(argv)
    if args.regressions:
        print(regressions.listing())
        return 0

    from .app import create_app
    from .config import Config
    try:
        cfg = Config.from_env()
    except regressions.UnknownRegression as e:
        print(f"docbot: {e}", file=sys.stderr)
        return 2
    except ValueError as e:
        print(f"docbot: bad configuration: {e}", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
    # run_app handles SIGINT and SIGTERM: it stops accepting, runs cleanup and returns.
    web.run_app(create_app(cfg), host=cfg.host, port=cfg.port, print=None, access_log=None,
                shutdown_timeout=5)
    return 0


if __name__ == "__main__":
    sys.exit(main())
