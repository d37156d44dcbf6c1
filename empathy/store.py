"""Durable store of human overrides of judge ratings, with an append-only audit trail.

An *override* is one annotator's decision on one rating, keyed by ``(dataset_id, item_id, model, rater,
dimension)`` plus the annotator and their role (``annotator`` or ``adjudicator``): two people deciding the
same rating keep two rows, never last-writer-wins. Which of them a metric uses is the *label rule* the
researcher picks (:mod:`empathy.overrides`: ``latest``, ``majority`` or ``adjudicated``).

Each decision is bound to what the human read: it stores a hash of the output's reference and generation
(:func:`text_hash`), and the judge's value and signature it overrode. On load,
:func:`empathy.overrides.ledger_status` compares the hashes with the data: a decision whose text changed is
*stale* (listed, not applied until confirmed with :meth:`OverrideStore.confirm`), one whose output is gone is
*orphaned* (kept, listed, not applied).

``dataset_id`` is a stable *name* of the data set (:func:`dataset_name`: its outputs file, relative to the
store's folder when it lies inside it, or a name given explicitly), so adding or removing outputs keeps every
other override. Stores written by version 1 were keyed by a hash of the data set's ``(item_id, model)`` keys
(:func:`dataset_id`); :meth:`OverrideStore.adopt_legacy` moves such rows to the data set's name when the same
data set is loaded again.

Two backends behind one interface (:class:`OverrideStore`; :func:`open_store` picks by location):

* **SQLite** (the embedded default): a file in WAL mode; every change runs in its own ``BEGIN IMMEDIATE``
  transaction with a busy timeout, so two app sessions (or two processes) writing at the same time serialise
  instead of losing a write, and a change is on disk before :meth:`OverrideStore.set_overrides` returns. A
  damaged store (empty, truncated, not SQLite, read-only, from a newer version) raises :class:`StoreError` and
  is never overwritten.
* **PostgreSQL** (a team's shared server; a ``postgresql://`` URL as the location, see
  :mod:`empathy.store_postgres`): the same tables, queries and audit semantics; every change is one transaction
  that first takes a transaction-scoped advisory lock, so concurrent annotators serialise exactly as on SQLite.

:func:`migrate_store` copies one store into another (``python -m empathy store migrate SRC DST``).

Three tables (schema version :data:`SCHEMA_VERSION`, in SQLite's ``user_version``):

``overrides``
    the current decision of each annotator on each rating (one row per key, annotator and role);
``audit``
    every change, never updated except to mark a change as undone: annotator, UTC time, old value (the
    value the rating had: the annotator's previous value, else the latest decision of anyone, else the judge's
    value it replaced), new value, reason,
    action (``set``, ``undo``, ``import``, ``adjudicate``, ``confirm``, ``migrate``) and the text hash. Changes
    made together (one decision applied to three judges, one imported file) share a ``batch`` number so that
    :meth:`OverrideStore.undo_last` undoes them together;
``exhibits``
    the outputs pinned for a demo (:mod:`empathy.exhibits`): one row per (data set, item, model) with its place
    in the data set's ordered list and a note (added in version 3; a version 2 store gets the table on open).

The ledger (every decision) exports to JSONL and CSV and imports back from either. CSV cells that a
spreadsheet would run as a formula are written with a leading ``'``; :meth:`OverrideStore.import_ledger`
removes it again.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from empathy.escaping import spreadsheet_cell, unspreadsheet_cell
from empathy.io import BINARY_DIMENSIONS, DIMENSION_RANGES, DataError, iter_jsonl
from empathy.sqlite_wal import enable_wal

#: Environment variable naming the store: a SQLite file or a ``postgresql://`` URL (wins over the default).
STORE_ENV = "EMPATHY_STORE"
#: Location prefixes of a PostgreSQL store (libpq's URI schemes).
SERVER_SCHEMES: tuple[str, ...] = ("postgresql://", "postgres://")
#: File name of the default store, placed in the data folder.
STORE_FILENAME = ".empathy-overrides.sqlite"
#: Version of the store's tables (SQLite ``user_version``; PostgreSQL ``empathy_meta``); version 1 files are
#: migrated on open. Raising it: add the step to :data:`SCHEMA_UPGRADES`.
SCHEMA_VERSION = 3
#: The version the base schemas (``_SCHEMA`` here, ``_PG_SCHEMA`` in :mod:`empathy.store_postgres`) create.
BASE_VERSION = 2
#: Upgrade steps after the base schema: ``{from_version: {"sqlite": script, "postgresql": script}}``, applied in
#: order in the opening transaction until :data:`SCHEMA_VERSION` (a new table, e.g. pinned exhibits, is one
#: entry here with its ``CREATE TABLE`` for each backend). Scripts hold no ``;`` inside strings.
KEY_COLUMNS: tuple[str, ...] = ("item_id", "model", "rater", "dimension")
#: Who decided: an annotator's own decision or an adjudicator's resolution of a disagreement.
ROLES: tuple[str, ...] = ("annotator", "adjudicator")
DECISION_COLUMNS: tuple[str, ...] = (*KEY_COLUMNS, "value", "annotator", "role", "updated_at", "reason",
                                     "text_hash", "judge_value", "judge_signature")
LEDGER_COLUMNS: tuple[str, ...] = ("dataset_id", *DECISION_COLUMNS)
AUDIT_COLUMNS: tuple[str, ...] = ("id", "batch", "dataset_id", *KEY_COLUMNS, "annotator", "role", "at",
                                  "old_value", "new_value", "reason", "action", "undone_by", "text_hash", "prior")
ACTIONS: frozenset[str] = frozenset({"set", "undo", "import", "adjudicate", "confirm", "migrate"})
#: Actions that :meth:`OverrideStore.undo_last` can undo.
UNDOABLE: tuple[str, ...] = ("set", "import", "adjudicate")
BUSY_TIMEOUT_S = 30.0
_SQLITE_HEADER = b"SQLite format 3\x00"
_KEY_WHERE = "dataset_id=? AND item_id=? AND model=? AND rater=? AND dimension=?"
_ROW_WHERE = f"{_KEY_WHERE} AND annotator=? AND role=?"

# Version 3: the exhibit list (plain portable SQL: no INSERT OR REPLACE, positions renumbered by UPDATE).
_EXHIBITS_SCHEMA = """
CREATE TABLE IF NOT EXISTS exhibits (
    dataset_id TEXT NOT NULL,
    item_id    TEXT NOT NULL,
    model      TEXT NOT NULL,
    position   INTEGER NOT NULL,
    note       TEXT NOT NULL DEFAULT '',
    annotator  TEXT NOT NULL DEFAULT '',
    updated_at TEXT NOT NULL,
    PRIMARY KEY (dataset_id, item_id, model)
);
"""
EXHIBIT_COLUMNS: tuple[str, ...] = ("item_id", "model", "position", "note", "annotator", "updated_at")

SCHEMA_UPGRADES: dict[int, dict[str, str]] = {
    2: {"sqlite": _EXHIBITS_SCHEMA, "postgresql": _EXHIBITS_SCHEMA},
}

_ACTION_LIST = ", ".join(f"'{action}'" for action in sorted(ACTIONS))
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS overrides (
    dataset_id      TEXT NOT NULL,
    item_id         TEXT NOT NULL,
    model           TEXT NOT NULL,
    rater           TEXT NOT NULL,
    dimension       TEXT NOT NULL,
    annotator       TEXT NOT NULL,
    role            TEXT NOT NULL DEFAULT 'annotator' CHECK (role IN ('annotator', 'adjudicator')),
    value           REAL NOT NULL,
    updated_at      TEXT NOT NULL,
    reason          TEXT NOT NULL DEFAULT '',
    text_hash       TEXT NOT NULL DEFAULT '',
    judge_value     REAL,
    judge_signature TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (dataset_id, item_id, model, rater, dimension, annotator, role)
);
CREATE TABLE IF NOT EXISTS audit (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    batch      INTEGER NOT NULL,
    dataset_id TEXT NOT NULL,
    item_id    TEXT NOT NULL,
    model      TEXT NOT NULL,
    rater      TEXT NOT NULL,
    dimension  TEXT NOT NULL,
    annotator  TEXT NOT NULL,
    role       TEXT NOT NULL DEFAULT 'annotator',
    at         TEXT NOT NULL,
    old_value  REAL,
    new_value  REAL,
    reason     TEXT NOT NULL DEFAULT '',
    action     TEXT NOT NULL CHECK (action IN ({_ACTION_LIST})),
    undone_by  INTEGER,
    text_hash  TEXT NOT NULL DEFAULT '',
    prior      INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS audit_dataset ON audit (dataset_id, id);
"""

