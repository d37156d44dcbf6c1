"""Opening an override store by its location: the one place that knows both backends.

:func:`open_store` returns :class:`empathy.labels.sqlite.OverrideStore` for a file and
:class:`empathy.labels.postgres.PostgresOverrideStore` for a ``postgresql://`` URL. It lives above both backend
modules (which import neither this module nor each other's subclasses), so choosing a backend needs no import
cycle: a new backend is one module and one branch here.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from empathy.labels.locations import is_server_location
from empathy.labels.sqlite import BUSY_TIMEOUT_S, OverrideStore

if TYPE_CHECKING:
    from empathy.labels.roles import Roles


def open_store(location: str | Path, *, busy_timeout: float = BUSY_TIMEOUT_S, read_only: bool | None = False,
               roles: Roles | None = None) -> OverrideStore:
    """The override store at ``location``: a SQLite file, or a PostgreSQL server (a ``postgresql://`` URL or a
    keyword-form connection string).

    ``read_only``: ``False`` to write (a read-only store is an error), ``True`` to read only, ``None`` to read
    only when the store cannot be written (see :class:`empathy.labels.sqlite.OverrideStore`). ``roles``: check
    every write against them (:class:`empathy.labels.roles.Roles`). Raises
    :class:`empathy.labels.locations.StoreError` for a damaged or unreachable store (nothing written),
    ``ValueError`` for a ``busy_timeout`` that is not positive.
    """
    if is_server_location(location):
        # imported here: a file store (every single-user run) need not load the server backend
        from empathy.labels.postgres import PostgresOverrideStore

        return PostgresOverrideStore(location, busy_timeout=busy_timeout, read_only=read_only, roles=roles)
    return OverrideStore(location, busy_timeout=busy_timeout, read_only=read_only, roles=roles)


def open_for_reading(location: str | Path, *, busy_timeout: float = BUSY_TIMEOUT_S) -> OverrideStore:
    """The store at ``location`` for a command that only reads it.

    An existing SQLite store is opened read-only (``mode=ro``: nothing is written to it, not a schema upgrade,
    not a checkpoint of its write-ahead log); a SQLite file that does not exist yet is created empty, as the
    writing commands would, so a first ``metrics --store`` finds no decisions instead of an error. A server
    store is opened for reading when its login cannot write (the server keeps its own log).
    """
    exists = not is_server_location(location) and Path(location).exists()
    return open_store(location, busy_timeout=busy_timeout, read_only=True if exists else None)
