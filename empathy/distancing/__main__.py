"""``python -m empathy.distancing FILE`` runs the distancing CLI without the main ``empathy`` command."""

import sys

from empathy.cli.distancing import main

sys.exit(main())
