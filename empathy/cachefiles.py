"""Cache files readable by their owner only.

The distancing cache holds the texts' analyses (with span text) and the judge cache the judges' raw answers:
both are as private as the data they came from, so they are created with mode 0600 (folders 0700), never
the umask's usual 0644. SQLite creates its ``-wal`` and ``-shm`` companions with the database file's own
permissions, so creating the database file first is enough.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

#: Owner read/write only.
FILE_MODE = 0o600
#: Owner read/write/search only (for cache folders this package creates).
DIRECTORY_MODE = 0o700


def ensure_private_directory(directory: Path) -> None:
    """Create ``directory`` (and parents) when missing; a folder created here gets mode 0700.

    Raises ``OSError`` as :meth:`pathlib.Path.mkdir` does.
    """
    if directory.is_dir():
        return
    directory.parent.mkdir(parents=True, exist_ok=True)
    directory.mkdir(mode=DIRECTORY_MODE, exist_ok=True)


def ensure_private_file(path: Path) -> None:
    """Create ``path`` empty with mode 0600 when missing; tighten an existing one we own to 0600.

    An existing file with group or other permission bits (made by an earlier version) is narrowed, because
    the cache may hold raw answers and text analyses. A file owned by someone else is left alone (``chmod``
    would fail; SQLite then reports whether it can open it). SQLite's ``-wal``/``-shm`` files that already
    exist are narrowed too.
    """
    try:
        descriptor = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, FILE_MODE)
    except FileExistsError:
        for candidate in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
            try:
                mode = candidate.stat().st_mode
                if stat.S_IMODE(mode) & 0o077:
                    os.chmod(candidate, stat.S_IMODE(mode) & ~0o077)
            except OSError:
                pass  # missing companion, or not ours: nothing to narrow
        return
    os.close(descriptor)


#: The environment variable naming the user's cache folder (every cache and the app's kept files live under it).
CACHE_ENV = "EMPATHY_CACHE_DIR"


def user_cache_dir() -> Path:
    """``$EMPATHY_CACHE_DIR``, else ``~/.cache/empathy``: the user's cache folder (stores of imports and uploads,
    the judges', distancing and data set caches)."""
    root = os.environ.get(CACHE_ENV, "").strip()
    return Path(root).expanduser() if root else Path.home() / ".cache" / "empathy"
