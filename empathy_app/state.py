"""Shared Streamlit plumbing of the app: session state, data loading, caches and the sidebar.

Business logic lives in :mod:`empathy` (``io``, ``store``, ``review``, ``evaluate``, ``render``); this module
only wires it to Streamlit. Every page calls :func:`page_setup` first, which initialises the session state
once (behind a guard), loads the bundled demo data when nothing else is loaded, and draws the sidebar.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import os
import re
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from empathy.datasets import IMPORTERS, Importer
from empathy.datasets.report import ImportReport
from empathy.evaluate import MetricsReport, TextFeatures, default_by_task, text_features
from empathy.io import (
    SUPPORTED_SUFFIXES,
    DataError,
    Dataset,
    build_dataset,
    load_outputs,
    load_ratings,
    validate_outputs,
)
from empathy.labels.backends import open_store
from empathy.labels.ledger import Ledger, apply_overrides, open_ledger
from empathy.labels.locations import STORE_ENV, StoreError, default_store_path
from empathy.labels.records import dataset_id as legacy_dataset_id
from empathy.labels.records import dataset_name, output_hashes
from empathy.labels.sqlite import OverrideStore
from empathy.metrics import registry_token
from empathy.paths import DEMO_DIR
from empathy.progress import format_duration
from empathy.review import Recompute
from empathy_app.markup import code, codes, md
from empathy_app.progress import ProgressBar

_DEFAULTS: dict[str, object] = {
    "source": {"kind": "demo"},          # how the current data set was chosen
    "with_overrides": True,              # the global judge-only / with-overrides toggle
    "annotator": "",                     # the name recorded with every override
    "flash": None,                       # one-shot Markdown message shown after a rerun ("Saved ..."); its
                                         # data parts escaped by whoever composes it (empathy_app.markup.md)
    "relabel_skipped": [],               # (item_id, model) pairs skipped in the Relabel queue this session
    "task": "",                          # the sidebar's task filter ("" = all tasks)
    "pooled_tasks": False,               # all tasks: per task (the paper's reading) unless pooled explicitly
    "extra_ratings": {},                 # base content key -> {rater: ExtraRatings} added this session (Judge)
}
ALL_TASKS = ""
NO_TASK = "\x00no-task"  # option for outputs without a task in a data set where others have one


def init_state() -> None:
    """Put the app's keys into ``st.session_state`` once per session."""
    if st.session_state.get("_initialised"):
        return
    chosen = "source" in st.session_state  # set before the first run (tests, a caller): never replaced
    for key, value in _DEFAULTS.items():
        st.session_state.setdefault(key, copy.deepcopy(value))  # no mutable default shared between sessions
    st.session_state["_initialised"] = True
    if not chosen:
        from empathy_app import memory  # it imports this module

        memory.restore()  # a reload is a new session: reopen the data set the URL names


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

def demo_files(directory: Path = DEMO_DIR) -> tuple[Path | None, list[Path]]:
    """The outputs file and every ``ratings*`` file of a data folder (CSV, JSONL or Parquet)."""
    outputs = None
    for suffix in SUPPORTED_SUFFIXES:
        candidate = directory / f"outputs{suffix}"
        if candidate.exists():
            outputs = candidate
            break
    ratings = sorted(p for p in directory.glob("ratings*") if p.suffix.lower() in SUPPORTED_SUFFIXES)
    return outputs, ratings


def _mtimes(paths: Sequence[Path]) -> tuple[float, ...]:
    return tuple(p.stat().st_mtime if p.exists() else -1.0 for p in paths)


# ``mtimes_key`` has no leading underscore on purpose: Streamlit leaves such parameters out of the cache key,
# and an edited file must load afresh.
@st.cache_data(show_spinner=False, max_entries=8)
def _load_paths(outputs: str, ratings: tuple[str, ...], mtimes_key: tuple[float, ...]) -> Dataset:
    out, wide = load_outputs(outputs)
    tables = [(path, load_ratings(path)) for path in ratings]
    return build_dataset(out, wide, tables, sources=[outputs, *ratings])


def load_from_paths(outputs: Path, ratings: Sequence[Path]) -> Dataset:
    """Load (cached on paths and modification times) an outputs file and its ratings files."""
    return _load_paths(str(outputs), tuple(str(p) for p in ratings), _mtimes([outputs, *ratings]))


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

