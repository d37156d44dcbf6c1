"""A disk cache of validated data sets: the second open of the same files skips reading and validating them.

Reading and validating 200,000 outputs and 3 million rating rows costs seconds of CPU; the app pays that once per
set of files. :func:`load_dataset_cached` keeps the validated tables of :func:`empathy.io.load_dataset` in
``$EMPATHY_CACHE_DIR/datasets/`` (``~/.cache/empathy/datasets/`` without it: beside the distancing cache,
``.../distancing/``), one file per data set, and serves them again when

- every file has the same **content**: the SHA-256 of all of its bytes (a fast hash, 0.1 s per 200 MB), never its
  size, modification time or a sample, so an edited file is read again even when its size and time are kept;
- the same paths are given in the same order (error messages and :attr:`Dataset.sources` name them);
- the **validation rules** are the same: the key holds the package version, the versions of pandas, numpy and
  pyarrow, and a hash of the source of the modules that read and validate (:data:`RULES_MODULES`), so a changed
  rule never serves a table it would now refuse or read differently.

A cached file is only ever written after a successful validation (a malformed file raises its
:class:`~empathy.io.DataError` as before, and nothing is cached). A cache file that cannot be read, is corrupt, is
from another format or is not private to the user is ignored and rebuilt, never an error; a cache folder that
cannot be written leaves loading as it was. Files are written whole (a temporary file renamed into place) with
mode 0600 in a 0700 folder (:mod:`empathy.cachefiles`); the newest :data:`KEEP` data sets are kept.

Format: a pickle of each table column by column, text columns as codes into their distinct values (a reference
shared by 10 models is stored once, so the file is small and quick to read). Pickle runs code of the file it reads,
which is why only a file owned by the user and writable by nobody else is read.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import pickle
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from empathy.cachefiles import FILE_MODE, ensure_private_directory, user_cache_dir
from empathy.io import Dataset, load_dataset

#: Bumped when the file layout changes.
FORMAT = 1
#: Folder under the user cache folder.
FOLDER = "datasets"
#: Data sets kept (the least recently used beyond this are removed).
KEEP = 4
#: The modules whose source is part of the key: reading, validating and the ranges a value is checked against.
RULES_MODULES: tuple[str, ...] = ("empathy.io", "empathy.files", "empathy.identifiers", "empathy.escaping",
                                  "empathy.metrics", "empathy.dataset_cache")
_SUFFIX = ".pkl"
_CHUNK = 1 << 22


@dataclass(frozen=True)
class CachedLoad:
    """A loaded data set and its key: the hash of the files' contents, their paths and the validation rules.

    ``from_cache`` says whether the tables came from the disk cache (``False``: read and validated now).
    """

    dataset: Dataset
    key: str
    from_cache: bool


def default_cache_dir() -> Path:
    """``$EMPATHY_CACHE_DIR/datasets``, else ``~/.cache/empathy/datasets`` (beside the distancing cache)."""
    return user_cache_dir() / FOLDER


def file_digest(path: Path) -> str:
    """SHA-256 of every byte of ``path`` (hex)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(_CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


_RULES: str | None = None


def rules_fingerprint() -> str:
    """Hash of what decides how a file is read and validated: versions and the validating modules' source."""
    global _RULES
    if _RULES is None:
        digest = hashlib.sha256(f"format={FORMAT}".encode())
        from empathy import __version__

        versions = [__version__, pd.__version__, np.__version__, sys.version]
        try:
            import pyarrow

            versions.append(pyarrow.__version__)
        except ImportError:  # pragma: no cover - pyarrow is a dependency
            versions.append("-")
        digest.update("|".join(versions).encode())
        for name in RULES_MODULES:
            source = getattr(importlib.import_module(name), "__file__", None)
            digest.update(name.encode())
            digest.update(Path(source).read_bytes() if source else b"-")
        _RULES = digest.hexdigest()
    return _RULES


def dataset_key(outputs: Path, ratings: Sequence[Path]) -> str:
    """The cache key of a set of files: their paths as given, their contents' hashes and the rules."""
    digest = hashlib.sha256(rules_fingerprint().encode())
    for path in (outputs, *ratings):
        digest.update(b"\x00" + str(path).encode("utf-8", "surrogatepass") + b"\x00")
        digest.update(file_digest(path).encode())
    return digest.hexdigest()


# ------------------------------------------------------------------------------------------- encoding

def _encode_frame(frame: pd.DataFrame) -> dict[str, object]:
    """A frame as plain parts: text columns as ``(codes, distinct values)``, others as they are."""
    if not isinstance(frame.index, pd.RangeIndex) or frame.index.start != 0 or frame.index.step != 1:
        return {"frame": frame}
    columns = []
    for name in frame.columns:
        values = frame[name]
        if isinstance(values.dtype, pd.StringDtype):
            codes, distinct = pd.factorize(values, use_na_sentinel=True)
            kind = np.int32 if len(distinct) < 2**31 - 1 else np.int64
            columns.append((name, "codes", (codes.astype(kind), np.asarray(distinct, dtype=object), values.dtype)))
        else:
            columns.append((name, "series", values.reset_index(drop=True)))
    return {"columns": columns, "length": len(frame), "attrs": dict(frame.attrs)}


def _decode_frame(parts: dict[str, object]) -> pd.DataFrame:
    if "frame" in parts:
        frame = parts["frame"]
        if not isinstance(frame, pd.DataFrame):
            raise ValueError("not a frame")
        return frame
    length = int(parts["length"])  # type: ignore[arg-type]
    data = {}
    names = []
    for name, kind, payload in parts["columns"]:  # type: ignore[attr-defined]
        if kind == "codes":
            codes, distinct, dtype = payload
            array = pd.array(distinct, dtype=dtype).take(codes, allow_fill=True)
            data[name] = pd.Series(array, copy=False)
        elif kind == "series":
            data[name] = payload
        else:
            raise ValueError(f"unknown column kind {kind!r}")
        if len(data[name]) != length:
            raise ValueError("column length")
        names.append(name)
    frame = pd.DataFrame(data, columns=names) if names else pd.DataFrame(index=pd.RangeIndex(length))
    frame.attrs.update(parts["attrs"])  # type: ignore[arg-type]
    return frame


def _payload(key: str, dataset: Dataset) -> dict[str, object]:
    return {"format": FORMAT, "key": key, "outputs": _encode_frame(dataset.outputs),
            "ratings": _encode_frame(dataset.ratings), "sources": list(dataset.sources)}


def _private(path: Path) -> bool:
    """Whether ``path`` is a regular file of this user that nobody else can write (pickle runs what it reads)."""
    info = path.stat()
    owner_ok = not hasattr(os, "getuid") or info.st_uid == os.getuid()
    return stat.S_ISREG(info.st_mode) and owner_ok and not info.st_mode & 0o022


def read_cached(path: Path, key: str) -> Dataset | None:
    """The data set stored at ``path`` under ``key``, or ``None`` when it is missing, not ours, corrupt or stale."""
    try:
        if not path.is_file() or not _private(path):
            return None
        with path.open("rb") as handle:
            payload = pickle.load(handle)  # noqa: S301 - our own private file, see the module docstring
        if not isinstance(payload, dict) or payload.get("format") != FORMAT or payload.get("key") != key:
            return None
        dataset = Dataset(outputs=_decode_frame(payload["outputs"]), ratings=_decode_frame(payload["ratings"]),
                          sources=[str(s) for s in payload["sources"]])
    except Exception:  # noqa: BLE001 - a damaged cache file of any kind is rebuilt, never an error
        return None
    try:
        os.utime(path)  # recently used: kept by the pruning
    except OSError:
        pass
    return dataset


def write_cached(path: Path, key: str, dataset: Dataset) -> bool:
    """Store ``dataset`` at ``path`` (whole or not at all, mode 0600); ``False`` when it cannot be written."""
    try:
        ensure_private_directory(path.parent)
        descriptor, temporary = tempfile.mkstemp(prefix=".tmp-", suffix=_SUFFIX, dir=path.parent)
    except OSError:
        return False
    try:
        os.fchmod(descriptor, FILE_MODE)
        with os.fdopen(descriptor, "wb") as handle:
            pickle.dump(_payload(key, dataset), handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(temporary, path)
    except Exception:  # noqa: BLE001 - a full disk or an unpicklable cell leaves loading as it was
        try:
            os.unlink(temporary)
        except OSError:
            pass
        return False
    return True


def prune(directory: Path, keep: int = KEEP) -> None:
    """Remove all but the ``keep`` most recently used data sets of ``directory``."""
    try:
        entries = [p for p in directory.iterdir() if p.suffix == _SUFFIX]
    except OSError:
        return
    files = []
    for entry in entries:
        try:
            files.append((entry.stat().st_mtime, entry))
        except OSError:
            continue
    files.sort(reverse=True)
    kept = 0
    for _, entry in files:
        if entry.name.startswith(".tmp-"):
            continue
        kept += 1
        if kept > keep:
            try:
                entry.unlink()
            except OSError:
                pass


Loader = Callable[[Path, Sequence[Path]], Dataset]


def load_dataset_cached(outputs: str | Path, ratings: Iterable[str | Path] = (), *,
                        cache_dir: Path | None = None, loader: Loader | None = None, key: str | None = None
                        ) -> CachedLoad:
    """:func:`empathy.io.load_dataset` through the disk cache (see the module docstring).

    ``cache_dir`` defaults to :func:`default_cache_dir`; ``loader`` (default :func:`empathy.io.load_dataset`) reads
    and validates on a miss and raises its :class:`~empathy.io.DataError` unchanged; ``key`` is
    :func:`dataset_key` of the files when the caller has just computed it. The files are hashed again after a
    miss's read: a file changed meanwhile is loaded but not cached under the old content.
    """
    outputs_path = Path(outputs)
    ratings_paths = [Path(p) for p in ratings]
    load = loader or (lambda out, rat: load_dataset(out, rat))
    try:
        key = key or dataset_key(outputs_path, ratings_paths)
    except OSError:
        # a missing or unreadable file: the loader reports it with the message it always gave
        return CachedLoad(load(outputs_path, ratings_paths), "", False)
    directory = default_cache_dir() if cache_dir is None else Path(cache_dir)
    path = directory / f"{key[:40]}{_SUFFIX}"
    cached = read_cached(path, key)
    if cached is not None:
        return CachedLoad(cached, key, True)
    dataset = load(outputs_path, ratings_paths)
    try:
        unchanged = dataset_key(outputs_path, ratings_paths) == key
    except OSError:
        unchanged = False
    if unchanged and write_cached(path, key, dataset):
        prune(directory)
    return CachedLoad(dataset, key, False)
