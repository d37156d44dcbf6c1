"""Where the project's own files and the third-party ``../shared`` folder live."""

from __future__ import annotations

import os
from pathlib import Path

#: Where a built wheel keeps the app's frame, pages, Streamlit settings and demo (``setup.py`` copies them there).
BUNDLE_DIR = Path(__file__).resolve().parent.parent / "empathy_app" / "bundle"


def _project_root() -> Path:
    # a clone (or an editable install) runs the checkout's own files; an installed wheel its bundled copy of them
    checkout = Path(__file__).resolve().parent.parent
    return BUNDLE_DIR if not (checkout / "app.py").is_file() and (BUNDLE_DIR / "app.py").is_file() else checkout


#: The app's root: the folder holding ``app.py``, ``app_pages/`` and ``data/`` (the repository root in a clone, the
#: bundle of an installed wheel).
PROJECT_ROOT = _project_root()
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
