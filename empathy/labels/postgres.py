"""The PostgreSQL backend of the override store: a team's shared ledger on a server.

:func:`empathy.labels.backends.open_store` with a ``postgresql://user:password@host:5432/db`` location (or
``$EMPATHY_STORE`` / ``--store`` set to such a URL) returns a :class:`PostgresOverrideStore`. It runs the very
queries of :class:`empathy.labels.sqlite.OverrideStore` (decisions per annotator, the audit trail, undo, confirm,
adjudicate; import, export and migration through :mod:`empathy.labels.transfer`), so the two backends cannot
drift apart; only connecting, the schema check and the error messages live here.

Concurrency: every change is one transaction that first takes a transaction-scoped advisory lock
(``pg_advisory_xact_lock``), so concurrent writers, whether threads of one app server or annotators on other
machines, run one after the other exactly as ``BEGIN IMMEDIATE`` makes them on SQLite: no write is lost, batch
numbers stay unique, the audit's old values are the values each change really replaced. A writer waits for the
lock at most ``busy_timeout`` seconds (``lock_timeout``), then gets a one-line :class:`StoreError`. Readers
never wait. Each annotator's decision is its own row, so two annotators deciding the same item never replace
each other; the conflict is surfaced as two decisions (:func:`empathy.labels.rules.effective_overrides` lists it
as a disagreement to adjudicate).

The tables are those of the SQLite store with PostgreSQL's types (:data:`empathy.labels.schema.POSTGRES_SCHEMA`,
version :data:`empathy.labels.schema.SCHEMA_VERSION`) in the URL's database and current schema
(``?options=-csearch_path%3Dname`` selects another), with the version in ``empathy_meta``. Text keys use the
``"C"`` collation so that every listing is ordered exactly as SQLite orders it. Opening a database whose
``overrides`` or ``audit`` tables are not an empathy store, whose schema is newer, or whose tables lack columns
raises :class:`StoreError` and writes nothing; so does an unreachable server. Messages, ``repr`` and labels
never show the password (:func:`empathy.labels.locations.mask_location`).
"""

from __future__ import annotations

import os
import re
import threading
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from empathy.labels.locations import (
    StoreError,
    is_keyword_dsn,
    location_secrets,
    mask_location,
    parse_keyword_dsn,
    url_parts,
)
from empathy.labels.roles import Roles
from empathy.labels.schema import (
    BASE_VERSION,
    EXPECTED_COLUMNS,
    POSTGRES_SCHEMA,
    SCHEMA_VERSION,
    split_sql,
    upgrade_statements,
)
from empathy.labels.sqlite import AUTO, BUSY_TIMEOUT_S, READ_ONLY, READ_WRITE, OverrideStore

#: Key of the advisory lock every write transaction takes (the bytes of "empathy!" as a signed 64-bit number).
WRITE_LOCK_KEY = int.from_bytes(b"empathy!", "big", signed=True)
#: Idle connections kept for reuse per store (an app server's sessions share one store object).
MAX_IDLE = 4
#: Seconds to wait for the server to answer a new connection, unless the URL sets ``connect_timeout``.
CONNECT_TIMEOUT_S = 10

_PLACEHOLDER = re.compile(r"\?")
# an insert into the audit trail (not into audit_designs or audit_design_outputs): its id is the lastrowid
_AUDIT_INSERT = re.compile(r"\s*INSERT\s+INTO\s+audit\b", re.IGNORECASE)
_URL_CREDENTIALS = re.compile(r"(://[^:/@\s\"']*:)[^@\s\"']*@")
_PASSWORD_PARAMETER = re.compile(r"(password\s*=\s*)[^&\s\"']+", re.IGNORECASE)


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError:
        return None
    return psycopg


class _Cursor:
    """The parts of a DB-API cursor the store uses, with ``lastrowid`` from ``RETURNING id``."""

    def __init__(self, cursor: Any, lastrowid: int | None = None):
        self._cursor = cursor
        self.lastrowid = lastrowid

    @property
    def rowcount(self) -> int:
        return int(self._cursor.rowcount)

    def fetchone(self) -> tuple | None:
        return self._cursor.fetchone()

    def fetchall(self) -> list[tuple]:
        return self._cursor.fetchall()

    def fetchmany(self, size: int) -> list[tuple]:
        return self._cursor.fetchmany(size)