#: The Kumar et al. (2025) importer (the Data page and tests name it directly).
KUMAR2025_IMPORTER: Importer = IMPORTERS["kumar2025"]
#: The folder name of the Kumar et al. (2025) annotations under ``shared/datasets``.
KUMAR2025 = KUMAR2025_IMPORTER.folder
#: How the Data page names this source.
KUMAR2025_LABEL = KUMAR2025_IMPORTER.label
#: The override store of the import when ``$EMPATHY_STORE`` is unset (``../shared`` is read-only).
KUMAR2025_STORE = KUMAR2025_IMPORTER.store_file


def import_directory(name: str) -> Path | None:
    """The folder of the importer ``name`` under ``shared/datasets``, or ``None`` when absent (the Data page
    offers the source only when present)."""
    return IMPORTERS[name].directory()


def kumar_directory() -> Path | None:
    """The Kumar et al. (2025) data folder (``shared/datasets/<KUMAR2025>``), or ``None`` when absent."""
    return import_directory(KUMAR2025_IMPORTER.name)


def kumar_expected_location() -> str:
    """Where the Kumar et al. (2025) folder would be found (for the Data page's note when it is absent)."""
    return KUMAR2025_IMPORTER.expected_location()


def user_cache_dir() -> Path:
    """``$EMPATHY_CACHE_DIR``, else ``~/.cache/empathy`` (the judges' and distancing caches live there too)."""
    root = os.environ.get("EMPATHY_CACHE_DIR", "").strip()
    return Path(root).expanduser() if root else Path.home() / ".cache" / "empathy"


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


def load_kumar(directory: str | Path) -> tuple[Dataset, ImportReport]:
    """:func:`load_import` of the Kumar et al. (2025) importer."""
    return load_import(KUMAR2025_IMPORTER.name, directory)


def store_path_for(source: dict, data_dir: Path | None) -> Path | str:
    """The override store of a source: ``$EMPATHY_STORE``, else beside the data (an imported data set, whose
    folder is read-only third-party data: ``<user cache dir>/overrides-<importer>.sqlite``).

    ``$EMPATHY_STORE`` may be a team's ``postgresql://`` URL (returned as a string; print it only through
    :func:`empathy.labels.locations.mask_location`)."""
    importer = IMPORTERS.get(source.get("kind", ""))
    if importer is not None and not os.environ.get(STORE_ENV, "").strip():
        return user_cache_dir() / importer.store_file
    return default_store_path(data_dir)


def resolve_path(text: str) -> tuple[Path, list[Path]]:
    """A typed path: a data folder (``outputs.*`` + ``ratings*``) or an outputs file (ratings beside it)."""
    path = Path(text.strip()).expanduser()
    if not text.strip():
        raise DataError("<path>", "enter a folder or an outputs file")
    if path.is_dir():
        outputs, ratings = demo_files(path)
        if outputs is None:
            raise DataError(str(path), "no outputs.csv, outputs.jsonl or outputs.parquet in this folder")
        return outputs, ratings
    if not path.exists():
        raise DataError(str(path), "file not found")
    return path, sorted(p for p in path.parent.glob("ratings*") if p.suffix.lower() in SUPPORTED_SUFFIXES)


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


def content_key(dataset: Dataset) -> str:
    """Hash of the outputs and ratings contents (cache key of everything derived from the data)."""
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
    outputs, _ = demo_files(DEMO_DIR)
    return dataset_name(outputs if outputs is not None else DEMO_DIR / "outputs.csv", store_path=store_path)


@st.cache_resource(show_spinner=False, max_entries=8)
def _output_hashes(key: str, _outputs: pd.DataFrame) -> tuple[dict[tuple[str, str], str], str]:
    return output_hashes(_outputs), legacy_dataset_id(_outputs)


@st.cache_resource(show_spinner=False, max_entries=16)
def _ledger(path: str, name: str, rule: str, key: str, version: int, _store: OverrideStore,
            _outputs: pd.DataFrame) -> Ledger:
    hashes, legacy = _output_hashes(key, _outputs)
    return open_ledger(_store, name, _outputs, rule, hashes=hashes, legacy_id=legacy)


def output_hash_map(data: Loaded) -> dict[tuple[str, str], str]:
    """:func:`empathy.labels.records.output_hashes` of the loaded outputs (computed once per data set, shared)."""
    return _output_hashes(data.base_key or data.content_key, data.all_data.outputs)[0]


def ledger(data: Loaded) -> Ledger:
    """The data set's decisions sorted against its outputs: applied, stale, orphaned, unresolved.

    Under the session's label rule (``label_rule``). Computed again whenever the store changed (any session,
    any process: :meth:`OverrideStore.version` is read on every call), else shared; version 1 rows of the same
    outputs are moved to the data set's name first. Callers must not modify the frames.
    """
    rule = st.session_state.get("label_rule", "latest")
    key = data.base_key or data.content_key
    return _ledger(data.store.label, data.dataset_id, rule, key, data.store.version(), data.store,
                   data.all_data.outputs)


