"""Durable store of human overrides of judge ratings, with an append-only audit trail.

An *override* replaces one rating, keyed by ``(dataset_id, item_id, model, rater, dimension)``, with a value
chosen by a human annotator. The store is a SQLite file in WAL mode; every change runs in its own
``BEGIN IMMEDIATE`` transaction with a busy timeout, so two app sessions (or two processes) writing at the
same time serialise instead of losing a write, and a change is on disk before
:meth:`OverrideStore.set_override` returns.

Two tables:

``overrides``
    the current value of each overridden rating (one row per key);
``audit``
    every change, never updated except to mark a change as undone: annotator, UTC time, old value, new value,
    reason and action (``set``, ``undo`` or ``import``). Changes made together (one decision applied to three
    judges, one imported file) share a ``batch`` number so that :meth:`OverrideStore.undo_last` undoes them
    together.

``dataset_id`` is a stable hash of the data set's ``(item_id, model)`` keys (:func:`dataset_id`), so that
reloading the same data re-applies its overrides and another data set never sees them.

The ledger (the current overrides) exports to JSONL and CSV and imports back from either. CSV cells that a
spreadsheet would run as a formula (starting with ``=``, ``+``, ``-``, ``@``, tab or carriage return) are
written with a leading ``'``; :meth:`OverrideStore.import_ledger` removes it again.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from empathy.escaping import spreadsheet_cell, unspreadsheet_cell
from empathy.io import BINARY_DIMENSIONS, DIMENSION_RANGES, DataError, iter_jsonl

#: Environment variable naming the SQLite file (wins over the default next to the data).
STORE_ENV = "EMPATHY_STORE"
#: File name of the default store, placed in the data folder.
STORE_FILENAME = ".empathy-overrides.sqlite"
KEY_COLUMNS: tuple[str, ...] = ("item_id", "model", "rater", "dimension")
LEDGER_COLUMNS: tuple[str, ...] = ("dataset_id", *KEY_COLUMNS, "value", "annotator", "updated_at", "reason")
AUDIT_COLUMNS: tuple[str, ...] = ("id", "batch", "dataset_id", *KEY_COLUMNS, "annotator", "at", "old_value",
                                  "new_value", "reason", "action", "undone_by")
ACTIONS: frozenset[str] = frozenset({"set", "undo", "import"})
#: First characters that make a spreadsheet treat a cell as a formula (OWASP CSV injection).
BUSY_TIMEOUT_S = 30.0
_KEY_WHERE = "dataset_id=? AND item_id=? AND model=? AND rater=? AND dimension=?"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS overrides (
    dataset_id TEXT NOT NULL,
    item_id    TEXT NOT NULL,
    model      TEXT NOT NULL,
    rater      TEXT NOT NULL,
    dimension  TEXT NOT NULL,
    value      REAL NOT NULL,
    annotator  TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    reason     TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (dataset_id, item_id, model, rater, dimension)
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
    at         TEXT NOT NULL,
    old_value  REAL,
    new_value  REAL,
    reason     TEXT NOT NULL DEFAULT '',
    action     TEXT NOT NULL CHECK (action IN ('set', 'undo', 'import')),
    undone_by  INTEGER
);
CREATE INDEX IF NOT EXISTS audit_dataset ON audit (dataset_id, id);
"""


def dataset_id(outputs: pd.DataFrame) -> str:
    """Stable 16-hex-digit identifier of a data set: a SHA-256 of its sorted ``(item_id, model)`` keys.

    Row order and extra columns do not change it; adding or removing an output does.
    """
    for column in ("item_id", "model"):
        if column not in outputs.columns:
            raise ValueError(f"dataset_id: outputs lack the column {column!r}")
    keys = sorted(zip(outputs["item_id"].astype(str), outputs["model"].astype(str), strict=True))
    digest = hashlib.sha256()
    for item, model in keys:
        digest.update(f"{len(item)}:{item}{len(model)}:{model}\n".encode())
    return digest.hexdigest()[:16]


