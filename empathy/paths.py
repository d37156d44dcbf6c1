"""Where the project's own files and the third-party ``../shared`` folder live."""

from __future__ import annotations

import os
from pathlib import Path

#: The repository root (the folder holding ``app.py`` and ``data/``).
PROJECT_ROOT = Path(__file__).resolve().parent.parent
#: The demo data set the repository ships (``data/``, written by ``scripts/make_demo.py``).
SHIPPED_DEMO_DIR = PROJECT_ROOT / "data"


def demo_dir() -> Path:
    """The folder the app opens as its demo: ``$EMPATHY_DEMO_DIR`` when set, else the shipped ``data/``.

    The override exists for the test suite, whose hand-worked numbers were computed on the first demo (kept in
    ``tests/demo_v1/data/``): the shipped demo can then grow without changing what those tests assert. It is
    read on every call, so an app run (or a test) that sets it sees it at once.
    """
    override = os.environ.get("EMPATHY_DEMO_DIR", "").strip()
    return Path(override).expanduser() if override else SHIPPED_DEMO_DIR


#: The demo folder as :func:`demo_dir` gave it when this module was imported (scripts, tests, benchmarks).
DEMO_DIR = demo_dir()


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
