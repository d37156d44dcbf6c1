"""The normal and t quantiles computed without SciPy (empathy.distributions) equal scipy.stats (issue 25)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from empathy.agreement import KENDALL_PAIRWISE_MAX, kendall_tau_b
from empathy.distributions import LARGE_DF, MIN_P, normal_cdf, normal_ppf, student_t_cdf, student_t_ppf

PROBABILITIES = [MIN_P, 0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.975, 0.99, 1 - MIN_P]
DEGREES = [*range(1, 41), 49, 50, 99, 100, 255, 256, LARGE_DF - 1, LARGE_DF, LARGE_DF + 1, 1000, 9999, 10**5, 10**8]


@pytest.mark.parametrize("df", DEGREES)
def test_t_quantile_equals_scipy(df):
    for p in PROBABILITIES:
        expected = stats.t.ppf(p, df)
        assert student_t_ppf(p, df) == pytest.approx(expected, rel=1e-12, abs=1e-12), (df, p)


@pytest.mark.parametrize("df", [1, 2, 3, 4, 7, 10, 30, 101, 600])
def test_t_distribution_function_equals_scipy(df):
    for x in (-40.0, -6.0, -2.0, -0.5, 0.0, 0.25, 1.96, 3.0, 40.0):
        assert student_t_cdf(x, df) == pytest.approx(stats.t.cdf(x, df), abs=1e-13), (df, x)


def test_hand_worked_values():
    # t with 1 degree of freedom is Cauchy: its 0.975 quantile is tan(0.475 pi); with 9, the textbook 2.262
    assert student_t_ppf(0.975, 1) == pytest.approx(np.tan(0.475 * np.pi), rel=1e-14)
    assert round(student_t_ppf(0.975, 9), 3) == 2.262
    assert student_t_ppf(0.5, 7) == 0.0 and student_t_cdf(0.0, 7) == 0.5
    assert student_t_ppf(0.025, 12) == pytest.approx(-student_t_ppf(0.975, 12), rel=1e-14)
    assert round(normal_ppf(0.975), 6) == 1.959964 and normal_cdf(0.0) == 0.5


def test_normal_equals_scipy():
    for p in (1e-12, 1e-6, *PROBABILITIES, 1 - 1e-9):
        assert normal_ppf(p) == pytest.approx(stats.norm.ppf(p), rel=1e-14, abs=1e-14)
    for x in (-8.0, -1.0, 0.3, 2.5):
        assert normal_cdf(x) == pytest.approx(stats.norm.cdf(x), rel=1e-14, abs=1e-15)


@pytest.mark.parametrize(("p", "df", "message"), [
    (0.0, 5, "strictly between 0 and 1"), (1.0, 5, "strictly between 0 and 1"),
    (MIN_P / 2, 5, "t quantiles are computed for p in"), (0.5, 0, "positive whole number"),
    (0.5, 2.5, "positive whole number"), (0.5, True, "positive whole number"),
])
def test_outside_the_domain_is_refused(p, df, message):
    with pytest.raises(ValueError, match=message):
        student_t_ppf(p, df)


def test_kendall_tau_b_without_scipy_equals_scipy():
    rng = np.random.default_rng(5)
    for n in (3, 4, 10, 60, KENDALL_PAIRWISE_MAX, KENDALL_PAIRWISE_MAX + 1):
        for ties in (True, False):
            a = rng.integers(0, 4, n).astype(float) if ties else rng.random(n)
            b = a + (rng.integers(0, 3, n) if ties else rng.normal(0, 0.3, n))
            assert kendall_tau_b(a, b) == pytest.approx(stats.kendalltau(a, b, variant="b").statistic, abs=1e-14)


def test_rowwise_average_ranks_equal_scipy_rankdata():
    from empathy.agreement import _average_ranks_by_row

    rng = np.random.default_rng(2)
    for shape in ((1, 3), (5, 4), (200, 17), (7, 1)):
        for ties in (True, False):
            values = rng.integers(0, 3, shape).astype(float) if ties else rng.random(shape)
            assert np.array_equal(_average_ranks_by_row(values), stats.rankdata(values, axis=1)), (shape, ties)
