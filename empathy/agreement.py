"""Agreement statistics: between judges at the model level (the paper's Table 6) and between raters per item.

* Inter-judge, model level (Section 4.4): for each metric, the Spearman correlation between two judges'
  per-model values over the models both scored (``scipy.stats.spearmanr``, ties get average ranks).
* Instance level, any dimension, any two raters: Spearman and Pearson (NumPy, as ``scipy.stats.spearmanr`` and
  ``pearsonr`` compute them, checked against them in the tests: no SciPy import), Cohen's kappa unweighted and
  quadratic-weighted (our implementation, checked against ``sklearn.metrics.cohen_kappa_score`` in the
  tests), percent agreement, and Krippendorff's alpha over all raters (the ``krippendorff`` package).
* Bootstrap confidence intervals: percentile intervals over items resampled with replacement, drawn from
  ``np.random.default_rng(seed)``; the seed goes into the signature. Where several rows share an item (the
  outputs of several models for one item) the bootstrap resamples *items* and keeps all their rows (cluster
  bootstrap), since those rows are not independent.
* Dimensions judged once per reference (:data:`empathy.metrics.REFERENCE_DIMENSIONS`: ``e_ref``, ``u_ref``)
  are compared once per item, not once per (item, model) row: the copies a rater's file repeats for every
  model are one judgement. When a rater's copies of one item differ (a judge called once per output), their
  mean is that rater's judgement of the reference.

Open cases: a correlation with fewer than :data:`MIN_PAIRS` pairs, or with a constant side, is ``None``
(undefined, not 0). Kappa, like the correlations, needs at least :data:`MIN_PAIRS` items, and is computed
only when both raters' values are whole numbers (ordinal or binary labels); for continuous scores (e.g.
affect intensity, or a crowd's fractional means) it is ``None``. Kappa is 1.0 when both raters use one and
the same single category on every item (perfect agreement with no chance correction possible) and ``None``
when expected agreement is 1 otherwise.
"""

from __future__ import annotations

import functools
import itertools
import math
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from empathy.blas import one_blas_thread
from empathy.codes import unique_keys
from empathy.metrics import REFERENCE_DIMENSIONS

#: Fewest paired observations for which a correlation is reported.
MIN_PAIRS = 3
#: Default number of bootstrap resamples (Efron & Tibshirani 1993 suggest >= 1000 for percentile CIs).
DEFAULT_BOOTSTRAP = 1000
#: Most index entries (resamples x sample size) drawn at once by :func:`bootstrap_ci`: 2^22 (32 MiB of int64),
#: so memory stays bounded however many resamples are asked for (issue 11: 10^9 resamples asked for 74.5 GiB).
BOOTSTRAP_BLOCK = 1 << 22
DEFAULT_CONFIDENCE = 0.95
DEFAULT_SEED = 0
#: Fewest resampled units (items, or pairs without clusters) a percentile bootstrap interval is shown without a
#: warning: below it the resamples repeat a handful of values and the interval understates the uncertainty.
MIN_INTERVAL_UNITS = 10
ALPHA_LEVELS: tuple[str, ...] = ("nominal", "ordinal", "interval", "ratio")


