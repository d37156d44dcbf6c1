"""Load and validate model outputs and ratings.

Data model
----------
*Outputs*: one row per (item, model) with ``item_id``, ``model``, ``reference``, ``generation`` and an optional
``task``; any other column is kept as metadata. A column named ``<rater>:<dimension>`` (for example
``gpt-5.2:ca``) is a rating in *wide form* and is moved into the ratings table.

*Ratings* (long form): ``item_id``, ``model``, ``rater``, ``dimension``, ``value`` and the optional
``rater_kind`` (llm, human, lexicon, crowd, expert, author), ``reason`` (why a value is missing) and
``signature`` (the reproducibility signature of the rater that produced it). An empty ``value`` is a missing
rating: it is kept (with its reason) and never read as 0.

The paper's judge dimensions are checked against their range (:data:`DIMENSION_RANGES`); any other dimension
name is allowed and kept unchecked, since other rubrics use other scales, except a different spelling of a
paper's dimension (``CA``, full-width ``ｃａ``, ``ca`` + a zero-width space: equal after NFKC, case folding and
removing invisible characters), which is an error naming the paper's name (:mod:`empathy.identifiers`).

Every validation problem raises :class:`DataError`, whose one-line message names the file, the row (1-based,
counting the header of a CSV as row 1 so that it matches a spreadsheet) and the column.

Numbers are ASCII decimals (``0.5``, ``-1``, ``1e3``): ``1_000``, Arabic-Indic or full-width digits, which
Python's ``float`` would accept, are rejected, since a spreadsheet would read them as text. A boolean (JSON
``true``, a Parquet bool) is not a number. A value is checked as written: a binary label is exactly 0 or 1
(``0.99999999999999999``, which a float rounds to 1, is rejected; ``1.0`` and ``1.000`` are 1), and a range
is checked on the written number (``1.00000000000000001`` is above 1). A key given twice in one JSON object
is an error (JSON readers keep the last value silently).

Identifiers (``item_id``, ``model``, ``task``, ``rater``, ``dimension``) are whitespace-stripped in every table,
so ``"x "`` in an outputs file and ``"x"`` in a ratings file are the same item. An identifier holding an
invisible character (zero-width space, joiner, bidirectional control, soft hyphen, ...: Unicode's
Default_Ignorable_Code_Point) is rejected, not normalised, so ``1`` and ``1`` + U+200B can never be two items
(see :mod:`empathy.identifiers`). Every column needs a name: an empty or blank header cell (a trailing comma)
is an error naming its position.

CSV files the project writes for people neutralise formula-like cells (``=...`` becomes ``'=...``, see
:func:`empathy.escaping.spreadsheet_cell`); :func:`read_table` removes that prefix again, so such a file reads
back exactly. JSONL and Parquet are machine formats and are written and read unchanged.
"""

from __future__ import annotations

import csv
import json
import math
import mmap
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cached_property
from pathlib import Path
from typing import TextIO

import numpy as np
import pandas as pd

from empathy.escaping import spreadsheet_cell, unspreadsheet_cell
from empathy.files import (  # noqa: F401 - re-exported: empathy.io is where callers look for them
    RATINGS_SUFFIXES,
    SUPPORTED_SUFFIXES,
    DataError,
    DuplicateKeyError,
    check_data_file,
    unique_keys,
)
from empathy.identifiers import INVISIBLE, INVISIBLE_CLASS, identifier_problem, near_misses

# The judge dimensions (Eq. 1-3) and their closed ranges: the one table of the metric registry (re-exported).
from empathy.metrics import BINARY_DIMENSIONS, DIMENSION_RANGES  # noqa: F401
from empathy.raw_files import (
    TEXT_ENCODING,
    blank_record,
    check_name_length,
    csv_file_rows,
    csv_records,
    lone_surrogate,
    may_hold_surrogate,
    read_parquet,
    surrogate_message,
)

OUTPUT_REQUIRED: tuple[str, ...] = ("item_id", "model", "reference", "generation")
OUTPUT_OPTIONAL: tuple[str, ...] = ("task",)
RATING_REQUIRED: tuple[str, ...] = ("item_id", "model", "rater", "dimension", "value")
RATING_OPTIONAL: tuple[str, ...] = ("rater_kind", "reason", "signature")
RATING_COLUMNS: tuple[str, ...] = RATING_REQUIRED + RATING_OPTIONAL
RATER_KINDS: frozenset[str] = frozenset({"llm", "human", "lexicon", "crowd", "expert", "author", ""})

WIDE_SEPARATOR = ":"
#: Text cells read as a missing value (case-insensitive, after stripping).
MISSING_WORDS: frozenset[str] = frozenset({"", "nan", "na", "null", "none"})
# ASCII only: Python's float() also takes "1_000", Arabic-Indic and full-width digits, which no spreadsheet does.
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
_INFINITY = re.compile(r"[+-]?(?:inf|infinity)", re.ASCII | re.IGNORECASE)


def _display_row(frame_index: int, suffix: str) -> int:
    """File row number of a data-frame row: CSV counts the header as row 1, JSONL counts lines from 1."""
    return frame_index + 2 if suffix == ".csv" else frame_index + 1


def _file_rows(frame: pd.DataFrame, suffix: str) -> np.ndarray:
    """The file row of every row of a frame from :func:`read_table` (see :func:`file_row`)."""
    lines = frame.attrs.get("lines")
    if lines is not None and len(lines) == len(frame):
        return np.asarray(lines, dtype=np.int64)
    return np.arange(len(frame)) + (2 if suffix == ".csv" else 1)


