"""``python -m empathy``: see :mod:`empathy.cli`."""

from empathy.cli import main

raise SystemExit(main())
