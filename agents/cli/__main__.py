"""``python -m agents.cli …`` is the ``tetrarch`` command (the Makefile uses it before the script is on PATH)."""

import sys

from agents.cli.main import main

sys.exit(main())
