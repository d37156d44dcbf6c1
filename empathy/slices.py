"""The mechanism x disagreement map: where judges and humans (or judges among themselves) disagree, by feature.

Each output (an ``(item_id, model)`` row) gets *features* (:func:`output_features`):

* the distancing densities (counts per sentence, :mod:`empathy.distancing`) of the reference (``_ref``), the
  generation (``_gen``) and their difference (``_diff`` = generation - reference) for nominalization,
  impersonal subjects and agentless constructions;
* the disturbing-content density ``u / sentences`` of each side (Eq. 2's ``a`` and ``b``) and the affect gap
  ``e_ref - e_gen`` (Eq. 1's numerator), from the automatic judges' ratings (the mean over the judges that
  rated the output, since the features describe the text, not one judge's view of it);
* the generation's length in words, and the task.

Each output also gets *events*, the disagreements to explain (one row per unit, 1 = disagreement):

* ``judge_human`` (:func:`judge_human_events`): one unit per (output, judge); the judge's value against the
  mean of the human raters (rater kinds :data:`HUMAN_KINDS`) of that output is a disagreement when they are at
  least ``threshold`` apart (:func:`default_threshold`);
* ``override`` (:func:`override_events`): one unit per judge rating; 1 when the ledger applies a human label
  that differs from it;
* ``judge_judge`` (:func:`judge_judge_events`): one unit per output rated by two or more judges; 1 when the
  judges' values span at least ``threshold``.

:func:`slice_map` slices every feature (quantile bins, or thresholds given per feature; the task by value; an
output without the feature in a ``missing`` slice) and reports per slice the outputs, units, events, rate and
a permutation p-value against the whole, Holm-corrected over every slice of the table.

Choices (also in ``docs/explanation/disagreement.md``):

* **Permutation unit**: outputs, not units. Several judges of one output share its features, so the test
  permutes which outputs are in the slice and keeps each output's events together (permuting units would treat
  them as independent and make p-values too small). The statistic is ``|rate(slice) - rate(whole)|``; the
  whole's rate does not change under permutation, so this is the two-sided test of the slice against the rest.
* **Exact or Monte Carlo**: when the number of ways to choose the slice's outputs, ``C(n, k)``, is at most
  ``n_permutations``, every arrangement is enumerated and the p-value is exact (the share of arrangements at
  least as extreme); otherwise ``n_permutations`` random permutations from ``np.random.default_rng(seed)``
  give ``(1 + b) / (1 + B)`` (Phipson & Smyth 2010: never 0). Cost: outputs x permutations per feature.
* **Exact where computable** (``exact=True``; the command line and the app turn it on): when every output
  carries the same number ``u`` of units (every output rated by the same judges) the slice's rate depends on
  its event total only, whose null distribution is computed exactly: hypergeometric for ``u = 1`` (Fisher's
  exact conditional test, any size), a sequence of hypergeometric splits over the outputs grouped by their
  event count for ``u >= 2`` (:func:`exact_sum_distribution`, while it stays small). Otherwise the enumeration
  above or Monte Carlo, whose standard error ``sqrt(p (1 - p) / B)`` is the table's ``p_se`` (NaN when exact).
* **Intervals** (``rate_low``, ``rate_high``): cluster-aware, the *item* (conversation) being the unit, since
  several judges of one output, and the outputs of several models for one item, are not independent. A
  Wilson interval at the effective size ``n_eff = r (1 - r) / v``, with ``v`` the cluster-robust
  (linearisation) variance of the ratio ``r = events / units`` over the slice's items (Korn & Graubard 1998's
  effective sample size, design effect at least 1, with their degrees-of-freedom factor ``(z / t_{K-1})^2``);
  when the rate is 0 or 1 (``v = 0``) the effective size is the number of items. They replace
  :func:`wilson_interval`, which takes units as independent.
* **Holm** (1979) over all slices of one table: a researcher who scans the map for the strongest slice has run
  every test in it.
* **Ranking** (:func:`ranked_slices`): the slices whose rate departs most from the whole, by the Holm p-value,
  then the raw p-value (Holm caps many at 1), then the size of the departure, then the slice's size; slices
  with fewer than ``min_units`` units are left out of the ranking (their rate is noise), though they stay in
  the table.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from numpy.typing import NDArray

from empathy.codes import unique_keys
from empathy.distancing.result import LABELS
from empathy.metrics import BINARY_DIMENSIONS
from empathy.slice_tests import DEFAULT_PERMUTATIONS, cluster_rate_interval, holm, monte_carlo_se, permutation_p_values

#: Rater kinds whose ratings are the human side of judge-human disagreement (what judges are checked against).
HUMAN_KINDS: tuple[str, ...] = ("expert", "human", "author")
#: Rater kinds that are automatic judges (as :data:`empathy.labels.rules.JUDGE_KINDS`).
JUDGE_KINDS: tuple[str, ...] = ("llm", "lexicon")
OUTCOMES: tuple[str, ...] = ("judge_human", "override", "judge_judge")
#: Every feature :func:`output_features` computes, in the map's order.
FEATURES: tuple[str, ...] = (
    *(f"{label}_{side}" for label in LABELS for side in ("ref", "gen", "diff")),
    "disturbing_ref", "disturbing_gen", "affect_gap", "length_gen", "task",
)
CATEGORICAL_FEATURES: frozenset[str] = frozenset({"task"})
DEFAULT_BINS = 3
#: The type a frame gives a numpy array of strings (pandas' default string type, or object without one).
_STRING_TYPE = pd.DataFrame({"a": np.array(["a"], dtype=object)})["a"].dtype
DEFAULT_MIN_UNITS = 5
MISSING_SLICE = "missing"
ALL_JUDGES = "(all judges)"
#: Values closer than this to a threshold count as reaching it (float noise in means of ratings).
_EPS = 1e-9
_KEYS = ["item_id", "model"]
#: Rows looked up at once by :func:`_codes_in` (a few MiB of positions at a time).
_CODE_BLOCK = 1 << 18


# ------------------------------------------------------------------------------------------ features

def output_features(outputs: pd.DataFrame, ratings: pd.DataFrame, sentences_ref: Sequence[float],
                    sentences_gen: Sequence[float], densities_ref: NDArray[np.float64],
                    densities_gen: NDArray[np.float64], *, judge_kinds: Sequence[str] = JUDGE_KINDS
                    ) -> pd.DataFrame:
    """One row per output with every feature of :data:`FEATURES` (NaN where undefined).

    ``sentences_*`` and ``densities_*`` are row-aligned with ``outputs`` (as
    :class:`empathy.evaluate.TextFeatures` holds them; densities in :data:`empathy.distancing.LABELS` order).
    The disturbing densities and the affect gap use the mean over the raters of ``judge_kinds`` that rated the
    output; an output no judge rated on a dimension has NaN there (a ``missing`` slice), never 0.
    """
    for column in ("item_id", "model", "generation"):
        if column not in outputs.columns:
            raise ValueError(f"output_features: outputs lack the column {column!r}")
    n = len(outputs)
    d_ref = np.asarray(densities_ref, dtype=float).reshape(n, len(LABELS))
    d_gen = np.asarray(densities_gen, dtype=float).reshape(n, len(LABELS))
    s_ref = np.asarray(sentences_ref, dtype=float)
    s_gen = np.asarray(sentences_gen, dtype=float)
    if s_ref.shape != (n,) or s_gen.shape != (n,):
        raise ValueError(f"output_features: sentence counts must have one value per output ({n})")
    # the names as string arrays (Arrow's, as loaded): a numpy array of them made a Python string per output, and
    # the freed strings left their memory to the interpreter's small-object arenas (~100 MiB at 200,000 outputs)
    frame = pd.DataFrame({"item_id": _strings(outputs["item_id"]), "model": _strings(outputs["model"])})
    for k, label in enumerate(LABELS):
        frame[f"{label}_ref"] = d_ref[:, k]
        frame[f"{label}_gen"] = d_gen[:, k]
        frame[f"{label}_diff"] = d_gen[:, k] - d_ref[:, k]
    merged = _judge_means(frame, ratings, judge_kinds, ("u_ref", "u_gen", "e_ref", "e_gen"))
    with np.errstate(invalid="ignore", divide="ignore"):
        frame["disturbing_ref"] = np.where(s_ref > 0, merged["u_ref"] / np.where(s_ref > 0, s_ref, 1),
                                           np.nan)
        frame["disturbing_gen"] = np.where(s_gen > 0, merged["u_gen"] / np.where(s_gen > 0, s_gen, 1),
                                           np.nan)
    frame["affect_gap"] = merged["e_ref"] - merged["e_gen"]
    frame["length_gen"] = _word_counts(outputs["generation"])
    frame["task"] = _strings(outputs["task"].fillna("")) if "task" in outputs.columns else ""
    return frame


def _strings(column: pd.Series) -> pd.api.extensions.ExtensionArray:
    """``column.astype(str)``'s values without an index: the column that a numpy array of its strings would give
    a frame (pandas' string type), without making a Python string per row."""
    return pd.array(column.astype(str).array, dtype=_STRING_TYPE)


def _word_counts(texts: pd.Series) -> NDArray[np.float64]:
    """Whitespace-separated words of each text (``len(text.split())``; a missing text has 0), counted once per
    distinct text: ``Series.str.split()`` held a list of every word of every text at once (1 GB at 200,000
    outputs)."""
    values = texts.fillna("").astype(str)
    codes, distinct = pd.factorize(values)
    counts = np.fromiter((len(text.split()) for text in distinct.tolist()), dtype=float, count=len(distinct))
    return counts[codes] if len(codes) else np.zeros(0)


def _codes_in(index: pd.Index, column: pd.Series, rows: NDArray[np.bool_]) -> NDArray[np.signedinteger]:
    """Position in ``index`` (strings) of the value of ``column`` at each of the ``rows`` marked (in row order), as
    a string (-1 if absent or missing).

    A pyarrow-backed string column is looked up by ``pyarrow.compute.index_in`` without making a Python string
    per row, its positions kept in Arrow's 32 bits (the int64 copies of three columns' positions over 3 million
    rows were most of the Disagreement page's features' transient); any other column is factorized first and each
    distinct value looked up once.
    """
    if isinstance(column.dtype, pd.StringDtype) and column.dtype.storage == "pyarrow":
        values = pa.array(column.array)
        lookup = pc.SetLookupOptions(pa.array(index.to_numpy(dtype=object), type=values.type))
        out = np.empty(int(np.count_nonzero(rows)), dtype=np.int32)
        done = 0
        # a block of rows at a time (zero-copy slices): the positions of every row at once were three int32 copies
        # of the whole column (index_in, fill_null, to_numpy: 36 MiB for a moment over 3 million ratings)
        for start in range(0, len(values), _CODE_BLOCK):
            block = values.slice(start, _CODE_BLOCK)
            found = pc.index_in(block, options=lookup).fill_null(-1).to_numpy(zero_copy_only=False)
            chosen = found[rows[start:start + _CODE_BLOCK]]
            out[done:done + len(chosen)] = chosen
            done += len(chosen)
        return out
    codes, distinct = pd.factorize(column.take(np.flatnonzero(rows)))
    found_codes = np.asarray(index.get_indexer(pd.Index(distinct).astype(str)), dtype=np.int64)
    return np.where(codes >= 0, found_codes[np.maximum(codes, 0)], -1) if len(found_codes) else np.full(len(codes), -1)


def _judge_means(keys: pd.DataFrame, ratings: pd.DataFrame, kinds: Sequence[str], dimensions: Sequence[str]
                 ) -> dict[str, NDArray[np.float64]]:
    """Per row of ``keys`` (item_id, model as strings), the mean over the judges' values of each dimension (NaN
    where none rated).

    Sums and counts by integer output code (``np.bincount``) over the rows that qualify, instead of a groupby
    over (item_id, model, dimension) strings and a merge: at 200,000 outputs that groupby held 280 MiB more
    than this for a moment (3 million rating rows). The item and model codes are found once for the rows of every
    dimension (32 bits each), the cells summed one dimension at a time: the int64 cell keys of all four
    dimensions at once were most of the Disagreement page's transient.
    """
    qualifies = ratings["dimension"].isin(dimensions).to_numpy() & ratings["value"].notna().to_numpy()
    if "rater_kind" in ratings.columns:
        qualifies &= ratings["rater_kind"].fillna("").astype(str).isin(kinds).to_numpy()
    rows = qualifies  # marked, not listed: the same rows in order without 8 bytes each
    items = pd.Index(pd.unique(keys["item_id"]))
    models = pd.Index(pd.unique(keys["model"]))
    n_cells = len(items) * len(models)
    output_code = items.get_indexer(keys["item_id"]) * len(models) + models.get_indexer(keys["model"])
    item_code = _codes_in(items, ratings["item_id"], rows)
    model_code = _codes_in(models, ratings["model"], rows)
    known = (item_code >= 0) & (model_code >= 0)  # ratings of outputs absent from ``keys`` are left out
    dimension_column = ratings["dimension"]
    values = ratings["value"].to_numpy(dtype=float)
    out: dict[str, NDArray[np.float64]] = {}
    for dimension in dimensions:
        # this dimension's qualifying rows (marked over every rating, and among the qualifying ones), in row order:
        # the sums add in that order, as when every dimension was summed at once
        every = (dimension_column == dimension).to_numpy(dtype=bool, na_value=False) & rows
        among = every[rows]
        usable = known[among]
        cell = item_code[among][usable].astype(np.int64) * len(models) + model_code[among][usable]
        # the outputs rated, numbered densely
        cells, cell_rank = unique_keys(cell, n_cells)
        del cell
        sums = np.bincount(cell_rank, weights=values[every][usable], minlength=len(cells))
        counts = np.bincount(cell_rank, minlength=len(cells))
        del cell_rank, every, among, usable
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
        found = np.full(len(output_code), np.nan)
        if len(cells):
            wanted = output_code.astype(np.int64)
            at = np.minimum(np.searchsorted(cells, wanted), len(cells) - 1)
            hit = cells[at] == wanted
            found[hit] = means[at[hit]]
        out[dimension] = found
    return out


# ------------------------------------------------------------------------------------------ events

def default_threshold(dimension: str, values: NDArray[np.float64]) -> float:
    """How far apart two values must be to count as a disagreement, when the caller gives no threshold.

    Binary labels (``ca``): 0.5, so different labels disagree (and a judge against a tied human pair, mean 0.5,
    disagrees whichever label it gave). Whole-number scales (counts, 0-2, 1-5): 1, one scale point. Continuous
    scores (affect intensity): a fifth of the observed range (0.2 on a 0-1 scale with both ends used); 1 when
    the values are all equal.
    """
    present = np.asarray(values, dtype=float)
    present = present[~np.isnan(present)]
    if dimension in BINARY_DIMENSIONS or (len(present) and set(np.unique(present)) <= {0.0, 1.0}):
        return 0.5
    if len(present) == 0 or np.allclose(present, np.round(present)):
        return 1.0
    spread = float(present.max() - present.min())
    return spread / 5.0 if spread > 0 else 1.0


def _kind_of(ratings: pd.DataFrame) -> pd.Series:
    if "rater_kind" in ratings.columns:
        return ratings["rater_kind"].fillna("").astype(str)
    return pd.Series("", index=ratings.index)


def _check_ratings(ratings: pd.DataFrame, dimension: str) -> pd.DataFrame:
    for column in ("item_id", "model", "rater", "dimension", "value"):
        if column not in ratings.columns:
            raise ValueError(f"ratings lack the column {column!r}")
    if not isinstance(dimension, str) or not dimension:
        raise ValueError("choose a dimension")
    part = ratings[(ratings["dimension"] == dimension) & ratings["value"].notna()]
    return part.astype({"item_id": str, "model": str, "rater": str})


def judge_human_events(ratings: pd.DataFrame, dimension: str, *, threshold: float | None = None,
                       human_kinds: Sequence[str] = HUMAN_KINDS, judge_kinds: Sequence[str] = JUDGE_KINDS,
                       judges: Sequence[str] | None = None) -> tuple[pd.DataFrame, float]:
    """One row per (output, judge) that a judge and at least one human rated on ``dimension``.

    Columns: item_id, model, judge, judge_value, human_value (the mean of the human raters), n_humans, event
    (1 when ``|judge_value - human_value| >= threshold``). Returns the table and the threshold used.
    """
    part = _check_ratings(ratings, dimension)
    kinds = _kind_of(part)
    humans = part[kinds.isin(human_kinds)]
    chosen = part[kinds.isin(judge_kinds)]
    if judges is not None:
        chosen = part[part["rater"].isin(judges)]
    human = humans.groupby(_KEYS)["value"].agg(["mean", "count"]).rename(
        columns={"mean": "human_value", "count": "n_humans"}).reset_index()
    table = chosen[[*_KEYS, "rater", "value"]].rename(columns={"rater": "judge", "value": "judge_value"}).merge(
        human, on=_KEYS, how="inner")
    if threshold is None:
        # the scale of the raters compared, not of others (a crowd's fractional means would make a 1-5 scale
        # look continuous)
        compared = np.concatenate([humans["value"].to_numpy(float), chosen["value"].to_numpy(float)])
        threshold = default_threshold(dimension, compared)
    _check_threshold(threshold)
    table["event"] = (np.abs(table["judge_value"] - table["human_value"]) >= threshold - _EPS).astype(int)
    columns = [*_KEYS, "judge", "judge_value", "human_value", "n_humans", "event"]
    return table[columns].sort_values([*_KEYS, "judge"]).reset_index(drop=True), float(threshold)


def judge_judge_events(ratings: pd.DataFrame, dimension: str, *, threshold: float | None = None,
                       judge_kinds: Sequence[str] = JUDGE_KINDS, judges: Sequence[str] | None = None
                       ) -> tuple[pd.DataFrame, float]:
    """One row per output that two or more judges rated on ``dimension``.

    Columns: item_id, model, judge (:data:`ALL_JUDGES`), n_judges, spread (max - min), event (1 when the
    spread is at least ``threshold``). Returns the table and the threshold used.
    """
    part = _check_ratings(ratings, dimension)
    chosen = part[part["rater"].isin(judges)] if judges is not None else part[_kind_of(part).isin(judge_kinds)]
    stats = chosen.groupby(_KEYS)["value"].agg(["count", "min", "max"]).reset_index()
    stats = stats[stats["count"] >= 2]
    if threshold is None:
        threshold = default_threshold(dimension, chosen["value"].to_numpy(float))
    _check_threshold(threshold)
    spread = (stats["max"] - stats["min"]).to_numpy(float)
    table = pd.DataFrame({"item_id": stats["item_id"].to_numpy(), "model": stats["model"].to_numpy(),
                          "judge": ALL_JUDGES, "n_judges": stats["count"].to_numpy(int), "spread": spread,
                          "event": (spread >= threshold - _EPS).astype(int)})
    return table.sort_values(_KEYS).reset_index(drop=True), float(threshold)


def override_events(ratings: pd.DataFrame, applied: pd.DataFrame, dimension: str, *,
                    judge_kinds: Sequence[str] = JUDGE_KINDS, judges: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per judge rating of ``dimension``; event 1 when the ledger applies a different human label to it.

    ``applied`` is :attr:`empathy.labels.ledger.Ledger.applied` (one effective override per rating key); a human
    label equal to the judge's is a confirmation, not an override, and counts 0. Columns: item_id, model, judge,
    judge_value, human_value (NaN when not overridden), event.
    """
    part = _check_ratings(ratings, dimension)
    chosen = part[part["rater"].isin(judges)] if judges is not None else part[_kind_of(part).isin(judge_kinds)]
    table = chosen[[*_KEYS, "rater", "value"]].rename(columns={"rater": "judge", "value": "judge_value"})
    if applied is not None and len(applied):
        labels = applied[applied["dimension"] == dimension].astype({"item_id": str, "model": str, "rater": str})
        labels = labels[[*_KEYS, "rater", "value"]].rename(columns={"rater": "judge", "value": "human_value"})
        table = table.merge(labels, on=[*_KEYS, "judge"], how="left")
    else:
        table = table.assign(human_value=np.nan)
    differs = table["human_value"].notna() & (np.abs(table["human_value"] - table["judge_value"]) > _EPS)
    table["event"] = differs.astype(int)
    return table.sort_values([*_KEYS, "judge"]).reset_index(drop=True)


def _check_threshold(threshold: float) -> None:
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not math.isfinite(threshold) \
            or threshold <= 0:
        raise ValueError(f"threshold must be a positive number, got {threshold!r}")


# ------------------------------------------------------------------------------------------ slicing

@dataclass(frozen=True)
class Slicing:
    """How one feature was cut: a code per output, the label and bounds of each code.

    ``low`` and ``high`` are the cut points around a numeric slice (the slice is ``(low, high]`` for quantile
    bins, ``[low, high)`` for thresholds); NaN for an open end, a category or the ``missing`` slice.
    """

    feature: str
    codes: NDArray[np.int64]
    labels: list[str]
    low: list[float]
    high: list[float]


def _fmt(value: float) -> str:
    return f"{value:.3g}"


def slice_feature(name: str, values: pd.Series, *, bins: int = DEFAULT_BINS,
                  thresholds: Sequence[float] | None = None) -> Slicing:
    """Cut one feature's values into slices.

    A categorical feature (:data:`CATEGORICAL_FEATURES`, or any non-numeric column) has one slice per value.
    A numeric one is cut at ``thresholds`` when given (slices ``< t1``, ``[t1, t2)``, ..., ``>= tk``), else at
    its quantiles ``1/bins, ..., (bins-1)/bins`` (slices ``<= q1``, ``(q1, q2]``, ..., ``> qk``). The quantiles
    are observed values (``method="inverted_cdf"``), so a cut reads as a count or density that occurs; equal
    quantiles merge, so a feature that is mostly 0 gives ``<= 0`` and ``> 0``. NaN values form the ``missing`` slice.
    Empty slices are dropped.
    """
    if name in CATEGORICAL_FEATURES or not pd.api.types.is_numeric_dtype(values):
        text = values.fillna("").astype(str)
        names = sorted(set(text))
        index = {v: k for k, v in enumerate(names)}
        codes = text.map(index).to_numpy(np.int64)
        return Slicing(name, codes, [v if v else "(none)" for v in names], [math.nan] * len(names),
                       [math.nan] * len(names))
    array = values.to_numpy(dtype=float)
    defined = ~np.isnan(array)
    if thresholds is not None:
        cuts = np.array(sorted({float(t) for t in thresholds}), dtype=float)
        if len(cuts) == 0 or not np.isfinite(cuts).all():
            raise ValueError(f"thresholds of {name!r} must be finite numbers, got {list(thresholds)!r}")
        codes = np.searchsorted(cuts, array, side="right")
        labels = ([f"< {_fmt(cuts[0])}"] + [f"[{_fmt(a)}, {_fmt(b)})" for a, b in itertools.pairwise(cuts)]
                  + [f">= {_fmt(cuts[-1])}"])
    else:
        if not isinstance(bins, int) or bins < 2:
            raise ValueError(f"bins must be a whole number of at least 2, got {bins!r}")
        present = array[defined]
        cuts = (np.unique(np.quantile(present, np.arange(1, bins) / bins, method="inverted_cdf")) if len(present)
                else np.array([], dtype=float))
        codes = np.searchsorted(cuts, array, side="left")
        if len(cuts):
            labels = ([f"<= {_fmt(cuts[0])}"] + [f"({_fmt(a)}, {_fmt(b)}]" for a, b in itertools.pairwise(cuts)]
                      + [f"> {_fmt(cuts[-1])}"])
        else:
            labels = ["all"]
    # An open end is NaN, not infinity: the bounds go into JSON, which has no infinity.
    bounds = np.concatenate([[np.nan], cuts, [np.nan]])
    low, high = list(bounds[:-1].astype(float)), list(bounds[1:].astype(float))
    codes = np.where(defined, codes, len(labels)).astype(np.int64)
    labels, low, high = labels + [MISSING_SLICE], low + [math.nan], high + [math.nan]
    return _drop_empty(Slicing(name, codes, labels, low, high))


def _drop_empty(slicing: Slicing) -> Slicing:
    used = np.unique(slicing.codes)
    remap = np.full(len(slicing.labels), -1, dtype=np.int64)
    remap[used] = np.arange(len(used))
    return Slicing(slicing.feature, remap[slicing.codes], [slicing.labels[i] for i in used],
                   [slicing.low[i] for i in used], [slicing.high[i] for i in used])


# ------------------------------------------------------------------------------------------ the map

SLICE_COLUMNS: tuple[str, ...] = (
    "outcome", "dimension", "judge", "feature", "slice", "low", "high", "n_outputs", "n_units", "events", "rate",
    "whole_rate", "rate_ratio", "difference", "p_value", "p_holm", "p_method", "outputs", "rate_low", "rate_high",
    "p_se")


@dataclass(frozen=True)
class SliceMap:
    """The slices of every feature with their rates and tests; ``table`` has :data:`SLICE_COLUMNS`.

    ``outputs`` (a list of ``(item_id, model)`` per slice) is how the app and the CLI reach a slice's items.
    """

    table: pd.DataFrame
    n_permutations: int
    seed: int
    threshold: float | None
    fields: Mapping[str, str] = field(default_factory=dict)
    exact: bool = False

    @property
    def holm_floor(self) -> float:
        """The smallest Holm-adjusted p-value a Monte Carlo slice can reach: ``m / (B + 1)`` for ``m`` slices.

        A Monte Carlo p-value is at least ``1 / (B + 1)`` and Holm multiplies the smallest by ``m``; when this
        floor is above the level a reader uses, no slice can be significant whatever the data, and ``B`` must
        grow (about ``m / alpha``). 0 for an empty map, and for a map whose p-values are all exact.
        """
        if not len(self.table) or not (self.table["p_method"] == "monte-carlo").any():
            return 0.0
        return len(self.table) / (self.n_permutations + 1)

    def signature_fields(self) -> dict[str, str]:
        """What the p-values depend on, for the signature's ``extra``: permutations, threshold, test."""
        fields = {"permutations": str(self.n_permutations), "slices": "holm"}
        if self.exact:
            fields["p"] = "exact-where-computable"
        if self.threshold is not None:
            fields["disagree-at"] = f"{self.threshold:g}"
        return {**fields, **self.fields}


def slice_map(features: pd.DataFrame, events: pd.DataFrame, *, outcome: str, dimension: str,
              feature_names: Sequence[str] | None = None, bins: int = DEFAULT_BINS,
              thresholds: Mapping[str, Sequence[float]] | None = None, n_permutations: int = DEFAULT_PERMUTATIONS,
              seed: int = 0, per_judge: bool = False, threshold: float | None = None, exact: bool = False,
              confidence: float = 0.95) -> SliceMap:
    """Slice the disagreement ``events`` by every feature of ``features``.

    ``features`` is :func:`output_features` (one row per output); ``events`` one of the event tables (columns
    item_id, model, judge, event). Outputs without an event row are not part of the map. With ``per_judge``
    each judge is mapped on its own as well as all judges pooled. Slices are cut on the features of the outputs
    that have events. Holm's correction runs over every row of the returned table. ``exact`` computes p-values
    exactly wherever the slice's null distribution can be (:func:`exact_slice_p`); ``p_se`` is the Monte Carlo
    standard error of the others. ``rate_low``/``rate_high``: :func:`cluster_rate_interval` at ``confidence``,
    the item being the unit.
    """
    if not isinstance(exact, bool):
        raise TypeError(f"exact must be True or False, got {exact!r}")
    if outcome not in OUTCOMES:
        raise ValueError(f"outcome must be one of {', '.join(OUTCOMES)}, got {outcome!r}")
    for column in (*_KEYS, "judge", "event"):
        if column not in events.columns:
            raise ValueError(f"events lack the column {column!r}")
    chosen = list(feature_names) if feature_names is not None else [f for f in FEATURES if f in features.columns]
    unknown = [f for f in chosen if f not in features.columns]
    if unknown:
        raise ValueError(f"unknown feature(s) {', '.join(map(repr, unknown))}; features are "
                         f"{', '.join(c for c in features.columns if c not in _KEYS)}")
    for name in thresholds or {}:
        if name not in chosen:
            raise ValueError(f"thresholds given for {name!r}, which is not a mapped feature")
    groups = [(ALL_JUDGES, events)]
    if per_judge:
        groups += [(str(j), part) for j, part in events.groupby("judge", sort=True) if j != ALL_JUDGES]
    rows: list[dict[str, object]] = []
    tests = _Tests(n_permutations, seed, exact, confidence)
    for judge, part in groups:
        rows += _map_rows(features, part, outcome, dimension, judge, chosen, bins, thresholds or {}, tests)
    table = pd.DataFrame(rows, columns=list(SLICE_COLUMNS))
    table["p_holm"] = holm(table["p_value"].to_numpy(float)) if len(table) else []
    return SliceMap(table, n_permutations, seed, threshold, exact=exact)


@dataclass(frozen=True)
class _Tests:
    """How a map's slices are tested and bounded: permutations, seed, exactness, interval confidence."""

    n_permutations: int
    seed: int
    exact: bool
    confidence: float


def _map_rows(features: pd.DataFrame, events: pd.DataFrame, outcome: str, dimension: str, judge: str,
              chosen: Sequence[str], bins: int, thresholds: Mapping[str, Sequence[float]], tests: _Tests
              ) -> list[dict[str, object]]:
    per_output = events.astype({"item_id": str, "model": str}).groupby(_KEYS)["event"].agg(["sum", "count"])
    frame = features.astype({"item_id": str, "model": str}).merge(per_output.reset_index(), on=_KEYS, how="inner")
    if frame.empty:
        return []
    hits = frame["sum"].to_numpy(float)
    size = frame["count"].to_numpy(float)
    whole = hits.sum() / size.sum()
    keys = list(zip(frame["item_id"], frame["model"], strict=True))
    rows = []
    for name in chosen:
        slicing = slice_feature(name, frame[name], bins=bins, thresholds=thresholds.get(name))
        if len(slicing.labels) < 2:
            continue  # one slice is the whole: nothing to compare
        p, methods = permutation_p_values(slicing.codes, hits, size, n_permutations=tests.n_permutations,
                                          seed=tests.seed, exact=tests.exact)
        p_se = monte_carlo_se(p, methods, tests.n_permutations)
        low, high = cluster_rate_interval(slicing.codes, hits, size, frame["item_id"].to_numpy(object),
                                          confidence=tests.confidence)
        k = len(slicing.labels)
        n_outputs = np.bincount(slicing.codes, minlength=k)
        events_by = np.bincount(slicing.codes, weights=hits, minlength=k)
        units_by = np.bincount(slicing.codes, weights=size, minlength=k)
        members: list[list[tuple[str, str]]] = [[] for _ in range(k)]
        for code, key in zip(slicing.codes, keys, strict=True):
            members[code].append(key)
        for s in range(k):
            rate = events_by[s] / units_by[s]
            rows.append({
                "outcome": outcome, "dimension": dimension, "judge": judge, "feature": name,
                "slice": slicing.labels[s], "low": slicing.low[s], "high": slicing.high[s],
                "n_outputs": int(n_outputs[s]), "n_units": int(units_by[s]), "events": int(events_by[s]),
                "rate": float(rate), "whole_rate": float(whole),
                "rate_ratio": float(rate / whole) if whole > 0 else math.nan,
                "difference": float(rate - whole), "p_value": float(p[s]), "p_holm": math.nan,
                "p_method": methods[s], "outputs": members[s], "rate_low": float(low[s]),
                "rate_high": float(high[s]), "p_se": float(p_se[s])})
    return rows


def ranked_slices(table: pd.DataFrame, *, top: int | None = 10, min_units: int = DEFAULT_MIN_UNITS
                  ) -> pd.DataFrame:
    """The slices whose rate departs most from the whole: by Holm p-value, raw p-value, ``|difference|``, size.

    Slices with fewer than ``min_units`` units, and ``missing`` slices, are left out. ``top=None`` keeps all.
    """
    if not isinstance(min_units, int) or min_units < 1:
        raise ValueError(f"min_units must be a positive whole number, got {min_units!r}")
    kept = table[(table["n_units"] >= min_units) & (table["slice"] != MISSING_SLICE)].copy()
    kept["_departure"] = -kept["difference"].abs()
    kept["_size"] = -kept["n_units"]
    kept = kept.sort_values(["p_holm", "p_value", "_departure", "_size", "feature", "slice"], kind="stable")
    kept = kept.drop(columns=["_departure", "_size"]).reset_index(drop=True)
    return kept if top is None else kept.head(top)


def describe(row: Mapping[str, object]) -> str:
    """One sentence for a ranked slice, e.g. ``judge-human disagreement on ca is 3.0x the whole's ...``."""
    outcome = {"judge_human": "judge-human disagreement", "override": "the override rate",
               "judge_judge": "judge-judge disagreement"}[str(row["outcome"])]
    ratio = row["rate_ratio"]
    times = f"{float(ratio):.2g}x the whole's" if isinstance(ratio, float) and math.isfinite(ratio) else "vs"
    judge = "all judges" if row["judge"] == ALL_JUDGES else f"judge {row['judge']}"
    return (f"{outcome} on {row['dimension']} ({judge}) is {float(row['rate']):.0%} "
            f"({row['events']}/{row['n_units']}) where {row['feature']} is {row['slice']}: {times} "
            f"{float(row['whole_rate']):.0%} (p = {float(row['p_value']):.3g}, Holm {float(row['p_holm']):.3g})")
