"""The guards every data file reader shares: long CSV fields, blank CSV rows, lone surrogates, Parquet metadata.

:mod:`empathy.io` (outputs and ratings files, uploads) and :mod:`empathy.labels.transfer` (ledgers) read files
through these, so a file that would otherwise stop a parser with a traceback is a :class:`empathy.files.DataError`
naming the file, the row and the column, and a file that is merely unusual is read as a spreadsheet would read it:

* **CSV fields of any length.** Python's ``csv`` module stops at 131,072 characters a field (``_csv.Error``); a
  generation or a reason can be longer, so every CSV reader here lifts that limit (:func:`csv_records`). A
  *column name* longer than :data:`MAX_COLUMN_NAME` characters is an error naming its position: such a name is a
  damaged header, never a field or a rater anyone can read.
* **Rows as a spreadsheet numbers them.** A blank line is a row to a spreadsheet and is skipped by pandas, so
  rows after it would be reported too early; :func:`csv_file_rows` gives each record's spreadsheet row.
* **An Excel byte-order mark** (``CSV UTF-8`` in Excel writes one) at the start of a CSV or JSONL file is an
  encoding mark, not part of the first column's name: it is dropped (``utf-8-sig``).
* **Lone surrogates.** A JSON string may escape half of a UTF-16 pair (``"\\ud800"``), which is no character:
  it cannot be written as UTF-8 to a store, a cache or a terminal. :func:`lone_surrogate` finds one; the readers
  report it on its line and key.
* **Parquet metadata.** The ``pandas`` key of a Parquet schema says how to rebuild an index; when it is damaged
  (not JSON, not the documented shape, or naming an index column the file does not hold) the file is refused
  naming what is wrong, not read by guessing which columns were meant (:func:`read_parquet`). pandas' own
  ``PANDAS_ATTRS`` key is ignored: a data frame's ``attrs`` carry the readers' row numbers, never a file's claims.
  Decimal columns are read as their exact digits (``1.00``), so a rating is checked as written.
"""

from __future__ import annotations

import csv
import json
import mmap
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

import pandas as pd

from empathy.files import DataError

#: The longest CSV field the readers accept: as long as a Python string the ``csv`` module can hold.
CSV_FIELD_LIMIT = 2**31 - 1
#: The longest column name accepted (in characters): a rater or metadata name, shown in tables and charts.
MAX_COLUMN_NAME = 1_000
#: The encoding of every text data file: UTF-8, a leading byte-order mark dropped.
TEXT_ENCODING = "utf-8-sig"


def csv_records(handle: TextIO) -> Iterator[list[str]]:
    """The records of a CSV file opened with ``newline=""``, fields of any length (:data:`CSV_FIELD_LIMIT`)."""
    csv.field_size_limit(CSV_FIELD_LIMIT)  # long generations are data, not an attack on the csv module
    return csv.reader(handle)


def csv_dict_records(handle: TextIO) -> csv.DictReader:
    """:func:`csv_records` as a :class:`csv.DictReader` (the header row gives the keys)."""
    csv.field_size_limit(CSV_FIELD_LIMIT)
    return csv.DictReader(handle)


def check_name_length(name: str, position: int, count: int, label: str, *, row: int | None) -> None:
    """:class:`DataError` naming column ``#position`` when its name is longer than :data:`MAX_COLUMN_NAME`."""
    if len(name) > MAX_COLUMN_NAME:
        raise DataError(label, f"column {position} of {count} has a name of {len(name):,} characters (at most "
                        f"{MAX_COLUMN_NAME:,}): a damaged header?", row=row, column=f"#{position}")


def blank_record(record: list[str]) -> bool:
    """Whether a CSV record is a line pandas skips: empty, or one field of only spaces and tabs."""
    return not record or (len(record) == 1 and not record[0].strip(" \t"))


# A line holding nothing or only spaces and tabs, after a line break (the header is never such a line).
_BLANK_LINE = re.compile(rb"[\r\n][ \t]*(?:\r\n|\r|\n)")


def may_hold_blank_lines(path: Path) -> bool:
    """Whether a CSV file may hold a blank line after its first (one memory-mapped scan; ``False`` is sure)."""
    if path.stat().st_size == 0:
        return False
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
        return _BLANK_LINE.search(data) is not None


