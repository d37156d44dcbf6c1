"""Moving decisions in and out of a store: the ledger as JSONL or CSV, and copying a whole store.

Functions over any store (both backends):

* :func:`export_jsonl` / :func:`export_csv` write every decision (the *ledger*, columns
  :data:`~empathy.labels.schema.LEDGER_COLUMNS`); CSV cells that a spreadsheet would run as a formula are written
  with a leading ``'`` (:func:`escape_cell`).
* :func:`read_ledger` reads either format back (unescaping CSV cells) and :func:`import_ledger` applies it as
  one undo batch, every record checked first (a bad one raises :class:`empathy.io.DataError` naming file, row
  and column; nothing is written).
* :func:`migrate_store` copies every decision, the whole audit trail, the pinned exhibits and the audit designs of
  one store into another, empty one (``python -m empathy store migrate SRC DST``), through :func:`store_rows` and
  :func:`restore`.

A decision's audit mark (``audit_design``, ``audit_position``: made on a drawn output of a random audit, in audit
order) travels with it in both file formats; an imported mark is not checked against the target's designs (they
may be drawn there later: ``audit draw`` with the same data, judge, size and seed gives the same digest), and
only marks that match a stored design ever feed an estimate (:func:`empathy.labels.audits.audit_decisions`).
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from empathy.escaping import spreadsheet_cell, unspreadsheet_cell
from empathy.identifiers import person_name_problem
from empathy.io import DataError, iter_jsonl, validate_ratings
from empathy.labels.audits import design_rows
from empathy.labels.backends import open_for_reading, open_store
from empathy.labels.exhibit_list import exhibit_rows
from empathy.labels.locations import StoreError, is_server_location, mask_location
from empathy.labels.records import (
    TEXT_HASH_LENGTH,
    Change,
    check_audit_mark,
    dataset_name,
    in_commit_order,
    optional_float,
    validate_value,
)
from empathy.labels.schema import (
    ASSIGNMENT_COLUMNS,
    AUDIT_COLUMNS,
    DESIGN_COLUMNS,
    DESIGN_OUTPUT_COLUMNS,
    EXHIBIT_COLUMNS,
    KEY_COLUMNS,
    LEDGER_COLUMNS,
    OVERRIDE_ROW_COLUMNS,
    ROLES,
    SKIP_COLUMNS,
)
from empathy.labels.sqlite import OverrideStore
from empathy.raw_files import TEXT_ENCODING, check_name_length, csv_records

#: Kept under the store's own names: the ledger CSV was the first spreadsheet-safe export.
escape_cell = spreadsheet_cell
unescape_cell = unspreadsheet_cell


# ------------------------------------------------------------------------------------------ the ledger file

def _ledger(store: OverrideStore, dataset_id: str | None) -> pd.DataFrame:
    """The decisions in the store's commit order (a file read back in row order keeps which one came last)."""
    frame = in_commit_order(store.decisions(dataset_id))
    if dataset_id is not None:
        frame.insert(0, "dataset_id", dataset_id)
    return frame[list(LEDGER_COLUMNS)]


def export_jsonl(store: OverrideStore, path: str | Path, dataset_id: str | None = None) -> int:
    """Write every decision (the ledger; of one data set, or all) as JSON lines; return the number of records."""
    frame = _ledger(store, dataset_id)
    with Path(path).open("w", encoding="utf-8") as handle:
        for record in frame.to_dict(orient="records"):
            record["judge_value"] = optional_float(record["judge_value"])
            record["audit_position"] = _optional_position(record["audit_position"])
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return len(frame)


def export_csv(store: OverrideStore, path: str | Path, dataset_id: str | None = None) -> int:
    """Write the ledger as CSV with formula-like text cells neutralised (see :func:`escape_cell`)."""
    frame = _ledger(store, dataset_id)

    def cell(column: str, value: object) -> str:
        if column in ("value", "judge_value"):
            number = optional_float(value)
            return "" if number is None else repr(number)
        if column == "audit_position":
            position = _optional_position(value)
            return "" if position is None else str(position)
        return escape_cell(str(value))

    with Path(path).open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(LEDGER_COLUMNS)
        for record in frame.itertuples(index=False):
            writer.writerow([cell(column, value) for column, value in zip(LEDGER_COLUMNS, record, strict=True)])
    return len(frame)


