"""The app's cached computations on the loaded data set: text features, the recompute engine, the metrics
report, the effective ratings, Krippendorff's alpha, the standard metrics and the highlights of a text.

Each function takes the :class:`empathy_app.loading.Loaded` data set and reads the sidebar's choices (the
with-overrides toggle, pooled tasks) from the session; the statistics are :mod:`empathy`'s. The caches are keyed
on the data set's content key and the key of the overrides that apply (:func:`empathy_app.overrides.applied_key`),
so a rerun with no new override recomputes nothing and an override recomputes only what reads it.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import streamlit as st

from empathy.evaluate import MetricsReport, TextFeatures, default_by_task, text_features
from empathy.mechanisms import MechanismMarks
from empathy.metrics import METRIC_SPECS, registry_token
from empathy.progress import Progress, Tracker, format_duration
from empathy.review import EffectiveRatings, Recompute, agreement_labels, per_task
from empathy_app import overrides, session_keys
from empathy_app.loading import Loaded
from empathy_app.progress import MIN_INTERVAL, ProgressBar

if TYPE_CHECKING:  # imported where an alpha is computed: not by every page's first run
    from empathy.agreement import LiveAlpha


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


class BackgroundParse:
    """The parse of one data set's distinct texts into the distancing disk cache, in a thread of its own.

    What needs no parse is usable at once (Relabel's CA queue on a new data set): the texts are parsed meanwhile,
    in the data set's order, except that :meth:`prioritise` puts texts a page is about to show first (within the
    next round of :func:`empathy.distancing.analyze`, 128 texts). :attr:`progress` is the latest
    :class:`empathy.progress.Progress` (counts, elapsed, ETA) for a page to draw; the thread draws nothing (Streamlit
    elements belong to a script's thread). A failure ends the thread with :attr:`error` set; the texts it did not
    reach are parsed by :func:`features` as before.

    The thread waits for :meth:`begin` (the page that started it calls it once its run is drawn), at most
    :data:`START_WAIT_S`: loading spaCy and parsing in the same process while the page builds its first screen
    took the page's thread most of the GIL (a new data set's first Relabel output 1.1 s alone, 4.6 s beside it).

    The prioritised texts' sentence boundaries (:func:`empathy.judges.segment.sentence_spans`, memoised per process:
    the SA, EGM and CA marks sit on them) are found here too, at the end of each round: the page's run that marks
    them, a key's, then only reads them (it parsed them itself, seconds per window under load, while keys waited).

    Between two rounds it waits while a key queue's run is in progress (:data:`QUEUE_RUNS`), at most
    :data:`YIELD_S`: in one process the parse and a key's run share the interpreter, and a key's answer is what the
    annotator waits for (the highlights of the outputs ahead can come a round later).
    """

    def __init__(self, texts: Sequence[str]) -> None:
        from empathy.distancing import DistancingCache, default_cache_dir

        self.texts = texts
        # the cache folder of now: the thread outlives the run that started it (and a test's environment)
        self.cache = DistancingCache(default_cache_dir())
        self.tracker = Tracker(len(texts), self._keep, stage="texts")
        self.progress: Progress = self.tracker.snapshot()
        self.error: str | None = None
        self.finished = threading.Event()
        self._urgent: collections.deque[str] = collections.deque()
        self._waiting: set[int] = set()
        self._seen: set[int] = set()
        # the texts taken from the stream and not parsed yet (a round at most), each with whether it was prioritised
        self._pulled: collections.deque[tuple[bool, str]] = collections.deque()
        self._lock = threading.Lock()
        self.started = threading.Event()  # set by begin(): the page's first screen is out
        self._thread = threading.Thread(target=self._run, name="empathy-background-parse", daemon=True)
        self._thread.start()

    def begin(self) -> None:
        """Let the parse start now (it starts by itself :data:`START_WAIT_S` after it was created)."""
        self.started.set()

    def _keep(self, progress: Progress) -> None:
        self.progress = progress

    def prioritise(self, texts: Sequence[str]) -> None:
        """Parse ``texts`` (of this data set) next; those parsed or already waiting are left as they are."""
        with self._lock:
            for text in texts:
                key = hash(text)
                if key not in self._seen and key not in self._waiting:
                    self._waiting.add(key)
                    self._urgent.append(text)

    def _stream(self) -> Iterator[str]:
        """The texts in the order they are parsed: each once, the prioritised ones first."""
        position = 0
        while True:
            with self._lock:
                urgent = bool(self._urgent)
                if urgent:
                    text = self._urgent.popleft()
                    self._waiting.discard(hash(text))
                elif position < len(self.texts):
                    text, position = self.texts[position], position + 1
                else:
                    return
                key = hash(text)  # 8 bytes a text, not the text: a data set's texts can be hundreds of MiB
                if key in self._seen:
                    continue
                self._seen.add(key)
            self._pulled.append((urgent, text))
            yield text

    def _advance(self, count: int, cached: bool = False) -> None:
        self.tracker.advance(min(count, self.tracker.total - self.tracker.done), cached)

    def _run(self) -> None:
        self.started.wait(START_WAIT_S)
        from empathy.distancing import analyze

        try:
            shown: list[str] = []  # prioritised texts parsed, their sentence boundaries not found yet
            for _ in analyze(self._stream(), batch_size=32, progress=self._advance, cache=self.cache):
                urgent, text = self._pulled.popleft()  # analyze yields in the order it took the texts
                if urgent:
                    shown.append(text)
                # at the end of a round (nothing taken is left unparsed), or every 32 prioritised texts
                if shown and (not self._pulled or len(shown) >= 32):
                    _sentences_ahead(shown)
                    shown = []
                if not self._pulled:
                    QUEUE_RUNS.wait_idle(YIELD_S)  # the next round after the key queues' runs of now
            if shown:
                _sentences_ahead(shown)  # before `finished`: the run that finds it set marks these
        except Exception as error:  # noqa: BLE001 - kept for the page: the parse is then done in the foreground
            self.error = f"{type(error).__name__}: {error}"
        finally:
            self.cache.close()
            self.finished.set()


def _sentences_ahead(texts: list[str]) -> None:
    """Find (and memoise for this process) the sentence boundaries of ``texts``, which a page is about to mark."""
    from empathy.judges.segment import sentence_spans

    try:
        sentence_spans(texts)
    except Exception:  # noqa: BLE001 - only ahead of the page, which finds them itself (and says why it cannot)
        return


@st.cache_resource(show_spinner=False)
def _parses_held() -> dict[str, BackgroundParse]:
    return {}


def _parse_key(key: str) -> str:
    """A data set's parse is per distancing cache folder too (another folder has its own texts parsed)."""
    from empathy.distancing import default_cache_dir

    return f"{key}|{default_cache_dir()}"


