"""Opening a SQLite file as an override store: creating it whole, checking its schema, migrating and upgrading it.

Every function takes a connection the caller opened through :func:`empathy.labels.sqlite_files.connect_store_file`
(or a private copy), so the file discipline of :mod:`empathy.labels.sqlite_files` holds here too.
"""

from __future__ import annotations

import os
import re
import sqlite3
import tempfile
from collections.abc import Sequence
from pathlib import Path

from empathy.labels.locations import StoreError
from empathy.labels.schema import BASE_VERSION, MIGRATE_V1, SCHEMA_VERSION, SQLITE_SCHEMA, split_sql, upgrade_statements
from empathy.labels.sqlite_files import APPLICATION_ID, check_is_store, connect_store_file
from empathy.sqlite_wal import enable_wal

#: Mode of a store file this package creates (its ``-wal``/``-shm`` companions take the same).
STORE_FILE_MODE = 0o600


def create_store_file(path: Path, busy_timeout: float) -> None:
    """Create a new store at ``path`` with mode 0600, its tables in place, without ever showing an empty file.

    The store is built in a private temporary file beside ``path`` (``mkstemp``: mode 0600) and linked to its
    name in one step, so another process opening the same new store sees either nothing or a whole store (an
    empty file is refused as damaged). When another process linked first, its store is kept. SQLite gives the
    ``-wal`` and ``-shm`` files the main file's mode, so they are 0600 too.
    """
    descriptor, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".new")
    os.close(descriptor)
    temporary = Path(name)
    try:
        os.chmod(temporary, STORE_FILE_MODE)
        connection = connect_store_file(temporary, temporary, timeout=busy_timeout)
        try:
            open_sqlite_schema(connection, temporary, busy_timeout)
        finally:
            connection.close()
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass  # another process created the store meanwhile: use theirs
        except OSError:
            # no hard links on this file system: a rename (which could replace a store created meanwhile, so only
            # when there is still none)
            if not path.exists():
                os.replace(temporary, path)
    finally:
        remove_copy(temporary)


def check_readable_schema(connection: sqlite3.Connection, path: Path) -> int:
    """The schema version of a store opened for reading, after checking it is not newer and not damaged."""
    check_is_store(connection, path)
    version = int(connection.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise StoreError(path, f"was written by a newer version of empathy (schema {version}, this "
                         f"one reads up to {SCHEMA_VERSION}); nothing was written")
    check = connection.execute("PRAGMA quick_check").fetchall()
    if [tuple(row) for row in check] != [("ok",)]:
        raise StoreError(path, f"is damaged ({'; '.join(str(r[0]) for r in check[:3])}); nothing "
                         "was written. Restore it from a backup or move it away")
    return version


def upgraded_copy(connection: sqlite3.Connection, busy_timeout: float) -> Path:
    """A private copy (mode 0600, in the temporary folder) of a store opened for reading, upgraded to
    :data:`SCHEMA_VERSION`: how an older read-only store is read without writing to it."""
    descriptor, name = tempfile.mkstemp(prefix="empathy-store-", suffix=".sqlite")
    os.close(descriptor)
    copy = Path(name)
    try:
        target = sqlite3.connect(copy, timeout=busy_timeout, isolation_level=None)
        try:
            connection.backup(target)
            open_sqlite_schema(target, copy, busy_timeout)
        finally:
            target.close()
    except BaseException:
        remove_copy(copy)
        raise
    return copy


def remove_copy(path: Path) -> None:
    """Remove a temporary store file and its companions (missing ones are fine)."""
    for suffix in ("", "-wal", "-shm", "-journal", ".v1-backup"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def open_sqlite_schema(connection: sqlite3.Connection, path: Path, busy_timeout: float) -> None:
    """Check the file's schema version and integrity, then create, migrate or upgrade its tables (WAL mode)."""
    version = check_readable_schema(connection, path)
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    columns = {row[1] for row in connection.execute("PRAGMA table_info(overrides)")}
    if version == SCHEMA_VERSION:
        enable_wal(connection, busy_timeout)
        if int(connection.execute("PRAGMA application_id").fetchone()[0]) != APPLICATION_ID:
            _run_in_transaction(connection, busy_timeout, [f"PRAGMA application_id={APPLICATION_ID}"])
        return
    if "overrides" in tables and "role" not in columns:
        _migrate_v1(connection, path, busy_timeout)
        version = BASE_VERSION
    statements = split_sql(SQLITE_SCHEMA) if version < BASE_VERSION else []
    statements += [s for s in upgrade_statements(max(version, BASE_VERSION), "sqlite")
                   if not _adds_existing_column(connection, s)]
    _run_in_transaction(connection, busy_timeout, [*statements, f"PRAGMA user_version={SCHEMA_VERSION}",
                                                   f"PRAGMA application_id={APPLICATION_ID}"])


_ADD_COLUMN = re.compile(r"^ALTER TABLE (\w+) ADD COLUMN (\w+)", re.IGNORECASE)


def _adds_existing_column(connection: sqlite3.Connection, statement: str) -> bool:
    """Whether ``statement`` adds a column its table already has (SQLite has no ``ADD COLUMN IF NOT EXISTS``):
    an upgrade step then runs on a file whose version number is older than its tables."""
    found = _ADD_COLUMN.match(statement)
    if found is None:
        return False
    table, column = found.groups()
    return column in {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}


def _migrate_v1(connection: sqlite3.Connection, path: Path, busy_timeout: float) -> None:
    """Copy a version 1 store into the version 2 tables (a backup of the file is kept beside it)."""
    backup = path.with_name(path.name + ".v1-backup")
    if not backup.exists():
        # created 0600 before SQLite opens it (an empty file is a new database to SQLite)
        os.close(os.open(backup, os.O_CREAT | os.O_WRONLY, STORE_FILE_MODE))
        target = sqlite3.connect(backup)
        try:
            connection.backup(target)
        finally:
            target.close()
    _run_in_transaction(connection, busy_timeout, [*split_sql(MIGRATE_V1.format(schema=SQLITE_SCHEMA)),
                                                   f"PRAGMA user_version={BASE_VERSION}"])


def _run_in_transaction(connection: sqlite3.Connection, busy_timeout: float, statements: Sequence[str]) -> None:
    enable_wal(connection, busy_timeout)
    connection.execute("BEGIN IMMEDIATE")
    try:
        for statement in statements:
            connection.execute(statement)
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")