def _missing(cell: object) -> bool:
    return cell is None or cell is pd.NA or (isinstance(cell, float) and math.isnan(cell))


def _optional_position(value: object) -> int | None:
    """A stored audit position as an int, ``None`` when there is none."""
    return None if _missing(value) else int(value)  # type: ignore[call-overload]


def _audit_mark(label: str, row_number: int, record: dict[str, object]) -> tuple[str, int | None]:
    """The audit mark of a ledger record (``""``/``None`` when it has none), or a DataError naming the cell."""
    design = "" if _missing(record.get("audit_design")) else str(record.get("audit_design")).strip()
    raw = record.get("audit_position")
    position: int | None = None
    if not (_missing(raw) or (isinstance(raw, str) and not raw.strip())):
        text = str(raw).strip()
        if isinstance(raw, bool) or not (isinstance(raw, int) or (text.isascii() and text.isdigit())):
            raise DataError(label, f"not a position (a whole number >= 0): {text[:40]!r}", row=row_number,
                            column="audit_position")
        position = int(text)
    try:
        check_audit_mark(design, position)
    except (TypeError, ValueError) as exc:
        raise DataError(label, str(exc), row=row_number,
                        column="audit_design" if design or position is None else "audit_position") from None
    return design, position


def _checked_values(records: list[tuple[int, dict[str, object]]], label: str, suffix: str) -> list[float]:
    """The ledger's values as floats, its keys and values checked exactly as a ratings file's
    (:func:`empathy.io.validate_ratings`: ASCII decimals, no booleans, a label exactly 0 or 1 as written, ranges on
    the written number, no invisible character in an identifier, no near miss of the paper's dimensions), with
    :class:`empathy.io.DataError` naming the file, row and column."""
    if not records:
        return []
    frame = pd.DataFrame([{column: record[column] for column in (*KEY_COLUMNS, "value")} for _, record in records])
    frame.attrs.update(source=label, suffix=suffix, lines=[row for row, _ in records])
    return validate_ratings(frame, unique_keys=False)["value"].astype(float).tolist()


def _raw_records(path: Path, label: str, suffix: str) -> list[tuple[int, dict[str, object]]]:
    """``(file row, record)`` of a JSONL or CSV ledger, CSV cells unescaped and its header checked."""
    records: list[tuple[int, dict[str, object]]] = []
    try:
        if suffix in (".jsonl", ".json"):
            records.extend(iter_jsonl(path, label))
        elif suffix == ".csv":
            with path.open(encoding=TEXT_ENCODING, newline="") as handle:  # an Excel byte-order mark is dropped
                header, rows = _csv_rows(csv_records(handle), label)  # cells of any length
                for line_number, values in rows:
                    if len(values) > len(header):  # cells beyond the header's columns: a field without a name
                        raise DataError(label, f"{len(values) - len(header)} more cell(s) than the header has "
                                        "columns", row=line_number)
                    records.append((line_number, {key: unescape_cell(values[k] if k < len(values) else "")
                                                  for k, key in enumerate(header)}))
            missing = [c for c in KEY_COLUMNS + ("value",) if c not in header]
            if missing:
                raise DataError(label, f"missing required column (have: {', '.join(header)})",
                                column=missing[0])
        else:
            raise DataError(label, f"unsupported ledger type '{suffix or '(none)'}'; use .jsonl or .csv")
    except UnicodeDecodeError as exc:
        raise DataError(label, f"not UTF-8 text (byte {exc.start})") from None
    return records