@st.cache_resource(show_spinner=False)
def get_store(path: str) -> OverrideStore:
    """One :class:`OverrideStore` per SQLite file or PostgreSQL URL, shared by every session."""
    return open_store(path)


def _current_source_dataset() -> tuple[Dataset, str, Path | None]:
    source = st.session_state["source"]
    if source["kind"] == "upload":
        if "uploaded_dataset" not in st.session_state and source.get("saved"):
            from empathy_app import memory

            memory.load_saved_upload(source["saved"])
        return st.session_state["uploaded_dataset"], source["name"], None
    if source["kind"] == "path":
        outputs, ratings = Path(source["outputs"]), [Path(p) for p in source["ratings"]]
        return load_from_paths(outputs, ratings), str(outputs), outputs.parent
    if source["kind"] in IMPORTERS:
        dataset, _ = load_import(source["kind"], source["directory"])
        return dataset, IMPORTERS[source["kind"]].title, None
    outputs, ratings = demo_files(DEMO_DIR)
    if outputs is None:
        raise DataError(str(DEMO_DIR), "the bundled demo data (outputs.csv) is missing")
    return load_from_paths(outputs, ratings), "demo data", DEMO_DIR


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
    return st.session_state.setdefault("extra_ratings", {}).get(base_key, {})


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
    store = st.session_state.setdefault("extra_ratings", {})
    store[data.base_key] = {**store.get(data.base_key, {}), extra.rater: extra}


def remove_extra_ratings(data: Loaded, rater: str) -> None:
    """Drop a rater added this session (the files are not touched)."""
    store = st.session_state.setdefault("extra_ratings", {})
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
    source = st.session_state["source"]
    if source["kind"] == "path" and str(target) not in source["ratings"]:
        st.session_state["source"] = {**source, "ratings": [*source["ratings"], str(target)]}
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
        return ("upload", id(st.session_state.get("uploaded_dataset")))
    if kind == "path":
        return ("path", _file_stamps([Path(source["outputs"]), *(Path(p) for p in source["ratings"])]))
    if kind in IMPORTERS:
        directory = Path(source["directory"])
        return (kind, str(directory), _tree_mtimes(directory) if directory.is_dir() else ())
    outputs, ratings = demo_files(DEMO_DIR)
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
    token = source_token(st.session_state["source"])
    held = st.session_state.get("_base")
    if held is not None and held.token == token:
        return held
    dataset, name, data_dir = _current_source_dataset()
    held = _Base(token, dataset, name, data_dir, content_key(dataset))
    # The Dataset object is the upload token: holding it here keeps its identity unique while it is used.
    st.session_state["_base"] = held
    return held


def _derived(base: _Base) -> _Derived:
    extras = list(extra_ratings(base.base_key).values())
    task = st.session_state.get("task", ALL_TASKS)
    token = (base.base_key, tuple((e.rater, e.key) for e in extras), task)
    held = st.session_state.get("_derived")
    if held is not None and held.token == token:
        return held
    full = with_extras(base.dataset, extras)
    if task != ALL_TASKS and task not in tasks_of(full):
        task = st.session_state["task"] = ALL_TASKS  # another data set was loaded: its tasks differ
        token = (base.base_key, token[1], task)
    held = _Derived(token, full, filter_task(full, task), _derived_key(base.base_key, extras, task), task)
    st.session_state["_derived"] = held
    return held


def loaded() -> Loaded | None:
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
        st.session_state["source"] = {"kind": "demo"}
        return loaded()
    derived = _derived(base)
    store_path = store_path_for(st.session_state["source"], base.data_dir)
    try:
        store = get_store(str(store_path))
        store.version()  # one small read: a store damaged after it was opened is reported here too
    except StoreError as error:
        # A damaged store is never replaced by a fresh one: say so and stop, nothing is written.
        st.error(f"The override store cannot be used: {md(error)}")
        return None
    return Loaded(dataset=derived.dataset, name=base.name, data_dir=base.data_dir,
                  dataset_id=store_dataset_name(st.session_state["source"], store_path),
                  content_key=derived.content_key, store=store, full=derived.full,
                  base_key=base.base_key, task=derived.task)


_UNSET = object()