def _distinct_texts(outputs: pd.DataFrame) -> Sequence[str]:
    return pd.unique(pd.concat([outputs["reference"], outputs["generation"]], ignore_index=True))


def background_parse(data: Loaded) -> BackgroundParse | None:
    """The data set's :class:`BackgroundParse`, started at the first call (shared by every session); ``None`` once
    the text features are computed (nothing left to parse)."""
    key = data.base_key or data.content_key
    if key in _features_held():
        return None
    held = _parses_held()
    with _PARSES_LOCK:
        found = held.get(_parse_key(key))
        if found is None:
            try:
                found = BackgroundParse(_distinct_texts(data.all_data.outputs))
            except ValueError:  # no disk cache to parse into (a folder not writable): parsed in the foreground
                return None
            held[_parse_key(key)] = found
            while len(held) > _FEATURES_KEPT:
                held.pop(next(iter(held)))
    return found


def parse_pending(data: Loaded) -> bool:
    """Whether a background parse of the data set's texts is running: what it has not reached yet is shown without
    marks instead of being parsed by the page (once it has finished, or failed, a page parses what it needs)."""
    found = _parses_held().get(_parse_key(data.base_key or data.content_key))
    return found is not None and not found.finished.is_set()


class _QueueRuns:
    """How many runs of a key queue (Relabel's fragment, any session) are in progress in this process."""

    def __init__(self) -> None:
        self.count = 0
        self._idle = threading.Condition()

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        """A key queue's run, for its duration (Streamlit's stop and rerun exceptions end it too)."""
        with self._idle:
            self.count += 1
        try:
            yield
        finally:
            with self._idle:
                self.count -= 1
                if not self.count:
                    self._idle.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no key queue's run is in progress, at most ``timeout`` seconds; whether none is."""
        with self._idle:
            return self._idle.wait_for(lambda: self.count == 0, timeout)


#: The key queues' runs in progress: a background parse takes its next round of texts after them.
QUEUE_RUNS = _QueueRuns()
#: Seconds a background parse waits at most, between two rounds, for the key queues' runs in progress (the parse
#: goes on, a round at a time, while keys keep coming).
YIELD_S = 2.0
_PARSES_LOCK = threading.Lock()
#: Seconds a background parse waits for :meth:`BackgroundParse.begin` before it starts anyway (a page that stopped
#: before its end, or another page that waits for the texts).
START_WAIT_S = 5.0
#: Seconds between two runs of a page that waits for a background parse (Relabel's queue, for the highlights).
PARSE_POLL_S = 2.0


def spans_if_parsed(texts: Sequence[str]) -> list[list[dict[str, object]]] | None:
    """The distancing spans of each text when every one is parsed already (the disk cache), else ``None``: no
    parse, no model load."""
    from empathy.distancing import cached_results

    results = cached_results(list(texts))
    if any(result is None for result in results):
        return None
    return [[span.to_json() if hasattr(span, "to_json") else dict(span) for span in result.spans]
            for result in results]


def _features(key: str, outputs: pd.DataFrame) -> TextFeatures:
    held = _features_held()
    found = held.get(key)
    if found is not None:
        return found
    from empathy.evaluate import spacy_analyser_signature

    # the two text columns as they are (text_features reads nothing else): a new frame built from Python lists
    # converted 400,000 strings back to Arrow, 1-2 s of a first visit at 200,000 outputs
    frame = outputs[["reference", "generation"]]
    with ProgressBar("Analysing the texts (sentences and distancing)") as bar:
        running = _parses_held().get(_parse_key(key))
        if running is not None:
            running.begin()  # waited for here: no first screen to leave the CPU to
        while running is not None and running.error is None and not running.finished.wait(MIN_INTERVAL):
            bar(running.progress)  # Relabel's background parse of these texts: drawn here, not parsed twice
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
    every = all_features(data)
    if not data.filtered:
        return every
    position = pd.MultiIndex.from_frame(outputs[["item_id", "model"]]).get_indexer(
        pd.MultiIndex.from_frame(data.dataset.outputs[["item_id", "model"]]))
    return TextFeatures(sentences_ref=every.sentences_ref[position], sentences_gen=every.sentences_gen[position],
                        densities_ref=every.densities_ref[position], densities_gen=every.densities_gen[position],
                        signature=every.signature)


