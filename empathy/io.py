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
name is allowed and kept unchecked, since other rubrics use other scales.

Every validation problem raises :class:`DataError`, whose one-line message names the file, the row (1-based,
counting the header of a CSV as row 1 so that it matches a spreadsheet) and the column.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

OUTPUT_REQUIRED: tuple[str, ...] = ("item_id", "model", "reference", "generation")
OUTPUT_OPTIONAL: tuple[str, ...] = ("task",)
RATING_REQUIRED: tuple[str, ...] = ("item_id", "model", "rater", "dimension", "value")
RATING_OPTIONAL: tuple[str, ...] = ("rater_kind", "reason", "signature")
RATING_COLUMNS: tuple[str, ...] = RATING_REQUIRED + RATING_OPTIONAL
RATER_KINDS: frozenset[str] = frozenset({"llm", "human", "lexicon", "crowd", "expert", "author", ""})

#: The judge dimensions of the paper (Eq. 1-3) and their valid closed ranges; ``ca`` must be exactly 0 or 1.
DIMENSION_RANGES: dict[str, tuple[float, float]] = {
    "e_ref": (0.0, 1.0),
    "e_gen": (0.0, 1.0),
    "u_ref": (0.0, math.inf),
    "u_gen": (0.0, math.inf),
    "ca": (0.0, 1.0),
}
BINARY_DIMENSIONS: frozenset[str] = frozenset({"ca"})
WIDE_SEPARATOR = ":"
SUPPORTED_SUFFIXES: tuple[str, ...] = (".csv", ".jsonl", ".json", ".parquet", ".pq")


class DataError(ValueError):
    """A problem in an input file, located by file, row and column.

    ``str(error)`` is one line: ``FILE: row R, column 'C': MESSAGE`` (row and column are omitted when the
    problem concerns the whole file).
    """

    def __init__(self, file: str | Path, message: str, *, row: int | None = None, column: str | None = None):
        self.file = str(file)
        self.row = row
        self.column = column
        self.message = message
        where = [self.file]
        if row is not None:
            where.append(f"row {row}")
        if column is not None:
            where.append(f"column '{column}'")
        super().__init__(f"{', '.join(where)}: {message}".replace("\n", " "))


def _display_row(frame_index: int, suffix: str) -> int:
    """File row number of a data-frame row: CSV counts the header as row 1, JSONL counts lines from 1."""
    return frame_index + 2 if suffix == ".csv" else frame_index + 1


def read_table(path: str | Path, *, name: str | None = None) -> pd.DataFrame:
    """Read a CSV, JSONL or Parquet file into a data frame of strings and numbers.

    ``name`` is the name used in error messages (an uploaded file's name, say); it defaults to ``path``.
    Raises :class:`DataError` for a missing, empty, unreadable or unsupported file.
    """
    path = Path(path)
    label = name or str(path)
    suffix = path.suffix.lower() if name is None else Path(name).suffix.lower()
    if not path.exists():
        raise DataError(label, "file not found")
    if suffix not in SUPPORTED_SUFFIXES:
        raise DataError(label, f"unsupported file type '{suffix or '(none)'}'; use .csv, .jsonl or .parquet")
    if path.stat().st_size == 0:
        raise DataError(label, "file is empty")
    try:
        if suffix == ".csv":
            _check_csv_header(path, label)
            frame = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""], encoding="utf-8")
        elif suffix in (".jsonl", ".json"):
            frame = _read_jsonl(path, label)
        else:
            frame = pd.read_parquet(path)
    except DataError:
        raise
    except UnicodeDecodeError as exc:
        raise DataError(label, f"not UTF-8 text (byte {exc.start})") from None
    except pd.errors.ParserError as exc:
        raise DataError(label, f"malformed CSV: {str(exc).strip()}") from None
    except (pd.errors.EmptyDataError, ValueError, OSError) as exc:
        raise DataError(label, f"cannot read file: {str(exc).strip() or type(exc).__name__}") from None
    frame.columns = [str(c).strip() for c in frame.columns]
    duplicated = [c for c in frame.columns if list(frame.columns).count(c) > 1]
    if duplicated:
        raise DataError(label, "duplicate column name", column=duplicated[0])
    frame.attrs["source"] = label
    frame.attrs["suffix"] = suffix
    return frame


def _check_csv_header(path: Path, label: str) -> None:
    # pandas silently renames a repeated header ("model" -> "model.1"); a repeated column is an error here.
    with path.open(encoding="utf-8", newline="") as handle:
        header = next(csv.reader(handle), [])
    seen: set[str] = set()
    for name in (h.strip() for h in header):
        if name in seen:
            raise DataError(label, "duplicate column name", column=name)
        seen.add(name)


def iter_jsonl(path: Path, label: str) -> Iterator[tuple[int, dict[str, object]]]:
    """Yield ``(line number, object)`` for each non-blank line of a JSONL file; :class:`DataError` otherwise."""
    with path.open(encoding="utf-8") as handle:
        for line_number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(label, f"invalid JSON ({exc.msg})", row=line_number) from None
            if not isinstance(record, dict):
                raise DataError(label, "each line must be a JSON object", row=line_number)
            yield line_number, record


