"""Intervals on model-level conclusions: an item-cluster bootstrap of per-model metric values.

Every judge metric here is a mean of per-item terms (:mod:`empathy.metrics`), and one item has an output from
every model: the items are the independent units, not the outputs. So the bootstrap resamples *items* with
replacement and takes each drawn item's terms for every model together (a cluster bootstrap); a model's value
on a resample is the mean of its usable terms there (terms left out by the metric stay out). From the same
resamples:

* **per-model intervals** (:func:`model_intervals`): the *expanded percentile* interval (Hesterberg 2015,
  "What teachers should know about the bootstrap", The American Statistician 69(4)): the percentile interval
  at the levels ``Phi(+-sqrt(n/(n-1)) t_{n-1, 1-alpha/2})`` instead of ``alpha/2``. The plain percentile
  interval is too narrow at small ``n`` (the bootstrap's spread is the divisor-``n`` sd) and BCa corrects skew
  but not that; at the sizes tested (40 and 80 items, a skewed continuous term and a binary one) the expanded
  interval covers 93-97 % where percentile and BCa fall to 92 % (tests/test_bootstrap.py, docs/statistics.md).
  ``n`` is the model's number of usable items. Below about 20 items no bootstrap interval is reliable (a
  binary term with few events covers far less): docs/statistics.md.
* **rank intervals**: a model's rank on each resample (:data:`empathy.vocabulary.RANK_CONVENTION`: rank 1 is
  the best value in the metric's direction, i.e. the least failure; ties share the best rank), and the
  ``alpha/2`` and ``1 - alpha/2`` quantiles of those ranks (marginal, one model at a time).
* **adjacent pairs**: for models next to each other in the point estimates' order, the difference with its
  expanded percentile interval (``n``: items both models have usable terms on) and ``p_better``, the share of
  resamples in which the better-ranked model stays strictly better (ties count half). That share is bootstrap
  support, not a posterior probability: a p-value-like reading of how often the order survives resampling.
* **inter-judge agreement** (:func:`judge_agreement`, the paper's Table 6): Spearman's rho of two judges'
  per-model values with a *percentile* interval over item resamples (rho of a handful of models is bounded and
  discrete, so the expansion, a small-sample correction for means, does not apply; the interval describes
  sampling variability of items, with no coverage claim), the exact permutation p-value over models and
  Kendall's tau-b with its own (:func:`empathy.agreement.rank_correlation_test`).

Resamples are drawn from ``np.random.default_rng(seed)`` exactly as :func:`empathy.agreement.bootstrap_ci`
draws them (``integers(0, n_items, size=(rows, n_items))`` in blocks of at most
:data:`empathy.agreement.BOOTSTRAP_BLOCK` entries), so memory stays bounded; each block becomes a resamples x
items count matrix and every model's sum is one matrix product. Resamples on which a model has no usable item
are left out of its interval (``None`` if more than half are).
"""

from __future__ import annotations

import functools
import itertools
import math
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from empathy.agreement import (
    DEFAULT_BOOTSTRAP,
    DEFAULT_CONFIDENCE,
    DEFAULT_SEED,
    MAX_EXACT_MODELS,
    MAX_PAIRED_SCORERS,
    ConfidenceInterval,
    _average_ranks,
    _blocks,
    _clean_pairs,
    _kendall_numerator,
    _rowwise_correlation,
    _spearman_numerator,
    interval_warning,
    kendall_tau_b,
    rank_correlation_test,
    spearman,
)
from empathy.blas import one_blas_thread
from empathy.distributions import MIN_P, normal_cdf, student_t_ppf
from empathy.evaluate import MetricPlan, MetricSlice
from empathy.io import left_join, require_frame
from empathy.metrics import OK, _as_float_array, get_metric
from empathy.vocabulary import DIRECTIONS, LOWER_IS_BETTER

INTERVAL = "expanded-percentile"
MODEL_COLUMNS: tuple[str, ...] = ("model", "value", "n", "low", "high", "rank", "rank_low", "rank_high")
PAIR_COLUMNS: tuple[str, ...] = ("better", "worse", "value_better", "value_worse", "difference", "difference_low",
                                 "difference_high", "n", "p_better")
AGREEMENT_COLUMNS: tuple[str, ...] = ("scorer_a", "scorer_b", "n_models", "n_items", "spearman", "ci_low", "ci_high",
                                      "p_exact", "p_method", "p_se", "kendall_tau_b", "p_kendall")


def _check_settings(n_resamples: int, confidence: float, seed: int) -> None:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive whole number, got {n_resamples!r}")
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a whole number >= 0, got {seed!r}")


def _terms_array(terms: ArrayLike, name: str) -> NDArray[np.float64]:
    shape = np.shape(terms)
    if len(shape) != 2:
        raise ValueError(f"{name} must be items x models, got shape {shape}")
    array = _as_float_array(np.ravel(terms), name).reshape(shape)  # the metrics' check that values are numbers
    if np.isinf(array).any():
        row, column = (int(v) for v in np.argwhere(np.isinf(array))[0])
        raise ValueError(f"{name}[{row}, {column}] is infinite")
    return array


def resample_counts(n_items: int, n_resamples: int, seed: int) -> Iterator[NDArray[np.float64]]:
    """How often each item is drawn on each resample, in blocks (resamples x items), from ``default_rng(seed)``.

    The draws are those of :func:`empathy.agreement.bootstrap_ci` (``rng.integers(0, n_items, size=(rows,
    n_items))`` per block of :func:`empathy.agreement._blocks`), so both bootstraps agree on the same data.

    Raises
    ------
    ValueError
        When ``n_items`` is below 1 or ``n_resamples`` / ``seed`` are invalid.
    """
    _check_settings(n_resamples, 0.5, seed)
    if isinstance(n_items, bool) or not isinstance(n_items, (int, np.integer)) or n_items < 1:
        raise ValueError(f"n_items must be a positive whole number, got {n_items!r}")
    rng = np.random.default_rng(seed)
    for rows in _blocks(n_resamples, n_items):
        drawn = rng.integers(0, n_items, size=(rows, n_items))
        offsets = (np.arange(rows, dtype=np.int64) * n_items)[:, None]
        yield np.bincount((drawn + offsets).ravel(), minlength=rows * n_items).reshape(rows, n_items).astype(float)


def cluster_means(terms: ArrayLike, *, n_resamples: int = DEFAULT_BOOTSTRAP, seed: int = DEFAULT_SEED
                  ) -> NDArray[np.float64]:
    """Each column's mean of usable terms on every item resample: resamples x columns (NaN: none usable).

    ``terms`` is items x columns (a column per model, or per (judge, model)), NaN where the metric left the
    term out. All columns share each resample's items (the cluster bootstrap).
    """
    _check_settings(n_resamples, 0.5, seed)
    array = _terms_array(terms, "terms")
    if array.shape[0] == 0:
        return np.full((int(n_resamples), array.shape[1]), np.nan)
    sums, n, _ = _cluster_sums(array, int(n_resamples), seed)
    return _means(sums, n)


