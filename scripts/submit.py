#!/usr/bin/env python
"""Submit a model to AlienBench: the same as ``alienbench submit`` (see ``--help``)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from alienbench_data.cli import main

if __name__ == "__main__":
    sys.exit(main(["submit", *sys.argv[1:]]))