def _read_jsonl(path: Path, label: str) -> pd.DataFrame:
    records = [record for _, record in iter_jsonl(path, label)]
    if not records:
        raise DataError(label, "file has no records")
    return pd.DataFrame.from_records(records)


def _check_required(frame: pd.DataFrame, required: Iterable[str], label: str) -> None:
    for column in required:
        if column not in frame.columns:
            raise DataError(label, f"missing required column (have: {', '.join(map(str, frame.columns))})",
                            column=column)


def _check_text_cells(frame: pd.DataFrame, columns: Iterable[str], label: str, suffix: str,
                      *, allow_empty: bool = False) -> None:
    for column in columns:
        values = frame[column]
        for index, value in enumerate(values):
            if value is None or (isinstance(value, float) and math.isnan(value)):
                if allow_empty:
                    continue
                raise DataError(label, "empty value", row=_display_row(index, suffix), column=column)
            if not isinstance(value, str | int | np.integer):
                raise DataError(label, f"expected text, got {type(value).__name__}",
                                row=_display_row(index, suffix), column=column)


def _string_column(values: pd.Series) -> pd.Series:
    return values.map(lambda v: "" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v))


def validate_outputs(frame: pd.DataFrame, *, name: str = "<outputs>") -> tuple[pd.DataFrame, pd.DataFrame]:
    """Validate an outputs table; return ``(outputs, wide_ratings)``.

    ``wide_ratings`` holds the ratings found in ``<rater>:<dimension>`` columns, in long form (possibly empty).
    """
    label = frame.attrs.get("source", name)
    suffix = frame.attrs.get("suffix", ".csv")
    _check_required(frame, OUTPUT_REQUIRED, label)
    if frame.empty:
        raise DataError(label, "no rows")
    _check_text_cells(frame, ("item_id", "model"), label, suffix)
    _check_text_cells(frame, ("reference", "generation"), label, suffix, allow_empty=True)
    outputs = frame.copy()
    for column in ("item_id", "model", "reference", "generation"):
        outputs[column] = _string_column(outputs[column])
    for column in ("item_id", "model"):
        blank = outputs[column].str.strip() == ""
        if blank.any():
            raise DataError(label, "empty value", row=_display_row(int(np.flatnonzero(blank)[0]), suffix),
                            column=column)
    if "task" in outputs.columns:
        outputs["task"] = _string_column(outputs["task"])
    else:
        outputs["task"] = ""
    duplicate = outputs.duplicated(["item_id", "model"])
    if duplicate.any():
        position = int(np.flatnonzero(duplicate)[0])
        row = outputs.iloc[position]
        raise DataError(label, f"duplicate (item_id, model) = ({row['item_id']}, {row['model']})",
                        row=_display_row(position, suffix), column="item_id")
    wide_columns = [c for c in outputs.columns if WIDE_SEPARATOR in c]
    long_parts = []
    for column in wide_columns:
        rater, _, dimension = column.partition(WIDE_SEPARATOR)
        if not rater.strip() or not dimension.strip():
            raise DataError(label, "wide rating columns must be named '<rater>:<dimension>'", column=column)
        part = pd.DataFrame({
            "item_id": outputs["item_id"], "model": outputs["model"], "rater": rater.strip(),
            "dimension": dimension.strip(), "value": outputs[column],
        })
        part["_row"] = [_display_row(i, suffix) for i in range(len(outputs))]
        part["_column"] = column
        long_parts.append(part)
    outputs = outputs.drop(columns=wide_columns).reset_index(drop=True)
    if long_parts:
        wide = pd.concat(long_parts, ignore_index=True)
        ratings = _validate_rating_values(wide, label, suffix)
    else:
        ratings = empty_ratings()
    return outputs, ratings


def empty_ratings() -> pd.DataFrame:
    """An empty ratings table with the canonical columns and dtypes."""
    frame = pd.DataFrame({c: pd.Series(dtype=str) for c in RATING_COLUMNS})
    frame["value"] = pd.Series(dtype=float)
    return frame