def _csv_rows(reader: Iterator[list[str]], label: str) -> tuple[list[str], Iterator[tuple[int, list[str]]]]:
    """The header of a ledger CSV (its names checked) and its ``(file row, fields)`` records, blank lines
    skipped but counted, so a row is reported where a spreadsheet shows it."""
    row, header = 0, []
    while not header:  # as csv.DictReader: leading blank lines are no header
        header = next(reader, None)
        if header is None:
            return [], iter(())
        row += 1
    for position, name in enumerate(header, start=1):
        check_name_length(name, position, len(header), label, row=row)

    def records() -> Iterator[tuple[int, list[str]]]:
        for line_number, values in enumerate(reader, start=row + 1):
            if values:
                yield line_number, values

    return header, records()


def _judge_value(label: str, row_number: int, record: dict[str, object]) -> float | None:
    """The record's ``judge_value``: ``None`` when empty, else a finite number, or a DataError naming the cell."""
    raw = record.get("judge_value")
    if _missing(raw) or (isinstance(raw, str) and not raw.strip()):
        return None
    number = None if isinstance(raw, bool) else optional_float(raw)
    if number is None or (isinstance(raw, str) and not raw.strip().isascii()):
        raise DataError(label, f"not a finite number: {str(raw)[:40]!r} (leave the cell empty when there is none)",
                        row=row_number, column="judge_value")
    return number


def _text_hash(label: str, row_number: int, record: dict[str, object]) -> str:
    """The record's ``text_hash`` (``""`` when empty), or a DataError when it is not 16 lowercase hex digits."""
    raw = record.get("text_hash")
    if _missing(raw):
        return ""
    text = str(raw).strip()
    if text and (len(text) != TEXT_HASH_LENGTH or any(c not in "0123456789abcdef" for c in text)):
        raise DataError(label, f"not a text hash: {text[:40]!r} ({TEXT_HASH_LENGTH} lowercase hex digits of "
                        "SHA-256: docs/ledger-format.md)", row=row_number, column="text_hash")
    return text


def read_ledger(path: str | Path, *, name: str | None = None) -> list[tuple[int, dict[str, object]]]:
    """Read a JSONL or CSV ledger into ``(file row, record)`` pairs, unescaping CSV cells.

    Every field is checked (the contract: docs/ledger-format.md): a field that is not one of
    :data:`~empathy.labels.schema.LEDGER_COLUMNS`, or CSV cells beyond the header, are refused rather than dropped;
    ``judge_value`` is empty or a finite number; ``text_hash`` is empty or 16 lowercase hex digits.

    Raises :class:`empathy.io.DataError` for an unreadable file, a missing or unknown column, an empty key cell or
    a malformed field, naming the file, the row and the column.
    """
    path = Path(path)
    label = name or str(path)
    suffix = Path(name).suffix.lower() if name else path.suffix.lower()
    if not path.exists():
        raise DataError(label, "file not found")
    records = _raw_records(path, label, suffix)
    known = set(LEDGER_COLUMNS)
    for row_number, record in records:
        unknown = [key for key in record if key not in known]
        if unknown:
            raise DataError(label, f"unknown field (a ledger record has only: {', '.join(LEDGER_COLUMNS)}; "
                            "nothing was imported)", row=row_number, column=str(unknown[0])[:80])
        for column in KEY_COLUMNS + ("value",):
            if column not in record:
                raise DataError(label, "missing required column", row=row_number, column=column)
        for column in KEY_COLUMNS:
            cell = record[column]
            if _missing(cell) or not str(cell).strip():
                raise DataError(label, "empty value", row=row_number, column=column)
        if _missing(record["value"]) or (isinstance(record["value"], str) and not record["value"].strip()):
            raise DataError(label, "empty value", row=row_number, column="value")
    values = _checked_values(records, label, suffix)
    cleaned = []
    for (row_number, record), value in zip(records, values, strict=True):
        out: dict[str, object] = {column: str(record[column]) for column in KEY_COLUMNS}  # verbatim: the store's keys
        out["value"] = value
        for column in ("dataset_id", "annotator", "reason", "updated_at", "role", "judge_signature"):
            cell = record.get(column, "")
            out[column] = "" if _missing(cell) else str(cell)
        out["text_hash"] = _text_hash(label, row_number, record)
        out["judge_value"] = _judge_value(label, row_number, record)
        out["audit_design"], out["audit_position"] = _audit_mark(label, row_number, record)
        cleaned.append((row_number, out))
    return cleaned


