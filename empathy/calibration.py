"""Judge-vs-human calibration per model, and per-item agreement across every rater.

* :func:`confusion_cells` — for a label dimension (CA's 0/1, or a whole-number scale), one row per (model,
  judge, human label, judge label) with its count and its outputs, so every cell of the confusion matrix is
  one step from its items.
* :func:`calibration_bins` and :func:`calibration_bias` — for a score (affect intensity ``e_ref``/``e_gen``,
  disturbing counts ``u_ref``/``u_gen``): the mean judge score per bin of the human score, per model and
  judge, and the bias ``mean(judge - human)`` and slope of judge on human with cluster-bootstrap intervals
  that resample items (:func:`empathy.agreement.bootstrap_ci`), each row with a warning when an interval has
  zero width or rests on fewer than 10 items.
* :func:`dilution_benchmark` — the slope one human gets on the mean of the other humans. A slope below 1 does
  not by itself mean that a judge compresses the humans' differences: the humans' mean is measured with
  noise, which pulls any slope on it towards 0 (regression dilution). One human on the others' mean shows how
  far, with no compression at all (on the Kumar et al. data: ``docs/kumar2025.md``). A judge compresses only
  where its slope falls clearly below that benchmark and its ratings spread less than the humans' mean.
* :func:`item_splits` — per unit (output, or item for a dimension judged once per reference), every rater's
  value and how far they are apart: which items all the raters split on.

The human side is the mean of the raters of kind :data:`empathy.slices.HUMAN_KINDS` (expert, human, author)
on a unit; the ledger's decisions join as raters of kind ``human`` through
:func:`empathy.labels.ledger.annotator_ratings`. Choices:

* **Human label of a label dimension**: the humans' mean rounded half up (as the panels' rounded kappa); on a
  binary dimension a tie (mean 0.5: the humans split) has no label, and its units are left out of the matrix
  and counted (``n_tied``).
* **Units of a reference dimension** (``e_ref``, ``u_ref``): one per item (the per-model copies of a judgement
  of the reference are one judgement, as in :mod:`empathy.agreement`); their model is :data:`ALL_MODELS`.
* **Bins** of the human score: equal-width over the dimension's observed range (a calibration plot reads
  judge against human on a common axis); empty bins are dropped.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from empathy.agreement import (
    DEFAULT_BOOTSTRAP,
    DEFAULT_CONFIDENCE,
    DEFAULT_SEED,
    MIN_PAIRS,
    _rater_matrix,
    bootstrap_ci,
    interval_warning,
)
from empathy.metrics import BINARY_DIMENSIONS
from empathy.slices import HUMAN_KINDS, JUDGE_KINDS, default_threshold

ALL_MODELS = "(all models)"
#: What ``astype(str)`` makes of a column of strings (pandas' default string type): a column of it is kept as is.
_STRINGS = pd.Series(["a"]).astype(str).dtype
DEFAULT_CALIBRATION_BINS = 5


def _kinds(ratings: pd.DataFrame) -> dict[str, str]:
    if "rater_kind" not in ratings.columns:
        return {str(r): "" for r in ratings["rater"].unique()}
    pairs = ratings[["rater", "rater_kind"]].fillna("").astype(str).drop_duplicates("rater", keep="last")
    return dict(zip(pairs["rater"], pairs["rater_kind"], strict=True))


def paired(ratings: pd.DataFrame, dimension: str, *, human_kinds: Sequence[str] = HUMAN_KINDS,
           judge_kinds: Sequence[str] = JUDGE_KINDS, judges: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per (unit, judge) with the judge's value and the humans' mean: the input of every table here.

    Columns: item_id, model (:data:`ALL_MODELS` for a reference dimension), judge, judge_value, human_value,
    n_humans. Units no human rated, or the judge did not rate, are left out.
    """
    for column in ("item_id", "model", "rater", "dimension", "value"):
        if column not in ratings.columns:
            raise ValueError(f"ratings lack the column {column!r}")
    part = ratings[ratings["dimension"] == dimension].astype({"item_id": str, "model": str, "rater": str})
    columns = ["item_id", "model", "judge", "judge_value", "human_value", "n_humans"]
    if part.empty:
        return pd.DataFrame(columns=columns)
    kinds = _kinds(part)
    humans = [r for r, k in kinds.items() if k in human_kinds]
    chosen = [r for r in (judges if judges is not None else [r for r, k in kinds.items() if k in judge_kinds])
              if r in kinds and r not in humans]
    matrix = _rater_matrix(part, dimension)
    if not humans or not chosen:
        return pd.DataFrame(columns=columns)
    human = matrix[[h for h in humans if h in matrix.columns]]
    human_value = human.mean(axis=1, skipna=True)
    n_humans = human.notna().sum(axis=1)
    frames = []
    for judge in sorted(chosen):
        if judge not in matrix.columns:
            continue
        frame = pd.DataFrame({"judge": judge, "judge_value": matrix[judge], "human_value": human_value,
                              "n_humans": n_humans}).dropna(subset=["judge_value", "human_value"])
        frames.append(frame)
    if not frames:
        return pd.DataFrame(columns=columns)
    table = pd.concat(frames).reset_index()
    if "model" not in table.columns:
        table["model"] = ALL_MODELS
    table["n_humans"] = table["n_humans"].astype(int)
    return table[columns].sort_values(["model", "judge", "item_id"]).reset_index(drop=True)


