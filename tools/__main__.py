"""``python -m tools``: the maintainers' commands (``tools.cli``)."""

import sys

from tools.cli import main

sys.exit(main())