class RowIndex:
    """Where each output's rows are in the outputs and the ratings of one data set, found once (shared by every
    session): a page that shows, decides or scores one output takes its rows in O(1) instead of comparing every
    rating's key (a mask over millions of ratings was tens of ms per output, per run).

    ``ratings`` frames derived from the indexed ones keep their rows' order (the effective ratings do: an override
    that fills a gap adds its row at the end, where :meth:`ratings_of` looks too).
    """

    def __init__(self, outputs: pd.DataFrame, ratings: pd.DataFrame) -> None:
        items, models = outputs["item_id"].astype(str), outputs["model"].astype(str)
        self.index = pd.MultiIndex.from_arrays([items, models])
        # one output's row by the item's and the model's hash look-up and a binary search among the sorted
        # (item, model) cell codes (a key's page run looks up a window of outputs: a MultiIndex look-up per output
        # was ~0.3 ms); a dict of (item, model) tuples held 50 MiB more at 200,000 outputs, and a dense items x
        # models table would grow with their product (one model name per output: quadratic)
        self._items, self._models = pd.Index(pd.unique(items)), pd.Index(pd.unique(models))
        cells = self._items.get_indexer(items).astype(np.int64) * len(self._models) + self._models.get_indexer(models)
        self._cell_order = np.argsort(cells, kind="stable")
        self._cells = cells[self._cell_order]
        self.n_ratings = len(ratings)
        codes = _pair_positions(items, models, ratings["item_id"].astype(str), ratings["model"].astype(str)) \
            if len(ratings) else np.empty(0, dtype=np.int64)
        order = np.argsort(codes, kind="stable")
        self.order = order.astype(np.int32) if len(order) < 2 ** 31 else order  # half the memory of int64 rows
        self.starts = np.searchsorted(codes[self.order], np.arange(len(outputs) + 1))

    def rating_positions(self) -> np.ndarray:
        """The output row of each indexed rating row (-1: a rating of no output), from the index built once."""
        codes = np.full(self.n_ratings, -1, dtype=np.int64)
        codes[self.order[self.starts[0]:]] = np.repeat(np.arange(len(self.starts) - 1), np.diff(self.starts))
        return codes

    def position(self, item: str, model: str) -> int | None:
        """The row of output ``(item, model)`` in the outputs, or ``None``."""
        try:
            cell = self._items.get_loc(str(item)) * len(self._models) + self._models.get_loc(str(model))
        except KeyError:
            return None
        at = int(np.searchsorted(self._cells, cell))
        return int(self._cell_order[at]) if at < len(self._cells) and self._cells[at] == cell else None

    def output(self, outputs: pd.DataFrame, item: str, model: str) -> pd.DataFrame:
        """The outputs row of ``(item, model)`` (no row when absent), as ``outputs[(item_id == item) & (model ==
        model)]`` gives it."""
        found = self.position(item, model)
        return outputs.iloc[[] if found is None else [found]]

    def ratings_of(self, ratings: pd.DataFrame, item: str, model: str) -> pd.DataFrame:
        """The rows of ``ratings`` (the indexed ratings, or a frame derived from them in the same order) of output
        ``(item, model)``, in their order: ``ratings[(item_id == item) & (model == model)]``."""
        return self.ratings_of_many(ratings, [(item, model)])

    def ratings_of_items(self, ratings: pd.DataFrame, items: Sequence[str]) -> pd.DataFrame:
        """The rows of ``ratings`` of every output of the items ``items`` (all their models), in their order."""
        chosen = self.index[self.index.get_level_values(0).isin([str(i) for i in items])]
        return self.ratings_of_many(ratings, list(chosen))

    def ratings_of_many(self, ratings: pd.DataFrame, pairs: Sequence[tuple[str, str]]) -> pd.DataFrame:
        """The rows of ``ratings`` of the outputs ``pairs`` (``(item_id, model)``), in their order."""
        # one look-up per pair (a MultiIndex look-up built an index of the pairs: ~10 ms for one output)
        found = [k for k in (self.position(i, m) for i, m in pairs) if k is not None]
        spans = [self.order[self.starts[k]:self.starts[k + 1]] for k in found]
        rows = np.sort(np.concatenate(spans)) if spans else np.empty(0, dtype=np.int64)
        part = ratings.iloc[rows]
        if len(ratings) > self.n_ratings:  # rows added after the indexed ones (an override filling a gap)
            tail = ratings.iloc[self.n_ratings:]
            keys = pd.MultiIndex.from_arrays([tail["item_id"].astype(str), tail["model"].astype(str)])
            tail = tail[keys.isin([(str(i), str(m)) for i, m in pairs])]
            part = pd.concat([part, tail]) if len(tail) else part
        return part


def _pair_positions(items: pd.Series, models: pd.Series, wanted_items: pd.Series, wanted_models: pd.Series
                    ) -> np.ndarray:
    """The position of each ``(wanted_items, wanted_models)`` pair among the (distinct) pairs ``(items, models)``,
    -1 when absent: ``MultiIndex.get_indexer``, by integer codes (a MultiIndex of 3 million rating keys cost
    seconds to build and match)."""
    item_names, model_names = pd.Index(pd.unique(items)), pd.Index(pd.unique(models))
    width = max(len(model_names), 1)

    def code(column: pd.Series, names: pd.Index) -> np.ndarray:
        # each distinct cell looked up once (get_indexer on millions of Arrow strings converts them to objects)
        cells, distinct = pd.factorize(column)
        found = names.get_indexer(distinct).astype(np.int64)
        return np.where(cells < 0, -1, found[np.maximum(cells, 0)]) if len(found) else np.full(len(cells), -1)

    def pair_codes(item_column: pd.Series, model_column: pd.Series) -> np.ndarray:
        item_code, model_code = code(item_column, item_names), code(model_column, model_names)
        return np.where((item_code < 0) | (model_code < 0), -1, item_code * width + model_code)

    known = pd.Index(pair_codes(items, models))
    if not known.is_unique:
        raise ValueError("RowIndex: an (item_id, model) pair is given twice in the outputs")
    wanted = pair_codes(wanted_items, wanted_models)
    return np.where(wanted < 0, -1, known.get_indexer(wanted))