def _clean_pairs(x: ArrayLike, y: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    a = np.asarray(x, dtype=float)
    b = np.asarray(y, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"x and y must be 1-D of equal length, got {a.shape} and {b.shape}")
    keep = ~(np.isnan(a) | np.isnan(b))
    return a[keep], b[keep]


def _constant(values: NDArray[np.float64]) -> bool:
    return bool(len(values) == 0 or np.all(values == values[0]))


def _average_ranks(values: NDArray[np.float64]) -> NDArray[np.float64]:
    """1-based ranks with ties given their average rank, as ``scipy.stats.rankdata`` (method "average").

    Ranks are whole or half numbers, so the result is exactly scipy's; this form avoids scipy's per-call
    overhead, which dominated the live recompute's inter-judge table.
    """
    # one stable sort and the runs of equal values in it (NaNs, sorted last, are one run as in numpy.unique):
    # numpy.unique with its inverse and counts cost 54 us on five values, most of a rank correlation's time
    n = len(values)
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    different = ordered[1:] != ordered[:-1]
    different &= ~(np.isnan(ordered[1:]) & np.isnan(ordered[:-1]))
    starts = np.flatnonzero(np.concatenate(([True], different)))
    ends = np.append(starts[1:], n)
    ranks = np.empty(n)
    ranks[order] = np.repeat((starts + 1 + ends) / 2.0, ends - starts)  # the mean of positions start+1 .. end
    return ranks


def _average_ranks_by_row(values: NDArray[np.float64]) -> NDArray[np.float64]:
    """:func:`_average_ranks` of every row of a 2-D array at once (``scipy.stats.rankdata(values, axis=1)``, exactly:
    ranks are whole or half numbers), so that a bootstrap's rank correlations need no SciPy."""
    rows, n = values.shape
    order = np.argsort(values, axis=1, kind="stable")
    ordered = np.take_along_axis(values, order, axis=1)
    starts = np.ones((rows, n), dtype=bool)
    starts[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    ends = np.ones((rows, n), dtype=bool)
    ends[:, :-1] = starts[:, 1:]
    position = np.arange(1, n + 1, dtype=float)
    first = np.maximum.accumulate(np.where(starts, position, 0.0), axis=1)
    last = np.minimum.accumulate(np.where(ends, position, n + 1.0)[:, ::-1], axis=1)[:, ::-1]
    ranks = np.empty((rows, n))
    np.put_along_axis(ranks, order, (first + last) / 2.0, axis=1)
    return ranks


def spearman(x: ArrayLike, y: ArrayLike) -> float | None:
    """Spearman's rho over the pairs where both values are present; ``None`` when undefined."""
    a, b = _clean_pairs(x, y)
    if len(a) < MIN_PAIRS or _constant(a) or _constant(b):
        return None
    # Pearson on average ranks is Spearman's rho with ties (as scipy.stats.spearmanr); the direct form
    # is several times faster than scipy's or numpy.corrcoef's, which matters when the app recomputes every
    # correlation after an override and a results table computes one per pair of judges and resample
    ra = _average_ranks(a)
    rb = _average_ranks(b)
    ra -= ra.mean()
    rb -= rb.mean()
    return float(np.clip(np.dot(ra, rb) / math.sqrt(float(np.dot(ra, ra)) * float(np.dot(rb, rb))), -1.0, 1.0))


def pearson(x: ArrayLike, y: ArrayLike) -> float | None:
    """Pearson's r over the pairs where both values are present; ``None`` when undefined."""
    a, b = _clean_pairs(x, y)
    if len(a) < MIN_PAIRS or _constant(a) or _constant(b):
        return None
    # centred, each side scaled by its largest deviation before its norm (no overflow for huge values), clipped
    # to [-1, 1] (as scipy.stats.pearsonr, which tests/test_agreement.py checks it against); in NumPy: importing
    # scipy.stats costs 60 MiB of a server's memory, which Relabel's human agreement would otherwise bring
    # (issue 25)
    deviations = []
    for values in (a, b):
        centred = values - values.mean()
        largest = np.max(np.abs(centred))
        deviations.append(centred / (largest * np.linalg.norm(centred / largest)))
    return float(np.clip(np.dot(deviations[0], deviations[1]), -1.0, 1.0))


def percent_agreement(x: ArrayLike, y: ArrayLike) -> float | None:
    """Share of items on which both raters gave exactly the same value."""
    a, b = _clean_pairs(x, y)
    if len(a) == 0:
        return None
    return float(np.mean(a == b))


def _whole_numbers(values: NDArray[np.float64]) -> bool:
    return bool(np.all(np.isclose(values, np.round(values))))


def cohen_kappa(x: ArrayLike, y: ArrayLike, *, weights: str | None = None) -> float | None:
    """Cohen's kappa for two raters' ordinal or binary labels.

    ``weights`` is ``None`` (unweighted), ``"linear"`` or ``"quadratic"``; the categories are the union of
    both raters' observed values, in numeric order (as ``sklearn.metrics.cohen_kappa_score``).
    Returns ``None`` for non-integer values or fewer than :data:`MIN_PAIRS` pairs.
    """
    if weights not in (None, "linear", "quadratic"):
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    a, b = _clean_pairs(x, y)
    if len(a) < MIN_PAIRS or not (_whole_numbers(a) and _whole_numbers(b)):
        return None
    categories = np.unique(np.concatenate([a, b]))
    k = len(categories)
    if k == 1:
        return 1.0
    # the same counts as a loop over the pairs, in one pass (a Python loop cost 0.4 s at 200,000 pairs)
    rows = np.searchsorted(categories, a)
    columns = np.searchsorted(categories, b)
    observed = np.bincount(rows * k + columns, minlength=k * k).reshape(k, k).astype(float)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / observed.sum()
    i, j = np.indices((k, k))
    if weights is None:
        w = (i != j).astype(float)
    elif weights == "linear":
        w = np.abs(i - j).astype(float)
    else:
        w = ((i - j) ** 2).astype(float)
    denominator = float((w * expected).sum())
    if denominator == 0:
        return None
    return float(1.0 - (w * observed).sum() / denominator)


def krippendorff_alpha(reliability_data: ArrayLike, level: str = "interval") -> float | None:
    """Krippendorff's alpha of a raters x units matrix (NaN = no rating).

    ``None`` when fewer than two units have two or more ratings, or when all values are identical. The
    nominal, ordinal and ratio levels compute the ``krippendorff`` package's coincidences, expected
    coincidences and distances (:func:`_coincidence_alpha`, memory linear in the units); the interval level uses
    the closed form of :func:`_interval_alpha` (the same value), because the package builds a units x distinct
    values table, which continuous scores (every value distinct) make quadratic: 10^6 ratings asked for
    37 GiB.
    """
    if level not in ALPHA_LEVELS:
        raise ValueError(f"level must be one of {ALPHA_LEVELS}, got {level!r}")
    data = np.asarray(reliability_data, dtype=float)
    if data.ndim != 2:
        raise ValueError(f"reliability_data must be raters x units, got shape {data.shape}")
    pairable = (~np.isnan(data)).sum(axis=0) >= 2
    if pairable.sum() < 2:
        return None
    values = data[:, pairable]
    if _constant(values[~np.isnan(values)]):
        return None
    if level == "interval":
        return _interval_alpha(values)
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore")
        alpha = _coincidence_alpha(values, level)
    return None if alpha is None or math.isnan(alpha) else float(alpha)


def _coincidence_alpha(values: NDArray[np.float64], level: str) -> float:
    """Nominal, ordinal or ratio alpha of pairable units (raters x units, NaN = none), as ``krippendorff.alpha``.

    The same coincidence matrix, expected coincidences and distances as the package (Krippendorff 2011), but
    the coincidences are summed as ``counts.T @ (counts / (m - 1))``: the package holds a units x values x values
    array first (290 MiB for 200,000 outputs on a 0-10 count scale), this a units x values table of counts.
    """
    present = ~np.isnan(values)
    domain, codes = np.unique(values[present], return_inverse=True)
    unit = np.broadcast_to(np.arange(values.shape[1]), values.shape)[present]
    counts = np.bincount(unit * len(domain) + codes, minlength=values.shape[1] * len(domain)).reshape(
        values.shape[1], len(domain)).astype(float)
    weighted = counts / (np.maximum(counts.sum(axis=1), 2.0) - 1.0)[:, None]
    observed = counts.T @ weighted - np.diag(weighted.sum(axis=0))
    n_v = observed.sum(axis=0)
    expected = (np.outer(n_v, n_v) - np.diag(n_v)) / (n_v.sum() - 1.0)
    distance = _alpha_distances(domain, n_v, level)
    return float(1.0 - (observed * distance).sum() / (expected * distance).sum())


def _alpha_distances(domain: NDArray[np.float64], n_v: NDArray[np.float64], level: str) -> NDArray[np.float64]:
    """Krippendorff's squared distance of every pair of values of ``domain`` (sorted) at ``level``."""
    v1, v2 = domain[:, None], domain[None, :]
    if level == "nominal":
        return (v1 != v2).astype(float)
    if level == "ratio":
        total = v1 + v2
        return np.divide(v1 - v2, total, out=np.zeros(np.broadcast(v1, v2).shape), where=total != 0) ** 2
    # ordinal: the values counted from one rank to the other, less half of each end's count
    index = np.arange(len(domain))
    low, high = np.minimum(index[:, None], index[None, :]), np.maximum(index[:, None], index[None, :])
    cumulative = np.concatenate([[0.0], np.cumsum(n_v)])
    between = cumulative[high + 1] - cumulative[low]
    return (between - (n_v[low] + n_v[high]) / 2.0) ** 2


def _interval_alpha(values: NDArray[np.float64]) -> float | None:
    """Interval alpha of pairable units (raters x units, NaN = none) in time and memory linear in the ratings.

    Krippendorff (2011), with the squared difference as the interval metric: ``alpha = 1 - D_o / D_e``,
    ``D_o = (1/n) sum_u sum_{i != j in u} (v_i - v_j)^2 / (m_u - 1)`` and
    ``D_e = (1/(n (n-1))) sum_{i != j} (v_i - v_j)^2`` over all n pairable values. A sum of squared
    differences over the ordered pairs of m values is ``2 (m sum v^2 - (sum v)^2)``, so each unit needs only
    its count, sum and sum of squares. Values are centred first, which keeps those sums exact enough.
    """
    present = ~np.isnan(values)
    centred = np.where(present, values - np.nanmean(values), 0.0)
    m = present.sum(axis=0).astype(float)
    s1 = centred.sum(axis=0)
    s2 = (centred * centred).sum(axis=0)
    n = m.sum()
    observed = np.sum(2.0 * (m * s2 - s1 * s1) / (m - 1.0)) / n
    expected = 2.0 * (n * s2.sum() - s1.sum() ** 2) / (n * (n - 1.0))
    if expected <= 0.0:
        return None
    return float(1.0 - observed / expected)


def _rowwise_correlation(x: NDArray[np.float64], y: NDArray[np.float64], *, ranked: bool) -> NDArray[np.float64]:
    """Pearson (or, on average ranks, Spearman) correlation of each row pair; rows where it is undefined
    (fewer than MIN_PAIRS columns, a constant side) are dropped, as :func:`spearman` returns ``None`` there."""
    if x.shape[1] < MIN_PAIRS:
        return np.array([])
    if ranked:
        x = _average_ranks_by_row(x)
        y = _average_ranks_by_row(y)
    xc = x - x.mean(axis=1, keepdims=True)
    yc = y - y.mean(axis=1, keepdims=True)
    sx = np.sqrt((xc * xc).sum(axis=1))
    sy = np.sqrt((yc * yc).sum(axis=1))
    defined = (np.ptp(x, axis=1) > 0) & (np.ptp(y, axis=1) > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (xc * yc).sum(axis=1) / (sx * sy)
    return np.clip(r[defined], -1.0, 1.0)


@dataclass(frozen=True)
class ConfidenceInterval:
    """A percentile bootstrap interval, with what it rests on (``n_units``: the items, or pairs, resampled)."""

    low: float | None
    high: float | None
    confidence: float
    n_resamples: int
    seed: int
    n_units: int = 0

    @property
    def zero_width(self) -> bool:
        """Whether the interval is a single point (every resample gave the same value)."""
        return self.low is not None and self.high is not None and math.isclose(self.low, self.high, rel_tol=0,
                                                                                 abs_tol=1e-12)


def interval_warning(intervals: Mapping[str, ConfidenceInterval], unit: str = "items") -> str | None:
    """A warning for intervals a reader should not take at face value, or ``None``.

    Flags (issue 27) a zero-width interval (``[0, 0]``: every resample gave one value, which says nothing about
    the uncertainty) and intervals resting on fewer than :data:`MIN_INTERVAL_UNITS` units. ``intervals`` names
    each interval of one row (e.g. ``{"bias": ..., "slope": ...}``); intervals that are not shown (``None``)
    are not flagged.
    """
    shown = {name: ci for name, ci in intervals.items() if ci.low is not None and ci.high is not None}
    if not shown:
        return None
    problems = [f"{name} interval [{ci.low:.3g}, {ci.high:.3g}] has zero width" for name, ci in shown.items()
                if ci.zero_width]
    n_units = min(ci.n_units for ci in shown.values())
    if n_units < MIN_INTERVAL_UNITS:
        plural = len(shown) > 1
        problems.append(f"{' and '.join(shown)} interval{'s rest' if plural else ' rests'} on {n_units} {unit} "
                        f"(fewer than {MIN_INTERVAL_UNITS})")
    if not problems:
        return None
    return "; ".join(problems) + ": the percentile bootstrap understates the uncertainty here"


def bootstrap_ci(statistic: Callable[[NDArray[np.float64], NDArray[np.float64]], float | None],
                 x: ArrayLike, y: ArrayLike, *, n_resamples: int = DEFAULT_BOOTSTRAP,
                 confidence: float = DEFAULT_CONFIDENCE, seed: int = DEFAULT_SEED,
                 clusters: ArrayLike | None = None) -> ConfidenceInterval:
    """Percentile bootstrap CI of ``statistic(x, y)``, resampling item pairs with replacement.

    ``clusters`` (optional, one label per pair, e.g. the item of each (item, model) row) makes it a cluster
    bootstrap: each resample draws as many clusters as there are, with replacement, and takes every pair of
    each drawn cluster. Pairs with a missing side are dropped first, with their labels. When every cluster
    holds one pair this is the ordinary bootstrap, with the same draws.

    Resamples on which the statistic is undefined are dropped; the interval is ``None`` if fewer than half
    of them are defined.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be positive, got {n_resamples}")
    a, b = _clean_pairs(x, y)
    cluster_codes = _cluster_codes(x, y, clusters)
    rng = np.random.default_rng(seed)
    if len(a) == 0:
        return ConfidenceInterval(None, None, confidence, n_resamples, seed)
    n_units = int(cluster_codes.max()) + 1 if cluster_codes is not None else len(a)
    if cluster_codes is not None and int(cluster_codes.max()) + 1 < len(a):
        defined = _cluster_resamples(statistic, a, b, cluster_codes, n_resamples, rng)
    else:
        parts = []
        for rows in _blocks(n_resamples, len(a)):
            indices = rng.integers(0, len(a), size=(rows, len(a)))
            if statistic is spearman or statistic is pearson:
                parts.append(_rowwise_correlation(a[indices], b[indices], ranked=statistic is spearman))
            else:
                parts.append(_defined([statistic(a[row], b[row]) for row in indices]))
        defined = np.concatenate(parts)
    if len(defined) < n_resamples / 2:
        return ConfidenceInterval(None, None, confidence, n_resamples, seed, n_units)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(defined, [tail, 100 - tail])
    return ConfidenceInterval(float(low), float(high), confidence, n_resamples, seed, n_units)


def _defined(values: list[float | None]) -> NDArray[np.float64]:
    return np.array([v for v in values if v is not None and not math.isnan(v)], dtype=float)


def _cluster_codes(x: ArrayLike, y: ArrayLike, clusters: ArrayLike | None) -> NDArray[np.int64] | None:
    """Codes 0..k-1 of the cluster of each pair kept by :func:`_clean_pairs` (``None`` without clusters)."""
    if clusters is None:
        return None
    labels = np.asarray(clusters, dtype=object)
    a = np.asarray(x, dtype=float)
    if labels.shape != a.shape:
        raise ValueError(f"clusters must have one label per pair: {labels.shape} vs {a.shape}")
    keep = ~(np.isnan(a) | np.isnan(np.asarray(y, dtype=float)))
    codes, _ = pd.factorize(pd.Series(labels[keep]))
    return codes.astype(np.int64)


def _cluster_resamples(statistic: Callable[[NDArray[np.float64], NDArray[np.float64]], float | None],
                       a: NDArray[np.float64], b: NDArray[np.float64], codes: NDArray[np.int64],
                       n_resamples: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """The statistic on each cluster resample (clusters drawn with replacement, all their pairs taken)."""
    n_clusters = int(codes.max()) + 1
    order = np.argsort(codes, kind="stable")
    sizes = np.bincount(codes, minlength=n_clusters)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    values = []
    for rows in _blocks(n_resamples, n_clusters):
        for drawn in rng.integers(0, n_clusters, size=(rows, n_clusters)):
            values.append(_cluster_statistic(statistic, a, b, order, sizes, starts, drawn))
    return _defined(values)


def _blocks(n_resamples: int, width: int) -> list[int]:
    """Resamples per block so that one block's index matrix holds at most :data:`BOOTSTRAP_BLOCK` entries.

    Memory then stays bounded whatever ``n_resamples`` times the sample size; a single block (every case up to
    that size) draws exactly what one call would.
    """
    per_block = max(1, BOOTSTRAP_BLOCK // max(1, width))
    full, rest = divmod(n_resamples, per_block)
    return [per_block] * full + ([rest] if rest else [])


def _cluster_statistic(statistic: Callable[[NDArray[np.float64], NDArray[np.float64]], float | None],
                       a: NDArray[np.float64], b: NDArray[np.float64], order: NDArray[np.int64],
                       sizes: NDArray[np.int64], starts: NDArray[np.int64], drawn: NDArray[np.int64]
                       ) -> float | None:
    """The statistic on one cluster resample: every pair of each drawn cluster."""
    lengths = sizes[drawn]
    offsets = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    rows = order[np.repeat(starts[drawn], lengths) + offsets]
    return statistic(a[rows], b[rows])


def _rater_matrix(ratings: pd.DataFrame, dimension: str) -> pd.DataFrame:
    """Units x raters matrix of one dimension's values (NaN where absent).

    Units are (item_id, model) rows, or items for a dimension judged once per reference
    (:data:`empathy.metrics.REFERENCE_DIMENSIONS`), whose per-model copies collapse to their mean.
    """
    chosen = (ratings["dimension"] == dimension).to_numpy(dtype=bool, na_value=False)
    if dimension in REFERENCE_DIMENSIONS:
        subset = ratings.loc[chosen, ["item_id", "rater", "value"]]
        return subset.groupby(["item_id", "rater"], sort=True)["value"].mean().unstack("rater")
    matrix = _unit_rater_matrix(ratings, chosen)
    if matrix is None:
        subset = ratings.loc[chosen, ["item_id", "model", "rater", "value"]]
        matrix = subset.set_index(["item_id", "model", "rater"])["value"].unstack("rater")
    return matrix


def _unit_rater_matrix(ratings: pd.DataFrame, chosen: NDArray[np.bool_]) -> pd.DataFrame | None:
    """``ratings[chosen].set_index(["item_id", "model", "rater"])["value"].unstack("rater")`` from each key's
    sorted codes (a units x raters array filled in place), one key column of the chosen rows at a time, instead of
    a copy of the rows, a three-level index of them and its reshaping: the same frame for a third of the memory
    (600,000 rows at 200,000 outputs: 67 -> ~25 MiB at the top). ``None`` where unstack is left to decide: no
    chosen row, values not float (unstack keeps an integer column whole where no cell is missing), a missing key,
    or a repeated cell (unstack's error)."""
    if not chosen.any() or ratings["value"].dtype != np.float64:
        return None
    codes, names = [], []
    for column in ("item_id", "model", "rater"):
        code, uniques = ratings[column][chosen].factorize(sort=True)
        if (code < 0).any():
            return None
        codes.append(code.astype(np.int64))
        names.append(uniques)
    items, models, raters = names
    # units in (item, model) order, as unstack sorts its index (marked, then numbered, where that stays linear)
    units, unit_rank = unique_keys(codes[0] * len(models) + codes[1], len(items) * len(models))
    cell = unit_rank * len(raters) + codes[2]
    if np.bincount(cell).max() > 1:
        return None
    values = np.full((len(units), len(raters)), np.nan)
    values.reshape(-1)[cell] = ratings["value"].to_numpy()[chosen]
    index = pd.MultiIndex(levels=[items, models], codes=[units // len(models), units % len(models)],
                          names=["item_id", "model"], verify_integrity=False)
    return pd.DataFrame(values, index=index, columns=pd.Index(raters, name="rater"))


def _unit_items(matrix: pd.DataFrame) -> NDArray[np.object_] | None:
    """The item of each unit of a :func:`_rater_matrix` when units are (item, model) rows, else ``None``."""
    if isinstance(matrix.index, pd.MultiIndex):
        return np.asarray(matrix.index.get_level_values("item_id"), dtype=object)
    return None


def default_alpha_level(values: NDArray[np.float64], dimension: str) -> str:
    """``nominal`` for binary labels, ``ordinal`` for other whole-number scales, ``interval`` otherwise."""
    present = values[~np.isnan(values)]
    if len(present) and set(np.unique(present)) <= {0.0, 1.0}:
        return "nominal"
    if len(present) and _whole_numbers(present):
        return "ordinal"
    return "interval"


def pair_row(x: ArrayLike, y: ArrayLike, *, bootstrap: int = 0, seed: int = DEFAULT_SEED,
             confidence: float = DEFAULT_CONFIDENCE, clusters: ArrayLike | None = None) -> dict[str, object]:
    """One row of :func:`pairwise_agreement` (without the names) for two raters' values per unit (NaN = none):
    n, spearman, pearson, kappa, kappa_quadratic, percent_agreement and, with ``bootstrap > 0``, spearman_low,
    spearman_high and warning (``clusters``: each unit's item, for the cluster bootstrap)."""
    a, b = _clean_pairs(x, y)
    row: dict[str, object] = {
        "n": len(a), "spearman": spearman(a, b), "pearson": pearson(a, b),
        "kappa": cohen_kappa(a, b), "kappa_quadratic": cohen_kappa(a, b, weights="quadratic"),
        "percent_agreement": percent_agreement(a, b),
    }
    if bootstrap:
        ci = bootstrap_ci(spearman, x, y, n_resamples=bootstrap, seed=seed, confidence=confidence,
                          clusters=clusters)
        row["spearman_low"], row["spearman_high"] = ci.low, ci.high
        row["warning"] = interval_warning({"spearman": ci})
    return row


def pairwise_agreement(ratings: pd.DataFrame, *, dimensions: Sequence[str] | None = None,
                       raters: Sequence[str] | None = None, bootstrap: int = 0,
                       seed: int = DEFAULT_SEED, confidence: float = DEFAULT_CONFIDENCE) -> pd.DataFrame:
    """Instance-level agreement of every pair of raters on every dimension.

    Columns: dimension, rater_a, rater_b, n (units both rated: (item, model) rows, or items for a dimension
    judged once per reference), spearman, pearson, kappa, kappa_quadratic, percent_agreement, and with
    ``bootstrap > 0`` also spearman_low / spearman_high (percentile CI; a cluster bootstrap over items when
    several rows share an item) and warning (:func:`interval_warning`: a zero-width interval or fewer than
    :data:`MIN_INTERVAL_UNITS` items; ``None`` otherwise). Past :data:`MAX_PAIRED_SCORERS` raters on a dimension,
    only the first in name order are paired.
    """
    rows = []
    chosen = dimensions if dimensions is not None else sorted(ratings["dimension"].unique())
    for dimension in chosen:
        matrix = _rater_matrix(ratings, dimension)
        names = [r for r in sorted(matrix.columns) if raters is None or r in raters][:MAX_PAIRED_SCORERS]
        for rater_a, rater_b in itertools.combinations(names, 2):
            rows.append({"dimension": dimension, "rater_a": rater_a, "rater_b": rater_b,
                         **pair_row(matrix[rater_a].to_numpy(), matrix[rater_b].to_numpy(), bootstrap=bootstrap,
                                    seed=seed, confidence=confidence, clusters=_unit_items(matrix))})
    columns = ["dimension", "rater_a", "rater_b", "n", "spearman", "pearson", "kappa", "kappa_quadratic",
               "percent_agreement"] + (["spearman_low", "spearman_high", "warning"] if bootstrap else [])
    return pd.DataFrame(rows, columns=columns)


def krippendorff_by_dimension(ratings: pd.DataFrame, *, level: str | None = None,
                              dimensions: Sequence[str] | None = None) -> pd.DataFrame:
    """Krippendorff's alpha over all raters, per dimension.

    ``level`` defaults per dimension to :func:`default_alpha_level`. ``dimensions``: only these (those present),
    read from ``ratings`` in place: the same rows as of ``ratings`` cut to them first, without the copy. Columns:
    dimension, alpha, level, n_raters, n_units.
    """
    rows = []
    present = ratings["dimension"].unique()
    for dimension in sorted(present if dimensions is None else set(present) & set(dimensions)):
        matrix = _rater_matrix(ratings, dimension)
        data = matrix.to_numpy(dtype=float).T
        chosen = level or default_alpha_level(data.ravel(), dimension)
        rows.append({"dimension": dimension, "alpha": krippendorff_alpha(data, chosen), "level": chosen,
                     "n_raters": matrix.shape[1], "n_units": matrix.shape[0]})
    return pd.DataFrame(rows, columns=["dimension", "alpha", "level", "n_raters", "n_units"])


class LiveAlpha:
    """Krippendorff's alpha of one dimension of a data set's ratings, kept for overrides: the judges' units x raters
    matrix is built once, and :meth:`row` of a set of overrides sets their cells in a copy of it, instead of
    building the effective ratings and factorising their key columns again after every decision (0.2 s of
    Agreement's rerun at 200,000 outputs). ``row`` equals :func:`krippendorff_by_dimension` of
    :class:`empathy.review.EffectiveRatings` under the same overrides (``tests/test_live_alpha.py``), or is
    ``None`` where it cannot say the same without the full computation: a dimension judged once per reference
    (its per-model copies are averaged), a matrix the unstack decides (values not float, a repeated or missing
    key), an override of an output or rater the dimension's ratings do not have (a new unit or column).
    """

    def __init__(self, ratings: pd.DataFrame, dimension: str, *, level: str | None = None) -> None:
        self.dimension = dimension
        self.level = level
        self._ready = False
        if dimension in REFERENCE_DIMENSIONS or not len(ratings):
            return
        chosen = (ratings["dimension"] == dimension).to_numpy(dtype=bool, na_value=False)
        matrix = _unit_rater_matrix(ratings, chosen)
        if matrix is None:
            return
        self._ready = True
        self._values = matrix.to_numpy(dtype=float, copy=True)  # units x raters, read-only: each row() copies it
        self._values.flags.writeable = False
        index = matrix.index
        self._items, self._models = pd.Index(index.levels[0]), pd.Index(index.levels[1])
        self._units = np.asarray(index.codes[0], dtype=np.int64) * len(self._models) + np.asarray(index.codes[1])
        self._raters = pd.Index(matrix.columns)
        distinct, counts = np.unique(self._values[~np.isnan(self._values)], return_counts=True)
        self._counts = dict(zip(distinct.tolist(), counts.tolist(), strict=True))

    @property
    def ready(self) -> bool:
        """Whether :meth:`row` can answer without the full computation (see the class)."""
        return self._ready

    def row(self, overrides: pd.DataFrame | None) -> dict[str, object] | None:
        """The dimension's row of :func:`krippendorff_by_dimension` (dimension, alpha, level, n_raters, n_units) with
        ``overrides`` (the applied overrides of this dimension: ``item_id``, ``model``, ``rater``, ``value``; the
        last of a repeated key wins, as in the effective ratings) set in the judges' matrix; ``None`` when it
        cannot be found so (see the class)."""
        if not self._ready:
            return None
        values = self._values.copy()
        counts = dict(self._counts)
        if overrides is not None and len(overrides):
            table = overrides.drop_duplicates(["item_id", "model", "rater"], keep="last")
            items = self._items.get_indexer(table["item_id"])
            models = self._models.get_indexer(table["model"])
            columns = self._raters.get_indexer(table["rater"])
            if (items < 0).any() or (models < 0).any() or (columns < 0).any():
                return None
            units = np.searchsorted(self._units, items * len(self._models) + models)
            if (units >= len(self._units)).any() or (self._units[np.minimum(units, len(self._units) - 1)]
                                                     != items * len(self._models) + models).any():
                return None  # an output with no rating of the dimension: a new unit
            new = table["value"].to_numpy(dtype=float)
            for old in values[units, columns][~np.isnan(values[units, columns])].tolist():
                counts[old] -= 1
            for value in new[~np.isnan(new)].tolist():
                counts[value] = counts.get(value, 0) + 1
            values[units, columns] = new
        # the level as default_alpha_level finds it from the values present (their distinct values say it all)
        present = np.array(sorted(value for value, count in counts.items() if count > 0), dtype=float)
        chosen = self.level or default_alpha_level(present, self.dimension)
        return {"dimension": self.dimension, "alpha": krippendorff_alpha(values.T, chosen), "level": chosen,
                "n_raters": values.shape[1], "n_units": values.shape[0]}


#: Most scorers (judges or raters) one pairs table pairs per metric or dimension. Its rows grow as n(n - 1) / 2, so
#: past this many only the first in name order are paired and :func:`pairing_notice` says so.
MAX_PAIRED_SCORERS = 50


def pairing_notice(counts: Mapping[str, int], who: str = "scorers") -> str | None:
    """One line saying which pairs tables were cut to :data:`MAX_PAIRED_SCORERS` scorers, or ``None``.

    ``counts`` maps a metric (or dimension) to how many scorers it has.
    """
    over = {name: n for name, n in counts.items() if n > MAX_PAIRED_SCORERS}
    if not over:
        return None
    most = max(over.values())
    return (f"pairs only the first {MAX_PAIRED_SCORERS} {who} in name order on {', '.join(map(str, over))} "
            f"(up to {most:,} {who}: {most * (most - 1) // 2:,} pairs each); to pair others, keep only their "
            "ratings in the input")


def table6_notice(metrics_table: pd.DataFrame) -> str | None:
    """:func:`pairing_notice` of a results table (task, scorer, metric, value): the scorers with a value of each
    metric, the most of any task."""
    scored = metrics_table.dropna(subset=["value"]).groupby(["task", "metric"])["scorer"].nunique()
    notice = pairing_notice(scored.groupby(level="metric").max().to_dict(), "scorers")
    return None if notice is None else f"Table 6 {notice}"


def spearman_pairs(grid: NDArray[np.float64], scorers: Sequence[object]) -> list[dict[str, object]]:
    """Spearman of every pair of scorers over a models x scorers grid of per-model values (NaN = not scored).

    Pairs follow the order of ``scorers`` (callers pass them sorted); a scorer without any value is left out,
    and each pair rests on the models both scored; past :data:`MAX_PAIRED_SCORERS` scored ones only the first
    are paired. Rows: scorer_a, scorer_b, spearman, n_models. This is the
    one implementation of the paper's Table 6 statistic: :func:`inter_judge_spearman` and the metric
    pipeline (:meth:`empathy.evaluate.MetricPlan.evaluate`) both call it.
    """
    scored = [j for j in range(grid.shape[1]) if not np.isnan(grid[:, j]).all()][:MAX_PAIRED_SCORERS]
    rows: list[dict[str, object]] = []
    for i, j in itertools.combinations(scored, 2):
        a, b = _clean_pairs(grid[:, i], grid[:, j])
        rows.append({"scorer_a": scorers[i], "scorer_b": scorers[j], "spearman": spearman(a, b),
                     "n_models": len(a)})
    return rows


def inter_judge_spearman(metrics_table: pd.DataFrame, *, metrics: Sequence[str] | None = None
                         ) -> pd.DataFrame:
    """Spearman correlation of every pair of scorers' per-model values, per metric (the paper's Table 6).

    ``metrics_table`` has columns model, scorer, metric, value (as :attr:`MetricsReport.table`). Only the
    models that both scorers scored (non-null value) enter a pair. Columns: metric, scorer_a, scorer_b,
    spearman, n_models.
    """
    rows = []
    table = metrics_table.dropna(subset=["value"])
    chosen = metrics if metrics is not None else list(dict.fromkeys(metrics_table["metric"]))
    for metric in chosen:
        part = table[table["metric"] == metric]
        model_codes, _ = pd.factorize(part["model"])
        scorer_codes, scorer_names = pd.factorize(part["scorer"])
        order = sorted(range(len(scorer_names)), key=lambda i: str(scorer_names[i]))
        position = np.argsort(order)  # scorer code -> column in name order
        grid = np.full((int(model_codes.max()) + 1 if len(part) else 0, len(scorer_names)), np.nan)
        grid[model_codes, position[scorer_codes]] = part["value"].to_numpy(dtype=float)
        rows += [{"metric": metric, **row} for row in spearman_pairs(grid, [scorer_names[i] for i in order])]
    return pd.DataFrame(rows, columns=["metric", "scorer_a", "scorer_b", "spearman", "n_models"])


# ------------------------------------------------------------------------ rank correlations over models: tests

#: Largest number of models whose every ordering (n! of them) the permutation tests enumerate (10! = 3,628,800).
MAX_EXACT_MODELS = 10
#: Monte Carlo permutations beyond :data:`MAX_EXACT_MODELS`.
DEFAULT_PERMUTATIONS = 10_000
#: Most paired values a permutation test accepts: it is meant for per-model values (a handful to a few dozen),
#: and a Monte Carlo ordering costs Kendall's statistic n^2 / 2 sign comparisons.
MAX_PERMUTATION_PAIRS = 200
#: Up to this many pairs Kendall's tau-b is counted over every pair in NumPy; beyond, ``scipy.stats.kendalltau``.
KENDALL_PAIRWISE_MAX = 500
RANK_STATISTICS: tuple[str, ...] = ("spearman", "kendall")
ALTERNATIVES: tuple[str, ...] = ("two-sided", "greater", "less")
# Every ordering of the last min(n, 8) positions is built once (8! rows); orderings of n models are that block
# behind each choice of the first n - 8 positions, so no array holds more than 8! x n entries.
_SUFFIX = 8


def kendall_tau_b(x: ArrayLike, y: ArrayLike) -> float | None:
    """Kendall's tau-b over the pairs where both values are present; ``None`` when undefined.

    ``tau_b = (C - D) / sqrt((n0 - n1)(n0 - n2))`` with ``n0 = n(n-1)/2`` and ``n1``, ``n2`` the pairs tied in
    ``x`` and in ``y`` (``scipy.stats.kendalltau``'s default variant, which computes it in O(n log n)). Like
    :func:`spearman`, ``None`` with fewer than :data:`MIN_PAIRS` pairs or a constant side. Beside Spearman's rho
    it reads better with many ties (CA's per-model shares take few distinct values).
    """
    a, b = _clean_pairs(x, y)
    if len(a) < MIN_PAIRS or _constant(a) or _constant(b):
        return None
    if len(a) > KENDALL_PAIRWISE_MAX:
        from scipy import stats  # O(n log n) for long inputs

        return float(stats.kendalltau(a, b, variant="b").statistic)
    # per-model values are few: every pair's signs at once, and no SciPy import in a warm metrics run (issue 25)
    dx = np.sign(a[:, None] - a[None, :])[np.triu_indices(len(a), k=1)]
    dy = np.sign(b[:, None] - b[None, :])[np.triu_indices(len(b), k=1)]
    untied_x, untied_y = float(np.count_nonzero(dx)), float(np.count_nonzero(dy))
    return float(np.sum(dx * dy) / math.sqrt(untied_x * untied_y))


@dataclass(frozen=True)
class PermutationTest:
    """A permutation test of a rank correlation: the statistic, its p-value and how the p-value was obtained.

    ``method`` is ``"exact"`` (every one of ``n_arrangements = n!`` orderings of one side; ``mc_se`` is
    ``None``) or ``"monte-carlo"`` (``n_arrangements`` random orderings, ``p = (1 + b) / (1 + B)`` and its
    Monte Carlo standard error ``sqrt(p (1 - p) / B)``). ``value`` and ``p_value`` are ``None`` when the
    statistic is undefined (fewer than :data:`MIN_PAIRS` pairs, a constant side).
    """

    statistic: str
    value: float | None
    p_value: float | None
    method: str
    n_arrangements: int
    alternative: str
    mc_se: float | None = None
    seed: int | None = None


@functools.cache
def _orderings(k: int) -> NDArray[np.int64]:
    return np.array(list(itertools.permutations(range(k))), dtype=np.int64).reshape(-1, k)


@functools.cache
def _tail_indices(k: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Flat indices into k x k tables for every ordering of ``range(k)`` (as :func:`_orderings`), laid out with
    orderings last: ``[j, o] = j * k + r`` where ordering ``o`` puts value ``r`` at position ``j``, and
    ``[pair, o] = r_p * k + r_q`` for each position pair ``p < q``. One ``np.take`` then reads a table for every
    ordering."""
    tail = _orderings(k)
    p, q = np.triu_indices(k, k=1)
    return (np.ascontiguousarray((tail + np.arange(k) * k).T),
            np.ascontiguousarray((tail[:, p] * k + tail[:, q]).T))


def _all_orderings(n: int) -> Iterator[NDArray[np.int64]]:
    """Every permutation of ``range(n)``, in blocks of at most 8! rows (each row once)."""
    k = min(n, _SUFFIX)
    tail = _orderings(k)
    for prefix in itertools.permutations(range(n), n - k):
        rest = np.array([i for i in range(n) if i not in prefix], dtype=np.int64)
        block = np.empty((len(tail), n), dtype=np.int64)
        block[:, :n - k] = prefix
        block[:, n - k:] = rest[tail]
        yield block


def _random_orderings(n: int, count: int, rng: np.random.Generator, width: int) -> Iterator[NDArray[np.int64]]:
    """``count`` uniformly random permutations of ``range(n)``, in blocks of at most BOOTSTRAP_BLOCK / width."""
    per_block = max(1, BOOTSTRAP_BLOCK // max(width, 1))
    left = count
    while left > 0:
        rows = min(per_block, left)
        yield rng.permuted(np.tile(np.arange(n, dtype=np.int64), (rows, 1)), axis=1)
        left -= rows


def _spearman_numerator(a: NDArray[np.float64], b: NDArray[np.float64]
                        ) -> Callable[[NDArray[np.int64]], NDArray[np.float64]]:
    """``sum_i ra_i rb_perm(i)`` (centred average ranks of ``a``) for a block of orderings of ``b``: rho over a
    constant, since the orderings permute ``b``'s ranks, ties included."""
    ra = _average_ranks(a)
    ra = ra - ra.mean()
    rb = _average_ranks(b)
    return lambda block: rb[block] @ ra


def _kendall_numerator(a: NDArray[np.float64], b: NDArray[np.float64]
                       ) -> Callable[[NDArray[np.int64]], NDArray[np.float64]]:
    """``sum_{i<j} sign(a_i - a_j) sign(b_perm(i) - b_perm(j))`` for a block of orderings: tau-b over a constant."""
    first, second = np.triu_indices(len(a), k=1)
    sign_a = np.sign(a[first] - a[second])
    return lambda block: np.sign(b[block[:, first]] - b[block[:, second]]) @ sign_a


def _kendall_enumeration(a: NDArray[np.float64], b: NDArray[np.float64]) -> Iterator[NDArray[np.float64]]:
    """Kendall's numerator for every ordering of ``b``, in blocks of 8!, without gathering n^2/2 pairs per ordering.

    Position pairs split into prefix-prefix (one constant per prefix), prefix-suffix (a k x k table per prefix,
    read once per suffix position) and suffix-suffix pairs. The last depend only on the tie pattern of the
    values left for the suffix (sorted by value), so they are computed once per pattern.
    """
    n = len(a)
    k = min(n, _SUFFIX)
    head = n - k
    sign_a = np.sign(a[:, None] - a[None, :])
    p, q = np.triu_indices(k, k=1)
    suffix_signs = sign_a[head + p, head + q]
    within: dict[tuple[int, ...], NDArray[np.float64]] = {}
    placed, paired = _tail_indices(k)
    for prefix in itertools.permutations(range(n), head):
        chosen = np.array(prefix, dtype=np.int64)
        rest = np.array(sorted((i for i in range(n) if i not in prefix), key=lambda i: b[i]), dtype=np.int64)
        pattern = tuple(np.unique(b[rest], return_inverse=True)[1].tolist())
        if pattern not in within:
            ranks = np.array(pattern, dtype=np.float64)
            within[pattern] = suffix_signs @ np.take(np.sign(ranks[:, None] - ranks[None, :]).ravel(), paired)
        i, j = np.triu_indices(head, k=1)
        constant = float(sign_a[i, j] @ np.sign(b[chosen[i]] - b[chosen[j]])) if head > 1 else 0.0
        cross = np.sign(b[chosen][:, None] - b[rest][None, :]).T @ sign_a[:head, head:]  # value r at position j
        yield constant + np.take(cross.T.ravel(), placed).sum(axis=0) + within[pattern]


def rank_correlation_test(x: ArrayLike, y: ArrayLike, *, statistic: str = "spearman",
                          alternative: str = "two-sided", max_exact: int = MAX_EXACT_MODELS,
                          n_permutations: int = DEFAULT_PERMUTATIONS, seed: int = DEFAULT_SEED) -> PermutationTest:
    """Permutation test of Spearman's rho or Kendall's tau-b between two sets of per-model values.

    The null hypothesis: the pairing of ``x`` and ``y`` across models is arbitrary, so every ordering of ``y``
    against ``x`` is equally likely. With ``n <= max_exact`` pairs every one of the ``n!`` orderings is
    enumerated (in blocks of 8! orderings) and the p-value is exact; ties are handled exactly, since the
    orderings permute the tied values with the rest (average ranks for rho, tau-b's ties for tau). Otherwise
    ``n_permutations`` random orderings from ``np.random.default_rng(seed)`` give the Monte Carlo p-value
    ``(1 + b) / (1 + B)`` with its standard error.

    ``alternative``: ``"two-sided"`` counts orderings with ``|statistic| >= |observed|`` (both statistics have
    mean 0 under the null); ``"greater"`` / ``"less"`` those at least as large / as small. With 5 models the
    smallest two-sided p is 2/120 (rho = +-1), and no rho below 1 reaches p < 0.083.

    Raises
    ------
    ValueError
        For an unknown statistic or alternative, ``max_exact`` outside [1, 10], a non-positive
        ``n_permutations``, or more than :data:`MAX_PERMUTATION_PAIRS` pairs.
    """
    if statistic not in RANK_STATISTICS:
        raise ValueError(f"statistic must be one of {RANK_STATISTICS}, got {statistic!r}")
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}, got {alternative!r}")
    if isinstance(max_exact, bool) or not isinstance(max_exact, int) or not 1 <= max_exact <= MAX_EXACT_MODELS:
        raise ValueError(f"max_exact must be a whole number in [1, {MAX_EXACT_MODELS}], got {max_exact!r}")
    if isinstance(n_permutations, bool) or not isinstance(n_permutations, int) or n_permutations < 1:
        raise ValueError(f"n_permutations must be a positive whole number, got {n_permutations!r}")
    a, b = _clean_pairs(x, y)
    if len(a) > MAX_PERMUTATION_PAIRS:
        raise ValueError(f"the permutation test is for per-model values: {len(a)} pairs is more than "
                         f"{MAX_PERMUTATION_PAIRS}")
    value = spearman(a, b) if statistic == "spearman" else kendall_tau_b(a, b)
    n = len(a)
    exact = n <= max_exact
    if value is None:
        return PermutationTest(statistic, None, None, "exact" if exact else "monte-carlo",
                               math.factorial(n) if exact else n_permutations, alternative)
    numerator = _spearman_numerator(a, b) if statistic == "spearman" else _kendall_numerator(a, b)
    observed = float(numerator(np.arange(n, dtype=np.int64)[None, :])[0])
    tolerance = 1e-9 * max(1.0, abs(observed))
    if exact:
        nulls = (_kendall_enumeration(a, b) if statistic == "kendall"
                 else (numerator(block) for block in _all_orderings(n)))
    else:
        width = n * (n - 1) // 2 if statistic == "kendall" else n
        nulls = (numerator(block) for block in _random_orderings(n, n_permutations, np.random.default_rng(seed),
                                                                 width))
    extreme = 0
    with one_blas_thread():
        for null in nulls:
            if alternative == "two-sided":
                extreme += int(np.count_nonzero(np.abs(null) >= abs(observed) - tolerance))
            elif alternative == "greater":
                extreme += int(np.count_nonzero(null >= observed - tolerance))
            else:
                extreme += int(np.count_nonzero(null <= observed + tolerance))
    if exact:
        total = math.factorial(n)
        return PermutationTest(statistic, value, extreme / total, "exact", total, alternative)
    p = (1.0 + extreme) / (1.0 + n_permutations)
    return PermutationTest(statistic, value, p, "monte-carlo", n_permutations, alternative,
                           mc_se=math.sqrt(p * (1.0 - p) / n_permutations), seed=seed)


# ------------------------------------------- discrete labels: statistics and bootstrap from contingency tables

#: Most distinct values (both raters together) for which :class:`PairCounts` keeps contingency tables: binary CA
#: labels have 2, a 0-7 count 8; continuous scores (affect intensity) take the straightforward path.
MAX_TABLE_CATEGORIES = 12


def resample_counts(n_units: int, n_resamples: int, seed: int) -> NDArray[np.integer]:
    """How often each unit is drawn in each resample of :func:`bootstrap_ci` (``n_resamples`` x ``n_units``).

    The same draws, block by block, as :func:`bootstrap_ci` (and its cluster bootstrap) makes for ``n_units``
    units (pairs, or clusters) and ``seed``; a resample's statistic depends only on these counts. Stored in the
    smallest unsigned type that holds them (one byte per unit and resample in practice).
    """
    rng = np.random.default_rng(seed)
    parts = []
    for rows in _blocks(n_resamples, n_units):
        drawn = rng.integers(0, n_units, size=(rows, n_units))
        flat = (np.arange(rows, dtype=np.int64)[:, None] * n_units + drawn).ravel()
        block = np.bincount(flat, minlength=rows * n_units).reshape(rows, n_units)
        # each block narrowed at once: 1,000 resamples of 20,000 items held 160 MiB of int64 counts before
        top = int(block.max()) if block.size else 0
        parts.append(block.astype(np.uint8 if top < 256 else np.uint16 if top < 65536 else np.uint32))
    counts = np.concatenate(parts) if parts else np.zeros((0, n_units), dtype=np.uint8)
    top = int(counts.max()) if counts.size else 0
    return counts.astype(np.uint8 if top < 256 else np.uint16 if top < 65536 else np.uint32)


def _table_ranks(margins: NDArray[np.float64]) -> NDArray[np.float64]:
    """Average rank of each category given its counts (last axis, categories in order): ties share their ranks."""
    upper = np.cumsum(margins, axis=-1)
    return upper - (margins - 1.0) / 2.0


def table_correlation(tables: NDArray[np.float64], categories: NDArray[np.float64], *, ranked: bool
                      ) -> NDArray[np.float64]:
    """Spearman (``ranked``) or Pearson of the pairs a contingency table counts, for a stack of tables.

    ``tables[..., i, j]`` counts the pairs with ``x = categories[i]`` and ``y = categories[j]``. Equal to
    :func:`spearman` / :func:`pearson` of the pairs themselves (average ranks for ties), to float rounding; NaN
    where undefined (fewer than :data:`MIN_PAIRS` pairs, or a constant side), clipped to [-1, 1] as
    :func:`numpy.corrcoef`.
    """
    rows = tables.sum(axis=-1)
    columns = tables.sum(axis=-2)
    n = rows.sum(axis=-1)
    if ranked:
        score_x, score_y = _table_ranks(rows), _table_ranks(columns)
    else:
        score_x = np.broadcast_to(categories, rows.shape)
        score_y = np.broadcast_to(categories, columns.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_x = (rows * score_x).sum(axis=-1) / n
        mean_y = (columns * score_y).sum(axis=-1) / n
        dx = score_x - mean_x[..., None]
        dy = score_y - mean_y[..., None]
        covariance = np.einsum("...i,...ij,...j->...", dx, tables, dy)
        variance_x = (rows * dx * dx).sum(axis=-1)
        variance_y = (columns * dy * dy).sum(axis=-1)
        r = covariance / np.sqrt(variance_x * variance_y)
    defined = (n >= MIN_PAIRS) & ((rows > 0).sum(axis=-1) > 1) & ((columns > 0).sum(axis=-1) > 1)
    return np.where(defined, np.clip(r, -1.0, 1.0), np.nan)


def table_kappa(table: NDArray[np.float64], categories: NDArray[np.float64], *, weights: str | None = None
                ) -> float | None:
    """:func:`cohen_kappa` of the pairs a contingency table counts (categories no pair uses are left out, as
    there), exactly: the same counts."""
    used = (table.sum(axis=0) + table.sum(axis=1)) > 0
    present = categories[used]
    if table.sum() < MIN_PAIRS or not _whole_numbers(present):
        return None
    observed = table[np.ix_(used, used)]
    k = len(present)
    if k == 1:
        return 1.0
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / observed.sum()
    i, j = np.indices((k, k))
    w = (i != j).astype(float) if weights is None else ((i - j) ** 2).astype(float)
    denominator = float((w * expected).sum())
    if denominator == 0:
        return None
    return float(1.0 - (w * observed).sum() / denominator)


def _optional(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


class PairCounts:
    """Agreement of two raters on discrete labels, kept as contingency tables so that a changed label is a patch.

    Built from the two raters' values per unit (``x``, ``y``: NaN = not rated) and, for the cluster bootstrap,
    each unit's cluster (its item). It keeps the table of each cluster and, with ``n_resamples > 0``, the table of
    each bootstrap resample (the resample counts of :func:`resample_counts` times the clusters' tables), so that
    :meth:`change` moves one unit from one cell to another in O(resamples) and :meth:`row` reads every statistic
    of :func:`pairwise_agreement` from the tables (equal to it to float rounding: the same draws, the same pairs).

    :meth:`build` returns ``None`` when the labels take more than :data:`MAX_TABLE_CATEGORIES` values;
    :meth:`change` returns ``False`` (nothing changed) when the change adds or removes a pair or brings a new
    value: the caller builds the pair again.
    """

    def __init__(self, categories: NDArray[np.float64], unit_cluster: NDArray[np.int64],
                 cluster_tables: NDArray[np.float64], draws: NDArray[np.integer] | None, seed: int,
                 n_resamples: int) -> None:
        self.categories = categories
        self.unit_cluster = unit_cluster  # -1 where a side is missing
        self.cluster_tables = cluster_tables
        self.draws = draws
        self.seed = seed
        self.n_resamples = n_resamples
        k = len(categories)
        self.total = cluster_tables.sum(axis=0)
        self.resampled = None
        if draws is not None:
            resampled = np.zeros((len(draws), k * k))
            with one_blas_thread():
                for start in range(0, len(draws), 64):  # the draws as floats in slices: memory stays small
                    resampled[start:start + 64] = draws[start:start + 64].astype(float) @ cluster_tables
            self.resampled = resampled

    @classmethod
    def build(cls, x: ArrayLike, y: ArrayLike, clusters: ArrayLike | None, *, n_resamples: int = 0,
              seed: int = DEFAULT_SEED, draws: Callable[[int], NDArray[np.integer]] | None = None
              ) -> PairCounts | None:
        """The tables of two raters' values; ``draws(n_units)`` gives :func:`resample_counts` (shared between
        pairs by the caller), by default computed here."""
        a = np.asarray(x, dtype=float)
        b = np.asarray(y, dtype=float)
        keep = ~(np.isnan(a) | np.isnan(b))
        categories = np.unique(np.concatenate([a[keep], b[keep]]))
        if len(categories) > MAX_TABLE_CATEGORIES:
            return None
        if clusters is None:
            codes = np.arange(int(keep.sum()), dtype=np.int64)
        else:
            labels = np.asarray(clusters, dtype=object)[keep]
            codes = pd.factorize(pd.Series(labels))[0].astype(np.int64)
        n_clusters = int(codes.max()) + 1 if len(codes) else 0
        unit_cluster = np.full(len(a), -1, dtype=np.int64)
        unit_cluster[keep] = codes
        k = max(len(categories), 1)
        cells = np.searchsorted(categories, a[keep]) * k + np.searchsorted(categories, b[keep])
        tables = np.bincount(codes * (k * k) + cells, minlength=n_clusters * k * k).reshape(n_clusters, k * k)
        counts = None
        if n_resamples and n_clusters:
            counts = draws(n_clusters) if draws is not None else resample_counts(n_clusters, n_resamples, seed)
        return cls(categories, unit_cluster, tables.astype(float), counts, seed, n_resamples)

    def change(self, unit: int, old: tuple[float, float], new: tuple[float, float]) -> bool:
        """Move ``unit`` from the cell of its ``old`` values to that of its ``new`` ones; ``False`` (and nothing
        changed) when the pair appears, disappears or takes a value the tables have no category for."""
        if all(o == v or (math.isnan(o) and math.isnan(v)) for o, v in zip(old, new, strict=True)):
            return True
        cluster = int(self.unit_cluster[unit])
        if cluster < 0 or any(math.isnan(v) for v in (*old, *new)):
            return False
        positions = [int(np.searchsorted(self.categories, v)) for v in (*old, *new)]
        if any(p >= len(self.categories) or self.categories[p] != v for p, v in zip(positions, (*old, *new),
                                                                                   strict=True)):
            return False
        k = len(self.categories)
        before, after = positions[0] * k + positions[1], positions[2] * k + positions[3]
        self.cluster_tables[cluster, before] -= 1
        self.cluster_tables[cluster, after] += 1
        self.total[before] -= 1
        self.total[after] += 1
        if self.resampled is not None and self.draws is not None:
            weight = self.draws[:, cluster].astype(float)
            self.resampled[:, before] -= weight
            self.resampled[:, after] += weight
        return True

    def row(self, confidence: float = DEFAULT_CONFIDENCE) -> dict[str, object]:
        """n, spearman, pearson, kappa, kappa_quadratic, percent_agreement and (with resamples) spearman_low,
        spearman_high and warning, as :func:`pairwise_agreement`'s row."""
        k = len(self.categories)
        table = self.total.reshape(k, k)
        n = int(round(table.sum()))
        row: dict[str, object] = {
            "n": n,
            "spearman": _optional(table_correlation(table, self.categories, ranked=True)),
            "pearson": _optional(table_correlation(table, self.categories, ranked=False)),
            "kappa": table_kappa(table, self.categories),
            "kappa_quadratic": table_kappa(table, self.categories, weights="quadratic"),
            "percent_agreement": float(np.trace(table) / n) if n else None,
        }
        if self.n_resamples:
            row.update(self._interval(confidence))
        return row

    def _interval(self, confidence: float) -> dict[str, object]:
        n_units = len(self.cluster_tables)
        if self.resampled is None or n_units == 0:
            ci = ConfidenceInterval(None, None, confidence, self.n_resamples, self.seed)
        else:
            k = len(self.categories)
            values = table_correlation(self.resampled.reshape(-1, k, k), self.categories, ranked=True)
            defined = values[~np.isnan(values)]
            if len(defined) < self.n_resamples / 2:
                ci = ConfidenceInterval(None, None, confidence, self.n_resamples, self.seed, n_units)
            else:
                tail = (1 - confidence) / 2 * 100
                low, high = np.percentile(defined, [tail, 100 - tail])
                ci = ConfidenceInterval(float(low), float(high), confidence, self.n_resamples, self.seed, n_units)
        return {"spearman_low": ci.low, "spearman_high": ci.high, "warning": interval_warning({"spearman": ci})}


def _tie_groups(values: NDArray[np.float64]) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """The sort order of ``values``, where each run of equal values starts in it, and each value's run."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    new = np.ones(len(values), dtype=bool)
    new[1:] = ordered[1:] != ordered[:-1]
    group = np.empty(len(values), dtype=np.int64)
    group[order] = np.cumsum(new) - 1
    return order, np.flatnonzero(new), group


def resampled_spearman(a: NDArray[np.float64], b: NDArray[np.float64], codes: NDArray[np.int64],
                       counts: NDArray[np.integer], *, block: int = 1 << 20) -> NDArray[np.float64]:
    """Spearman of each bootstrap resample given by ``counts`` (resamples x clusters: how often each cluster is
    drawn; ``codes``: each pair's cluster), NaN where undefined, without building the resampled arrays.

    A resample holds each pair as often as its cluster was drawn, so a run of tied values with total weight ``W``
    after weight ``C`` below it has the average rank ``C + (W + 1) / 2``, and rho is the weighted Pearson of
    those ranks: :func:`spearman` of the resampled pairs, to float rounding, in O(pairs) per resample whatever
    the number of distinct values (continuous scores).
    """
    order_a, starts_a, group_a = _tie_groups(a)
    order_b, starts_b, group_b = _tie_groups(b)
    rows_per_block = max(1, block // max(1, len(a)))
    parts = []
    for start in range(0, len(counts), rows_per_block):
        weights = counts[start:start + rows_per_block][:, codes].astype(float)
        total = weights.sum(axis=1)
        ranks, used = [], []
        for order, starts, group in ((order_a, starts_a, group_a), (order_b, starts_b, group_b)):
            run = np.add.reduceat(weights[:, order], starts, axis=1)
            ranks.append((np.cumsum(run, axis=1) - (run - 1.0) / 2.0)[:, group])
            used.append((run > 0).sum(axis=1))
        with np.errstate(invalid="ignore", divide="ignore"):
            dx = ranks[0] - ((weights * ranks[0]).sum(axis=1) / total)[:, None]
            dy = ranks[1] - ((weights * ranks[1]).sum(axis=1) / total)[:, None]
            r = (weights * dx * dy).sum(axis=1) / np.sqrt((weights * dx * dx).sum(axis=1)
                                                           * (weights * dy * dy).sum(axis=1))
        defined = (total >= MIN_PAIRS) & (used[0] > 1) & (used[1] > 1)
        parts.append(np.where(defined, np.clip(r, -1.0, 1.0), np.nan))
    return np.concatenate(parts) if parts else np.empty(0)


def spearman_interval(x: ArrayLike, y: ArrayLike, clusters: ArrayLike | None, *, n_resamples: int,
                      seed: int = DEFAULT_SEED, confidence: float = DEFAULT_CONFIDENCE,
                      draws: Callable[[int], NDArray[np.integer]] | None = None) -> ConfidenceInterval:
    """:func:`bootstrap_ci` of :func:`spearman` (the same draws and the same interval, to float rounding) through
    :func:`resampled_spearman`: for continuous scores, where :class:`PairCounts` keeps no tables and the cluster
    bootstrap would rank every resample. ``draws(n_units)`` gives :func:`resample_counts` (shared by the caller)."""
    a_all = np.asarray(x, dtype=float)
    b_all = np.asarray(y, dtype=float)
    keep = ~(np.isnan(a_all) | np.isnan(b_all))
    a, b = a_all[keep], b_all[keep]
    if len(a) == 0:
        return ConfidenceInterval(None, None, confidence, n_resamples, seed)
    if clusters is None:
        codes = np.arange(len(a), dtype=np.int64)
    else:
        codes = pd.factorize(pd.Series(np.asarray(clusters, dtype=object)[keep]))[0].astype(np.int64)
    n_units = int(codes.max()) + 1
    counts = draws(n_units) if draws is not None else resample_counts(n_units, n_resamples, seed)
    values = resampled_spearman(a, b, codes, counts)
    defined = values[~np.isnan(values)]
    if len(defined) < n_resamples / 2:
        return ConfidenceInterval(None, None, confidence, n_resamples, seed, n_units)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(defined, [tail, 100 - tail])
    return ConfidenceInterval(float(low), float(high), confidence, n_resamples, seed, n_units)
