"""The bootstrap kept current (:class:`empathy.bootstrap.LiveIntervals`): the same intervals as the whole
recompute (:func:`empathy.bootstrap.table_intervals` of the patched terms) on randomised data after sequences of
decisions (reverted ones included), and a decision recomputes one (task, metric) and draws no resample."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from empathy import bootstrap
from empathy.agreement import rank_correlation_test
from empathy.bootstrap import LiveIntervals, table_intervals
from empathy.evaluate import TextFeatures, plan_metrics
from empathy.metrics import judged_metrics

RESAMPLES = 200
SEED = 4
JUDGES = ("judge_a", "judge_b", "judge_c")


def _data(seed: int, *, n_items: int = 36, n_models: int = 6) -> tuple[pd.DataFrame, pd.DataFrame, TextFeatures]:
    """Two tasks, every judge on e_ref/e_gen/u_ref/u_gen/ca with some ratings missing, random sentence counts."""
    rng = np.random.default_rng(seed)
    item = np.repeat(np.arange(n_items), n_models)
    model = np.tile(np.arange(n_models), n_items)
    outputs = pd.DataFrame({"item_id": [f"i{k:03d}" for k in item], "model": [f"m{k}" for k in model],
                            "task": np.where(item % 2 == 0, "counseling", "support"),
                            "reference": "r", "generation": "g"})
    frames = []
    for judge in JUDGES:
        values = {"e_ref": rng.random(len(outputs)).round(3), "e_gen": rng.random(len(outputs)).round(3),
                  "u_ref": rng.integers(0, 4, len(outputs)).astype(float),
                  "u_gen": rng.integers(0, 4, len(outputs)).astype(float),
                  "ca": rng.integers(0, 2, len(outputs)).astype(float)}
        for dimension, column in values.items():
            keep = rng.random(len(outputs)) > 0.06
            frames.append(pd.DataFrame({"item_id": outputs["item_id"][keep], "model": outputs["model"][keep],
                                        "rater": judge, "dimension": dimension, "value": column[keep]}))
    ratings = pd.concat(frames, ignore_index=True)
    n = len(outputs)
    features = TextFeatures(rng.integers(1, 6, n).astype(float), rng.integers(1, 6, n).astype(float),
                            np.full((n, 3), np.nan), np.full((n, 3), np.nan), signature="test")
    return outputs, ratings, features


def _plan(seed: int, *, by_task: bool = True):
    outputs, ratings, features = _data(seed)
    return plan_metrics(outputs, ratings, features=features, by_task=by_task, include_ld=False), ratings


def _whole(plan, changes: pd.DataFrame | None) -> bootstrap.TableIntervals:
    return table_intervals(plan.item_terms(plan.patch(changes), metrics=judged_metrics()), n_resamples=RESAMPLES,
                           seed=SEED)


def _assert_same(fast: bootstrap.TableIntervals, whole: bootstrap.TableIntervals) -> None:
    keys = ["task", "model", "scorer", "metric"]
    assert fast.values[keys].equals(whole.values[keys])
    for column in ("ci_low", "ci_high"):
        assert np.allclose(fast.values[column].astype(float), whole.values[column].astype(float), rtol=1e-12,
                           atol=1e-12, equal_nan=True), column
    for column in ("rank", "rank_low", "rank_high", "warning"):
        assert fast.values[column].equals(whole.values[column]), column
    assert fast.agreement.drop(columns=["ci_low", "ci_high"]).equals(whole.agreement.drop(columns=["ci_low",
                                                                                                    "ci_high"]))
    for column in ("ci_low", "ci_high"):
        assert np.allclose(fast.agreement[column].astype(float), whole.agreement[column].astype(float), rtol=1e-12,
                           atol=1e-12, equal_nan=True), column


def _decisions(ratings: pd.DataFrame, seed: int, count: int) -> list[pd.DataFrame]:
    """``count`` decisions, each on one output and dimension for every judge that rated it (as the app writes a
    human label: every judge's label replaced), CA flipped, scores moved."""
    rng = np.random.default_rng(seed)
    decisions = []
    for _ in range(count):
        row = ratings.iloc[int(rng.integers(len(ratings)))]
        same = ratings[(ratings["item_id"] == row["item_id"]) & (ratings["model"] == row["model"])
                       & (ratings["dimension"] == row["dimension"])]
        if row["dimension"] == "ca":
            value = 1.0 - row["value"]
        elif row["dimension"].startswith("e_"):
            value = round(float(rng.random()), 3)
        else:
            value = float(rng.integers(0, 4))
        decisions.append(same[["item_id", "model", "rater", "dimension"]].assign(value=value))
    return decisions


@pytest.mark.parametrize(("seed", "by_task"), [(0, True), (1, True), (2, False)])
def test_every_decision_sequence_gives_the_whole_recomputes_intervals(seed, by_task):
    plan, ratings = _plan(seed, by_task=by_task)
    live = LiveIntervals(plan, metrics=judged_metrics(), n_resamples=RESAMPLES, seed=SEED)
    _assert_same(live.base, _whole(plan, None))
    pd.testing.assert_frame_equal(live.table(None).values, live.base.values)
    decisions = _decisions(ratings, 100 + seed, 6)
    applied: list[pd.DataFrame] = []
    for number, decision in enumerate(decisions):
        applied.append(decision)
        changes = pd.concat(applied, ignore_index=True)
        _assert_same(live.table(changes), _whole(plan, changes))
        if number == 2:  # a decision reverted: the table before it, exactly
            before = pd.concat(applied[:-1], ignore_index=True)
            again = live.table(before)
            _assert_same(again, _whole(plan, before))
    # every decision taken back: the base itself; and a decision writing the judges' own labels changes nothing
    own = ratings[ratings["dimension"] == "ca"].head(3)[["item_id", "model", "rater", "dimension", "value"]]
    assert live.table(own) is live.base
    assert live.table(pd.DataFrame(columns=["item_id", "model", "rater", "dimension", "value"])) is live.base


def test_the_order_of_the_decisions_does_not_matter():
    plan, ratings = _plan(5)
    live = LiveIntervals(plan, metrics=judged_metrics(), n_resamples=RESAMPLES, seed=SEED)
    decisions = _decisions(ratings, 7, 5)
    forward = live.table(pd.concat(decisions, ignore_index=True))
    fresh = LiveIntervals(plan, metrics=judged_metrics(), n_resamples=RESAMPLES, seed=SEED)
    for k in range(1, len(decisions)):
        fresh.table(pd.concat(decisions[-k:], ignore_index=True))
    backward = fresh.table(pd.concat(decisions[::-1], ignore_index=True))
    pd.testing.assert_frame_equal(forward.values, backward.values)
    pd.testing.assert_frame_equal(forward.agreement, backward.agreement)


def test_an_override_the_plan_has_no_place_for_asks_for_the_whole_recompute():
    plan, _ = _plan(3)
    live = LiveIntervals(plan, metrics=judged_metrics(), n_resamples=RESAMPLES, seed=SEED)
    unknown = pd.DataFrame({"item_id": ["nope"], "model": ["m0"], "rater": ["judge_a"], "dimension": ["ca"],
                            "value": [1.0]})
    assert live.table(unknown) is None


def test_a_decision_recomputes_one_task_metric_and_draws_nothing(monkeypatch):
    plan, ratings = _plan(4)
    live = LiveIntervals(plan, metrics=judged_metrics(), n_resamples=RESAMPLES, seed=SEED)
    groups: list[tuple[object, str]] = []
    draws: list[int] = []
    original_rows = bootstrap._TaskTable.group_rows
    original_draws = bootstrap.resample_counts

    def counted_rows(self, group, *args, **kwargs):
        groups.append((self.task, group.metric))
        return original_rows(self, group, *args, **kwargs)

    def counted_draws(*args, **kwargs):
        draws.append(1)
        return original_draws(*args, **kwargs)

    monkeypatch.setattr(bootstrap._TaskTable, "group_rows", counted_rows)
    monkeypatch.setattr(bootstrap, "resample_counts", counted_draws)
    ca = ratings[(ratings["dimension"] == "ca") & (ratings["item_id"] == "i004") & (ratings["model"] == "m2")]
    decision = ca[["item_id", "model", "rater", "dimension"]].assign(value=1.0 - ca["value"].to_numpy())
    table = live.table(decision)
    assert groups == [("counseling", "CA")] and draws == []  # item i004 is in counseling
    _assert_same(table, _whole(plan, decision))  # the whole recompute draws and computes every group
    groups.clear()
    draws.clear()
    live.table(decision)  # a rerun with the same overrides: remembered
    live.table(None)  # the judges' own labels: the base
    assert groups == [] and draws == []
    sa = ratings[(ratings["dimension"] == "e_gen") & (ratings["item_id"] == "i007") & (ratings["model"] == "m1")]
    second = pd.concat([decision, sa[["item_id", "model", "rater", "dimension"]].assign(value=0.0)],
                       ignore_index=True)
    live.table(second)  # CA of counseling is remembered, SA of support is new (EGM reads u_*, not e_gen)
    assert groups == [("support", "SA")] and draws == []


def test_the_cached_exact_rank_tests_give_the_enumerations_p_values():
    # the null counted by dynamic programming over tie patterns against rank_correlation_test's n! enumeration
    rng = np.random.default_rng(11)
    for trial in range(40):
        n = int(rng.integers(2, 9)) if trial < 36 else 10
        x = rng.integers(0, int(rng.integers(1, n + 2)), n).astype(float) if trial % 2 else rng.random(n)
        y = rng.integers(0, int(rng.integers(1, n + 2)), n).astype(float) if trial % 3 else rng.random(n)
        for statistic in ("spearman", "kendall"):
            test = rank_correlation_test(x, y, statistic=statistic)
            assert bootstrap._permutation_p(x, y, statistic, 10_000, 0) == (test.p_value, test.method, test.mc_se)
    # beyond 10 models: the Monte Carlo test itself
    x, y = rng.random(12), rng.random(12)
    test = rank_correlation_test(x, y, n_permutations=500, seed=3)
    assert bootstrap._permutation_p(x, y, "spearman", 500, 3) == (test.p_value, "monte-carlo", test.mc_se)
    # hand-worked: x = (1, 2, 3) has centred ranks (-1, 0, 1), y = (1, 2, 2) average ranks (1, 2.5, 2.5); rho's
    # numerator is rb(third) - rb(first): 1.5 when the first gets 1 (2 orderings, either 2.5 last), -1.5 when the
    # last does (2), 0 when both ends get 2.5 (2)
    values, counts = bootstrap._exact_null("spearman", (0, 1, 2), (0, 1, 1))
    assert values.tolist() == [-1.5, 0.0, 1.5] and counts.tolist() == [2, 2, 2]
    # tau's numerator over the 6 orderings of (1, 2, 3) against itself: 3 (identity), 1 (x2), -1 (x2), -3
    values, counts = bootstrap._exact_null("kendall", (0, 1, 2), (0, 1, 2))
    assert values.tolist() == [-3.0, -1.0, 1.0, 3.0] and counts.tolist() == [1, 2, 2, 1]


@pytest.mark.parametrize("seed", range(5))
def test_the_bootstrap_s_task_order_equals_the_stable_argsort(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for n_codes in (1, 3, 16, 40):
        codes = rng.integers(0, n_codes, int(rng.integers(0, 2000))).astype(np.int64)
        found = bootstrap._stable_order(codes, n_codes)
        np.testing.assert_array_equal(found, np.argsort(codes, kind="stable"))
        assert found.dtype == np.argsort(codes, kind="stable").dtype
