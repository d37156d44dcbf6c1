"""Small-sample intervals of the audit's means: Clopper-Pearson and Student's t against SciPy, Welch-Satterthwaite
worked by hand, and the guard on PPI's interval of a share."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from empathy.small_sample import (
    MIN_EVENTS,
    clopper_pearson,
    guarded_interval,
    satterthwaite_df,
    t_interval,
    t_quantile,
)


@pytest.mark.parametrize("n", [1, 2, 4, 10, 15, 20, 40, 80, 500])
def test_clopper_pearson_is_the_beta_quantiles(n: int) -> None:
    for successes in sorted({0, 1, n // 3, n // 2, n - 1, n} & set(range(n + 1))):
        for confidence in (0.9, 0.95, 0.99):
            alpha = 1 - confidence
            low = 0.0 if successes == 0 else float(stats.beta.ppf(alpha / 2, successes, n - successes + 1))
            high = 1.0 if successes == n else float(stats.beta.ppf(1 - alpha / 2, successes + 1, n - successes))
            assert clopper_pearson(successes, n, confidence) == pytest.approx((low, high), abs=1e-10)


def test_clopper_pearson_bad_inputs() -> None:
    with pytest.raises(ValueError, match="need 0 <= successes <= n"):
        clopper_pearson(5, 4, 0.95)
    with pytest.raises(TypeError, match="successes must be a whole number"):
        clopper_pearson(1.5, 4, 0.95)
    with pytest.raises(ValueError, match=r"confidence must be in \(0, 1\)"):
        clopper_pearson(1, 4, 95)


def test_t_quantile_and_interval_against_scipy() -> None:
    for df in (1, 2, 3, 9, 14, 39, 79, 1000):
        assert t_quantile(0.95, df) == pytest.approx(float(stats.t.ppf(0.975, df)), rel=1e-9)
    assert t_quantile(0.95, 9.7) == t_quantile(0.95, 9)  # fewer degrees of freedom: the wider interval
    assert t_quantile(0.95, math.inf) == pytest.approx(1.959963984540054, rel=1e-12)
    values = np.array([0.1, 0.4, 0.35, 0.8, 0.2, 0.55])
    low, high = stats.t.interval(0.95, 5, loc=values.mean(), scale=stats.sem(values))
    assert t_interval(values, 0.95) == pytest.approx((values.mean(), low, high), rel=1e-9)
    with pytest.raises(ValueError, match="degrees of freedom must be positive"):
        t_quantile(0.95, 0)


def test_satterthwaite_by_hand() -> None:
    # (0.02 + 0.01)^2 / (0.02^2 / 4 + 0.01^2 / 9) = 0.0009 / (0.0001 + 0.0000111...) = 8.1
    assert satterthwaite_df([(0.02, 4.0), (0.01, 9.0)]) == pytest.approx(8.1)
    assert satterthwaite_df([(0.02, 4.0), (0.0, 9.0)]) == pytest.approx(4.0)
    assert satterthwaite_df([(0.02, math.inf)]) == math.inf
    assert math.isnan(satterthwaite_df([(0.0, 3.0)]))


def test_guard_widens_only_on_few_events() -> None:
    # 2 of 20 positive: too few of the rarer label, the exact interval is held
    low, high, widened = guarded_interval(0.05, 0.12, successes=2, n=20, discordant=10, confidence=0.95)
    exact = clopper_pearson(2, 20, 0.95)
    assert widened and (low, high) == (min(0.05, exact[0]), max(0.12, exact[1]))
    # enough of both: untouched
    assert guarded_interval(0.3, 0.5, successes=MIN_EVENTS, n=20, discordant=MIN_EVENTS, confidence=0.95) == (
        0.3, 0.5, False)
    # enough positives but a judge that agrees almost always: widened
    assert guarded_interval(0.3, 0.5, successes=10, n=20, discordant=MIN_EVENTS - 1, confidence=0.95)[2]
