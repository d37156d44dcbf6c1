"""Item-cluster bootstrap intervals on model-level conclusions (issue 23, items 3 and 4): by hand, against a
straightforward reference, and their coverage."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from empathy.agreement import rank_correlation_test, spearman
from empathy.bootstrap import (
    cluster_means,
    expanded_levels,
    expanded_percentile,
    judge_agreement,
    model_intervals,
    resample_counts,
)
from empathy.vocabulary import HIGHER_IS_BETTER, LOWER_IS_BETTER
from validation.coverage import bootstrap_coverage

DOCS = Path(__file__).resolve().parent.parent / "docs" / "statistics.md"


def _reference_means(terms: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """Straightforward cluster bootstrap: draw item indices, take those rows, average each column's non-NaN."""
    draws = np.random.default_rng(seed).integers(0, terms.shape[0], size=(n_resamples, terms.shape[0]))
    return np.array([np.nanmean(terms[rows], axis=0) for rows in draws])


def test_cluster_means_equal_the_straightforward_bootstrap() -> None:
    terms = np.array([[0.1, 1.0, np.nan], [0.5, 0.0, 0.2], [0.9, 1.0, 0.4], [0.2, 0.0, np.nan]])
    fast = cluster_means(terms, n_resamples=300, seed=9)
    with np.errstate(invalid="ignore"), pytest.warns(RuntimeWarning):
        slow = _reference_means(terms, 300, 9)  # a resample of only items 0 and 3 has no usable third term
    assert fast.shape == (300, 3)
    assert np.allclose(fast, slow, equal_nan=True)
    assert np.isnan(fast[:, 2]).any()


def test_resample_counts_worked_by_hand() -> None:
    # default_rng(0).integers(0, 3, size=(2, 3)) draws [[2, 1, 1], [0, 0, 0]] (numpy's PCG64 stream): item counts
    # [0, 2, 1] and [3, 0, 0]
    assert np.random.default_rng(0).integers(0, 3, size=(2, 3)).tolist() == [[2, 1, 1], [0, 0, 0]]
    (counts,) = list(resample_counts(3, 2, 0))
    assert counts.tolist() == [[0, 2, 1], [3, 0, 0]]
    # so for terms (1, 2, 4) the two resample means are (2 + 2 + 4)/3 and 1
    assert cluster_means(np.array([[1.0], [2.0], [4.0]]), n_resamples=2, seed=0)[:, 0].tolist() == \
        pytest.approx([8 / 3, 1.0])


@pytest.mark.parametrize(("n", "low"), [
    # Phi(-sqrt(n/(n-1)) t_{n-1, 0.975}): n = 10: t = 2.262157, x 1.054093 = 2.384523, Phi(-2.384523) = 0.008551
    (10, 0.008550639024406366),
    (2, stats.norm.cdf(-math.sqrt(2.0) * 12.706204736174698)),
    # n = 41: t_{40, 0.975} = 2.021075, x sqrt(41/40) = 2.046183, Phi(-2.046183) = 0.020370
    (41, 0.020370),
])
def test_expanded_levels_by_hand(n: int, low: float) -> None:
    levels = expanded_levels(n)
    assert levels[0] == pytest.approx(low, rel=1e-4 if n == 41 else 1e-9)
    assert levels[1] == pytest.approx(1 - levels[0])


def test_expanded_percentile_reads_the_replicates_at_those_levels() -> None:
    grid = np.linspace(0.0, 1.0, 1001)  # linear quantiles of this grid are the levels themselves
    low, high = expanded_percentile(grid, 10)
    assert (low, high) == pytest.approx(expanded_levels(10))
    assert expanded_percentile(grid, 1) == (None, None)
    assert expanded_percentile(np.r_[grid[:400], np.full(600, np.nan)], 10) == (None, None)  # mostly undefined
    with pytest.raises(ValueError, match="needs n >= 2"):
        expanded_levels(1)


def _terms() -> pd.DataFrame:
    # model a is best on every item (least failure), b and c tie in value, d has one usable item of five.
    return pd.DataFrame({"a": [0.0, 0.1, 0.0, 0.1, 0.0], "b": [0.5, 0.4, 0.6, 0.5, 0.5],
                         "c": [0.6, 0.4, 0.5, 0.5, 0.5], "d": [0.9, np.nan, np.nan, np.nan, np.nan]},
                        index=[f"i{k}" for k in range(5)])


