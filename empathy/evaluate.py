"""Compute the paper's metrics for a whole data set: SA, EGM and CA per (model, judge), LD per model.

The equations and the metric registry live in :mod:`empathy.metrics`; this module gathers their inputs from
the data model in two steps. :func:`plan_metrics` builds a :class:`MetricPlan` once per data set (the dense
rating matrix, each registered metric's scope and groups, the text features it reads, the table's row order,
the judge signatures); :meth:`MetricPlan.evaluate` turns rating values into the results table, running each
metric's terms function vectorised over every (model, judge) group at once. :func:`compute_metrics` is the
two in one call; the app's live recompute (:class:`empathy.review.Recompute`) evaluates a cached plan on the
values with the human overrides patched in (see ``bench/bench_recompute.py``).

Which items a judge's metric rests on: the (item, model) pairs for which the judge has at least one rating
row in the metric's dimensions (so a judge that rated only the counseling items has a CA over those items,
not a CA with every news item counted as missing). Within that scope, an item whose rating is empty (NaN,
for example a judge call that failed after its retries) or absent for one of the two sides is *missing*.

Sentence counts (``d`` and ``q`` of Eq. 2) and the distancing densities of Eq. 4 come from one text analyser,
by default the spaCy detectors of :mod:`empathy.distancing`, so EGM and LD count sentences the same way.
"""

from __future__ import annotations

import copy
import functools
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from empathy import metrics as m
from empathy.agreement import spearman_pairs
from empathy.codes import unique_keys
from empathy.signature import Signature, judge_signatures
from empathy.vocabulary import RANK_TIES

#: Name of the scorer of the distancing metric's rows (LD) in results tables: the registry entry that reads the
#: distancing densities.
LD_SCORER: str = next((spec.scorer or "" for spec in m.METRIC_SPECS.values() if spec.needs_distancing), "")
TABLE_COLUMNS: tuple[str, ...] = ("task", "model", "scorer", "metric", "value", "n", "n_missing", "n_undefined")

#: Up to this many changes :meth:`MetricPlan.locate` looks names up in dictionaries; above, in pandas indexes
#: (measured at 200,000 outputs: 3 changes 0.05 ms against 0.2 ms, 10,000 changes 4.3 ms against 2.0 ms).
_DICT_LOOKUPS = 500
#: Up to how many changed rating keys :class:`LiveMetrics` locates one by one when some have no place in the plan.
_FEW_KEYS = 64
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
                  signature: str | None = None, rows: NDArray[np.bool_] | None = None) -> TextFeatures:
    """Analyse every distinct reference and generation once (references repeat across models).

    ``rows`` (a boolean mask over the outputs, default all) limits the analysis to the texts of those rows
    (:func:`text_rows`); the other rows' features are NaN. When no row is chosen nothing is analysed, the
    analyser (spaCy, by default) is never loaded, and the signature is ``""``.
    """
    n = len(outputs)
    chosen = np.ones(n, dtype=bool) if rows is None else np.asarray(rows, dtype=bool)
    sentences_ref, sentences_gen = np.full(n, np.nan), np.full(n, np.nan)
    densities_ref, densities_gen = np.full((n, 3), np.nan), np.full((n, 3), np.nan)
    if not chosen.any():
        return TextFeatures(sentences_ref, sentences_gen, densities_ref, densities_gen, signature="")
    if analyser is None:
        analyser = spacy_analyser
        signature = signature or spacy_analyser_signature()
    reference = outputs["reference"][chosen]
    generation = outputs["generation"][chosen]
    # one factorisation gives the distinct texts (in order of appearance, as pd.unique) and where each row's text
    # is among them: each of 400,000 texts hashed once at 200,000 outputs, not again to be looked up
    codes, texts = pd.factorize(pd.concat([reference, generation], ignore_index=True), use_na_sentinel=False)
    sentences, densities = analyser(list(texts))
    sentences = np.asarray(sentences, dtype=float)
    densities = np.asarray(densities, dtype=float)
    if sentences.shape != (len(texts),) or densities.shape != (len(texts), 3):
        raise ValueError(f"text analyser returned shapes {sentences.shape} and {densities.shape}; "
                         f"expected ({len(texts)},) and ({len(texts)}, 3)")
    ref, gen = codes[:len(reference)], codes[len(reference):]
    sentences_ref[chosen], sentences_gen[chosen] = sentences[ref], sentences[gen]
    densities_ref[chosen], densities_gen[chosen] = densities[ref], densities[gen]
    return TextFeatures(sentences_ref=sentences_ref, sentences_gen=sentences_gen, densities_ref=densities_ref,
                        densities_gen=densities_gen, signature=signature or "custom-analyser")


def text_rows(outputs: pd.DataFrame, ratings: pd.DataFrame, *, include_ld: bool = True) -> NDArray[np.bool_]:
    """The outputs rows whose texts some metric reads (a boolean mask): what :func:`text_features` must parse.

    A text-only metric that is computed (LD, unless ``include_ld`` is false) reads every row; a judge metric
    that reads text features (EGM: the sentence counts ``d`` and ``q`` of Eq. 2) reads the rows that have a
    rating in its dimensions (``u_ref``, ``u_gen``); no other metric reads the texts. So ``metrics --no-ld`` on
    CA ratings parses nothing, and on EGM ratings only the outputs a judge counted.
    """
    needed = np.zeros(len(outputs), dtype=bool)
    for spec in m.METRIC_SPECS.values():
        if not (spec.needs_sentences or spec.needs_distancing) or (spec.needs_distancing and not include_ld):
            continue
        if not spec.judged:
            return np.ones(len(outputs), dtype=bool)
        rated = ratings[ratings["dimension"].isin(spec.dimensions)] if len(ratings) else ratings
        if len(rated):
            keys = pd.MultiIndex.from_arrays([rated["item_id"], rated["model"]])
            needed |= pd.MultiIndex.from_arrays([outputs["item_id"], outputs["model"]]).isin(keys)
    return needed


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
        from empathy.io import json_value as clean  # the one JSON cleaner (NaN -> null, numpy -> Python)

        keys = ["model", "scorer", "metric", "value", "n", "n_missing", "n_undefined"]
        if self.by_task:
            keys.insert(0, "task")
        metrics_rows = [{k: clean(row[k]) for k in keys} for row in self.table.to_dict("records")]
        agreement_keys = ["metric", "scorer_a", "scorer_b", "spearman", "n_models"]
        if self.by_task:
            agreement_keys.insert(0, "task")
        agreement_rows = [{k: clean(row[k]) for k in agreement_keys} for row in self.agreement.to_dict("records")]
        return {"metrics": metrics_rows, "agreement": agreement_rows, "signature": str(self.signature)}