@st.cache_resource(show_spinner=False, max_entries=4)
def _row_index(key: str, _outputs: pd.DataFrame, _ratings: pd.DataFrame) -> RowIndex:
    return RowIndex(_outputs, _ratings)


def row_index(data: Loaded, *, whole: bool = False) -> RowIndex:
    """The :class:`RowIndex` of the data set the pages compute on (task filter applied; ``whole``: of the data set
    without the filter, ``data.all_data``), built once per data set."""
    if whole and data.filtered:
        return _row_index(f"{data.content_key}|whole", data.all_data.outputs, data.all_data.ratings)
    return _row_index(data.content_key, data.dataset.outputs, data.dataset.ratings)


def all_features(data: Loaded) -> TextFeatures:
    """:func:`features` of every output of the data set, whatever the task filter (rows of
    ``data.all_data.outputs``): what an audit, drawn from the whole data set, is estimated on."""
    return _features(data.base_key or data.content_key, data.all_data.outputs)


def by_task(data: Loaded) -> bool:
    """Whether the numbers are computed within each task: whenever the shown outputs hold several tasks, unless
    the sidebar pools them (an explicit choice, named ``tasks:pooled`` in the signature). The paper reports per
    task, and pooled LD standardises across genres (:func:`empathy.evaluate.default_by_task`)."""
    return several_tasks(data) and not st.session_state.get(session_keys.POOLED_TASKS, False)


def pooled(data: Loaded) -> bool:
    """Whether the numbers pool several tasks (the sidebar's explicit choice)."""
    return several_tasks(data) and not by_task(data)


@st.cache_data(show_spinner=False, max_entries=16)
def _several_tasks(key: str, _outputs: pd.DataFrame) -> bool:
    return default_by_task(_outputs)


def several_tasks(data: Loaded) -> bool:
    """:func:`empathy.evaluate.default_by_task` of the shown outputs, cached per content key (a page asks it a dozen
    times a run: each a count of 200,000 task names)."""
    return _several_tasks(data.content_key, data.dataset.outputs)


@st.cache_resource(show_spinner=False, max_entries=4)
def _engine(key: str, by_task: bool, egm_both_zero: str, ld_standardization: str, include_ld: bool,
            _outputs: pd.DataFrame, _ratings: pd.DataFrame, _features: TextFeatures) -> Recompute:
    if (egm_both_zero, ld_standardization) != ("zero", "separate"):
        # another reading (the Overview's EGM "exclude" beside the default, LD's "reference"): the default engine's
        # plan shares its layout and every metric the reading does not touch, so this costs what differs only
        return _engine(key, by_task, "zero", "separate", include_ld, _outputs, _ratings, _features).reading(
            egm_both_zero=egm_both_zero, ld_standardization=ld_standardization)
    return Recompute(_outputs, _ratings, _features, by_task=by_task, egm_both_zero=egm_both_zero,
                     ld_standardization=ld_standardization, include_ld=include_ld)


def texts_analysed(data: Loaded) -> bool:
    """Whether the data set's text features are computed (:func:`features` returns at once)."""
    return (data.base_key or data.content_key) in _features_held()


def engine(data: Loaded, *, egm_both_zero: str = "zero", ld_standardization: str = "separate",
           needs_texts: bool = True) -> Recompute:
    """The fast recompute engine of this data set (built once per data set, task scope, EGM and LD reading;
    shared).

    ``egm_both_zero``: the reading of an EGM item with a + b = 0, where Eq. 2 is 0/0 (``"zero"``, our default, or
    ``"exclude"``; :class:`empathy.metrics.MetricOptions`). ``ld_standardization``: ``"separate"`` (Eq. 4, the
    default everywhere) or ``"reference"`` (the CLI's ``--ld-standardization reference``, offered on the
    Overview). ``needs_texts=False``: for a caller that reads only metrics of judge labels alone (CA), an engine
    without the texts while they are not analysed yet (LD left out, EGM's sentence counts missing: its values
    undefined), so it waits for no parse; once they are, the engine with them.
    """
    # the registry's token too: a metric registered since (empathy.metrics.register_metric) needs a new plan
    key = f"{data.content_key}|{registry_token()}"
    if not needs_texts and not texts_analysed(data):
        none = text_features(data.dataset.outputs, rows=np.zeros(len(data.dataset.outputs), dtype=bool))
        return _engine(f"{key}|no-texts", by_task(data), egm_both_zero, ld_standardization, False,
                       data.dataset.outputs, data.dataset.ratings, none)
    return _engine(key, by_task(data), egm_both_zero, ld_standardization, True, data.dataset.outputs,
                   data.dataset.ratings, features(data))


def _use_overrides(with_overrides: bool | None) -> bool:
    return bool(st.session_state[session_keys.WITH_OVERRIDES] if with_overrides is None else with_overrides)


def overrides_used(data: Loaded, with_overrides: bool | None = None) -> pd.DataFrame | None:
    """The overrides a computation under the global toggle (or as asked) applies: the applied overrides, or
    ``None`` for the judges' own labels."""
    return overrides.applied(data) if _use_overrides(with_overrides) else None


