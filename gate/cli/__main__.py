"""``python -m gate.cli``: the ``fusegate`` command."""

import sys

from gate.cli import main

sys.exit(main())