def require_data(data: Loaded | None | object = _UNSET, *, ratings: bool = True) -> Loaded:
    """The loaded data set; stops the page with a clear message when it is missing or has no ratings.

    ``data``: what :func:`page_setup` returned (so the page loads once); omitted, it is loaded here.
    """
    if data is _UNSET:
        data = loaded()
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
    return data  # type: ignore[return-value]


# ----------------------------------------------------------------------------------------------- analysis

def _analyze(texts: Sequence[str], progress: Callable[..., None] | None = None) -> list:
    """:func:`empathy.distancing.analyze` over ``texts`` (its on-disk cache is safe across Streamlit's threads)."""
    from empathy.distancing import analyze

    if progress is None:
        return list(analyze(list(texts)))
    # Small rounds: each is stored in the disk cache before the next starts, so a run stopped by a click
    # elsewhere (the bar's next update raises Streamlit's stop) loses at most one round of parsing.
    return list(analyze(list(texts), batch_size=32, progress=progress))


def _spacy_analyser(texts: Sequence[str], bar: ProgressBar | None = None) -> tuple[np.ndarray, np.ndarray]:
    tracker = bar.tracker(len(texts), "texts") if bar is not None else None
    results = _analyze(texts, tracker.advance if tracker is not None else None)
    sentences = np.array([r.sentences for r in results], dtype=float)
    densities = np.array([r.densities() for r in results], dtype=float).reshape(len(results), 3)
    return sentences, densities


#: Text features by content key, shared by every session (the newest few). Not ``st.cache_data``: the
#: analysis reports to a progress bar of the calling page, which a cached function would record and replay.
_FEATURES_KEPT = 4


@st.cache_resource(show_spinner=False)
def _features_held() -> dict[str, TextFeatures]:
    return {}


def _features(key: str, outputs: pd.DataFrame) -> TextFeatures:
    held = _features_held()
    found = held.get(key)
    if found is not None:
        return found
    from empathy.evaluate import spacy_analyser_signature

    frame = pd.DataFrame({"item_id": range(len(outputs)), "model": "", "task": "",
                          "reference": outputs["reference"].tolist(), "generation": outputs["generation"].tolist()})
    with ProgressBar("Analysing the texts (sentences and distancing)") as bar:
        result = text_features(frame, lambda texts: _spacy_analyser(texts, bar),
                               signature=spacy_analyser_signature())
        if bar.last is not None:
            done = bar.last
            bar.finish(f"Analysed {done.total:,} distinct texts in {format_duration(done.elapsed)} (kept for the "
                       "next visit).")
    held[key] = result
    while len(held) > _FEATURES_KEPT:
        held.pop(next(iter(held)))  # dicts keep insertion order: the oldest goes first
    return result


def features(data: Loaded) -> TextFeatures:
    """Sentence counts and distancing densities of every text (cached; a progress bar on first use).

    The texts of the whole data set are analysed once (keyed by the files' content); a task filter takes
    its rows from that, so switching tasks or adding a judge's ratings analyses nothing again. The first
    analysis shows counts and an ETA; it is stored in rounds (the distancing disk cache), so leaving the page
    midway keeps the finished texts.
    """
    outputs = data.all_data.outputs
    every = _features(data.base_key or data.content_key, outputs)
    if not data.filtered:
        return every
    position = pd.MultiIndex.from_frame(outputs[["item_id", "model"]]).get_indexer(
        pd.MultiIndex.from_frame(data.dataset.outputs[["item_id", "model"]]))
    return TextFeatures(sentences_ref=every.sentences_ref[position], sentences_gen=every.sentences_gen[position],
                        densities_ref=every.densities_ref[position], densities_gen=every.densities_gen[position],
                        signature=every.signature)


def by_task(data: Loaded) -> bool:
    """Whether the numbers are computed within each task: whenever the shown outputs hold several tasks, unless
    the sidebar pools them (an explicit choice, named ``tasks:pooled`` in the signature). The paper reports per
    task, and pooled LD standardises across genres (:func:`empathy.evaluate.default_by_task`)."""
    return default_by_task(data.dataset.outputs) and not st.session_state.get("pooled_tasks", False)


def pooled(data: Loaded) -> bool:
    """Whether the numbers pool several tasks (the sidebar's explicit choice)."""
    return default_by_task(data.dataset.outputs) and not by_task(data)


@st.cache_resource(show_spinner=False, max_entries=4)
def _engine(key: str, by_task: bool, egm_both_zero: str, ld_standardization: str, _outputs: pd.DataFrame,
            _ratings: pd.DataFrame, _features: TextFeatures) -> Recompute:
    return Recompute(_outputs, _ratings, _features, by_task=by_task, egm_both_zero=egm_both_zero,
                     ld_standardization=ld_standardization)