def default_store_path(data_dir: str | Path | None = None) -> Path:
    """Where the override store lives: ``$EMPATHY_STORE``, else ``<data_dir>/.empathy-overrides.sqlite``.

    Without a data folder (uploaded files) the store goes to ``.empathy-cache/`` in the working directory.
    """
    env = os.environ.get(STORE_ENV, "").strip()
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


@dataclass(frozen=True)
class Change:
    """One requested override: the rating key and the new value."""

    item_id: str
    model: str
    rater: str
    dimension: str
    value: float
    reason: str = ""


class OverrideStore:
    """SQLite-backed overrides and audit trail (safe for several threads and processes).

    Every method opens its own short-lived connection, so one instance can be shared between the threads of
    a Streamlit server and several processes can use the same file.
    """

    def __init__(self, path: str | Path, *, busy_timeout: float = BUSY_TIMEOUT_S):
        self.path = Path(path)
        if busy_timeout <= 0:
            raise ValueError(f"busy_timeout must be positive, got {busy_timeout!r}")
        self.busy_timeout = float(busy_timeout)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._init_lock = threading.Lock()
        with self._init_lock, self._connect() as connection:
            connection.execute("PRAGMA journal_mode=WAL")
            connection.executescript(_SCHEMA)

    def __repr__(self) -> str:
        return f"OverrideStore({str(self.path)!r})"

    def _connect(self) -> sqlite3.Connection:
        # isolation_level=None: we issue BEGIN IMMEDIATE ourselves so the write lock is taken up front and a
        # concurrent writer waits (busy timeout) instead of failing on lock upgrade.
        connection = sqlite3.connect(self.path, timeout=self.busy_timeout, isolation_level=None)
        connection.execute(f"PRAGMA busy_timeout={int(self.busy_timeout * 1000)}")
        connection.execute("PRAGMA synchronous=FULL")
        return connection

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
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

    @staticmethod
    def _next_batch(connection: sqlite3.Connection) -> int:
        row = connection.execute("SELECT COALESCE(MAX(batch), 0) + 1 FROM audit").fetchone()
        return int(row[0])

    @staticmethod
    def _current(connection: sqlite3.Connection, dataset: str, change: Change) -> float | None:
        row = connection.execute(
            f"SELECT value FROM overrides WHERE {_KEY_WHERE}",
            (dataset, change.item_id, change.model, change.rater, change.dimension)).fetchone()
        return None if row is None else float(row[0])

    def _apply(self, connection: sqlite3.Connection, dataset: str, change: Change, annotator: str, at: str,
               batch: int, action: str) -> int:
        old = self._current(connection, dataset, change)
        connection.execute(
            "INSERT INTO overrides (dataset_id, item_id, model, rater, dimension, value, annotator,"
            " updated_at, reason) VALUES (?,?,?,?,?,?,?,?,?)"
            " ON CONFLICT (dataset_id, item_id, model, rater, dimension) DO UPDATE SET value=excluded.value,"
            " annotator=excluded.annotator, updated_at=excluded.updated_at, reason=excluded.reason",
            (dataset, change.item_id, change.model, change.rater, change.dimension, change.value, annotator,
             at, change.reason))
        cursor = connection.execute(
            "INSERT INTO audit (batch, dataset_id, item_id, model, rater, dimension, annotator, at,"
            " old_value, new_value, reason, action) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (batch, dataset, change.item_id, change.model, change.rater, change.dimension, annotator, at, old,
             change.value, change.reason, action))
        return int(cursor.lastrowid)

    @staticmethod
    def _validated(changes: Iterable[Change]) -> list[Change]:
        checked = []
        for change in changes:
            for name in KEY_COLUMNS:
                _check_text(name, getattr(change, name))
            if not isinstance(change.reason, str):
                raise TypeError(f"reason must be a string, got {type(change.reason).__name__}")
            value = validate_value(change.dimension, change.value)
            checked.append(Change(change.item_id, change.model, change.rater, change.dimension, value,
                                  change.reason.strip()))
        return checked

    def set_override(self, dataset_id: str, item_id: str, model: str, rater: str, dimension: str,
                     value: float, *, annotator: str, reason: str = "") -> int:
        """Record one override and return the batch number of the change (for undo and display).

        The value is checked against the dimension's range first (``ValueError``/``TypeError``); the change is
        committed to disk before this returns.
        """
        return self.set_overrides(dataset_id, [Change(item_id, model, rater, dimension, value, reason)],
                                  annotator=annotator)

    def set_overrides(self, dataset_id: str, changes: Sequence[Change], *, annotator: str,
                      action: str = "set") -> int:
        """Record several overrides in one transaction and one undo batch; return the batch number."""
        _check_text("dataset_id", dataset_id)
        _check_text("annotator", annotator)
        if action not in ("set", "import"):
            raise ValueError(f"action must be 'set' or 'import', got {action!r}")
        checked = self._validated(changes)
        if not checked:
            raise ValueError("set_overrides: no changes given")
        at = _utc_now()
        with self._write() as connection:
            batch = self._next_batch(connection)
            for change in checked:
                self._apply(connection, dataset_id, change, annotator.strip(), at, batch, action)
        return batch

    def undo_last(self, annotator: str | None = None, *, dataset_id: str | None = None) -> pd.DataFrame:
        """Undo the most recent not-yet-undone batch of changes (of ``annotator`` / ``dataset_id`` if given).

        Each key returns to the value it had before the change (no override at all if it had none). A key that
        someone changed again afterwards keeps that later value. Returns the undone audit rows (empty when
        there is nothing to undo); the undo itself is logged with action ``undo``.
        """
        conditions = ["action IN ('set', 'import')", "undone_by IS NULL"]
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
                change = Change(record["item_id"], record["model"], record["rater"], record["dimension"],
                                record["new_value"])
                current = self._current(connection, record["dataset_id"], change)
                if current is not None and record["new_value"] is not None and current == record["new_value"]:
                    key = (record["dataset_id"], *(record[c] for c in KEY_COLUMNS))
                    if record["old_value"] is None:
                        connection.execute(f"DELETE FROM overrides WHERE {_KEY_WHERE}", key)
                    else:
                        connection.execute(
                            f"UPDATE overrides SET value=?, annotator=?, updated_at=? WHERE {_KEY_WHERE}",
                            (record["old_value"], record["annotator"], at, *key))
                    restored = record["old_value"]
                else:
                    restored = current
                cursor = connection.execute(
                    "INSERT INTO audit (batch, dataset_id, item_id, model, rater, dimension, annotator, at,"
                    " old_value, new_value, reason, action) VALUES (?,?,?,?,?,?,?,?,?,?,?, 'undo')",
                    (undo_batch, record["dataset_id"], record["item_id"], record["model"], record["rater"],
                     record["dimension"], annotator or record["annotator"], at, current, restored,
                     f"undo of change {record['id']}"))
                connection.execute("UPDATE audit SET undone_by=? WHERE id=?", (int(cursor.lastrowid),
                                                                                record["id"]))
        return pd.DataFrame([dict(zip(AUDIT_COLUMNS, entry, strict=True)) for entry in entries],
                            columns=list(AUDIT_COLUMNS))

    def _read(self, sql: str, params: Sequence[object], columns: Sequence[str]) -> pd.DataFrame:
        connection = self._connect()
        try:
            rows = connection.execute(sql, params).fetchall()
        finally:
            connection.close()
        return pd.DataFrame(rows, columns=list(columns))

    def overrides(self, dataset_id: str | None = None) -> pd.DataFrame:
        """Current overrides (of one data set, or all with a ``dataset_id`` column when ``None``).

        Columns: ``item_id, model, rater, dimension, value, annotator, updated_at, reason`` (plus
        ``dataset_id`` for all data sets), sorted by key.
        """
        columns = list(LEDGER_COLUMNS)
        if dataset_id is None:
            frame = self._read(f"SELECT {', '.join(columns)} FROM overrides"
                               " ORDER BY dataset_id, item_id, model, rater, dimension", (), columns)
        else:
            frame = self._read(f"SELECT {', '.join(columns)} FROM overrides WHERE dataset_id=?"
                               " ORDER BY item_id, model, rater, dimension", (dataset_id,), columns)
            frame = frame.drop(columns=["dataset_id"])
        frame["value"] = frame["value"].astype(float)
        return frame

    def audit(self, dataset_id: str | None = None) -> pd.DataFrame:
        """The audit trail, oldest first: every set, undo and import with annotator, UTC time and reason."""
        columns = list(AUDIT_COLUMNS)
        where, params = ("WHERE dataset_id=?", (dataset_id,)) if dataset_id is not None else ("", ())
        frame = self._read(f"SELECT {', '.join(columns)} FROM audit {where} ORDER BY id", params, columns)
        for column in ("old_value", "new_value"):
            frame[column] = frame[column].astype(float)
        return frame

    def count(self, dataset_id: str) -> int:
        """Number of current overrides of a data set."""
        connection = self._connect()
        try:
            return int(connection.execute("SELECT COUNT(*) FROM overrides WHERE dataset_id=?",
                                          (dataset_id,)).fetchone()[0])
        finally:
            connection.close()

    def export_jsonl(self, path: str | Path, dataset_id: str | None = None) -> int:
        """Write the current overrides (the ledger) as JSON lines; return the number of records."""
        frame = self.overrides(dataset_id)
        if dataset_id is not None:
            frame.insert(0, "dataset_id", dataset_id)
        with Path(path).open("w", encoding="utf-8") as handle:
            for record in frame[list(LEDGER_COLUMNS)].to_dict(orient="records"):
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        return len(frame)

    def export_csv(self, path: str | Path, dataset_id: str | None = None) -> int:
        """Write the ledger as CSV with formula-like text cells neutralised (see :func:`escape_cell`)."""
        frame = self.overrides(dataset_id)
        if dataset_id is not None:
            frame.insert(0, "dataset_id", dataset_id)
        with Path(path).open("w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(LEDGER_COLUMNS)
            for record in frame[list(LEDGER_COLUMNS)].itertuples(index=False):
                writer.writerow([repr(float(cell)) if column == "value" else escape_cell(str(cell))
                                 for column, cell in zip(LEDGER_COLUMNS, record, strict=True)])
        return len(frame)

    def import_ledger(self, path: str | Path, *, dataset_id: str | None = None, annotator: str | None = None,
                      name: str | None = None) -> int:
        """Read a ledger exported by :meth:`export_jsonl` or :meth:`export_csv` and apply it as one batch.

        ``dataset_id`` re-targets every record (import into the data set now loaded); otherwise each record's
        own ``dataset_id`` is used. ``annotator`` replaces the file's annotator names. Every record is checked
        before anything is written; a bad record raises :class:`empathy.io.DataError` naming file, row and
        column. Returns the number of overrides imported.
        """
        records = read_ledger(path, name=name)
        label = name or str(path)
        per_dataset: dict[str, list[tuple[str, Change]]] = {}
        for row_number, record in records:
            target = dataset_id if dataset_id is not None else record.get("dataset_id", "")
            if not target:
                raise DataError(label, "empty value", row=row_number, column="dataset_id")
            who = annotator if annotator is not None else record.get("annotator", "")
            if not who:
                raise DataError(label, "empty value", row=row_number, column="annotator")
            try:
                value = validate_value(record["dimension"], record["value"])
            except (TypeError, ValueError) as exc:
                raise DataError(label, str(exc), row=row_number, column="value") from None
            change = Change(record["item_id"], record["model"], record["rater"], record["dimension"], value,
                            record.get("reason", ""))
            per_dataset.setdefault(target, []).append((who, change))
        if not per_dataset:
            return 0
        at = _utc_now()
        with self._write() as connection:
            batch = self._next_batch(connection)
            for target, changes in per_dataset.items():
                for who, change in changes:
                    self._apply(connection, target, change, who, at, batch, "import")
        return sum(len(changes) for changes in per_dataset.values())


#: Kept under the store's own names: the ledger CSV was the first spreadsheet-safe export.
escape_cell = spreadsheet_cell
unescape_cell = unspreadsheet_cell


def read_ledger(path: str | Path, *, name: str | None = None) -> list[tuple[int, dict[str, object]]]:
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
        for column in ("dataset_id", "annotator", "reason", "updated_at"):
            cell = record.get(column, "")
            out[column] = "" if cell is None else str(cell)
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