def _means(sums: NDArray[np.float64], n: NDArray[np.float64]) -> NDArray[np.float64]:
    """Per resample and column, the sum of usable terms over their count (NaN where none is usable)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, sums / np.where(n > 0, n, 1.0), np.nan)


#: The kept count matrices of the resamples alive in this process, by (items, resamples, seed): the draws depend on
#: nothing else, so a second bootstrap of as many items (the Overview's other EGM reading, whose plan shares the
#: items) reads the same matrix instead of drawing and holding its own (20 MB at 20,000 items). Read-only.
_KEPT_COUNTS: weakref.WeakValueDictionary[tuple[int, int, int], NDArray[np.integer]] = weakref.WeakValueDictionary()
_KEPT_LOCK = threading.Lock()


def _kept_blocks(matrix: NDArray[np.integer], n_resamples: int, n_items: int) -> Iterator[NDArray[np.float64]]:
    """The blocks :func:`resample_counts` yields, read back from a kept count matrix (the same rows, as floats)."""
    start = 0
    for rows in _blocks(n_resamples, n_items):
        yield matrix[start:start + rows].astype(float)
        start += rows


def _cluster_sums(array: NDArray[np.float64], n_resamples: int, seed: int, *, keep_counts: bool = False
                  ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.integer] | None]:
    """Each column's sum of usable terms and their number on every resample (resamples x columns), and with
    ``keep_counts`` the resamples x items count matrix itself in the narrowest unsigned type that holds it (what a
    later change of one item's terms is patched with; read-only, shared by every bootstrap of as many items with
    the same resamples and seed while one holds it)."""
    usable = ~np.isnan(array)
    filled = np.where(usable, array, 0.0)
    key = (int(array.shape[0]), int(n_resamples), int(seed))
    shared = None
    if keep_counts and array.shape[0]:
        with _KEPT_LOCK:
            shared = _KEPT_COUNTS.get(key)
    blocks = (_kept_blocks(shared, n_resamples, array.shape[0]) if shared is not None
              else resample_counts(array.shape[0], n_resamples, seed))
    sums, n, kept = [], [], []
    with one_blas_thread():
        for counts in blocks:
            sums.append(counts @ filled)
            n.append(counts @ usable)
            if keep_counts and shared is None:
                kept.append(counts.astype(np.uint8 if counts.max(initial=0) < 256 else np.uint32))
    width = array.shape[1]
    stacked = [np.concatenate(parts) if parts else np.empty((0, width)) for parts in (sums, n)]
    matrix = shared
    if keep_counts and shared is None:
        dtype = np.result_type(*kept) if kept else np.uint8
        matrix = np.concatenate([k.astype(dtype) for k in kept]) if kept else np.empty((0, array.shape[0]), dtype)
        matrix.flags.writeable = False
        if array.shape[0]:
            with _KEPT_LOCK:
                matrix = _KEPT_COUNTS.setdefault(key, matrix)
    return stacked[0], stacked[1], matrix


def expanded_levels(n: int, confidence: float = DEFAULT_CONFIDENCE) -> tuple[float, float]:
    """Hesterberg's expanded percentile levels ``Phi(+-sqrt(n/(n-1)) t_{n-1, 1-alpha/2})`` for ``n >= 2`` items.

    E.g. n = 10, 95 %: 0.0086 and 0.9914 instead of 0.025 and 0.975 (``t_{9, 0.975} = 2.262``, times
    ``sqrt(10/9)`` is 2.385).
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
        raise ValueError(f"the expanded percentile interval needs n >= 2, got {n!r}")
    _check_settings(1, confidence, 0)
    return _expanded_levels(int(n), float(confidence))


@functools.lru_cache(maxsize=1024)
def _expanded_levels(n: int, confidence: float) -> tuple[float, float]:
    # the t quantile dominates an interval's cost; a table has few distinct n
    alpha = 1.0 - confidence
    if alpha / 2.0 < MIN_P:
        raise ValueError(f"confidence must be at most {1.0 - 2.0 * MIN_P:g} for an expanded percentile interval, "
                         f"got {confidence!r}")
    low = normal_cdf(math.sqrt(n / (n - 1.0)) * student_t_ppf(alpha / 2.0, n - 1))
    return low, 1.0 - low


def expanded_percentile(replicates: ArrayLike, n: int, confidence: float = DEFAULT_CONFIDENCE
                        ) -> tuple[float | None, float | None]:
    """The expanded percentile interval of bootstrap ``replicates`` (NaN ones left out) of a mean over ``n`` units.

    ``(None, None)`` when ``n < 2`` or more than half of the replicates are NaN. Quantiles are numpy's default
    (linear interpolation).
    """
    values = np.asarray(replicates, dtype=float)
    defined = values[~np.isnan(values)]
    if n < 2 or len(defined) == 0 or len(defined) < len(values) / 2:
        return None, None
    low, high = np.quantile(defined, expanded_levels(int(n), confidence))
    return float(low), float(high)


def _ranks(values: NDArray[np.float64], direction: str) -> NDArray[np.float64]:
    """Rank of each column per row (1 = best in ``direction``; ties share the best rank; NaN stays NaN): one plus
    the number of the row's values strictly better, as ``DataFrame.rank(axis=1, method="min")``.

    One comparison of every column against the others per column: rows x columns^2 steps, no sort (a results
    table ranks a handful of models on each of a thousand resamples, where a sort's set-up costs more)."""
    signed = values if direction == LOWER_IS_BETTER else -values
    ranks = np.empty(signed.shape, dtype=float)
    for column in range(signed.shape[1]):
        # NaN compares false both ways: it is never better than a value, and gets NaN below
        ranks[:, column] = 1.0 + np.count_nonzero(signed < signed[:, column:column + 1], axis=1)
    ranks[np.isnan(signed)] = np.nan
    return ranks


@dataclass(frozen=True)
class ModelIntervals:
    """Per-model values with intervals and ranks, and the adjacent pairs' differences and order support.

    ``models`` has :data:`MODEL_COLUMNS` (sorted best first), ``pairs`` :data:`PAIR_COLUMNS`.
    """

    models: pd.DataFrame
    pairs: pd.DataFrame
    n_items: int
    n_resamples: int
    seed: int
    confidence: float
    direction: str

    def signature_fields(self) -> dict[str, str]:
        """The bootstrap's design, for the signature: unit, interval, resamples and seed."""
        return {"bootstrap": "items", "interval": INTERVAL, "resamples": str(self.n_resamples),
                "bootstrap-seed": str(self.seed)}


def _matrix(terms: pd.DataFrame) -> pd.DataFrame:
    if not isinstance(terms, pd.DataFrame):
        raise TypeError(f"terms must be an items x models DataFrame, got {type(terms).__name__}")
    if terms.columns.duplicated().any():
        raise ValueError(f"terms hold model {terms.columns[terms.columns.duplicated()][0]!r} twice")
    return terms


def model_intervals(terms: pd.DataFrame, *, n_resamples: int = DEFAULT_BOOTSTRAP, seed: int = DEFAULT_SEED,
                    confidence: float = DEFAULT_CONFIDENCE, direction: str = LOWER_IS_BETTER) -> ModelIntervals:
    """Per-model bootstrap intervals, rank intervals and adjacent-pair order support from per-item terms.

    Parameters
    ----------
    terms : DataFrame
        Items x models (index: item_id; columns: models), NaN where the metric leaves a term out, e.g.
        :func:`empathy.stability.metric_matrix` of :func:`empathy.stability.metric_terms` for one judge.
    n_resamples, seed, confidence
        Item resamples, the seed of ``np.random.default_rng`` and the intervals' nominal coverage.
    direction : str
        :data:`empathy.vocabulary.LOWER_IS_BETTER` (all four metrics) or ``HIGHER_IS_BETTER``.

    Returns
    -------
    ModelIntervals
        See the module docstring for every interval's definition.

    Raises
    ------
    TypeError, ValueError
        For a non-table or non-numeric input, a model twice, or invalid settings.
    """
    matrix = _matrix(terms)
    _check_settings(n_resamples, confidence, seed)
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
    array = _terms_array(matrix.to_numpy(), "terms")
    models = [str(c) for c in matrix.columns]
    replicates = cluster_means(array, n_resamples=n_resamples, seed=seed)
    table, pairs = _model_rows(array, replicates, models, confidence, direction)
    return ModelIntervals(table, pairs, int(array.shape[0]), int(n_resamples), int(seed), float(confidence),
                          direction)