def test_model_intervals_by_hand() -> None:
    result = model_intervals(_terms(), n_resamples=400, seed=3)
    models = result.models.set_index("model")
    assert models["value"].to_dict() == pytest.approx({"a": 0.04, "b": 0.5, "c": 0.5, "d": 0.9})
    assert models["n"].to_dict() == {"a": 5, "b": 5, "c": 5, "d": 1}
    assert models.loc["b", "rank"] == models.loc["c", "rank"] == 2  # a tie shares the best rank
    assert (models.loc["a", "rank_low"], models.loc["a", "rank_high"]) == (1, 1)  # a wins every resample
    assert pd.isna(models.loc["d", "low"]) and pd.isna(models.loc["d", "high"])  # one usable item: no interval
    assert result.models["model"].tolist() == ["a", "b", "c", "d"]  # best first (ties by name)
    replicates = cluster_means(_terms().to_numpy(float), n_resamples=400, seed=3)
    assert (models.loc["a", "low"], models.loc["a", "high"]) == pytest.approx(expanded_percentile(replicates[:, 0],
                                                                                                  5))
    pairs = result.pairs.set_index("better")
    assert pairs.loc["a", "worse"] == "b" and pairs.loc["a", "p_better"] == 1.0
    # b and c: c - b per resample; equal on the full data (difference 0)
    assert pairs.loc["b", "difference"] == pytest.approx(0.0)
    diff = replicates[:, 2] - replicates[:, 1]
    expected = float(np.mean(np.where(diff > 0, 1.0, np.where(diff == 0, 0.5, 0.0))))
    assert pairs.loc["b", "p_better"] == pytest.approx(expected)
    assert result.signature_fields() == {"bootstrap": "items", "interval": "expanded-percentile",
                                         "resamples": "400", "bootstrap-seed": "3"}


def test_higher_is_better_reverses_ranks_and_pairs() -> None:
    result = model_intervals(_terms()[["a", "b"]], n_resamples=200, seed=1, direction=HIGHER_IS_BETTER)
    assert result.models["model"].tolist() == ["b", "a"]
    assert result.pairs.iloc[0][["better", "worse"]].tolist() == ["b", "a"]
    assert result.pairs.iloc[0]["difference"] == pytest.approx(0.46)


def _reference_models(terms: np.ndarray, replicates: np.ndarray, direction: str) -> pd.DataFrame:
    """Every model's value, interval and ranks column by column, the first way they were computed: a pandas rank
    of the replicates and one quantile call per column and bound."""
    n = (~np.isnan(terms)).sum(axis=0)
    values = np.where(n > 0, np.nansum(terms, axis=0) / np.maximum(n, 1), np.nan)
    sign = 1.0 if direction == LOWER_IS_BETTER else -1.0
    ranks = pd.DataFrame(sign * replicates).rank(axis=1, method="min").to_numpy(float)
    points = pd.DataFrame(sign * values[None, :]).rank(axis=1, method="min").to_numpy(float)[0]
    rows = []
    for j in range(terms.shape[1]):
        low, high = expanded_percentile(replicates[:, j], int(n[j])) if n[j] else (None, None)
        defined = ranks[:, j][~np.isnan(ranks[:, j])]
        rank_low, rank_high = ((int(np.quantile(defined, 0.025, method="inverted_cdf")),
                                int(np.quantile(defined, 0.975, method="inverted_cdf")))
                               if len(defined) and not np.isnan(values[j]) else (None, None))
        rows.append({"model": f"m{j}", "value": None if np.isnan(values[j]) else values[j], "n": int(n[j]),
                     "low": low, "high": high, "rank": None if np.isnan(points[j]) else int(points[j]),
                     "rank_low": rank_low, "rank_high": rank_high})
    return pd.DataFrame(rows).set_index("model")


@pytest.mark.parametrize("direction", [LOWER_IS_BETTER, HIGHER_IS_BETTER])
def test_model_intervals_equal_the_column_by_column_computation(direction: str) -> None:
    # ties (values on a grid of tenths), models with missing terms (some resamples leave them unscored), a model
    # of one usable item (no interval) and one of none: every path of the vectorised rows and ranks
    rng = np.random.default_rng(11)
    terms = np.round(rng.random((9, 7)), 1)
    terms[rng.random((9, 7)) < 0.35] = np.nan
    terms[:, 4] = np.nan
    terms[2, 4] = 0.3
    terms[:, 5] = np.nan
    terms[:, 6] = terms[:, 0]  # a model tied with another on every item
    frame = pd.DataFrame(terms, columns=[f"m{j}" for j in range(7)])
    result = model_intervals(frame, n_resamples=300, seed=5, direction=direction)
    replicates = cluster_means(terms, n_resamples=300, seed=5)
    assert np.isnan(replicates).any(axis=0).sum() >= 2  # some models go unscored on some resamples
    expected = _reference_models(terms, replicates, direction)
    got = result.models.set_index("model").loc[expected.index]
    for column in ("n", "rank", "rank_low", "rank_high"):
        assert [None if pd.isna(v) else int(v) for v in got[column]] == \
            [None if pd.isna(v) else int(v) for v in expected[column]], column
    for column in ("value", "low", "high"):  # the same quantiles: equal, not close
        assert [None if pd.isna(v) else float(v) for v in got[column]] == \
            [None if pd.isna(v) else float(v) for v in expected[column]], column