def engine(data: Loaded, *, egm_both_zero: str = "zero", ld_standardization: str = "separate") -> Recompute:
    """The fast recompute engine of this data set (built once per data set, task scope, EGM and LD reading;
    shared).

    ``egm_both_zero``: the reading of an EGM item with a + b = 0, where Eq. 2 is 0/0 (``"zero"``, our default, or
    ``"exclude"``; :class:`empathy.metrics.MetricOptions`). ``ld_standardization``: ``"separate"`` (Eq. 4, the
    default everywhere) or ``"reference"`` (the CLI's ``--ld-standardization reference``, offered on the
    Overview).
    """
    # the registry's token too: a metric registered since (empathy.metrics.register_metric) needs a new plan
    return _engine(f"{data.content_key}|{registry_token()}", by_task(data), egm_both_zero, ld_standardization,
                   data.dataset.outputs, data.dataset.ratings, features(data))


def overrides(data: Loaded) -> pd.DataFrame:
    """Current overrides of the data set, read from SQLite on every rerun (other sessions' included).

    Only those of raters in the data set and, under a task filter, of that task's outputs: any other would
    enter the ratings as a new row (:func:`empathy.labels.ledger.apply_overrides` adds unmatched overrides), e.g. as
    a phantom rater after a rater added on the Judge page was removed or the session ended.
    """
    table = ledger(data).applied  # stale, orphaned and unresolved decisions are never applied
    if table.empty:
        return table
    keep = table["rater"].astype(str).isin(data.all_data.raters).to_numpy(copy=True)
    if data.filtered:
        keys = pd.MultiIndex.from_frame(data.dataset.outputs[["item_id", "model"]])
        keep &= pd.MultiIndex.from_frame(table[["item_id", "model"]].astype(str)).isin(keys)
    return table if keep.all() else table[keep].reset_index(drop=True)


def overrides_key(table: pd.DataFrame | None) -> str:
    """Hash of an overrides table's keys and values (small: one row per override), ``"none"`` when empty.

    With the content key it names everything computed from the effective ratings, so a cache entry is reused
    until an override (of this session or another) changes.
    """
    if table is None or table.empty:
        return "none"
    columns = [c for c in ("item_id", "model", "rater", "dimension", "value") if c in table.columns]
    hashed = pd.util.hash_pandas_object(table[columns].astype(str), index=False).to_numpy()
    return hashlib.sha256(hashed.tobytes()).hexdigest()[:20]


def _use_overrides(with_overrides: bool | None) -> bool:
    return bool(st.session_state["with_overrides"] if with_overrides is None else with_overrides)


@st.cache_data(show_spinner=False, max_entries=16)
def _report(key: str, okey: str, scope: str, _engine: Recompute, _overrides: pd.DataFrame | None
            ) -> MetricsReport:
    return _engine.report(_overrides)


def report(data: Loaded, *, with_overrides: bool | None = None, egm_both_zero: str = "zero",
           ld_standardization: str = "separate") -> MetricsReport:
    """Metrics under the global toggle (or as asked): judge-only or with the human overrides applied.

    Per task wherever the data hold several tasks (:func:`by_task`). Cached per (data set, overrides, task
    scope, EGM and LD reading): a rerun with no new override recomputes nothing. The signature names a
    non-default reading.
    """
    current = overrides(data) if _use_overrides(with_overrides) else None
    scope = f"by_task={by_task(data)}|egm={egm_both_zero}|ld={ld_standardization}|metrics={registry_token()}"
    result = _report(data.content_key, overrides_key(current), scope,
                     engine(data, egm_both_zero=egm_both_zero, ld_standardization=ld_standardization), current)
    if current is None:
        return result
    # which human labels the table rests on (label rule and a digest of the applied overrides), not only
    # how many: the same fields as ``metrics --overrides`` on the command line
    fields = ledger(data).signature_fields()
    return dataclasses.replace(result, signature=dataclasses.replace(
        result.signature, extra={**result.signature.extra, **fields}))


@st.cache_resource(show_spinner=False, max_entries=4)
def _effective(key: str, okey: str, _ratings: pd.DataFrame, _overrides: pd.DataFrame | None) -> pd.DataFrame:
    return apply_overrides(_ratings, _overrides)


def effective_ratings(data: Loaded, *, with_overrides: bool | None = None) -> pd.DataFrame:
    """Ratings with overrides applied (column ``overridden``) under the global toggle.

    Cached per (data set, overrides) and shared, not copied: callers must not modify the frame in place.
    """
    current = overrides(data) if _use_overrides(with_overrides) else None
    return _effective(data.content_key, overrides_key(current), data.dataset.ratings, current)


