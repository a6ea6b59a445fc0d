"""``python -m ctxtop`` does what the ``ctxtop`` command does."""

import sys

from ctxtop.tui.cli import main

sys.exit(main())
