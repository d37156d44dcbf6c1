"""The map's statistics: Holm's adjustment, exact and permutation p-values of a slice's rate, and its intervals.

The slice's rate is ``events / units`` over the outputs in the slice; its p-value asks how often a slice of the
same size drawn from all outputs departs as far from the whole's rate (exact when the draws can be enumerated or
their sums counted, else by permutation), and its interval treats the item, not the unit, as independent
(:func:`cluster_rate_interval`); :func:`wilson_interval` is the units-independent interval of the chart's bars.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy import stats

DEFAULT_PERMUTATIONS = 1000
_EPS = 1e-9


def holm(p_values: Sequence[float]) -> NDArray[np.float64]:
    """Holm's (1979) step-down adjusted p-values: ``max_{j <= i} min(1, (m - j + 1) p_(j))`` in sorted order.

    NaN p-values are left out of ``m`` and stay NaN.
    """
    p = np.asarray(p_values, dtype=float)
    adjusted = np.full(len(p), np.nan)
    present = np.flatnonzero(~np.isnan(p))
    if len(present) == 0:
        return adjusted
    order = present[np.argsort(p[present], kind="stable")]
    m = len(order)
    steps = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted[order] = np.maximum.accumulate(steps)
    return adjusted


def _rates(codes: NDArray[np.int64], events: NDArray[np.float64], units: NDArray[np.float64], k: int
           ) -> NDArray[np.float64]:
    hits = np.bincount(codes, weights=events, minlength=k)
    size = np.bincount(codes, weights=units, minlength=k)
    with np.errstate(invalid="ignore", divide="ignore"):
        return hits / size


def permutation_p_values(codes: NDArray[np.int64], events: NDArray[np.float64], units: NDArray[np.float64],
                         *, n_permutations: int = DEFAULT_PERMUTATIONS, seed: int = 0, exact: bool = False
                         ) -> tuple[NDArray[np.float64], list[str]]:
    """Two-sided permutation p-value of each slice's rate against the whole's.

    ``codes`` is each output's slice, ``events`` and ``units`` its disagreement count and unit count. The
    statistic of slice ``s`` is ``|events(s)/units(s) - E/U|``; the null permutes which outputs are in which
    slice. Exact (every ``C(n, k)`` choice of the slice's ``k`` outputs) when that number is at most
    ``n_permutations``, else Monte Carlo with ``n_permutations`` shared permutations of the codes from
    ``np.random.default_rng(seed)``, ``p = (1 + b) / (1 + B)``. With ``exact`` a slice is first tried with the
    exact null distribution of its event total (:func:`exact_slice_p`: equal units per output), whatever its
    size. Returns the p-values and each one's method (``exact`` or ``monte-carlo``).
    """
    if isinstance(n_permutations, bool) or not isinstance(n_permutations, int) or n_permutations < 1:
        raise ValueError(f"n_permutations must be a positive whole number, got {n_permutations!r}")
    codes = np.asarray(codes, dtype=np.int64)
    events = np.asarray(events, dtype=float)
    units = np.asarray(units, dtype=float)
    n = len(codes)
    k = int(codes.max()) + 1 if n else 0
    whole = events.sum() / units.sum() if units.sum() > 0 else math.nan
    observed = np.abs(_rates(codes, events, units, k) - whole)
    sizes = np.bincount(codes, minlength=k)
    p = np.full(k, np.nan)
    methods = ["monte-carlo"] * k
    monte_carlo = []
    for s in range(k):
        computed = exact_slice_p(events, units, int(sizes[s]), observed[s]) if exact else None
        if computed is not None:
            p[s] = computed
            methods[s] = "exact"
        elif math.comb(n, int(sizes[s])) <= n_permutations:
            p[s] = _exact_p(events, units, int(sizes[s]), whole, observed[s])
            methods[s] = "exact"
        else:
            monte_carlo.append(s)
    if monte_carlo:
        rng = np.random.default_rng(seed)
        exceed = np.zeros(k)
        for _ in range(n_permutations):
            shuffled = np.abs(_rates(rng.permutation(codes), events, units, k) - whole)
            exceed += shuffled >= observed - _EPS
        for s in monte_carlo:
            p[s] = (1.0 + exceed[s]) / (1.0 + n_permutations)
    return p, methods


def _exact_p(events: NDArray[np.float64], units: NDArray[np.float64], size: int, whole: float,
             observed: float) -> float:
    """Share of the ``C(n, size)`` choices of a slice whose rate departs from ``whole`` by at least ``observed``."""
    total = extreme = 0
    for chosen in itertools.combinations(range(len(events)), size):
        index = list(chosen)
        rate = events[index].sum() / units[index].sum()
        extreme += abs(rate - whole) >= observed - _EPS
        total += 1
    return extreme / total


#: Largest ``groups x (k + 1)^2 x (u k + 1)`` cost :func:`exact_sum_distribution` takes on (about a second).
EXACT_SUM_BUDGET = 50_000_000


def exact_sum_distribution(values: ArrayLike, size: int) -> NDArray[np.float64] | None:
    """The exact distribution of the total of ``size`` of ``values`` drawn without replacement (whole numbers >= 0).

    Index ``s`` of the result is ``P(total = s)``. The outputs are grouped by their value ``c`` (``m_c`` of
    them); the number drawn from group ``c`` given what is left to draw is hypergeometric, so the total's
    distribution follows group by group on the states (still to draw, total so far), all in probabilities
    (no factorials to overflow). ``None`` when a value is not a whole number >= 0, or the work would exceed
    :data:`EXACT_SUM_BUDGET`.
    """
    counts_of = np.asarray(values, dtype=float)
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or not 0 <= size <= len(counts_of):
        raise ValueError(f"size must be a whole number in [0, {len(counts_of)}], got {size!r}")
    if len(counts_of) == 0 or (counts_of < 0).any() or not np.allclose(counts_of, np.round(counts_of)):
        return None
    whole = np.round(counts_of).astype(np.int64)
    groups = np.bincount(whole)
    top = int(whole.max())
    width = top * size + 1
    if np.count_nonzero(groups) * (size + 1) ** 2 * width > EXACT_SUM_BUDGET:
        return None
    prob = np.zeros((size + 1, width))
    prob[size, 0] = 1.0  # state: (outputs still to draw, total so far)
    remaining = len(whole)
    left = np.arange(size + 1)
    for value, members in enumerate(groups):
        if members == 0:
            continue
        step = np.zeros_like(prob)
        takens = np.arange(min(int(members), size) + 1)
        # every (taken, still to draw) weight of the group in one call: scipy's per-call overhead (0.2 ms) at every
        # taken was most of a slice map's p-values after each decision
        weights = stats.hypergeom.pmf(takens[:, None], remaining, members, left[None, :])
        for taken in takens.tolist():
            weight = weights[taken, taken:]
            shift = value * taken
            step[:size + 1 - taken, shift:] += prob[taken:, :width - shift] * weight[:, None]
        prob = step
        remaining -= int(members)
    return prob[0]


def exact_slice_p(events: ArrayLike, units: ArrayLike, size: int, observed: float) -> float | None:
    """Exact permutation p-value of a slice of ``size`` outputs whose rate departs by ``observed`` from the whole.

    Computable when every output has the same number ``u`` of units and a whole number of events: the slice's
    rate is then its event total over ``size u``. ``u = 1``: the total is hypergeometric (Fisher's exact
    conditional test); ``u >= 2``: :func:`exact_sum_distribution` (of the smaller of the slice and its
    complement, whose totals add up to the whole's). ``None`` otherwise (the caller enumerates or samples).
    """
    e = np.asarray(events, dtype=float)
    u = np.asarray(units, dtype=float)
    n = len(e)
    if n == 0 or not 0 < size <= n or not np.all(u == u[0]) or u[0] <= 0:
        return None
    if not np.allclose(e, np.round(e)):
        return None
    per_output = float(u[0])
    total = float(np.round(e).sum())
    whole = total / (n * per_output)
    small = min(size, n - size)
    if per_output == 1.0:
        support = np.arange(small + 1)
        distribution = stats.hypergeom.pmf(support, n, int(total), small)
    else:
        distribution = exact_sum_distribution(e, small)
        if distribution is None:
            return None
    sums = np.arange(len(distribution), dtype=float)
    slice_sums = sums if small == size else total - sums
    extreme = np.abs(slice_sums / (size * per_output) - whole) >= observed - _EPS
    return float(min(1.0, distribution[extreme].sum()))


def monte_carlo_se(p_values: ArrayLike, methods: Sequence[str], n_permutations: int) -> NDArray[np.float64]:
    """The Monte Carlo standard error ``sqrt(p (1 - p) / B)`` of each ``monte-carlo`` p-value; NaN for exact ones."""
    p = np.asarray(p_values, dtype=float)
    sampled = np.array([m == "monte-carlo" for m in methods], dtype=bool)
    return np.where(sampled, np.sqrt(p * (1.0 - p) / n_permutations), np.nan)


def cluster_rate_interval(codes: ArrayLike, events: ArrayLike, units: ArrayLike, clusters: ArrayLike, *,
                          confidence: float = 0.95) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Cluster-aware interval of each slice's rate ``events / units``, the cluster (item) being the unit.

    Per slice ``s`` with items ``c``: ``r = E / U``, the ratio's linearisation variance
    ``v = K / (K - 1) sum_c (e_c - r u_c)^2 / U^2`` over its ``K`` items, the effective size
    ``n_eff = r (1 - r) / v`` (at most ``U``: design effect >= 1; the number of items when ``r`` is 0 or 1 or
    ``K = 1``) times ``(z / t_{K-1})^2`` (Korn & Graubard 1998: the variance rests on ``K`` items), and the
    Wilson interval of ``r`` at that size. Coverage on clustered data: tests/test_slices.py.

    Parameters
    ----------
    codes, events, units, clusters : array_like
        Per output: its slice (0..k-1), disagreement events, units, and item (any hashable labels).
    confidence : float
        Nominal coverage.

    Returns
    -------
    (low, high)
        Arrays indexed by slice code (NaN for a slice without units).
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    slice_of = np.asarray(codes, dtype=np.int64)
    e = np.asarray(events, dtype=float)
    u = np.asarray(units, dtype=float)
    labels = np.asarray(clusters, dtype=object)
    if not len(slice_of) == len(e) == len(u) == len(labels):
        raise ValueError(f"codes, events, units and clusters differ in length: {len(slice_of)}, {len(e)}, {len(u)}, "
                         f"{len(labels)}")
    k = int(slice_of.max()) + 1 if len(slice_of) else 0
    item, _ = pd.factorize(pd.Series(labels))
    pair, pair_index = np.unique(slice_of * (int(item.max()) + 1 if len(item) else 1) + item, return_inverse=True)
    pair_slice = pair // (int(item.max()) + 1 if len(item) else 1)
    e_c = np.bincount(pair_index, weights=e, minlength=len(pair))
    u_c = np.bincount(pair_index, weights=u, minlength=len(pair))
    big_e = np.bincount(pair_slice, weights=e_c, minlength=k)
    big_u = np.bincount(pair_slice, weights=u_c, minlength=k)
    n_items = np.bincount(pair_slice, minlength=k).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = big_e / big_u
        residual = np.bincount(pair_slice, weights=(e_c - rate[pair_slice] * u_c) ** 2, minlength=k)
        variance = n_items / (n_items - 1.0) * residual / big_u ** 2
        n_eff = np.where((rate > 0) & (rate < 1) & (n_items > 1) & (variance > 0),
                         np.minimum(rate * (1 - rate) / variance, big_u), n_items)
        # Korn & Graubard's degrees-of-freedom adjustment: the variance rests on K items, not on n_eff units
        z = float(stats.norm.ppf(0.5 + confidence / 2))
        n_eff = n_eff * np.where(n_items > 1, (z / stats.t.ppf(0.5 + confidence / 2, np.maximum(n_items - 1, 1)))
                                 ** 2, 1.0)
    return _wilson(rate, n_eff, confidence)


def _wilson(rate: NDArray[np.float64], n: NDArray[np.float64], confidence: float
            ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        centre = (rate + z * z / (2 * n)) / (1 + z * z / n)
        half = z * np.sqrt(rate * (1 - rate) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    # exactly 0 (1) at a rate of 0 (1): the closed form leaves a rounding residue such as 2e-18
    low = np.where(rate == 0, 0.0, centre - half)
    high = np.where(rate == 1, 1.0, centre + half)
    return np.where(n > 0, low, np.nan), np.where(n > 0, high, np.nan)


def wilson_interval(events: ArrayLike, units: ArrayLike, confidence: float = 0.95
                    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Wilson score intervals of the rates ``events / units`` (the error bars of the map's chart).

    They treat units as independent, which several judges of one output (and several models' outputs of one
    item) are not: :func:`cluster_rate_interval` (the map's ``rate_low``/``rate_high``) is the interval to
    show. NaN where ``units`` is 0.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    k = np.asarray(events, dtype=float)
    n = np.asarray(units, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return _wilson(k / n, n, confidence)
