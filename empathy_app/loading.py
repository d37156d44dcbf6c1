"""Loading the session's data set: files, uploads, imports, the added ratings, the task filter, the store.

The frame in ``app.py`` calls :func:`open_data_set` once per run (it loads the data set the session's
:data:`~empathy_app.session_keys.SOURCE` names and keeps it for the page); a page takes it with
:func:`current_data`, or with :func:`require_data` when it needs outputs (and ratings). Reading and validating
files is :mod:`empathy.io`'s, importing :mod:`empathy.datasets`'; this module caches them for Streamlit and
derives what the pages compute on (:class:`Loaded`). Nothing here computes a metric
(:mod:`empathy_app.compute`) or reads the decisions in the store (:mod:`empathy_app.overrides`).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import streamlit as st

from empathy.dataset_cache import FOLDER as DATASET_FOLDER
from empathy.dataset_cache import dataset_key, load_dataset_cached
from empathy.datasets import IMPORTERS, Importer
from empathy.datasets.report import ImportReport
from empathy.files import folder_files, resolve_data_path
from empathy.io import (
    SUPPORTED_SUFFIXES,
    DataError,
    Dataset,
    build_dataset,
    load_outputs,
    load_ratings,
    validate_outputs,
)
from empathy.labels import locations
from empathy.labels.backends import open_store
from empathy.labels.locations import STORE_ENV, StoreError, default_store_path
from empathy.labels.records import dataset_name
from empathy.labels.relocation import adopt_working_directory_store
from empathy.labels.roles import Roles
from empathy.labels.sqlite import OverrideStore
from empathy.paths import demo_dir
from empathy.settings import default_settings_path, load_upload
from empathy_app import identity, session_keys
from empathy_app.markup import md
from empathy_app.progress import ProgressBar

ALL_TASKS = ""
NO_TASK = "\x00no-task"  # option for outputs without a task in a data set where others have one


@dataclass(frozen=True)
class ExtraRatings:
    """Ratings added in this session (by the Judge page) to a loaded data set, not yet saved as a file."""

    rater: str
    ratings: pd.DataFrame
    key: str
    judge: str
    signature: str


@dataclass(frozen=True)
class Loaded:
    """The data set of this session with everything derived from it.

    ``dataset`` is what the pages compute on: the loaded files plus the ratings added this session,
    restricted to the sidebar's task. ``full`` is the same without the task filter, ``base_key`` the content
    key of the files alone (the key of :func:`extra_ratings`). ``dataset_id`` is always that of the full
    outputs, so the overrides are the same whatever the filter.
    """

    dataset: Dataset
    name: str
    data_dir: Path | None
    dataset_id: str
    content_key: str
    store: OverrideStore
    full: Dataset | None = None
    base_key: str = ""
    task: str = ALL_TASKS

    @property
    def all_data(self) -> Dataset:
        """The data set without the task filter (files plus this session's added ratings)."""
        return self.full if self.full is not None else self.dataset

    @property
    def filtered(self) -> bool:
        """Whether the sidebar restricts the data to one task."""
        return self.task != ALL_TASKS



# ----------------------------------------------------------------------------------------------- loading

def demo_files(directory: Path | None = None) -> tuple[Path | None, list[Path]]:
    """The outputs file and every ``ratings*`` file of a data folder (CSV, JSONL or Parquet; by default the demo's,
    :func:`empathy.paths.demo_dir`)."""
    return folder_files(demo_dir() if directory is None else directory)


@st.cache_resource(show_spinner=False)
def _datasets_held() -> dict[str, Dataset]:
    """The data sets of files loaded in this process by content key (shared by sessions, never modified)."""
    return {}


#: Data sets of files held in memory across sessions (each also on disk, :mod:`empathy.dataset_cache`).
HELD_DATASETS = 2


def load_paths_keyed(outputs: Path, ratings: Sequence[Path]) -> tuple[Dataset, str]:
    """Load an outputs file and its ratings files; return the data set and its content key.

    The key hashes every byte of the files (and the validation rules, :func:`empathy.dataset_cache.dataset_key`),
    so an edited file is read again whatever its size and modification time. A data set loaded before is taken
    from memory (this process) or from the disk cache in ``$EMPATHY_CACHE_DIR/datasets`` (validated once, by any
    process); errors are :func:`empathy.io.load_dataset`'s, word for word.
    """
    held = _datasets_held()
    try:
        key = dataset_key(outputs, ratings)
    except OSError:
        key = ""
    if key and key in held:
        return held[key], key[:20]
    result = load_dataset_cached(outputs, ratings, cache_dir=dataset_cache_dir(), key=key or None)
    release_freed_memory()
    if result.key:
        held[result.key] = result.dataset
        while len(held) > HELD_DATASETS:
            held.pop(next(iter(held)))
    return result.dataset, result.key[:20]


def release_freed_memory() -> bool:
    """Give the heap pages freed after a large load back to the operating system (glibc's ``malloc_trim``).

    Reading and validating (or decoding) millions of rows frees hundreds of MiB of temporaries that glibc keeps
    in the process otherwise: at 200,000 outputs the worker held about 160 MiB more after loading. Called once
    per data set loaded, not per run (a trim walks the whole heap). ``False`` where there is no glibc.
    """
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return bool(libc.malloc_trim(0))
    except (OSError, AttributeError):
        return False


def dataset_cache_dir() -> Path:
    """Where validated data sets are kept: ``<user cache dir>/datasets`` (beside ``distancing/``)."""
    return user_cache_dir() / DATASET_FOLDER


def load_from_paths(outputs: Path, ratings: Sequence[Path]) -> Dataset:
    """Load an outputs file and its ratings files (cached on their contents, see :func:`load_paths_keyed`)."""
    return load_paths_keyed(outputs, ratings)[0]


@st.cache_data(show_spinner=False, max_entries=8)
def _load_uploads(outputs: tuple[str, bytes], ratings: tuple[tuple[str, bytes], ...]) -> Dataset:
    with tempfile.TemporaryDirectory() as folder:
        def write(name: str, content: bytes) -> Path:
            target = Path(folder) / f"{hashlib.sha1(name.encode()).hexdigest()[:8]}{Path(name).suffix.lower()}"
            target.write_bytes(content)
            return target

        out, wide = load_outputs(write(*outputs), name=outputs[0])
        tables = [(name, load_ratings(write(name, content), name=name)) for name, content in ratings]
    return build_dataset(out, wide, tables, sources=[outputs[0], *(name for name, _ in ratings)])


def load_from_uploads(outputs: tuple[str, bytes], ratings: Sequence[tuple[str, bytes]]) -> Dataset:
    """Load uploaded files (name, bytes); errors name the uploaded file."""
    return _load_uploads(outputs, tuple(ratings))


# ------------------------------------------------------------------------------- imported data sets
# Every importer of the registry (empathy.datasets.IMPORTERS) is a source whose kind is its name.

#: The Kumar et al. (2025) importer (the URL's ``kumar2025`` key opens it when its folder is present).
KUMAR2025_IMPORTER: Importer = IMPORTERS["kumar2025"]

def import_directory(name: str) -> Path | None:
    """The folder of the importer ``name`` under ``shared/datasets``, or ``None`` when absent (the Data page
    offers the source only when present)."""
    return IMPORTERS[name].directory()


def kumar_directory() -> Path | None:
    """The Kumar et al. (2025) data folder under ``shared/datasets``, or ``None`` when absent."""
    return import_directory(KUMAR2025_IMPORTER.name)



def user_cache_dir() -> Path:
    """``$EMPATHY_CACHE_DIR``, else ``~/.cache/empathy`` (the judges' and distancing caches live there too)."""
    return locations.user_cache_dir()


def _tree_mtimes(directory: Path) -> tuple[tuple[str, float], ...]:
    return tuple(sorted((str(p.relative_to(directory)), p.stat().st_mtime) for p in directory.rglob("*")
                        if p.is_file()))


@st.cache_resource(show_spinner=False)
def _imports_held() -> dict[tuple, tuple[Dataset, ImportReport]]:
    return {}


def _import(name: str, directory: str, mtimes_key: tuple[tuple[str, float], ...]) -> tuple[Dataset, ImportReport]:
    # Held by hand, not ``st.cache_data``: the import reports to a progress bar of the page, which a cached
    # function would record and replay.
    held = _imports_held()
    key = (name, directory, mtimes_key)
    if key in held:
        return held[key]
    importer = IMPORTERS[name]
    steps = importer.progress_steps()
    with ProgressBar(f"Importing the {importer.title} annotations") as bar:
        if steps is None:
            bar.waiting("importing")
            result = importer(directory)
        else:
            result = importer(directory, progress=bar.tracker(steps, "files").advance)
    outputs, wide = validate_outputs(result.outputs, name=f"{name} outputs")
    dataset = build_dataset(outputs, wide, [(f"{name} ratings", result.ratings)],
                            sources=[f"{directory} ({importer.module})"])
    held[key] = (dataset, result.report)
    while len(held) > 2:
        held.pop(next(iter(held)))
    return dataset, result.report


def load_import(name: str, directory: str | Path) -> tuple[Dataset, ImportReport]:
    """Run the importer ``name`` of :data:`empathy.datasets.IMPORTERS` on ``directory`` with its defaults
    (cached on the path and its files' modification times).

    The first import shows a progress bar (steps done of all, ETA). Returns the :class:`Dataset` and the
    importer's :class:`empathy.datasets.report.ImportReport`. Raises :class:`DataError` naming the folder or the
    first expected file that is missing.
    """
    path = Path(directory)
    if not path.is_dir():
        raise DataError(str(path), "data set directory not found")
    return _import(name, str(path), _tree_mtimes(path))



def store_path_for(source: dict, data_dir: Path | None) -> Path | str:
    """The override store of a source: ``$EMPATHY_STORE``, else beside the data (an imported data set, whose
    folder is read-only third-party data: ``<user cache dir>/overrides-<importer>.sqlite``; uploaded files: with
    the uploads, ``<uploads dir>/overrides.sqlite``, never the working directory).

    ``$EMPATHY_STORE`` may be a team's ``postgresql://`` URL (returned as a string; print it only through
    :func:`empathy.labels.locations.mask_location`)."""
    importer = IMPORTERS.get(source.get("kind", ""))
    if importer is not None and not os.environ.get(STORE_ENV, "").strip():
        return user_cache_dir() / importer.store_file
    if data_dir is None:
        return default_store_path(None, uploads_dir=uploads_dir())
    return default_store_path(data_dir)


def resolve_path(text: str) -> tuple[Path, list[Path]]:
    """A typed path: a data folder (``outputs.*`` + ``ratings*``) or an outputs file (ratings beside it)."""
    return resolve_data_path(text)


def ratings_candidates(outputs: Path) -> list[Path]:
    """Files that may hold ratings of ``outputs``: every supported file beside it but itself (hidden ones and
    the override store aside), sorted by name, so the Data page can offer more than the ``ratings*`` ones."""
    folder = outputs.parent
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return []
    return [p for p in entries if p.is_file() and p.suffix.lower() in SUPPORTED_SUFFIXES
            and not p.name.startswith(".") and p.resolve() != outputs.resolve()]


def content_key(dataset: Dataset, files_key: str | None = None) -> str:
    """Hash of the outputs and ratings contents (cache key of everything derived from the data).

    ``files_key``: the key the loading gave (:func:`load_paths_keyed`: the hash of the files' bytes, from which the
    tables follow), returned as it is instead of hashing millions of cells again.
    """
    if files_key:
        return files_key
    digest = hashlib.sha256()
    for frame in (dataset.outputs, dataset.ratings):
        digest.update(pd.util.hash_pandas_object(frame.astype(str), index=False).to_numpy().tobytes())
        digest.update(",".join(map(str, frame.columns)).encode())
    return digest.hexdigest()[:20]


def store_dataset_name(source: dict, store_path: Path | str) -> str:
    """The stable name a data set's overrides are kept under (:func:`empathy.labels.records.dataset_name`).

    Its outputs file (relative to the store's folder when inside it) for a path and the demo data, the file
    name for an upload, the importer's name (``kumar2025``) for an import: never a hash of the outputs, so adding
    or removing outputs keeps every other override.
    """
    kind = source.get("kind")
    if kind == "path":
        return dataset_name(source["outputs"], store_path=store_path)
    if kind == "upload":
        return dataset_name(explicit=f"upload:{source.get('name', 'upload')}")
    if kind in IMPORTERS:
        return dataset_name(explicit=kind)
    outputs, _ = demo_files()
    return dataset_name(outputs if outputs is not None else demo_dir() / "outputs.csv", store_path=store_path)



@st.cache_resource(show_spinner=False)
def _open_store(path: str, roles_token: str, _roles: Roles | None) -> OverrideStore:
    return open_store(path, read_only=None, roles=_roles)


def get_store(path: str, roles: Roles | None = None) -> OverrideStore:
    """One store per SQLite file or PostgreSQL URL (and roles), shared by every session.

    Opened for writing when it can be written, else for reading (``store.read_only``: the Data page says so and
    every write is refused with one line); with ``roles`` every write is checked against them.
    """
    return _open_store(path, identity.roles_token(roles), roles)


def _adopt_old_store(store_path: Path | str) -> None:
    """Once per session: move an uploads' store an earlier version left in the working directory to
    ``store_path`` (:func:`empathy.labels.relocation.adopt_working_directory_store`); its message is shown now and
    on the Data page (:data:`~empathy_app.session_keys.STORE_NOTICE`)."""
    if st.session_state.get(session_keys.STORE_ADOPTION_CHECKED):
        return
    st.session_state[session_keys.STORE_ADOPTION_CHECKED] = True
    try:
        found = adopt_working_directory_store(store_path)
    except StoreError as error:
        st.session_state[session_keys.STORE_NOTICE] = (f"An uploads store left in the working directory by an "
                                                       f"earlier version could not be moved: {md(error)}")
    else:
        if found is None:
            return
        st.session_state[session_keys.STORE_NOTICE] = md(found.message)
    st.info(st.session_state[session_keys.STORE_NOTICE])



# ------------------------------------------------------------------------------------ saved uploads

def settings_path() -> Path:
    """The settings file (``$EMPATHY_SETTINGS``, else ``app-settings.json`` in the user cache folder)."""
    return default_settings_path(user_cache_dir())


def uploads_dir() -> Path:
    """Where uploaded files are kept so they can be reopened (beside the settings file)."""
    return settings_path().parent / "uploads"


def load_saved_upload(digest: str) -> None:
    """Load a saved upload into the session (:data:`~empathy_app.session_keys.UPLOADED_DATASET`); raises
    :class:`DataError` when it is gone."""
    try:
        saved = load_upload(uploads_dir(), digest)
    except (OSError, ValueError) as error:
        raise DataError(f"upload:{digest}", f"the saved upload cannot be read ({error})") from None
    st.session_state[session_keys.UPLOADED_DATASET] = load_from_uploads(saved["outputs"], saved["ratings"])


# ------------------------------------------------------------------------------------ the data set

def _current_source_dataset() -> tuple[Dataset, str, Path | None, str | None]:
    """The source's data set, its name, its folder and its content key when the loading gave one (files: the hash
    of their bytes; ``None``: hash the tables, :func:`content_key`)."""
    source = st.session_state[session_keys.SOURCE]
    if source["kind"] == "upload":
        if session_keys.UPLOADED_DATASET not in st.session_state and source.get("saved"):
            load_saved_upload(source["saved"])
        return st.session_state[session_keys.UPLOADED_DATASET], source["name"], None, None
    if source["kind"] == "path":
        outputs, ratings = Path(source["outputs"]), [Path(p) for p in source["ratings"]]
        dataset, key = load_paths_keyed(outputs, ratings)
        return dataset, str(outputs), outputs.parent, key
    if source["kind"] in IMPORTERS:
        dataset, _ = load_import(source["kind"], source["directory"])
        return dataset, IMPORTERS[source["kind"]].title, None, None
    folder = demo_dir()
    outputs, ratings = demo_files(folder)
    if outputs is None:
        raise DataError(str(folder), "the bundled demo data (outputs.csv) is missing")
    dataset, key = load_paths_keyed(outputs, ratings)
    return dataset, "demo data", folder, key


def tasks_of(dataset: Dataset) -> list[str]:
    """The task filter's choices for a data set (without "all"): its tasks, plus :data:`NO_TASK` when mixed."""
    present = set(dataset.outputs["task"].unique())
    named = sorted(t for t in present if t)
    return [*named, NO_TASK] if named and "" in present else named


def task_label(task: str) -> str:
    """How a task filter value is shown."""
    return {ALL_TASKS: "All tasks", NO_TASK: "(no task)"}.get(task, task)


def filter_task(dataset: Dataset, task: str) -> Dataset:
    """The outputs of one task and the ratings of those outputs (``task`` ``""``: the data set unchanged)."""
    if task == ALL_TASKS:
        return dataset
    wanted = "" if task == NO_TASK else task
    outputs = dataset.outputs[dataset.outputs["task"] == wanted].reset_index(drop=True)
    keys = pd.MultiIndex.from_frame(outputs[["item_id", "model"]])
    inside = pd.MultiIndex.from_frame(dataset.ratings[["item_id", "model"]]).isin(keys)
    return Dataset(outputs=outputs, ratings=dataset.ratings[inside].reset_index(drop=True),
                   sources=list(dataset.sources))


def extra_ratings(base_key: str) -> dict[str, ExtraRatings]:
    """The ratings added this session to the data set whose files have content key ``base_key``."""
    return st.session_state.setdefault(session_keys.EXTRA_RATINGS, {}).get(base_key, {})


def add_extra_ratings(data: Loaded, extra: ExtraRatings) -> None:
    """Add a rater's ratings to this session's copy of the data set (refused when the rater name is taken).

    Raises
    ------
    ValueError
        When ``extra.rater`` already rates in the data set (files or this session): ratings of two runs are
        never merged under one name.
    """
    taken = set(data.all_data.raters)
    if extra.rater in taken:
        raise ValueError(f"the rater name {extra.rater!r} is already in the data set; choose another name")
    store = st.session_state.setdefault(session_keys.EXTRA_RATINGS, {})
    store[data.base_key] = {**store.get(data.base_key, {}), extra.rater: extra}


def remove_extra_ratings(data: Loaded, rater: str) -> None:
    """Drop a rater added this session (the files are not touched)."""
    store = st.session_state.setdefault(session_keys.EXTRA_RATINGS, {})
    current = dict(store.get(data.base_key, {}))
    current.pop(rater, None)
    store[data.base_key] = current


def free_rater_name(taken: Sequence[str], wanted: str) -> str:
    """``wanted``, or ``wanted-2``, ``wanted-3``... whichever is not ``taken`` first."""
    names = set(taken)
    if wanted not in names:
        return wanted
    suffix = 2
    while f"{wanted}-{suffix}" in names:
        suffix += 1
    return f"{wanted}-{suffix}"


def with_extras(dataset: Dataset, extras: Sequence[ExtraRatings]) -> Dataset:
    """The data set with this session's added ratings appended (a rater that clashes is left out)."""
    if not extras:
        return dataset
    taken = set(dataset.raters)
    parts = [dataset.ratings] + [e.ratings for e in extras if e.rater not in taken]
    ratings = pd.concat([p for p in parts if len(p)], ignore_index=True) if any(len(p) for p in parts) \
        else dataset.ratings
    return Dataset(outputs=dataset.outputs, ratings=ratings, sources=[*dataset.sources,
                   *(f"(this session) {e.rater}" for e in extras if e.rater not in taken)])


def ratings_key(ratings: pd.DataFrame) -> str:
    """Hash of a ratings table's contents (the key of an added rater in the caches)."""
    digest = hashlib.sha256(pd.util.hash_pandas_object(ratings.astype(str), index=False).to_numpy().tobytes())
    digest.update(",".join(map(str, ratings.columns)).encode())
    return digest.hexdigest()[:20]


def safe_file_part(name: str) -> str:
    """A rater name made safe for a file name (``ratings_<name>.csv``)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "rater"


def save_extra_ratings(data: Loaded, rater: str, target: Path) -> Path:
    """Write a rater added this session to ``target`` beside the data and load it from there from now on.

    Raises
    ------
    ValueError
        When ``target`` exists (never overwritten) or ``rater`` was not added this session.
    """
    extra = extra_ratings(data.base_key).get(rater)
    if extra is None:
        raise ValueError(f"no rater {rater!r} was added in this session")
    if target.exists():
        raise ValueError(f"{target} exists already; not overwritten (rename the rater or move the file)")
    from empathy.io import RATING_COLUMNS, write_ratings

    write_ratings(extra.ratings[list(RATING_COLUMNS)], target)
    source = st.session_state[session_keys.SOURCE]
    if source["kind"] == "path" and str(target) not in source["ratings"]:
        st.session_state[session_keys.SOURCE] = {**source, "ratings": [*source["ratings"], str(target)]}
    # The file is part of the data set now (its content key changes), so the session copy must go.
    remove_extra_ratings(data, rater)
    return target


def _derived_key(base_key: str, extras: Sequence[ExtraRatings], task: str) -> str:
    if not extras and task == ALL_TASKS:
        return base_key  # unchanged for the plain data set, so caches keyed before this filter still apply
    text = "|".join([base_key, *(f"{e.rater}={e.key}" for e in extras), f"task={task}"])
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def _file_stamps(paths: Sequence[Path]) -> tuple[tuple[str, int, int], ...]:
    stamps = []
    for path in paths:
        try:
            info = path.stat()
        except OSError:
            stamps.append((str(path), -1, -1))
        else:
            stamps.append((str(path), info.st_mtime_ns, info.st_size))
    return tuple(stamps)


def source_token(source: dict) -> tuple:
    """A cheap token that changes whenever the data of ``source`` may have changed (no file is read).

    Files: their paths, modification times and sizes; an upload: the identity of the uploaded
    :class:`Dataset` object (a new upload is a new object); the Kumar import: the modification times of its
    folder's files. The keys that hash the contents (:func:`content_key`, :func:`empathy.labels.records.dataset_id`)
    are computed once per token, not on every rerun.
    """
    kind = source.get("kind")
    if kind == "upload":
        return ("upload", id(st.session_state.get(session_keys.UPLOADED_DATASET)))
    if kind == "path":
        return ("path", _file_stamps([Path(source["outputs"]), *(Path(p) for p in source["ratings"])]))
    if kind in IMPORTERS:
        directory = Path(source["directory"])
        return (kind, str(directory), _tree_mtimes(directory) if directory.is_dir() else ())
    outputs, ratings = demo_files()
    return ("demo", _file_stamps([p for p in (outputs, *ratings) if p is not None]))


@dataclass(frozen=True)
class _Base:
    """The loaded files of a source with their content keys, kept in the session while the token holds."""

    token: tuple
    dataset: Dataset
    name: str
    data_dir: Path | None
    base_key: str


@dataclass(frozen=True)
class _Derived:
    """The data set with this session's added ratings and the task filter applied, and its content key."""

    token: tuple
    full: Dataset
    dataset: Dataset
    content_key: str
    task: str


def _base() -> _Base:
    token = source_token(st.session_state[session_keys.SOURCE])
    held = st.session_state.get(session_keys.BASE)
    if held is not None and held.token == token:
        return held
    dataset, name, data_dir, key = _current_source_dataset()
    held = _Base(token, dataset, name, data_dir, content_key(dataset, key))
    # The Dataset object is the upload token: holding it here keeps its identity unique while it is used.
    st.session_state[session_keys.BASE] = held
    return held


def _derived(base: _Base) -> _Derived:
    extras = list(extra_ratings(base.base_key).values())
    task = st.session_state.get(session_keys.TASK, ALL_TASKS)
    token = (base.base_key, tuple((e.rater, e.key) for e in extras), task)
    held = st.session_state.get(session_keys.DERIVED)
    if held is not None and held.token == token:
        return held
    full = with_extras(base.dataset, extras)
    if task != ALL_TASKS and task not in tasks_of(full):
        task = st.session_state[session_keys.TASK] = ALL_TASKS  # another data set was loaded: its tasks differ
        token = (base.base_key, token[1], task)
    held = _Derived(token, full, filter_task(full, task), _derived_key(base.base_key, extras, task), task)
    st.session_state[session_keys.DERIVED] = held
    return held


def _load() -> Loaded | None:
    """The session's data set, or ``None`` after showing why it could not be loaded.

    Cheap on a rerun: the files are read and hashed only when :func:`source_token` changes, and the added
    ratings and task filter are applied only when they change.
    """
    try:
        base = _base()
    except DataError as error:
        st.error(f"Could not load the data: {md(error)}")
        return None
    except KeyError:
        st.session_state[session_keys.SOURCE] = {"kind": "demo"}
        return _load()
    derived = _derived(base)
    store_path = store_path_for(st.session_state[session_keys.SOURCE], base.data_dir)
    try:
        roles = identity.load_roles()
    except DataError as error:
        # no roles is no check: malformed roles never fall back to letting everyone write
        st.error(f"The roles cannot be read, so the data set is not opened: {md(error)}")
        return None
    if st.session_state[session_keys.SOURCE].get("kind") == "upload":
        _adopt_old_store(store_path)
    try:
        store = get_store(str(store_path), roles)
        store.version()  # one small read: a store damaged after it was opened is reported here too
    except StoreError as error:
        # A damaged store is never replaced by a fresh one: say so and stop, nothing is written.
        st.error(f"The override store cannot be used: {md(error)}")
        return None
    return Loaded(dataset=derived.dataset, name=base.name, data_dir=base.data_dir,
                  dataset_id=store_dataset_name(st.session_state[session_keys.SOURCE], store_path),
                  content_key=derived.content_key, store=store, full=derived.full,
                  base_key=base.base_key, task=derived.task)


#: glibc's ``mallopt`` parameter number of ``M_MMAP_THRESHOLD`` (malloc.h).
_M_MMAP_THRESHOLD = -3
#: Blocks from this size up are mapped on their own and unmapped when freed (glibc's default moves the threshold
#: up to 32 MiB after the first large free, after which freed arrays of tens of MiB stayed in the heap). A column of
#: 3 million ratings (24 MiB) is above it, one of 200,000 outputs below: 1 MiB cost Overview's first visit ~0.7 s
#: of CPU more in page faults at 200,000 outputs for ~40 MiB less peak.
MMAP_THRESHOLD_BYTES = 8 << 20
_allocators_set = False


def return_freed_memory() -> dict[str, str]:
    """Make the worker give freed table memory back to the system (once per process; issue 25, the worker under
    2 GB): Arrow's buffers from the system allocator (its default, mimalloc, kept the pages of every freed
    string column: +130 MiB after one ``str.strip`` of 200,000 texts) and glibc's large blocks always mapped
    (:data:`MMAP_THRESHOLD_BYTES`), so a page's transient arrays leave no high-water mark for the next page to
    stack on. A setting the user made (``ARROW_DEFAULT_MEMORY_POOL``, ``MALLOC_MMAP_THRESHOLD_``) is left as it
    is; outside glibc only Arrow's pool is set. Returns what was set (for the record and the tests)."""
    global _allocators_set
    done: dict[str, str] = {}
    if _allocators_set:
        return done
    _allocators_set = True
    if not os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):
        import pyarrow

        pyarrow.set_memory_pool(pyarrow.system_memory_pool())
        done["arrow"] = "system"
    if not os.environ.get("MALLOC_MMAP_THRESHOLD_") and platform.libc_ver()[0] == "glibc":
        try:
            libc = ctypes.CDLL("libc.so.6")
        except OSError:
            return done
        if libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES) == 1:
            done["mmap_threshold"] = str(MMAP_THRESHOLD_BYTES)
    return done


