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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from empathy.agreement import (
    DEFAULT_BOOTSTRAP,
    DEFAULT_CONFIDENCE,
    DEFAULT_SEED,
    MAX_EXACT_MODELS,
    _blocks,
    _rowwise_correlation,
    kendall_tau_b,
    rank_correlation_test,
    spearman,
)
from empathy.io import require_frame
from empathy.metrics import _as_float_array
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
    usable = ~np.isnan(array)
    filled = np.where(usable, array, 0.0)
    parts = []
    for counts in resample_counts(array.shape[0], n_resamples, seed):
        sums = counts @ filled
        n = counts @ usable
        with np.errstate(invalid="ignore", divide="ignore"):
            parts.append(np.where(n > 0, sums / np.where(n > 0, n, 1.0), np.nan))
    return np.concatenate(parts) if parts else np.empty((0, array.shape[1]))


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
    # scipy's t quantile dominates an interval's cost; a table has few distinct n
    alpha = 1.0 - confidence
    low = float(stats.norm.cdf(math.sqrt(n / (n - 1.0)) * stats.t.ppf(alpha / 2.0, n - 1)))
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
    """Rank of each column per row (1 = best in ``direction``; ties share the best rank; NaN stays NaN)."""
    signed = values if direction == LOWER_IS_BETTER else -values
    frame = pd.DataFrame(signed)
    return frame.rank(axis=1, method="min").to_numpy(float)


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
    usable = ~np.isnan(array)
    n = usable.sum(axis=0)
    with np.errstate(invalid="ignore"):
        values = np.where(n > 0, np.nansum(array, axis=0) / np.maximum(n, 1), np.nan)
    replicates = cluster_means(array, n_resamples=n_resamples, seed=seed)
    ranks = _ranks(replicates, direction) if len(models) else replicates
    point_ranks = _ranks(values[None, :], direction)[0] if len(models) else values
    alpha = 1.0 - confidence
    rows = []
    for j, model in enumerate(models):
        low, high = expanded_percentile(replicates[:, j], int(n[j]), confidence) if n[j] else (None, None)
        column = ranks[:, j][~np.isnan(ranks[:, j])]
        rank_low, rank_high = ((int(np.quantile(column, alpha / 2, method="inverted_cdf")),
                                int(np.quantile(column, 1 - alpha / 2, method="inverted_cdf")))
                               if len(column) and not np.isnan(values[j]) else (None, None))
        rows.append({"model": model, "value": None if np.isnan(values[j]) else float(values[j]), "n": int(n[j]),
                     "low": low, "high": high, "rank": None if np.isnan(point_ranks[j]) else int(point_ranks[j]),
                     "rank_low": rank_low, "rank_high": rank_high})
    sign = 1.0 if direction == LOWER_IS_BETTER else -1.0
    rows.sort(key=lambda r: (r["value"] is None, sign * (r["value"] or 0.0), r["model"]))  # best first, unscored last
    table = pd.DataFrame(rows, columns=list(MODEL_COLUMNS)).astype({c: "Int64" for c in ("rank", "rank_low",
                                                                                        "rank_high")})
    scored = [r["model"] for r in rows if r["value"] is not None]
    pairs = [_pair(better, worse, array, usable, replicates, models, confidence, direction)
             for better, worse in itertools.pairwise(scored)]
    return ModelIntervals(table, pd.DataFrame(pairs, columns=list(PAIR_COLUMNS)), int(array.shape[0]),
                          int(n_resamples), int(seed), float(confidence), direction)


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
    columns = list(wide.columns)
    array = wide.to_numpy(dtype=float)
    replicates = cluster_means(array, n_resamples=n_resamples, seed=seed)
    counts = (~np.isnan(array)).sum(axis=0)
    values = np.where(counts > 0, np.nansum(array, axis=0) / np.maximum(counts, 1), np.nan)
    alpha = 1.0 - confidence
    rows = []
    for judge_a, judge_b in itertools.combinations(names, 2):
        models = sorted({m for j, m in columns if j == judge_a} & {m for j, m in columns if j == judge_b})
        a = [columns.index((judge_a, m)) for m in models]
        b = [columns.index((judge_b, m)) for m in models]
        keep = [k for k in range(len(models)) if not (np.isnan(values[a[k]]) or np.isnan(values[b[k]]))]
        x, y = values[[a[k] for k in keep]], values[[b[k] for k in keep]]
        rho_test = rank_correlation_test(x, y, n_permutations=n_permutations, seed=seed)
        tau_test = rank_correlation_test(x, y, statistic="kendall", n_permutations=n_permutations, seed=seed)
        low = high = None
        if len(keep) >= 3:
            # a resample on which a model has no usable item gives NaN ranks and is dropped as undefined
            rhos = _rowwise_correlation(replicates[:, [a[k] for k in keep]], replicates[:, [b[k] for k in keep]],
                                        ranked=True)
            if len(rhos) >= n_resamples / 2:
                low, high = (float(v) for v in np.quantile(rhos, [alpha / 2, 1 - alpha / 2]))
        items = int((~np.isnan(array[:, [a[k] for k in keep] + [b[k] for k in keep]])).any(axis=1).sum())
        rows.append({"scorer_a": judge_a, "scorer_b": judge_b, "n_models": len(keep), "n_items": items,
                     "spearman": spearman(x, y), "ci_low": low, "ci_high": high, "p_exact": rho_test.p_value,
                     "p_method": rho_test.method, "p_se": rho_test.mc_se, "kendall_tau_b": kendall_tau_b(x, y),
                     "p_kendall": tau_test.p_value})
    return JudgeAgreement(pd.DataFrame(rows, columns=list(AGREEMENT_COLUMNS)), int(n_resamples), int(seed),
                          float(confidence))
