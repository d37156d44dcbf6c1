"""The length dependence beyond the annotators: the partial correlation by hand, and its Fisher-z interval's
coverage by simulation (a judge that sees only what the annotators see has partial r = 0 whatever the
annotators' own dependence on length; one with a planted slope on length is caught)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from empathy.judge_report.length import length_dependence, partial_correlation


def _frame(rng: np.random.Generator, n: int, slope: float) -> tuple[pd.DataFrame, pd.Series]:
    words = rng.integers(5, 200, n)
    # the truth depends on length: the annotators' mean does too, the judge only through the truth (plus slope)
    truth = 0.5 * np.log1p(words) + rng.normal(0, 1, n)
    index = pd.MultiIndex.from_arrays([[f"i{j}" for j in range(n)], ["m"] * n], names=["item_id", "model"])
    matrix = pd.DataFrame({"h1": truth, "h2": truth, "judge": truth + slope * np.log1p(words)
                           + rng.normal(0, 0.5, n)}, index=index)
    return matrix, pd.Series(words, index=index)


def test_partial_correlation_by_hand():
    x = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    z = np.array([1.0, 1.0, 2.0, 2.0, 3.0])
    y = np.array([2.0, 1.0, 4.0, 3.0, 6.0])
    rx = x - np.polyval(np.polyfit(z, x, 1), z)
    ry = y - np.polyval(np.polyfit(z, y, 1), z)
    assert partial_correlation(x, y, z) == pytest.approx(np.corrcoef(rx, ry)[0, 1])


def test_the_interval_holds_its_level_and_catches_a_planted_slope():
    rng = np.random.default_rng(2)
    trials, covered = 400, 0
    for _ in range(trials):
        matrix, words = _frame(rng, 60, 0.0)
        found = length_dependence(matrix, "judge", ["h1", "h2"], words, "e_gen")
        covered += found.partial_low <= 0 <= found.partial_high
    assert covered / trials >= 0.92  # 95 % nominal; 400 trials put 0.92 about 2.8 standard errors below
    matrix, words = _frame(rng, 200, 0.5)
    found = length_dependence(matrix, "judge", ["h1", "h2"], words, "e_gen")
    assert found.partial_low > 0 and found.annotators_low > 0