@pytest.mark.parametrize(("call", "error", "match"), [
    (lambda: model_intervals([[1.0]]), TypeError, "terms must be an items x models DataFrame"),
    (lambda: model_intervals(_terms(), n_resamples=0), ValueError, "n_resamples must be a positive"),
    (lambda: model_intervals(_terms(), confidence=1.5), ValueError, r"confidence must be in \(0, 1\)"),
    (lambda: model_intervals(_terms(), seed=-2), ValueError, "seed must be a whole number"),
    (lambda: model_intervals(_terms(), direction="up"), ValueError, "direction must be one of"),
    (lambda: model_intervals(_terms().assign(a="x")), TypeError, "terms must be numeric"),
    (lambda: model_intervals(_terms().assign(a=np.inf)), ValueError, r"terms\[0, 0\] is infinite"),
    (lambda: judge_agreement(pd.DataFrame({"item_id": []})), ValueError, "terms lacks the column"),
])
def test_bad_bootstrap_inputs(call, error, match) -> None:
    with pytest.raises(error, match=match):
        call()


def _long(rng: np.random.Generator, n_items: int = 30) -> pd.DataFrame:
    # three judges, five models; judge y is x plus noise, judge z unrelated
    base = np.array([0.1, 0.3, 0.5, 0.7, 0.9])
    rows = []
    for k in range(n_items):
        x = np.clip(base + rng.normal(0, 0.2, 5), 0, 1)
        for judge, values in (("x", x), ("y", np.clip(x + rng.normal(0, 0.1, 5), 0, 1)), ("z", rng.random(5))):
            rows += [(f"i{k}", f"m{j}", judge, float(v)) for j, v in enumerate(values)]
    frame = pd.DataFrame(rows, columns=["item_id", "model", "judge", "term"])
    frame.loc[(frame["judge"] == "z") & (frame["item_id"] == "i0"), "term"] = np.nan  # a term left out
    return frame


def test_judge_agreement_is_table_6_with_its_uncertainty() -> None:
    terms = _long(np.random.default_rng(4))
    result = judge_agreement(terms, n_resamples=300, seed=2)
    table = result.table.set_index(["scorer_a", "scorer_b"])
    assert list(table.index) == [("x", "y"), ("x", "z"), ("y", "z")]
    means = terms.groupby(["judge", "model"])["term"].mean().unstack("model")
    row = table.loc[("x", "z")]
    assert row["spearman"] == pytest.approx(spearman(means.loc["x"], means.loc["z"]))
    exact = rank_correlation_test(means.loc["x"], means.loc["z"])
    assert (row["p_exact"], row["p_method"], row["p_se"]) == (exact.p_value, "exact", None)
    assert row["kendall_tau_b"] == pytest.approx(stats.kendalltau(means.loc["x"], means.loc["z"]).statistic)
    assert row["n_models"] == 5 and row["n_items"] == 30
    # the interval: percentile of rho over item resamples shared by both judges (reference computed directly)
    wide = terms.pivot_table(index="item_id", columns=["judge", "model"], values="term", aggfunc="first",
                             dropna=False)
    replicates = cluster_means(wide.to_numpy(float), n_resamples=300, seed=2)
    columns = list(wide.columns)
    rhos = [stats.spearmanr(r[[columns.index(("x", f"m{j}")) for j in range(5)]],
                            r[[columns.index(("z", f"m{j}")) for j in range(5)]]).statistic for r in replicates]
    rhos = [v for v in rhos if not math.isnan(v)]
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(tuple(np.quantile(rhos, [0.025, 0.975])))
    assert table.loc[("x", "y"), "ci_low"] > 0.5  # y follows x
    assert result.signature_fields()["rho-interval"] == "percentile"
    with pytest.raises(ValueError, match=r"judge\(s\) \['w'\] have no terms"):
        judge_agreement(terms, judges=["x", "w"])


@pytest.mark.parametrize("kind", ["continuous", "binary"])
def test_bootstrap_intervals_cover(kind: str) -> None:
    # 500 seeded data sets of 40 items x 3 models with a shared item effect: per-model means and a difference
    docs = DOCS.read_text(encoding="utf-8")
    for result in bootstrap_coverage(kind):
        assert 0.93 <= result.coverage <= 0.97, result
        assert result.row() in docs, result.row()
