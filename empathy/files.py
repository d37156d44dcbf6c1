"""The error every input problem raises, and the checks a data file gets before any parser reads it.

Nothing here imports pandas or numpy: the command line runs :func:`check_data_file` on its input paths before it
loads the parsers, so a missing, empty or misnamed file is reported at Python's start-up speed
(``bench/bench_startup.py``). :mod:`empathy.io` re-exports :class:`DataError` and runs the same check in
:func:`empathy.io.read_table`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

#: File types :func:`empathy.io.read_table` reads, by extension.
SUPPORTED_SUFFIXES: tuple[str, ...] = (".csv", ".jsonl", ".json", ".parquet", ".pq")
#: File types :func:`empathy.io.write_ratings` writes, by extension.
RATINGS_SUFFIXES: tuple[str, ...] = (".csv", ".jsonl", ".parquet", ".pq")


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


def check_data_file(path: str | Path, *, name: str | None = None) -> str:
    """Raise :class:`DataError` unless ``path`` is an existing, non-empty file of a supported type.

    ``name`` is the name used in messages and whose extension decides the type (an uploaded file's name);
    it defaults to ``path``. Returns the lower-case suffix.
    """
    path = Path(path)
    label = name or str(path)
    suffix = Path(name).suffix.lower() if name else path.suffix.lower()
    if not path.exists():
        raise DataError(label, "file not found")
    if path.is_dir():
        raise DataError(label, "is a folder, expected a file")
    if suffix not in SUPPORTED_SUFFIXES:
        raise DataError(label, f"unsupported file type '{suffix or '(none)'}'; use .csv, .jsonl or .parquet")
    if path.stat().st_size == 0:
        raise DataError(label, "file is empty")
    return suffix


class DuplicateKeyError(ValueError):
    """A JSON object that names one key twice (``json`` would silently keep the last value)."""

    def __init__(self, key: str):
        self.key = key
        super().__init__(f"duplicate key {key!r}")


def unique_keys(pairs: Sequence[tuple[str, object]]) -> dict[str, object]:
    """``object_pairs_hook`` for :func:`json.loads`: the object as a dict, :class:`DuplicateKeyError` on a repeat.

    Raises
    ------
    DuplicateKeyError
        Naming the first key that occurs twice in one object (at any depth).
    """
    record = dict(pairs)
    if len(record) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKeyError(key)
            seen.add(key)
    return record


def folder_files(directory: Path) -> tuple[Path | None, list[Path]]:
    """A data folder's outputs file (``outputs.csv|jsonl|json|parquet|pq``, the first found) and its ``ratings*``
    files (supported types, sorted); the outputs are ``None`` when the folder holds none."""
    outputs = next((directory / f"outputs{suffix}" for suffix in SUPPORTED_SUFFIXES
                    if (directory / f"outputs{suffix}").exists()), None)
    ratings = sorted(p for p in directory.glob("ratings*") if p.suffix.lower() in SUPPORTED_SUFFIXES)
    return outputs, ratings


def resolve_data_path(text: str) -> tuple[Path, list[Path]]:
    """A typed path: a data folder (its ``outputs.*`` and ``ratings*`` files) or an outputs file (the ``ratings*``
    files beside it); raises :class:`DataError` naming the path when it holds no outputs."""
    path = Path(text.strip()).expanduser()
    if not text.strip():
        raise DataError("<path>", "enter a folder or an outputs file")
    if path.is_dir():
        outputs, ratings = folder_files(path)
        if outputs is None:
            raise DataError(str(path), "no outputs.csv, outputs.jsonl or outputs.parquet in this folder")
        return outputs, ratings
    if not path.exists():
        raise DataError(str(path), "file not found")
    return path, sorted(p for p in path.parent.glob("ratings*") if p.suffix.lower() in SUPPORTED_SUFFIXES)