#: What :func:`check_texts` calls a record: made on the outputs' current text, on other text (or on text it does
#: not name: no hash), on an output the outputs do not hold, or not checked (no outputs given, a hash recorded).
TEXT_STATES: tuple[str, ...] = ("fresh", "stale", "orphaned", "unchecked")


@dataclass(frozen=True)
class TextCheck:
    """Which ledger records were made on the text now loaded (:func:`check_texts`).

    ``counts`` maps each of :data:`TEXT_STATES` to a number of records; ``first`` each state other than fresh
    and unchecked to the ``(file row, reason)`` of its first record (what a refusal names).
    """

    counts: dict[str, int]
    first: dict[str, tuple[int, str]]
    checked: bool

    @property
    def not_fresh(self) -> int:
        """Records that would be kept but never applied: stale and orphaned."""
        return self.counts["stale"] + self.counts["orphaned"]

    def summary(self) -> str:
        """How the records stand against the text, for the line after an import."""
        if not self.checked:
            line = (f"{self.counts['unchecked']} text hashes not checked against the outputs (give --outputs to "
                    "check them)")
            return line + (f", {self.counts['stale']} without a text hash (stale: never applied until re-decided)"
                           if self.counts["stale"] else "")
        if not self.not_fresh:
            return f"all {self.counts['fresh']} made on the outputs' current text"
        parts = [f"{self.counts['fresh']} on the current text"]
        if self.counts["stale"]:
            parts.append(f"{self.counts['stale']} STALE (made on other text, or naming none; kept, never applied "
                         "until re-decided)")
        if self.counts["orphaned"]:
            parts.append(f"{self.counts['orphaned']} ORPHANED (the outputs hold no such output; kept, never applied)")
        return ", ".join(parts)


def check_texts(records: Sequence[tuple[int, dict[str, object]]],
                hashes: Mapping[tuple[str, str], str] | None) -> TextCheck:
    """Sort :func:`read_ledger`'s records by the text they were made on.

    ``hashes``: the current :func:`~empathy.labels.records.text_hash` of every output of the data set the records go
    to (:func:`~empathy.labels.records.output_hashes`), or ``None`` when no outputs are at hand. A record is
    *fresh* when its ``text_hash`` is the output's, *stale* when it differs or is empty (a decision that names no
    text is never taken as made on this one), *orphaned* when ``hashes`` holds no such output, and *unchecked*
    when it has a hash but there are no ``hashes`` to compare it with.
    """
    counts = dict.fromkeys(TEXT_STATES, 0)
    first: dict[str, tuple[int, str]] = {}
    for row_number, record in records:
        digest = str(record.get("text_hash") or "")
        key = (str(record["item_id"]), str(record["model"]))
        if hashes is not None and key not in hashes:
            state, why = "orphaned", f"the outputs hold no output ({key[0]!r}, {key[1]!r})"
        elif not digest:
            state, why = "stale", ("no text hash: the decision does not name the text it was made on "
                                   "(docs/ledger-format.md gives the formula)")
        elif hashes is None:
            state, why = "unchecked", ""
        elif digest != hashes[key]:
            state, why = "stale", (f"made on other text: the output's text now hashes to {hashes[key]}, the record "
                                   f"says {digest}")
        else:
            state, why = "fresh", ""
        counts[state] += 1
        if why and state not in first:
            first[state] = (row_number, why)
    return TextCheck(counts, first, hashes is not None)