def file_row(frame: pd.DataFrame, position: int) -> int:
    """The file row of row ``position`` of a frame from :func:`read_table` (or validated from one).

    CSV counts the header as row 1; JSONL counts lines, blank ones included (the reader keeps their numbers).
    """
    lines = frame.attrs.get("lines")
    if lines is not None and position < len(lines):
        return int(lines[position])
    return _display_row(position, frame.attrs.get("suffix", ".csv"))


def read_table(path: str | Path, *, name: str | None = None) -> pd.DataFrame:
    """Read a CSV, JSONL or Parquet file into a data frame of strings and numbers.

    ``name`` is the name used in error messages (an uploaded file's name, say); it defaults to ``path``.
    Raises :class:`DataError` for a missing, empty, unreadable or unsupported file, naming the row where one
    applies (bytes that are not UTF-8, a CSV row with fewer or more fields than the header, a JSONL line that
    is not a JSON object).
    """
    path = Path(path)
    label = name or str(path)
    suffix = check_data_file(path, name=name)
    try:
        if suffix == ".csv":
            frame = _read_csv(path, label)
        elif suffix in (".jsonl", ".json"):
            frame = _read_jsonl(path, label)
        else:
            frame = read_parquet(path, label)
    except DataError:
        raise
    except UnicodeDecodeError as exc:
        # pandas decodes in chunks, so exc.start is chunk-relative: find the real line and byte
        line, byte, reason = _first_bad_utf8(path)
        raise DataError(label, f"not UTF-8 text (byte {byte} of the line: {reason or exc.reason})", row=line) from None
    except pd.errors.ParserError as exc:
        message = " ".join(str(exc).split())
        found = re.search(r"in line (\d+)", message)
        raise DataError(label, f"malformed CSV: {message}", row=int(found.group(1)) if found else None) from None
    except (pd.errors.EmptyDataError, ValueError, OSError, OverflowError, RecursionError) as exc:
        raise DataError(label, f"cannot read file: {str(exc).strip() or type(exc).__name__}") from None
    frame.columns = [str(c).strip() for c in frame.columns]
    _check_column_names(list(frame.columns), label)
    frame.attrs["source"] = label
    frame.attrs["suffix"] = suffix
    return frame


def _first_bad_utf8(path: Path) -> tuple[int | None, int, str]:
    """``(line, byte within the line, reason)`` of the first bytes that are not UTF-8 (1-based line)."""
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                return number, exc.start, exc.reason
    return None, 0, ""


def _read_csv(path: Path, label: str) -> pd.DataFrame:
    header = _check_csv_header(path, label)
    frame = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""], encoding="utf-8")
    # A short row leaves its last cells empty, which pandas cannot tell from empty cells: only then re-read
    # the rows with the csv module to find it (most files have a non-empty last column and skip this).
    if len(header) > 1 and len(frame) and frame.iloc[:, -1].isna().any():
        _check_short_rows(path, label, header)
    if _may_hold_quoted_cells(path):
        for column in frame.columns:
            values = frame[column]
            quoted = values.str.startswith("'", na=False)
            if quoted.any():
                frame.loc[quoted, column] = values[quoted].map(unspreadsheet_cell)
    rows = csv_file_rows(path)  # blank lines are rows to a spreadsheet, and pandas skips them
    if rows is not None and len(rows) == len(frame):
        frame.attrs["lines"] = rows
    return frame


# A cell that starts with ' (a field start: file start, comma or line break, then an optional opening quote).
_QUOTED_CELL = re.compile(rb"(?:\A|[,\r\n])\"?'")


def _may_hold_quoted_cells(path: Path) -> bool:
    """Whether any CSV cell may start with ``'`` (the spreadsheet prefix :func:`unspreadsheet_cell` removes).

    One scan of the bytes (memory-mapped): most files have no such cell, and then no column is looked at, so a
    header of 100,000 columns costs no 100,000 column scans. The scan jumps from ``'`` to ``'`` (``find`` is a
    fast byte search) and looks at the one or two bytes before each: the same answer as :data:`_QUOTED_CELL`,
    whose alternation made ``re`` try every byte (4 s for 200 MB against 0.2 s).
    """
    if path.stat().st_size == 0:
        return False
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
        return _quoted_cell_at(data) is not None


_FIELD_START = frozenset(b",\r\n")


def _quoted_cell_at(data: bytes | mmap.mmap) -> int | None:
    """Offset of the first ``'`` that starts a cell (as :data:`_QUOTED_CELL` finds it), or ``None``."""
    position = data.find(b"'")
    while position >= 0:
        before = data[position - 1] if position >= 1 else None
        if before is None or before in _FIELD_START:
            return position
        if before == ord('"') and (position == 1 or data[position - 2] in _FIELD_START):
            return position
        position = data.find(b"'", position + 1)
    return None


def _check_csv_header(path: Path, label: str) -> list[str]:
    # pandas silently renames a repeated header ("model" -> "model.1") and names an empty one ("Unnamed: 5",
    # which has a ':' and would be read as a wide rating column): both are errors here, on the raw header.
    with path.open(encoding=TEXT_ENCODING, newline="") as handle:
        header = [h.strip() for h in next(csv_records(handle), [])]
    _check_column_names(header, label, row=1)
    return header


def _blank_name(name: str) -> bool:
    return not INVISIBLE.sub("", name).strip()


def _check_column_names(names: list[str], label: str, *, row: int | None = None) -> None:
    """Every column name (already stripped) present and used once; linear in the number of columns.

    An empty or all-whitespace (or all-invisible) name is an error naming its position (``#6``): a trailing
    comma in a CSV header is the usual cause, and a column without a name cannot be a field or a rater.
    """
    seen: set[str] = set()
    for position, name in enumerate(names, start=1):
        if _blank_name(name):
            raise DataError(label, f"column {position} of {len(names)} has no name (a trailing comma in the "
                            "header?): name it or remove it", row=row, column=f"#{position}")
        check_name_length(name, position, len(names), label, row=row)
        if name in seen:
            raise DataError(label, "duplicate column name", row=row, column=name)
        seen.add(name)


