"""The override store on SQLite (the embedded default), and the queries both backends run.

An *override* is one annotator's decision on one rating, keyed by ``(dataset_id, item_id, model, rater,
dimension)`` plus the annotator and their role (``annotator`` or ``adjudicator``): two people deciding the
same rating keep two rows, never last-writer-wins. Which of them a metric uses is the *label rule* the
researcher picks (:mod:`empathy.labels.rules`); which of them still apply to the loaded texts is the ledger's
business (:mod:`empathy.labels.ledger`). The store only keeps them, durably, with an audit trail
(:mod:`empathy.labels.schema`).

:class:`OverrideStore` is a file in WAL mode; every change runs in its own ``BEGIN IMMEDIATE`` transaction with a
busy timeout, so two app sessions (or two processes) writing at the same time serialise instead of losing a
write, and a change is on disk before :meth:`OverrideStore.set_overrides` returns. That holds because every
connection follows the file discipline of :mod:`empathy.labels.sqlite_files` (no Python I/O on a store file while
the process may hold a connection to it; writers open ``mode=rw``, commands that only read ``mode=ro``; a foreign
write-ahead log or another application's SQLite file refused untouched). A damaged store (empty,
truncated, not SQLite, read-only, from a newer version) raises :class:`empathy.labels.locations.StoreError`
and is never overwritten.

The PostgreSQL backend (:class:`empathy.labels.postgres.PostgresOverrideStore`) subclasses it and replaces only
connecting, the schema and the error mapping: every query here is portable SQL with ``?`` placeholders, so
the two backends cannot drift apart. :func:`empathy.labels.backends.open_store` picks the backend by location.
Import, export, migration and the exhibit list work on any store through :meth:`OverrideStore.transaction`
and :meth:`OverrideStore.fetch` (:mod:`empathy.labels.transfer`, :mod:`empathy.labels.exhibit_list`).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import weakref
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from empathy.labels.locations import StoreError, is_server_location
from empathy.labels.records import (
    AuditMark,
    Change,
    check_audit_mark,
    check_text,
    optional_float,
    utc_now,
    validate_value,
)
from empathy.labels.schema import (
    AUDIT_COLUMNS,
    AUDIT_MARK_COLUMNS,
    KEY_COLUMNS,
    ORDER_COLUMN,
    ROLES,
    SCHEMA_VERSION,
    STORED_DECISION_COLUMNS,
    UNDOABLE,
)
from empathy.labels.sqlite_files import (
    check_is_store,
    check_store_file,
    connect_store_file,
    read_only_uri,
    writable,
    writing_uri,
)
from empathy.labels.sqlite_schema import (
    check_readable_schema,
    create_store_file,
    open_sqlite_schema,
    remove_copy,
    upgraded_copy,
)

if TYPE_CHECKING:  # the roles (and their TOML reader) load where a store is given some, not with every store
    from empathy.labels.roles import Roles

#: Seconds a writer waits for another writer's transaction before giving up (one-line ``StoreError``).
BUSY_TIMEOUT_S = 30.0
#: Actions a batch of decisions may be written under (see :meth:`OverrideStore.write_batch`).
BATCH_ACTIONS: tuple[str, ...] = ("set", "import", "adjudicate")
_KEY_WHERE = "dataset_id=? AND item_id=? AND model=? AND rater=? AND dimension=?"
_ROW_WHERE = f"{_KEY_WHERE} AND annotator=? AND role=?"
_AUDIT_INSERT = ("INSERT INTO audit (batch, dataset_id, item_id, model, rater, dimension, annotator, role, at,"
                 " old_value, new_value, reason, action, text_hash, prior, seq) VALUES ")
# A change that sets a value also records its audit mark (an audit decision's design and position, or none).
_MARKED_INSERT = ("INSERT INTO audit (batch, dataset_id, item_id, model, rater, dimension, annotator, role, at,"
                  " old_value, new_value, reason, action, text_hash, prior, seq, audit_design, audit_position) VALUES ")
#: Actions whose audit rows set a decision's value (and so its audit mark).
_SETTING_ACTIONS = "('set', 'import', 'adjudicate', 'undo', 'migrate')"
#: ``read_only`` of :class:`OverrideStore`: open for writing (a read-only file is an error), for reading only, or
#: for writing when the file and its folder can be written and for reading otherwise.
READ_WRITE, READ_ONLY, AUTO = False, True, None


class OverrideStore:
    """Overrides and audit trail in a SQLite file (safe for threads and processes).

    The interface of every backend. Every method opens its own short-lived connection, so one instance can be
    shared between the threads of a Streamlit server and several processes can use the same store. A
    ``postgresql://`` location is refused here (``ValueError``): open any location with
    :func:`empathy.labels.backends.open_store`.

    ``read_only``: ``False`` (the default) opens for writing and refuses a file or folder that cannot be written;
    ``True`` opens for reading only (SQLite's ``mode=ro``: nothing is ever written, not even a schema upgrade);
    ``None`` opens for writing when the file and its folder can be written and for reading otherwise (what the
    command line's reading commands use, so an archived ledger can be re-measured). A store opened for reading
    refuses every write with one line saying so (:class:`StoreError`). An older schema opened for reading is read
    from an upgraded private copy made at open (the file itself is not touched). ``roles``
    (:class:`empathy.labels.roles.Roles`): when given, every write is checked against them, the annotator of
    the write being the identity (:class:`empathy.labels.roles.AccessDenied`, nothing written).

    A new store file is created with mode 0600 (owner only); SQLite gives its ``-wal`` and ``-shm`` files the
    same mode.

    Raises
    ------
    StoreError
        When the file exists but is empty, truncated, not an SQLite database, read-only (unless opened for
        reading), or written by a newer version; nothing is written to it then.
    """

    #: Which engine holds the store (``sqlite`` or ``postgresql``).
    backend = "sqlite"

    def __init__(self, path: str | Path, *, busy_timeout: float = BUSY_TIMEOUT_S, read_only: bool | None = False,
                 roles: Roles | None = None):
        if is_server_location(path):
            raise ValueError("OverrideStore opens SQLite files; open a postgresql:// store with "
                             "empathy.labels.backends.open_store")
        self.path = Path(path)
        if busy_timeout <= 0:
            raise ValueError(f"busy_timeout must be positive, got {busy_timeout!r}")
        self.busy_timeout = float(busy_timeout)
        self.roles = roles
        self._uri: str | None = None
        self._snapshot: Path | None = None
        self.read_only = self._choose_mode(read_only)
        self._check_file()
        self._init_lock = threading.Lock()
        if self.read_only:
            self._open_for_reading()
            return
        try:
            # a folder made here is the owner's only (the uploads' store creates the uploads folder)
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as error:
            raise StoreError(self.path, f"cannot create the store's folder ({error.strerror})") from None
        if not writable(self.path.parent):
            raise StoreError(self.path, "the store's folder is read-only (SQLite needs to write its journal "
                             "there); point EMPATHY_STORE or --store to a writable place")
        with self._init_lock, self._guard():
            if not self.path.exists():
                create_store_file(self.path, self.busy_timeout)
            else:
                self._check_is_store()
            connection = self._connect()
            try:
                open_sqlite_schema(connection, self.path, self.busy_timeout)
            finally:
                connection.close()

    def _choose_mode(self, read_only: bool | None) -> bool:
        """Whether to open for reading only (see the class docstring); ``None`` decides by the file and folder."""
        if read_only not in (READ_WRITE, READ_ONLY, AUTO):
            raise TypeError(f"read_only must be True, False or None, got {read_only!r}")
        if read_only is AUTO:
            return self.path.exists() and not (writable(self.path) and writable(self.path.parent))
        return bool(read_only)

    def _open_for_reading(self) -> None:
        """Open an existing store with SQLite's ``mode=ro`` (an older schema: an upgraded private copy)."""
        if not self.path.exists():
            raise StoreError(self.path, "no such store (opened for reading; nothing was created)")
        self._uri = read_only_uri(self.path)
        with self._guard():
            connection = self._connect()
            try:
                version = check_readable_schema(connection, self.path)
                if version == SCHEMA_VERSION:
                    return
                copy = upgraded_copy(connection, self.busy_timeout)
            finally:
                connection.close()
        self._uri = None
        self._snapshot = copy
        weakref.finalize(self, remove_copy, copy)

    def __repr__(self) -> str:
        return f"OverrideStore({str(self.path)!r})"

    @property
    def label(self) -> str:
        """Where the store is, fit to print (a server URL's password masked)."""
        return str(self.path)

    @property
    def short_label(self) -> str:
        """A short name of the store for a sidebar: the file name, or the server's host and database."""
        return self.path.name

    # ------------------------------------------------------------------------------------ connections

    def _check_file(self) -> None:
        """Refuse a file that is not a healthy store (or not writable, unless opened for reading) before SQLite
        touches it."""
        check_store_file(self.path, writable_file=not self.read_only)

    def _check_is_store(self) -> None:
        """Refuse another application's SQLite file, read through a read-only connection (which never writes the
        file, not even a checkpoint of a write-ahead log SQLite reads beside it)."""
        probe = connect_store_file(read_only_uri(self.path), self.path, timeout=self.busy_timeout, uri=True)
        try:
            check_is_store(probe, self.path)
        finally:
            probe.close()

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

    def _connect(self, *, check_same_thread: bool = True) -> sqlite3.Connection:
        # isolation_level=None: we issue BEGIN IMMEDIATE ourselves so the write lock is taken up front and a
        # concurrent writer waits (busy timeout) instead of failing on lock upgrade.
        if self._snapshot is not None:
            connection = connect_store_file(self._snapshot, self._snapshot, timeout=self.busy_timeout,
                                            check_same_thread=check_same_thread)
        else:  # mode=rw for writing: a store that vanished is an error, never a new empty file
            connection = connect_store_file(self._uri or writing_uri(self.path), self.path,
                                            timeout=self.busy_timeout, uri=True, check_same_thread=check_same_thread)
        connection.execute(f"PRAGMA busy_timeout={int(self.busy_timeout * 1000)}")
        connection.execute("PRAGMA synchronous=FULL")
        return connection

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (``BEGIN IMMEDIATE``; on PostgreSQL it holds the advisory write lock).

        Yields a connection with ``execute``/``executemany`` taking ``?`` placeholders; committed when the block
        ends, rolled back when it raises. Writes of other modules (import, restore, exhibits) go through here. A
        store opened for reading raises :class:`StoreError` saying so (nothing written).
        """
        self.refuse_if_read_only()
        with self._guard():
            if not self.path.exists():
                raise StoreError(self.path, "no longer exists (moved or deleted); nothing was written. Restore it, "
                                 "or open the store again to start a new one")
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

    def fetch(self, sql: str, params: Sequence[object] = ()) -> list[tuple]:
        """The rows of one query (``?`` placeholders), as the driver returns them.

        Read on this thread's reading connection to the file (:meth:`_reading_connection`): a page reads the
        store's version ten times and more in every run, and a new connection costs more than the query."""
        with self._query(sql, params) as cursor:
            return [tuple(row) for row in cursor.fetchall()]

    @contextmanager
    def _query(self, sql: str, params: Sequence[object]) -> Iterator[Any]:
        """The cursor of one query on this thread's reading connection (:meth:`_reading_connection`), errors as
        :meth:`_guard` reports them; a connection not kept is closed after, a kept one that failed is dropped."""
        with self._guard():
            connection, kept = self._reading_connection()
            try:
                yield connection.execute(sql, params)
            except sqlite3.DatabaseError:
                if kept:  # the next read opens the file again, as a new reader would
                    _READERS.stores.pop(self, None)
                raise
            finally:
                if not kept:
                    connection.close()

    def _reading_connection(self) -> tuple[sqlite3.Connection, bool]:
        """This thread's connection for reading the store, and whether it is kept (else :meth:`_query` closes it).

        Kept while the file is the same file, unchanged (device, inode, size and modification time): a store
        replaced by another file (a restore, a move), gone, or written other than through its write-ahead log (a
        checkpoint, or damage in place, which a reader in WAL mode would not see from its cache) is opened again,
        so a read never answers from a file that is no longer the store, and damage is reported as a new
        connection reports it. Commits go to the write-ahead log: in autocommit mode each query is its own read
        transaction and sees every commit before it, of any connection or process, as a new connection would. One
        per thread: Python's connections are not to be shared between threads (a Streamlit run is a thread)."""
        target = self._snapshot or self._uri or self.path
        identity = _file_identity(self._snapshot or self.path)
        held = getattr(_READERS, "stores", None)
        if held is None:
            held = _READERS.stores = weakref.WeakKeyDictionary()
        reader = held.get(self)
        if reader is not None and reader.identity == identity and reader.target == target:
            return reader.connection, True
        held.pop(self, None)
        if identity is None:  # no file to hold on to: a connection for this read only (its error, as before)
            return self._connect(), False
        # closed by whichever thread drops it (a thread's end, the store's): used by this thread only
        connection = self._connect(check_same_thread=False)
        held[self] = _Reader(identity, target, connection)
        return connection, True

    def _read(self, sql: str, params: Sequence[object], columns: Sequence[str]) -> pd.DataFrame:
        """The rows of one query as a frame, typed as ``pd.DataFrame(rows)`` would type them.

        Read in chunks of :data:`READ_CHUNK_ROWS` rows straight into Arrow columns: 30,000 decision rows held as
        Python tuples for the whole read raised the process's peak by 39 MiB (by 13 MiB in chunks), for a frame
        of 6 MiB. A column Arrow cannot type as pandas would (text among numbers, bytes) is read again the plain
        way, so the frame is the same either way."""
        with self._query(sql, params) as cursor:
            frame = _frame_in_chunks(cursor, list(columns), READ_CHUNK_ROWS)
        return pd.DataFrame(self.fetch(sql, params), columns=list(columns)) if frame is None else frame

    def after_restore(self, connection: sqlite3.Connection) -> None:
        """Hook after rows with their own ids were copied in (SQLite's AUTOINCREMENT follows them by itself)."""

    def refuse_if_read_only(self) -> None:
        """Raise :class:`StoreError` (one line) when the store was opened for reading only."""
        if self.read_only:
            raise StoreError(self.label, "is read-only (opened for reading: the file or its folder cannot be "
                             "written, or read-only was asked for); nothing was written")

    def require(self, identity: str, action: str) -> None:
        """Check ``identity`` may do ``action`` under the store's roles (nothing to check without roles).

        Raises :class:`empathy.labels.roles.AccessDenied` (one line). Writes of other modules (skips,
        assignments) call it before their transaction.
        """
        if self.roles is not None:
            self.roles.require(identity, action)

    # ---------------------------------------------------------------------------------------- writing

    def write_batch(self, groups: Mapping[tuple[str, str, str], Sequence[Change]]
                    | Sequence[tuple[tuple[str, str, str], Change]], *, action: str, check_audit: bool = True) -> int:
        """Record decisions of one or more ``(dataset_id, annotator, role)`` in one transaction and one undo
        batch; return the batch number.

        ``groups`` maps each ``(dataset_id, annotator, role)`` to its changes, or is a sequence of
        ``((dataset_id, annotator, role), change)`` pairs; the changes take the store's commit order in the
        order given (an imported file's row order). Each annotator keeps their own row per rating: another
        annotator's decision on the same rating is never replaced. Values are checked against their dimension's
        range first, and with roles each annotator's right to decide (or adjudicate); the changes' other fields
        are written as given (:meth:`set_overrides` cleans a page's input;
        :func:`empathy.labels.transfer.import_ledger` reads a file's). A change marked as an audit decision
        (``audit_design``, ``audit_position``) is checked, in the same transaction, against the stored design with
        ``check_audit``: the design must be stored for the data set, audit the change's dimension and hold the
        change's output at that position (``ValueError`` naming what differs; nothing is written). An imported
        ledger is written without that check (its designs may not be in this store); the estimators read only
        marks that match a design.
        """
        if action not in BATCH_ACTIONS:
            raise ValueError(f"action must be 'set', 'import' or 'adjudicate', got {action!r}")
        pairs = ([(key, change) for key, changes in groups.items() for change in changes]
                 if isinstance(groups, Mapping) else list(groups))
        for (dataset, annotator, role), change in pairs:
            check_text("dataset_id", dataset)
            check_text("annotator", annotator)
            if role not in ROLES:
                raise ValueError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
            validate_value(change.dimension, change.value)
            check_audit_mark(change.audit_design, change.audit_position)
        for annotator, role in dict.fromkeys((annotator, role) for (_, annotator, role), _ in pairs):
            self.require(annotator, "adjudicate" if role == "adjudicator" else "decide")
        at = utc_now()
        with self.transaction() as connection:
            if check_audit:
                by_dataset: dict[str, list[Change]] = {}
                for (dataset, _, _), change in pairs:
                    by_dataset.setdefault(dataset, []).append(change)
                for dataset, changes in by_dataset.items():
                    _check_marks(connection, dataset, changes)
            batch = _next_batch(connection)
            seq = next_seq(connection)
            for offset, ((dataset, annotator, role), change) in enumerate(pairs):
                _record(connection, dataset, change, annotator.strip(), role, at, batch, action, seq + offset)
        return batch

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
                      action: str = "set", role: str = "annotator", audit: AuditMark | None = None) -> int:
        """Record several decisions of one annotator in one transaction and one undo batch; return the batch.

        Each annotator keeps their own row per rating: another annotator's decision on the same rating is
        never replaced. ``role="adjudicator"`` (action ``adjudicate``) records the resolution of a
        disagreement, see :meth:`adjudicate`.

        ``audit`` marks the changes as an audit decision: made on the drawn output at ``audit.position`` of the
        stored design ``audit.design`` while deciding in audit order
        (:func:`empathy.labels.audits.audit_mark` builds it). Every change must then be on that output and the
        design's dimension (checked against the stored design in the write's transaction: ``ValueError``,
        nothing written). Leave it ``None`` for decisions made from any other queue: those never feed the
        audit's estimators, and they clear the mark of the annotator's earlier decision on the same rating.
        """
        check_text("dataset_id", dataset_id)
        check_text("annotator", annotator)
        if action not in BATCH_ACTIONS:
            raise ValueError(f"action must be 'set', 'import' or 'adjudicate', got {action!r}")
        if role not in ROLES:
            raise ValueError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
        if audit is not None and not isinstance(audit, AuditMark):
            raise TypeError(f"audit must be an AuditMark or None, got {type(audit).__name__}")
        checked = _validated(changes)
        if not checked:
            raise ValueError("set_overrides: no changes given")
        if audit is not None:
            checked = [replace(change, audit_design=audit.design, audit_position=int(audit.position))
                       for change in checked]
        return self.write_batch({(dataset_id, annotator, role): checked}, action=action)

    def adjudicate(self, dataset_id: str, changes: Sequence[Change], *, annotator: str) -> int:
        """Record an adjudicator's resolution of a disagreement (its own audit rows, action ``adjudicate``).

        Kept beside the annotators' decisions (role ``adjudicator``); the ``adjudicated`` and ``majority``
        label rules of :func:`empathy.labels.rules.effective_overrides` let it decide.
        """
        return self.set_overrides(dataset_id, changes, annotator=annotator, action="adjudicate", role="adjudicator")

    def confirm(self, dataset_id: str, rows: pd.DataFrame, hashes: Mapping[tuple[str, str], str], *,
                annotator: str) -> int:
        """Confirm stale decisions on the current texts: their text hash becomes the current one.

        ``rows`` are decisions (columns of :meth:`decisions`, e.g. ``ledger_status(...).stale``); ``hashes``
        the current :func:`empathy.labels.records.output_hashes`. Each confirmation has an audit row (action
        ``confirm``, old and new value equal). Returns the number confirmed; rows whose output is gone are
        skipped.
        """
        check_text("dataset_id", dataset_id)
        who = check_text("annotator", annotator).strip()
        self.require(who, "decide")
        at = utc_now()
        confirmed = 0
        with self.transaction() as connection:
            batch = _next_batch(connection)
            seq = next_seq(connection)
            for record in rows.to_dict(orient="records"):
                current = hashes.get((str(record["item_id"]), str(record["model"])))
                if current is None:
                    continue
                key = (dataset_id, *(str(record[c]) for c in KEY_COLUMNS), str(record["annotator"]),
                       str(record.get("role", "annotator")))
                found = connection.execute(f"SELECT value FROM overrides WHERE {_ROW_WHERE}", key).fetchone()
                if found is None:
                    continue
                # the decision keeps its place in the commit order: confirming is not deciding again
                connection.execute(f"UPDATE overrides SET text_hash=? WHERE {_ROW_WHERE}", (current, *key))
                connection.execute(
                    _AUDIT_INSERT + "(?,?,?,?,?,?,?,?,?,?,?,?,'confirm',?,1,?)",
                    (batch, *key[:5], key[5], key[6], at, found[0], found[0], f"confirmed on the new text by {who}",
                     current, seq))
                seq += 1
                confirmed += 1
        return confirmed

    def adopt_legacy(self, legacy_id: str, name: str, hashes: Mapping[tuple[str, str], str] | None = None) -> int:
        """Move version 1 rows keyed by ``legacy_id`` (:func:`empathy.labels.records.dataset_id`) to ``name``.

        Called when a data set is loaded: its legacy key-set hash equals ``legacy_id`` exactly when it has the
        same outputs as when the rows were written, so their text hashes are set from ``hashes`` (the current
        :func:`empathy.labels.records.output_hashes`). Rows already under ``name`` win over a legacy row with
        the same key. Each moved row has an audit row (action ``migrate``). Returns the number of rows moved
        (0 costs one read).
        """
        check_text("name", name)
        if not legacy_id or legacy_id == name:
            return 0
        waiting = self.fetch("SELECT COUNT(*) FROM overrides WHERE dataset_id=?", (legacy_id,))[0][0]
        if not waiting:
            return 0
        at = utc_now()
        moved = 0
        with self.transaction() as connection:
            batch = _next_batch(connection)
            seq = next_seq(connection)
            rows = connection.execute(f"SELECT {', '.join(STORED_DECISION_COLUMNS)} FROM overrides WHERE dataset_id=?",
                                      (legacy_id,)).fetchall()
            for row in rows:
                record = dict(zip(STORED_DECISION_COLUMNS, row, strict=True))
                digest = record["text_hash"] or (hashes or {}).get((record["item_id"], record["model"]), "")
                key = (name, *(record[c] for c in KEY_COLUMNS), record["annotator"], record["role"])
                if connection.execute(f"SELECT 1 FROM overrides WHERE {_ROW_WHERE}", key).fetchone() is None:
                    # a moved decision keeps its place in the commit order
                    connection.execute(
                        "INSERT INTO overrides (dataset_id, item_id, model, rater, dimension, annotator, role,"
                        " value, updated_at, reason, text_hash, judge_value, judge_signature, seq)"
                        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                        (*key, record["value"], record["updated_at"], record["reason"], digest,
                         record["judge_value"], record["judge_signature"], record[ORDER_COLUMN]))
                    moved += 1
                connection.execute(f"DELETE FROM overrides WHERE {_ROW_WHERE}", (legacy_id, *key[1:]))
                connection.execute(
                    _AUDIT_INSERT + "(?,?,?,?,?,?,?,?,?,?,?,?,'migrate',?,1,?)",
                    (batch, *key, at, record["value"], record["value"],
                     f"moved from the version 1 key {legacy_id}", digest, seq))
                seq += 1
            # The history follows the rows, so the data set's audit trail stays whole.
            connection.execute("UPDATE audit SET dataset_id=? WHERE dataset_id=?", (name, legacy_id))
        return moved

    def undo_last(self, annotator: str | None = None, *, dataset_id: str | None = None) -> pd.DataFrame:
        """Undo the most recent not-yet-undone batch of changes (of ``annotator`` / ``dataset_id`` if given).

        "Most recent" is the store's commit order (``seq``), never a writer's clock. Each decision returns to
        the value it had before the change (no row at all if the annotator had none); a value put back takes the
        undo's place in the commit order. A decision changed again afterwards keeps that later value. Returns
        the undone audit rows (empty when there is nothing to undo); the undo itself is logged with action
        ``undo``. With roles, ``annotator`` is required (whose change to undo) and must be allowed to decide, and
        to adjudicate when the batch is an adjudication.
        """
        conditions = [f"action IN ({', '.join(repr(a) for a in UNDOABLE)})", "undone_by IS NULL"]
        params: list[object] = []
        if annotator is not None:
            conditions.append("annotator = ?")
            params.append(check_text("annotator", annotator).strip())
        if self.roles is not None:
            self.require(annotator or "", "decide")
        if dataset_id is not None:
            conditions.append("dataset_id = ?")
            params.append(dataset_id)
        with self.transaction() as connection:
            row = connection.execute(
                f"SELECT batch, action FROM audit WHERE {' AND '.join(conditions)} ORDER BY seq DESC LIMIT 1",
                params).fetchone()
            if row is None or row[0] is None:
                return pd.DataFrame(columns=list(AUDIT_COLUMNS))
            if row[1] == "adjudicate":
                self.require(annotator or "", "adjudicate")
            entries = connection.execute(
                f"SELECT {', '.join(AUDIT_COLUMNS)} FROM audit WHERE batch = ? AND undone_by IS NULL"
                " ORDER BY seq DESC",
                (int(row[0]),)).fetchall()
            undo_batch = _next_batch(connection)
            seq = next_seq(connection)
            at = utc_now()
            for offset, entry in enumerate(entries):
                _undo_one(connection, dict(zip(AUDIT_COLUMNS, entry, strict=True)), undo_batch, at, annotator,
                          seq + offset)
        return pd.DataFrame([dict(zip(AUDIT_COLUMNS, entry, strict=True)) for entry in entries],
                            columns=list(AUDIT_COLUMNS))

    # ---------------------------------------------------------------------------------------- reading

    def version(self) -> int:
        """A number that grows with every change to the store: the commit order of the last change (0 when empty).

        Every write (set, undo, import, adjudication, confirmation, migration) adds an audit row with the next
        ``seq``, so a reader can cache what it derived from the store until this number changes, and a decision
        whose ``seq`` is above a version read earlier was committed after that read.
        """
        # the one value without a frame around it: read several times in every run of a page
        return int(self.fetch("SELECT COALESCE(MAX(seq), 0) FROM audit")[0][0])

    def dataset_ids(self) -> list[str]:
        """The data-set names (and version 1 keys) that have decisions in this store."""
        return self._read("SELECT DISTINCT dataset_id FROM overrides ORDER BY dataset_id", (), ["id"])["id"].tolist()

    def decisions(self, dataset_id: str | None = None) -> pd.DataFrame:
        """Every annotator's current decision (of one data set, or all with a ``dataset_id`` column).

        Columns: :data:`empathy.labels.schema.STORED_DECISION_COLUMNS` (the decision and its commit order
        ``seq``; plus ``dataset_id`` for all data sets), sorted by key, annotator and role. Two annotators deciding
        the same rating are two rows. What a metric uses of them is the ledger's
        (:func:`empathy.labels.ledger.open_ledger`), never this table directly.
        """
        columns = ["dataset_id", *STORED_DECISION_COLUMNS]
        if dataset_id is None:
            frame = self._read(f"SELECT {', '.join(columns)} FROM overrides ORDER BY dataset_id, {_DECISION_ORDER}",
                               (), columns)
        else:
            frame = self._read(f"SELECT {', '.join(columns)} FROM overrides WHERE dataset_id=? ORDER BY "
                               f"{_DECISION_ORDER}", (dataset_id,), columns).drop(columns=["dataset_id"])
        return _decision_types(frame, self.label)

    def changed_since(self, dataset_id: str, since: int) -> bool:
        """Whether an audited change to ``dataset_id``'s decisions was committed after the store's version ``since``
        (:meth:`version`): whether :meth:`changed_decisions` would find any key. One indexed look-up, no frame."""
        return bool(self.fetch("SELECT 1 FROM audit WHERE dataset_id = ? AND seq > ? LIMIT 1",
                               (dataset_id, int(since))))

    def changed_decisions(self, dataset_id: str, since: int) -> tuple[pd.DataFrame, pd.DataFrame]:
        """What changed in one data set's decisions after the store's version ``since`` (:meth:`version`).

        Returns the keys (:data:`~empathy.labels.schema.KEY_COLUMNS`, ``annotator``, ``role``) of every decision
        an audited change committed after ``since`` touched (set, undo, import, adjudication, confirmation,
        migration), and the current rows of those keys with the columns of :meth:`decisions`, in its order (a key
        without a row was removed, by an undo). Read in one statement, so the two agree; the rows are found by
        key, not by their ``seq`` (a confirmation keeps it), so applying them to the decisions read at ``since``
        gives :meth:`decisions` as it is now (:func:`empathy.labels.ledger.updated_ledger`). O(changes) with the
        ``audit_seq`` index and the decisions' primary key.
        """
        key_columns = [*KEY_COLUMNS, "annotator", "role"]
        others = [c for c in STORED_DECISION_COLUMNS if c not in key_columns]
        touched = f"SELECT DISTINCT {', '.join(key_columns)} FROM audit WHERE dataset_id=? AND seq > ?"
        joined = " AND ".join(f"o.{c} = a.{c}" for c in key_columns)
        rows = self.fetch(f"SELECT {', '.join(f'a.{c}' for c in key_columns)}, "
                          f"{', '.join(f'o.{c}' for c in others)} FROM ({touched}) AS a LEFT JOIN overrides AS o "
                          f"ON o.dataset_id = ? AND {joined} ORDER BY "
                          + ", ".join(f"a.{c}" for c in key_columns), (dataset_id, int(since), dataset_id))
        keys = pd.DataFrame([row[:len(key_columns)] for row in rows], columns=key_columns)
        value = len(key_columns) + others.index("value")  # NOT NULL in a row: NULL is a key without one
        current = pd.DataFrame([row for row in rows if row[value] is not None], columns=[*key_columns, *others])
        return keys, _decision_types(current[list(STORED_DECISION_COLUMNS)], self.label)

    def audit(self, dataset_id: str | None = None) -> pd.DataFrame:
        """The audit trail in commit order: every set, undo, import, adjudication, confirmation and migration."""
        columns = list(AUDIT_COLUMNS)
        where, params = ("WHERE dataset_id=?", (dataset_id,)) if dataset_id is not None else ("", ())
        frame = self._read(f"SELECT {', '.join(columns)} FROM audit {where} ORDER BY seq, id", params, columns)
        for column in ("old_value", "new_value"):
            frame[column] = frame[column].astype(float)
        frame["audit_position"] = _positions(frame["audit_position"])
        return frame

    def count(self, dataset_id: str) -> int:
        """Number of decided ratings of a data set (a rating decided by two annotators counts once).

        A count of the store's rows (stale and orphaned included); what the pages show as *applied* is the
        ledger's (:attr:`empathy.labels.ledger.Ledger.counts`).
        """
        frame = self._read("SELECT COUNT(*) FROM (SELECT DISTINCT item_id, model, rater, dimension FROM overrides"
                           " WHERE dataset_id=?) AS decided", (dataset_id,), ["n"])
        return int(frame["n"].iloc[0])


# ------------------------------------------------------------------------------------------ reading connections

#: Per thread: each store's reading connection and the identity of the file it was opened on (held weakly by the
#: store: a store gone closes its connections).
_READERS = threading.local()


class _Reader:
    """A thread's reading connection and the file it was opened on; closed when dropped, from whichever thread drops
    it (it is never used by two threads)."""

    def __init__(self, identity: tuple[int, ...], target: str | Path, connection: sqlite3.Connection) -> None:
        self.identity = identity
        self.target = target
        self.connection = connection

    def __del__(self) -> None:
        self.connection.close()


def _file_identity(path: Path) -> tuple[int, ...] | None:
    """The file at ``path`` and its state: device, inode, size and modification time (``None``: no file)."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns


# ------------------------------------------------------------------------------------------ the write queries

def _next_batch(connection: sqlite3.Connection) -> int:
    row = connection.execute("SELECT COALESCE(MAX(batch), 0) + 1 FROM audit").fetchone()
    return int(row[0])


def next_seq(connection: sqlite3.Connection) -> int:
    """The next number of the store's commit order (read inside a write transaction, which holds the lock)."""
    row = connection.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM audit").fetchone()
    return int(row[0])


def _validated(changes: Iterable[Change]) -> list[Change]:
    """The changes with their keys checked, the value checked against its range and the reason stripped."""
    checked = []
    for change in changes:
        for name in KEY_COLUMNS:
            check_text(name, getattr(change, name))
        for name in ("reason", "text_hash", "judge_signature"):
            if not isinstance(getattr(change, name), str):
                raise TypeError(f"{name} must be a string, got {type(getattr(change, name)).__name__}")
        value = validate_value(change.dimension, change.value)
        check_audit_mark(change.audit_design, change.audit_position)
        checked.append(Change(change.item_id, change.model, change.rater, change.dimension, value,
                              change.reason.strip(), change.text_hash, optional_float(change.judge_value),
                              change.judge_signature, change.audit_design,
                              None if change.audit_position is None else int(change.audit_position)))
    return checked


#: The order of :meth:`OverrideStore.decisions`: by key, then annotator and role.
_DECISION_ORDER = "item_id, model, rater, dimension, annotator, role"


#: Rows read per chunk by :meth:`OverrideStore._read` (a chunk's Python objects are all a read holds at once).
READ_CHUNK_ROWS = 1024


def _frame_in_chunks(cursor: Any, columns: list[str], size: int) -> pd.DataFrame | None:
    """The rows of ``cursor`` as a frame with the types ``pd.DataFrame(rows, columns=columns)`` infers, read
    ``size`` rows at a time into Arrow arrays; ``None`` when a column holds values Arrow types otherwise than
    pandas (text with numbers, bytes: the caller reads those the plain way)."""
    import pyarrow as pa

    chunks: list[list[Any]] = [[] for _ in columns]
    while rows := cursor.fetchmany(size):
        for parts, values in zip(chunks, zip(*rows, strict=True), strict=True):
            try:
                parts.append(pa.array(values))
            except (pa.ArrowException, UnicodeError, OverflowError, TypeError):
                return None
    if not chunks or not chunks[0]:  # no rows: every column of objects, as pandas makes them
        return pd.DataFrame([], columns=columns)
    arrays = {}
    for column, parts in zip(columns, chunks, strict=True):
        kinds = {part.type for part in parts} - {pa.null()}
        if kinds == {pa.int64(), pa.float64()}:  # pandas makes whole numbers among reals reals too
            kinds = {pa.float64()}
        if len(kinds) > 1 or not kinds <= {pa.string(), pa.int64(), pa.float64()}:
            return None
        kind = kinds.pop() if kinds else pa.null()
        arrays[column] = pa.chunked_array([part.cast(kind) for part in parts], type=kind)
    # one piece per column, as a frame built from the rows has (a splice joins a column's pieces past a count)
    return pa.table(arrays).combine_chunks().to_pandas()


def _decision_types(frame: pd.DataFrame, store: str) -> pd.DataFrame:
    """A decisions frame read from the store with its column types (values as floats, ``seq`` as integers).

    A value the store holds is checked as it is read: a decision's value must be a finite number and a judge's
    value a finite number or none. Anything else (text such as ``'nan'``, an infinity) was written around this
    package and is an error naming the store and the decision, never a missing value."""
    values = pd.to_numeric(frame["value"], errors="coerce").astype(float)
    judged = frame["judge_value"]
    judge_values = pd.to_numeric(judged, errors="coerce").astype(float)
    bad = ~np.isfinite(values.to_numpy()) | (judged.notna().to_numpy() & ~np.isfinite(judge_values.to_numpy()))
    if bad.any():
        row = frame.loc[bad].iloc[0]
        column, held = (("value", row["value"]) if not np.isfinite(values[bad].iloc[0])
                        else ("judge_value", row["judge_value"]))
        raise StoreError(store, f"holds a decision whose {column} is {held!r}, not a finite number (item "
                         f"{row['item_id']!r}, model {row['model']!r}, rater {row['rater']!r}, dimension "
                         f"{row['dimension']!r}, annotator {row['annotator']!r}; {int(bad.sum())} such rows): "
                         "it was written around empathy; correct or delete those rows")
    frame["value"] = values
    frame["judge_value"] = judge_values
    frame[ORDER_COLUMN] = frame[ORDER_COLUMN].astype("int64")
    frame["audit_position"] = _positions(frame["audit_position"])
    return frame


def _positions(column: pd.Series) -> pd.Series:
    """Audit positions as nullable whole numbers (``<NA>``: not an audit decision)."""
    return pd.to_numeric(column, errors="coerce").astype("Int64")


def _check_marks(connection: sqlite3.Connection, dataset: str, changes: Sequence[Change]) -> None:
    """Refuse audit marks that do not match a stored design: its data set, dimension, output and position."""
    designs: dict[str, str | None] = {}
    for change in changes:
        if not change.audit_design:
            continue
        digest = change.audit_design
        if digest not in designs:
            row = connection.execute("SELECT dimension FROM audit_designs WHERE dataset_id=? AND digest=?",
                                     (dataset, digest)).fetchone()
            designs[digest] = None if row is None else str(row[0])
        dimension = designs[digest]
        if dimension is None:
            raise ValueError(f"audit design {digest[:12]} is not stored for data set {dataset!r}: save it first "
                             "(empathy.labels.audits.save_design)")
        if change.dimension != dimension:
            raise ValueError(f"audit design {digest[:12]} audits {dimension!r}, not {change.dimension!r}: a decision "
                             f"on {change.dimension!r} is not an audit decision of it")
        found = connection.execute("SELECT item_id, model FROM audit_design_outputs WHERE dataset_id=? AND digest=? "
                                   "AND position=?", (dataset, digest, change.audit_position)).fetchone()
        if found is None or (str(found[0]), str(found[1])) != (change.item_id, change.model):
            drawn = "nothing" if found is None else f"output ({found[0]!r}, {found[1]!r})"
            raise ValueError(f"audit design {digest[:12]} holds {drawn} at position {change.audit_position}, not "
                             f"output ({change.item_id!r}, {change.model!r})")


def _record(connection: sqlite3.Connection, dataset: str, change: Change, annotator: str, role: str, at: str,
            batch: int, action: str, seq: int) -> int:
    """Write one decision (insert or replace the annotator's row) and its audit row, both at commit order
    ``seq``; return the audit id."""
    row_key = (dataset, change.item_id, change.model, change.rater, change.dimension)
    found = connection.execute(f"SELECT value FROM overrides WHERE {_ROW_WHERE}", (*row_key, annotator,
                                                                                   role)).fetchone()
    own = None if found is None else float(found[0])
    # What this decision replaced on screen: the annotator's own previous value, else the latest decision
    # of anyone on this rating (in commit order), else the judge's label (so a first override records the judge's
    # value).
    old = own
    if old is None:
        row = connection.execute(
            f"SELECT value FROM overrides WHERE {_KEY_WHERE} ORDER BY seq DESC, updated_at DESC LIMIT 1",
            row_key).fetchone()
        old = float(row[0]) if row is not None else change.judge_value
    # the row's audit mark is that of the decision that set its value: a later decision from another queue
    # clears it, so the audit's estimators never read a value that was not decided in audit order
    connection.execute(
        "INSERT INTO overrides (dataset_id, item_id, model, rater, dimension, annotator, role, value,"
        " updated_at, reason, text_hash, judge_value, judge_signature, seq, audit_design, audit_position)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
        " ON CONFLICT (dataset_id, item_id, model, rater, dimension, annotator, role) DO UPDATE SET"
        " value=excluded.value, updated_at=excluded.updated_at, reason=excluded.reason,"
        " text_hash=excluded.text_hash, judge_value=COALESCE(excluded.judge_value, overrides.judge_value),"
        " judge_signature=CASE WHEN excluded.judge_signature='' THEN overrides.judge_signature"
        " ELSE excluded.judge_signature END, seq=excluded.seq, audit_design=excluded.audit_design,"
        " audit_position=excluded.audit_position",
        (*row_key, annotator, role, change.value, at, change.reason, change.text_hash, change.judge_value,
         change.judge_signature, seq, change.audit_design, change.audit_position))
    cursor = connection.execute(
        _MARKED_INSERT + "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (batch, *row_key, annotator, role, at, old, change.value, change.reason, action, change.text_hash,
         int(own is not None), seq, change.audit_design, change.audit_position))
    return int(cursor.lastrowid)


