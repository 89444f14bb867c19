"""``python -m harness``: the same command line as the ``harness`` script (harness.cli)."""

import sys

from harness.cli import main

sys.exit(main())
