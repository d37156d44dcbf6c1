"""Compute the paper's metrics for a whole data set: SA, EGM and CA per (model, judge), LD per model.

The equations live in :mod:`empathy.metrics`; this module gathers their inputs from the data model and runs
the term functions vectorised over every (model, judge) group at once, so a full recompute after a human
override stays fast (see ``bench/bench_metrics.py``).

Which items a judge's metric rests on: the (item, model) pairs for which the judge has at least one rating
row in the metric's dimensions (so a judge that rated only the counseling items has a CA over those items,
not a CA with every news item counted as missing). Within that scope, an item whose rating is empty (NaN,
for example a judge call that failed after its retries) or absent for one of the two sides is *missing*.

Sentence counts (``d`` and ``q`` of Eq. 2) and the distancing densities of Eq. 4 come from one text analyser,
by default the spaCy detectors of :mod:`empathy.distancing`, so EGM and LD count sentences the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from empathy import metrics as m
from empathy.agreement import inter_judge_spearman
from empathy.io import Dataset
from empathy.signature import Signature, judge_signatures

#: Name of the scorer of LD rows in results tables.
LD_SCORER = "spacy-distancing"
TABLE_COLUMNS: tuple[str, ...] = ("task", "model", "scorer", "metric", "value", "n", "n_missing", "n_undefined")

#: A text analyser: texts -> (sentence counts of shape (n,), distancing densities of shape (n, 3)).
TextAnalyser = Callable[[Sequence[str]], tuple[NDArray[np.float64], NDArray[np.float64]]]


def spacy_analyser(texts: Sequence[str]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Sentence counts and distancing densities from :mod:`empathy.distancing` (cached on disk)."""
    from empathy.distancing import analyze

    sentences = np.empty(len(texts))
    densities = np.empty((len(texts), 3))
    for index, result in enumerate(analyze(texts)):
        sentences[index] = result.sentences
        densities[index] = result.densities()
    return sentences, densities


def spacy_analyser_signature() -> str:
    from empathy.distancing import detector_signature

    return detector_signature()


@dataclass(frozen=True)
class TextFeatures:
    """Per outputs row: sentence counts and distancing densities of reference and generation."""

    sentences_ref: NDArray[np.float64]
    sentences_gen: NDArray[np.float64]
    densities_ref: NDArray[np.float64]
    densities_gen: NDArray[np.float64]
    signature: str

    def frame(self, outputs: pd.DataFrame) -> pd.DataFrame:
        frame = outputs[["item_id", "model", "task"]].copy()
        frame["sentences_ref"] = self.sentences_ref
        frame["sentences_gen"] = self.sentences_gen
        return frame


def text_features(outputs: pd.DataFrame, analyser: TextAnalyser | None = None, *,
                  signature: str | None = None) -> TextFeatures:
    """Analyse every distinct reference and generation once (references repeat across models)."""
    if analyser is None:
        analyser = spacy_analyser
        signature = signature or spacy_analyser_signature()
    texts = pd.unique(pd.concat([outputs["reference"], outputs["generation"]], ignore_index=True))
    sentences, densities = analyser(list(texts))
    sentences = np.asarray(sentences, dtype=float)
    densities = np.asarray(densities, dtype=float)
    if sentences.shape != (len(texts),) or densities.shape != (len(texts), 3):
        raise ValueError(f"text analyser returned shapes {sentences.shape} and {densities.shape}; "
                         f"expected ({len(texts)},) and ({len(texts)}, 3)")
    position = pd.Index(texts)
    ref = position.get_indexer(outputs["reference"])
    gen = position.get_indexer(outputs["generation"])
    return TextFeatures(sentences_ref=sentences[ref], sentences_gen=sentences[gen],
                        densities_ref=densities[ref], densities_gen=densities[gen],
                        signature=signature or "custom-analyser")


@dataclass(frozen=True)
class MetricsReport:
    """A results table (one row per task, model, scorer and metric), inter-judge agreement and signature."""

    table: pd.DataFrame
    agreement: pd.DataFrame
    signature: Signature
    by_task: bool = False
    per_item: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)

    def to_json(self) -> dict[str, object]:
        """The CLI's JSON contract: ``metrics``, ``agreement`` and ``signature``."""
        def clean(value: object) -> object:
            if isinstance(value, float | np.floating):
                return None if np.isnan(value) else float(value)
            if isinstance(value, np.integer):
                return int(value)
            return value

        keys = ["model", "scorer", "metric", "value", "n", "n_missing", "n_undefined"]
        if self.by_task:
            keys.insert(0, "task")
        metrics_rows = [{k: clean(row[k]) for k in keys} for row in self.table.to_dict("records")]
        agreement_keys = ["metric", "scorer_a", "scorer_b", "spearman", "n_models"]
        if self.by_task:
            agreement_keys.insert(0, "task")
        agreement_rows = [{k: clean(row[k]) for k in agreement_keys} for row in self.agreement.to_dict("records")]
        return {"metrics": metrics_rows, "agreement": agreement_rows, "signature": str(self.signature)}


