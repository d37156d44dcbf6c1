"""Shared Streamlit plumbing of the app: session state, data loading, caches and the sidebar.

Business logic lives in :mod:`empathy` (``io``, ``store``, ``review``, ``evaluate``, ``render``); this module
only wires it to Streamlit. Every page calls :func:`page_setup` first, which initialises the session state
once (behind a guard), loads the bundled demo data when nothing else is loaded, and draws the sidebar.
"""

from __future__ import annotations

import copy
import hashlib
import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from empathy.evaluate import MetricsReport, TextFeatures, text_features
from empathy.io import SUPPORTED_SUFFIXES, DataError, Dataset, build_dataset, load_outputs, load_ratings
from empathy.paths import DEMO_DIR
from empathy.review import Recompute
from empathy.store import OverrideStore, apply_overrides, dataset_id, default_store_path

_DEFAULTS: dict[str, object] = {
    "source": {"kind": "demo"},          # how the current data set was chosen
    "with_overrides": True,              # the global judge-only / with-overrides toggle
    "annotator": "",                     # the name recorded with every override
    "flash": None,                       # one-shot message shown after a rerun ("Saved ...")
    "relabel_skipped": [],               # (item_id, model) pairs skipped in the Relabel queue this session
}


def init_state() -> None:
    """Put the app's keys into ``st.session_state`` once per session."""
    if st.session_state.get("_initialised"):
        return
    for key, value in _DEFAULTS.items():
        st.session_state.setdefault(key, copy.deepcopy(value))  # no mutable default shared between sessions
    st.session_state["_initialised"] = True


@dataclass(frozen=True)
class Loaded:
    """The data set of this session with everything derived from it."""

    dataset: Dataset
    name: str
    data_dir: Path | None
    dataset_id: str
    content_key: str
    store: OverrideStore


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


@st.cache_data(show_spinner=False, max_entries=8)
def _load_paths(outputs: str, ratings: tuple[str, ...], _mtimes_key: tuple[float, ...]) -> Dataset:
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


def content_key(dataset: Dataset) -> str:
    """Hash of the outputs and ratings contents (cache key of everything derived from the data)."""
    digest = hashlib.sha256()
    for frame in (dataset.outputs, dataset.ratings):
        digest.update(pd.util.hash_pandas_object(frame.astype(str), index=False).to_numpy().tobytes())
        digest.update(",".join(map(str, frame.columns)).encode())
    return digest.hexdigest()[:20]


@st.cache_resource(show_spinner=False)
def get_store(path: str) -> OverrideStore:
    """One :class:`OverrideStore` per SQLite file, shared by every session."""
    return OverrideStore(path)


def _current_source_dataset() -> tuple[Dataset, str, Path | None]:
    source = st.session_state["source"]
    if source["kind"] == "upload":
        return st.session_state["uploaded_dataset"], source["name"], None
    if source["kind"] == "path":
        outputs, ratings = Path(source["outputs"]), [Path(p) for p in source["ratings"]]
        return load_from_paths(outputs, ratings), str(outputs), outputs.parent
    outputs, ratings = demo_files(DEMO_DIR)
    if outputs is None:
        raise DataError(str(DEMO_DIR), "the bundled demo data (outputs.csv) is missing")
    return load_from_paths(outputs, ratings), "demo data", DEMO_DIR


def loaded() -> Loaded | None:
    """The session's data set, or ``None`` after showing why it could not be loaded."""
    try:
        dataset, name, data_dir = _current_source_dataset()
    except DataError as error:
        st.error(f"Could not load the data: {error}")
        return None
    except KeyError:
        st.session_state["source"] = {"kind": "demo"}
        return loaded()
    store_path = default_store_path(data_dir)
    return Loaded(dataset=dataset, name=name, data_dir=data_dir, dataset_id=dataset_id(dataset.outputs),
                  content_key=content_key(dataset), store=get_store(str(store_path)))


def require_data(*, ratings: bool = True) -> Loaded:
    """The loaded data set; stops the page with a clear message when it is missing or has no ratings."""
    data = loaded()
    if data is None:
        st.info("Open the **Data** page to choose another data set.")
        st.stop()
    if data.dataset.outputs.empty:
        st.info("The data set has no outputs. Load another one on the **Data** page.")
        st.stop()
    if ratings and data.dataset.ratings.empty:
        st.info("This data set has outputs but no ratings yet, so there is nothing to compute. "
                "Add ratings files (or rating columns `<rater>:<dimension>`) on the **Data** page.")
        st.stop()
    return data  # type: ignore[return-value]


# ----------------------------------------------------------------------------------------------- analysis

