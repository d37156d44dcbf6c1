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


@dataclass(frozen=True)
class _Units:
    """Ratings laid out densely: one row per rated (item, model, rater) unit, one column per dimension."""

    values: NDArray[np.float64]
    present: NDArray[np.bool_]
    dimensions: pd.Index
    output_row: NDArray[np.int64]
    rater: NDArray[np.int64]


def _codes(index: pd.Index, column: pd.Series) -> NDArray[np.int64]:
    """Position of each value of ``column`` in ``index`` (-1 if absent); factorizes first, which is much
    cheaper than looking every string up."""
    codes, uniques = pd.factorize(column)
    return np.asarray(index.get_indexer(uniques), dtype=np.int64)[codes]


def _units(outputs: pd.DataFrame, ratings: pd.DataFrame, raters: pd.Index) -> _Units:
    # Integer codes and numpy scatter instead of a MultiIndex unstack: this is the hot path of every
    # recompute after an override (see bench/bench_metrics.py).
    items = pd.Index(pd.unique(outputs["item_id"]))
    models = pd.Index(pd.unique(outputs["model"]))
    o_item = items.get_indexer(outputs["item_id"])
    o_model = models.get_indexer(outputs["model"])
    lookup = np.full(len(items) * len(models), -1, dtype=np.int64)
    lookup[o_item * len(models) + o_model] = np.arange(len(outputs))
    r_item = _codes(items, ratings["item_id"])
    r_model = _codes(models, ratings["model"])
    known = (r_item >= 0) & (r_model >= 0)
    row = np.where(known, lookup[np.where(known, r_item * len(models) + r_model, 0)], -1)
    keep = row >= 0  # ratings of (item, model) pairs absent from the outputs do not enter any metric
    dimensions = pd.Index(pd.unique(ratings["dimension"]))
    r_dim = _codes(dimensions, ratings["dimension"])[keep]
    r_rater = _codes(raters, ratings["rater"])[keep]
    unit_key = row[keep] * len(raters) + r_rater
    unique_keys, inverse = np.unique(unit_key, return_inverse=True)
    values = np.full((len(unique_keys), len(dimensions)), np.nan)
    present = np.zeros((len(unique_keys), len(dimensions)), dtype=bool)
    values[inverse, r_dim] = ratings["value"].to_numpy(dtype=float)[keep]
    present[inverse, r_dim] = True
    return _Units(values=values, present=present, dimensions=dimensions,
                  output_row=unique_keys // len(raters), rater=unique_keys % len(raters))


def _dimension(units: _Units, name: str, scope: NDArray[np.bool_]) -> NDArray[np.float64]:
    position = units.dimensions.get_indexer([name])[0]
    return units.values[scope, position] if position >= 0 else np.full(int(scope.sum()), np.nan)


def _summarise(group: NDArray[np.int64], n_groups: int, terms: NDArray[np.float64], status: NDArray[np.int8]
               ) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.int64], NDArray[np.int64],
                          NDArray[np.int64]]:
    """Per group present in ``group``: (group code, mean of usable terms, n, n_missing, n_undefined)."""
    usable = status == m.OK
    total = np.bincount(group, weights=np.where(usable, terms, 0.0), minlength=n_groups)
    n = np.bincount(group, weights=usable, minlength=n_groups).astype(np.int64)
    n_missing = np.bincount(group, weights=status == m.MISSING, minlength=n_groups).astype(np.int64)
    n_undefined = np.bincount(group, weights=status == m.UNDEFINED, minlength=n_groups).astype(np.int64)
    seen = np.flatnonzero(np.bincount(group, minlength=n_groups))
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n[seen] > 0, total[seen] / np.maximum(n[seen], 1), np.nan)
    return seen, mean, n[seen], n_missing[seen], n_undefined[seen]


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
    tasks = pd.Index(pd.unique(text["task"]))
    models = pd.Index(pd.unique(text["model"]))
    raters = pd.Index(pd.unique(ratings["rater"])) if len(ratings) else pd.Index([])
    task_code = tasks.get_indexer(text["task"])
    model_code = models.get_indexer(text["model"])
    parts = []
    if len(ratings):
        units = _units(outputs, ratings, raters)
        n_groups = len(tasks) * len(models) * len(raters)
        group_all = (task_code[units.output_row] * len(models) + model_code[units.output_row]) * len(raters) \
            + units.rater
        for metric, dimensions in m.METRIC_DIMENSIONS.items():
            columns = [i for i in units.dimensions.get_indexer(list(dimensions)) if i >= 0]
            if not columns:
                continue
            scope = units.present[:, columns].any(axis=1)
            if not scope.any():
                continue
            if metric == "SA":
                terms, status = m.sentiment_attenuation_terms(_dimension(units, "e_ref", scope),
                                                              _dimension(units, "e_gen", scope))
            elif metric == "EGM":
                rows = units.output_row[scope]
                terms, status = m.granularity_mismatch_terms(
                    _dimension(units, "u_ref", scope), _dimension(units, "u_gen", scope),
                    features.sentences_ref[rows], features.sentences_gen[rows])
            else:
                terms, status = m.conflict_avoidance_terms(_dimension(units, "ca", scope))
            seen, mean, n, n_missing, n_undefined = _summarise(group_all[scope], n_groups, terms, status)
            rater_of = seen % len(raters)
            model_of = (seen // len(raters)) % len(models)
            task_of = seen // (len(raters) * len(models))
            parts.append(pd.DataFrame({"task": tasks[task_of], "model": models[model_of], "scorer": raters[rater_of],
                                       "metric": metric, "value": mean, "n": n, "n_missing": n_missing,
                                       "n_undefined": n_undefined}))
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
