"""``python -m tui`` does what the ``ctxtop`` command does."""

import sys

from tui.cli import main

sys.exit(main())