@st.cache_data(show_spinner=False, max_entries=16)
def _report(key: str, okey: str, scope: str, _engine: Recompute, _overrides: pd.DataFrame | None
            ) -> MetricsReport:
    # the signature counts the human decisions (what a person reads) beside the judge labels they replaced
    return _engine.report(_overrides, decisions=_overrides is not None)


def report(data: Loaded, *, with_overrides: bool | None = None, egm_both_zero: str = "zero",
           ld_standardization: str = "separate", needs_texts: bool = True) -> MetricsReport:
    """Metrics under the global toggle (or as asked): judge-only or with the human overrides applied.

    Per task wherever the data hold several tasks (:func:`by_task`). Cached per (data set, overrides, task
    scope, EGM and LD reading): a rerun with no new override recomputes nothing. The signature names a
    non-default reading. ``needs_texts=False``: the caller reads metrics of judge labels alone (see
    :func:`engine`).
    """
    current = overrides.applied(data) if _use_overrides(with_overrides) else None
    chosen = engine(data, egm_both_zero=egm_both_zero, ld_standardization=ld_standardization,
                    needs_texts=needs_texts)
    scope = (f"by_task={by_task(data)}|egm={egm_both_zero}|ld={ld_standardization}|metrics={registry_token()}"
             f"|texts={chosen.include_ld}")
    result = _report(data.content_key, _overrides_key(data, current), scope, chosen, current)
    if current is None:
        return result
    # which human labels the table rests on (label rule and a digest of the applied overrides), not only
    # how many: the same fields as ``metrics --overrides`` on the command line
    fields = overrides.ledger(data).signature_fields()
    return dataclasses.replace(result, signature=dataclasses.replace(
        result.signature, extra={**result.signature.extra, **fields}))


@st.cache_resource(show_spinner=False, max_entries=4)
def _effective_engine(key: str, _ratings: pd.DataFrame) -> EffectiveRatings:
    return EffectiveRatings(_ratings)


@st.cache_resource(show_spinner=False, max_entries=4)
def _dimension_rows(key: str, _ratings: pd.DataFrame) -> dict[str, np.ndarray]:
    """The rows of each dimension (positions, ascending), found once per data set."""
    codes, names = pd.factorize(_ratings["dimension"].astype(str))
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(names) + 1))
    return {str(name): order[bounds[k]:bounds[k + 1]] for k, name in enumerate(names)}


#: Effective ratings frames held (27 MiB each at 200,000 outputs): a run reads at most two, with and without the
#: overrides (Workbench); every decision makes a new one, and four held were mostly those of ledgers long past.
EFFECTIVE_FRAMES = 2


@st.cache_resource(show_spinner=False, max_entries=EFFECTIVE_FRAMES)
def _effective(key: str, okey: str, _ratings: pd.DataFrame, _overrides: pd.DataFrame | None) -> pd.DataFrame:
    return _effective_engine(key, _ratings)(_overrides)


def effective_ratings(data: Loaded, *, with_overrides: bool | None = None) -> pd.DataFrame:
    """Ratings with overrides applied (column ``overridden``) under the global toggle.

    Cached per (data set, overrides) and shared, not copied: callers must not modify the frame in place. The
    rating keys are indexed once per data set (:class:`empathy.review.EffectiveRatings`), so new overrides cost a
    look-up of theirs and a copy of the value column, not a hash of every rating.
    """
    current = overrides.applied(data) if _use_overrides(with_overrides) else None
    return _effective(data.content_key, _overrides_key(data, current), data.dataset.ratings, current)


def _overrides_key(data: Loaded, current: pd.DataFrame | None, dimensions: Sequence[str] | None = None) -> str:
    """The key of the overrides that apply (:func:`empathy_app.overrides.applied_key`), ``"none"`` without."""
    return "none" if current is None else overrides.applied_key(data, dimensions)


def effective_key(data: Loaded, dimensions: Sequence[str] | None = None, *,
                  with_overrides: bool | None = None) -> str:
    """A key naming :func:`effective_ratings` (data set and overrides under the toggle), for other caches.

    ``dimensions``: for a result computed from these dimensions only, the key follows only their overrides,
    so a relabel of another dimension leaves it cached.
    """
    current = overrides.applied(data) if _use_overrides(with_overrides) else None
    scope = "" if dimensions is None else ":" + ",".join(sorted(dimensions))
    return f"{data.content_key}:{_overrides_key(data, current, dimensions)}{scope}"


@st.cache_resource(show_spinner=False, max_entries=8)
def _live_alpha(key: str, dimension: str, _ratings: pd.DataFrame) -> LiveAlpha:
    from empathy.agreement import LiveAlpha

    return LiveAlpha(_ratings, dimension)


@st.cache_data(show_spinner=False, max_entries=256)
def _alpha(key: str, dimension: str, okey: str, _ratings: pd.DataFrame, _overrides: pd.DataFrame | None
           ) -> pd.DataFrame:
    from empathy.agreement import krippendorff_by_dimension

    if _overrides is not None and len(_overrides):
        # the judges' matrix of the dimension built once (when its first decision applies), each decision's cells set
        # in a copy of it: no effective ratings built nor their keys factorised again
        row = _live_alpha(key, dimension, _ratings).row(_overrides)
        if row is not None:
            return pd.DataFrame([row], columns=["dimension", "alpha", "level", "n_raters", "n_units"])
    every = _effective_engine(key, _ratings)(_overrides)
    # the dimension's matrix read from the whole frame by codes, no copy of its rows (+40-60 MiB at 200,000 outputs)
    return krippendorff_by_dimension(every, dimensions=[dimension])