def _codes(index: pd.Index, column: pd.Series) -> NDArray[np.int64]:
    """Position of each value of ``column`` in ``index`` (-1 if absent); factorizes first, which is much
    cheaper than looking every string up."""
    codes, uniques = pd.factorize(column)
    return np.asarray(index.get_indexer(uniques), dtype=np.int64)[codes]


@dataclass(frozen=True)
class PlanLayout:
    """Where everything of a :class:`MetricPlan` sits (:attr:`MetricPlan.layout`): outputs by (task, model),
    ratings laid out densely as units x dimensions.

    A *unit* is one rated (item, model, rater) triple whose (item, model) is in the outputs; ``values`` and
    ``present`` have one row per unit (sorted by ``keys = output_row * n_raters + rater``) and one column
    per dimension found in the ratings. Built once per data set and task scope; read-only for every consumer.
    """

    items: pd.Index
    models: pd.Index
    tasks: pd.Index
    raters: pd.Index
    dimensions: pd.Index
    output_of: NDArray[np.int64]       # item code * n_models + model code -> outputs row (-1: no output)
    output_task: NDArray[np.int64]     # per outputs row: task code
    output_model: NDArray[np.int64]    # per outputs row: model code
    keys: NDArray[np.int64]
    values: NDArray[np.float64]
    present: NDArray[np.bool_]

    @property
    def unit_output(self) -> NDArray[np.int64]:
        return self.keys // max(len(self.raters), 1)

    @property
    def unit_rater(self) -> NDArray[np.int64]:
        return self.keys % max(len(self.raters), 1)

    def rows_of(self, item: pd.Series, model: pd.Series) -> NDArray[np.int64]:
        """Outputs row of each (item, model) pair (-1 where the outputs have none)."""
        i = _codes(self.items, item)
        j = _codes(self.models, model)
        known = (i >= 0) & (j >= 0)
        return np.where(known, self.output_of[np.where(known, i * len(self.models) + j, 0)], -1)


def _layout(outputs: pd.DataFrame, ratings: pd.DataFrame, by_task: bool) -> PlanLayout:
    # Integer codes and numpy scatter instead of a MultiIndex unstack: this is built once per data set and
    # the arrays are what every live recompute patches (see bench/bench_recompute.py).
    items = pd.Index(pd.unique(outputs["item_id"]))
    models = pd.Index(pd.unique(outputs["model"]))
    task_column = outputs["task"] if by_task else pd.Series("all", index=outputs.index)
    tasks = pd.Index(pd.unique(task_column))
    output_of = np.full(len(items) * len(models), -1, dtype=np.int64)
    output_model = models.get_indexer(outputs["model"]).astype(np.int64)
    output_of[items.get_indexer(outputs["item_id"]) * len(models) + output_model] = np.arange(len(outputs))
    rater_code, raters = _first_seen(ratings["rater"]) if len(ratings) else (None, pd.Index([]))
    dimension_code, dimensions = _first_seen(ratings["dimension"]) if len(ratings) else (None, pd.Index([]))
    layout = PlanLayout(items, models, tasks, raters, dimensions, output_of, tasks.get_indexer(task_column).astype(
        np.int64), output_model, np.empty(0, dtype=np.int64), np.empty((0, len(dimensions))),
        np.zeros((0, len(dimensions)), dtype=bool))
    if not len(ratings):
        return layout
    row = layout.rows_of(ratings["item_id"], ratings["model"])
    keep = row >= 0  # ratings of (item, model) pairs absent from the outputs do not enter any metric
    r_dim = dimension_code[keep]
    unit_key = row[keep] * len(raters) + rater_code[keep]
    keys, inverse = unique_keys(unit_key, len(outputs) * len(raters))
    values = np.full((len(keys), len(dimensions)), np.nan)
    present = np.zeros((len(keys), len(dimensions)), dtype=bool)
    values[inverse, r_dim] = ratings["value"].to_numpy(dtype=float)[keep]
    present[inverse, r_dim] = True
    return replace(layout, keys=keys, values=values, present=present)


def _first_seen(column: pd.Series) -> tuple[NDArray[np.int64], pd.Index]:
    """The distinct values of ``column`` in order of appearance (``pd.unique``) and each row's position among them,
    from one factorisation (a column of 3 million names is not factorised again to be looked up)."""
    codes, uniques = pd.factorize(column)
    distinct = pd.Index(pd.unique(column))  # the index the plan always had (its dtype); both in order of appearance
    if (codes < 0).any() or len(uniques) != len(distinct):  # a missing value: a value of its own for pd.unique
        return _codes(distinct, column), distinct
    return codes.astype(np.int64, copy=False), distinct