def open_data_set() -> Loaded | None:
    """Load the session's data set for this run and keep it for the page (the frame's step, in ``app.py``).

    Returns it, or ``None`` after showing why it could not be loaded (the Data page still works then). The
    process's allocators are set first (:func:`return_freed_memory`, once).
    """
    return_freed_memory()
    data = _load()
    st.session_state[session_keys.DATA] = data
    return data


def current_data() -> Loaded | None:
    """The data set the frame loaded for this run (``None`` when it could not be loaded).

    Raises
    ------
    RuntimeError
        When no frame ran: a page is a page of ``app.py``'s ``st.navigation`` and is opened through it.
    """
    if session_keys.DATA not in st.session_state:
        raise RuntimeError("no data set was loaded for this run: open the page through app.py (st.navigation), "
                           "whose frame loads it before the page runs")
    return st.session_state[session_keys.DATA]


def require_data(*, ratings: bool = True) -> Loaded:
    """The data set of this run (:func:`current_data`); stops the page with a clear message when it is missing,
    has no outputs or (``ratings``) no ratings."""
    data = current_data()
    if data is None:
        st.info("Open the **Data** page to choose another data set.")
        st.stop()
    if data.dataset.outputs.empty:
        st.info("The data set has no outputs. Load another one on the **Data** page.")
        st.stop()
    if ratings and data.dataset.ratings.empty:
        if data.filtered and not data.all_data.ratings.empty:
            st.info(f"No rating of the task **{md(task_label(data.task))}** in this data set, so there is nothing to "
                    "compute for it. Choose another task (or *All tasks*) in the sidebar.")
        else:
            st.info("This data set has outputs but no ratings yet, so there is nothing to compute. "
                    "Add ratings files (or rating columns `<rater>:<dimension>`) on the **Data** page.")
        st.stop()
    return data