def alpha_by_dimension(data: Loaded, *, with_overrides: bool | None = None) -> pd.DataFrame:
    """Krippendorff's alpha of every dimension over all raters, of the effective ratings (as
    :func:`empathy.agreement.krippendorff_by_dimension` on them).

    Cached per dimension on the overrides *of that dimension*: after an override only its dimension is
    recomputed (the rating keys and each dimension's rows found once per data set).
    """
    current = overrides.applied(data) if _use_overrides(with_overrides) else None
    ratings = data.dataset.ratings
    parts = []
    # An override can add a rating on a dimension no judge rated (a human filling a gap).
    extra = [] if current is None else sorted(set(current["dimension"]) - set(dimensions_of(data)))
    for dimension in [*dimensions_of(data), *extra]:
        mine = None if current is None else current[current["dimension"] == dimension]
        mine = None if mine is None or mine.empty else mine.reset_index(drop=True)
        okey = "none" if mine is None else overrides.applied_key(data, [dimension])
        parts.append(_alpha(data.content_key, dimension, okey, ratings, mine))
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


@st.cache_data(show_spinner=False, max_entries=8)
def _raters(key: str, _ratings: pd.DataFrame) -> list[str]:
    return sorted(map(str, _ratings["rater"].dropna().unique()))


def rater_count(data: Loaded, *, with_overrides: bool | None = None) -> int:
    """How many raters the effective ratings (:func:`effective_ratings`) hold: the data set's (cached per content
    key) and those of the overrides that apply (an override may add a rating no judge gave), without building the
    effective ratings or counting 3 million names after every decision."""
    current = overrides.applied(data) if _use_overrides(with_overrides) else None
    names = set(_raters(data.content_key, data.dataset.ratings))
    if current is not None and len(current):
        names |= set(map(str, current["rater"].dropna().unique()))
    return len(names)


@st.cache_data(show_spinner=False, max_entries=16)
def _human_vs_judges(key: str, okey: str, _ratings: pd.DataFrame, _overrides: pd.DataFrame) -> pd.DataFrame:
    from empathy.review import human_vs_judges

    return human_vs_judges(_ratings, _overrides)


@st.cache_data(show_spinner=False, max_entries=32)
def _agreement_labels(key: str, okey: str, scope: str, _agreement: pd.DataFrame, _overrides: pd.DataFrame | None,
                      _outputs: pd.DataFrame | None) -> pd.DataFrame:
    return agreement_labels(_agreement, _overrides, _outputs)


def table6_labels(data: Loaded) -> pd.DataFrame:
    """:func:`empathy.review.agreement_labels` of :func:`report`'s Table 6 under the global toggle (which labels each
    row rests on). Cached per data set, task scope and metric, each metric's rows under the key of the decisions on
    its own dimensions (:func:`empathy_app.overrides.applied_key`): a rerun recomputes nothing, a CA decision only
    CA's rows."""
    current = overrides_used(data)
    result = report(data)
    agreement = result.agreement
    split = per_task(result.table)
    outputs = data.dataset.outputs if split else None
    if outputs is not None and current is not None and len(current):
        # a row's task scope only filters the decisions: the outputs without one never count (and each of the
        # rows would otherwise index every output of its task again)
        outputs = outputs[outputs["item_id"].astype(str).isin(set(current["item_id"].astype(str)))]
    if agreement.empty:
        return agreement_labels(agreement, current, outputs)
    parts = []
    for metric in pd.unique(agreement["metric"]):
        spec = METRIC_SPECS.get(str(metric))
        dimensions = list(spec.dimensions) if spec is not None else []
        # "judges" or "with_overrides" follows the toggle even when no override applies (both keys "none")
        okey = f"toggle={current is not None}|{_overrides_key(data, current, dimensions)}"
        scope = f"by_task={by_task(data)}|split={split}|metric={metric}|metrics={registry_token()}"
        parts.append(_agreement_labels(data.content_key, okey, scope, agreement[agreement["metric"] == metric],
                                       current, outputs))
    return pd.concat(parts).loc[agreement.index]


def human_agreement(data: Loaded) -> pd.DataFrame:
    """:func:`empathy.review.human_vs_judges` of the judges' own ratings and the current overrides (cached).

    Only the judges' ratings of the decided items are handed over (looked up, :class:`RowIndex`): a human-judge
    pair has units where the human decided only, and a reference dimension's unit (an item) averages the judge's
    copies of every model of the item, so the result is the same as with every rating.
    """
    current = overrides.applied(data)
    judged = data.dataset.ratings
    if len(current):
        judged = row_index(data).ratings_of_items(judged, list(dict.fromkeys(current["item_id"].astype(str))))
    return _human_vs_judges(data.content_key, _overrides_key(data, current), judged, current)


@st.cache_data(show_spinner=False, max_entries=32)
def _disagreement_count(key: str, dimension: str, _ratings: pd.DataFrame) -> tuple[int, int]:
    from empathy.review import disagreement

    table = disagreement(_ratings, dimension)
    return int(table["disagree"].sum()), len(table)


def disagreement_count(data: Loaded, dimension: str) -> tuple[int, int]:
    """How many outputs the judges disagree on in ``dimension`` (:func:`empathy.review.disagreement` of the
    judges' own ratings), and how many were rated on it: cached per data set and dimension."""
    return _disagreement_count(data.content_key, dimension, data.dataset.ratings)


# A resource, not data: shared, not a pickled copy kept and another unpickled at every rerun (200,000 labels: 19 MiB
# each, and the unpickling's CPU at every click of Inspect). Callers only read it.
@st.cache_resource(show_spinner=False, max_entries=16)
def output_labels(keys: pd.DataFrame) -> list[str]:
    """``"<item_id> · <model>"`` of each row of ``keys`` (a selectbox's options; cached on the rows' content; not to
    be modified)."""
    return [f"{i} · {m}" for i, m in zip(keys["item_id"], keys["model"], strict=True)]