@dataclass(frozen=True)
class MetricSlice:
    """One metric's part of a plan (:attr:`MetricPlan.slices`): the rows it scores, their groups, and its constant
    inputs.

    ``rows`` are unit rows (judge metrics) or outputs rows (text-only metrics); ``group`` the local group of
    each row; ``groups`` one row per group (task, model, scorer, metric). ``columns`` maps each judge
    dimension of the metric to its column in the layout (-1 when no rating has it). ``fixed`` holds the
    summary of a metric that reads no rating (it cannot change under overrides).
    """

    spec: m.MetricSpec
    rows: NDArray[np.int64]
    group: NDArray[np.int64]
    groups: pd.DataFrame
    inputs: m.TermInputs
    columns: Mapping[str, int]
    fixed: tuple[NDArray[np.float64], ...] | None = None

    def summary(self, values: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:
        """Per group (in ``groups`` order): mean, n, n_missing, n_undefined under the rating ``values``."""
        if self.fixed is not None:
            return self.fixed
        inputs = self.term_inputs(values)
        n_groups = len(self.groups)
        if not self.spec.grouped and self.spec.aggregate is m.aggregate:
            terms, status = self.spec.terms(inputs)
            return m.mean_by_group(self.group, n_groups, terms, status)[1:]
        results = []
        for index in _group_positions(self.group, n_groups):
            if self.spec.grouped:
                terms, status = self.spec.terms(_take(inputs, index))
            else:
                terms, status = self.spec.terms(inputs)
                terms, status = terms[index], status[index]
            results.append(self.spec.aggregate(self.spec.name, terms, status))
        return (np.array([np.nan if r.value is None else r.value for r in results], dtype=float),
                *(np.array([getattr(r, k) for r in results], dtype=np.int64)
                  for k in ("n", "n_missing", "n_undefined")))

    def term_inputs(self, values: NDArray[np.float64], positions: NDArray[np.int64] | None = None
                    ) -> m.TermInputs:
        """The terms function's inputs under the rating ``values``: over every row, or over the rows at
        ``positions`` (for a metric whose terms are row by row, their terms are those rows' terms)."""
        inputs = self.inputs if positions is None else _take(self.inputs, positions)
        if self.spec.judged:
            rows = self.rows if positions is None else self.rows[positions]
            inputs = replace(inputs, ratings={d: values[rows, c] if c >= 0 else np.full(len(rows), np.nan)
                                              for d, c in self.columns.items()})
        return inputs

    def terms(self, values: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.int8]]:
        """Per row (in ``rows`` order): the metric's term and status under the rating ``values``, from the same
        terms function as :meth:`summary` (once per group for a grouped metric)."""
        inputs = self.term_inputs(values)
        if not self.spec.grouped:
            return self.spec.terms(inputs)
        terms = np.full(len(self.rows), np.nan)
        status = np.full(len(self.rows), m.UNDEFINED, dtype=np.int8)
        for index in _group_positions(self.group, len(self.groups)):
            terms[index], status[index] = self.spec.terms(_take(inputs, index))
        return terms, status


def _group_positions(group: NDArray[np.int64], n_groups: int) -> list[NDArray[np.int64]]:
    """Positions of each group's rows, ascending within a group (the order the rows have in the data)."""
    order = np.argsort(group, kind="stable")
    return np.split(order, np.cumsum(np.bincount(group, minlength=n_groups))[:-1])


def _take(inputs: m.TermInputs, index: NDArray[np.int64]) -> m.TermInputs:
    def take(array: NDArray[np.float64] | None) -> NDArray[np.float64] | None:
        return None if array is None else array[index]

    return replace(inputs, ratings={d: v[index] for d, v in inputs.ratings.items()},
                   sentences_ref=take(inputs.sentences_ref), sentences_gen=take(inputs.sentences_gen),
                   densities_ref=take(inputs.densities_ref), densities_gen=take(inputs.densities_gen))


def _constant_inputs(spec: m.MetricSpec, features: TextFeatures, rows: NDArray[np.int64],
                     options: m.MetricOptions) -> m.TermInputs:
    """The text features a metric declares it reads, at the given outputs rows."""
    inputs = m.TermInputs(options=options)
    if spec.needs_sentences:
        inputs = replace(inputs, sentences_ref=features.sentences_ref[rows],
                         sentences_gen=features.sentences_gen[rows])
    if spec.needs_distancing:
        inputs = replace(inputs, densities_ref=features.densities_ref[rows],
                         densities_gen=features.densities_gen[rows])
    return inputs


def _with_options(part: MetricSlice, options: m.MetricOptions) -> MetricSlice:
    """``part`` with its terms read under ``options``: every array shared, the inputs' options replaced."""
    return replace(part, inputs=replace(part.inputs, options=options))