def _round_half_up(values: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.floor(values + 0.5)


def confusion_cells(ratings: pd.DataFrame, dimension: str = "ca", *, human_kinds: Sequence[str] = HUMAN_KINDS,
                    judge_kinds: Sequence[str] = JUDGE_KINDS, judges: Sequence[str] | None = None) -> pd.DataFrame:
    """The confusion matrix of each (model, judge) against the humans, one row per non-empty cell.

    Columns: model, judge, human_label, judge_label, count, share (of the model-judge pair's labelled units),
    outputs (the ``(item_id, model)`` of the cell, sorted), n_tied (the pair's units whose humans tied, left
    out). Raises ValueError when the dimension's values are not whole numbers (use :func:`calibration_bins`).
    """
    table = paired(ratings, dimension, human_kinds=human_kinds, judge_kinds=judge_kinds, judges=judges)
    columns = ["model", "judge", "human_label", "judge_label", "count", "share", "outputs", "n_tied"]
    if table.empty:
        return pd.DataFrame(columns=columns)
    judge_values = table["judge_value"].to_numpy(float)
    if not np.allclose(judge_values, np.round(judge_values)):
        raise ValueError(f"{dimension}: the judges' values are not whole numbers, so there is no confusion "
                         "matrix; use the calibration bins")
    human = table["human_value"].to_numpy(float)
    # Binary by the dimension, or when every individual rating is 0 or 1: the humans' 0.5 is then a split
    # vote and is left out. On a wider scale a mean between two points is rounded half up, as the panels do.
    values = ratings.loc[ratings["dimension"] == dimension, "value"].dropna().to_numpy(float)
    binary = dimension in BINARY_DIMENSIONS or set(np.unique(values)) <= {0.0, 1.0}
    tied = np.isclose(human, 0.5) if binary else np.zeros(len(human), dtype=bool)
    table = table.assign(human_label=_round_half_up(human), judge_label=np.round(judge_values), tied=tied)
    rows = []
    for (model, judge), part in table.groupby(["model", "judge"], sort=True):
        n_tied = int(part["tied"].sum())
        labelled = part[~part["tied"]]
        for (h, j), cell in labelled.groupby(["human_label", "judge_label"], sort=True):
            keys = sorted(zip(cell["item_id"], cell["model"], strict=True))
            rows.append({"model": model, "judge": judge, "human_label": float(h), "judge_label": float(j),
                         "count": len(cell), "share": len(cell) / len(labelled), "outputs": keys,
                         "n_tied": n_tied})
    return pd.DataFrame(rows, columns=columns)


def confusion_matrix(cells: pd.DataFrame, model: str, judge: str) -> pd.DataFrame:
    """The counts of one (model, judge) as a human-label x judge-label matrix (0 where a cell is empty)."""
    part = cells[(cells["model"] == model) & (cells["judge"] == judge)]
    labels = sorted(set(part["human_label"]) | set(part["judge_label"]))
    matrix = part.pivot_table(index="human_label", columns="judge_label", values="count", aggfunc="sum",
                              fill_value=0).reindex(index=labels, columns=labels, fill_value=0)
    matrix.index.name, matrix.columns.name = "human", "judge"
    return matrix.astype(int)


def _slope(x: NDArray[np.float64], y: NDArray[np.float64]) -> float | None:
    """OLS slope of judge (``y``) on human (``x``); ``None`` when the human side is constant or too short."""
    if len(x) < MIN_PAIRS or np.ptp(x) == 0:
        return None
    xc = x - x.mean()
    return float((xc * (y - y.mean())).sum() / (xc * xc).sum())


def _bias(x: NDArray[np.float64], y: NDArray[np.float64]) -> float | None:
    return float(np.mean(y - x)) if len(x) else None


def calibration_bias(ratings: pd.DataFrame, dimension: str, *, human_kinds: Sequence[str] = HUMAN_KINDS,
                     judge_kinds: Sequence[str] = JUDGE_KINDS, judges: Sequence[str] | None = None,
                     bootstrap: int = DEFAULT_BOOTSTRAP, seed: int = DEFAULT_SEED,
                     confidence: float = DEFAULT_CONFIDENCE, memo: dict | None = None) -> pd.DataFrame:
    """Per (model, judge): n, bias ``mean(judge - human)`` and slope of judge on human, with bootstrap intervals.

    The intervals (``bootstrap > 0``) are percentile intervals of :func:`empathy.agreement.bootstrap_ci`,
    resampling items (a cluster bootstrap: all of an item's units move together). ``human_slope`` is the
    model's :func:`dilution_benchmark`: the slope a judge that shared the humans' scale would get from the noise
    of the humans' mean alone (``None`` with fewer than two humans). ``warning`` says when an interval has zero
    width or rests on fewer than :data:`empathy.agreement.MIN_INTERVAL_UNITS` items
    (:func:`empathy.agreement.interval_warning`), else ``None``. Columns: model, judge, n, mean_human,
    mean_judge, bias, bias_low, bias_high, slope, slope_low, slope_high, human_slope, warning.
    """
    table = paired(ratings, dimension, human_kinds=human_kinds, judge_kinds=judge_kinds, judges=judges)
    columns = ["model", "judge", "n", "mean_human", "mean_judge", "bias", "bias_low", "bias_high", "slope",
               "slope_low", "slope_high", "human_slope", "warning"]
    benchmark = dilution_benchmark(ratings, dimension, human_kinds=human_kinds).set_index("model")["human_slope"]
    rows = []
    for (model, judge), part in table.groupby(["model", "judge"], sort=True):
        human = part["human_value"].to_numpy(float)
        judged = part["judge_value"].to_numpy(float)
        clusters = part["item_id"].to_numpy(object)
        slope = benchmark.get(model)
        # a (model, judge)'s row depends on its own pairs only (its bootstrap has the seed to itself): a memo keeps
        # the rows of the pairs a new decision did not touch
        found = None if memo is None else memo.get(_bias_key(model, judge, human, judged, clusters, slope, bootstrap,
                                                             seed, confidence))
        if found is not None:
            rows.append(dict(found))
            continue
        row: dict[str, object] = {"model": model, "judge": judge, "n": len(part), "mean_human": float(human.mean()),
                                  "mean_judge": float(judged.mean()), "bias": _bias(human, judged),
                                  "slope": _slope(human, judged)}
        intervals = {}
        for name, statistic in (("bias", _bias), ("slope", _slope)):
            if bootstrap:
                ci = bootstrap_ci(statistic, human, judged, n_resamples=bootstrap, seed=seed, confidence=confidence,
                                  clusters=clusters)
                row[f"{name}_low"], row[f"{name}_high"] = ci.low, ci.high
                intervals[name] = ci
            else:
                row[f"{name}_low"] = row[f"{name}_high"] = None
        row["human_slope"] = None if slope is None or pd.isna(slope) else float(slope)
        row["warning"] = interval_warning(intervals)
        rows.append(row)
        if memo is not None:
            memo[_bias_key(model, judge, human, judged, clusters, slope, bootstrap, seed, confidence)] = dict(row)
    return pd.DataFrame(rows, columns=columns)


def _bias_key(model: object, judge: object, human: NDArray[np.float64], judged: NDArray[np.float64],
              clusters: NDArray[np.object_], slope: object, bootstrap: int, seed: int, confidence: float) -> tuple:
    """Everything a row of :func:`calibration_bias` is computed from."""
    return (str(model), str(judge), human.tobytes(), judged.tobytes(), tuple(str(c) for c in clusters),
            None if slope is None or pd.isna(slope) else float(slope), bootstrap, seed, confidence)


def dilution_benchmark(ratings: pd.DataFrame, dimension: str, *, human_kinds: Sequence[str] = HUMAN_KINDS
                       ) -> pd.DataFrame:
    """Per model: the slope of one human on the mean of the other humans, averaged over the humans.

    It is the benchmark for a judge's slope on the humans' mean (:func:`calibration_bias`): a rater that shares
    the humans' scale exactly still gets a slope below 1 on a noisy mean (regression dilution), and one human on
    the others' mean shows by how much. (The judge's slope is on the mean of all the humans, which is a little
    less noisy than a mean of one fewer, so a judge on the humans' scale would land slightly above this.)
    Units as in :func:`paired` (one per item for a reference dimension, model :data:`ALL_MODELS`). Columns:
    model, n_humans (humans with a defined slope), human_slope (their mean; ``None`` with fewer than two
    humans), human_slope_min, human_slope_max.
    """
    columns = ["model", "n_humans", "human_slope", "human_slope_min", "human_slope_max"]
    part = ratings[ratings["dimension"] == dimension].astype({"item_id": str, "model": str, "rater": str})
    humans = [r for r, k in _kinds(part).items() if k in human_kinds] if not part.empty else []
    if len(humans) < 2:
        return pd.DataFrame(columns=columns)
    matrix = _rater_matrix(part, dimension)[humans]
    if isinstance(matrix.index, pd.MultiIndex):
        groups = matrix.groupby(level="model", sort=True)
    else:
        groups = [(ALL_MODELS, matrix)]
    rows = []
    for model, block in groups:
        slopes = []
        for human in humans:
            others = block.drop(columns=human).mean(axis=1, skipna=True)
            both = block[human].notna() & others.notna()
            slope = _slope(others[both].to_numpy(float), block.loc[both, human].to_numpy(float))
            if slope is not None:
                slopes.append(slope)
        rows.append({"model": model, "n_humans": len(slopes),
                     "human_slope": float(np.mean(slopes)) if slopes else None,
                     "human_slope_min": min(slopes) if slopes else None,
                     "human_slope_max": max(slopes) if slopes else None})
    return pd.DataFrame(rows, columns=columns)


def calibration_bins(ratings: pd.DataFrame, dimension: str, *, bins: int = DEFAULT_CALIBRATION_BINS,
                     human_kinds: Sequence[str] = HUMAN_KINDS, judge_kinds: Sequence[str] = JUDGE_KINDS,
                     judges: Sequence[str] | None = None) -> pd.DataFrame:
    """The calibration curve: per (model, judge) and bin of the human score, the mean human and judge scores.

    Bins are ``bins`` equal-width intervals over the observed human scores (the last one closed). Columns:
    model, judge, bin, low, high, n, mean_human, mean_judge, outputs.
    """
    if isinstance(bins, bool) or not isinstance(bins, int) or bins < 1:
        raise ValueError(f"bins must be a positive whole number, got {bins!r}")
    table = paired(ratings, dimension, human_kinds=human_kinds, judge_kinds=judge_kinds, judges=judges)
    columns = ["model", "judge", "bin", "low", "high", "n", "mean_human", "mean_judge", "outputs"]
    if table.empty:
        return pd.DataFrame(columns=columns)
    human = table["human_value"].to_numpy(float)
    low, high = float(human.min()), float(human.max())
    edges = np.linspace(low, high, bins + 1) if high > low else np.array([low, low])
    codes = np.clip(np.searchsorted(edges, human, side="right") - 1, 0, len(edges) - 2)
    table = table.assign(bin=codes)
    rows = []
    for (model, judge, code), part in table.groupby(["model", "judge", "bin"], sort=True):
        rows.append({"model": model, "judge": judge, "bin": int(code), "low": float(edges[code]),
                     "high": float(edges[code + 1]), "n": len(part),
                     "mean_human": float(part["human_value"].mean()), "mean_judge": float(part["judge_value"].mean()),
                     "outputs": sorted(zip(part["item_id"], part["model"], strict=True))})
    return pd.DataFrame(rows, columns=columns)


def item_splits(ratings: pd.DataFrame, dimension: str, *, threshold: float | None = None,
                raters: Sequence[str] | None = None) -> pd.DataFrame:
    """Every rater's value on each unit of ``dimension`` and how far apart they are, most split first.

    Units are ``(item_id, model)`` outputs, or items for a reference dimension (model :data:`ALL_MODELS`), as
    :func:`empathy.agreement.pairwise_agreement` compares them. Columns: item_id, model, n_raters, min, max,
    spread (max - min), sd (population), modal_share (share of raters giving the most common value; NaN for
    non-whole-number values, where equal values are chance), split (spread >= ``threshold``;
    :func:`empathy.slices.default_threshold` of the raters other than a crowd when not given, since a crowd's
    fractional means would make a whole-number scale look continuous), values (``rater=value`` in rater order). Units
    rated by fewer than two raters are left out. Sorted by split, spread (descending), then modal share.
    """
    part = ratings[ratings["dimension"] == dimension].astype({"item_id": str, "model": str, "rater": str})
    columns = ["item_id", "model", "n_raters", "min", "max", "spread", "sd", "modal_share", "split", "values"]
    if part.empty:
        return pd.DataFrame(columns=columns)
    matrix = _rater_matrix(part, dimension)
    if raters is not None:
        matrix = matrix[[r for r in matrix.columns if r in raters]]
    values = matrix.to_numpy(float)
    if threshold is None:
        # the scale of the individual raters: a crowd's fractional means would make a 1-5 scale look continuous
        kinds = _kinds(part)
        individual = [c for c in matrix.columns if kinds.get(c) != "crowd"] or list(matrix.columns)
        threshold = default_threshold(dimension, matrix[individual].to_numpy(float).ravel())
    if not math.isfinite(threshold) or threshold <= 0:
        raise ValueError(f"threshold must be a positive number, got {threshold!r}")
    count = (~np.isnan(values)).sum(axis=1)
    keep = count >= 2
    values, count = values[keep], count[keep]
    index = matrix.index[keep]
    whole = bool(np.allclose(values[~np.isnan(values)], np.round(values[~np.isnan(values)])))
    with np.errstate(invalid="ignore"):
        low, high = np.nanmin(values, axis=1), np.nanmax(values, axis=1)
        sd = np.nanstd(values, axis=1)
    modal = np.full(len(values), np.nan)
    if whole:
        for row, vector in enumerate(values):
            _, counts = np.unique(vector[~np.isnan(vector)], return_counts=True)
            modal[row] = counts.max() / count[row]
    names = list(matrix.columns)
    described = [", ".join(f"{names[c]}={vector[c]:g}" for c in range(len(names)) if not np.isnan(vector[c]))
                 for vector in values]
    if isinstance(index, pd.MultiIndex):
        items, models = index.get_level_values("item_id"), index.get_level_values("model")
    else:
        items, models = index, [ALL_MODELS] * len(index)
    table = pd.DataFrame({"item_id": list(items), "model": list(models), "n_raters": count, "min": low, "max": high,
                          "spread": high - low, "sd": sd, "modal_share": modal,
                          "split": (high - low) >= threshold - 1e-9, "values": described})
    table = table.sort_values(["split", "spread", "modal_share", "item_id", "model"],
                              ascending=[False, False, True, True, True], kind="stable")
    return table[columns].reset_index(drop=True)


_SPLIT_COLUMNS = ["item_id", "model", "n_raters", "min", "max", "spread", "sd", "modal_share", "split", "values"]


def _row_stats(values: NDArray[np.float64], names: Sequence[str]
               ) -> tuple[NDArray[np.float64], NDArray[np.bool_], list[str]]:
    """Per row of a units x raters matrix: the modal share (as :func:`item_splits` computes it for whole numbers:
    the largest group of equal values over the values present), whether every value is a whole number, and the
    ``rater=value`` text; array operations over the (few) raters instead of a loop over the units."""
    present = ~np.isnan(values)
    n_present = present.sum(axis=1)
    # for each value, how many values of its row equal it (NaN equals nothing); the largest is the modal group
    equal = (values[:, :, None] == values[:, None, :]).sum(axis=2)
    largest = np.where(present, equal, 0).max(axis=1) if values.shape[1] else np.zeros(len(values))
    with np.errstate(invalid="ignore", divide="ignore"):
        modal = np.where(n_present > 0, largest / np.maximum(n_present, 1), np.nan)
    whole = (~present | np.isclose(values, np.round(values))).all(axis=1)
    return modal, whole, _described(values, names)


def _described(values: NDArray[np.float64], names: Sequence[str]) -> list[str]:
    """The ``rater=value`` text of each row of a units x raters matrix (the raters with a value, in column order),
    written once per distinct row of values: a few judges' labels make a handful of distinct rows among 200,000
    units, so the text is joined that many times, not once per unit."""
    if not len(names):
        return [""] * len(values)
    labels, codes_of = [], []
    combined = np.zeros(len(values), dtype=np.int64)
    for column, name in enumerate(names):
        codes, uniques = pd.factorize(values[:, column], use_na_sentinel=True)
        labels.append([f"{name}={value:g}" for value in uniques] + [""])  # code -1 (NaN) takes the last, ""
        codes_of.append(codes)
        # the row's codes so far as one number (mixed radix), renumbered densely: below rows x (values + 1)
        combined = pd.factorize(combined * (len(uniques) + 1) + codes + 1)[0]
    texts = np.empty(int(combined.max(initial=-1)) + 1, dtype=object)
    _, first = np.unique(combined, return_index=True)
    for row in first.tolist():
        texts[combined[row]] = ", ".join(part for part in (labels[c][codes_of[c][row]] for c in range(len(names)))
                                         if part)
    return texts[combined].tolist()


class ItemSplits:
    """:func:`item_splits` of one dimension for a fixed set of ratings (the judges') plus other raters' ratings
    that change (the ledger's annotators): the fixed raters' units x raters matrix and each unit's per-row work
    (modal share, the ``rater=value`` text: a Python loop over every unit) done once; a call redoes the units the
    other raters rated and the vectorised rest. The same table as :func:`item_splits` of both together (the other
    raters' units are units of the fixed ratings; otherwise, or for a rater in both, it is called whole).
    """

    def __init__(self, ratings: pd.DataFrame, dimension: str) -> None:
        self.ratings = ratings
        self.dimension = dimension
        # the columns read, not every column of the rows (reasons, signatures: +60 MiB at 200,000 outputs), and no
        # copy at all where the keys are strings already (astype(str) then changes nothing): the matrix takes them
        # from ``ratings`` one at a time
        read = [c for c in ("item_id", "model", "rater", "dimension", "value", "rater_kind") if c in ratings.columns]
        chosen = (ratings["dimension"] == dimension).to_numpy(dtype=bool, na_value=False)
        self.empty = not chosen.any()
        if self.empty:
            return
        if all(ratings[c].dtype == _STRINGS for c in ("item_id", "model", "rater")):
            self.kinds = _kinds(ratings.loc[chosen, [c for c in ("rater", "rater_kind") if c in read]])
            matrix = _rater_matrix(ratings, dimension)
        else:
            part = ratings.loc[chosen, read].astype({"item_id": str, "model": str, "rater": str})
            self.kinds = _kinds(part)
            matrix = _rater_matrix(part, dimension)
        self.index = matrix.index
        self.names = [str(c) for c in matrix.columns]
        self.values = matrix.to_numpy(float)
        self.count = (~np.isnan(self.values)).sum(axis=1)
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a unit without a value (left out below) has no min
            self.low, self.high = np.nanmin(self.values, axis=1), np.nanmax(self.values, axis=1)
            self.sd = np.nanstd(self.values, axis=1)
        self.modal, self.whole, self.described = _row_stats(self.values, self.names)
        #: units whose per-row work was done, the fixed raters' at construction included (what a test counts)
        self.rows_computed = len(self.values)

    def table(self, more: pd.DataFrame) -> pd.DataFrame:
        """:func:`item_splits` of the fixed ratings and ``more`` (long-form ratings of other raters) together."""
        part = more[more["dimension"] == self.dimension].astype({"item_id": str, "model": str, "rater": str}) \
            if len(more) else more
        if self.empty or (len(part) and set(part["rater"]) & set(self.names)):
            return item_splits(pd.concat([self.ratings, more], ignore_index=True), self.dimension)
        if not len(part):
            return self._assemble(self.names, self.kinds, [], np.empty((0, 0)), np.empty(0, dtype=np.int64),
                                  np.empty((0, len(self.names))))
        extra = _rater_matrix(part, self.dimension)
        rows = self.index.get_indexer(extra.index)
        if (rows < 0).any():
            return item_splits(pd.concat([self.ratings, more], ignore_index=True), self.dimension)
        names = sorted([*self.names, *(str(c) for c in extra.columns)])
        combined = pd.DataFrame(self.values[rows], columns=self.names).join(
            pd.DataFrame(extra.to_numpy(float), columns=[str(c) for c in extra.columns]))[names].to_numpy(float)
        kinds = {**self.kinds, **_kinds(part)}
        return self._assemble(names, kinds, [str(c) for c in extra.columns], extra.to_numpy(float), rows, combined)

    def _assemble(self, names: list[str], kinds: dict[str, str], extra_names: list[str],
                  extra_values: NDArray[np.float64], rows: NDArray[np.int64], combined: NDArray[np.float64]
                  ) -> pd.DataFrame:
        count, low, high, sd = self.count.copy(), self.low.copy(), self.high.copy(), self.sd.copy()
        modal, whole = self.modal.copy(), self.whole.copy()
        described = list(self.described)
        if len(rows):
            count[rows] = (~np.isnan(combined)).sum(axis=1)
            with np.errstate(invalid="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                low[rows], high[rows] = np.nanmin(combined, axis=1), np.nanmax(combined, axis=1)
                sd[rows] = np.nanstd(combined, axis=1)
            row_modal, row_whole, row_described = _row_stats(combined, names)
            modal[rows], whole[rows] = row_modal, row_whole
            for position, text in zip(rows.tolist(), row_described, strict=True):
                described[position] = text
            self.rows_computed += len(rows)
        individual = [c for c in names if kinds.get(c) != "crowd"] or list(names)
        pool = [self.values[:, [self.names.index(c) for c in individual if c in self.names]].ravel()]
        if len(extra_values):
            pool.append(extra_values[:, [extra_names.index(c) for c in individual if c in extra_names]].ravel())
        threshold = default_threshold(self.dimension, np.concatenate(pool))
        keep = count >= 2
        positions = np.flatnonzero(keep)
        all_whole = bool(whole[keep].all())
        shown_modal = modal[keep] if all_whole else np.full(int(keep.sum()), np.nan)
        spread = high[keep] - low[keep]
        split = spread >= threshold - 1e-9
        # the order of item_splits' sort (split, spread down, modal share up, NaN last, then the unit: the matrix's
        # rows are in (item_id, model) order already)
        order = np.lexsort((np.arange(len(positions)), np.where(np.isnan(shown_modal), np.inf, shown_modal),
                            -spread, ~split))
        if isinstance(self.index, pd.MultiIndex) and all(level.dtype == _STRINGS for level in self.index.levels):
            # the names taken from the levels by code (Arrow strings): no Python string per unit, the same column
            shown = positions[order]
            items = self.index.levels[0].take(self.index.codes[0][shown]).array
            models = self.index.levels[1].take(self.index.codes[1][shown]).array
        elif isinstance(self.index, pd.MultiIndex):
            items = list(np.asarray(self.index.get_level_values("item_id"), dtype=object)[keep][order])
            models = list(np.asarray(self.index.get_level_values("model"), dtype=object)[keep][order])
        else:
            items = list(np.asarray(self.index, dtype=object)[keep][order])
            models = list(np.full(int(keep.sum()), ALL_MODELS)[order])
        table = pd.DataFrame({"item_id": items, "model": models,
                              "n_raters": count[keep][order], "min": low[keep][order], "max": high[keep][order],
                              "spread": spread[order], "sd": sd[keep][order], "modal_share": shown_modal[order],
                              "split": split[order], "values": [described[p] for p in positions[order]]})
        return table[_SPLIT_COLUMNS]
