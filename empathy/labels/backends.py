"""Opening an override store by its location: the one place that knows both backends.

:func:`open_store` returns :class:`empathy.labels.sqlite.OverrideStore` for a file and
:class:`empathy.labels.postgres.PostgresOverrideStore` for a ``postgresql://`` URL. It lives above both backend
modules (which import neither this module nor each other's subclasses), so choosing a backend needs no import
cycle: a new backend is one module and one branch here.
"""

from __future__ import annotations

from pathlib import Path

from empathy.labels.locations import is_server_location
from empathy.labels.postgres import PostgresOverrideStore
from empathy.labels.sqlite import BUSY_TIMEOUT_S, OverrideStore


def open_store(location: str | Path, *, busy_timeout: float = BUSY_TIMEOUT_S) -> OverrideStore:
    """The override store at ``location``: a SQLite file, or a PostgreSQL server given by a ``postgresql://`` URL.

    Raises :class:`empathy.labels.locations.StoreError` for a damaged or unreachable store (nothing written),
    ``ValueError`` for a ``busy_timeout`` that is not positive.
    """
    if is_server_location(location):
        return PostgresOverrideStore(location, busy_timeout=busy_timeout)
    return OverrideStore(location, busy_timeout=busy_timeout)