def _validate_rating_values(frame: pd.DataFrame, label: str, suffix: str) -> pd.DataFrame:
    rows = frame["_row"].to_numpy() if "_row" in frame.columns else np.array(
        [_display_row(i, suffix) for i in range(len(frame))])
    value_columns = frame["_column"].to_numpy() if "_column" in frame.columns else None
    out = pd.DataFrame({c: _string_column(frame[c]).str.strip() for c in ("item_id", "model", "rater", "dimension")})
    for column in ("item_id", "model", "rater", "dimension"):
        blank = out[column] == ""
        if blank.any():
            position = int(np.flatnonzero(blank)[0])
            raise DataError(label, "empty value", row=int(rows[position]), column=column)
    values = np.empty(len(frame), dtype=float)
    for position, raw in enumerate(frame["value"].tolist()):
        column = str(value_columns[position]) if value_columns is not None else "value"
        values[position] = _parse_value(raw, label, int(rows[position]), column)
        dimension = out["dimension"].iat[position]
        value = values[position]
        if math.isnan(value) or dimension not in DIMENSION_RANGES:
            continue
        low, high = DIMENSION_RANGES[dimension]
        if dimension in BINARY_DIMENSIONS and value not in (0.0, 1.0):
            raise DataError(label, f"'{dimension}' must be 0 or 1, got {raw!r}", row=int(rows[position]),
                            column=column)
        if not low <= value <= high:
            raise DataError(label, f"'{dimension}' must be in [{low:g}, {high:g}], got {raw!r}",
                            row=int(rows[position]), column=column)
    out["value"] = values
    for column in RATING_OPTIONAL:
        out[column] = _string_column(frame[column]) if column in frame.columns else ""
    bad_kind = ~out["rater_kind"].isin(RATER_KINDS)
    if bad_kind.any():
        position = int(np.flatnonzero(bad_kind)[0])
        raise DataError(label, f"unknown rater_kind {out['rater_kind'].iat[position]!r} "
                        f"(use one of {', '.join(sorted(k for k in RATER_KINDS if k))})",
                        row=int(rows[position]), column="rater_kind")
    duplicate = out.duplicated(["item_id", "model", "rater", "dimension"])
    if duplicate.any():
        position = int(np.flatnonzero(duplicate)[0])
        raise DataError(label, "duplicate rating for the same (item_id, model, rater, dimension)",
                        row=int(rows[position]), column="rater")
    return out.reset_index(drop=True)


def _parse_value(raw: object, label: str, row: int, column: str) -> float:
    if raw is None:
        return math.nan
    if isinstance(raw, bool):
        return float(raw)
    if isinstance(raw, int | float | np.integer | np.floating):
        value = float(raw)
        if math.isinf(value):
            raise DataError(label, "value is infinite", row=row, column=column)
        return value
    text = str(raw).strip()
    if text == "" or text.lower() in ("nan", "na", "null", "none"):
        return math.nan
    try:
        value = float(text)
    except ValueError:
        raise DataError(label, f"not a number: {text[:40]!r}", row=row, column=column) from None
    if math.isinf(value):
        raise DataError(label, "value is infinite", row=row, column=column)
    return value


def validate_ratings(frame: pd.DataFrame, *, name: str = "<ratings>") -> pd.DataFrame:
    """Validate a long-form ratings table and return it with canonical columns and a float ``value``."""
    label = frame.attrs.get("source", name)
    suffix = frame.attrs.get("suffix", ".csv")
    _check_required(frame, RATING_REQUIRED, label)
    if frame.empty:
        return empty_ratings()
    return _validate_rating_values(frame.reset_index(drop=True), label, suffix)


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
    overrides are kept apart (see :mod:`empathy.store`) and applied with :func:`empathy.store.apply_overrides`.
    """

    outputs: pd.DataFrame
    ratings: pd.DataFrame
    sources: list[str] = field(default_factory=list)

    @property
    def models(self) -> list[str]:
        return sorted(self.outputs["model"].unique())

    @property
    def raters(self) -> list[str]:
        return sorted(self.ratings["rater"].unique())

    @property
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
    keys = set(zip(outputs["item_id"], outputs["model"], strict=True))
    parts = [wide_ratings] if len(wide_ratings) else []
    for label, table in rating_tables:
        unknown = [i for i, key in enumerate(zip(table["item_id"], table["model"], strict=True)) if key not in keys]
        if unknown:
            position = unknown[0]
            raise DataError(label, f"rating for unknown (item_id, model) = "
                            f"({table['item_id'].iat[position]}, {table['model'].iat[position]})",
                            row=position + 2, column="item_id")
        parts.append(table)
    ratings = pd.concat(parts, ignore_index=True) if parts else empty_ratings()
    duplicate = ratings.duplicated(["item_id", "model", "rater", "dimension"])
    if duplicate.any():
        row = ratings[duplicate].iloc[0]
        raise DataError(", ".join(sources) or "<ratings>",
                        f"rater '{row['rater']}' rates ({row['item_id']}, {row['model']}, {row['dimension']}) "
                        f"in more than one file", column="rater")
    return Dataset(outputs=outputs, ratings=ratings.reset_index(drop=True), sources=list(sources))


def load_dataset(outputs_path: str | Path, ratings_paths: Iterable[str | Path] = ()) -> Dataset:
    """Load an outputs file and any number of long-form ratings files into a :class:`Dataset`."""
    outputs, wide = load_outputs(outputs_path)
    tables = []
    sources = [str(outputs_path)]
    for path in ratings_paths:
        tables.append((str(path), load_ratings(path)))
        sources.append(str(path))
    return build_dataset(outputs, wide, tables, sources=sources)
