"""``python -m arbiter`` runs the ``ecarte`` command."""

import sys

from arbiter.cli import main

sys.exit(main())