def import_ledger(store: OverrideStore, path: str | Path, *, dataset_id: str | None = None,
                  annotator: str | None = None, name: str | None = None,
                  hashes: Mapping[tuple[str, str], str] | None = None, allow_stale: bool = False) -> int:
    """Read a ledger (exported by :func:`export_jsonl` or :func:`export_csv`, or written by another tool to the
    contract of docs/ledger-format.md) and apply it as one batch.

    ``dataset_id`` re-targets every record (import into the data set now loaded); otherwise each record's
    own ``dataset_id`` is used. The records take the store's commit order in file order (an exported ledger
    lists them in its store's commit order, so the latest stays the latest). ``annotator`` replaces the file's
    annotator names. ``hashes``: the current text hashes of the outputs the records go to
    (:func:`~empathy.labels.records.output_hashes`; :func:`check_texts`). A record that would be stale (made on
    other text, or with no text hash) or orphaned (no such output in ``hashes``) is refused unless
    ``allow_stale``: such a decision would be kept but never applied, so it is written only when asked for (and
    then counted by :func:`check_texts`). Every record is checked before anything is written, the annotators'
    right to write first; a bad record raises :class:`empathy.io.DataError` naming file, row and column. Returns
    the number of decisions imported.
    """
    records = read_ledger(path, name=name)
    label = name or str(path)
    in_order: list[tuple[tuple[str, str, str], Change]] = []
    for row_number, record in records:
        target = dataset_id if dataset_id is not None else str(record.get("dataset_id", ""))
        if not target:
            raise DataError(label, "empty value", row=row_number, column="dataset_id")
        who = annotator if annotator is not None else str(record.get("annotator", ""))
        if not who.strip():
            raise DataError(label, "empty value", row=row_number, column="annotator")
        problem = person_name_problem(who.strip())
        if problem is not None:  # the name given for every record, else this record's
            raise (ValueError(f"annotator {who.strip()!r}: {problem}") if annotator is not None
                   else DataError(label, problem, row=row_number, column="annotator"))
        role = str(record.get("role") or "annotator")
        if role not in ROLES:
            raise DataError(label, f"unknown role {role!r} (use {', '.join(ROLES)})", row=row_number,
                            column="role")
        try:
            value = validate_value(str(record["dimension"]), record["value"])
        except (TypeError, ValueError) as exc:
            raise DataError(label, str(exc), row=row_number, column="value") from None
        change = Change(str(record["item_id"]), str(record["model"]), str(record["rater"]),
                        str(record["dimension"]), value, str(record.get("reason", "")), str(record["text_hash"]),
                        record["judge_value"], str(record.get("judge_signature") or ""),  # type: ignore[arg-type]
                        str(record["audit_design"]), record["audit_position"])  # type: ignore[arg-type]
        in_order.append(((target, who.strip(), role), change))
    if not in_order:
        return 0
    for who, role in dict.fromkeys((who, role) for (_, who, role), _ in in_order):
        store.require(who, "adjudicate" if role == "adjudicator" else "decide")
    if not allow_stale:
        check = check_texts(records, hashes)
        for state in ("stale", "orphaned"):
            if state in check.first:
                row_number, why = check.first[state]
                raise DataError(label, f"{why}; {check.counts[state]} such record(s), nothing was imported ("
                                "store import --allow-stale keeps them as stale)", row=row_number,
                                column="text_hash" if state == "stale" else "item_id")
    # an imported ledger's designs may not be in this store: its marks are kept as written, and the estimators
    # read only marks that match a stored design
    store.write_batch(in_order, action="import", check_audit=False)
    return len(in_order)


# ------------------------------------------------------------------------------------------ a whole store

def store_rows(store: OverrideStore) -> tuple[list[tuple], list[tuple]]:
    """Every decision row (:data:`~empathy.labels.schema.OVERRIDE_ROW_COLUMNS`) and audit row
    (:data:`~empathy.labels.schema.AUDIT_COLUMNS`), as stored.

    The raw material of :func:`migrate_store`: ids, batches, undo links and the commit order included.
    """
    decisions = store.fetch(f"SELECT {', '.join(OVERRIDE_ROW_COLUMNS)} FROM overrides ORDER BY dataset_id, "
                            "item_id, model, rater, dimension, annotator, role")
    audit = store.fetch(f"SELECT {', '.join(AUDIT_COLUMNS)} FROM audit ORDER BY id")
    return decisions, audit


