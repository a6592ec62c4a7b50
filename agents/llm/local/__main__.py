"""``python -m agents.llm.local models pull [NAME] | models list``."""

import sys

from agents.llm.local.commands import main

__all__: list[str] = []

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
