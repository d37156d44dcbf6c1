"""Compatibility re-exports: the PostgreSQL backend moved to :mod:`empathy.labels.postgres` (issue 22).

Nothing is defined here; import from :mod:`empathy.labels.postgres`, and open a store by location with
:func:`empathy.labels.backends.open_store`. Kept while branches written against the old path are merged.
"""

from __future__ import annotations

from empathy.labels.postgres import (
    CONNECT_TIMEOUT_S,
    MAX_IDLE,
    WRITE_LOCK_KEY,
    PostgresOverrideStore,
)

__all__ = [
    "CONNECT_TIMEOUT_S",
    "MAX_IDLE",
    "PostgresOverrideStore",
    "WRITE_LOCK_KEY",
]