@st.cache_data(show_spinner=False, max_entries=64)
def spans_for(texts: tuple[str, ...]) -> list[list[dict[str, object]]]:
    """Distancing spans of each text as plain dicts."""
    return [[span.to_json() if hasattr(span, "to_json") else dict(span) for span in result.spans]
            for result in _analyze(texts)]


@st.cache_data(show_spinner=False, max_entries=64)
def marks_for(texts: tuple[str, str], conflict: bool, judged: tuple = ((), ())) -> MechanismMarks:
    """The marks of the four mechanisms on a reference/generation pair (:func:`empathy.mechanisms.mechanism_marks`):
    the distancing spans (:func:`spans_for`), the lexicon judge's disturbing elements, affect words and (with
    ``conflict``) CA cues and client tension, located on the sentences the judges rate
    (:func:`empathy.judges.segment.sentence_spans`, memoised per process), and the LLM judges' ``judged`` marks
    per text (:func:`judged_for`). Cached per pair."""
    from empathy.judges.segment import sentence_spans
    from empathy.mechanisms import mechanism_marks

    return mechanism_marks(texts[0], texts[1], distancing=spans_for(texts), sentence_spans=sentence_spans(texts),
                           conflict=conflict, judged=[list(side) for side in judged])


@dataclasses.dataclass(frozen=True)
class JudgedMarks:
    """What the LLM judges of a data set marked in a reference/generation pair, from their answer cache.

    ``spans``: per text, the sentences a judge counted disturbing content in and, on the generation, the passage
    a judge quoted as evidence of its CA label (:func:`empathy.mechanisms.judged_highlights`,
    :func:`empathy.mechanisms.evidence_highlights`); ``counted``: the judges with sentence marks; ``quoted``:
    ``(judge, quote)`` of each quote found in the response.
    """

    spans: tuple[tuple[dict[str, object], ...], tuple[dict[str, object], ...]] = ((), ())
    counted: tuple[str, ...] = ()
    quoted: tuple[tuple[str, str], ...] = ()


@dataclasses.dataclass(frozen=True)
class OutputFacts:
    """What the text views ask of each output: ``llm_judges``, the raters of kind ``llm`` that rated it (the SA and
    CA marks beside their numbers are the lexicon's); ``ca_rated``, the outputs a rater labelled ``ca`` (their texts
    get the CA marks); ``llm_raters``, every rater of kind ``llm`` in the data set.

    A page shows a few outputs: each is answered from its own rows (:class:`RowIndex`) when first asked and kept,
    instead of a pass over every rating (1-5 s of Inspect's first visit at 3 million ratings).
    """

    llm_judges: collections.abc.Mapping[tuple[str, str], tuple[str, ...]]
    ca_rated: collections.abc.Container[tuple[str, str]]
    llm_raters: frozenset[str] = frozenset()