def _check_short_rows(path: Path, label: str, header: list[str]) -> None:
    with path.open(encoding=TEXT_ENCODING, newline="") as handle:
        reader = csv_records(handle)
        next(reader, None)
        for row, record in enumerate(reader, start=2):
            if blank_record(record):
                continue  # pandas skips a blank line; it still counts as a spreadsheet row
            if len(record) < len(header):
                raise DataError(label, f"row has {len(record)} fields, the header has {len(header)}", row=row,
                                column=header[len(record)])


class InexactNumber(str):
    """A JSON number that a float would round onto a whole number it does not equal, kept as its text.

    ``0.99999999999999999`` parses to the float ``1.0`` (and ``1e-400`` to ``0.0``): as a rating that is a
    label the file never wrote. The reader keeps such a number as its digits, so the value check sees what was
    written (:func:`validate_ratings` rejects it where it would land on a label or a range bound); anywhere a
    text is expected it is reported as the float it is.
    """


def _json_float(text: str) -> float | InexactNumber:
    value = float(text)
    if value.is_integer() and Decimal(text) != Decimal(value):
        return InexactNumber(text)
    return value


def _kind(value: object) -> str:
    """The type name a message reports for a cell (an :class:`InexactNumber` is the float it was)."""
    return "float" if isinstance(value, InexactNumber) else type(value).__name__