def queue_rows(store: OverrideStore) -> tuple[list[tuple], list[tuple]]:
    """Every skip (:data:`~empathy.labels.schema.SKIP_COLUMNS`) and assignment
    (:data:`~empathy.labels.schema.ASSIGNMENT_COLUMNS`) row, as stored (the team's queue state, for migration)."""
    skips = store.fetch(f"SELECT {', '.join(SKIP_COLUMNS)} FROM skips ORDER BY dataset_id, dimension, annotator, "
                        "item_id, model")
    assignments = store.fetch(f"SELECT {', '.join(ASSIGNMENT_COLUMNS)} FROM assignments ORDER BY dataset_id, "
                              "annotator, position, item_id, model")
    return skips, assignments


def _insert_all(connection: object, table: str, columns: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    if rows:
        connection.executemany(  # type: ignore[attr-defined]
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)})",
            [tuple(row) for row in rows])


def restore(store: OverrideStore, decisions: Sequence[Sequence[object]], audit: Sequence[Sequence[object]],
            exhibits: Sequence[Sequence[object]] = (), *, skips: Sequence[Sequence[object]] = (),
            assignments: Sequence[Sequence[object]] = (), designs: Sequence[Sequence[object]] = (),
            design_outputs: Sequence[Sequence[object]] = ()) -> None:
    """Write the rows of :func:`store_rows`, :func:`~empathy.labels.exhibit_list.exhibit_rows`, :func:`queue_rows`
    and :func:`~empathy.labels.audits.design_rows` (of another store) into ``store``, which must be empty; one
    transaction.

    Audit ids, batches, undo links and the commit order are kept, so the copy's history,
    :meth:`~empathy.labels.sqlite.OverrideStore.undo_last` and :meth:`~empathy.labels.sqlite.OverrideStore.version`
    continue where the source's stopped; exhibits keep their order and notes, skips and assignments their
    annotators and order, audit designs their rows (and so their digests). Raises
    :class:`~empathy.labels.locations.StoreError` when the store already holds decisions, audit rows, exhibits,
    skips, assignments or audit designs (nothing is written).
    """
    with store.transaction() as connection:
        held = connection.execute("SELECT (SELECT COUNT(*) FROM overrides) + (SELECT COUNT(*) FROM audit) "
                                  "+ (SELECT COUNT(*) FROM exhibits) + (SELECT COUNT(*) FROM skips) "
                                  "+ (SELECT COUNT(*) FROM assignments) + (SELECT COUNT(*) FROM audit_designs)"
                                  ).fetchone()[0]
        if held:
            raise StoreError(store.label, f"already holds {held} decision, audit, exhibit, skip, assignment and audit "
                             "design rows; migrate into an empty store (nothing was written)")
        _insert_all(connection, "exhibits", ("dataset_id", *EXHIBIT_COLUMNS), exhibits)
        _insert_all(connection, "audit_designs", ("dataset_id", *DESIGN_COLUMNS), designs)
        _insert_all(connection, "audit_design_outputs", ("dataset_id", "digest", *DESIGN_OUTPUT_COLUMNS),
                    design_outputs)
        _insert_all(connection, "overrides", OVERRIDE_ROW_COLUMNS, decisions)
        _insert_all(connection, "audit", AUDIT_COLUMNS, audit)
        _insert_all(connection, "skips", SKIP_COLUMNS, skips)
        _insert_all(connection, "assignments", ASSIGNMENT_COLUMNS, assignments)
        store.after_restore(connection)


@dataclass(frozen=True)
class MigrationReport:
    """What :func:`migrate_store` copied: row counts, the data-set names it translated, and both locations."""

    source: str
    target: str
    decisions: int
    audit: int
    renamed: dict[str, str]
    exhibits: int = 0
    skips: int = 0
    assignments: int = 0
    designs: int = 0

    def summary(self) -> str:
        """One line for the CLI (locations with passwords masked)."""
        queue = f" (with {self.skips} skips and {self.assignments} assignments)" if self.skips or self.assignments \
            else ""
        line = (f"migrated {self.decisions} decisions, {self.audit} audit rows and {self.exhibits} exhibits{queue} "
                f"from {self.source} to {self.target}")
        if self.designs:
            line += f"; {self.designs} audit design{'s' if self.designs != 1 else ''}"
        if self.renamed:
            line += "; data sets renamed: " + ", ".join(f"{old} -> {new}" for old, new in self.renamed.items())
        return line


