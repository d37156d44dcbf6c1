"""Small-sample intervals of the audit's means: Clopper-Pearson and Student's t against SciPy, Welch-Satterthwaite
worked by hand, and the guard on PPI's interval of a share."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from empathy.agreement import ConfidenceInterval
from empathy.small_sample import (
    MIN_EVENTS,
    adjusted_skewness,
    bootstrap_value_warning,
    clopper_pearson,
    few_events_warning,
    fewest_terms,
    guarded_interval,
    level_not_promised,
    satterthwaite_df,
    shown_n_effective,
    skewness_warning,
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


def test_n_effective_is_capped_at_the_outputs_covered_and_hidden_on_few_decisions() -> None:
    # 12 decisions whose widths say 83 x 12: no estimate is worth more than auditing all 200 outputs
    assert shown_n_effective(83.0 * 12, 12, 200) == 200.0
    assert shown_n_effective(30.0, 12, 200) == 30.0
    # fewer than 10 decisions: a ratio of two variances from a handful of decisions is not shown
    assert math.isnan(shown_n_effective(830.0, 9, 200))
    assert math.isnan(shown_n_effective(None, 40, 200)) and math.isnan(shown_n_effective(math.inf, 40, 200))


def test_adjusted_skewness_is_scipys_unbiased_skew() -> None:
    rng = np.random.default_rng(5)
    for values in (rng.gamma(0.5, 1.0, 40), rng.normal(size=15), np.array([0.0, 0.0, 1.0, 5.0])):
        assert adjusted_skewness(values) == pytest.approx(float(stats.skew(values, bias=False)), rel=1e-12)
    assert adjusted_skewness([1.0, 1.0, 1.0]) == 0.0 and adjusted_skewness([1.0, 2.0]) == 0.0


def test_cochrans_rule_and_the_few_events_rule() -> None:
    # 25 g^2, never below 10: g = 2 asks for 100 terms, a symmetric term for 10
    assert (fewest_terms(2.0), fewest_terms(-2.0), fewest_terms(0.1), fewest_terms(0.0)) == (100, 100, 10, 10)
    skewed = np.array([0.0] * 17 + [1.0, 1.0, 10.0])  # G1 about 4.2: needs about 440 terms
    warning = skewness_warning({"the PPI interval": skewed, "the human-only interval": skewed[::-1]})
    assert warning.startswith("the PPI interval and the human-only interval each rest on 20 audited outputs")
    assert f"= {fewest_terms(adjusted_skewness(skewed))} that Cochran's rule" in warning
    assert level_not_promised(warning)
    symmetric = np.linspace(0.0, 1.0, 12)
    assert skewness_warning({"the PPI interval": symmetric}) is None
    assert "rests on 9 audited outputs" in skewness_warning({"the PPI interval": symmetric[:9]})
    # a share: 7 of 40 of the rarer label warn, 8 do not
    assert "of which 7 carry the rarer label" in few_events_warning([1.0] * 7 + [0.0] * 33, "the interval")
    assert few_events_warning([1.0] * 32 + [0.0] * 8, "the interval") is None
    assert not level_not_promised(None) and not level_not_promised("PPI interval widened ... (conservative)")


def test_bootstrap_value_warning_gives_one_reason() -> None:
    shares = np.array([1.0] * 3 + [0.0] * 37)
    interval = ConfidenceInterval(0.0, 0.2, 0.95, 1000, 0, 40)
    assert "3 carry the rarer label" in bootstrap_value_warning(interval, shares, binary=True)
    few = ConfidenceInterval(0.0, 0.2, 0.95, 1000, 0, 5)  # fewer than 10 items: that reason alone
    assert bootstrap_value_warning(few, shares[:5], binary=True).endswith("understates the uncertainty here")
    assert bootstrap_value_warning(ConfidenceInterval(None, None, 0.95, 1000, 0, 40), shares, binary=True) is None
    assert bootstrap_value_warning(interval, np.linspace(0, 1, 40), binary=False) is None