def effective_key(data: Loaded, dimensions: Sequence[str] | None = None, *,
                  with_overrides: bool | None = None) -> str:
    """A key naming :func:`effective_ratings` (data set and overrides under the toggle), for other caches.

    ``dimensions``: for a result computed from these dimensions only, the key follows only their overrides,
    so a relabel of another dimension leaves it cached.
    """
    current = overrides(data) if _use_overrides(with_overrides) else None
    if current is not None and dimensions is not None:
        current = current[current["dimension"].isin(list(dimensions))]
    scope = "" if dimensions is None else ":" + ",".join(sorted(dimensions))
    return f"{data.content_key}:{overrides_key(current)}{scope}"


@st.cache_data(show_spinner=False, max_entries=256)
def _alpha(key: str, dimension: str, okey: str, _ratings: pd.DataFrame, _overrides: pd.DataFrame | None
           ) -> pd.DataFrame:
    from empathy.agreement import krippendorff_by_dimension

    part = apply_overrides(_ratings[_ratings["dimension"] == dimension], _overrides)
    return krippendorff_by_dimension(part.drop(columns=["overridden"]))


def alpha_by_dimension(data: Loaded, *, with_overrides: bool | None = None) -> pd.DataFrame:
    """Krippendorff's alpha of every dimension over all raters, of the effective ratings (as
    :func:`empathy.agreement.krippendorff_by_dimension` on them).

    Cached per dimension on the overrides *of that dimension*: after an override only its dimension is
    recomputed.
    """
    current = overrides(data) if _use_overrides(with_overrides) else None
    ratings = data.dataset.ratings
    parts = []
    for dimension in dimensions_of(data):
        mine = None if current is None else current[current["dimension"] == dimension]
        mine = None if mine is None or mine.empty else mine.reset_index(drop=True)
        parts.append(_alpha(data.content_key, dimension, overrides_key(mine), ratings, mine))
    # An override can add a rating on a dimension no judge rated (a human filling a gap).
    extra = [] if current is None else sorted(set(current["dimension"]) - set(dimensions_of(data)))
    for dimension in extra:
        mine = current[current["dimension"] == dimension].reset_index(drop=True)
        parts.append(_alpha(data.content_key, dimension, overrides_key(mine), ratings, mine))
    parts = [p for p in parts if len(p)]
    if not parts:
        return pd.DataFrame(columns=["dimension", "alpha", "level", "n_raters", "n_units"])
    return pd.concat(parts, ignore_index=True).sort_values("dimension", kind="stable").reset_index(drop=True)


@st.cache_data(show_spinner=False, max_entries=8)
def _dimensions(key: str, _ratings: pd.DataFrame) -> list[str]:
    return sorted(_ratings["dimension"].unique())


def dimensions_of(data: Loaded) -> list[str]:
    """The dimensions rated in the data set (cached per content key)."""
    return _dimensions(data.content_key, data.dataset.ratings)


@st.cache_data(show_spinner=False, max_entries=16)
def _human_vs_judges(key: str, okey: str, _ratings: pd.DataFrame, _overrides: pd.DataFrame) -> pd.DataFrame:
    from empathy.review import human_vs_judges

    return human_vs_judges(_ratings, _overrides)


def human_agreement(data: Loaded) -> pd.DataFrame:
    """:func:`empathy.review.human_vs_judges` of the judges' own ratings and the current overrides (cached)."""
    current = overrides(data)
    return _human_vs_judges(data.content_key, overrides_key(current), data.dataset.ratings, current)


@st.cache_data(show_spinner=False, max_entries=64)
def spans_for(texts: tuple[str, ...]) -> list[list[dict[str, object]]]:
    """Distancing spans of each text as plain dicts."""
    return [[span.to_json() if hasattr(span, "to_json") else dict(span) for span in result.spans]
            for result in _analyze(texts)]


@st.cache_data(show_spinner=False, max_entries=64)
def disturbing_for(texts: tuple[str, ...]) -> list[list[dict[str, object]]]:
    """Disturbing-content spans of each text (:func:`empathy.mechanisms.disturbing_highlights`), found on the
    sentences the judges count on (:func:`empathy.judges.segment.sentence_spans`, memoised per process)."""
    from empathy.judges.segment import sentence_spans
    from empathy.mechanisms import disturbing_highlights

    return [disturbing_highlights(text, spans) for text, spans in zip(texts, sentence_spans(texts), strict=True)]