class _Connection:
    """A psycopg connection that speaks the store's SQL: ``?`` placeholders, ``lastrowid`` of audit inserts.

    ``close()`` hands a healthy connection back to its store for reuse.
    """

    def __init__(self, store: PostgresOverrideStore, raw: Any):
        self._store = store
        self.raw = raw

    def execute(self, sql: str, params: Sequence[object] = ()) -> _Cursor:
        statement = _PLACEHOLDER.sub("%s", sql)
        if _AUDIT_INSERT.match(statement) and "RETURNING" not in statement.upper():
            cursor = self.raw.execute(statement + " RETURNING id", tuple(params))
            return _Cursor(cursor, int(cursor.fetchone()[0]))
        return _Cursor(self.raw.execute(statement, tuple(params)))

    def executemany(self, sql: str, rows: Sequence[Sequence[object]]) -> None:
        with self.raw.cursor() as cursor:
            cursor.executemany(_PLACEHOLDER.sub("%s", sql), [tuple(row) for row in rows])

    def close(self) -> None:
        self._store._release(self.raw)


class PostgresOverrideStore(OverrideStore):
    """The override store on a PostgreSQL server (see the module docstring); the interface of
    :class:`empathy.labels.sqlite.OverrideStore`.

    ``url`` is a ``postgresql://`` URL or libpq's keyword form (``host=db user=ann dbname=team``); libpq's ``PG*``
    environment variables fill what it leaves out (``PGPASSWORD`` is never printed: it is masked in every server
    message). ``read_only``: as for :class:`~empathy.labels.sqlite.OverrideStore`; opened for reading, every
    connection runs with ``default_transaction_read_only`` on; ``None`` opens for reading when the login cannot
    write (``default_transaction_read_only`` set for it, or no ``INSERT`` right on ``overrides``). An older schema
    is upgraded only by a login that can write (for reading it is refused with one line saying so).

    Raises
    ------
    StoreError
        When psycopg is not installed, the server is unreachable or refuses the login, the database holds
        foreign ``overrides``/``audit`` tables, a newer schema, or tables missing columns; nothing is written.
    """

    backend = "postgresql"

    def __init__(self, path: str | Path, *, busy_timeout: float = BUSY_TIMEOUT_S, read_only: bool | None = False,
                 roles: Roles | None = None):
        self.url = str(path).strip()
        self.path = None  # no file: ``label`` names the store
        if busy_timeout <= 0:
            raise ValueError(f"busy_timeout must be positive, got {busy_timeout!r}")
        if read_only not in (READ_WRITE, READ_ONLY, AUTO):
            raise TypeError(f"read_only must be True, False or None, got {read_only!r}")
        self.busy_timeout = float(busy_timeout)
        self.roles = roles
        self.read_only = read_only is READ_ONLY
        self._label = mask_location(self.url)
        self._secrets = location_secrets(self.url)
        self._idle: list[Any] = []  # mutated in place, never rebound: the finalizer below holds this list
        self._idle_lock = threading.Lock()
        self._pid = os.getpid()
        # A store dropped without close() (a test, a finished Streamlit session) closes its idle connections when
        # it is collected, instead of leaving psycopg to warn about each open one at an arbitrary later moment.
        weakref.finalize(self, _close_idle, self._idle, self._pid)
        if _psycopg() is None:
            raise StoreError(self._label, "a PostgreSQL store needs psycopg: pip install 'psycopg[binary]' "
                             "(nothing was written)")
        with self._guard():
            self._open_schema_pg(detect_read_only=read_only is AUTO)

    def __repr__(self) -> str:
        return f"OverrideStore({self._label!r})"

    @property
    def label(self) -> str:
        return self._label

    @property
    def short_label(self) -> str:
        if is_keyword_dsn(self.url):
            try:
                pairs = dict(parse_keyword_dsn(self.url))
            except ValueError:
                return self._label
            port = f":{pairs['port']}" if pairs.get("port") else ""
            return f"{pairs.get('host') or 'localhost'}{port}/{pairs.get('dbname', '')}"
        # cut as libpq cuts it: urlsplit would end the user part at a '#' or '?' of the password
        parts = url_parts(self.url)
        query = {key: value for key, value in parts.query_pairs() if value is not None}
        host = unquote(parts.hosts) or query.get("host") or "localhost"
        database = unquote(parts.database or "") or query.get("dbname", "")
        return f"{host}/{database}"

    # -------------------------------------------------------------------------------------- connections

    def _check_file(self) -> None:
        """No file to check: the server validates itself; the schema is checked on open."""

    def _new_connection(self) -> Any:
        psycopg = _psycopg()
        options: dict[str, object] = {"autocommit": True}
        if "connect_timeout" not in self.url:
            options["connect_timeout"] = CONNECT_TIMEOUT_S
        if "application_name" not in self.url:
            options["application_name"] = "empathy"
        raw = psycopg.connect(self.url, **options)
        # A writer waits for the advisory lock at most busy_timeout, like SQLite's busy timeout.
        raw.execute("SELECT set_config('lock_timeout', %s, false)", (f"{int(self.busy_timeout * 1000)}ms",))
        if self.read_only:
            # opened for reading: the server itself refuses a write, whatever the login may do
            raw.execute("SET default_transaction_read_only = on")
        return raw

    def _connect(self) -> _Connection:  # type: ignore[override]
        psycopg = _psycopg()
        with self._idle_lock:
            if os.getpid() != self._pid:
                # A forked child must not use (or close) its parent's sockets: forget them.
                self._idle.clear()
                self._pid = os.getpid()
            idle = self._idle.pop() if self._idle else None
        if idle is not None:
            try:
                idle.execute("SELECT 1")
                return _Connection(self, idle)
            except psycopg.Error:
                # The server restarted or dropped the idle connection: open a new one.
                _close_quietly(idle)
        return _Connection(self, self._new_connection())

    def _reading_connection(self) -> tuple[_Connection, bool]:  # type: ignore[override]
        # the pool of idle connections already spares a new one per query
        return self._connect(), False

    def _release(self, raw: Any) -> None:
        psycopg = _psycopg()
        healthy = (not raw.closed and not raw.broken
                   and raw.info.transaction_status == psycopg.pq.TransactionStatus.IDLE)
        with self._idle_lock:
            if healthy and os.getpid() == self._pid and len(self._idle) < MAX_IDLE:
                self._idle.append(raw)
                return
        _close_quietly(raw)

    def close(self) -> None:
        """Close the idle connections (the store stays usable: the next call opens a new one)."""
        with self._idle_lock:
            idle = list(self._idle)
            self._idle.clear()
        for raw in idle:
            _close_quietly(raw)

    @contextmanager
    def _guard(self) -> Iterator[None]:
        """Turn psycopg's errors into one-line :class:`StoreError` naming the store (password masked)."""
        psycopg = _psycopg()
        try:
            yield
        except psycopg.IntegrityError:
            raise
        except psycopg.Error as error:
            errors = psycopg.errors
            detail = self._clean(error)
            if isinstance(error, errors.InsufficientPrivilege | errors.ReadOnlySqlTransaction):
                message = (f"is read-only for this user ({detail}); nothing was written. Ask the database's "
                           "owner for INSERT, UPDATE and DELETE rights, or use another store")
            elif isinstance(error, errors.LockNotAvailable):
                message = (f"is being written by another annotator for more than {self.busy_timeout:g} s ({detail});"
                           " try again")
            elif isinstance(error, errors.UndefinedTable | errors.UndefinedColumn):
                message = (f"is damaged ({detail}); nothing was written. Restore the database from a backup or "
                           "point EMPATHY_STORE or --store to another")
            elif isinstance(error, psycopg.OperationalError):
                message = f"cannot be reached ({detail}); check the URL, the server and the password"
            else:
                message = f"cannot be used: {detail}"
            raise StoreError(self._label, message) from None

    def _clean(self, error: BaseException) -> str:
        """The error's text on one line, with any password of the URL masked."""
        text = " ".join(str(error).split()) or type(error).__name__
        for secret in self._secrets:
            text = text.replace(secret, "***")
        # libpq quotes a URL it cannot parse whole; its password is then unknown to us: mask any user:password@.
        text = _URL_CREDENTIALS.sub(r"\1***@", text)
        return _PASSWORD_PARAMETER.sub(r"\1***", text)

    @contextmanager
    def transaction(self) -> Iterator[_Connection]:  # type: ignore[override]
        self.refuse_if_read_only()
        with self._locked() as connection:
            yield connection

    @contextmanager
    def _locked(self) -> Iterator[_Connection]:
        """One transaction holding the advisory write lock (also when opening for reading: the schema is read
        while no writer upgrades it)."""
        with self._guard():
            connection = self._connect()
            try:
                with connection.raw.transaction():
                    connection.raw.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK_KEY,))
                    yield connection
            finally:
                connection.close()

    # ------------------------------------------------------------------------------------------- schema

    def _login_cannot_write(self, connection: _Connection, tables: set[str]) -> bool:
        """Whether this login cannot write the store: read-only transactions, or no INSERT on ``overrides``."""
        if connection.execute("SELECT current_setting('transaction_read_only')").fetchone()[0] == "on":
            return True
        return "overrides" in tables and not connection.execute(
            "SELECT has_table_privilege('overrides', 'INSERT')").fetchone()[0]

    def _open_schema_pg(self, *, detect_read_only: bool = False) -> None:
        """Create the tables in an empty database, upgrade an older schema, refuse a foreign or newer one."""
        with self._locked() as connection:
            tables = {row[0] for row in connection.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
            ).fetchall()}
            if "empathy_meta" in tables:
                row = connection.execute("SELECT value FROM empathy_meta WHERE key = 'schema_version'").fetchone()
                version = int(row[0]) if row is not None and str(row[0]).isdigit() else -1
                if version < 0:
                    raise StoreError(self._label, "is damaged (empathy_meta has no schema version); nothing was "
                                     "written")
            elif tables & set(EXPECTED_COLUMNS):
                raise StoreError(self._label, "holds tables named overrides or audit that are not an empathy "
                                 "store; nothing was written. Use another database (or schema)")
            else:
                version = 0
            if version > SCHEMA_VERSION:
                raise StoreError(self._label, f"was written by a newer version of empathy (schema {version}, this "
                                 f"one reads up to {SCHEMA_VERSION}); nothing was written")
            if detect_read_only:
                self.read_only = self._login_cannot_write(connection, tables)
            if self.read_only and version < SCHEMA_VERSION:
                held = "holds no empathy store" if version == 0 else f"holds schema version {version}"
                raise StoreError(self._label, f"is opened read-only and {held} (this version reads {SCHEMA_VERSION});"
                                 " nothing was written. Open it once with a login that can write, to create or "
                                 "upgrade its tables")
            if version < SCHEMA_VERSION:
                if version == 0:
                    for statement in split_sql(POSTGRES_SCHEMA):
                        connection.execute(statement)
                    version = BASE_VERSION
                for statement in upgrade_statements(version, "postgresql"):
                    connection.execute(statement)
                connection.execute(
                    "INSERT INTO empathy_meta (key, value) VALUES ('schema_version', ?) ON CONFLICT (key) DO "
                    "UPDATE SET value = excluded.value", (str(SCHEMA_VERSION),))
            for table, expected in EXPECTED_COLUMNS.items():
                present = {row[0] for row in connection.execute(
                    "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
                    "AND table_name = ?", (table,)).fetchall()}
                missing = sorted(expected - present)
                if missing:
                    raise StoreError(self._label, f"is damaged (table {table} lacks {', '.join(missing)}); "
                                     "nothing was written")

    def schema_version(self) -> int:
        """The schema version recorded in ``empathy_meta``."""
        return int(self.fetch("SELECT value FROM empathy_meta WHERE key = 'schema_version'")[0][0])

    def after_restore(self, connection: _Connection) -> None:  # type: ignore[override]
        # Explicit ids do not move an identity's sequence: continue after the copied history.
        connection.execute("SELECT setval(pg_get_serial_sequence('audit', 'id'), "
                           "GREATEST((SELECT MAX(id) FROM audit), 1), (SELECT MAX(id) FROM audit) IS NOT NULL)")


def _close_idle(idle: list[Any], pid: int) -> None:
    """Close a collected store's idle connections (only in the process that opened them: a forked child's copies
    are its parent's sockets)."""
    if os.getpid() != pid:
        return
    while idle:
        _close_quietly(idle.pop())


def _close_quietly(raw: Any) -> None:
    try:
        raw.close()
    except Exception:  # noqa: BLE001 - a dead connection may fail to close; it is dropped either way
        pass