def _judged_slice(spec: m.MetricSpec, layout: PlanLayout, features: TextFeatures, options: m.MetricOptions,
                  shared: MetricSlice | None = None) -> MetricSlice | None:
    """A judge metric scores the units with at least one rating in its dimensions, grouped per (task, model,
    judge); ``None`` when no unit is in its scope.

    ``shared``: the metric's slice of the same layout under other options (:meth:`MetricPlan.reading`), whose
    rows, groups and constant inputs this one takes as they are (the same objects): which units a metric scores,
    their groups and their text features never depend on the options, only the terms do.
    """
    if shared is not None:
        return _with_options(shared, options)
    columns = dict(zip(spec.dimensions, (int(c) for c in layout.dimensions.get_indexer(list(spec.dimensions))),
                       strict=True))
    found = [c for c in columns.values() if c >= 0]
    if not found:
        return None
    rows = np.flatnonzero(layout.present[:, found].any(axis=1))
    if not len(rows):
        return None
    output = layout.unit_output[rows]
    n_raters = len(layout.raters)
    code = (layout.output_task[output] * len(layout.models) + layout.output_model[output]) * n_raters \
        + layout.unit_rater[rows]
    seen, group = np.unique(code, return_inverse=True)
    groups = pd.DataFrame({"task": layout.tasks[seen // (n_raters * len(layout.models))],
                           "model": layout.models[(seen // n_raters) % len(layout.models)],
                           "scorer": layout.raters[seen % n_raters], "metric": spec.name})
    return MetricSlice(spec, rows, group.astype(np.int64), groups, _constant_inputs(spec, features, output, options),
                  columns)


def _text_slice(spec: m.MetricSpec, layout: PlanLayout, features: TextFeatures, options: m.MetricOptions,
                shared: MetricSlice | None = None) -> MetricSlice | None:
    """A metric that reads no rating scores every output, grouped per (task, model), once per plan.

    ``shared``: as for :func:`_judged_slice` (the rows, groups and text features taken from it); the fixed summary
    is computed again under ``options``.
    """
    if shared is not None:
        part = _with_options(replace(shared, fixed=None), options)
        return replace(part, fixed=part.summary(layout.values))
    code = layout.output_task * len(layout.models) + layout.output_model
    if not len(code):
        return None
    seen, group = np.unique(code, return_inverse=True)
    groups = pd.DataFrame({"task": layout.tasks[seen // len(layout.models)],
                           "model": layout.models[seen % len(layout.models)], "scorer": spec.scorer,
                           "metric": spec.name})
    rows = np.arange(len(code))
    part = MetricSlice(spec, rows, group.astype(np.int64), groups, _constant_inputs(spec, features, rows, options), {})
    return replace(part, fixed=part.summary(layout.values))


class MetricPlan:
    """Everything the metrics of one data set derive from the *positions* of its ratings, built once.

    :func:`compute_metrics` is ``plan_metrics(...).evaluate()``; the app's live recompute
    (:class:`empathy.review.Recompute`) keeps one plan per data set and evaluates it on the rating values
    with the overrides patched in (:meth:`patch`): one code path, so the two cannot drift apart. Another reading
    of the open cases (:class:`empathy.metrics.MetricOptions`) is :meth:`reading`: it shares what does not depend
    on the reading. What consumers outside this module read (the bootstrap, :class:`LiveMetrics`): :attr:`layout`,
    :attr:`slices` and :meth:`own_terms`.
    """

    def __init__(self, outputs: pd.DataFrame, ratings: pd.DataFrame, features: TextFeatures, *,
                 by_task: bool = False, include_ld: bool = True, options: m.MetricOptions | None = None):
        self.by_task = by_task
        self.options = options or m.MetricOptions()
        self.features = features
        layout = _layout(outputs, ratings, by_task)
        self._layout = layout
        self.values = layout.values
        slices = []
        for spec in m.METRIC_SPECS.values():
            if spec.needs_distancing and not include_ld:
                continue
            if spec.judged:
                part = _judged_slice(spec, layout, features, self.options) if len(ratings) else None
            else:
                part = _text_slice(spec, layout, features, self.options)
            if part is not None:
                slices.append(part)
        self._slices = slices
        self._skeleton, self._order = _skeleton([part.groups for part in slices])
        self._agreement = _agreement_plan(slices)
        # the paper reports per task: pooling several is a labelled choice (``tasks:pooled`` in the signature)
        self._pooled = not by_task and pooled_tasks(outputs)
        # the parse is part of the signature when a computed metric read its features (LD, EGM), else not
        reads_text = any(part.spec.needs_sentences or part.spec.needs_distancing for part in slices)
        self._signature = Signature(distancing=(features.signature or None) if reads_text else None,
                                    judges=judge_signatures(ratings), extra=self._signature_extra(self.options))
        # name -> code dictionaries: a handful of overrides are looked up far faster than by Index.get_indexer
        self._lookup = tuple({str(name): code for code, name in enumerate(index)}
                             for index in (layout.items, layout.models, layout.raters, layout.dimensions))
        # (metric, its spec's identity, the options it reads) -> its terms under ``values``; shared by the readings
        self._own_terms: dict[tuple[object, ...], tuple[NDArray[np.float64], NDArray[np.int8]]] = {}
        # id of a slice's group array -> (that array, its groups' positions); shared by the readings like the terms
        self._members: dict[int, tuple[NDArray[np.int64], list[NDArray[np.int64]]]] = {}

    def _signature_extra(self, options: m.MetricOptions) -> dict[str, str]:
        extra = options.signature_fields()
        if self._pooled:
            extra["tasks"] = "pooled"
        return extra

    @property
    def layout(self) -> PlanLayout:
        """Where the outputs and the ratings sit (:class:`PlanLayout`): items, models, tasks, raters and dimensions
        as indexes, each unit's key and the dense rating ``values`` / ``present`` matrices. Read-only: a plan's
        readings (:meth:`reading`) share it."""
        return self._layout

    @property
    def slices(self) -> tuple[MetricSlice, ...]:
        """Each computed metric's part of the plan (:class:`MetricSlice`: its rows, groups and constant inputs),
        in registry order, which is the order :meth:`item_terms` stacks their rows in."""
        return tuple(self._slices)

    def own_terms(self, part: MetricSlice) -> tuple[NDArray[np.float64], NDArray[np.int8]]:
        """``part.terms(self.values)``: every row's term and status of one of this plan's slices under the ratings
        the plan was built from, computed once and shared by the plan's readings whose options the metric does not
        read. Read-only arrays (copy them to patch)."""
        key = (part.spec.name, id(part.spec), *(getattr(self.options, option) for option in
                                                sorted(part.spec.reads_options)))
        found = self._own_terms.get(key)
        if found is None:
            terms, status = part.terms(self.values)
            terms, status = np.array(terms, dtype=float), np.array(status, dtype=np.int8)
            terms.setflags(write=False)
            status.setflags(write=False)
            found = self._own_terms.setdefault(key, (terms, status))
        return found

    def group_members(self, part: MetricSlice) -> list[NDArray[np.int64]]:
        """The positions of each group's rows of one of this plan's slices (ascending within a group), computed once
        per group array and shared by the plan's readings, whose slices share their groups. Read-only arrays."""
        # keyed by the array's id, the array held with its members: no other array can take that id meanwhile
        found = self._members.get(id(part.group))
        if found is None:
            members = _group_positions(part.group, len(part.groups))
            for positions in members:
                positions.setflags(write=False)
            found = self._members.setdefault(id(part.group), (part.group, members))
        return found[1]

    def reading(self, options: m.MetricOptions) -> MetricPlan:
        """This plan under other readings of the open cases: equal to :func:`plan_metrics` of the same data with
        ``options``, at the cost of what differs.

        The new plan shares the layout (the dense ratings, the outputs' positions), the judges' signatures, the
        table's row order, Table 6's grid, the name look-ups and the terms already computed (:meth:`own_terms`);
        only the slices of the metrics that read an option whose value differs (EGM for ``egm_both_zero``, LD for
        ``ld_standardization``: :attr:`empathy.metrics.MetricSpec.reads_options`) are built again, and they too
        share their rows, groups and text features with this plan's (the same arrays): which units and groups a
        metric scores never depends on the options, so neither does anything else. Their live recompute
        (:class:`LiveMetrics`) shares each slice's group members the same way.
        """
        if options == self.options:
            return self
        plan = copy.copy(self)
        plan.options = options
        plan._slices = [self._slice_reading(part, options) for part in self._slices]
        plan._signature = replace(self._signature, extra=self._signature_extra(options))
        return plan

    def _slice_reading(self, part: MetricSlice, options: m.MetricOptions) -> MetricSlice:
        if all(getattr(options, option) == getattr(self.options, option) for option in part.spec.reads_options):
            # the same terms: only the options the inputs carry (which this metric does not read) change
            return _with_options(part, options)
        build = _judged_slice if part.spec.judged else _text_slice
        # the rows, groups and text features shared (at 200,000 outputs a rebuilt EGM slice held 18 MiB more)
        rebuilt = build(part.spec, self._layout, self.features, options, shared=part)
        if rebuilt is None:  # the scope is the options' no matter: a slice that existed exists
            raise AssertionError(f"the slice of {part.spec.name} vanished under {options}")
        return rebuilt

    def patch(self, changes: pd.DataFrame | None) -> NDArray[np.float64] | None:
        """The rating values with ``changes`` (item_id, model, rater, dimension, value; later rows win) written
        in, or ``None`` when a change adds a rating the plan has no place for (it would change a metric's
        scope: plan the effective ratings instead)."""
        if changes is None or len(changes) == 0:
            return self.values
        located = self.locate(changes)
        if located is None:
            return None
        cells, written = located
        patched = self.values.copy()
        patched.reshape(-1)[cells] = written
        return patched

    def locate(self, changes: pd.DataFrame | None) -> tuple[NDArray[np.int64], NDArray[np.float64]] | None:
        """Where :meth:`patch` writes ``changes``: the cells of :attr:`values` as flat indices (``unit *
        dimensions + column``; ascending, one per cell, later rows winning) and the values written there; ``None``
        when a change adds a rating the plan has no place for. Costs O(changes), whatever the data set's size."""
        if changes is None or len(changes) == 0:
            return np.empty(0, dtype=np.int64), np.empty(0)
        _, models, raters, dimensions = self._lookup
        layout = self._layout
        keys = ("item_id", "model", "rater", "dimension")
        if len(changes) <= _DICT_LOOKUPS or self._name_indexes is None:
            item, model, rater, column = (
                np.array([lookup.get(str(name), -1) for name in changes[key].tolist()], dtype=np.int64)
                for lookup, key in zip(self._lookup, keys, strict=True))
        else:  # many changes (a long ledger): one hash-table pass per column, the same codes as the dictionaries
            item, model, rater, column = (_codes(index, changes[key].astype(str))
                                          for index, key in zip(self._name_indexes, keys, strict=True))
        if min(item.min(), model.min(), rater.min(), column.min()) < 0:
            return None
        output = layout.output_of[item * len(models) + model]
        key = output * len(raters) + rater
        unit = np.minimum(np.searchsorted(layout.keys, key), max(len(layout.keys) - 1, 0))
        if (output < 0).any() or not len(layout.keys) or (layout.keys[unit] != key).any() \
                or not layout.present[unit, column].all():
            return None
        flat = unit * len(dimensions) + column
        cells, first_of_reversed = np.unique(flat[::-1], return_index=True)  # later rows win
        return cells, changes["value"].to_numpy(dtype=float)[len(flat) - 1 - first_of_reversed]

    @functools.cached_property
    def _name_indexes(self) -> tuple[pd.Index, ...] | None:
        """The name -> code dictionaries of ``_lookup`` as indexes (``None`` when two names read the same as text)."""
        indexes = tuple(pd.Index(list(lookup), dtype=object) for lookup in self._lookup)
        return indexes if all(index.is_unique for index in indexes) else None

    def evaluate(self, values: NDArray[np.float64] | None = None, *, seed: int | None = None,
                 n_overrides: int | None = None) -> MetricsReport:
        """The metrics report under the rating ``values`` (default: the ratings the plan was built from)."""
        values = self.values if values is None else values
        return self._report([part.summary(values) for part in self._slices], seed=seed, n_overrides=n_overrides)

    def _report(self, summaries: Sequence[tuple[NDArray[np.float64], ...]], *, seed: int | None,
                n_overrides: int | None) -> MetricsReport:
        """The report of every slice's per-group (value, n, n_missing, n_undefined), in slice order."""
        columns: dict[str, object] = {c: self._skeleton[c] for c in ("task", "model", "scorer", "metric")}
        for position, column in enumerate(("value", "n", "n_missing", "n_undefined")):
            merged = np.concatenate([s[position] for s in summaries]) if summaries else np.empty(0)
            columns[column] = merged[self._order].astype(float if column == "value" else int)
        table = pd.DataFrame(columns, columns=list(TABLE_COLUMNS))
        per_group = np.concatenate([s[0] for s in summaries]) if summaries else np.empty(0)
        rows = []
        for task, metric, positions, grid_rows, grid_columns, scorers, shape in self._agreement:
            grid = np.full(shape, np.nan)
            grid[grid_rows, grid_columns] = per_group[positions]
            rows += [{"task": task, "metric": metric, **row} for row in spearman_pairs(grid, scorers)]
        agreement = pd.DataFrame(rows, columns=AGREEMENT_COLUMNS)
        signature = replace(self._signature, seed=seed, overrides=n_overrides)
        return MetricsReport(table=table, agreement=agreement, signature=signature, by_task=self.by_task)

    def item_terms(self, values: NDArray[np.float64] | None = None, *, metrics: Sequence[str] | None = None
                   ) -> pd.DataFrame:
        """Per-item terms behind every value of :meth:`evaluate`, one row per scored unit.

        Columns: task, item_id, model, scorer, metric, term (NaN unless usable), status
        (:data:`empathy.metrics.OK`, ``MISSING``, ``UNDEFINED``) and one column per judge dimension the metrics
        read (the rating each term was computed from; NaN for a text-only metric). The mean of a group's usable
        terms is its value in :meth:`evaluate` (all four equations are means), which is what
        :mod:`empathy.fragility` builds on. ``metrics`` limits the output to those registry names.
        """
        values = self.values if values is None else values
        layout = self._layout
        n_models = max(len(layout.models), 1)
        known = np.flatnonzero(layout.output_of >= 0)
        item_of_output = np.empty(len(layout.output_task), dtype=np.int64)
        item_of_output[layout.output_of[known]] = known // n_models
        wanted = None if metrics is None else {m.get_metric(name).name for name in metrics}
        dimension_names = [d for d in m.DIMENSIONS if d in set(layout.dimensions)]
        frames = []
        for part in self._slices:
            if wanted is not None and part.spec.name not in wanted:
                continue
            terms, status = part.terms(values)
            output = layout.unit_output[part.rows] if part.spec.judged else part.rows
            frame = pd.DataFrame({"task": part.groups["task"].to_numpy()[part.group],
                                  "item_id": layout.items[item_of_output[output]],
                                  "model": part.groups["model"].to_numpy()[part.group],
                                  "scorer": part.groups["scorer"].to_numpy()[part.group],
                                  "metric": part.spec.name,
                                  "term": np.where(status == m.OK, terms, np.nan),
                                  "status": status.astype(np.int8)})
            for dimension in dimension_names:
                column = int(layout.dimensions.get_loc(dimension))
                frame[dimension] = values[part.rows, column] if part.spec.judged else np.nan
            frames.append(frame)
        columns = ["task", "item_id", "model", "scorer", "metric", "term", "status", *dimension_names]
        if not frames:
            return pd.DataFrame(columns=columns)
        return pd.concat(frames, ignore_index=True)[columns]


class LiveMetrics:
    """A plan's metrics kept current as the overrides change: an update recomputes the terms of the units whose
    rating values changed, and the aggregates of their groups, only.

    A metric whose value is the mean of row-by-row terms (the default aggregate, not ``grouped``: SA, EGM, CA)
    keeps every unit's term and status; an update runs its terms function on the changed units alone and sums each
    changed group again from the kept terms, in the order :func:`empathy.metrics.mean_by_group` sums them, so
    every value is bit for bit the one :meth:`MetricPlan.evaluate` gives on the same rating values. The sums and
    counts of the groups no change touched are kept. A metric with its own aggregate or grouped terms is evaluated
    again whole when a changed unit is in its scope; one that reads no rating (LD: its standardisation depends on
    the whole group, and it reads no judge label) never changes. :meth:`report` is safe to call from several
    threads (the app shares one per data set between sessions, each with its own overrides).
    """

    def __init__(self, plan: MetricPlan) -> None:
        self.plan = plan
        self._values = plan.values.copy()
        self._cells = np.empty(0, dtype=np.int64)  # the flat cells the current overrides write
        self._parts = [_LivePart(part, self._values, plan) for part in plan.slices]
        self._lock = threading.Lock()
        # the last overrides frame located (held weakly) and where it writes: a ledger's applied overrides spliced
        # from it are located from the changed rating keys alone
        # (its frame_serial, cells, values): the serial, not the frame, so that the frame need not stay alive
        self._located: tuple[int, NDArray[np.int64], NDArray[np.float64]] | None = None

    def report(self, changes: pd.DataFrame | None, *, seed: int | None = None, n_overrides: int | None = None
               ) -> MetricsReport | None:
        """The plan's report with ``changes`` (the overrides now; ``None`` or empty: none) in place of the ones
        of the previous call, or ``None`` when a change has no place in the plan (see :meth:`MetricPlan.locate`).
        Costs O(changes) plus the changed units' terms and their groups' sums; for a ledger's applied overrides
        brought up to date from the frame of an earlier call (:func:`empathy.labels.ledger.applied_delta`),
        O(changed rating keys): only those are located."""
        located = self._locate(changes)
        if located is None:
            return None
        with self._lock:
            changed = self._write(*located)
            if len(changed):
                n_columns = max(self._values.shape[1], 1)
                for part in self._parts:
                    part.update(changed // n_columns, changed % n_columns, self._values)
            summaries = [part.summary for part in self._parts]  # replaced, never modified, by later updates
        return self.plan._report(summaries, seed=seed, n_overrides=n_overrides)

    def _locate(self, changes: pd.DataFrame | None) -> tuple[NDArray[np.int64], NDArray[np.float64]] | None:
        """:meth:`MetricPlan.locate` of ``changes``; for an applied frame spliced from the last one located (one row
        per rating key, as every label rule's), the last cells without the changed keys' plus their rows' now."""
        from empathy.labels.ledger import applied_delta, frame_serial

        last = self._located
        delta = applied_delta(changes) if last is not None else None
        located = None
        if delta is not None and last is not None and delta.previous == last[0]:
            keys, rows = delta.keys, delta.rows
            gone = self._cells_of(keys)
            now = self.plan.locate(rows)
            if gone is not None and now is not None:
                kept = ~np.isin(last[1], gone)
                cells = np.concatenate([last[1][kept], now[0]])
                order = np.argsort(cells, kind="stable")
                located = cells[order], np.concatenate([last[2][kept], now[1]])[order]
        if located is None:
            located = self.plan.locate(changes)
        if located is not None and changes is not None and len(changes):
            self._located = (frame_serial(changes), *located)
        return located

    def _cells_of(self, keys: pd.DataFrame) -> NDArray[np.int64] | None:
        """The cells of the rating ``keys`` that have a place in the plan (one without has no cell to clear: the
        frame located before had none there); ``None`` for too many keys to locate one by one."""
        if not len(keys):
            return np.empty(0, dtype=np.int64)
        keyed = keys.assign(value=0.0)
        together = self.plan.locate(keyed)
        if together is not None:
            return together[0]
        if len(keys) > _FEW_KEYS:
            return None
        found = [self.plan.locate(keyed.iloc[[k]]) for k in range(len(keyed))]
        cells = [f[0] for f in found if f is not None]
        return np.concatenate(cells) if cells else np.empty(0, dtype=np.int64)

    def _write(self, cells: NDArray[np.int64], written: NDArray[np.float64]) -> NDArray[np.int64]:
        """Write the overrides ``written`` at ``cells`` in place of the previous ones (a cell no longer overridden
        gets its judge's value back); the flat cells whose value changed, bit for bit."""
        flat = self._values.reshape(-1)
        candidates = np.union1d(self._cells, cells)
        after = self.plan.values.reshape(-1)[candidates]
        after[np.searchsorted(candidates, cells)] = written
        differs = flat[candidates].view(np.int64) != after.view(np.int64)
        flat[candidates[differs]] = after[differs]
        self._cells = cells
        return candidates[differs]


class _LivePart:
    """One slice of a :class:`LiveMetrics`: its per-group summary and, for a mean of row-by-row terms, the terms,
    status and group members it is patched from."""

    #: Above this share of a slice's rows changed at once (e.g. another label rule), its terms are recomputed
    #: whole: one vectorised pass is then cheaper than group by group.
    WHOLE_SHARE = 0.125

    def __init__(self, part: MetricSlice, values: NDArray[np.float64], plan: MetricPlan) -> None:
        self.part = part
        self.patchable = (part.fixed is None and part.spec.judged and not part.spec.grouped
                          and part.spec.aggregate is m.aggregate)
        if self.patchable:
            # ``values`` are the plan's own here: its terms, computed once per plan and reading, copied to patch
            terms, status = plan.own_terms(part)
            self.terms, self.status = terms.copy(), status.copy()
            self.members = plan.group_members(part)  # read, never written: shared with the other readings
            self.summary = m.mean_by_group(part.group, len(part.groups), self.terms, self.status)[1:]
        else:
            self.summary = part.summary(values)

    def _whole(self, values: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.int8]]:
        """Every row's term and status, as arrays of this part's own (they are patched in place)."""
        terms, status = self.part.terms(values)
        return np.array(terms, dtype=float), np.array(status, dtype=np.int8)

    def update(self, units: NDArray[np.int64], columns: NDArray[np.int64], values: NDArray[np.float64]) -> None:
        """Bring the summary up to date after the rating values at (``units``, ``columns``) changed."""
        part = self.part
        if part.fixed is not None or not part.spec.judged:
            return
        units = np.unique(units[np.isin(columns, list(part.columns.values()))])  # a decision on what it reads
        found = np.minimum(np.searchsorted(part.rows, units), max(len(part.rows) - 1, 0))
        positions = found[part.rows[found] == units] if len(part.rows) else found[:0]
        if not len(positions):
            return
        if not self.patchable:
            self.summary = part.summary(values)
            return
        if len(positions) > self.WHOLE_SHARE * len(part.rows):
            self.terms, self.status = self._whole(values)
            self.summary = m.mean_by_group(part.group, len(part.groups), self.terms, self.status)[1:]
            return
        self.terms[positions], self.status[positions] = part.spec.terms(part.term_inputs(values, positions))
        summary = tuple(column.copy() for column in self.summary)  # a report already made keeps its arrays
        for group in np.unique(part.group[positions]):
            rows = self.members[group]
            status = self.status[rows]
            usable = status == m.OK
            # np.bincount adds a group's terms in row order, as mean_by_group's does: the same sum, bit for bit
            total = np.bincount(np.zeros(len(rows), dtype=np.intp), weights=np.where(usable, self.terms[rows], 0.0),
                                minlength=1)[0]
            n = int(np.count_nonzero(usable))
            summary[0][group] = total / n if n else np.nan
            summary[1][group] = n
            summary[2][group] = np.count_nonzero(status == m.MISSING)
            summary[3][group] = np.count_nonzero(status == m.UNDEFINED)
        self.summary = summary


AGREEMENT_COLUMNS: tuple[str, ...] = ("task", "metric", "scorer_a", "scorer_b", "spearman", "n_models")


def _skeleton(parts: list[pd.DataFrame]) -> tuple[pd.DataFrame, NDArray[np.int64]]:
    """The table's rows in their published order (by task, metric in the paper's order, scorer, model) and the
    permutation from the slices' concatenated groups to that order; both depend only on which ratings exist."""
    if not parts:
        return pd.DataFrame(columns=["task", "model", "scorer", "metric"]), np.empty(0, dtype=np.int64)
    skeleton = pd.concat(parts, ignore_index=True)
    skeleton["_position"] = np.arange(len(skeleton))
    skeleton = skeleton.sort_values(["task", "metric", "scorer", "model"],
                                    key=lambda s: s.map(m.registry_position) if s.name == "metric" else s)
    return skeleton.drop(columns="_position").reset_index(drop=True), skeleton["_position"].to_numpy()


_AgreementCell = tuple[object, str, NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], list[object],
                       tuple[int, int]]


def _agreement_plan(slices: list[MetricSlice]) -> list[_AgreementCell]:
    """Per task (sorted) and judge metric (paper order): where its groups sit in the concatenated values and
    on the models x scorers grid of :func:`empathy.agreement.spearman_pairs` (scorers sorted by name)."""
    cells = []
    offset = 0
    located = []
    for part in slices:
        if part.spec.judged:
            # each column of the groups as a plain array once (a slice per task of a pandas column costs more)
            columns = {c: part.groups[c].to_numpy(dtype=object) for c in ("task", "model", "scorer")}
            located.append((part, offset, columns))
        offset += len(part.groups)
    tasks = sorted({t for _, _, columns in located for t in columns["task"]}, key=str)
    for task in tasks:
        for part, start, columns in located:
            mine = np.flatnonzero(columns["task"] == task)
            if not len(mine):
                continue
            model_codes, models = pd.factorize(columns["model"][mine], sort=True)
            scorer_codes, scorers = pd.factorize(columns["scorer"][mine])
            order = sorted(range(len(scorers)), key=lambda i: str(scorers[i]))
            column = np.argsort(order)[scorer_codes]
            cells.append((task, part.spec.name, start + mine, model_codes.astype(np.int64), column.astype(np.int64),
                          [scorers[i] for i in order], (len(models), len(scorers))))
    return cells


def pooled_tasks(outputs: pd.DataFrame) -> bool:
    """Whether ``outputs`` hold more than one task, so that values over all of them pool tasks."""
    return "task" in outputs.columns and outputs["task"].nunique(dropna=False) > 1


def default_by_task(outputs: pd.DataFrame) -> bool:
    """Whether results should be per task by default: when the outputs hold more than one task.

    The paper reports every metric within a task; pooling tasks standardises LD across genres and mixes
    scopes, so pooled values are the explicit choice (issue 15). :func:`compute_metrics` keeps
    ``by_task=False`` as its parameter default for compatibility; callers choosing a default (CLI, app)
    should use this rule. A pooled plan of such outputs carries ``tasks:pooled`` in its signature.
    """
    return pooled_tasks(outputs)


def plan_metrics(outputs: pd.DataFrame, ratings: pd.DataFrame, *, features: TextFeatures | None = None,
                 by_task: bool = False, include_ld: bool = True, ld_standardization: str = "separate",
                 egm_both_zero: str = "zero") -> MetricPlan:
    """The :class:`MetricPlan` of a data set (``features`` default to the spaCy analyser over ``outputs``)."""
    options = m.MetricOptions(ld_standardization=ld_standardization, egm_both_zero=egm_both_zero)
    if features is None:  # parse only what a computed metric reads (nothing for CA alone with include_ld off)
        features = text_features(outputs, rows=text_rows(outputs, ratings, include_ld=include_ld))
    return MetricPlan(outputs, ratings, features, by_task=by_task, include_ld=include_ld, options=options)


def compute_metrics(outputs: pd.DataFrame, ratings: pd.DataFrame, *, features: TextFeatures | None = None,
                    by_task: bool = False, include_ld: bool = True, ld_standardization: str = "separate",
                    egm_both_zero: str = "zero", seed: int | None = None, n_overrides: int | None = None
                    ) -> MetricsReport:
    """Every registered metric (:data:`empathy.metrics.METRIC_SPECS`) per (model, judge), or per model for a
    text-only metric (LD), with n, and the inter-judge Spearman table.

    ``ratings`` are the effective ratings (overrides already applied, see
    :func:`empathy.labels.ledger.apply_overrides`).
    ``features`` defaults to the spaCy analyser over the outputs whose texts a computed metric reads
    (:func:`text_rows`: every output for LD, the outputs with ``u_ref``/``u_gen`` ratings for EGM, none else).
    With ``by_task`` every value is computed within each task; otherwise over all of a model's items
    (``task`` is then ``"all"``). ``ld_standardization`` and ``egm_both_zero`` choose the readings of the open
    cases (:class:`empathy.metrics.MetricOptions`; the defaults are the paper's, others enter the signature).
    This is :func:`plan_metrics` evaluated once.
    """
    return plan_metrics(outputs, ratings, features=features, by_task=by_task, include_ld=include_ld,
                        ld_standardization=ld_standardization, egm_both_zero=egm_both_zero
                        ).evaluate(seed=seed, n_overrides=n_overrides)


def rank_by_direction(table: pd.DataFrame, by: Sequence[str] = ("task", "scorer", "metric"), *,
                      value: str = "value") -> pd.Series:
    """The one rank convention of every table, page, command and export (:data:`empathy.vocabulary.RANK_CONVENTION`).

    Within each group of ``by`` (none: the whole table), rank 1 is the best ``value`` in the direction of the
    row's metric (``table["metric"]``, :attr:`empathy.metrics.MetricSpec.better`): the smallest for a
    lower-is-better metric (the paper's four, so rank 1 = the least failure), the largest otherwise. Tied values
    share the smallest rank (:data:`empathy.vocabulary.RANK_TIES`, ``"min"``: 1, 1, 3); an undefined value
    (NaN) has no rank (``<NA>``). An unknown metric name raises ``ValueError`` (:func:`empathy.metrics.get_metric`).

    Returns
    -------
    Series
        Nullable integer ranks (``Int64``), aligned with ``table``.
    """
    names = table["metric"]
    lower = {name: m.get_metric(name).lower_is_better for name in pd.unique(names)}
    sign = np.array([1.0 if lower[name] else -1.0 for name in names], dtype=float)
    key = pd.Series(pd.to_numeric(table[value], errors="coerce").to_numpy(dtype=float) * sign, index=table.index)
    if by:
        ranks = key.groupby([table[column] for column in by], sort=False, dropna=False).rank(method=RANK_TIES)
    else:
        ranks = key.rank(method=RANK_TIES)
    return ranks.astype("Int64")


def rankings(table: pd.DataFrame) -> pd.DataFrame:
    """Rank of each model within each (task, scorer, metric) under :func:`rank_by_direction`: 1 = the best value
    in the metric's direction (for all four of the paper's metrics: the least failure); ties share the lower rank.
    Rows without a value are left out."""
    ranked = table.dropna(subset=["value"]).copy()
    ranked["rank"] = rank_by_direction(ranked).astype(int)
    return ranked
