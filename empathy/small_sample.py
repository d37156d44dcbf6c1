"""Small-sample intervals of an audit's means: Student's t, Clopper-Pearson, and the guard on PPI++'s interval.

An audit decides a few outputs per model (the app and the command line allow any number from 2), so the
intervals of :mod:`empathy.inference` cannot lean on the normal approximation ``PPI++`` and the classical
interval are stated with (divisor-``n`` standard deviations and the normal quantile: too narrow at small
``n``, of zero width when every audited label is equal). What this module gives instead
(docs/statistics.md, *Small n*, measures each by simulation):

* **a mean of continuous terms** (SA, EGM): ``mean +- t_{n-1} sd/sqrt(n)`` with the unbiased ``sd``;
* **a share** (a binary term, CA): the Clopper-Pearson interval (Clopper & Pearson 1934), the binomial test
  inverted, which never covers less than its level at any ``n`` and any true share (it covers more where the
  binomial's few values force it to);
* **PPI++**: the t interval of the PPI++ estimate on unbiased variance pieces with Welch-Satterthwaite degrees
  of freedom (:func:`satterthwaite_df`: the audited part has ``n - 1``, the unaudited part ``N - 1``). For a
  binary term that interval still rests on the few audited outputs that carry the rarer label or on which the
  judge and the human disagree (the variance of PPI's correction is estimated from those alone): with fewer
  than :data:`MIN_EVENTS` of either, the interval is widened to hold the Clopper-Pearson interval of the
  human-only share (:func:`guarded_interval`), so it covers at least as often as that exact interval, and the
  row says so. For continuous terms no such guard exists: below :data:`MIN_AUDIT` audited outputs, or with a
  zero width, the row carries a warning instead.

Everything here is computed with the standard library and numpy (no SciPy at import: :mod:`empathy.distributions`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np

from empathy.agreement import MIN_INTERVAL_UNITS
from empathy.distributions import normal_ppf, student_t_ppf

#: Fewest audited outputs of the rarer label, and fewest on which judge and human disagree, for PPI's t interval of
#: a binary term to stand on its own; with fewer it is widened to hold the exact human-only interval.
MIN_EVENTS = 8
#: Fewest audited outputs for a t interval of a continuous term without a warning: the bootstrap's bound, one
#: constant for every interval of the package (:data:`empathy.agreement.MIN_INTERVAL_UNITS`).
MIN_AUDIT = MIN_INTERVAL_UNITS
#: Bisection steps of a Clopper-Pearson end: 2^-60 is below double precision on [0, 1].
_BISECTION_STEPS = 60


def t_quantile(confidence: float, df: float) -> float:
    """The two-sided Student's t quantile ``t_{df, 1 - alpha/2}``, ``df`` rounded down to a whole number >= 1
    (fewer degrees of freedom: a wider, conservative interval); the normal quantile for infinite ``df``."""
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if not df > 0:  # also NaN
        raise ValueError(f"degrees of freedom must be positive, got {df!r}")
    return _t_quantile(float(confidence), math.inf if math.isinf(df) else max(int(math.floor(df)), 1))


@functools.lru_cache(maxsize=4096)
def _t_quantile(confidence: float, df: float) -> float:
    # a simulation asks for the same few quantiles many thousand times
    upper = 1.0 - (1.0 - confidence) / 2.0
    return normal_ppf(upper) if math.isinf(df) else student_t_ppf(upper, int(df))


def satterthwaite_df(parts: Sequence[tuple[float, float]]) -> float:
    """Welch-Satterthwaite degrees of freedom of a sum of independent variance pieces ``(v_i, df_i)``:
    ``(sum v_i)^2 / sum (v_i^2 / df_i)``; pieces with ``v_i = 0`` or ``df_i`` infinite add no term. ``inf`` when
    no piece has a finite ``df`` and a positive variance, NaN when every variance is 0."""
    total = sum(v for v, _ in parts)
    if total <= 0:
        return math.nan
    denominator = sum(v * v / d for v, d in parts if v > 0 and math.isfinite(d))
    return math.inf if denominator == 0 else total * total / denominator


def t_interval(values: Sequence[float] | np.ndarray, confidence: float) -> tuple[float, float, float]:
    """``(mean, low, high)`` of ``mean +- t_{n-1} sd/sqrt(n)`` with the unbiased ``sd`` (``n >= 2``)."""
    array = np.asarray(values, dtype=float)
    n = len(array)
    if n < 2:
        raise ValueError(f"a t interval needs at least 2 values, got {n}")
    mean = float(array.mean())
    half = t_quantile(confidence, n - 1) * float(array.std(ddof=1)) / math.sqrt(n)
    return mean, mean - half, mean + half


def _log_binomial_coefficients(n: int) -> np.ndarray:
    """``log C(n, k)`` for ``k = 0..n`` (a running sum of ``log((n - k + 1)/k)``: exact to rounding)."""
    k = np.arange(1, n + 1, dtype=float)
    return np.concatenate([[0.0], np.cumsum(np.log((n - k + 1.0) / k))])


def _upper_tail(log_choose: np.ndarray, successes: int, p: float) -> float:
    """``P(X >= successes)`` for ``X ~ Binomial(n, p)``, ``0 < p < 1``."""
    n = len(log_choose) - 1
    k = np.arange(successes, n + 1, dtype=float)
    return float(np.exp(log_choose[successes:] + k * math.log(p) + (n - k) * math.log1p(-p)).sum())


def clopper_pearson(successes: int, n: int, confidence: float) -> tuple[float, float]:
    """The Clopper-Pearson interval of a binomial share: ``successes`` of ``n`` (``0 <= successes <= n``).

    The lower end solves ``P(X >= x | p) = alpha/2`` (0 when ``x = 0``), the upper ``P(X <= x | p) = alpha/2``
    (1 when ``x = n``), each by bisection on the exact binomial tail: the quantiles of the beta distributions
    ``Beta(x, n - x + 1)`` and ``Beta(x + 1, n - x)`` (``tests/test_small_sample.py`` checks them against SciPy).
    """
    for name, value in (("successes", successes), ("n", n)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{name} must be a whole number, got {value!r}")
    if not 0 <= successes <= n or n < 1:
        raise ValueError(f"need 0 <= successes <= n and n >= 1, got successes={successes}, n={n}")
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    return _clopper_pearson(int(successes), int(n), float(confidence))


@functools.lru_cache(maxsize=65536)
def _clopper_pearson(successes: int, n: int, confidence: float) -> tuple[float, float]:
    alpha = (1.0 - confidence) / 2.0
    log_choose = _log_binomial_coefficients(n)

    def solve(tail_at: object) -> float:
        low, high = 0.0, 1.0  # tail_at(p) - alpha rises with p
        for _ in range(_BISECTION_STEPS):
            mid = (low + high) / 2.0
            if tail_at(mid) < alpha:  # type: ignore[operator]
                low = mid
            else:
                high = mid
        return (low + high) / 2.0

    lower = 0.0 if successes == 0 else solve(lambda p: _upper_tail(log_choose, successes, p))
    # P(X <= x | p) falls with p: solve on 1 - p with the tail of the failures
    upper = 1.0 if successes == n else 1.0 - solve(lambda q: _upper_tail(log_choose, n - successes, q))
    return lower, upper


def guarded_interval(low: float, high: float, *, successes: int, n: int, discordant: int, confidence: float
                     ) -> tuple[float, float, bool]:
    """PPI's interval of a binary term, widened to hold the exact human-only interval when it rests on few events.

    ``successes`` of the ``n`` audited outputs carry label 1 and ``discordant`` have a judge label other than the
    human's. With fewer than :data:`MIN_EVENTS` of the rarer label or of the disagreements, the interval is the
    hull of ``[low, high]`` and :func:`clopper_pearson` ``(successes, n)``: it then covers the truth at least as
    often as that exact interval. Returns ``(low, high, widened)``.
    """
    rare = min(successes, n - successes)
    if rare >= MIN_EVENTS and discordant >= MIN_EVENTS:
        return low, high, False
    exact_low, exact_high = clopper_pearson(successes, n, confidence)
    return min(low, exact_low), max(high, exact_high), True


def widened_warning(n: int) -> str:
    """The warning of a PPI interval :func:`guarded_interval` widened."""
    return (f"PPI interval widened to the exact (Clopper-Pearson) human-only interval: fewer than {MIN_EVENTS} of "
            f"the {n} audited outputs carry the rarer label or disagree with the judge, too few for PPI's t "
            "approximation (conservative)")


def small_audit_warning(n: int, what: str) -> str:
    """The warning of a continuous term's t interval on fewer than :data:`MIN_AUDIT` audited outputs."""
    return (f"{what} rests on {n} audited outputs (fewer than {MIN_AUDIT}): a t approximation whose 95 % is not "
            "promised")


def zero_width_warning(what: str) -> str:
    """The warning of an interval of zero width (every audited term equal)."""
    return f"{what} has zero width (every audited term is equal): it says nothing about the uncertainty"
