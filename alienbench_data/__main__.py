"""``python -m alienbench_data`` runs the ``alienbench`` command line (works without the script on PATH)."""

import sys

from .cli import main

sys.exit(main())