def _column_values(array: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Each column's mean of usable (non-NaN) terms (NaN when none) and its number of usable terms."""
    n = (~np.isnan(array)).sum(axis=0)
    with np.errstate(invalid="ignore"):
        values = np.where(n > 0, np.nansum(array, axis=0) / np.maximum(n, 1), np.nan)
    return values, n


def _model_rows(array: NDArray[np.float64], replicates: NDArray[np.float64] | None, models: Sequence[str],
                confidence: float, direction: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The models table (:data:`MODEL_COLUMNS`, best first) and adjacent pairs (:data:`PAIR_COLUMNS`) of one
    items x models terms matrix from its bootstrap ``replicates`` (resamples x models; ``None``: no resamples, so
    values and ranks without intervals)."""
    rows = _model_records(array, replicates, models, confidence, direction)
    table = pd.DataFrame(rows, columns=list(MODEL_COLUMNS)).astype({c: "Int64" for c in ("rank", "rank_low",
                                                                                        "rank_high")})
    scored = [r["model"] for r in rows if r["value"] is not None]
    usable = ~np.isnan(array)
    pairs = ([_pair(better, worse, array, usable, replicates, models, confidence, direction)
              for better, worse in itertools.pairwise(scored)] if replicates is not None else [])
    return table, pd.DataFrame(pairs, columns=list(PAIR_COLUMNS))


def _model_records(array: NDArray[np.float64], replicates: NDArray[np.float64] | None, models: Sequence[str],
                   confidence: float, direction: str) -> list[dict[str, object]]:
    """The rows of :func:`_model_rows`' models table as plain records, best first: ``None`` where a value, an
    interval or a rank is not computed (a results table asks this once per scorer and metric, where a data frame
    and its conversion back to records cost more than the rows themselves)."""
    values, n = _column_values(array)
    k = len(models)
    low: list[float | None] = [None] * k
    high: list[float | None] = [None] * k
    rank_low: list[int | None] = [None] * k
    rank_high: list[int | None] = [None] * k
    if replicates is not None and k and len(replicates):
        low, high = _column_intervals(replicates, n, confidence)
        rank_low, rank_high = _rank_intervals(_ranks(replicates, direction), ~np.isnan(values), confidence)
    point_ranks = _ranks(values[None, :], direction)[0] if k else values
    rows = [{"model": model, "value": None if np.isnan(values[j]) else float(values[j]), "n": int(n[j]),
             "low": low[j], "high": high[j], "rank": None if np.isnan(point_ranks[j]) else int(point_ranks[j]),
             "rank_low": rank_low[j], "rank_high": rank_high[j]} for j, model in enumerate(models)]
    sign = 1.0 if direction == LOWER_IS_BETTER else -1.0
    rows.sort(key=lambda r: (r["value"] is None, sign * (r["value"] or 0.0), r["model"]))  # best first, unscored last
    return rows


def _column_intervals(replicates: NDArray[np.float64], n: NDArray[np.int64], confidence: float
                      ) -> tuple[list[float | None], list[float | None]]:
    """:func:`expanded_percentile` of every column of ``replicates`` (resamples x columns) over its ``n`` usable
    items (``None`` for a column without any): one quantile call per distinct ``n`` for the columns whose every
    replicate is defined (the same interpolation, column by column), the others one by one."""
    k = replicates.shape[1]
    low: list[float | None] = [None] * k
    high: list[float | None] = [None] * k
    partial = np.isnan(replicates).any(axis=0)
    whole = ~partial & (n >= 2)
    for size in np.unique(n[whole]):
        columns = np.flatnonzero(whole & (n == size))
        bounds = np.quantile(replicates[:, columns], expanded_levels(int(size), confidence), axis=0)
        for column, a, b in zip(columns.tolist(), bounds[0].tolist(), bounds[1].tolist(), strict=True):
            low[column], high[column] = a, b
    for column in np.flatnonzero(partial & (n > 0)).tolist():
        low[column], high[column] = expanded_percentile(replicates[:, column], int(n[column]), confidence)
    return low, high


def _rank_intervals(ranks: NDArray[np.float64], scored: NDArray[np.bool_], confidence: float
                    ) -> tuple[list[int | None], list[int | None]]:
    """Each scored column's rank interval: the ``alpha / 2`` and ``1 - alpha / 2`` quantiles of its defined ranks
    over the resamples (``inverted_cdf``: a rank that occurred); ``None`` for a column not scored or never ranked.
    Columns ranked on every resample share one quantile call."""
    k = ranks.shape[1]
    low: list[int | None] = [None] * k
    high: list[int | None] = [None] * k
    alpha = 1.0 - confidence
    levels = [alpha / 2, 1 - alpha / 2]
    partial = np.isnan(ranks).any(axis=0)
    whole = np.flatnonzero(scored & ~partial)
    if len(whole):
        bounds = np.quantile(ranks[:, whole], levels, axis=0, method="inverted_cdf")
        for column, a, b in zip(whole.tolist(), bounds[0].tolist(), bounds[1].tolist(), strict=True):
            low[column], high[column] = int(a), int(b)
    for column in np.flatnonzero(scored & partial).tolist():
        defined = ranks[:, column][~np.isnan(ranks[:, column])]
        if len(defined):
            a, b = np.quantile(defined, levels, method="inverted_cdf")
            low[column], high[column] = int(a), int(b)
    return low, high


def _pair(better: str, worse: str, array: NDArray[np.float64], usable: NDArray[np.bool_],
          replicates: NDArray[np.float64], models: Sequence[str], confidence: float, direction: str
          ) -> dict[str, object]:
    """One adjacent pair: the difference (worse - better, in the direction: >= 0), its interval and support."""
    a, b = models.index(better), models.index(worse)
    sign = 1.0 if direction == LOWER_IS_BETTER else -1.0
    value_a = float(np.nanmean(array[:, a]))
    value_b = float(np.nanmean(array[:, b]))
    difference = sign * (replicates[:, b] - replicates[:, a])
    defined = difference[~np.isnan(difference)]
    both = int((usable[:, a] & usable[:, b]).sum())
    low, high = expanded_percentile(difference, both, confidence)
    support = float(np.mean(np.where(defined > 0, 1.0, np.where(defined == 0, 0.5, 0.0)))) if len(defined) else None
    return {"better": better, "worse": worse, "value_better": value_a, "value_worse": value_b,
            "difference": sign * (value_b - value_a), "difference_low": low, "difference_high": high, "n": both,
            "p_better": support}


# ------------------------------------------------------------------------------------------ Table 6


@dataclass(frozen=True)
class JudgeAgreement:
    """Inter-judge rank agreement of per-model values, one row per judge pair (:data:`AGREEMENT_COLUMNS`)."""

    table: pd.DataFrame
    n_resamples: int
    seed: int
    confidence: float

    def signature_fields(self) -> dict[str, str]:
        """Bootstrap unit, interval type, resamples and seed, and the permutation test's exactness bound."""
        return {"bootstrap": "items", "rho-interval": "percentile", "resamples": str(self.n_resamples),
                "bootstrap-seed": str(self.seed), "p": f"permutation(exact<={MAX_EXACT_MODELS} models)"}


def judge_agreement(terms: pd.DataFrame, *, judges: Sequence[str] | None = None,
                    n_resamples: int = DEFAULT_BOOTSTRAP, seed: int = DEFAULT_SEED,
                    confidence: float = DEFAULT_CONFIDENCE, n_permutations: int = 10_000) -> JudgeAgreement:
    """Table 6 with uncertainty: for every pair of judges, rho of their per-model values and what it rests on.

    Parameters
    ----------
    terms : DataFrame
        Long per-item terms of one metric: item_id, model, judge, term (NaN = left out), as
        :func:`empathy.stability.metric_terms` returns them.
    judges : sequence of str, optional
        The judges to pair (default: all, sorted by name).
    n_resamples, seed, confidence
        The item bootstrap of rho's percentile interval.
    n_permutations
        Monte Carlo orderings when more than :data:`empathy.agreement.MAX_EXACT_MODELS` models are compared.

    Returns
    -------
    JudgeAgreement
        Per pair: n_models (scored by both), n_items, spearman, ci_low/ci_high (items resampled together for
        both judges, the same resamples for every pair), p_exact and p_method (permutation test of rho over
        models; exact up to 10 models, otherwise Monte Carlo with p_se), kendall_tau_b and p_kendall (its
        permutation p-value, same method).
    """
    require_frame(terms, ("item_id", "model", "judge", "term"), "terms")
    _check_settings(n_resamples, confidence, seed)
    names = sorted(terms["judge"].astype(str).unique()) if judges is None else [str(j) for j in judges]
    unknown = [j for j in names if j not in set(terms["judge"].astype(str))]
    if unknown:
        raise ValueError(f"judge(s) {unknown} have no terms; judges are {sorted(terms['judge'].astype(str).unique())}")
    wide = terms.assign(judge=terms["judge"].astype(str)).pivot_table(index="item_id", columns=["judge", "model"],
                                                                       values="term", aggfunc="first", dropna=False)
    array = wide.to_numpy(dtype=float)
    replicates = cluster_means(array, n_resamples=n_resamples, seed=seed)
    rows = _agreement_rows(array, replicates, list(wide.columns), names, n_resamples=n_resamples, seed=seed,
                           confidence=confidence, n_permutations=n_permutations)
    return JudgeAgreement(pd.DataFrame(rows, columns=list(AGREEMENT_COLUMNS)), int(n_resamples), int(seed),
                          float(confidence))


def _agreement_rows(array: NDArray[np.float64], replicates: NDArray[np.float64] | None,
                    columns: Sequence[tuple[str, str]], judges: Sequence[str], *, n_resamples: int, seed: int,
                    confidence: float, n_permutations: int) -> list[dict[str, object]]:
    """One :data:`AGREEMENT_COLUMNS` row per pair of ``judges`` from an items x (judge, model) terms matrix and
    its bootstrap ``replicates`` (``None``: no resamples, so rho without an interval)."""
    values, _ = _column_values(array)
    alpha = 1.0 - confidence
    rows = []
    # each judge's column per model, found once: a pair then costs its models, not a scan of every column
    column_of: dict[str, dict[str, int]] = {}
    for position, (judge, model) in enumerate(columns):
        column_of.setdefault(judge, {}).setdefault(model, position)
    # the judges spearman_pairs pairs: those with a value, the first MAX_PAIRED_SCORERS of them
    scored = [j for j in judges if any(not np.isnan(values[p]) for p in column_of.get(j, {}).values())]
    if len(scored) > MAX_PAIRED_SCORERS:
        kept = set(scored[:MAX_PAIRED_SCORERS])
        judges = [j for j in judges if j in kept]
    for judge_a, judge_b in itertools.combinations(judges, 2):
        of_a, of_b = column_of.get(judge_a, {}), column_of.get(judge_b, {})
        models = sorted(of_a.keys() & of_b.keys())
        a = [of_a[m] for m in models]
        b = [of_b[m] for m in models]
        keep = [k for k in range(len(models)) if not (np.isnan(values[a[k]]) or np.isnan(values[b[k]]))]
        x, y = values[[a[k] for k in keep]], values[[b[k] for k in keep]]
        p_rho, p_method, p_se = _permutation_p(x, y, "spearman", n_permutations, seed)
        p_kendall = _permutation_p(x, y, "kendall", n_permutations, seed)[0]
        low = high = None
        if len(keep) >= 3 and replicates is not None:
            # a resample on which a model has no usable item gives NaN ranks and is dropped as undefined
            rhos = _rowwise_correlation(replicates[:, [a[k] for k in keep]], replicates[:, [b[k] for k in keep]],
                                        ranked=True)
            if len(rhos) >= n_resamples / 2:
                low, high = (float(v) for v in np.quantile(rhos, [alpha / 2, 1 - alpha / 2]))
        items = int((~np.isnan(array[:, [a[k] for k in keep] + [b[k] for k in keep]])).any(axis=1).sum())
        rows.append({"scorer_a": judge_a, "scorer_b": judge_b, "n_models": len(keep), "n_items": items,
                     "spearman": spearman(x, y), "ci_low": low, "ci_high": high, "p_exact": p_rho,
                     "p_method": p_method, "p_se": p_se, "kendall_tau_b": kendall_tau_b(x, y),
                     "p_kendall": p_kendall})
    return rows


def _permutation_p(x: NDArray[np.float64], y: NDArray[np.float64], statistic: str, n_permutations: int, seed: int
                   ) -> tuple[float | None, str, float | None]:
    """:func:`empathy.agreement.rank_correlation_test`'s two-sided p-value, method and Monte Carlo error, with an
    exact test's null distribution read from a cache (:func:`_exact_null`) instead of enumerated again.

    The exact null of either statistic is the distribution over every ordering of ``y`` against ``x``: it depends
    on the two sides' tie patterns alone (their sorted dense ranks), and its values are multiples of 1/4 (rho's
    numerator of half ranks) or whole numbers (tau's), exact in floating point; so the count of orderings at least
    as extreme as the observed value is the enumeration's own, while every table with the same number of models
    and ties (in practice: every table) enumerates the n! orderings once per process.
    """
    a, b = _clean_pairs(x, y)
    n = len(a)
    value = spearman(a, b) if statistic == "spearman" else kendall_tau_b(a, b)
    if n > MAX_EXACT_MODELS or value is None:
        test = rank_correlation_test(x, y, statistic=statistic, n_permutations=n_permutations, seed=seed)
        return test.p_value, test.method, test.mc_se
    numerator = _spearman_numerator(a, b) if statistic == "spearman" else _kendall_numerator(a, b)
    observed = float(numerator(np.arange(n, dtype=np.int64)[None, :])[0])
    tolerance = 1e-9 * max(1.0, abs(observed))  # as rank_correlation_test's
    values, counts = _exact_null(statistic, _tie_pattern(a), _tie_pattern(b))
    return int(counts[np.abs(values) >= abs(observed) - tolerance].sum()) / math.factorial(n), "exact", None


def _tie_pattern(values: NDArray[np.float64]) -> tuple[int, ...]:
    """The sorted dense ranks of ``values``: all an exact rank test's null distribution depends on."""
    return tuple(np.sort(np.unique(values, return_inverse=True)[1].ravel()).tolist())


@functools.lru_cache(maxsize=256)
def _exact_null(statistic: str, pattern_a: tuple[int, ...], pattern_b: tuple[int, ...]
                ) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """The distinct values of a rank statistic's numerator over every ordering of ``b`` against ``a`` (the
    orderings :func:`empathy.agreement.rank_correlation_test` enumerates) and how many orderings give each.

    Counted by dynamic programming over the set of ``b``'s positions already placed, instead of enumerating the
    n! orderings: rho's numerator ``sum_i ra_i rb_perm(i)`` adds one product per placed position (in quarters:
    twice a centred average rank times twice an average rank is a whole number), and tau's ``sum_{i<j}
    sign(a_i - a_j) sign(b_perm(i) - b_perm(j))`` is built one tie group of ``a`` at a time (in ``a``'s order: a
    group's positions meet only the earlier groups' values, each ``sign(b_new - b_earlier)``, and the group's own
    orderings all give the same value, so each set placed there counts ``g!`` times). At most ``n 2^(n-1)``
    (rho) or ``3^n`` (tau) steps: milliseconds for the 10 models an exact test allows.
    """
    a = np.asarray(pattern_a, dtype=float)
    b = np.asarray(pattern_b, dtype=float)
    n = len(a)
    # every set of placed positions at once: row ``mask`` of ``states`` counts the orderings of that set per value
    # (whole numbers -bound..bound); the sets of one size are extended together, by numpy, not one by one
    masks = np.arange(1 << n, dtype=np.int64)
    placed_bits = (masks[:, None] >> np.arange(n, dtype=np.int64)) & 1
    size_of = placed_bits.sum(axis=1)
    if statistic == "kendall":
        bound = n * (n - 1) // 2
        sign = np.sign(b[:, None] - b[None, :]).astype(np.int64)  # [j, i] = sign(b_j - b_i)
        gain = placed_bits @ sign.T  # [mask, j] = sum of sign(b_j - b_i) over the placed i
        states = _start(1 << n, bound)
        placed = 0
        for size in np.unique(a, return_counts=True)[1].tolist():
            sources = np.flatnonzero(size_of == placed)
            for chosen in itertools.combinations(range(n), size):
                chosen_mask = sum(1 << j for j in chosen)
                source = sources[(sources & chosen_mask) == 0]
                _add_rows(states, source, source | chosen_mask, gain[np.ix_(source, chosen)].sum(axis=1),
                          math.factorial(size))
            placed += size
        return _distinct(states[-1], bound, 1.0)
    twice_a = (2 * _average_ranks(a) - (n + 1)).astype(np.int64)  # 2 (ra - mean), whole numbers
    twice_b = (2 * _average_ranks(b)).astype(np.int64)
    bound = int(np.abs(twice_a).sum() * np.abs(twice_b).max(initial=0))
    states = _start(1 << n, bound)
    for position in range(n):
        sources = np.flatnonzero(size_of == position)
        for j in range(n):
            source = sources[(sources >> j & 1) == 0]
            shift = int(twice_a[position] * twice_b[j])  # the same for every set: moved as one block
            if shift >= 0:
                states[source | 1 << j, shift:] += states[source, :states.shape[1] - shift]
            else:
                states[source | 1 << j, :shift] += states[source, -shift:]
    return _distinct(states[-1], bound, 4.0)


def _start(n_masks: int, bound: int) -> NDArray[np.int64]:
    """Count arrays over the whole numbers ``-bound..bound``, one per set of placed positions: the empty set holds
    one count at 0, every other set none yet."""
    states = np.zeros((n_masks, 2 * bound + 1), dtype=np.int64)
    states[0, bound] = 1
    return states


def _add_rows(states: NDArray[np.int64], source: NDArray[np.int64], target: NDArray[np.int64],
              shift: NDArray[np.int64], weight: int) -> None:
    """Add each ``source`` row of ``states``, moved by its ``shift`` (times ``weight``), to its ``target`` row (the
    targets distinct, and none of them a source: each set grows into larger ones)."""
    if not len(source):
        return
    width = states.shape[1]
    column = np.arange(width, dtype=np.int64)[None, :] + shift[:, None]
    inside = (column >= 0) & (column < width)  # a count moved past the bound is one no ordering reaches
    rows = np.broadcast_to(target[:, None], column.shape)[inside]
    states[rows, column[inside]] += weight * states[source][inside]


def _distinct(counts: NDArray[np.int64], bound: int, scale: float) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """The values (whole numbers over ``scale``) with a positive count, ascending, and their counts."""
    where = np.flatnonzero(counts)
    return (where - bound) / scale, counts[where]


# ------------------------------------------------------------------------------------------ a results table

#: Columns of :attr:`TableIntervals.values`: the interval and rank interval of each (task, model, scorer, metric).
TABLE_VALUE_COLUMNS: tuple[str, ...] = ("task", "model", "scorer", "metric", "ci_low", "ci_high", "rank",
                                        "rank_low", "rank_high", "warning")
#: Columns of :attr:`TableIntervals.agreement`: Table 6 per (task, metric, judge pair).
TABLE_AGREEMENT_COLUMNS: tuple[str, ...] = ("task", "metric", *AGREEMENT_COLUMNS)
#: Columns of :attr:`TableIntervals.pairs`: each (task, scorer, metric)'s adjacent models, as :data:`PAIR_COLUMNS`.
TABLE_PAIR_COLUMNS: tuple[str, ...] = ("task", "scorer", "metric", *PAIR_COLUMNS)
#: One (task, metric) group's value rows, Table 6 rows and adjacent-pair rows.
_GroupRows = tuple[list[dict[str, object]], list[dict[str, object]], list[dict[str, object]]]


def _no_pairs() -> pd.DataFrame:
    return pd.DataFrame(columns=list(TABLE_PAIR_COLUMNS))


def _stable_order(codes: NDArray[np.int64], n_codes: int) -> NDArray[np.int64]:
    """``np.argsort(codes, kind="stable")`` for codes in ``[0, n_codes)``: with a few codes (the tasks), each code's
    positions in turn (a pass per code, no sort of a million rows)."""
    if n_codes > 16:
        return np.argsort(codes, kind="stable")
    return np.concatenate([np.flatnonzero(codes == code) for code in range(n_codes)] or [np.empty(0, dtype=np.intp)])


def _compact(codes: NDArray[np.int64]) -> tuple[int, NDArray[np.int64]]:
    """Codes renumbered 0..k-1 in their order (as ``np.unique(..., return_inverse=True)``, without sorting)."""
    present = np.zeros(int(codes.max(initial=-1)) + 1, dtype=bool)
    present[codes] = True
    return int(present.sum()), (np.cumsum(present) - 1)[codes]


@dataclass(frozen=True)
class TableIntervals:
    """Bootstrap intervals for a whole results table, from one set of item resamples per task.

    ``values`` (:data:`TABLE_VALUE_COLUMNS`): per (task, model, scorer, metric) the expanded percentile interval
    of the value and the rank interval among the models of its (task, scorer, metric), as
    :func:`model_intervals`, and :func:`empathy.agreement.interval_warning` of the interval (zero width, or
    fewer than :data:`empathy.agreement.MIN_INTERVAL_UNITS` usable items); ``agreement``
    (:data:`TABLE_AGREEMENT_COLUMNS`): per (task, metric) and pair of scorers rho's percentile interval, the
    exact permutation p over models and Kendall's tau-b, as :func:`judge_agreement`. ``n_resamples`` 0: no
    intervals (``None``), the p-values and tau-b all the same.
    """

    values: pd.DataFrame
    agreement: pd.DataFrame
    n_resamples: int
    seed: int
    confidence: float
    #: :data:`TABLE_PAIR_COLUMNS`: per (task, scorer, metric) the models adjacent in the values' order, the
    #: difference's interval and ``p_better`` (empty without resamples).
    pairs: pd.DataFrame = field(default_factory=_no_pairs)

    def beside(self, agreement: pd.DataFrame) -> pd.DataFrame:
        """The rows of a Table 6 (``task``, ``metric``, ``scorer_a``, ``scorer_b``, ``spearman``, ``n_models``, ...,
        e.g. :attr:`empathy.evaluate.MetricsReport.agreement`) in their order, each with this table's interval, exact
        p and tau-b of the same pair (missing where it has none): a left join on the pair, as the command line's
        JSON and the app's Agreement page show them."""
        return left_join(agreement, self.agreement.drop(columns=["spearman", "n_models"]),
                         ["task", "metric", "scorer_a", "scorer_b"])

    def signature_fields(self) -> dict[str, str]:
        """The bootstrap's design (unit, interval, resamples, seed) and the permutation test's exactness bound."""
        if not self.n_resamples:
            return {"bootstrap": "none", "p": f"permutation(exact<={MAX_EXACT_MODELS} models)"}
        return {"bootstrap": "items", "interval": INTERVAL, "resamples": str(self.n_resamples),
                "bootstrap-seed": str(self.seed), "p": f"permutation(exact<={MAX_EXACT_MODELS} models)"}


def table_intervals(terms: pd.DataFrame, *, n_resamples: int = DEFAULT_BOOTSTRAP, seed: int = DEFAULT_SEED,
                    confidence: float = DEFAULT_CONFIDENCE, n_permutations: int = 10_000) -> TableIntervals:
    """Intervals for every row of a results table and its Table 6, resampling the items of each task once.

    Parameters
    ----------
    terms : DataFrame
        Long per-item terms: task, item_id, model, scorer, metric, term (NaN where the metric leaves the term
        out), one row per (task, item, model, scorer, metric), e.g.
        :meth:`empathy.evaluate.MetricPlan.item_terms` of the judge metrics. The mean of a group's usable terms
        is its value (every metric here is a mean of per-item terms).
    n_resamples, seed, confidence
        Item resamples per task (0: none), the seed of ``np.random.default_rng`` and the nominal coverage.
    n_permutations
        Monte Carlo orderings of the rank tests beyond :data:`empathy.agreement.MAX_EXACT_MODELS` models.

    Returns
    -------
    TableIntervals
        Within a task, the items are resampled once for every (scorer, metric, model) column together (one
        matrix product per block of resamples), so the per-model intervals, the rank intervals and rho's interval
        rest on the same resamples. A (task, scorer, metric) group whose items are the task's items gets exactly
        :func:`model_intervals`' intervals (same seed, same items); a judge that scored fewer of the task's items
        resamples them within the task's resamples (its usable count varies between resamples; the expansion
        uses its usable count).

    Raises
    ------
    TypeError, ValueError
        For a malformed table, a row twice, or invalid settings.
    """
    require_frame(terms, ("task", "item_id", "model", "scorer", "metric", "term"), "terms")
    _check_table_settings(n_resamples, confidence, seed)
    return _layout_intervals(_TableLayout(terms),
                             _GroupSettings(int(n_resamples), int(seed), float(confidence), n_permutations))


def plan_intervals(plan: MetricPlan, *, metrics: Sequence[str] | None = None, n_resamples: int = DEFAULT_BOOTSTRAP,
                   seed: int = DEFAULT_SEED, confidence: float = DEFAULT_CONFIDENCE, n_permutations: int = 10_000
                   ) -> TableIntervals:
    """:func:`table_intervals` of ``plan.item_terms(metrics=metrics)``, laid out from the plan's integer codes.

    The same table (``tests/test_table_intervals.py`` checks it equal), without building the long table of names
    and factorising it again: what a ``metrics`` run or a plan of effective ratings asks for. ``metrics``: the
    metrics' names (default: every metric of the plan; a metric without per-item terms, LD, has none to lay out).
    """
    _check_table_settings(n_resamples, confidence, seed)
    wanted = None if metrics is None else {get_metric(name).name for name in metrics}
    layout, _, _ = _plan_terms(plan, wanted)
    return _layout_intervals(layout, _GroupSettings(int(n_resamples), int(seed), float(confidence), n_permutations))


def _layout_intervals(layout: _TableLayout, settings: _GroupSettings) -> TableIntervals:
    """The :class:`TableIntervals` of a laid-out terms table: each task's items resampled once."""
    parts = []
    with one_blas_thread():  # the resample products and the permutation tests' ones alike
        for task_table in layout.tasks:
            replicates = (cluster_means(task_table.array, n_resamples=settings.n_resamples, seed=settings.seed)
                          if settings.n_resamples else None)
            parts += [task_table.group_rows(group, task_table.array, replicates, settings)
                      for group in task_table.groups]
    return _assemble(parts, settings)


def _check_table_settings(n_resamples: int, confidence: float, seed: int) -> None:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 0:
        raise ValueError(f"n_resamples must be a whole number >= 0, got {n_resamples!r}")
    _check_settings(max(int(n_resamples), 1), confidence, seed)


@dataclass(frozen=True)
class _GroupSettings:
    n_resamples: int
    seed: int
    confidence: float
    n_permutations: int


def _assemble(parts: Sequence[_GroupRows], settings: _GroupSettings) -> TableIntervals:
    """The :class:`TableIntervals` of every (task, metric) group's value, Table 6 and pair rows, in order."""
    value_rows = [row for values, _, _ in parts for row in values]
    agreement_rows = [row for _, agreement, _ in parts for row in agreement]
    pair_rows = [row for _, _, pairs in parts for row in pairs]
    values = pd.DataFrame(value_rows, columns=list(TABLE_VALUE_COLUMNS)).astype(
        {c: "Int64" for c in ("rank", "rank_low", "rank_high")})
    return TableIntervals(values, pd.DataFrame(agreement_rows, columns=list(TABLE_AGREEMENT_COLUMNS)),
                          settings.n_resamples, settings.seed, settings.confidence,
                          pd.DataFrame(pair_rows, columns=list(TABLE_PAIR_COLUMNS)))


@dataclass(frozen=True)
class _MetricGroup:
    """One metric of one task: its columns of the task's terms matrix, and each scorer's among them."""

    metric: str
    direction: str
    columns: NDArray[np.int64]
    scorers: list[str]
    by_scorer: list[NDArray[np.int64]]


@dataclass
class _TaskTable:
    """One task of a long terms table: its items x (metric, scorer, model) matrix and where each row of the long
    table sits in it (``rows``: the long rows of the task, ``item_row`` / ``column`` their cell)."""

    task: object
    rows: NDArray[np.int64]
    item_row: NDArray[np.int64]
    column: NDArray[np.int64]
    array: NDArray[np.float64]
    column_models: list[str]
    column_scorers: list[str]
    groups: list[_MetricGroup]

    def group_rows(self, group: _MetricGroup, array: NDArray[np.float64], replicates: NDArray[np.float64] | None,
                   settings: _GroupSettings) -> _GroupRows:
        """One metric's value rows (every scorer's models), Table 6 rows and adjacent pairs (every scorer's), from
        the task's terms matrix and its bootstrap replicates (both with every column of the task; ``replicates``
        ``None``: no resamples, and no pairs)."""
        value_rows: list[dict[str, object]] = []
        pair_rows: list[dict[str, object]] = []
        for scorer, index in zip(group.scorers, group.by_scorer, strict=True):
            models = [self.column_models[k] for k in index]
            records = _model_records(array[:, index], None if replicates is None else replicates[:, index],
                                     models, settings.confidence, group.direction)
            if replicates is not None:
                scored = [r["model"] for r in records if r["value"] is not None]
                usable = ~np.isnan(array[:, index])
                pair_rows += [{"task": self.task, "scorer": scorer, "metric": group.metric,
                               **_pair(better, worse, array[:, index], usable, replicates[:, index], models,
                                       settings.confidence, group.direction)}
                              for better, worse in itertools.pairwise(scored)]
            value_rows += [{"task": self.task, "scorer": scorer, "metric": group.metric, "model": row["model"],
                            "ci_low": row["low"], "ci_high": row["high"], "rank": row["rank"],
                            "rank_low": row["rank_low"], "rank_high": row["rank_high"],
                            "warning": interval_warning({"value": ConfidenceInterval(
                                row["low"], row["high"], settings.confidence, settings.n_resamples, settings.seed,
                                row["n"])})}
                           for row in records]
        mine = group.columns
        agreement_rows = [{"task": self.task, "metric": group.metric, **row} for row in _agreement_rows(
            array[:, mine], None if replicates is None else replicates[:, mine],
            [(self.column_scorers[j], self.column_models[j]) for j in mine], group.scorers,
            n_resamples=settings.n_resamples, seed=settings.seed, confidence=settings.confidence,
            n_permutations=settings.n_permutations)]
        return value_rows, agreement_rows, pair_rows


class _TableLayout:
    """Where every row of a long terms table (task, item_id, model, scorer, metric, term) sits: per task (in order
    of appearance) an items x columns matrix, the items sorted by name (as a pivot orders them, so that one group's
    resamples are :func:`model_intervals`' own) and the columns by (metric, scorer, model) name."""

    def __init__(self, terms: pd.DataFrame) -> None:
        self.tasks: list[_TaskTable] = []
        if terms.empty:
            return
        # integer codes once for the whole table (factorising strings, not tuples of them, is what stays fast at a
        # million rows)
        task_code, tasks = pd.factorize(terms["task"])
        item_code, _ = pd.factorize(terms["item_id"].astype(str), sort=True)
        codes = [pd.factorize(terms[c].astype(str), sort=True) for c in ("metric", "scorer", "model")]

        def describe(row: int) -> str:
            return ", ".join(str(terms[c].iloc[row]) for c in ("task", "item_id", "model", "scorer", "metric"))

        self._build(task_code, list(tasks), item_code, [(code, np.asarray(names, dtype=object))
                                                        for code, names in codes],
                    _terms_array(terms[["term"]].to_numpy(), "terms")[:, 0], describe)

    @classmethod
    def of_codes(cls, task_code: NDArray[np.int64], tasks: Sequence[object], item_code: NDArray[np.int64],
                 codes: Sequence[tuple[NDArray[np.int64], NDArray[np.object_]]], term: NDArray[np.float64]
                 ) -> _TableLayout:
        """The layout of a terms table given as codes: the task of each row (numbered in order of appearance), its
        item (numbered in the order of the items' names), and its (metric, scorer, model) codes with their names
        (sorted)."""
        layout = cls.__new__(cls)
        layout.tasks = []
        layout._build(task_code, tasks, item_code, codes, term, lambda row: f"row {row}")
        return layout

    def _build(self, task_code: NDArray[np.int64], tasks: Sequence[object], item_code: NDArray[np.int64],
               codes: Sequence[tuple[NDArray[np.int64], NDArray[np.object_]]], term: NDArray[np.float64],
               describe: Callable[[int], str]) -> None:
        sizes = [len(names) for _, names in codes]
        column_key = (codes[0][0] * sizes[1] + codes[1][0]) * sizes[2] + codes[2][0]
        order = _stable_order(task_code, len(tasks))
        for task_index, rows in enumerate(np.split(order, np.cumsum(np.bincount(task_code,
                                                                                 minlength=len(tasks)))[:-1])):
            task = tasks[task_index]
            n_items, item_row = _compact(item_code[rows])
            keys = np.flatnonzero(np.bincount(column_key[rows], minlength=sizes[0] * sizes[1] * sizes[2]))
            column = np.searchsorted(keys, column_key[rows])
            cell = item_row * len(keys) + column
            if np.bincount(cell).max(initial=0) > 1:
                first = rows[np.flatnonzero(pd.Series(cell).duplicated().to_numpy())[0]]
                raise ValueError(f"terms hold ({describe(int(first))}) twice")
            array = np.full((n_items, len(keys)), np.nan)
            array[item_row, column] = term[rows]
            metric_of, rest = np.divmod(keys, sizes[1] * sizes[2])
            scorer_of, model_of = np.divmod(rest, sizes[2])
            scorer_names = codes[1][1]
            groups = []
            for metric_index in np.unique(metric_of):
                metric = str(codes[0][1][metric_index])
                mine = np.flatnonzero(metric_of == metric_index)
                # each scorer's columns by one stable sort of their codes: a scan per scorer is quadratic
                present, inverse = np.unique(scorer_of[mine], return_inverse=True)
                scorers = [str(scorer_names[k]) for k in present]
                by_scorer = np.split(mine[np.argsort(inverse, kind="stable")],
                                     np.cumsum(np.bincount(inverse, minlength=len(present)))[:-1])
                groups.append(_MetricGroup(metric, get_metric(metric).better, mine, scorers, by_scorer))
            self.tasks.append(_TaskTable(task, rows, item_row, column, array,
                                         [str(codes[2][1][k]) for k in model_of],
                                         [str(scorer_names[k]) for k in scorer_of], groups))


def _plan_terms(plan: MetricPlan, wanted: set[str] | None
                ) -> tuple[_TableLayout, NDArray[np.float64], list[tuple[MetricSlice, int]]]:
    """:meth:`empathy.evaluate.MetricPlan.item_terms` of the ``wanted`` metrics laid out as :func:`table_intervals`
    lays that table out, from the plan's integer codes (no table of a million names built and factorised again):
    the layout, the terms in item_terms' row order, and each slice with the offset of its rows there."""
    layout = plan.layout
    n_models = max(len(layout.models), 1)
    known = np.flatnonzero(layout.output_of >= 0)
    item_of_output = np.empty(len(layout.output_task), dtype=np.int64)
    item_of_output[layout.output_of[known]] = known // n_models
    item_name_code, _ = pd.factorize(pd.Index(layout.items).astype(str), sort=True)  # as a pivot sorts the items
    parts, offset = [], 0
    for part in plan.slices:
        if wanted is None or part.spec.name in wanted:
            parts.append((part, offset))
            offset += len(part.rows)
    if not offset:
        return _TableLayout(pd.DataFrame(columns=["task", "item_id", "model", "scorer", "metric", "term"])), \
            np.empty(0), parts
    # each slice's group columns as plain lists once: iterating a pandas column of strings costs more per value
    group_columns = [{c: part.groups[c].to_numpy(dtype=object).tolist() for c in ("task", "scorer", "model")}
                     for part, _ in parts]
    names = {column: sorted({str(v) for columns in group_columns for v in columns[column]} if column != "metric"
                            else {part.spec.name for part, _ in parts}) for column in ("metric", "scorer", "model")}
    lookup = {column: {name: code for code, name in enumerate(values)} for column, values in names.items()}
    task_codes: dict[object, int] = {}
    pieces: dict[str, list[NDArray[np.int64]]] = {c: [] for c in ("task", "item", "metric", "scorer", "model")}
    terms = []
    for (part, _), columns in zip(parts, group_columns, strict=True):
        # tasks numbered in order of first appearance (over the slices, then their groups)
        group_task = np.array([task_codes.setdefault(t, len(task_codes)) for t in columns["task"]], dtype=np.int64)
        pieces["task"].append(group_task[part.group])
        output = layout.unit_output[part.rows] if part.spec.judged else part.rows
        pieces["item"].append(item_name_code[item_of_output[output]])
        pieces["metric"].append(np.full(len(part.rows), lookup["metric"][part.spec.name], dtype=np.int64))
        for column in ("scorer", "model"):
            group_code = np.array([lookup[column][str(v)] for v in columns[column]], dtype=np.int64)
            pieces[column].append(group_code[part.group])
        values, status = plan.own_terms(part)  # computed once per plan (LiveMetrics reads them too)
        terms.append(np.where(status == OK, values, np.nan))
    task_code = np.concatenate(pieces["task"])
    # tasks numbered in order of first appearance over the rows, as pd.factorize numbers them
    appearance = pd.unique(task_code)
    renumber = np.empty(len(task_codes), dtype=np.int64)
    renumber[appearance] = np.arange(len(appearance))
    by_code = {code: task for task, code in task_codes.items()}
    term = np.concatenate(terms).astype(float)
    built = _TableLayout.of_codes(renumber[task_code], [by_code[int(c)] for c in appearance],
                                  np.concatenate(pieces["item"]),
                                  [(np.concatenate(pieces[c]), np.asarray(names[c], dtype=object))
                                   for c in ("metric", "scorer", "model")], term)
    return built, term, parts


# ------------------------------------------------------------------------------------------ kept current

class LiveIntervals:
    """:func:`table_intervals` of a metric plan's per-item terms, kept current as the overrides change.

    Built once per data set (and task scope, EGM reading, resamples and seed): the plan's terms are laid out as
    :func:`table_intervals` lays them out, each task's items are resampled once with the same draws, and the
    resamples x items count matrix is kept (in the narrowest unsigned type) with every column's per-resample sum
    and count of usable terms. :meth:`table` of a set of overrides then

    * locates the rating cells they change (:meth:`empathy.evaluate.MetricPlan.locate`) and recomputes the terms of
      those units alone, with the metric's own terms function;
    * for each (task, metric) holding a changed term, patches the base sums and counts of the changed columns by
      the changed items' resample counts times the change (``sums += counts[:, items] @ (new - old)``) and computes
      that metric's rows again (its models' intervals and rank intervals, its Table 6 rows);
    * takes every other (task, metric)'s rows from the base.

    The result depends on the set of overrides only, never on the order they came in (the base is patched for each
    call, a metric's rows are remembered per set of changed terms): the same as :func:`table_intervals` of the
    patched terms up to float rounding in the patched sums (exact for whole-number terms such as CA's). A decision
    therefore costs the changed units' terms, one metric's rows of one task, and no resampling. Safe to share
    between threads. :meth:`table` returns ``None`` when an override has no place in the plan (it would change a
    metric's scope: compute :func:`table_intervals` of the effective ratings' plan instead).
    """

    #: Sets of changed terms remembered per (task, metric): a few sessions with different overrides alternate.
    REMEMBERED = 4

    def __init__(self, plan: MetricPlan, *, metrics: Sequence[str] | None = None,
                 n_resamples: int = DEFAULT_BOOTSTRAP, seed: int = DEFAULT_SEED,
                 confidence: float = DEFAULT_CONFIDENCE, n_permutations: int = 10_000) -> None:
        _check_table_settings(n_resamples, confidence, seed)
        self.plan = plan
        self._settings = _GroupSettings(int(n_resamples), int(seed), float(confidence), n_permutations)
        wanted = None if metrics is None else {get_metric(name).name for name in metrics}
        self._layout, self._base_terms, self._parts = _plan_terms(plan, wanted)
        n_rows = len(self._base_terms)
        # a task and a column per row in the narrowest type that holds them (a few tasks, a few hundred columns):
        # 1 and 2 bytes instead of 4 over 1.8 million rows at 200,000 outputs x 3 judges
        width = max((table.array.shape[1] for table in self._layout.tasks), default=0)
        self._row_task = np.full(n_rows, -1, dtype=np.int8 if len(self._layout.tasks) < 127 else np.int32)
        self._row_item = np.zeros(n_rows, dtype=np.int32)
        self._row_column = np.zeros(n_rows, dtype=np.int16 if width < 32767 else np.int32)
        self._column_group: list[NDArray[np.int64]] = []
        self._sums: list[tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.integer]] | None] = []
        self._replicates: list[NDArray[np.float64] | None] = []
        self._base_parts: list[list[_GroupRows]] = []
        for index, task_table in enumerate(self._layout.tasks):
            self._row_task[task_table.rows] = index
            self._row_item[task_table.rows] = task_table.item_row
            self._row_column[task_table.rows] = task_table.column
            # held once, in the row arrays above (a million rows at 200,000 outputs)
            task_table.rows = task_table.item_row = task_table.column = np.empty(0, dtype=np.int64)
            column_group = np.zeros(task_table.array.shape[1], dtype=np.int64)
            for number, group in enumerate(task_table.groups):
                column_group[group.columns] = number
            self._column_group.append(column_group)
            kept = (_cluster_sums(task_table.array, self._settings.n_resamples, self._settings.seed,
                                  keep_counts=True) if self._settings.n_resamples else None)
            self._sums.append(kept)  # type: ignore[arg-type]
            replicates = None if kept is None else _means(kept[0], kept[1])
            self._replicates.append(replicates)
            self._base_parts.append([task_table.group_rows(group, task_table.array, replicates, self._settings)
                                     for group in task_table.groups])
        self._base = _assemble([p for parts in self._base_parts for p in parts], self._settings)
        self._remembered: dict[tuple[int, int], dict[bytes, tuple[list[dict[str, object]],
                                                                  list[dict[str, object]]]]] = {}
        self._lock = threading.Lock()

    @property
    def base(self) -> TableIntervals:
        """The intervals of the plan's own ratings (no override)."""
        return self._base

    def table(self, changes: pd.DataFrame | None) -> TableIntervals | None:
        """The intervals with ``changes`` (item_id, model, rater, dimension, value; later rows win) written into
        the plan's ratings, or ``None`` when a change has no place in the plan."""
        located = self.plan.locate(changes)
        if located is None:
            return None
        cells, written = located
        base = self.plan.values.reshape(-1)[cells]
        differs = base.view(np.int64) != written.view(np.int64)
        rows, terms = self.changed_terms(cells[differs], written[differs])
        if not len(rows):
            return self._base
        task_of = self._row_task[rows]
        group_of = np.zeros(len(rows), dtype=np.int64)
        for index in np.unique(task_of):
            mine = task_of == index
            group_of[mine] = self._column_group[index][self._row_column[rows[mine]]]
        touched = {(int(t), int(g)): np.flatnonzero((task_of == t) & (group_of == g))
                   for t, g in set(zip(task_of.tolist(), group_of.tolist(), strict=True))}
        parts = []
        for index, task_parts in enumerate(self._base_parts):
            for number, base_part in enumerate(task_parts):
                where = touched.get((index, number))
                parts.append(base_part if where is None else self._group(index, number, rows[where], terms[where]))
        return _assemble(parts, self._settings)

    def changed_terms(self, cells: NDArray[np.int64], written: NDArray[np.float64]
                      ) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """The rows of the plan's terms table (:meth:`empathy.evaluate.MetricPlan.item_terms` order) whose term
        differs from the base once the rating ``cells`` hold ``written``, ascending, and their terms (NaN: not
        usable); only the units of those cells have their terms computed (a grouped metric's slice: all of it)."""
        if not len(cells):
            return np.empty(0, dtype=np.int64), np.empty(0)
        values = self.plan.values.copy()
        values.reshape(-1)[cells] = written
        n_columns = max(values.shape[1], 1)
        units, columns = cells // n_columns, cells % n_columns
        found_rows, found_terms = [], []
        for part, offset in self._parts:
            read = [c for c in part.columns.values() if c >= 0]
            mine = np.unique(units[np.isin(columns, read)])
            if not len(mine) or not len(part.rows):
                continue
            found = np.minimum(np.searchsorted(part.rows, mine), len(part.rows) - 1)
            positions = found[part.rows[found] == mine]
            if not len(positions):
                continue
            if part.spec.grouped:
                positions = np.arange(len(part.rows))
                terms, status = part.terms(values)
            else:
                terms, status = part.spec.terms(part.term_inputs(values, positions))
            new = np.where(status == OK, terms, np.nan)
            old = self._base_terms[offset + positions]
            differs = ~((new == old) | (np.isnan(new) & np.isnan(old)))
            found_rows.append(offset + positions[differs])
            found_terms.append(new[differs])
        if not found_rows:
            return np.empty(0, dtype=np.int64), np.empty(0)
        rows = np.concatenate(found_rows)
        order = np.argsort(rows, kind="stable")
        return rows[order], np.concatenate(found_terms)[order]

    def _group(self, index: int, number: int, rows: NDArray[np.int64], terms: NDArray[np.float64]
               ) -> _GroupRows:
        """One (task, metric)'s rows with its terms at ``rows`` replaced by ``terms`` (remembered per such set)."""
        key = rows.tobytes() + terms.tobytes()
        with self._lock:
            remembered = self._remembered.setdefault((index, number), {})
            if key in remembered:
                return remembered[key]
        task_table = self._layout.tasks[index]
        group = task_table.groups[number]
        items, columns = self._row_item[rows].astype(np.int64), self._row_column[rows].astype(np.int64)
        array = task_table.array.copy()
        old = array[items, columns]
        array[items, columns] = terms
        replicates = self._replicates[index]
        kept = self._sums[index]
        if kept is not None and replicates is not None:
            sums, n, counts = kept
            mine = group.columns
            patched_sums, patched_n = sums[:, mine].copy(), n[:, mine].copy()
            local = np.searchsorted(mine, columns)
            change = np.nan_to_num(terms, nan=0.0) - np.nan_to_num(old, nan=0.0)
            usable_change = (~np.isnan(terms)).astype(float) - (~np.isnan(old)).astype(float)
            with one_blas_thread():
                for column in np.unique(local):
                    at = local == column
                    drawn = counts[:, items[at]].astype(float)
                    patched_sums[:, column] += drawn @ change[at]
                    patched_n[:, column] += drawn @ usable_change[at]
            replicates = replicates.copy()
            replicates[:, mine] = _means(patched_sums, patched_n)
        result = task_table.group_rows(group, array, replicates, self._settings)
        with self._lock:
            if len(remembered) >= self.REMEMBERED:
                remembered.pop(next(iter(remembered)))
            remembered[key] = result
        return result