def _fallback_analyser(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    sentences = np.array([max(len([s for s in re.split(r"(?<=[.!?])\s+", t.strip()) if s]), 0) if t.strip()
                          else 0 for t in texts], dtype=float)
    return sentences, np.full((len(texts), 3), np.nan)


def distancing_available() -> bool:
    """Whether the spaCy distancing detectors (:mod:`empathy.distancing`) can be imported."""
    try:
        import empathy.distancing  # noqa: F401
    except Exception:  # noqa: BLE001 - a missing or broken optional part only disables LD and highlights
        return False
    return True


def _analyze(texts: Sequence[str]) -> list:
    """:func:`empathy.distancing.analyze` with a cache connection of this thread.

    Streamlit runs each rerun in another thread and the module-level default cache holds one SQLite
    connection, which SQLite refuses to share across threads; a fresh cache object per call avoids that.
    """
    from empathy.distancing import DistancingCache, analyze

    return list(analyze(list(texts), cache=DistancingCache()))


def _spacy_analyser(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    results = _analyze(texts)
    sentences = np.array([r.sentences for r in results], dtype=float)
    densities = np.array([r.densities() for r in results], dtype=float).reshape(len(results), 3)
    return sentences, densities


@st.cache_data(show_spinner=False, max_entries=4)
def _features(key: str, references: tuple[str, ...], generations: tuple[str, ...]) -> TextFeatures:
    frame = pd.DataFrame({"item_id": range(len(references)), "model": "", "task": "",
                          "reference": list(references), "generation": list(generations)})
    if distancing_available():
        from empathy.evaluate import spacy_analyser_signature

        return text_features(frame, _spacy_analyser, signature=spacy_analyser_signature())
    return text_features(frame, _fallback_analyser, signature="regex-sentences-no-distancing")


def features(data: Loaded) -> TextFeatures:
    """Sentence counts and distancing densities of every text (cached; a spinner on first use)."""
    outputs = data.dataset.outputs
    with st.spinner("Analysing the texts (sentences and distancing)..."):
        return _features(data.content_key, tuple(outputs["reference"]), tuple(outputs["generation"]))


@st.cache_resource(show_spinner=False, max_entries=4)
def _engine(key: str, _outputs: pd.DataFrame, _ratings: pd.DataFrame, _features: TextFeatures) -> Recompute:
    return Recompute(_outputs, _ratings, _features)


def engine(data: Loaded) -> Recompute:
    """The fast recompute engine of this data set (built once per data set and shared)."""
    return _engine(data.content_key, data.dataset.outputs, data.dataset.ratings, features(data))


def overrides(data: Loaded) -> pd.DataFrame:
    """Current overrides of the data set, read from SQLite on every rerun (other sessions' included)."""
    return data.store.overrides(data.dataset_id)


def report(data: Loaded, *, with_overrides: bool | None = None) -> MetricsReport:
    """Metrics under the global toggle (or as asked): judge-only or with the human overrides applied."""
    use = st.session_state["with_overrides"] if with_overrides is None else with_overrides
    return engine(data).report(overrides(data) if use else None)


def effective_ratings(data: Loaded, *, with_overrides: bool | None = None) -> pd.DataFrame:
    """Ratings with overrides applied (column ``overridden``) under the global toggle."""
    use = st.session_state["with_overrides"] if with_overrides is None else with_overrides
    return apply_overrides(data.dataset.ratings, overrides(data) if use else None)


@st.cache_data(show_spinner=False, max_entries=64)
def spans_for(texts: tuple[str, ...]) -> list[list[dict[str, object]]]:
    """Distancing spans of each text as plain dicts (empty lists when the detectors are unavailable)."""
    if not distancing_available():
        return [[] for _ in texts]
    return [[span.to_json() if hasattr(span, "to_json") else dict(span) for span in result.spans]
            for result in _analyze(texts)]


@st.cache_data(show_spinner=False, max_entries=64)
def densities_for(texts: tuple[str, ...]) -> list[tuple[int, dict[str, int], tuple[float, float, float]]]:
    """(sentences, counts, densities) of each text, or NaNs without the detectors."""
    if not distancing_available():
        return [(0, {}, (np.nan, np.nan, np.nan)) for _ in texts]
    return [(int(r.sentences), dict(r.counts), tuple(float(x) for x in r.densities())) for r in _analyze(texts)]


@st.cache_data(show_spinner=False, max_entries=4)
def _standard(key: str, _outputs: pd.DataFrame) -> pd.DataFrame:
    from empathy.standard import STANDARD_METRICS, compute_standard

    per_item = compute_standard(_outputs).per_item
    return per_item.groupby("model", sort=True)[list(STANDARD_METRICS)].mean().reset_index()


def standard_per_model(data: Loaded) -> pd.DataFrame:
    """Mean ROUGE-L, chrF, CIDEr-D and Sem-Sim (offline TF-IDF) per model over all items (cached)."""
    return _standard(data.content_key, data.dataset.outputs)


# ----------------------------------------------------------------------------------------------- layout

def _sync(widget_key: str, state_key: str) -> None:
    st.session_state[state_key] = st.session_state[widget_key]


def sidebar(data: Loaded | None) -> None:
    """Data-set name, the judge-only / with-overrides toggle and the annotator name, on every page."""
    with st.sidebar:
        if data is not None:
            st.caption(f"Data: **{data.name}** · id `{data.dataset_id}`")
            count = data.store.count(data.dataset_id)
            st.caption(f"Human overrides: **{count}** · store `{data.store.path.name}`")
        st.session_state["_w_with_overrides"] = st.session_state["with_overrides"]
        st.toggle("Include human overrides", key="_w_with_overrides",
                  on_change=_sync, args=("_w_with_overrides", "with_overrides"),
                  help="Off: every number is the judges' alone. On: human overrides replace judge labels.")
        st.session_state["_w_annotator"] = st.session_state["annotator"]
        st.text_input("Annotator name", key="_w_annotator", on_change=_sync,
                      args=("_w_annotator", "annotator"), placeholder="your name (recorded with each override)")


def page_setup(title: str, *, icon: str = "🫶") -> Loaded | None:
    """Configure the page, initialise state, draw the sidebar; return the loaded data (or ``None``)."""
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
    return f"`{data.store.path}`" + (" (from EMPATHY_STORE)" if env else "")
