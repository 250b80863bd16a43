"""``python -m p2p_nerts``: the same as the ``nerts`` command."""

import sys

from .cli import main

sys.exit(main())