def judged_for(data: Loaded, texts: tuple[str, ...]) -> tuple[list[list[dict[str, object]]], list[str]]:
    """The sentences each LLM judge of the data set counted disturbing content in, per text, and those judges.

    A rater counts when its ``rater_kind`` is ``llm``, it rated ``u_ref``/``u_gen``, and the judges config (the
    Judge page's, else ``$EMPATHY_JUDGES_CONFIG`` or ``./judges.toml``) defines a judge of that name; the counts
    come from the answer cache (:func:`empathy.judges.run.cached_sentence_counts`; never a call). Without a
    config, a cache file or such a rater: nothing (the lexicon underlines and every judge's ``u`` still show).
    """
    empty: list[list[dict[str, object]]] = [[] for _ in texts]
    ratings = data.dataset.ratings
    if "rater_kind" not in ratings.columns:
        return empty, []
    rated = ratings[(ratings["dimension"].isin(["u_ref", "u_gen"])) & (ratings["rater_kind"].astype(str) == "llm")]
    if rated.empty:
        return empty, []
    from empathy.judges import JudgeCache, JudgeConfigError, available_judges, default_cache_path, load_config
    from empathy.judges.run import cached_sentence_counts
    from empathy.mechanisms import judged_highlights

    path_text = str(st.session_state.get("_kept_judge_config_path") or "").strip()
    try:
        from empathy.judges.config import default_config_path

        path = Path(path_text).expanduser() if path_text else default_config_path()
        cache_path = default_cache_path()
        if path is None or not path.is_file() or not cache_path.is_file():
            return empty, []
        judges = available_judges(load_config(path))
    except (JudgeConfigError, OSError):
        return empty, []
    names = [name for name in sorted(rated["rater"].astype(str).unique())
             if name in judges and judges[name].kind == "llm"]
    if not names:
        return empty, []
    out = [list(spans) for spans in empty]
    with JudgeCache(cache_path) as cache:
        for name in names:
            for position, text in enumerate(texts):
                out[position].extend(judged_highlights(cached_sentence_counts(text, judges[name], cache), name))
    return out, names


@st.cache_data(show_spinner=False, max_entries=64)
def densities_for(texts: tuple[str, ...]) -> list[tuple[int, dict[str, int], tuple[float, float, float]]]:
    """(sentences, counts, densities) of each text."""
    return [(int(r.sentences), dict(r.counts), tuple(float(x) for x in r.densities())) for r in _analyze(texts)]


@st.cache_data(show_spinner=False, max_entries=4)
def _standard(key: str, per_task: bool, _outputs: pd.DataFrame) -> pd.DataFrame:
    from empathy.standard import STANDARD_METRICS, compute_standard

    per_item = compute_standard(_outputs).per_item
    keys = ["task", "model"] if per_task else ["model"]
    return per_item.groupby(keys, sort=True)[list(STANDARD_METRICS)].mean().reset_index()


def standard_per_model(data: Loaded) -> pd.DataFrame:
    """Mean ROUGE-L, chrF, CIDEr-D and Sem-Sim (offline TF-IDF) per model over its items, per (task, model)
    when the metrics are per task (:func:`by_task`); cached."""
    return _standard(data.content_key, by_task(data), data.dataset.outputs)


# ----------------------------------------------------------------------------------------------- layout

def _sync(widget_key: str, state_key: str) -> None:
    st.session_state[state_key] = st.session_state[widget_key]


def _sync_task() -> None:
    st.session_state["task"] = st.session_state["_w_task"]


#: Static script (no data in it): "?" typed outside a text field clicks the page's "Keys (?)" button
#: (:func:`empathy_app.views.keys_help`), if the page has one. In the sidebar of every page so that it runs when
#: the app loads: an ``st.html`` script first drawn by a later rerun did not always run.
KEYS_SCRIPT = """<script>
(() => {
  // One listener per browser tab: "?" (outside a text field) clicks the page's keys-help button.
  if (window.__empathyKeysHelp) { return; }
  window.__empathyKeysHelp = true;
  document.addEventListener("keydown", (event) => {
    if (event.key !== "?" || event.ctrlKey || event.metaKey || event.altKey) { return; }
    const target = event.target;
    if (target && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName))) { return; }
    const button = document.querySelector("[class*='st-key-keys_help'] button");
    if (button) { event.preventDefault(); button.click(); }
  });
})();
</script>"""


