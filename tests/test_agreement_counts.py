"""Agreement from contingency tables (:class:`empathy.agreement.PairCounts`): equal to the straightforward statistics
and to :func:`empathy.agreement.bootstrap_ci`'s interval on randomised discrete labels, before and after patches."""

from __future__ import annotations

import math

import numpy as np
import pytest

from empathy.agreement import (
    MAX_TABLE_CATEGORIES,
    PairCounts,
    bootstrap_ci,
    cohen_kappa,
    pair_row,
    pairwise_agreement,
    pearson,
    resample_counts,
    spearman,
    table_correlation,
    table_kappa,
)


def _same(got: object, expected: object) -> bool:
    if got is None or expected is None or isinstance(expected, str):
        return got == expected
    return math.isclose(float(got), float(expected), rel_tol=0, abs_tol=1e-9)


def _labels(rng: np.random.Generator, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Two raters agreeing on about 70 % of n units, k categories, some units unrated by one side."""
    x = rng.integers(0, k, n).astype(float)
    y = np.where(rng.random(n) < 0.7, x, rng.integers(0, k, n)).astype(float)
    x[rng.random(n) < 0.1] = np.nan
    y[rng.random(n) < 0.05] = np.nan
    return x, y


def _clusters(rng: np.random.Generator, n: int, clustered: bool) -> np.ndarray | None:
    return np.array([f"item{k}" for k in rng.integers(0, max(1, n // 3), n)], dtype=object) if clustered else None


@pytest.mark.parametrize("trial", range(24))
def test_the_tables_give_the_straightforward_row(trial):
    rng = np.random.default_rng(trial)
    n, k = int(rng.integers(2, 400)), int(rng.integers(1, 7))
    x, y = _labels(rng, n, k)
    clusters = _clusters(rng, n, trial % 2 == 1)
    counts = PairCounts.build(x, y, clusters, n_resamples=150, seed=trial)
    expected = pair_row(x, y, bootstrap=150, seed=trial, clusters=clusters)
    got = counts.row()
    assert list(got) == list(expected)
    for key, value in expected.items():
        assert _same(got[key], value), (key, got[key], value)


@pytest.mark.parametrize("trial", range(16))
def test_a_patched_pair_equals_one_built_from_the_new_labels(trial):
    rng = np.random.default_rng(100 + trial)
    n, k = int(rng.integers(20, 300)), int(rng.integers(2, 5))
    x, y = _labels(rng, n, k)
    clusters = _clusters(rng, n, trial % 2 == 0)
    counts = PairCounts.build(x, y, clusters, n_resamples=120, seed=trial)
    for _ in range(12):
        unit = int(rng.integers(0, n))
        new = (float(rng.integers(0, k)), y[unit]) if rng.random() < 0.5 else (x[unit], float(rng.integers(0, k)))
        if counts.change(unit, (x[unit], y[unit]), new):
            x[unit], y[unit] = new
    expected = pair_row(x, y, bootstrap=120, seed=trial, clusters=clusters)
    for key, value in expected.items():
        assert _same(counts.row()[key], value), (key, counts.row()[key], value)


def test_a_change_the_tables_cannot_hold_is_refused_and_changes_nothing():
    x = np.array([0.0, 1.0, 1.0, 0.0, np.nan, 1.0])
    y = np.array([0.0, 1.0, 0.0, 0.0, 1.0, 1.0])
    counts = PairCounts.build(x, y, None, n_resamples=50, seed=3)
    before = counts.row()
    assert not counts.change(0, (0.0, 0.0), (2.0, 0.0))  # a value with no category
    assert not counts.change(4, (np.nan, 1.0), (1.0, 1.0))  # a pair that appears
    assert not counts.change(1, (1.0, 1.0), (np.nan, 1.0))  # a pair that disappears
    assert counts.row() == before
    assert counts.change(2, (1.0, 0.0), (1.0, 0.0))  # no change at all


def test_continuous_scores_take_the_straightforward_path():
    values = np.linspace(0, 1, MAX_TABLE_CATEGORIES + 1)
    assert PairCounts.build(values, values[::-1], None) is None


def test_resample_counts_are_the_bootstrap_draws():
    """The counts of each unit in each resample are those of bootstrap_ci's draws (same generator, same blocks),
    also across several blocks of BOOTSTRAP_BLOCK entries."""
    n_units, n_resamples, seed = 5000, 1700, 11  # 1700 x 5000 > 2^22: three blocks
    counts = resample_counts(n_units, n_resamples, seed)
    rng = np.random.default_rng(seed)
    expected = []
    for rows in (838, 838, 24):
        drawn = rng.integers(0, n_units, size=(rows, n_units))
        expected.append(np.stack([np.bincount(row, minlength=n_units) for row in drawn[:3]]))
    assert counts.shape == (n_resamples, n_units) and counts.dtype == np.uint8
    assert np.array_equal(counts[:3], expected[0])
    assert np.array_equal(counts[838:841], expected[1])
    assert np.array_equal(counts[1676:1679], expected[2])
    assert (counts.sum(axis=1) == n_units).all()


@pytest.mark.parametrize("trial", range(12))
def test_table_statistics_equal_those_of_the_pairs(trial):
    rng = np.random.default_rng(200 + trial)
    categories = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    table = rng.integers(0, 6, (5, 5)).astype(float)
    table[rng.integers(0, 5)] = 0  # a category unused on one side (kappa leaves out those unused on both)
    if trial % 3 == 0:
        table[:, 2] = 0
        table[2, :] = 0  # a category nobody used: quadratic kappa's weights skip it, as cohen_kappa's do
    cells = np.argwhere(table > 0)
    x = np.repeat(categories[cells[:, 0]], table[table > 0].astype(int))
    y = np.repeat(categories[cells[:, 1]], table[table > 0].astype(int))
    assert _same(float(table_correlation(table, categories, ranked=True)), spearman(x, y))
    assert _same(float(table_correlation(table, categories, ranked=False)), pearson(x, y))
    for weights in (None, "quadratic"):
        assert _same(table_kappa(table, categories, weights=weights), cohen_kappa(x, y, weights=weights))


def test_undefined_statistics_stay_undefined():
    one = np.array([1.0, 1.0, 1.0, 1.0])
    other = np.array([0.0, 1.0, 0.0, 1.0])
    row = PairCounts.build(one, other, None, n_resamples=20, seed=0).row()
    assert row["spearman"] is None and row["pearson"] is None  # a constant side
    assert row["spearman_low"] is None  # every resample undefined
    assert row["kappa"] == cohen_kappa(one, other)
    two = PairCounts.build(np.array([0.0, 1.0]), np.array([0.0, 1.0]), None).row()
    assert two["spearman"] is None and two["kappa"] is None and two["percent_agreement"] == 1.0  # below MIN_PAIRS


def test_pair_row_is_pairwise_agreement_row():
    import pandas as pd

    rng = np.random.default_rng(5)
    rows = [{"item_id": f"i{i}", "model": f"m{m}", "rater": r, "dimension": "ca", "value": float(rng.integers(0, 2))}
            for i in range(30) for m in range(3) for r in ("a", "b")]
    ratings = pd.DataFrame(rows)
    table = pairwise_agreement(ratings, bootstrap=100, seed=2).iloc[0].to_dict()
    wide = ratings.set_index(["item_id", "model", "rater"])["value"].unstack("rater")
    row = pair_row(wide["a"].to_numpy(), wide["b"].to_numpy(), bootstrap=100, seed=2,
                   clusters=wide.index.get_level_values("item_id").to_numpy(dtype=object))
    assert all(_same(row[key], table[key]) for key in row)


@pytest.mark.parametrize("trial", range(16))
def test_the_weighted_rank_interval_is_the_bootstrap_interval_on_continuous_scores(trial):
    from empathy.agreement import interval_warning, spearman_interval

    rng = np.random.default_rng(300 + trial)
    n = int(rng.integers(2, 500))
    x = rng.random(n).round(int(rng.integers(1, 4)))  # ties at one decimal, few at three
    y = (x + rng.normal(0, 0.2, n)).round(2)
    x[rng.random(n) < 0.1] = np.nan
    clusters = _clusters(rng, n, trial % 2 == 1)
    got = spearman_interval(x, y, clusters, n_resamples=200, seed=trial)
    expected = bootstrap_ci(spearman, x, y, n_resamples=200, seed=trial, clusters=clusters)
    assert _same(got.low, expected.low) and _same(got.high, expected.high)
    assert got.n_units == expected.n_units
    assert interval_warning({"spearman": got}) == interval_warning({"spearman": expected})
