"""``python -m harness.cli``: the same command line as the ``harness`` script."""

import sys

from harness.cli import main

sys.exit(main())