def _undo_one(connection: sqlite3.Connection, record: dict[str, object], batch: int, at: str,
              annotator: str | None, seq: int) -> None:
    """Return one audited change's decision to the value before it, log the undo (commit order ``seq``), and link
    the two rows."""
    key = (record["dataset_id"], *(record[c] for c in KEY_COLUMNS), record["annotator"], record["role"])
    found = connection.execute(f"SELECT value, {', '.join(AUDIT_MARK_COLUMNS)} FROM overrides WHERE {_ROW_WHERE}",
                               key).fetchone()
    current = None if found is None else float(found[0])
    mark: tuple[object, object] = ("", None) if found is None else (found[1], found[2])
    if current is not None and record["new_value"] is not None and current == record["new_value"]:
        if not record["prior"]:
            connection.execute(f"DELETE FROM overrides WHERE {_ROW_WHERE}", key)
            restored = None
            mark = ("", None)
        else:
            # the value goes back to the previous change's, and so does its audit mark
            before = connection.execute(
                f"SELECT {', '.join(AUDIT_MARK_COLUMNS)} FROM audit WHERE {_ROW_WHERE} AND id < ? AND undone_by IS "
                f"NULL AND action IN {_SETTING_ACTIONS} ORDER BY seq DESC, id DESC LIMIT 1",
                (*key, record["id"])).fetchone()
            mark = ("", None) if before is None else (before[0], before[1])
            connection.execute(f"UPDATE overrides SET value=?, updated_at=?, seq=?, audit_design=?, audit_position=? "
                               f"WHERE {_ROW_WHERE}", (record["old_value"], at, seq, *mark, *key))
            restored = record["old_value"]
    else:
        restored = current
    who = annotator or record["annotator"]
    cursor = connection.execute(
        _MARKED_INSERT + "(?,?,?,?,?,?,?,?,?,?,?,?,'undo',?,?,?,?,?)",
        (batch, *key, at, current, restored, f"undo of change {record['id']} by {who}", record["text_hash"],
         int(current is not None), seq, *mark))
    connection.execute("UPDATE audit SET undone_by=? WHERE id=?", (int(cursor.lastrowid), record["id"]))