def _renames(origin: OverrideStore, names: Sequence[str], target: str | Path, rename: Mapping[str, str] | None,
             translate_names: bool) -> dict[str, str]:
    """The new name of each data set whose name changes in the copy (see :func:`migrate_store`)."""
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
    return mapping


def migrate_store(source: str | Path, target: str | Path, *, rename: Mapping[str, str] | None = None,
                  translate_names: bool = True) -> MigrationReport:
    """Copy every decision, the whole audit trail, the pinned exhibits, the queue state (skips, assignments) and
    the audit designs of one store into another, empty one (any two backends).

    One transaction on the target: all or nothing, verified by reading the copy back. A data set is named by its
    outputs file *relative to the store* (:func:`~empathy.labels.records.dataset_name`), so with
    ``translate_names`` a SQLite source's name that is a data file (relative to the source's folder, or
    absolute) is renamed to that file's name in the target (on a server: ``<folder>/<file>``, the same on every
    annotator's machine). ``rename`` maps further names explicitly (and wins). Raises
    :class:`~empathy.labels.locations.StoreError` for an unusable store or a target that is not empty,
    :class:`ValueError` for a source equal to the target.
    """
    if not is_server_location(source) and not is_server_location(target):
        if Path(source).expanduser().resolve() == Path(target).expanduser().resolve():
            raise ValueError(f"migrate: the source and the target are the same store ({source})")
    elif str(source).strip() == str(target).strip():
        raise ValueError(f"migrate: the source and the target are the same store ({mask_location(source)})")
    if not is_server_location(source) and not Path(source).exists():
        raise StoreError(str(source), "no such store (nothing was written)")
    origin = open_for_reading(source)
    try:
        return _copy_store(origin, target, rename, translate_names)
    finally:
        _close(origin)


def _close(store: OverrideStore) -> None:
    """Close a server store's idle connections (a SQLite store holds none)."""
    close = getattr(store, "close", None)
    if close is not None:
        close()


def _copy_store(origin: OverrideStore, target: str | Path, rename: Mapping[str, str] | None,
                translate_names: bool) -> MigrationReport:
    """:func:`migrate_store`'s copy from an opened source."""
    decisions, audit = store_rows(origin)
    exhibits = exhibit_rows(origin)
    skips, assignments = queue_rows(origin)
    designs, design_outputs = design_rows(origin)
    names = sorted({str(row[0]) for row in (*decisions, *exhibits, *skips, *assignments, *designs)}
                   | {str(row[2]) for row in audit})
    mapping = _renames(origin, names, target, rename, translate_names)
    decisions, exhibits, skips, assignments = ([(mapping.get(str(row[0]), row[0]), *row[1:]) for row in rows]
                                               for rows in (decisions, exhibits, skips, assignments))
    audit = [(*row[:2], mapping.get(str(row[2]), row[2]), *row[3:]) for row in audit]
    designs, design_outputs = ([(mapping.get(str(row[0]), row[0]), *row[1:]) for row in rows]
                               for rows in (designs, design_outputs))
    copy = open_store(target)
    try:
        restore(copy, decisions, audit, exhibits, skips=skips, assignments=assignments, designs=designs,
                design_outputs=design_outputs)
        copied = (*store_rows(copy), exhibit_rows(copy), *queue_rows(copy), *design_rows(copy))
    finally:
        _close(copy)
    sent = (decisions, audit, exhibits, skips, assignments, designs, design_outputs)
    if tuple(map(len, copied)) != tuple(map(len, sent)):
        raise StoreError(copy.label, "the copy holds " + ", ".join(
            f"{len(c)} {what} (not {len(s)})" for c, s, what in zip(
                copied, sent, ("decisions", "audit rows", "exhibits", "skips", "assignments", "audit designs",
                               "drawn outputs"), strict=True)))
    return MigrationReport(origin.label, copy.label, len(decisions), len(audit), mapping, len(exhibits),
                           len(skips), len(assignments), len(designs))