def csv_file_rows(path: Path) -> list[int] | None:
    """The spreadsheet row (header = 1) of every record pandas reads from a CSV file, blank rows counted.

    ``None`` when the file has no blank line (then record ``k`` of the data is row ``k + 2``). Linear: one scan,
    and one pass of the ``csv`` module only when a blank line is there.
    """
    if not may_hold_blank_lines(path):
        return None
    rows: list[int] = []
    with path.open(encoding=TEXT_ENCODING, newline="") as handle:
        records = csv_records(handle)
        next(records, None)
        for row, record in enumerate(records, start=2):
            if not blank_record(record):
                rows.append(row)
    return rows


# A JSON escape of a UTF-16 surrogate (half of a pair): only lines holding one are walked.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def may_hold_surrogate(raw: bytes) -> bool:
    """Whether a JSON line escapes a UTF-16 surrogate (a pair is fine; :func:`lone_surrogate` tells)."""
    return b"\\u" in raw and _SURROGATE_ESCAPE.search(raw) is not None


def lone_surrogate(record: dict[str, object]) -> tuple[str, str] | None:
    """``(top-level key, surrogate)`` of the first lone surrogate in a decoded JSON object's keys or strings.

    Walked with a stack (no recursion), so any nesting the JSON parser accepted is walked.
    """
    for key, value in record.items():
        stack: list[object] = [key, value]
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                found = _surrogate_in(item)
                if found is not None:
                    return str(key).encode("utf-8", "backslashreplace").decode("ascii"), found
            elif isinstance(item, dict):
                for pair in item.items():
                    stack.extend(pair)
            elif isinstance(item, list):
                stack.extend(item)
    return None


def _surrogate_in(text: str) -> str | None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return text[exc.start]
    return None


def surrogate_message(character: str) -> str:
    """What is wrong with a lone surrogate, for a :class:`DataError`."""
    return (f"lone surrogate \\u{ord(character):04x} in a JSON string (half of a UTF-16 pair, not a character: "
            "the text was cut or mis-encoded)")


def read_parquet(path: Path, label: str) -> pd.DataFrame:
    """A Parquet file as :func:`pandas.read_parquet` reads it, with damaged pandas metadata an error.

    Decimal columns become their exact digits as text; ``attrs`` start empty. Raises :class:`DataError` naming
    ``label`` (and the index column a damaged metadata names); an unreadable file raises what pyarrow raises.
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path, use_pandas_metadata=True)
    except pa.ArrowException as exc:  # a column type this pyarrow cannot read is the file's problem
        raise DataError(label, f"cannot read file: {str(exc).strip() or type(exc).__name__}") from None
    _check_pandas_metadata(table.schema, label)
    for index, column in enumerate(table.schema):
        if pa.types.is_decimal(column.type):
            table = table.set_column(index, column.name, pc.cast(table.column(index), pa.string()))
    try:
        frame = table.to_pandas()
    except (KeyError, TypeError, IndexError, AttributeError, ValueError) as exc:
        raise DataError(label, f"its pandas metadata (the schema's 'pandas' key) cannot be applied ({exc!s:.200}): "
                        "rewrite the file, or remove that key") from None
    frame.attrs = {}
    return frame


def _check_pandas_metadata(schema: object, label: str) -> None:
    """:class:`DataError` unless the schema's ``pandas`` key is absent or of the shape pyarrow reads."""
    metadata = getattr(schema, "metadata", None) or {}
    raw = metadata.get(b"pandas")
    if raw is None:
        return

    def damaged(what: str, column: str | None = None) -> DataError:
        return DataError(label, f"its pandas metadata (the schema's 'pandas' key) {what}: rewrite the file, or "
                         "remove that key", column=column)

    try:
        meta = json.loads(raw)
    except (ValueError, RecursionError):
        raise damaged("is not JSON") from None
    if not isinstance(meta, dict):
        raise damaged(f"is a JSON {type(meta).__name__}, not an object")
    for key in ("index_columns", "columns", "column_indexes"):
        if key in meta and not isinstance(meta[key], list):
            raise damaged(f"has '{key}' of type {type(meta[key]).__name__}, not a list")
    if not all(isinstance(c, dict) for c in meta.get("columns", [])):
        raise damaged("has a 'columns' entry that is not an object")
    names = set(schema.names)  # type: ignore[attr-defined]
    for index in meta.get("index_columns", []):
        if isinstance(index, str):
            if index not in names:
                raise damaged(f"names the index column {index!r}, which the file does not hold", column=index)
        elif not (isinstance(index, dict) and index.get("kind") == "range"):
            raise damaged(f"has an index entry of type {type(index).__name__} (a column name or a range)")