# Version 1 (no annotator in the key, no text hash): copied into the version 2 tables on open.
_MIGRATE_V1 = """
ALTER TABLE overrides RENAME TO overrides_v1;
ALTER TABLE audit RENAME TO audit_v1;
DROP INDEX IF EXISTS audit_dataset;
{schema}
INSERT INTO overrides (dataset_id, item_id, model, rater, dimension, annotator, role, value, updated_at, reason)
    SELECT dataset_id, item_id, model, rater, dimension, annotator, 'annotator', value, updated_at, reason
    FROM overrides_v1;
INSERT INTO audit (id, batch, dataset_id, item_id, model, rater, dimension, annotator, role, at, old_value,
                   new_value, reason, action, undone_by, text_hash, prior)
    SELECT id, batch, dataset_id, item_id, model, rater, dimension, annotator, 'annotator', at, old_value,
           new_value, reason, action, undone_by, '', CASE WHEN old_value IS NULL THEN 0 ELSE 1 END
    FROM audit_v1;
DROP TABLE overrides_v1;
DROP TABLE audit_v1;
"""


class StoreError(DataError):
    """The override store file cannot be used (empty, truncated, not SQLite, read-only, newer schema).

    ``str(error)`` is one line naming the file; nothing has been written to it. A subclass of
    :class:`empathy.io.DataError`, so the CLI reports it as one line with exit code 2.
    """


def dataset_id(outputs: pd.DataFrame) -> str:
    """Legacy (version 1) key of a data set: a SHA-256 of its sorted ``(item_id, model)`` keys, 16 hex digits.

    Row order and extra columns do not change it; adding or removing an output does, which is why version 2
    keys a data set by :func:`dataset_name` instead. Kept to find version 1 rows
    (:meth:`OverrideStore.adopt_legacy`).
    """
    for column in ("item_id", "model"):
        if column not in outputs.columns:
            raise ValueError(f"dataset_id: outputs lack the column {column!r}")
    keys = sorted(zip(outputs["item_id"].astype(str).tolist(), outputs["model"].astype(str).tolist(), strict=True))
    digest = hashlib.sha256()
    for item, model in keys:
        digest.update(f"{len(item)}:{item}{len(model)}:{model}\n".encode())
    return digest.hexdigest()[:16]


def dataset_name(outputs_path: str | Path | None = None, *, store_path: str | Path | None = None,
                 explicit: str | None = None) -> str:
    """The stable name under which a data set's overrides are kept.

    ``explicit`` wins (e.g. ``"kumar2025"`` or an uploaded file's name). Otherwise the outputs file: relative
    to the store's folder when it lies inside it (the default store sits beside the data, so moving the
    folder keeps the name), else its absolute path; for a PostgreSQL store (``store_path`` a URL) its folder
    and file name, ``demo/outputs.csv``, so that every annotator of a team names it alike. The name does not
    depend on the outputs' contents.

    Raises
    ------
    ValueError
        When neither a name nor an outputs path is given, or the name is empty.
    """
    if explicit is not None:
        if not str(explicit).strip():
            raise ValueError("dataset_name: the explicit name is empty")
        return str(explicit).strip()
    if outputs_path is None:
        raise ValueError("dataset_name: give the outputs file or an explicit name")
    path = Path(outputs_path).expanduser().resolve()
    if is_server_location(store_path):
        # A team's server store: each annotator has the data at another absolute path, so the name is the
        # outputs file with its folder (data/demo/outputs.csv -> demo/outputs.csv), the same on every machine.
        return f"{path.parent.name}/{path.name}" if path.parent.name else path.name
    if store_path is not None:
        folder = Path(store_path).expanduser().resolve().parent
        try:
            return path.relative_to(folder).as_posix()
        except ValueError:
            pass
    return path.as_posix()


def text_hash(reference: str, generation: str) -> str:
    """16-hex-digit SHA-256 of an output's reference and generation: what a human decision was made on.

    Length-prefixed, so moving text from one side to the other changes it.
    """
    reference, generation = str(reference), str(generation)
    payload = f"{len(reference)}:{reference}{len(generation)}:{generation}"
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def output_hashes(outputs: pd.DataFrame) -> dict[tuple[str, str], str]:
    """:func:`text_hash` of every output, keyed by ``(item_id, model)``."""
    for column in ("item_id", "model", "reference", "generation"):
        if column not in outputs.columns:
            raise ValueError(f"output_hashes: outputs lack the column {column!r}")
    columns = [outputs[c].astype(str).tolist() for c in ("item_id", "model", "reference", "generation")]
    return {(item, model): text_hash(ref, gen) for item, model, ref, gen in zip(*columns, strict=True)}


def default_store_path(data_dir: str | Path | None = None) -> Path | str:
    """Where the override store lives: ``$EMPATHY_STORE``, else ``<data_dir>/.empathy-overrides.sqlite``.

    Without a data folder (uploaded files) the store goes to ``.empathy-cache/`` in the working directory.
    ``$EMPATHY_STORE`` may be a ``postgresql://`` URL, returned as the string (a :class:`Path` would fold its
    ``//``); :func:`open_store` opens either.
    """
    env = os.environ.get(STORE_ENV, "").strip()
    if is_server_location(env):
        return env
    if env:
        return Path(env)
    if data_dir is None:
        return Path.cwd() / ".empathy-cache" / "overrides.sqlite"
    return Path(data_dir) / STORE_FILENAME


