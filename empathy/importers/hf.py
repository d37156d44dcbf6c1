"""Import a Hugging Face dataset of model outputs: a ``save_to_disk`` folder, or its Parquet / JSON Lines files.

A folder written by :meth:`datasets.Dataset.save_to_disk` (or :meth:`datasets.DatasetDict.save_to_disk`: choose
the split with ``--split`` when it has several) is read with :func:`datasets.load_from_disk` (the package
``datasets``; without it, one line says how to install it). A ``.parquet``, ``.json`` or ``.jsonl`` file (what
:meth:`datasets.Dataset.to_parquet` and :meth:`~datasets.Dataset.to_json` write, and what the Hub serves) is
read by :func:`empathy.io.read_table`, so its errors name the file's row, and needs no ``datasets``.

The dataset's own column names are read as the data model's when they match (``item_id``, ``model``, ``task``,
``reference``, ``generation``, wide ``<rater>:<dimension>`` ratings); any other name is mapped with ``--columns``
(``--columns response=generation,prompt=reference``). Without an ``item_id``, the row's position (from 0) is the
item (field ``row``); without a ``model`` column, ``--model NAME`` names the model of every row. Both are said in
the notes and recorded in the mapping, hence in the signature.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import pandas as pd

from empathy.importers.common import SOURCE_COLUMN, ToolImport, finish, require
from empathy.importers.mapping import MAPPABLE, ColumnMap
from empathy.io import DataError, read_table

TOOL = "hf-datasets"
FILE_SUFFIXES: tuple[str, ...] = (".parquet", ".pq", ".json", ".jsonl")
_datasets = require("datasets", "datasets", "reading a saved Hugging Face dataset")


def is_saved_dataset(path: Path) -> bool:
    """Whether ``path`` is a folder written by ``save_to_disk`` (a Dataset's or a DatasetDict's)."""
    return path.is_dir() and any((path / name).is_file() for name in ("dataset_info.json", "state.json",
                                                                          "dataset_dict.json"))


def _load_saved(path: Path, split: str | None) -> tuple[pd.DataFrame, str, list[str]]:
    """The rows of a saved dataset (the chosen split of a DatasetDict), the datasets version and notes."""
    datasets = _datasets()
    try:
        loaded = datasets.load_from_disk(str(path))  # type: ignore[attr-defined]
    except Exception as exc:  # the reader's own errors (a missing arrow file, a bad state.json) are the folder's
        raise DataError(str(path), f"not a readable saved dataset ({type(exc).__name__}: "
                        f"{' '.join(str(exc).split())[:200]})") from None
    notes = []
    if isinstance(loaded, datasets.DatasetDict):  # type: ignore[attr-defined]
        splits = list(loaded)
        if split is None and len(splits) != 1:
            raise DataError(str(path), f"a DatasetDict of {len(splits)} splits ({', '.join(splits)}): choose one "
                            "with --split")
        chosen = split if split is not None else splits[0]
        if chosen not in loaded:
            raise DataError(str(path), f"no split {chosen!r} (splits: {', '.join(splits)})")
        notes.append(f"split {chosen!r} of {', '.join(splits)}")
        loaded = loaded[chosen]
    elif split is not None:
        raise DataError(str(path), f"--split {split}: the folder holds one Dataset, not a DatasetDict")
    return loaded.to_pandas(), str(datasets.__version__), notes  # type: ignore[attr-defined]


def _read(paths: list[Path], split: str | None) -> tuple[pd.DataFrame, str, list[str]]:
    if len(paths) == 1 and paths[0].is_dir():
        if not is_saved_dataset(paths[0]):
            raise DataError(str(paths[0]), "not a saved dataset (no dataset_info.json, state.json or "
                            "dataset_dict.json: a folder written by save_to_disk) ")
        return _load_saved(paths[0], split)
    frames = []
    for path in paths:
        if path.is_dir():
            raise DataError(str(path), "give one saved-dataset folder, or Parquet / JSON Lines files")
        if path.suffix.lower() not in FILE_SUFFIXES:
            raise DataError(str(path), f"unsupported file type '{path.suffix or '(none)'}'; use a save_to_disk "
                            "folder, .parquet, .json or .jsonl")
        frames.append(read_table(path))
    if split is not None:
        raise DataError(str(paths[0]), "--split applies to a saved DatasetDict folder, not to files")
    if len(frames) == 1:
        return frames[0], paths[0].suffix.lstrip(".").lower(), []
    names = [list(f.columns) for f in frames]
    if any(n != names[0] for n in names):
        other = next(k for k, n in enumerate(names) if n != names[0])
        raise DataError(str(paths[other]), f"its columns differ from {paths[0]}'s: the files of one dataset share "
                        "their columns")
    note = f"{len(frames)} files, {sum(map(len, frames))} rows"
    return pd.concat(frames, ignore_index=True), paths[0].suffix.lstrip(".").lower(), [note]


def import_hf(paths: Iterable[str | Path] | str | Path, *, split: str | None = None, model: str | None = None,
              columns: ColumnMap | None = None, progress: Callable[[int], None] | None = None) -> ToolImport:
    """Import a Hugging Face dataset (see the module docstring) as outputs and ratings.

    Parameters
    ----------
    paths
        One ``save_to_disk`` folder, or one or more Parquet / JSON Lines files of one dataset.
    split
        The split of a saved DatasetDict (default: its only one).
    model
        The model of every row, for a dataset without a ``model`` column.
    columns
        ``--columns`` over the dataset's own names.
    progress
        Called with ``1`` once the rows are read.

    Raises
    ------
    DataError
        ``datasets`` missing for a folder, an unreadable folder or file, several splits without ``split``, a
        column ``model`` and ``--model`` both, or rows the validators refuse; naming the file and column.
    """
    files = [Path(p) for p in ([paths] if isinstance(paths, str | Path) else paths)]
    if not files:
        raise DataError("<hf dataset>", "no dataset given")
    for path in files:
        if not path.exists():
            raise DataError(str(path), "file not found")
    table, version, notes = _read(files, split)
    if progress is not None:
        progress(1)
    label = str(files[0]) if len(files) == 1 else f"{files[0]} (+{len(files) - 1} files)"
    user = columns or ColumnMap()
    user.check(table.columns, label)  # against the dataset's own columns, before the importer adds any
    reads = {t for _, t in user.pairs} | ({c for c in table.columns if c in MAPPABLE} - {s for s, _ in user.pairs})
    defaults: list[tuple[str, str]] = [(c, c) for c in MAPPABLE if c in table.columns]
    table = table.copy()
    if "item_id" not in reads:
        table["row"] = [str(k) for k in range(len(table))]
        defaults.append(("row", "item_id"))
        notes.append("no item_id column: each row's position (from 0) is its item_id")
    if model is not None:
        if "model" in reads:
            raise DataError(label, f"--model {model}: the dataset has a model column already", column="model")
        table["model_name"] = model
        defaults.append(("model_name", "model"))
        notes.append(f"every row's model is {model!r} (--model)")
    elif "model" not in reads:
        raise DataError(label, "no model column: name the model with --model NAME, or map a column onto it "
                        "(--columns COLUMN=model)", column="model")
    table[SOURCE_COLUMN] = f"{TOOL}:{files[0].name}"
    return finish(table, label=label, tool=TOOL, version=version, sources=[str(p) for p in files],
                  defaults=ColumnMap(tuple(defaults)), user=user, notes=notes)


__all__ = ["FILE_SUFFIXES", "import_hf", "is_saved_dataset"]