def _rating_frames(ratings: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(values, presence) wide frames indexed by (item_id, model, rater), one column per dimension."""
    keyed = ratings.set_index(["item_id", "model", "rater", "dimension"])
    values = keyed["value"].unstack("dimension")
    presence = pd.Series(True, index=keyed.index).unstack("dimension", fill_value=False)
    return values, presence


def _column(frame: pd.DataFrame, name: str) -> NDArray[np.float64]:
    return frame[name].to_numpy(dtype=float) if name in frame.columns else np.full(len(frame), np.nan)


def _summarise(keys: pd.DataFrame, metric: str, terms: NDArray[np.float64], status: NDArray[np.int8],
               group: list[str]) -> pd.DataFrame:
    frame = keys[group].copy()
    usable = status == m.OK
    frame["_sum"] = np.where(usable, terms, 0.0)
    frame["n"] = usable.astype(int)
    frame["n_missing"] = (status == m.MISSING).astype(int)
    frame["n_undefined"] = (status == m.UNDEFINED).astype(int)
    out = frame.groupby(group, sort=True).sum().reset_index()
    out["value"] = np.where(out["n"] > 0, out["_sum"] / out["n"].where(out["n"] > 0, 1), np.nan)
    out["metric"] = metric
    return out.drop(columns="_sum")


def compute_metrics(outputs: pd.DataFrame, ratings: pd.DataFrame, *, features: TextFeatures | None = None,
                    by_task: bool = False, include_ld: bool = True, ld_standardization: str = "separate",
                    seed: int | None = None, n_overrides: int | None = None) -> MetricsReport:
    """SA, EGM and CA per (model, judge) and LD per model, with n, and the inter-judge Spearman table.

    ``ratings`` are the effective ratings (overrides already applied, see :func:`empathy.store.apply_overrides`).
    ``features`` defaults to the spaCy analyser over ``outputs``; it is needed for EGM and LD.
    With ``by_task`` every value is computed within each task; otherwise over all of a model's items
    (``task`` is then ``"all"``).
    """
    if features is None:
        features = text_features(outputs)
    text = features.frame(outputs)
    if not by_task:
        text["task"] = "all"
    group = ["task", "model", "rater"]
    parts = []
    if len(ratings):
        values, presence = _rating_frames(ratings)
        joined = values.join(presence.add_prefix("has_")).reset_index().merge(
            text, on=["item_id", "model"], how="inner")
        for metric, dimensions in m.METRIC_DIMENSIONS.items():
            in_scope = np.zeros(len(joined), dtype=bool)
            for dimension in dimensions:
                if f"has_{dimension}" in joined.columns:
                    in_scope |= joined[f"has_{dimension}"].to_numpy(dtype=bool)
            scoped = joined[in_scope]
            if scoped.empty:
                continue
            if metric == "SA":
                terms, status = m.sentiment_attenuation_terms(_column(scoped, "e_ref"), _column(scoped, "e_gen"))
            elif metric == "EGM":
                terms, status = m.granularity_mismatch_terms(
                    _column(scoped, "u_ref"), _column(scoped, "u_gen"),
                    scoped["sentences_ref"].to_numpy(dtype=float), scoped["sentences_gen"].to_numpy(dtype=float))
            else:
                terms, status = m.conflict_avoidance_terms(_column(scoped, "ca"))
            parts.append(_summarise(scoped, metric, terms, status, group).rename(columns={"rater": "scorer"}))
    if include_ld:
        ld_rows = []
        for (task, model), index in text.groupby(["task", "model"], sort=True).indices.items():
            result = m.linguistic_distancing(features.densities_ref[index], features.densities_gen[index],
                                             standardization=ld_standardization)
            ld_rows.append({"task": task, "model": model, "scorer": LD_SCORER, "metric": "LD",
                            "value": np.nan if result.value is None else result.value, "n": result.n,
                            "n_missing": result.n_missing, "n_undefined": result.n_undefined})
        parts.append(pd.DataFrame(ld_rows))
    table = (pd.concat(parts, ignore_index=True) if parts
             else pd.DataFrame(columns=list(TABLE_COLUMNS)))[list(TABLE_COLUMNS)]
    order = {name: i for i, name in enumerate(m.METRICS)}
    table = table.sort_values(["task", "metric", "scorer", "model"], key=lambda s: s.map(order)
                              if s.name == "metric" else s).reset_index(drop=True)
    for column in ("n", "n_missing", "n_undefined"):
        table[column] = table[column].astype(int)
    table["value"] = table["value"].astype(float)
    agreement_parts = []
    for task, part in table.groupby("task", sort=True):
        pairs = inter_judge_spearman(part[part["metric"] != "LD"],
                                     metrics=[x for x in m.METRICS if x != "LD"])
        pairs.insert(0, "task", task)
        agreement_parts.append(pairs)
    agreement = (pd.concat(agreement_parts, ignore_index=True) if agreement_parts else
                 pd.DataFrame(columns=["task", "metric", "scorer_a", "scorer_b", "spearman", "n_models"]))
    signature = Signature(distancing=features.signature if include_ld or len(ratings) else None,
                          judges=judge_signatures(ratings), seed=seed, overrides=n_overrides,
                          extra={"ld-std": ld_standardization} if ld_standardization != "separate" else {})
    return MetricsReport(table=table, agreement=agreement, signature=signature, by_task=by_task)


def evaluate_dataset(dataset: Dataset, **kwargs: object) -> MetricsReport:
    """:func:`compute_metrics` over a loaded :class:`~empathy.io.Dataset` (ratings as loaded)."""
    return compute_metrics(dataset.outputs, dataset.ratings, **kwargs)  # type: ignore[arg-type]


def rankings(table: pd.DataFrame) -> pd.DataFrame:
    """Rank of each model within each (task, scorer, metric); 1 = least failure (all four metrics: lower is better)."""
    ranked = table.dropna(subset=["value"]).copy()
    ranked["rank"] = ranked.groupby(["task", "scorer", "metric"])["value"].rank(method="min").astype(int)
    return ranked