def validate_value(dimension: str, value: object) -> float:
    """Return ``value`` as a float after checking it against the dimension's range.

    Raises ``TypeError`` for a non-number and ``ValueError`` for NaN, infinity or a value outside
    :data:`empathy.io.DIMENSION_RANGES` (``ca`` must be exactly 0 or 1). Unknown dimensions take any finite
    number, as in :mod:`empathy.io`.
    """
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise TypeError(f"override value for {dimension!r} must be a number, got {type(value).__name__}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"override value for {dimension!r} must be finite, got {number!r}")
    if dimension in DIMENSION_RANGES:
        low, high = DIMENSION_RANGES[dimension]
        if dimension in BINARY_DIMENSIONS and number not in (0.0, 1.0):
            raise ValueError(f"override value for {dimension!r} must be 0 or 1, got {number:g}")
        if not low <= number <= high:
            raise ValueError(f"override value for {dimension!r} must be in [{low:g}, {high:g}], "
                             f"got {number:g}")
    return number


def _check_text(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, got {type(value).__name__}")
    if not value.strip():
        raise ValueError(f"{name} must not be empty")
    return value


def _utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def _optional_float(value: object) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


@dataclass(frozen=True)
class Change:
    """One requested override: the rating key, the new value and what the decision was made on.

    ``text_hash`` is :func:`text_hash` of the output the annotator read (``""``: unknown, which
    :func:`empathy.overrides.ledger_status` treats as stale); ``judge_value`` and ``judge_signature`` are the
    judge's rating it replaces (``None`` / ``""`` when the judge did not rate it).
    :func:`empathy.overrides.make_changes` fills all three from the data.
    """

    item_id: str
    model: str
    rater: str
    dimension: str
    value: float
    reason: str = ""
    text_hash: str = ""
    judge_value: float | None = None
    judge_signature: str = ""


def is_server_location(location: object) -> bool:
    """Whether a store location is a PostgreSQL URL (``postgresql://...``) rather than a SQLite file."""
    return isinstance(location, str) and location.strip().lower().startswith(SERVER_SCHEMES)


def mask_location(location: str | Path) -> str:
    """A store location fit to print: a URL's password (in the user part or a ``password=`` parameter) as ``***``.

    A SQLite path is returned as is. Used by every message, ``repr`` and label of a store.
    """
    text = str(location)
    if not is_server_location(text):
        return text
    from urllib.parse import parse_qsl, urlencode, urlsplit

    try:
        parts = urlsplit(text.strip())
        netloc = parts.netloc
        if "@" in netloc:
            credentials, host = netloc.rsplit("@", 1)
            if ":" in credentials:
                credentials = credentials.split(":", 1)[0] + ":***"
            netloc = f"{credentials}@{host}"
        query = parts.query
        if query:
            pairs = parse_qsl(query, keep_blank_values=True)
            query = urlencode([(k, "***" if k.lower() == "password" else v) for k, v in pairs], safe="*/:")
        # Built by hand: urlunsplit drops the '//' of an empty host (a unix-socket URL).
        return (f"{parts.scheme}://{netloc}{parts.path}" + (f"?{query}" if query else "")
                + (f"#{parts.fragment}" if parts.fragment else ""))
    except ValueError:  # not parseable as a URL: show the scheme only, never what might be a password
        return text.split("://", 1)[0] + "://***"


def open_store(location: str | Path, *, busy_timeout: float = BUSY_TIMEOUT_S) -> OverrideStore:
    """The override store at ``location``: a SQLite file, or a PostgreSQL server given by a ``postgresql://`` URL.

    Same as ``OverrideStore(location)``. Raises :class:`StoreError` for a damaged or unreachable store.
    """
    return OverrideStore(location, busy_timeout=busy_timeout)


class OverrideStore:
    """Overrides and audit trail, in a SQLite file or on a PostgreSQL server (safe for threads and processes).

    ``OverrideStore(location)`` opens a SQLite file, or, for a ``postgresql://`` URL, returns a
    :class:`empathy.store_postgres.PostgresOverrideStore`: one interface, two backends. Every method opens its own
    short-lived connection (the PostgreSQL backend reuses idle ones), so one instance can be shared between the
    threads of a Streamlit server and several processes can use the same store.

    Raises
    ------
    StoreError
        When the file exists but is empty, truncated, not an SQLite database, read-only, or written by a newer
        version (or the server is unreachable or holds foreign tables); nothing is written to it then.
    """

    #: Which engine holds the store (``sqlite`` or ``postgresql``).
    backend = "sqlite"

    def __new__(cls, *args: object, **kwargs: object) -> OverrideStore:
        location = args[0] if args else kwargs.get("path")
        if cls is OverrideStore and is_server_location(location):
            from empathy.store_postgres import PostgresOverrideStore

            return super().__new__(PostgresOverrideStore)
        return super().__new__(cls)

    @property
    def label(self) -> str:
        """Where the store is, fit to print (a server URL's password masked)."""
        return str(self.path)

    @property
    def short_label(self) -> str:
        """A short name of the store for a sidebar: the file name, or the server's host and database."""
        return self.path.name

    def __init__(self, path: str | Path, *, busy_timeout: float = BUSY_TIMEOUT_S):
        self.path = Path(path)
        if busy_timeout <= 0:
            raise ValueError(f"busy_timeout must be positive, got {busy_timeout!r}")
        self.busy_timeout = float(busy_timeout)
        self._check_file()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise StoreError(self.path, f"cannot create the store's folder ({error.strerror})") from None
        if not _writable(self.path.parent):
            raise StoreError(self.path, "the store's folder is read-only (SQLite needs to write its journal "
                             "there); point EMPATHY_STORE or --store to a writable place")
        self._init_lock = threading.Lock()
        with self._init_lock, self._guard():
            connection = self._connect()
            try:
                self._open_schema(connection)
            finally:
                connection.close()

    def __repr__(self) -> str:
        return f"OverrideStore({str(self.path)!r})"

    # ------------------------------------------------------------------------------------ opening safely

    def _check_file(self) -> None:
        """Refuse a file that is not a healthy, writable store before SQLite touches it."""
        if not self.path.exists():
            return
        if self.path.is_dir():
            raise StoreError(self.path, "is a folder, not an override store")
        size = self.path.stat().st_size
        if size == 0:
            raise StoreError(self.path, "is empty (0 bytes), not an override store; nothing was written. "
                             "Restore it from a backup or move it away to start a new store")
        with self.path.open("rb") as handle:
            header = handle.read(100)
        if not header.startswith(_SQLITE_HEADER):
            raise StoreError(self.path, "is not an SQLite override store (damaged or another file); nothing "
                             "was written. Restore it from a backup or move it away")
        if len(header) < 100:
            raise StoreError(self.path, f"is truncated ({size} bytes); nothing was written. Restore it from a "
                             "backup or move it away")
        shortfall = _short_of_header(self.path)
        # Another process's WAL checkpoint writes page 1 (with the new page count) before it extends the file,
        # so a shortfall seen without SQLite's locks may be a checkpoint in progress: a truncated file stays
        # short, a checkpoint finishes within milliseconds. Look again before calling the file truncated.
        for _ in range(_TRUNCATION_RECHECKS):
            if shortfall is None:
                break
            time.sleep(_TRUNCATION_RECHECK_S)
            shortfall = _short_of_header(self.path)
        if shortfall is not None:
            raise StoreError(self.path, f"is truncated ({shortfall[0]} of {shortfall[1]} bytes); nothing was "
                             "written. Restore it from a backup or move it away")
        if not _writable(self.path):
            raise StoreError(self.path, "is read-only; nothing was written. Make it writable, or point "
                             "EMPATHY_STORE or --store to a writable copy")

    @contextmanager
    def _guard(self) -> Iterator[None]:
        """Turn SQLite's errors about the file into one-line :class:`StoreError`."""
        try:
            yield
        except sqlite3.IntegrityError:
            raise
        except sqlite3.DatabaseError as error:
            message = str(error)
            if "readonly" in message or "read-only" in message:
                message = "is read-only; nothing was written (make it writable or use another store)"
            elif "malformed" in message or "not a database" in message:
                message = f"is damaged ({message}); nothing was written. Restore it from a backup or move it away"
            elif "locked" in message:
                message = (f"is locked by another process for more than {self.busy_timeout:g} s ({message}); "
                           "try again")
            else:
                message = f"cannot be used: {message}"
            raise StoreError(self.path, message) from None

    def _open_schema(self, connection: sqlite3.Connection) -> None:
        version = int(connection.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            raise StoreError(self.path, f"was written by a newer version of empathy (schema {version}, this "
                             f"one reads up to {SCHEMA_VERSION}); nothing was written")
        check = connection.execute("PRAGMA quick_check").fetchall()
        if [tuple(row) for row in check] != [("ok",)]:
            raise StoreError(self.path, f"is damaged ({'; '.join(str(r[0]) for r in check[:3])}); nothing "
                             "was written. Restore it from a backup or move it away")
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        columns = {row[1] for row in connection.execute("PRAGMA table_info(overrides)")}
        if version == SCHEMA_VERSION:
            enable_wal(connection, self.busy_timeout)
            return
        if "overrides" in tables and "role" not in columns:
            self._migrate_v1(connection)
            version = BASE_VERSION
        enable_wal(connection, self.busy_timeout)
        connection.execute("BEGIN IMMEDIATE")
        try:
            if version < BASE_VERSION:
                for statement in _split_sql(_SCHEMA):
                    connection.execute(statement)
                version = BASE_VERSION
            for statement in upgrade_statements(version, "sqlite"):
                connection.execute(statement)
            connection.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")

    def _migrate_v1(self, connection: sqlite3.Connection) -> None:
        """Copy a version 1 store into the version 2 tables (a backup of the file is kept beside it)."""
        backup = self.path.with_name(self.path.name + ".v1-backup")
        if not backup.exists():
            target = sqlite3.connect(backup)
            try:
                connection.backup(target)
            finally:
                target.close()
        enable_wal(connection, self.busy_timeout)
        connection.execute("BEGIN IMMEDIATE")
        try:
            for statement in _split_sql(_MIGRATE_V1.format(schema=_SCHEMA)):
                connection.execute(statement)
            connection.execute(f"PRAGMA user_version={BASE_VERSION}")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")

    def _connect(self) -> sqlite3.Connection:
        # isolation_level=None: we issue BEGIN IMMEDIATE ourselves so the write lock is taken up front and a
        # concurrent writer waits (busy timeout) instead of failing on lock upgrade.
        connection = sqlite3.connect(self.path, timeout=self.busy_timeout, isolation_level=None)
        connection.execute(f"PRAGMA busy_timeout={int(self.busy_timeout * 1000)}")
        connection.execute("PRAGMA synchronous=FULL")
        return connection

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._guard():
            self._check_file()
            connection = self._connect()
            try:
                connection.execute("BEGIN IMMEDIATE")
                try:
                    yield connection
                except BaseException:
                    connection.execute("ROLLBACK")
                    raise
                connection.execute("COMMIT")
            finally:
                connection.close()

    # ---------------------------------------------------------------------------------------- writing

    @staticmethod
    def _next_batch(connection: sqlite3.Connection) -> int:
        row = connection.execute("SELECT COALESCE(MAX(batch), 0) + 1 FROM audit").fetchone()
        return int(row[0])

    @staticmethod
    def _own(connection: sqlite3.Connection, dataset: str, change: Change, annotator: str,
             role: str) -> float | None:
        row = connection.execute(
            f"SELECT value FROM overrides WHERE {_ROW_WHERE}",
            (dataset, change.item_id, change.model, change.rater, change.dimension, annotator, role)).fetchone()
        return None if row is None else float(row[0])

    def _apply(self, connection: sqlite3.Connection, dataset: str, change: Change, annotator: str, role: str,
               at: str, batch: int, action: str) -> int:
        own = self._own(connection, dataset, change, annotator, role)
        # What this decision replaced on screen: the annotator's own previous value, else the latest decision
        # of anyone on this rating, else the judge's label (so a first override records the judge's value).
        old = own
        if old is None:
            row = connection.execute(
                f"SELECT value FROM overrides WHERE {_KEY_WHERE} ORDER BY updated_at DESC LIMIT 1",
                (dataset, change.item_id, change.model, change.rater, change.dimension)).fetchone()
            old = float(row[0]) if row is not None else change.judge_value
        connection.execute(
            "INSERT INTO overrides (dataset_id, item_id, model, rater, dimension, annotator, role, value,"
            " updated_at, reason, text_hash, judge_value, judge_signature) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)"
            " ON CONFLICT (dataset_id, item_id, model, rater, dimension, annotator, role) DO UPDATE SET"
            " value=excluded.value, updated_at=excluded.updated_at, reason=excluded.reason,"
            " text_hash=excluded.text_hash, judge_value=COALESCE(excluded.judge_value, overrides.judge_value),"
            " judge_signature=CASE WHEN excluded.judge_signature='' THEN overrides.judge_signature"
            " ELSE excluded.judge_signature END",
            (dataset, change.item_id, change.model, change.rater, change.dimension, annotator, role,
             change.value, at, change.reason, change.text_hash, change.judge_value, change.judge_signature))
        cursor = connection.execute(
            "INSERT INTO audit (batch, dataset_id, item_id, model, rater, dimension, annotator, role, at,"
            " old_value, new_value, reason, action, text_hash, prior) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (batch, dataset, change.item_id, change.model, change.rater, change.dimension, annotator, role, at,
             old, change.value, change.reason, action, change.text_hash, int(own is not None)))
        return int(cursor.lastrowid)

    @staticmethod
    def _validated(changes: Iterable[Change]) -> list[Change]:
        checked = []
        for change in changes:
            for name in KEY_COLUMNS:
                _check_text(name, getattr(change, name))
            for name in ("reason", "text_hash", "judge_signature"):
                if not isinstance(getattr(change, name), str):
                    raise TypeError(f"{name} must be a string, got {type(getattr(change, name)).__name__}")
            value = validate_value(change.dimension, change.value)
            checked.append(Change(change.item_id, change.model, change.rater, change.dimension, value,
                                  change.reason.strip(), change.text_hash, _optional_float(change.judge_value),
                                  change.judge_signature))
        return checked

    def set_override(self, dataset_id: str, item_id: str, model: str, rater: str, dimension: str,
                     value: float, *, annotator: str, reason: str = "", text_hash: str = "",
                     judge_value: float | None = None, judge_signature: str = "") -> int:
        """Record one override and return the batch number of the change (for undo and display).

        The value is checked against the dimension's range first (``ValueError``/``TypeError``); the change is
        committed to disk before this returns.
        """
        return self.set_overrides(dataset_id, [Change(item_id, model, rater, dimension, value, reason, text_hash,
                                                      judge_value, judge_signature)], annotator=annotator)

    def set_overrides(self, dataset_id: str, changes: Sequence[Change], *, annotator: str,
                      action: str = "set", role: str = "annotator") -> int:
        """Record several decisions of one annotator in one transaction and one undo batch; return the batch.

        Each annotator keeps their own row per rating: another annotator's decision on the same rating is
        never replaced. ``role="adjudicator"`` (action ``adjudicate``) records the resolution of a
        disagreement, see :meth:`adjudicate`.
        """
        _check_text("dataset_id", dataset_id)
        _check_text("annotator", annotator)
        if action not in ("set", "import", "adjudicate"):
            raise ValueError(f"action must be 'set', 'import' or 'adjudicate', got {action!r}")
        if role not in ROLES:
            raise ValueError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
        checked = self._validated(changes)
        if not checked:
            raise ValueError("set_overrides: no changes given")
        at = _utc_now()
        with self._write() as connection:
            batch = self._next_batch(connection)
            for change in checked:
                self._apply(connection, dataset_id, change, annotator.strip(), role, at, batch, action)
        return batch

    def adjudicate(self, dataset_id: str, changes: Sequence[Change], *, annotator: str) -> int:
        """Record an adjudicator's resolution of a disagreement (its own audit rows, action ``adjudicate``).

        Kept beside the annotators' decisions (role ``adjudicator``); the ``adjudicated`` and ``majority``
        label rules of :func:`empathy.overrides.effective_overrides` let it decide.
        """
        return self.set_overrides(dataset_id, changes, annotator=annotator, action="adjudicate", role="adjudicator")

    def confirm(self, dataset_id: str, rows: pd.DataFrame, hashes: Mapping[tuple[str, str], str], *,
                annotator: str) -> int:
        """Confirm stale decisions on the current texts: their text hash becomes the current one.

        ``rows`` are decisions (columns of :meth:`decisions`, e.g. ``ledger_status(...).stale``); ``hashes``
        the current :func:`output_hashes`. Each confirmation has an audit row (action ``confirm``, old and new
        value equal). Returns the number confirmed; rows whose output is gone are skipped.
        """
        _check_text("dataset_id", dataset_id)
        who = _check_text("annotator", annotator).strip()
        at = _utc_now()
        confirmed = 0
        with self._write() as connection:
            batch = self._next_batch(connection)
            for record in rows.to_dict(orient="records"):
                current = hashes.get((str(record["item_id"]), str(record["model"])))
                if current is None:
                    continue
                key = (dataset_id, *(str(record[c]) for c in KEY_COLUMNS), str(record["annotator"]),
                       str(record.get("role", "annotator")))
                found = connection.execute(f"SELECT value FROM overrides WHERE {_ROW_WHERE}", key).fetchone()
                if found is None:
                    continue
                connection.execute(f"UPDATE overrides SET text_hash=? WHERE {_ROW_WHERE}", (current, *key))
                connection.execute(
                    "INSERT INTO audit (batch, dataset_id, item_id, model, rater, dimension, annotator, role, at,"
                    " old_value, new_value, reason, action, text_hash, prior) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,"
                    "'confirm',?,1)",
                    (batch, *key[:5], key[5], key[6], at, found[0], found[0], f"confirmed on the new text by {who}",
                     current))
                confirmed += 1
        return confirmed

    def adopt_legacy(self, legacy_id: str, name: str, hashes: Mapping[tuple[str, str], str] | None = None) -> int:
        """Move version 1 rows keyed by ``legacy_id`` (:func:`dataset_id`) to the stable ``name``.

        Called when a data set is loaded: its legacy key-set hash equals ``legacy_id`` exactly when it has the
        same outputs as when the rows were written, so their text hashes are set from ``hashes`` (the current
        :func:`output_hashes`). Rows already under ``name`` win over a legacy row with the same key. Each
        moved row has an audit row (action ``migrate``). Returns the number of rows moved (0 costs one read).
        """
        _check_text("name", name)
        if not legacy_id or legacy_id == name:
            return 0
        waiting = self._fetch("SELECT COUNT(*) FROM overrides WHERE dataset_id=?", (legacy_id,))[0][0]
        if not waiting:
            return 0
        at = _utc_now()
        moved = 0
        with self._write() as connection:
            batch = self._next_batch(connection)
            rows = connection.execute(
                f"SELECT {', '.join(DECISION_COLUMNS)} FROM overrides WHERE dataset_id=?", (legacy_id,)).fetchall()
            for row in rows:
                record = dict(zip(DECISION_COLUMNS, row, strict=True))
                digest = record["text_hash"] or (hashes or {}).get((record["item_id"], record["model"]), "")
                key = (name, *(record[c] for c in KEY_COLUMNS), record["annotator"], record["role"])
                if connection.execute(f"SELECT 1 FROM overrides WHERE {_ROW_WHERE}", key).fetchone() is None:
                    connection.execute(
                        "INSERT INTO overrides (dataset_id, item_id, model, rater, dimension, annotator, role,"
                        " value, updated_at, reason, text_hash, judge_value, judge_signature)"
                        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                        (*key, record["value"], record["updated_at"], record["reason"], digest,
                         record["judge_value"], record["judge_signature"]))
                    moved += 1
                connection.execute(f"DELETE FROM overrides WHERE {_ROW_WHERE}", (legacy_id, *key[1:]))
                connection.execute(
                    "INSERT INTO audit (batch, dataset_id, item_id, model, rater, dimension, annotator, role, at,"
                    " old_value, new_value, reason, action, text_hash, prior) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,"
                    "'migrate',?,1)",
                    (batch, *key, at, record["value"], record["value"],
                     f"moved from the version 1 key {legacy_id}", digest))
            # The history follows the rows, so the data set's audit trail stays whole.
            connection.execute("UPDATE audit SET dataset_id=? WHERE dataset_id=?", (name, legacy_id))
        return moved

    def version(self) -> int:
        """A number that grows with every change to the store (the last audit row's id; 0 when empty).

        Every write (set, undo, import, adjudication, confirmation, migration) adds an audit row, so a reader can
        cache what it derived from the store until this number changes.
        """
        return int(self._read("SELECT COALESCE(MAX(id), 0) FROM audit", (), ["v"])["v"].iloc[0])

    def dataset_ids(self) -> list[str]:
        """The data-set names (and version 1 keys) that have decisions in this store."""
        return self._read("SELECT DISTINCT dataset_id FROM overrides ORDER BY dataset_id", (), ["id"])["id"].tolist()

    def undo_last(self, annotator: str | None = None, *, dataset_id: str | None = None) -> pd.DataFrame:
        """Undo the most recent not-yet-undone batch of changes (of ``annotator`` / ``dataset_id`` if given).

        Each decision returns to the value it had before the change (no row at all if the annotator had
        none). A decision changed again afterwards keeps that later value. Returns the undone audit rows
        (empty when there is nothing to undo); the undo itself is logged with action ``undo``.
        """
        conditions = [f"action IN ({', '.join(repr(a) for a in UNDOABLE)})", "undone_by IS NULL"]
        params: list[object] = []
        if annotator is not None:
            conditions.append("annotator = ?")
            params.append(_check_text("annotator", annotator).strip())
        if dataset_id is not None:
            conditions.append("dataset_id = ?")
            params.append(dataset_id)
        with self._write() as connection:
            row = connection.execute(
                f"SELECT MAX(batch) FROM audit WHERE {' AND '.join(conditions)}", params).fetchone()
            if row is None or row[0] is None:
                return pd.DataFrame(columns=list(AUDIT_COLUMNS))
            target = int(row[0])
            entries = connection.execute(
                f"SELECT {', '.join(AUDIT_COLUMNS)} FROM audit WHERE batch = ? AND undone_by IS NULL"
                " ORDER BY id DESC",
                (target,)).fetchall()
            undo_batch = self._next_batch(connection)
            at = _utc_now()
            for entry in entries:
                record = dict(zip(AUDIT_COLUMNS, entry, strict=True))
                key = (record["dataset_id"], *(record[c] for c in KEY_COLUMNS), record["annotator"], record["role"])
                found = connection.execute(f"SELECT value FROM overrides WHERE {_ROW_WHERE}", key).fetchone()
                current = None if found is None else float(found[0])
                if current is not None and record["new_value"] is not None and current == record["new_value"]:
                    if not record["prior"]:
                        connection.execute(f"DELETE FROM overrides WHERE {_ROW_WHERE}", key)
                        restored = None
                    else:
                        connection.execute(f"UPDATE overrides SET value=?, updated_at=? WHERE {_ROW_WHERE}",
                                           (record["old_value"], at, *key))
                        restored = record["old_value"]
                else:
                    restored = current
                who = annotator or record["annotator"]
                cursor = connection.execute(
                    "INSERT INTO audit (batch, dataset_id, item_id, model, rater, dimension, annotator, role, at,"
                    " old_value, new_value, reason, action, text_hash, prior) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,"
                    "'undo',?,?)",
                    (undo_batch, *key, at, current, restored, f"undo of change {record['id']} by {who}",
                     record["text_hash"], int(current is not None)))
                connection.execute("UPDATE audit SET undone_by=? WHERE id=?", (int(cursor.lastrowid),
                                                                                record["id"]))
        return pd.DataFrame([dict(zip(AUDIT_COLUMNS, entry, strict=True)) for entry in entries],
                            columns=list(AUDIT_COLUMNS))

    # ---------------------------------------------------------------------------------------- exhibits

    def exhibits(self, dataset_id: str) -> pd.DataFrame:
        """The data set's pinned outputs in their order: :data:`EXHIBIT_COLUMNS` (position 1, 2, ...)."""
        _check_text("dataset_id", dataset_id)
        frame = self._read(f"SELECT {', '.join(EXHIBIT_COLUMNS)} FROM exhibits WHERE dataset_id=? "
                           "ORDER BY position, item_id, model", (dataset_id,), EXHIBIT_COLUMNS)
        frame["position"] = frame["position"].astype(int)
        return frame

    def pin_exhibit(self, dataset_id: str, item_id: str, model: str, note: str = "", *, annotator: str = "") -> int:
        """Pin an output at the end of the data set's exhibit list, or change the note of a pinned one.

        Returns its position (1-based).
        """
        for name, value in (("dataset_id", dataset_id), ("item_id", item_id), ("model", model)):
            _check_text(name, value)
        for name, value in (("note", note), ("annotator", annotator)):
            if not isinstance(value, str):
                raise TypeError(f"{name} must be a string, got {type(value).__name__}")
        with self._write() as connection:
            key = (dataset_id, item_id, model)
            row = connection.execute("SELECT position FROM exhibits WHERE dataset_id=? AND item_id=? AND model=?",
                                     key).fetchone()
            if row is not None:
                connection.execute("UPDATE exhibits SET note=?, annotator=?, updated_at=? WHERE dataset_id=? AND "
                                   "item_id=? AND model=?", (note, annotator, _utc_now(), *key))
                return int(row[0])
            position = int(connection.execute("SELECT COALESCE(MAX(position), 0) + 1 FROM exhibits WHERE "
                                              "dataset_id=?", (dataset_id,)).fetchone()[0])
            connection.execute("INSERT INTO exhibits (dataset_id, item_id, model, position, note, annotator, "
                               "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                               (*key, position, note, annotator, _utc_now()))
            return position

    def unpin_exhibit(self, dataset_id: str, item_id: str, model: str) -> bool:
        """Remove an output from the exhibit list (the others keep their order); False if it was not pinned."""
        with self._write() as connection:
            cursor = connection.execute("DELETE FROM exhibits WHERE dataset_id=? AND item_id=? AND model=?",
                                        (dataset_id, item_id, model))
            removed = cursor.rowcount > 0
            self._renumber(connection, dataset_id, None)
        return removed

    def move_exhibit(self, dataset_id: str, item_id: str, model: str, offset: int) -> int:
        """Move a pinned output ``offset`` places (negative: earlier), clamped to the list; returns its position.

        Raises ``ValueError`` when the output is not pinned.
        """
        if isinstance(offset, bool) or not isinstance(offset, int):
            raise TypeError(f"offset must be an integer, got {offset!r}")
        with self._write() as connection:
            keys = [(str(r[0]), str(r[1])) for r in connection.execute(
                "SELECT item_id, model FROM exhibits WHERE dataset_id=? ORDER BY position, item_id, model",
                (dataset_id,)).fetchall()]
            if (item_id, model) not in keys:
                raise ValueError(f"({item_id}, {model}) is not an exhibit of {dataset_id}")
            index = keys.index((item_id, model))
            target = min(max(index + offset, 0), len(keys) - 1)
            keys.insert(target, keys.pop(index))
            self._renumber(connection, dataset_id, keys)
            return target + 1

    @staticmethod
    def _renumber(connection: sqlite3.Connection, dataset_id: str, keys: list[tuple[str, str]] | None) -> None:
        """Write positions 1..n in the order ``keys`` (default: the current order)."""
        if keys is None:
            keys = [(str(r[0]), str(r[1])) for r in connection.execute(
                "SELECT item_id, model FROM exhibits WHERE dataset_id=? ORDER BY position, item_id, model",
                (dataset_id,)).fetchall()]
        for position, (item, model) in enumerate(keys, start=1):
            connection.execute("UPDATE exhibits SET position=? WHERE dataset_id=? AND item_id=? AND model=?",
                               (position, dataset_id, item, model))

    # ---------------------------------------------------------------------------------------- reading

    def _fetch(self, sql: str, params: Sequence[object] = ()) -> list[tuple]:
        """The rows of one query, as the driver returns them (one short-lived connection)."""
        with self._guard():
            connection = self._connect()
            try:
                return [tuple(row) for row in connection.execute(sql, params).fetchall()]
            finally:
                connection.close()

    def _read(self, sql: str, params: Sequence[object], columns: Sequence[str]) -> pd.DataFrame:
        return pd.DataFrame(self._fetch(sql, params), columns=list(columns))

    def decisions(self, dataset_id: str | None = None) -> pd.DataFrame:
        """Every annotator's current decision (of one data set, or all with a ``dataset_id`` column).

        Columns: :data:`DECISION_COLUMNS` (plus ``dataset_id`` for all data sets), sorted by key, annotator
        and role. Two annotators deciding the same rating are two rows.
        """
        columns = list(LEDGER_COLUMNS)
        order = "item_id, model, rater, dimension, annotator, role"
        if dataset_id is None:
            frame = self._read(f"SELECT {', '.join(columns)} FROM overrides ORDER BY dataset_id, {order}", (),
                               columns)
        else:
            frame = self._read(f"SELECT {', '.join(columns)} FROM overrides WHERE dataset_id=? ORDER BY {order}",
                               (dataset_id,), columns).drop(columns=["dataset_id"])
        frame["value"] = frame["value"].astype(float)
        frame["judge_value"] = pd.to_numeric(frame["judge_value"], errors="coerce").astype(float)
        return frame

    def overrides(self, dataset_id: str | None = None, *, rule: str = "latest") -> pd.DataFrame:
        """The effective override of each rating under a label ``rule`` (one row per rating key).

        ``rule`` is one of :data:`empathy.overrides.LABEL_RULES` (default ``latest``: the most recent decision
        of anyone). Columns: those of :meth:`decisions` plus ``n_annotators``. Unresolved disagreements (under
        ``majority`` or ``adjudicated``) are left out; see :func:`empathy.overrides.effective_overrides`.
        Stale and orphaned decisions are *not* removed here: :func:`empathy.overrides.open_ledger` does that
        against the loaded outputs.
        """
        from empathy.overrides import effective_overrides

        frame = self.decisions(dataset_id)
        if dataset_id is not None or frame.empty:
            return effective_overrides(frame, rule).effective
        parts = [effective_overrides(group.drop(columns=["dataset_id"]), rule).effective.assign(dataset_id=name)
                 for name, group in frame.groupby("dataset_id", sort=True)]
        return pd.concat(parts, ignore_index=True)

    def audit(self, dataset_id: str | None = None) -> pd.DataFrame:
        """The audit trail, oldest first: every set, undo, import, adjudication, confirmation and migration."""
        columns = list(AUDIT_COLUMNS)
        where, params = ("WHERE dataset_id=?", (dataset_id,)) if dataset_id is not None else ("", ())
        frame = self._read(f"SELECT {', '.join(columns)} FROM audit {where} ORDER BY id", params, columns)
        for column in ("old_value", "new_value"):
            frame[column] = frame[column].astype(float)
        return frame

    def count(self, dataset_id: str) -> int:
        """Number of overridden ratings of a data set (a rating decided by two annotators counts once)."""
        frame = self._read("SELECT COUNT(*) FROM (SELECT DISTINCT item_id, model, rater, dimension FROM overrides"
                           " WHERE dataset_id=?) AS decided", (dataset_id,), ["n"])
        return int(frame["n"].iloc[0])

    # ---------------------------------------------------------------------------------- export / import

    def _ledger(self, dataset_id: str | None) -> pd.DataFrame:
        frame = self.decisions(dataset_id)
        if dataset_id is not None:
            frame.insert(0, "dataset_id", dataset_id)
        return frame[list(LEDGER_COLUMNS)]

    def export_jsonl(self, path: str | Path, dataset_id: str | None = None) -> int:
        """Write every decision (the ledger) as JSON lines; return the number of records."""
        frame = self._ledger(dataset_id)
        with Path(path).open("w", encoding="utf-8") as handle:
            for record in frame.to_dict(orient="records"):
                record["judge_value"] = _optional_float(record["judge_value"])
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        return len(frame)

    def export_csv(self, path: str | Path, dataset_id: str | None = None) -> int:
        """Write the ledger as CSV with formula-like text cells neutralised (see :func:`escape_cell`)."""
        frame = self._ledger(dataset_id)

        def cell(column: str, value: object) -> str:
            if column in ("value", "judge_value"):
                number = _optional_float(value)
                return "" if number is None else repr(number)
            return escape_cell(str(value))

        with Path(path).open("w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(LEDGER_COLUMNS)
            for record in frame.itertuples(index=False):
                writer.writerow([cell(column, value) for column, value in zip(LEDGER_COLUMNS, record, strict=True)])
        return len(frame)

    def import_ledger(self, path: str | Path, *, dataset_id: str | None = None, annotator: str | None = None,
                      name: str | None = None, hashes: Mapping[tuple[str, str], str] | None = None) -> int:
        """Read a ledger exported by :meth:`export_jsonl` or :meth:`export_csv` and apply it as one batch.

        ``dataset_id`` re-targets every record (import into the data set now loaded); otherwise each record's
        own ``dataset_id`` is used. ``annotator`` replaces the file's annotator names. A record without a
        text hash (a version 1 ledger) takes the one in ``hashes`` (the loaded outputs' :func:`output_hashes`)
        or stays without one, which counts as stale until confirmed. Every record is checked before anything
        is written; a bad record raises :class:`empathy.io.DataError` naming file, row and column. Returns the
        number of decisions imported.
        """
        records = read_ledger(path, name=name)
        label = name or str(path)
        per_target: dict[tuple[str, str, str], list[Change]] = {}
        for row_number, record in records:
            target = dataset_id if dataset_id is not None else str(record.get("dataset_id", ""))
            if not target:
                raise DataError(label, "empty value", row=row_number, column="dataset_id")
            who = annotator if annotator is not None else str(record.get("annotator", ""))
            if not who.strip():
                raise DataError(label, "empty value", row=row_number, column="annotator")
            role = str(record.get("role") or "annotator")
            if role not in ROLES:
                raise DataError(label, f"unknown role {role!r} (use {', '.join(ROLES)})", row=row_number,
                                column="role")
            try:
                value = validate_value(str(record["dimension"]), record["value"])
            except (TypeError, ValueError) as exc:
                raise DataError(label, str(exc), row=row_number, column="value") from None
            digest = str(record.get("text_hash") or "") or (hashes or {}).get(
                (str(record["item_id"]), str(record["model"])), "")
            change = Change(str(record["item_id"]), str(record["model"]), str(record["rater"]),
                            str(record["dimension"]), value, str(record.get("reason", "")), digest,
                            _optional_float(record.get("judge_value")), str(record.get("judge_signature") or ""))
            per_target.setdefault((target, who.strip(), role), []).append(change)
        if not per_target:
            return 0
        at = _utc_now()
        with self._write() as connection:
            batch = self._next_batch(connection)
            for (target, who, role), changes in per_target.items():
                for change in changes:
                    self._apply(connection, target, change, who, role, at, batch, "import")
        return sum(len(changes) for changes in per_target.values())


    # ------------------------------------------------------------------------------- copying a whole store

    def rows(self) -> tuple[list[tuple], list[tuple]]:
        """Every decision row (:data:`LEDGER_COLUMNS`) and audit row (:data:`AUDIT_COLUMNS`), as stored.

        The raw material of :func:`migrate_store`: ids, batches and undo links included.
        """
        decisions = self._fetch(f"SELECT {', '.join(LEDGER_COLUMNS)} FROM overrides ORDER BY dataset_id, "
                                "item_id, model, rater, dimension, annotator, role")
        audit = self._fetch(f"SELECT {', '.join(AUDIT_COLUMNS)} FROM audit ORDER BY id")
        return decisions, audit

    def exhibit_rows(self) -> list[tuple]:
        """Every pinned exhibit row (``dataset_id`` then :data:`EXHIBIT_COLUMNS`), as stored."""
        return self._fetch(f"SELECT dataset_id, {', '.join(EXHIBIT_COLUMNS)} FROM exhibits ORDER BY dataset_id, "
                           "position, item_id, model")

    def restore(self, decisions: Sequence[Sequence[object]], audit: Sequence[Sequence[object]],
                exhibits: Sequence[Sequence[object]] = ()) -> None:
        """Write the rows of :meth:`rows` and :meth:`exhibit_rows` (of another store) into this one, which must be
        empty; one transaction.

        Audit ids, batches and undo links are kept, so the copy's history, :meth:`undo_last` and
        :meth:`version` continue where the source's stopped; exhibits keep their order and notes. Raises
        :class:`StoreError` when this store already holds decisions, audit rows or exhibits (nothing is written).
        """
        with self._write() as connection:
            held = connection.execute("SELECT (SELECT COUNT(*) FROM overrides) + (SELECT COUNT(*) FROM audit) "
                                      "+ (SELECT COUNT(*) FROM exhibits)").fetchone()[0]
            if held:
                raise StoreError(self.label, f"already holds {held} decision, audit and exhibit rows; migrate into "
                                 "an empty store (nothing was written)")
            if exhibits:
                columns = ("dataset_id", *EXHIBIT_COLUMNS)
                connection.executemany(
                    f"INSERT INTO exhibits ({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)})",
                    [tuple(row) for row in exhibits])
            if decisions:
                connection.executemany(
                    f"INSERT INTO overrides ({', '.join(LEDGER_COLUMNS)}) VALUES "
                    f"({', '.join('?' for _ in LEDGER_COLUMNS)})", [tuple(row) for row in decisions])
            if audit:
                connection.executemany(
                    f"INSERT INTO audit ({', '.join(AUDIT_COLUMNS)}) VALUES "
                    f"({', '.join('?' for _ in AUDIT_COLUMNS)})", [tuple(row) for row in audit])
            self._after_restore(connection)

    def _after_restore(self, connection: sqlite3.Connection) -> None:
        """Hook after :meth:`restore` (SQLite's AUTOINCREMENT follows explicit ids by itself)."""


@dataclass(frozen=True)
class MigrationReport:
    """What :func:`migrate_store` copied: row counts, the data-set names it translated, and both locations."""

    source: str
    target: str
    decisions: int
    audit: int
    renamed: dict[str, str]
    exhibits: int = 0

    def summary(self) -> str:
        """One line for the CLI (locations with passwords masked)."""
        line = (f"migrated {self.decisions} decisions, {self.audit} audit rows and {self.exhibits} exhibits from "
                f"{self.source} to {self.target}")
        if self.renamed:
            line += "; data sets renamed: " + ", ".join(f"{old} -> {new}" for old, new in self.renamed.items())
        return line


def migrate_store(source: str | Path, target: str | Path, *, rename: Mapping[str, str] | None = None,
                  translate_names: bool = True) -> MigrationReport:
    """Copy every decision, the whole audit trail and the pinned exhibits of one store into another, empty one
    (any two backends).

    One transaction on the target: all or nothing, verified by reading the copy back. A data set is named by its
    outputs file *relative to the store* (:func:`dataset_name`), so with ``translate_names`` a SQLite source's
    name that is a data file (relative to the source's folder, or absolute) is renamed to that file's name in
    the target (on a server: ``<folder>/<file>``, the same on every annotator's machine). ``rename`` maps
    further names explicitly (and wins). Raises :class:`StoreError` for an unusable store or a target that is
    not empty, :class:`ValueError` for a source equal to the target.
    """
    if not is_server_location(source) and not is_server_location(target):
        if Path(source).expanduser().resolve() == Path(target).expanduser().resolve():
            raise ValueError(f"migrate: the source and the target are the same store ({source})")
    elif str(source).strip() == str(target).strip():
        raise ValueError(f"migrate: the source and the target are the same store ({mask_location(source)})")
    if not is_server_location(source) and not Path(source).exists():
        raise StoreError(str(source), "no such store (nothing was written)")
    origin = open_store(source)
    decisions, audit = origin.rows()
    exhibits = origin.exhibit_rows()
    names = sorted({str(row[0]) for row in decisions} | {str(row[2]) for row in audit}
                   | {str(row[0]) for row in exhibits})
    mapping: dict[str, str] = {}
    for name in names:
        new = name
        if translate_names and origin.backend == "sqlite":
            candidate = Path(name)
            if not candidate.is_absolute():
                candidate = origin.path.expanduser().resolve().parent / candidate
            if not name.startswith(("upload:",)) and candidate.is_file():
                new = dataset_name(candidate, store_path=target)
        new = (rename or {}).get(name, new)
        if new != name:
            mapping[name] = new
    decisions = [(mapping.get(str(row[0]), row[0]), *row[1:]) for row in decisions]
    audit = [(*row[:2], mapping.get(str(row[2]), row[2]), *row[3:]) for row in audit]
    exhibits = [(mapping.get(str(row[0]), row[0]), *row[1:]) for row in exhibits]
    copy = open_store(target)
    copy.restore(decisions, audit, exhibits)
    copied_decisions, copied_audit = copy.rows()
    copied_exhibits = copy.exhibit_rows()
    if (len(copied_decisions), len(copied_audit), len(copied_exhibits)) != (len(decisions), len(audit),
                                                                              len(exhibits)):
        raise StoreError(copy.label, f"the copy holds {len(copied_decisions)} decisions, {len(copied_audit)} "
                         f"audit rows and {len(copied_exhibits)} exhibits, not {len(decisions)}, {len(audit)} and "
                         f"{len(exhibits)}")
    return MigrationReport(origin.label, copy.label, len(decisions), len(audit), mapping, len(exhibits))


#: How often and how long :meth:`OverrideStore._check_file` looks again at a file shorter than its header says.
_TRUNCATION_RECHECKS = 10
_TRUNCATION_RECHECK_S = 0.05


def _short_of_header(path: Path) -> tuple[int, int] | None:
    """``(size, expected)`` when the file is shorter than its SQLite header's page count says, else ``None``."""
    try:
        with path.open("rb") as handle:
            header = handle.read(100)
        size = path.stat().st_size
    except OSError:
        return None
    if len(header) < 100:
        return None
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    # The header's page count is valid when its "version valid for" equals the change counter.
    if header[24:28] == header[92:96] and pages and size < pages * page_size:
        return size, pages * page_size
    return None


def _writable(path: Path) -> bool:
    """Whether ``path`` can be written, judged by its mode bits too (``os.access`` says yes to root)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return os.access(path, os.W_OK) and bool(mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def _split_sql(script: str) -> list[str]:
    """The statements of a script (ours: no ``;`` inside strings), to run them inside one transaction."""
    return [statement.strip() for statement in script.split(";") if statement.strip()]


def upgrade_statements(version: int, backend: str) -> list[str]:
    """The statements that bring a ``backend`` store from schema ``version`` to :data:`SCHEMA_VERSION`.

    Raises :class:`ValueError` when a step is missing (a bug: :data:`SCHEMA_VERSION` raised without its step).
    """
    statements: list[str] = []
    for step in range(version, SCHEMA_VERSION):
        scripts = SCHEMA_UPGRADES.get(step)
        if scripts is None or backend not in scripts:
            raise ValueError(f"no {backend} upgrade of the store schema from version {step} to {step + 1}")
        statements.extend(_split_sql(scripts[backend]))
    return statements


#: Kept under the store's own names: the ledger CSV was the first spreadsheet-safe export.
escape_cell = spreadsheet_cell
unescape_cell = unspreadsheet_cell


def read_ledger(path: str | Path, *, name: str | None = None) -> list[tuple[int, dict[str, object]]]:  # noqa: C901 - one branch per file format and per malformed-row case, each naming the file and row
    """Read a JSONL or CSV ledger into ``(file row, record)`` pairs, unescaping CSV cells.

    Raises :class:`empathy.io.DataError` for an unreadable file, a missing column or an empty key cell.
    """
    path = Path(path)
    label = name or str(path)
    suffix = Path(name).suffix.lower() if name else path.suffix.lower()
    if not path.exists():
        raise DataError(label, "file not found")
    records: list[tuple[int, dict[str, object]]] = []
    try:
        if suffix in (".jsonl", ".json"):
            records.extend(iter_jsonl(path, label))
        elif suffix == ".csv":
            with path.open(encoding="utf-8", newline="") as handle:
                reader = csv.DictReader(handle)
                for line_number, record in enumerate(reader, start=2):
                    records.append((line_number, {key: unescape_cell(value or "")
                                                  for key, value in record.items() if key is not None}))
                header = reader.fieldnames or []
            missing = [c for c in KEY_COLUMNS + ("value",) if c not in header]
            if missing:
                raise DataError(label, f"missing required column (have: {', '.join(header)})",
                                column=missing[0])
        else:
            raise DataError(label, f"unsupported ledger type '{suffix or '(none)'}'; use .jsonl or .csv")
    except UnicodeDecodeError as exc:
        raise DataError(label, f"not UTF-8 text (byte {exc.start})") from None
    cleaned = []
    for row_number, record in records:
        out: dict[str, object] = {}
        for column in KEY_COLUMNS + ("value",):
            if column not in record:
                raise DataError(label, "missing required column", row=row_number, column=column)
        for column in KEY_COLUMNS:
            cell = record[column]
            if cell is None or (isinstance(cell, float) and math.isnan(cell)) or not str(cell).strip():
                raise DataError(label, "empty value", row=row_number, column=column)
            out[column] = str(cell)
        raw = record["value"]
        if isinstance(raw, str):
            try:
                raw = float(raw.strip())
            except ValueError:
                raise DataError(label, f"not a number: {raw[:40]!r}", row=row_number,
                                column="value") from None
        if raw is None:
            raise DataError(label, "empty value", row=row_number, column="value")
        out["value"] = raw
        for column in ("dataset_id", "annotator", "reason", "updated_at", "role", "text_hash", "judge_signature"):
            cell = record.get(column, "")
            out[column] = "" if cell is None or (isinstance(cell, float) and math.isnan(cell)) else str(cell)
        out["judge_value"] = _optional_float(record.get("judge_value"))
        cleaned.append((row_number, out))
    return cleaned


def apply_overrides(ratings: pd.DataFrame, overrides: pd.DataFrame | None) -> pd.DataFrame:
    """Effective ratings: each rating replaced by its override where one exists.

    Returns a copy of ``ratings`` with a boolean column ``overridden``. An override of a rating absent from
    ``ratings`` (a judge that never rated that output) is added as a new row, so a human can fill a gap.
    """
    for column in (*KEY_COLUMNS, "value"):
        if column not in ratings.columns:
            raise ValueError(f"apply_overrides: ratings lack the column {column!r}")
    out = ratings.copy()
    out["overridden"] = False
    if overrides is None or len(overrides) == 0:
        return out
    for column in (*KEY_COLUMNS, "value"):
        if column not in overrides.columns:
            raise ValueError(f"apply_overrides: overrides lack the column {column!r}")
    keys = list(KEY_COLUMNS)
    table = overrides[[*keys, "value"]].drop_duplicates(keys, keep="last")
    index = pd.MultiIndex.from_frame(out[keys])
    override_index = pd.MultiIndex.from_frame(table[keys])
    positions = override_index.get_indexer(index)
    hit = positions >= 0
    if hit.any():
        values = out["value"].to_numpy(dtype=float, copy=True)
        values[hit] = table["value"].to_numpy(dtype=float)[positions[hit]]
        out["value"] = values
        out["overridden"] = hit
    unmatched = ~override_index.isin(index)
    if unmatched.any():
        extra = table[unmatched].copy()
        for column in out.columns:
            if column not in extra.columns:
                extra[column] = "" if out[column].dtype == object else np.nan
        extra["overridden"] = True
        out = pd.concat([out, extra[out.columns]], ignore_index=True)
    return out


def human_ratings(overrides: pd.DataFrame, *, rater: str = "human") -> pd.DataFrame:
    """The human verdicts implied by the overrides, as long-form ratings of one rater named ``rater``.

    For each ``(item_id, model, dimension)`` the most recent override (by ``updated_at``) wins, whichever
    judge's rating it replaced. Used to compare human labels with each judge's own labels.
    """
    columns = ["item_id", "model", "rater", "dimension", "value", "rater_kind", "reason", "signature"]
    if overrides is None or len(overrides) == 0:
        return pd.DataFrame({c: pd.Series(dtype=float if c == "value" else str) for c in columns})
    frame = overrides.copy()
    if "updated_at" in frame.columns:
        frame = frame.sort_values("updated_at", kind="stable")
    frame = frame.drop_duplicates(["item_id", "model", "dimension"], keep="last")
    out = pd.DataFrame({
        "item_id": frame["item_id"].astype(str), "model": frame["model"].astype(str), "rater": rater,
        "dimension": frame["dimension"].astype(str), "value": frame["value"].astype(float),
        "rater_kind": "human", "reason": "", "signature": "",
    })
    return out.sort_values(["item_id", "model", "dimension"]).reset_index(drop=True)
