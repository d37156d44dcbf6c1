"""Switching a SQLite database to write-ahead logging when several processes open it at once.

SQLite's busy handler (``sqlite3.connect(timeout=...)``) is not a promise: when waiting could deadlock, SQLite
returns ``database is locked`` at once instead of waiting (https://sqlite.org/c3ref/busy_handler.html). Turning
a new file to WAL needs an exclusive lock, so when several processes open the same new cache together (the
workers of a cluster, two app sessions) one of them could fail that way even with a 30 s timeout. This module
asks first (``PRAGMA journal_mode`` reads, it takes no write lock, and WAL persists in the file, so every open
after the first one only reads) and, when it has to switch, tries again until its own deadline.
"""

from __future__ import annotations

import sqlite3
import time

#: How long a cache's open waits for other processes opening the same file (a cluster's workers start together,
#: parallel runs share one judge cache). The override store has its own, configurable, ``busy_timeout``.
CACHE_BUSY_TIMEOUT_S = 30.0
#: First pause after a refused switch; doubled each time, up to :data:`_MAX_PAUSE_S`.
_FIRST_PAUSE_S = 0.01
_MAX_PAUSE_S = 0.5


def _is_contention(error: sqlite3.OperationalError) -> bool:
    message = str(error).lower()
    return "locked" in message or "busy" in message


def enable_wal(connection: sqlite3.Connection, timeout: float) -> None:
    """Put the database of ``connection`` in WAL mode, waiting up to ``timeout`` seconds for other openers.

    Raises the last ``sqlite3.OperationalError`` when the database is still locked after ``timeout``, and any
    other ``sqlite3.Error`` at once. A database that cannot use WAL (``:memory:``) is left in its own mode.
    """
    if timeout <= 0:
        raise ValueError(f"timeout must be positive, got {timeout!r}")
    deadline = time.monotonic() + timeout
    pause = _FIRST_PAUSE_S
    while True:
        try:
            mode = str(connection.execute("PRAGMA journal_mode").fetchone()[0]).lower()
            if mode in ("wal", "memory"):
                return
            connection.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as error:
            if not _is_contention(error) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, _MAX_PAUSE_S)