def iter_jsonl(path: Path, label: str) -> Iterator[tuple[int, dict[str, object]]]:
    """Yield ``(line number, object)`` for each non-blank line of a JSONL file; :class:`DataError` otherwise.

    Each line is decoded on its own, so bytes that are not UTF-8 are reported on their line; nesting too deep
    for the parser and integers longer than Python converts are errors of their line, not tracebacks. A key
    given twice in one object is an error (``json`` would keep the last value silently); a number that a float
    would round onto a whole number it does not equal is kept as its text (:class:`InexactNumber`).
    """
    with path.open("rb") as handle:
        for line_number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode(TEXT_ENCODING if line_number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise DataError(label, f"not UTF-8 text (byte {exc.start} of the line: {exc.reason})",
                                row=line_number) from None
            if not line.strip():
                continue
            try:
                record = json.loads(line, object_pairs_hook=unique_keys, parse_float=_json_float)
            except DuplicateKeyError as exc:
                raise DataError(label, f"duplicate key {exc.key!r} in one object (a JSON reader would keep only "
                                "the last value)", row=line_number, column=exc.key) from None
            except json.JSONDecodeError as exc:
                raise DataError(label, f"invalid JSON ({exc.msg})", row=line_number) from None
            except RecursionError:
                raise DataError(label, "invalid JSON (nested too deeply)", row=line_number) from None
            except ValueError as exc:  # e.g. an integer beyond Python's digit limit
                raise DataError(label, f"invalid JSON ({' '.join(str(exc).split())})", row=line_number) from None
            if not isinstance(record, dict):
                raise DataError(label, "each line must be a JSON object", row=line_number)
            surrogate = lone_surrogate(record) if may_hold_surrogate(raw) else None
            if surrogate is not None:
                raise DataError(label, surrogate_message(surrogate[1]), row=line_number, column=surrogate[0])
            yield line_number, record


def _read_jsonl(path: Path, label: str) -> pd.DataFrame:
    lines: list[int] = []
    records: list[dict[str, object]] = []
    for line_number, record in iter_jsonl(path, label):
        lines.append(line_number)
        records.append(record)
    if not records:
        raise DataError(label, "file has no records")
    frame = pd.DataFrame.from_records(records)
    blank = next((str(c) for c in frame.columns if _blank_name(str(c))), None)
    if blank is not None:
        line = next(lines[k] for k, record in enumerate(records) if blank in record)
        raise DataError(label, f"a key with no name ({blank!r}): name it or remove it", row=line,
                        column=blank)
    # A key absent from a record reads as NaN like an explicit null; keep where each column was first absent,
    # so a required column missing from one record is an error on that line (an explicit null is a value).
    # One isna() over the whole frame: a record of 100,000 keys must not cost 100,000 column scans.
    absent: dict[str, int] = {}
    missing = frame.isna().to_numpy()
    for index in np.flatnonzero(missing.any(axis=0)):
        column = frame.columns[index]
        for position in np.flatnonzero(missing[:, index]):
            if column not in records[position]:
                absent[str(column)] = lines[position]
                break
    frame.attrs["absent"] = absent
    if lines[-1] != len(lines):  # blank lines: keep the line numbers for error messages
        frame.attrs["lines"] = lines
    return frame


def _check_required(frame: pd.DataFrame, required: Iterable[str], label: str) -> None:
    absent = frame.attrs.get("absent", {})
    for column in required:
        if column not in frame.columns:
            raise DataError(label, f"missing required column (have: {', '.join(map(str, frame.columns))})",
                            column=column)
        if column in absent:
            raise DataError(label, "missing key in this record", row=absent[column], column=column)


def left_join(left: pd.DataFrame, right: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """``left.merge(right, on=keys, how="left")``, the same frame, taken by position when it can be.

    When every row of ``left`` finds exactly one row of ``right`` (keys unique there), the result is ``left`` with
    ``right``'s other columns in the order of ``left``'s rows (``left``'s index kept): a results table's few hundred
    rows cost a pandas join about 10 ms, a dictionary of their keys well under one. Otherwise (a key missing or
    repeated in ``right``) it is the join itself, with its index from 0.
    """
    keys = list(keys)
    position = {key: row for row, key in enumerate(zip(*(right[k].tolist() for k in keys), strict=True))}
    rows = [position.get(key, -1) for key in zip(*(left[k].tolist() for k in keys), strict=True)]
    if len(position) < len(right) or -1 in rows:
        return left.merge(right, on=keys, how="left")
    found = right.drop(columns=keys).iloc[rows].set_axis(left.index)
    return pd.concat([left, found], axis=1)


def require_frame(frame: object, columns: Iterable[str], what: str) -> None:
    """Check that an argument is a DataFrame with ``columns`` (for functions handed a table, not a file).

    Parameters
    ----------
    frame : object
        The argument.
    columns : Iterable[str]
        The columns it must have.
    what : str
        How the message names it (e.g. ``"ratings"``, ``"the results table"``).

    Raises
    ------
    TypeError
        When ``frame`` is not a pandas DataFrame.
    ValueError
        Naming every one of ``columns`` it lacks.
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"{what} must be a pandas DataFrame, got {type(frame).__name__}")
    missing = [str(c) for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{what} lacks the column(s) {', '.join(missing)}")


def _type_names(values: pd.Series) -> pd.Series:
    return values.map(_kind)


def _check_text_cells(frame: pd.DataFrame, columns: Iterable[str], label: str, *, allow_empty: bool = False
                      ) -> None:
    """Every cell text or a whole number (JSON ids may be numbers); missing only with ``allow_empty``."""
    for column in columns:
        values = frame[column]
        missing = values.isna().to_numpy()
        if not allow_empty and missing.any():
            raise DataError(label, "empty value", row=file_row(frame, int(np.flatnonzero(missing)[0])),
                            column=column)
        if isinstance(values.dtype, pd.StringDtype) or pd.api.types.is_integer_dtype(values.dtype):
            continue
        kinds = _type_names(values)
        # bool is an int to Python, but `true` as an item_id is a mistake, not the id "True"
        bad = ~kinds.isin(("str", "int", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                           "uint64")).to_numpy() & ~missing
        if bad.any():
            position = int(np.flatnonzero(bad)[0])
            raise DataError(label, f"expected text, got {kinds.iat[position]}", row=file_row(frame, position),
                            column=column)


def _string_column(values: pd.Series) -> pd.Series:
    """Cells as Python strings, missing cells (None, NaN, pd.NA) as ``""``."""
    if isinstance(values.dtype, pd.StringDtype):
        # a CSV column is text already: the same result without a Python object per cell (seconds at millions)
        return values.fillna("").astype(str)
    return values.astype(object).where(values.notna(), "").astype(str)


def _strings(frame: pd.DataFrame, column: str) -> pd.Series:
    return _string_column(frame[column]) if column in frame.columns else pd.Series("", index=frame.index)


def validate_outputs(frame: pd.DataFrame, *, name: str = "<outputs>") -> tuple[pd.DataFrame, pd.DataFrame]:
    """Validate an outputs table; return ``(outputs, wide_ratings)``.

    ``wide_ratings`` holds the ratings found in ``<rater>:<dimension>`` columns, in long form (possibly empty).
    ``item_id``, ``model`` and ``task`` are whitespace-stripped, as the ratings' identifiers are.
    """
    label = frame.attrs.get("source", name)
    _check_required(frame, OUTPUT_REQUIRED, label)
    if frame.empty:
        raise DataError(label, "no rows")
    _check_text_cells(frame, ("item_id", "model"), label)
    _check_text_cells(frame, ["reference", "generation", *(c for c in OUTPUT_OPTIONAL if c in frame.columns)],
                      label, allow_empty=True)
    wide_columns = [c for c in frame.columns if WIDE_SEPARATOR in c]
    outputs = frame.drop(columns=wide_columns)  # a new frame (a copy), without the rating columns
    for column in ("item_id", "model", "reference", "generation"):
        outputs[column] = _string_column(outputs[column])
    for column in ("item_id", "model"):
        outputs[column] = outputs[column].str.strip()
        blank = outputs[column] == ""
        if blank.any():
            raise DataError(label, "empty value", row=file_row(frame, int(np.flatnonzero(blank)[0])), column=column)
    outputs["task"] = _strings(outputs, "task").str.strip()
    _check_identifiers(outputs, ("item_id", "model", "task"), lambda position: file_row(frame, position), label)
    # the two key columns only: DataFrame.duplicated(subset) walks every column of the frame
    duplicate = outputs[["item_id", "model"]].duplicated()
    if duplicate.any():
        position = int(np.flatnonzero(duplicate)[0])
        row = outputs.iloc[position]
        raise DataError(label, f"duplicate (item_id, model) = ({row['item_id']}, {row['model']})",
                        row=file_row(frame, position), column="item_id")
    outputs = outputs.reset_index(drop=True)
    if not wide_columns:
        return outputs, empty_ratings()
    wide = _wide_ratings(frame, outputs, wide_columns, label)
    return outputs, _validate_rating_values(wide, label, frame.attrs.get("suffix", ".csv"))


def _check_identifiers(table: pd.DataFrame, columns: Iterable[str], row_of: Callable[[int], int], label: str
                       ) -> None:
    """No identifier cell of ``columns`` (stripped strings) holds an invisible character (see
    :mod:`empathy.identifiers`); :class:`DataError` naming the first one's row, column and character."""
    for column in columns:
        values = table[column]
        hit = values.str.contains(INVISIBLE_CLASS, regex=True).to_numpy(dtype=bool)
        if hit.any():
            position = int(np.flatnonzero(hit)[0])
            raise DataError(label, str(identifier_problem(str(values.iat[position]))), row=row_of(position),
                            column=column)


def _header_row(frame: pd.DataFrame) -> int | None:
    """The file row of the column names: 1 for a CSV header; JSONL and Parquet have no header row."""
    return 1 if frame.attrs.get("suffix", ".csv") == ".csv" else None


def _wide_ratings(frame: pd.DataFrame, outputs: pd.DataFrame, columns: list[str], label: str) -> pd.DataFrame:
    """The ``<rater>:<dimension>`` columns of ``frame`` in long form, keyed by the validated ids of ``outputs``
    (with each cell's file row and column).

    One array per column concatenated, not a frame per column: a file with 100,000 rating
    columns is read in time linear in its width (``bench/bench_wide_header.py``).
    """
    header = _header_row(frame)
    raters, dimensions = [], []
    for column in columns:
        rater, _, dimension = (part.strip() for part in column.partition(WIDE_SEPARATOR))
        if not rater or not dimension:
            raise DataError(label, "wide rating columns must be named '<rater>:<dimension>'", row=header,
                            column=column)
        raters.append(rater)
        dimensions.append(dimension)
    misses = near_misses(dict.fromkeys(dimensions), DIMENSION_RANGES)
    if misses:
        position = next(k for k, d in enumerate(dimensions) if d in misses)
        raise DataError(label, _near_miss_message(dimensions[position], misses[dimensions[position]]), row=header,
                        column=columns[position])
    for column, rater, dimension in zip(columns, raters, dimensions, strict=True):
        problem = identifier_problem(rater) or identifier_problem(dimension)
        if problem:
            raise DataError(label, problem, row=header, column=column)
    n = len(outputs)
    kinds = set(frame.dtypes[columns])
    # column-major (all of column 1, then column 2, ...), one array per column: no frame of the block is built
    cells = np.concatenate([frame[column].to_numpy(dtype=object) for column in columns])
    rows = _file_rows(frame, frame.attrs.get("suffix", ".csv"))
    return pd.DataFrame({
        "item_id": np.tile(outputs["item_id"].to_numpy(dtype=object), len(columns)),
        "model": np.tile(outputs["model"].to_numpy(dtype=object), len(columns)),
        "rater": np.repeat(np.array(raters, dtype=object), n),
        "dimension": np.repeat(np.array(dimensions, dtype=object), n),
        "value": pd.Series(cells, dtype=kinds.pop() if len(kinds) == 1 else object),
        "_row": np.tile(rows, len(columns)),
        "_column": np.repeat(np.array(columns, dtype=object), n),
    })


def _near_miss_message(name: str, known: str) -> str:
    return (f"dimension {name!r} is the paper's {known!r} written differently (case, full-width or invisible "
            f"characters): write {known!r}, or it is kept as an unknown rubric that no metric reads")


def empty_ratings() -> pd.DataFrame:
    """An empty ratings table with the canonical columns and dtypes."""
    frame = pd.DataFrame({c: pd.Series(dtype=str) for c in RATING_COLUMNS})
    frame["value"] = pd.Series(dtype=float)
    return frame


def _first(*masks: np.ndarray) -> int | None:
    """The smallest position that is true in any of ``masks`` (None when none is)."""
    hits = [int(np.flatnonzero(mask)[0]) for mask in masks if mask.any()]
    return min(hits) if hits else None


@dataclass(frozen=True)
class ParsedNumbers:
    """A column read as numbers (:func:`parse_numbers`): the values and, per cell, what was wrong with it.

    ``values`` holds NaN for missing cells (and for cells flagged in ``not_a_number`` or ``boolean``);
    ``written`` marks the cells that were text (a CSV cell, a JSON string, an :class:`InexactNumber`), whose
    digits :func:`validate_ratings` checks as written where a float could have rounded them onto a label.
    """

    values: np.ndarray
    not_a_number: np.ndarray
    boolean: np.ndarray
    written: np.ndarray

    @property
    def infinite(self) -> np.ndarray:
        return np.isinf(self.values)


def parse_numbers(raw: pd.Series) -> ParsedNumbers:
    """Read a column as numbers, vectorised: the one number reader of every table the project reads.

    Missing cells (empty, ``nan``, ``NA``, ``null``, ``None``, NaN, ``pd.NA``) are NaN; numbers and ASCII
    decimal text are floats (``1_000``, Arabic-Indic digits, ``0x10`` are not numbers); a boolean (JSON ``true``, a
    Parquet bool) is flagged, never read as 1 or 0.
    """
    if isinstance(raw.dtype, pd.StringDtype) and len(raw) > _DISTINCT_FROM:
        return _parse_distinct(raw)
    return _parse_cells(raw)


def _parse_cells(raw: pd.Series) -> ParsedNumbers:
    """:func:`parse_numbers`, cell by cell."""
    n = len(raw)
    flags = np.zeros(n, dtype=bool)
    if pd.api.types.is_bool_dtype(raw.dtype):
        return ParsedNumbers(np.full(n, np.nan), flags, raw.notna().to_numpy(dtype=bool), flags)
    if pd.api.types.is_numeric_dtype(raw.dtype):
        return ParsedNumbers(raw.to_numpy(dtype=float, na_value=np.nan), flags, flags, flags)
    values = np.full(n, np.nan)
    bad = np.zeros(n, dtype=bool)
    boolean = np.zeros(n, dtype=bool)
    missing = raw.isna().to_numpy()
    if isinstance(raw.dtype, pd.StringDtype):  # a CSV column: every present cell is text
        is_text = ~missing
    else:
        is_text = raw.map(lambda v: isinstance(v, str)).to_numpy(dtype=bool) & ~missing
    if is_text.any():
        text = raw[is_text].astype(str).str.strip()
        empty = text.str.lower().isin(MISSING_WORDS).to_numpy()
        number = text.str.fullmatch(_NUMBER.pattern, flags=_NUMBER.flags).to_numpy(dtype=bool)
        infinite_text = text.str.fullmatch(_INFINITY.pattern, flags=_INFINITY.flags).to_numpy(dtype=bool)
        parsed = np.full(len(text), np.nan)
        parsed[number] = text[number].astype(float).to_numpy()
        parsed[infinite_text] = np.inf
        values[is_text] = parsed
        bad[np.flatnonzero(is_text)[~(empty | number | infinite_text)]] = True
    others = np.flatnonzero(~is_text & ~missing)
    for position in others:  # numbers mixed with text in one column (JSONL, Parquet objects): few, if any
        value = raw.iat[position]
        if isinstance(value, bool | np.bool_):
            boolean[position] = True
        elif isinstance(value, int | float | np.integer | np.floating):
            try:
                values[position] = float(value)
            except OverflowError:
                bad[position] = True  # a 400-digit integer is no rating
        else:
            bad[position] = True
    return ParsedNumbers(values, bad, boolean, is_text)


#: A text column longer than this is read once per distinct cell (:func:`_parse_distinct`).
_DISTINCT_FROM = 1_000


def _parse_distinct(raw: pd.Series) -> ParsedNumbers:
    """:func:`parse_numbers` of a text column, each distinct cell read once and the results spread back.

    Ratings repeat a few values (0/1 labels, counts, three-decimal intensities), so millions of cells hold
    hundreds of distinct texts: the regular expressions run on those (13 s -> 0.3 s at 3 million cells).
    Only for a text dtype: in an object column ``1``, ``1.0`` and ``True`` are equal keys, and a boolean must
    stay a boolean.
    """
    codes, distinct = pd.factorize(raw, use_na_sentinel=True)
    once = _parse_cells(pd.Series(distinct, dtype=raw.dtype))
    present = codes >= 0
    safe = np.where(present, codes, 0)

    def spread(per_distinct: np.ndarray, missing: float | bool) -> np.ndarray:
        if not len(per_distinct):
            return np.full(len(raw), missing, dtype=np.asarray(missing).dtype)
        return np.where(present, per_distinct[safe], missing)

    return ParsedNumbers(spread(once.values, np.nan), spread(once.not_a_number, False), spread(once.boolean, False),
                         spread(once.written, False))


# Text that is exactly 0 or exactly 1 (any zeros after the point): the fast path of the as-written check.
_EXACT_ZERO = re.compile(r"[+-]?0*\.?0*(?:[eE][+-]?\d+)?", re.ASCII)
_EXACT_ONE = re.compile(r"\+?0*1(?:\.0*)?", re.ASCII)


def _rounded_onto_bounds(raw: pd.Series, parsed: ParsedNumbers, dimensions: np.ndarray) -> np.ndarray:
    """Cells of a known dimension whose float sits on a bound or label but whose written number is outside.

    A float rounds ``0.99999999999999999`` to 1 and ``1.00000000000000001`` to 1: a binary label must be
    exactly 0 or 1 as written, and a range is checked on the written number (``Decimal``), so rounding never
    turns a value the file did not write into a valid one. Only text cells on a bound are looked at, and only
    those the regular expressions cannot settle go through ``Decimal``: linear, and cheap on CA columns.
    """
    out = np.zeros(len(raw), dtype=bool)
    values = parsed.values
    for dimension, (low, high) in DIMENSION_RANGES.items():
        scope = parsed.written & (dimensions == dimension) & ((values == low) | (values == high))
        if not scope.any():
            continue
        positions = np.flatnonzero(scope)
        # each distinct written text is matched once (a CA column is millions of "0" and "1")
        codes, distinct = pd.factorize(raw.iloc[positions].astype(str))
        text = pd.Series(distinct, dtype=str).str.strip()
        zero = text.str.fullmatch(_EXACT_ZERO.pattern, flags=_EXACT_ZERO.flags).to_numpy(dtype=bool)[codes]
        one = text.str.fullmatch(_EXACT_ONE.pattern, flags=_EXACT_ONE.flags).to_numpy(dtype=bool)[codes]
        exact = np.where(values[positions] == 0.0, zero, one)
        for position, written in zip(positions[~exact], text.to_numpy()[codes[~exact]], strict=True):
            number = Decimal(written)
            if dimension in BINARY_DIMENSIONS:
                out[position] = number not in (low, high)
            else:
                out[position] = not low <= number <= high
    return out


def _checked_values(frame: pd.DataFrame, dimensions: np.ndarray, rows: np.ndarray, label: str) -> np.ndarray:
    """The ``value`` column as floats; :class:`DataError` for the first row that is no number or out of range."""
    parsed = parse_numbers(frame["value"])
    values, infinite = parsed.values, parsed.infinite
    present = ~np.isnan(values) & ~infinite
    not_binary = np.zeros(len(frame), dtype=bool)
    out_of_range = np.zeros(len(frame), dtype=bool)
    for dimension, (low, high) in DIMENSION_RANGES.items():
        scope = present & (dimensions == dimension)
        if dimension in BINARY_DIMENSIONS:
            not_binary |= scope & (values != 0.0) & (values != 1.0)
        out_of_range |= scope & ((values < low) | (values > high))
    rounded = _rounded_onto_bounds(frame["value"], parsed, dimensions)
    position = _first(parsed.not_a_number, parsed.boolean, infinite, not_binary, out_of_range, rounded)
    if position is None:
        return values
    raw = frame["value"].iloc[[position]].tolist()[0]  # the cell as Python, for its repr
    row = int(rows[position])
    column = str(frame["_column"].iat[position]) if "_column" in frame.columns else "value"
    if parsed.not_a_number[position]:
        raise DataError(label, f"not a number: {str(raw).strip()[:40]!r}", row=row, column=column)
    if parsed.boolean[position]:
        raise DataError(label, f"a boolean is not a number: got {str(raw).lower()}, write 1 or 0", row=row,
                        column=column)
    if infinite[position]:
        raise DataError(label, "value is infinite", row=row, column=column)
    dimension = str(dimensions[position])
    rounding = f" (a float would round it to {values[position]:g})" if rounded[position] else ""
    if not_binary[position] or (rounded[position] and dimension in BINARY_DIMENSIONS):
        raise DataError(label, f"'{dimension}' must be 0 or 1, got {raw!r}{rounding}", row=row, column=column)
    low, high = DIMENSION_RANGES[dimension]
    raise DataError(label, f"'{dimension}' must be in [{low:g}, {high:g}], got {raw!r}{rounding}", row=row,
                    column=column)


def _validate_rating_values(frame: pd.DataFrame, label: str, suffix: str, *,
                            unique_keys: bool = True) -> pd.DataFrame:
    wide = "_row" in frame.columns
    rows = frame["_row"].to_numpy() if wide else _file_rows(frame, suffix)
    keys = ("item_id", "model", "rater", "dimension")
    out = pd.DataFrame({c: _string_column(frame[c]).str.strip() for c in keys})
    for column in keys:
        blank = (out[column] == "").to_numpy()
        if blank.any():
            position = int(np.flatnonzero(blank)[0])
            raise DataError(label, "empty value", row=int(rows[position]), column=column)
    if not wide:  # wide columns take their ids from the outputs and their header, already checked
        _check_text_cells(frame, keys, label, allow_empty=True)
        misses = near_misses(pd.unique(out["dimension"]), DIMENSION_RANGES)
        if misses:
            position = int(np.flatnonzero(out["dimension"].isin(list(misses)).to_numpy())[0])
            name = out["dimension"].iat[position]
            raise DataError(label, _near_miss_message(name, misses[name]), row=int(rows[position]),
                            column="dimension")
        _check_identifiers(out, keys, lambda position: int(rows[position]), label)
    values = _checked_values(frame, out["dimension"].to_numpy(), rows, label)
    out["value"] = values
    for column in RATING_OPTIONAL:
        out[column] = _strings(frame, column)
    out["rater_kind"] = out["rater_kind"].str.strip()
    bad_kind = ~out["rater_kind"].isin(RATER_KINDS)
    if bad_kind.any():
        position = int(np.flatnonzero(bad_kind)[0])
        raise DataError(label, f"unknown rater_kind {out['rater_kind'].iat[position]!r} "
                        f"(use one of {', '.join(sorted(k for k in RATER_KINDS if k))})",
                        row=int(rows[position]), column="rater_kind")
    duplicate = out.duplicated(["item_id", "model", "rater", "dimension"]) if unique_keys else None
    if duplicate is not None and duplicate.any():
        position = int(np.flatnonzero(duplicate)[0])
        raise DataError(label, "duplicate rating for the same (item_id, model, rater, dimension)",
                        row=int(rows[position]), column="rater")
    out = out.reset_index(drop=True)
    out.attrs["suffix"] = suffix  # so a later join error (build_dataset) counts rows as the file does
    if not wide and frame.attrs.get("lines") is not None:  # rows that blank lines moved
        out.attrs["lines"] = rows.tolist()
    return out


def validate_ratings(frame: pd.DataFrame, *, name: str = "<ratings>", unique_keys: bool = True) -> pd.DataFrame:
    """Validate a long-form ratings table and return it with canonical columns and a float ``value``.

    ``unique_keys=False`` accepts several rows for one ``(item_id, model, rater, dimension)``: a decisions ledger
    holds every annotator's decision on a key, in commit order.
    """
    label = frame.attrs.get("source", name)
    suffix = frame.attrs.get("suffix", ".csv")
    _check_required(frame, RATING_REQUIRED, label)
    if frame.empty:
        return empty_ratings()
    return _validate_rating_values(frame.reset_index(drop=True), label, suffix, unique_keys=unique_keys)


def load_outputs(path: str | Path, *, name: str | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Read and validate an outputs file; return ``(outputs, ratings_from_wide_columns)``."""
    return validate_outputs(read_table(path, name=name))


def load_ratings(path: str | Path, *, name: str | None = None) -> pd.DataFrame:
    """Read and validate a long-form ratings file."""
    return validate_ratings(read_table(path, name=name))


@dataclass
class Dataset:
    """Outputs and ratings of one evaluation, validated and joined.

    ``ratings`` holds every rating (judge ratings from all files plus the wide columns of the outputs);
    overrides are kept apart (see :mod:`empathy.labels`) and applied with :func:`empathy.labels.ledger.apply_ledger`.
    """

    outputs: pd.DataFrame
    ratings: pd.DataFrame
    sources: list[str] = field(default_factory=list)

    # Computed once per data set (a data set's tables are not modified once built): the app reads them on every
    # run, and each was a pass over every rating (tens of ms at millions of ratings).
    @cached_property
    def models(self) -> list[str]:
        return sorted(self.outputs["model"].unique())

    @cached_property
    def raters(self) -> list[str]:
        return sorted(self.ratings["rater"].unique())

    @cached_property
    def dimensions(self) -> list[str]:
        return sorted(self.ratings["dimension"].unique())

    def summary(self) -> dict[str, object]:
        """Counts a researcher checks first: tasks, models, raters, dimensions, items and missing ratings."""
        return {
            "tasks": sorted(t for t in self.outputs["task"].unique() if t),
            "models": self.models,
            "raters": self.raters,
            "dimensions": self.dimensions,
            "items": int(self.outputs["item_id"].nunique()),
            "outputs": len(self.outputs),
            "ratings": len(self.ratings),
            "missing_ratings": int(self.ratings["value"].isna().sum()),
        }


def build_dataset(outputs: pd.DataFrame, wide_ratings: pd.DataFrame,
                  rating_tables: Iterable[tuple[str, pd.DataFrame]] = (), *, sources: Iterable[str] = ()
                  ) -> Dataset:
    """Join validated outputs with validated rating tables.

    Every rating must refer to an (item_id, model) of the outputs; the first one that does not raises
    :class:`DataError` naming its file and row.
    """
    keys = pd.MultiIndex.from_arrays([outputs["item_id"], outputs["model"]])
    parts = [wide_ratings] if len(wide_ratings) else []
    for label, table in rating_tables:
        known = pd.MultiIndex.from_arrays([table["item_id"], table["model"]]).isin(keys)
        if not known.all():
            position = int(np.flatnonzero(~known)[0])
            raise DataError(label, f"rating for unknown (item_id, model) = "
                            f"({table['item_id'].iat[position]}, {table['model'].iat[position]})",
                            row=file_row(table, position), column="item_id")
        parts.append(table)
    ratings = pd.concat(parts, ignore_index=True) if parts else empty_ratings()
    duplicate = ratings.duplicated(["item_id", "model", "rater", "dimension"])
    if duplicate.any():
        row = ratings[duplicate].iloc[0]
        raise DataError(", ".join(sources) or "<ratings>",
                        f"rater '{row['rater']}' rates ({row['item_id']}, {row['model']}, {row['dimension']}) "
                        f"in more than one file", column="rater")
    return Dataset(outputs=outputs, ratings=ratings.reset_index(drop=True), sources=list(sources))


def load_dataset(outputs_path: str | Path, ratings_paths: Iterable[str | Path] = (), *,
                 progress: Callable[[int], None] | None = None) -> Dataset:
    """Load an outputs file and any number of long-form ratings files into a :class:`Dataset`.

    ``progress`` is called with ``1`` after each file is read (the outputs file first), so a caller can show
    ``k of n files`` (:class:`empathy.progress.Tracker` with ``total = 1 + len(ratings_paths)``).
    """
    outputs, wide = load_outputs(outputs_path)
    if progress is not None:
        progress(1)
    tables = []
    sources = [str(outputs_path)]
    for path in ratings_paths:
        tables.append((str(path), load_ratings(path)))
        sources.append(str(path))
        if progress is not None:
            progress(1)
    return build_dataset(outputs, wide, tables, sources=sources)


def write_ratings(ratings: pd.DataFrame, path: str | Path) -> None:
    """Write long-form ratings as CSV, JSONL or Parquet, chosen by the file extension.

    CSV is for people: text cells that a spreadsheet would run as a formula are prefixed with ``'``
    (:func:`empathy.escaping.spreadsheet_cell`, undone by :func:`read_table`); JSONL and Parquet are exact.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in RATINGS_SUFFIXES:
        raise ValueError(f"{path}: unsupported ratings file type {suffix or '(none)'!r}; "
                         "use .csv, .jsonl or .parquet")
    path.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".csv":
        write_people_csv(ratings, path)
    elif suffix == ".jsonl":
        ratings.to_json(path, orient="records", lines=True, force_ascii=False)
    else:
        ratings.to_parquet(path, index=False)


def write_people_csv(frame: pd.DataFrame, target: str | Path | TextIO) -> None:
    """Write ``frame`` as a CSV meant for people: :func:`spreadsheet_frame` cells, one physical row per record.

    Python's csv writer leaves a lone CR inside a cell unquoted (with ``\\n`` line ends), which every reader
    then takes for a line break; when a text cell holds one, every text cell is quoted instead.
    """
    safe = spreadsheet_frame(frame)
    safe.columns = [spreadsheet_cell(str(c)) for c in safe.columns]  # names can come from data (models, raters)
    text = [c for c in safe.columns if not pd.api.types.is_numeric_dtype(safe[c].dtype)]
    has_cr = any(safe[c].map(lambda v: isinstance(v, str) and "\r" in v).any() for c in text)
    safe.to_csv(target, index=False, quoting=csv.QUOTE_NONNUMERIC if has_cr else csv.QUOTE_MINIMAL)


def spreadsheet_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text cells are safe to open in a spreadsheet (numbers untouched)."""
    out = frame.copy()
    for column in out.columns:
        values = out[column]
        if pd.api.types.is_numeric_dtype(values.dtype) or pd.api.types.is_bool_dtype(values.dtype):
            continue
        text = values.map(lambda v: spreadsheet_cell(v) if isinstance(v, str) else v)
        out[column] = text
    return out


def json_value(value: object) -> object:
    """A cell as plain JSON: numpy scalars as Python numbers, NaN, NA and None as ``None``."""
    if value is None or value is pd.NA:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def json_records(frame: pd.DataFrame) -> list[dict[str, object]]:
    """The rows of ``frame`` as JSON-ready dicts (see :func:`json_value`), in column order."""
    return [{str(k): json_value(v) for k, v in row.items()} for row in frame.to_dict("records")]