def _llm_rows(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[rows["rater_kind"].astype(str) == "llm"] if "rater_kind" in rows.columns else rows.iloc[:0]


class _PerOutput:
    """One output's answer from its rows, computed when first asked and kept (shared by sessions: read-only)."""

    def __init__(self, index: RowIndex, ratings: pd.DataFrame, answer: Callable[[pd.DataFrame], object]) -> None:
        self._index, self._ratings, self._answer = index, ratings, answer
        self._known: dict[tuple[str, str], object] = {}

    def answer(self, pair: tuple[str, str]) -> object:
        key = (str(pair[0]), str(pair[1]))
        if key not in self._known:
            self._known[key] = self._answer(self._index.ratings_of(self._ratings, *key))
        return self._known[key]


class _LlmJudges(collections.abc.Mapping):
    """``{(item_id, model): its LLM raters, sorted}`` for the outputs an LLM rated; looked up one output at a time
    (iterating it builds the whole table once, :func:`_judges_per_output`)."""

    def __init__(self, index: RowIndex, ratings: pd.DataFrame) -> None:
        self._ratings = ratings
        self._per_output = _PerOutput(index, ratings, lambda rows: tuple(sorted(set(
            _llm_rows(rows)["rater"].astype(str).tolist()))))
        self._whole: dict[tuple[str, str], tuple[str, ...]] | None = None

    def __getitem__(self, pair: tuple[str, str]) -> tuple[str, ...]:
        found = self._per_output.answer(pair)
        if not found:
            raise KeyError(pair)
        return found  # type: ignore[return-value]

    def _all(self) -> dict[tuple[str, str], tuple[str, ...]]:
        if self._whole is None:
            rows = _llm_rows(self._ratings)
            self._whole = _judges_per_output(rows["item_id"].astype(str), rows["model"].astype(str),
                                             rows["rater"].astype(str))
        return self._whole

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


class _CaRated(collections.abc.Container):
    """The outputs with a ``ca`` rating, asked one output at a time."""

    def __init__(self, index: RowIndex, ratings: pd.DataFrame) -> None:
        self._per_output = _PerOutput(index, ratings, lambda rows: bool((rows["dimension"] == "ca").any()))

    def __contains__(self, pair: object) -> bool:
        return isinstance(pair, tuple) and len(pair) == 2 and bool(self._per_output.answer(pair))  # type: ignore


@st.cache_resource(show_spinner=False, max_entries=8)
def _output_facts(key: str, _ratings: pd.DataFrame, _index: RowIndex) -> OutputFacts:
    raters = frozenset(pd.unique(_llm_rows(_ratings)["rater"].astype(str)).tolist())
    return OutputFacts(_LlmJudges(_index, _ratings), _CaRated(_index, _ratings), raters)


def _judges_per_output(items: pd.Series, models: pd.Series, raters: pd.Series
                       ) -> dict[tuple[str, str], tuple[str, ...]]:
    """``{(item_id, model): sorted distinct raters}`` of rating rows given as three aligned columns."""
    if not len(items):
        return {}
    item_codes, item_names = pd.factorize(items)
    model_codes, model_names = pd.factorize(models)
    pair_codes, pairs = pd.factorize(item_codes.astype(np.int64) * len(model_names) + model_codes)
    keys = list(zip(np.asarray(item_names, dtype=object)[pairs // len(model_names)].tolist(),
                    np.asarray(model_names, dtype=object)[pairs % len(model_names)].tolist(), strict=True))
    rater_codes, rater_names = pd.factorize(raters)
    names = sorted(rater_names.tolist())
    rank = np.array([names.index(name) for name in rater_names.tolist()], dtype=np.int64)
    if len(keys) * len(names) > 50_000_000:  # very many raters: per output, still linear in the rows
        found: dict[int, set[str]] = {}
        for pair, rater in zip(pair_codes.tolist(), rank[rater_codes].tolist(), strict=True):
            found.setdefault(pair, set()).add(names[rater])
        return {keys[pair]: tuple(sorted(found[pair])) for pair in range(len(keys))}
    present = np.zeros((len(keys), len(names)), dtype=bool)
    present[pair_codes, rank[rater_codes]] = True
    patterns, which = np.unique(present, axis=0, return_inverse=True)
    sets = [tuple(name for name, here in zip(names, pattern, strict=True) if here) for pattern in patterns]
    return dict(zip(keys, (sets[k] for k in np.ravel(which).tolist()), strict=True))


def output_facts(data: Loaded) -> OutputFacts:
    """:class:`OutputFacts` of the data set (cached per content key, shared: not to be modified)."""
    return _output_facts(data.content_key, data.dataset.ratings, row_index(data))


def _llm_judges_configured(data: Loaded) -> tuple[dict, Path] | None:
    """The judges config's LLM judges that are raters of the data set (``rater_kind`` ``llm``), and the answer
    cache, or ``None`` without a config (the Judge page's, else ``$EMPATHY_JUDGES_CONFIG`` or ``./judges.toml``),
    a cache file or such a rater."""
    raters = output_facts(data).llm_raters
    if not raters:
        return None
    from empathy.judges import JudgeConfigError, available_judges, default_cache_path, load_config
    from empathy.judges.config import default_config_path

    path_text = str(st.session_state.get(session_keys.JUDGE_CONFIG_PATH_KEPT) or "").strip()
    try:
        path = Path(path_text).expanduser() if path_text else default_config_path()
        cache_path = default_cache_path()
        if path is None or not path.is_file() or not cache_path.is_file():
            return None
        judges = available_judges(load_config(path))
    except (JudgeConfigError, OSError):
        return None
    chosen = {name: judge for name, judge in judges.items() if name in raters and judge.kind == "llm"}
    return (chosen, cache_path) if chosen else None


def judged_for(data: Loaded, texts: tuple[str, str]) -> JudgedMarks:
    """The LLM judges' own marks on a reference/generation pair: the sentences each counted disturbing content in
    (judges that rated ``u_ref``/``u_gen``) and the passage each quoted for its CA label (judges that rated ``ca``
    with ``conflict_evidence`` on).

    A judge counts when its rater's ``rater_kind`` is ``llm`` and the judges config defines a judge of that name;
    everything comes from the answer cache (:func:`empathy.judges.run.cached_sentence_counts`,
    :func:`empathy.judges.run.cached_evidence`; never a call). Without a config, a cache file or such a rater:
    nothing (the lexicon's marks and every judge's numbers still show).
    """
    ratings = data.dataset.ratings
    found = _llm_judges_configured(data)
    if found is None:
        return JudgedMarks()
    judges, cache_path = found
    from empathy.judges import JudgeCache
    from empathy.judges.run import cached_evidence, cached_sentence_counts
    from empathy.mechanisms import evidence_highlights, judged_highlights

    def rated(dimensions: list[str]) -> list[str]:
        names = set(ratings.loc[ratings["dimension"].isin(dimensions), "rater"].astype(str))
        return sorted(name for name in judges if name in names)

    counted = rated(["u_ref", "u_gen"])
    quoting = [name for name in rated(["ca"]) if judges[name].conflict_evidence]
    spans: list[list[dict[str, object]]] = [[], []]
    quoted = []
    with JudgeCache(cache_path) as cache:
        for name in counted:
            for position, text in enumerate(texts):
                spans[position].extend(judged_highlights(cached_sentence_counts(text, judges[name], cache), name))
        for name in quoting:
            evidence = cached_evidence(texts[0], texts[1], judges[name], cache)
            marks = evidence_highlights(evidence, name)
            if marks:
                spans[1].extend(marks)
                quoted.append((name, str(evidence.quote)))
    return JudgedMarks((tuple(spans[0]), tuple(spans[1])), tuple(counted), tuple(quoted))


def llm_judges_of(data: Loaded, item_id: str, model: str) -> list[str]:
    """The LLM judges (``rater_kind`` ``llm``) that rated output ``(item_id, model)``: the SA and CA marks beside
    their numbers are the lexicon's, which the summary under the texts says."""
    return list(output_facts(data).llm_judges.get((str(item_id), str(model)), ()))


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

