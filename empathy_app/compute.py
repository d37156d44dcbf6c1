"""The app's cached computations on the loaded data set: text features, the recompute engine, the metrics
report, the effective ratings, Krippendorff's alpha, the standard metrics and the highlights of a text.

Each function takes the :class:`empathy_app.loading.Loaded` data set and reads the sidebar's choices (the
with-overrides toggle, pooled tasks) from the session; the statistics are :mod:`empathy`'s. The caches are keyed
on the data set's content key and the key of the overrides that apply (:func:`empathy_app.overrides.overrides_key`),
so a rerun with no new override recomputes nothing and an override recomputes only what reads it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from empathy.evaluate import MetricsReport, TextFeatures, default_by_task, text_features
from empathy.labels.ledger import apply_overrides
from empathy.mechanisms import MechanismMarks
from empathy.metrics import registry_token
from empathy.progress import format_duration
from empathy.review import Recompute
from empathy_app import overrides, session_keys
from empathy_app.loading import Loaded
from empathy_app.progress import ProgressBar


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
    every = all_features(data)
    if not data.filtered:
        return every
    position = pd.MultiIndex.from_frame(outputs[["item_id", "model"]]).get_indexer(
        pd.MultiIndex.from_frame(data.dataset.outputs[["item_id", "model"]]))
    return TextFeatures(sentences_ref=every.sentences_ref[position], sentences_gen=every.sentences_gen[position],
                        densities_ref=every.densities_ref[position], densities_gen=every.densities_gen[position],
                        signature=every.signature)


def all_features(data: Loaded) -> TextFeatures:
    """:func:`features` of every output of the data set, whatever the task filter (rows of
    ``data.all_data.outputs``): what an audit, drawn from the whole data set, is estimated on."""
    return _features(data.base_key or data.content_key, data.all_data.outputs)


def by_task(data: Loaded) -> bool:
    """Whether the numbers are computed within each task: whenever the shown outputs hold several tasks, unless
    the sidebar pools them (an explicit choice, named ``tasks:pooled`` in the signature). The paper reports per
    task, and pooled LD standardises across genres (:func:`empathy.evaluate.default_by_task`)."""
    return default_by_task(data.dataset.outputs) and not st.session_state.get(session_keys.POOLED_TASKS, False)


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
           ld_standardization: str = "separate") -> MetricsReport:
    """Metrics under the global toggle (or as asked): judge-only or with the human overrides applied.

    Per task wherever the data hold several tasks (:func:`by_task`). Cached per (data set, overrides, task
    scope, EGM and LD reading): a rerun with no new override recomputes nothing. The signature names a
    non-default reading.
    """
    current = overrides.applied(data) if _use_overrides(with_overrides) else None
    scope = f"by_task={by_task(data)}|egm={egm_both_zero}|ld={ld_standardization}|metrics={registry_token()}"
    result = _report(data.content_key, overrides.overrides_key(current), scope,
                     engine(data, egm_both_zero=egm_both_zero, ld_standardization=ld_standardization), current)
    if current is None:
        return result
    # which human labels the table rests on (label rule and a digest of the applied overrides), not only
    # how many: the same fields as ``metrics --overrides`` on the command line
    fields = overrides.ledger(data).signature_fields()
    return dataclasses.replace(result, signature=dataclasses.replace(
        result.signature, extra={**result.signature.extra, **fields}))


@st.cache_resource(show_spinner=False, max_entries=4)
def _effective(key: str, okey: str, _ratings: pd.DataFrame, _overrides: pd.DataFrame | None) -> pd.DataFrame:
    return apply_overrides(_ratings, _overrides)


def effective_ratings(data: Loaded, *, with_overrides: bool | None = None) -> pd.DataFrame:
    """Ratings with overrides applied (column ``overridden``) under the global toggle.

    Cached per (data set, overrides) and shared, not copied: callers must not modify the frame in place.
    """
    current = overrides.applied(data) if _use_overrides(with_overrides) else None
    return _effective(data.content_key, overrides.overrides_key(current), data.dataset.ratings, current)


def effective_key(data: Loaded, dimensions: Sequence[str] | None = None, *,
                  with_overrides: bool | None = None) -> str:
    """A key naming :func:`effective_ratings` (data set and overrides under the toggle), for other caches.

    ``dimensions``: for a result computed from these dimensions only, the key follows only their overrides,
    so a relabel of another dimension leaves it cached.
    """
    current = overrides.applied(data) if _use_overrides(with_overrides) else None
    if current is not None and dimensions is not None:
        current = current[current["dimension"].isin(list(dimensions))]
    scope = "" if dimensions is None else ":" + ",".join(sorted(dimensions))
    return f"{data.content_key}:{overrides.overrides_key(current)}{scope}"


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
    current = overrides.applied(data) if _use_overrides(with_overrides) else None
    ratings = data.dataset.ratings
    parts = []
    for dimension in dimensions_of(data):
        mine = None if current is None else current[current["dimension"] == dimension]
        mine = None if mine is None or mine.empty else mine.reset_index(drop=True)
        parts.append(_alpha(data.content_key, dimension, overrides.overrides_key(mine), ratings, mine))
    # An override can add a rating on a dimension no judge rated (a human filling a gap).
    extra = [] if current is None else sorted(set(current["dimension"]) - set(dimensions_of(data)))
    for dimension in extra:
        mine = current[current["dimension"] == dimension].reset_index(drop=True)
        parts.append(_alpha(data.content_key, dimension, overrides.overrides_key(mine), ratings, mine))
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
    current = overrides.applied(data)
    return _human_vs_judges(data.content_key, overrides.overrides_key(current), data.dataset.ratings, current)


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
    """What the text views ask of each output, found once per data set: ``llm_judges``, the raters of kind
    ``llm`` that rated it (the SA and CA marks beside their numbers are the lexicon's); ``ca_rated``, the outputs
    a rater labelled ``ca`` (their texts get the CA marks)."""

    llm_judges: dict[tuple[str, str], tuple[str, ...]]
    ca_rated: frozenset[tuple[str, str]]


@st.cache_resource(show_spinner=False, max_entries=8)
def _output_facts(key: str, _ratings: pd.DataFrame) -> OutputFacts:
    def keys(frame: pd.DataFrame) -> list[tuple[str, str]]:
        return list(zip(frame["item_id"].astype(str), frame["model"].astype(str), strict=True))

    llm: dict[tuple[str, str], set[str]] = {}
    if "rater_kind" in _ratings.columns:
        rows = _ratings[_ratings["rater_kind"].astype(str) == "llm"]
        for pair, rater in zip(keys(rows), rows["rater"].astype(str), strict=True):
            llm.setdefault(pair, set()).add(rater)
    return OutputFacts({pair: tuple(sorted(names)) for pair, names in llm.items()},
                       frozenset(keys(_ratings[_ratings["dimension"] == "ca"])))


def output_facts(data: Loaded) -> OutputFacts:
    """:class:`OutputFacts` of the data set (cached per content key, shared: not to be modified)."""
    return _output_facts(data.content_key, data.dataset.ratings)


def _llm_judges_configured(data: Loaded) -> tuple[dict, Path] | None:
    """The judges config's LLM judges that are raters of the data set (``rater_kind`` ``llm``), and the answer
    cache, or ``None`` without a config (the Judge page's, else ``$EMPATHY_JUDGES_CONFIG`` or ``./judges.toml``),
    a cache file or such a rater."""
    raters = {name for names in output_facts(data).llm_judges.values() for name in names}
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

