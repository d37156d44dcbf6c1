"""The normal and Student's t quantiles the intervals need, without importing SciPy.

A warm ``metrics`` run must not load more than it needs (issue 25: within 1.2x of importing the package and
reading the inputs); ``scipy.stats`` alone costs about 0.4 s of CPU to import, more than the rest of such a run,
only for three numbers per table: a normal quantile (PPI's interval), the normal CDF and a t quantile with an
integer number of degrees of freedom (the expanded percentile bootstrap). These are computed here exactly to
double precision:

* the normal distribution is the standard library's :class:`statistics.NormalDist` (Wichura's AS 241);
* Student's t CDF with integer degrees of freedom ``v`` has a finite closed form (Abramowitz and Stegun, 26.7.3
  and 26.7.4: a sum of ``v // 2`` terms in ``cos^2`` of ``atan(t / sqrt(v))``); below :data:`LARGE_DF` degrees of
  freedom its quantile is found by Newton's method on it from the normal quantile, refined until the step is
  below 1e-15 relative; from :data:`LARGE_DF` on, by the Cornish-Fisher expansion of the t quantile around the
  normal one (Abramowitz and Stegun 26.7.5, four terms), whose error there is below 1e-12.

The quantiles are for confidence and power levels: ``p`` in [:data:`MIN_P`, 1 - :data:`MIN_P`] (a 99.8 %
interval at most), where ``tests/test_distributions.py`` checks them against ``scipy.stats`` to 1e-12; further in
the tails the closed form loses digits to cancellation, so such ``p`` are refused (``ValueError``).
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

_NORMAL = NormalDist()
#: Newton steps before giving up (never reached in the tests: 4-8 steps from the normal start).
_MAX_STEPS = 60
#: The smallest tail probability a quantile is computed for (see the module docstring).
MIN_P = 1e-3
#: From this many degrees of freedom on, the t quantile is the Cornish-Fisher expansion (the closed form's sum
#: would add up rounding over thousands of terms).
LARGE_DF = 650


def normal_ppf(p: float) -> float:
    """The standard normal quantile of ``p`` in (0, 1); ``ValueError`` otherwise."""
    _check_probability(p)
    return _NORMAL.inv_cdf(p)


def normal_cdf(x: float) -> float:
    """The standard normal distribution function at ``x``."""
    return _NORMAL.cdf(x)


def _check_probability(p: float) -> None:
    if not 0.0 < p < 1.0:
        raise ValueError(f"a probability strictly between 0 and 1 is needed, got {p!r}")


def _check_df(df: int) -> int:
    if isinstance(df, bool) or int(df) != df or df < 1:
        raise ValueError(f"degrees of freedom must be a positive whole number, got {df!r}")
    return int(df)


def _central(t: float, df: int) -> float:
    """P(|T| < t) for t >= 0 (Abramowitz and Stegun 26.7.3, 26.7.4), summed in NumPy."""
    theta = math.atan(t / math.sqrt(df))
    c2, s = math.cos(theta) ** 2, math.sin(theta)
    if df % 2 == 0:
        # sin(theta) * (1 + 1/2 c2 + 1*3/(2*4) c2^2 + ... ), (df - 2) / 2 terms after the 1
        k = np.arange(1, df // 2, dtype=float)
        terms = np.cumprod((2 * k - 1) / (2 * k) * c2)
        return s * (1.0 + float(terms.sum()))
    if df == 1:
        return 2.0 * theta / math.pi
    # 2/pi (theta + sin cos (1 + 2/3 c2 + 2*4/(3*5) c2^2 + ... )), (df - 3) / 2 terms after the 1
    k = np.arange(1, (df - 1) // 2, dtype=float)
    terms = np.cumprod((2 * k) / (2 * k + 1) * c2)
    return 2.0 / math.pi * (theta + s * math.cos(theta) * (1.0 + float(terms.sum())))


def student_t_cdf(x: float, df: int) -> float:
    """Student's t distribution function at ``x`` with ``df`` (a positive whole number) degrees of freedom."""
    df = _check_df(df)
    tail = 0.5 * (1.0 - _central(abs(x), df))
    return 1.0 - tail if x >= 0 else tail


def _log_density(t: float, df: int) -> float:
    return (math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
            - (df + 1) / 2 * math.log1p(t * t / df))


def _cornish_fisher(x: float, df: int) -> float:
    """The t quantile whose normal quantile is ``x``, to four terms in ``1 / df`` (Abramowitz and Stegun 26.7.5)."""
    g1 = (x ** 3 + x) / 4
    g2 = (5 * x ** 5 + 16 * x ** 3 + 3 * x) / 96
    g3 = (3 * x ** 7 + 19 * x ** 5 + 17 * x ** 3 - 15 * x) / 384
    g4 = (79 * x ** 9 + 776 * x ** 7 + 1482 * x ** 5 - 1920 * x ** 3 - 945 * x) / 92160
    return x + g1 / df + g2 / df ** 2 + g3 / df ** 3 + g4 / df ** 4


def student_t_ppf(p: float, df: int) -> float:
    """Student's t quantile of ``p`` in [:data:`MIN_P`, 1 - :data:`MIN_P`] with ``df`` (a positive whole number)
    degrees of freedom; ``ValueError`` for another ``p`` or ``df``."""
    _check_probability(p)
    if not MIN_P <= p <= 1.0 - MIN_P:
        raise ValueError(f"t quantiles are computed for p in [{MIN_P:g}, 1 - {MIN_P:g}] (confidence and power "
                         f"levels), got {p!r}")
    df = _check_df(df)
    if p == 0.5:
        return 0.0
    if df >= LARGE_DF:
        return _cornish_fisher(_NORMAL.inv_cdf(p), df)
    upper = p > 0.5
    q = 1.0 - p if upper else p  # the lower tail probability we solve for, in (0, 0.5)
    if df == 1:
        t = math.tan(math.pi * (q - 0.5))
    elif df == 2:
        t = (2.0 * q - 1.0) / math.sqrt(2.0 * q * (1.0 - q))
    else:
        t = _NORMAL.inv_cdf(q)  # start from the normal quantile; t's tails are heavier, Newton walks outwards
        for _ in range(_MAX_STEPS):
            lower_tail = 0.5 * (1.0 - _central(-t, df))
            step = (lower_tail - q) / math.exp(_log_density(t, df))
            t -= step
            if abs(step) <= 1e-15 * max(1.0, abs(t)):
                break
    return -t if upper else t
