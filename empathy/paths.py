"""Where the project's own files and the third-party ``../shared`` folder live."""

from __future__ import annotations

import os
from pathlib import Path

#: The repository root (the folder holding ``app.py`` and ``data/``).
PROJECT_ROOT = Path(__file__).resolve().parent.parent
#: The bundled demo data set.
DEMO_DIR = PROJECT_ROOT / "data"


def shared_dir() -> Path | None:
    """The ``shared`` folder beside the repository, or ``None`` when it is absent.

    ``EMPATHY_SHARED`` overrides the location (useful when the checkout lives elsewhere).
    """
    candidates = [os.environ.get("EMPATHY_SHARED"), PROJECT_ROOT.parent / "shared", Path.cwd().parent / "shared"]
    for candidate in candidates:
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    return None


def shared_dataset(name: str) -> Path | None:
    """``shared/datasets/NAME`` when present, else ``None`` (callers skip cleanly)."""
    root = shared_dir()
    if root is None:
        return None
    path = root / "datasets" / name
    return path if path.exists() else None