#: What the sidebar's pooling toggle says it does.
POOL_HELP = ("Off (the default, as in the paper's Tables 3-5): every number is computed within each task, and "
             "tables have a task column. On: one value per model over all tasks; LD is then standardised across "
             "genres, and the signature says tasks:pooled.")


def sidebar(data: Loaded | None) -> None:
    """Data-set name, the task filter, the with-overrides toggle and the annotator name, on every page."""
    with st.sidebar:
        if data is not None:
            st.caption(f"Data: **{md(data.name)}** · id {code(data.dataset_id)}")
            # the ledger every page counts with: decided ratings, whatever their status (the Data page lists
            # how many apply under the label rule and how many are stale, orphaned or unresolved)
            st.caption(f"Human overrides: **{ledger(data).decided}** · store {code(data.store.short_label)}")
            added = extra_ratings(data.base_key)
            if added:
                st.caption("Added this session (not in the files): " + codes(added))
            choices = tasks_of(data.all_data)
            if len(choices) > 1:
                st.session_state["_w_task"] = data.task
                st.selectbox("Task", [ALL_TASKS, *choices], key="_w_task", format_func=task_label,
                             on_change=_sync_task,
                             help="Every page computes on this task's outputs and their ratings only (the "
                                  "paper reports per task, Tables 3-5).")
                if data.task == ALL_TASKS:
                    st.session_state["_w_pooled"] = st.session_state["pooled_tasks"]
                    st.toggle("Pool the tasks", key="_w_pooled", on_change=_sync,
                              args=("_w_pooled", "pooled_tasks"), help=POOL_HELP)
            elif choices:
                st.caption(f"Task: **{md(task_label(choices[0]))}** (the only one)")
        st.session_state["_w_with_overrides"] = st.session_state["with_overrides"]
        st.toggle("Include human overrides", key="_w_with_overrides",
                  on_change=_sync, args=("_w_with_overrides", "with_overrides"),
                  help="Off: every number is the judges' alone. On: human overrides replace judge labels.")
        st.session_state["_w_annotator"] = st.session_state["annotator"]
        st.text_input("Annotator name", key="_w_annotator", on_change=_sync,
                      args=("_w_annotator", "annotator"), placeholder="your name (recorded with each override)")
        st.html(KEYS_SCRIPT, unsafe_allow_javascript=True)

        from empathy_app import memory

        memory.sidebar()
        memory.sync_url()


#: The favicon: an image served by the app itself (a ``:material/...:`` icon would make the browser fetch it
#: from fonts.gstatic.com, which fails offline; see ``views.PAGES``).
ICON = Path(__file__).resolve().parent / "icon.png"


def page_setup(title: str, *, icon: str | Path = ICON) -> Loaded | None:
    """Configure the page, initialise state, draw the sidebar; return the loaded data (or ``None``).

    A page passes the result on to :func:`require_data` so the data set is looked up once per rerun.
    """
    if isinstance(icon, Path) and not icon.is_file():
        icon = "🫶"  # an installed copy without the image: Streamlit draws an emoji favicon locally too
    st.set_page_config(page_title=f"{title} · empathy", page_icon=icon, layout="wide")
    init_state()
    data = loaded()
    sidebar(data)
    st.title(title)
    flash = st.session_state.get("flash")
    if flash:
        st.success(flash)
        st.session_state["flash"] = None
    return data


def store_path_note(data: Loaded) -> str:
    """Where the overrides of this data set are kept (for the Data page)."""
    env = os.environ.get("EMPATHY_STORE")
    where = code(data.store.label)  # a server URL's password masked
    if data.store.backend == "postgresql":
        where = f"the team's PostgreSQL store {where}"
    return where + (" (from EMPATHY_STORE)" if env else "")


def follow_table_selection(event: object, labels: Sequence[str], pick_key: str, selection_key: str) -> None:
    """Keep the selectbox ``pick_key`` (over ``labels``, one per table row) the one source of truth for the open row.

    A newly selected row of the table (``event``, what ``st.dataframe(..., on_select="rerun")`` returned) moves
    the pick; the same selection seen again on a later rerun does not, so a pick made in the selectbox since
    stays. ``selection_key`` remembers the last selection seen. A pick no longer among ``labels`` (the table was
    filtered) falls back to the first row. ``labels`` must not be empty.
    """
    selected = list(event.selection.rows) if event is not None else []  # type: ignore[attr-defined]
    if selected and selected != st.session_state.get(selection_key) and selected[0] < len(labels):
        st.session_state[pick_key] = labels[selected[0]]
    st.session_state[selection_key] = selected
    if st.session_state.get(pick_key) not in labels:
        st.session_state[pick_key] = labels[0]
