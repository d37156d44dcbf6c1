"""A whole results table's intervals from one item resample per task (empathy.bootstrap.table_intervals) and the
table with its PPI rows beside (empathy.inference.estimator_table): against the per-group functions and by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from empathy.audit import draw_audit
from empathy.bootstrap import judge_agreement, model_intervals, table_intervals
from empathy.inference import estimator_signature_fields, estimator_table, ppi_estimates


def _terms(seed: int = 0) -> pd.DataFrame:
    """Two tasks of 30 items, three models, judges a and b on metric CA, and judge c scoring only task t's first 12
    items; every term 0/1 with an item effect shared by the models."""
    rng = np.random.default_rng(seed)
    rows = []
    for task in ("s", "t"):
        for k in range(30):
            item = f"{task}{k:02d}"
            effect = rng.normal()
            for j, model in enumerate(("m1", "m2", "m3")):
                for judge in ("a", "b", "c"):
                    if judge == "c" and (task == "s" or k >= 12):
                        continue
                    term = float(effect + 0.4 * j + rng.normal() > 0.5)
                    rows.append((task, item, model, judge, "CA", term))
    return pd.DataFrame(rows, columns=["task", "item_id", "model", "scorer", "metric", "term"])


def test_a_group_over_all_of_a_tasks_items_gets_model_intervals_exactly():
    terms = _terms()
    result = table_intervals(terms, n_resamples=300, seed=11)
    for (task, judge), part in terms[terms["scorer"] != "c"].groupby(["task", "scorer"]):
        expected = model_intervals(part.pivot(index="item_id", columns="model", values="term"), n_resamples=300,
                                   seed=11).models.set_index("model")
        got = result.values[(result.values["task"] == task) & (result.values["scorer"] == judge)].set_index("model")
        for model in ("m1", "m2", "m3"):
            assert (got.loc[model, "ci_low"], got.loc[model, "ci_high"]) == pytest.approx(
                (expected.loc[model, "low"], expected.loc[model, "high"]))
            assert [int(got.loc[model, c]) for c in ("rank", "rank_low", "rank_high")] == [
                int(expected.loc[model, c]) for c in ("rank", "rank_low", "rank_high")]


def test_table6_rows_are_judge_agreements_on_the_same_resamples():
    terms = _terms()
    result = table_intervals(terms, n_resamples=300, seed=11).agreement
    part = terms[(terms["task"] == "s")].rename(columns={"scorer": "judge"})
    expected = judge_agreement(part, n_resamples=300, seed=11).table.iloc[0]
    got = result[(result["task"] == "s")].iloc[0]
    assert (got["scorer_a"], got["scorer_b"]) == ("a", "b")
    for column in ("spearman", "ci_low", "ci_high", "p_exact", "kendall_tau_b", "p_kendall", "n_items", "n_models"):
        assert got[column] == pytest.approx(expected[column]), column
    # task t has three judges: three pairs, c's over its 12 items
    pairs = result[result["task"] == "t"]
    assert pairs[["scorer_a", "scorer_b"]].values.tolist() == [["a", "b"], ["a", "c"], ["b", "c"]]
    assert pairs["n_items"].tolist() == [30, 30, 30]  # items either judge scored


def test_a_judge_of_fewer_items_is_resampled_within_the_task_and_zero_resamples_give_no_interval():
    terms = _terms()
    values = table_intervals(terms, n_resamples=300, seed=11).values
    c = values[values["scorer"] == "c"]
    means = terms[terms["scorer"] == "c"].groupby("model")["term"].mean()
    assert len(c) == 3 and (c["task"] == "t").all()
    for row in c.to_dict("records"):
        assert row["ci_low"] <= means[row["model"]] <= row["ci_high"]
    none = table_intervals(terms, n_resamples=0, seed=11)
    assert none.values["ci_low"].isna().all() and none.values["rank_low"].isna().all()
    assert none.values["rank"].notna().all() and none.agreement["ci_low"].isna().all()
    assert none.agreement["p_exact"].notna().all()
    assert none.signature_fields()["bootstrap"] == "none"


def test_only_an_interval_shown_is_flagged_for_resting_on_few_items():
    # judge a: m3 unscored in task s (no usable term), m2 scored on one item of task t (a value, no interval), m1
    # scored on 5 items of task t (an interval on fewer than 10 items); the rest on all 30 items
    terms = _terms()
    judge_a = terms["scorer"] == "a"
    item_number = terms["item_id"].str[1:].astype(int)
    gone = judge_a & (((terms["task"] == "s") & (terms["model"] == "m3"))
                      | ((terms["task"] == "t") & (terms["model"] == "m2") & (item_number >= 1))
                      | ((terms["task"] == "t") & (terms["model"] == "m1") & (item_number >= 5)))
    terms.loc[gone, "term"] = np.nan
    values = table_intervals(terms, n_resamples=200, seed=3).values.set_index(["task", "scorer", "model"])
    few = values.loc[("t", "a", "m1")]
    assert few["ci_low"] <= few["ci_high"]
    assert few["warning"] == ("value interval rests on 5 items (fewer than 10): the percentile bootstrap "
                              "understates the uncertainty here")
    for shown_without_interval in (("s", "a", "m3"), ("t", "a", "m2")):
        row = values.loc[shown_without_interval]
        assert pd.isna(row["ci_low"]) and pd.isna(row["ci_high"])
        assert pd.isna(row["warning"]), shown_without_interval  # no interval, nothing to flag
    assert values.loc[("t", "a", "m2"), "rank"] >= 1 and pd.isna(values.loc[("s", "a", "m3"), "rank"])
    # the others: a warning exactly where a share rests on fewer than 8 of its rarer label (CA is a share)
    for key, row in values.drop(index=[("t", "a", "m1"), ("s", "a", "m3"), ("t", "a", "m2")]).iterrows():
        task, scorer, model = key
        cell = terms[(terms["task"] == task) & (terms["scorer"] == scorer) & (terms["model"] == model)]["term"]
        rare = int(min(cell.sum(), cell.count() - cell.sum()))
        assert (isinstance(row["warning"], str) and "rarer label" in row["warning"]) == (rare < 8), (key, rare)


def test_a_row_twice_and_bad_settings_are_refused():
    terms = _terms()
    with pytest.raises(ValueError, match=r"terms hold \(s, s00, m1, a, CA\) twice"):
        table_intervals(pd.concat([terms, terms.iloc[:1]]), n_resamples=10)
    with pytest.raises(ValueError, match="n_resamples"):
        table_intervals(terms, n_resamples=-1)
    empty = table_intervals(terms.iloc[:0], n_resamples=10)
    assert empty.values.empty and empty.agreement.empty


def test_estimator_table_puts_each_ppi_row_beside_its_judge_row():
    outputs = pd.DataFrame({"item_id": [f"i{k}" for k in range(20)] * 2, "model": ["a"] * 20 + ["b"] * 20})
    rng = np.random.default_rng(3)
    judge = rng.integers(0, 2, 40).astype(float)
    ratings = pd.DataFrame({**outputs, "rater": "J", "dimension": "ca", "value": judge})
    design = draw_audit(outputs, ratings, judge="J", dimension="ca", per_model=8, seed=2)
    decisions = pd.DataFrame([(o.item_id, o.model, 1.0 - judge[(o.model == "b") * 20 + int(o.item_id[1:])])
                              for o in design.outputs], columns=["item_id", "model", "value"])
    report = ppi_estimates(outputs, ratings, design, decisions)
    table = pd.DataFrame({"task": "all", "model": ["a", "b", "a"], "scorer": ["J", "J", "spacy-distancing"],
                          "metric": ["CA", "CA", "LD"], "value": [judge[:20].mean(), judge[20:].mean(), 1.5],
                          "n": [20, 20, 20], "n_missing": 0, "n_undefined": 0})
    intervals = pd.DataFrame({"task": "all", "model": ["a", "b"], "scorer": "J", "metric": "CA",
                              "ci_low": [0.1, 0.2], "ci_high": [0.8, 0.9], "rank_low": [1, 1], "rank_high": [2, 2]})
    rows = estimator_table(table, intervals, [report], by_task=False)
    assert rows["estimator"].tolist() == ["judge", "ppi", "judge", "ppi", "detector"]
    ppi = rows[rows["estimator"] == "ppi"].set_index("model")
    expected = report.table.set_index("model")
    a_first, ppi_a_first = (judge[:20].mean() <= judge[20:].mean(),
                            expected.loc["a", "ppi_value"] <= expected.loc["b", "ppi_value"])
    # a PPI row is ranked among the audit's corrected values (no rank interval: that needs the bootstrap's joint
    # resamples), and carries the contract's counts and its warning
    assert rows["rank"].tolist() == [1 if a_first else 2, 1 if ppi_a_first else 2, 2 if a_first else 1,
                                     2 if ppi_a_first else 1, 1]
    assert ppi["rank_low"].isna().all() and ppi["rank_high"].isna().all()
    assert (ppi["n_missing"] == 0).all() and (ppi["n_undefined"] == 0).all()
    assert ppi["warning"].tolist() == expected["warning"].tolist()
    assert ppi["value"].tolist() == pytest.approx(expected["ppi_value"].tolist())
    assert ppi["human"].tolist() == pytest.approx(expected["human_value"].tolist())
    assert (ppi["n_audit"] == 8).all() and (ppi["audit"] == design.short_digest).all()
    # every decision contradicts the judge: the human-only value is the share of 0s the judge gave the audit
    for model in ("a", "b"):
        audited = [judge[(model == "b") * 20 + int(o.item_id[1:])] for o in design.outputs if o.model == model]
        assert ppi.loc[model, "human"] == pytest.approx(1.0 - np.mean(audited))
    assert rows.loc[0, "ci_low"] == 0.1 and pd.isna(rows.loc[4, "ci_low"])
    fields = estimator_signature_fields([report, report])
    assert fields["estimator"] == "judge+ppi++" and fields["audit"] == f"{design.short_digest}+{design.short_digest}"
    assert fields["confidence"] == "0.95" and estimator_signature_fields([]) == {"estimator": "judge"}


@pytest.mark.parametrize(("by_task", "metrics"), [(True, None), (False, None), (True, ("CA",))])
def test_plan_intervals_equal_table_intervals_of_the_plans_item_terms(by_task, metrics):
    # the demo data set (two judges, several tasks) with sentence counts drawn at random: the layout from the plan's
    # codes gives the very table the long table of names gives, per task and pooled, for every metric or one
    from pathlib import Path

    from empathy.bootstrap import plan_intervals
    from empathy.evaluate import TextFeatures, plan_metrics
    from empathy.io import load_dataset
    from empathy.metrics import judged_metrics

    data = Path(__file__).resolve().parent.parent / "data"
    dataset = load_dataset(data / "outputs.csv", [data / "ratings_author.csv", data / "ratings_lexicon.csv"])
    rng = np.random.default_rng(2)
    n = len(dataset.outputs)
    features = TextFeatures(rng.integers(1, 6, n).astype(float), rng.integers(1, 6, n).astype(float),
                            np.zeros((n, 3)), np.zeros((n, 3)), "test")
    plan = plan_metrics(dataset.outputs, dataset.ratings, features=features, by_task=by_task, include_ld=False)
    names = judged_metrics() if metrics is None else metrics
    expected = table_intervals(plan.item_terms(metrics=names), n_resamples=200, seed=4)
    got = plan_intervals(plan, metrics=names, n_resamples=200, seed=4)
    assert len(got.values) >= 10 and set(got.values["metric"]) == set(names)
    pd.testing.assert_frame_equal(got.values, expected.values)
    pd.testing.assert_frame_equal(got.agreement, expected.agreement)
    assert got.signature_fields() == expected.signature_fields()


def test_beside_is_the_left_join_of_table6_with_its_intervals():
    intervals = table_intervals(_terms(), n_resamples=100, seed=2)
    keys = ["task", "metric", "scorer_a", "scorer_b"]
    report = intervals.agreement[[*keys, "spearman", "n_models"]].iloc[::-1].reset_index(drop=True)
    report.index = report.index + 7  # an index of its own is kept
    joined = intervals.beside(report)
    pd.testing.assert_frame_equal(joined.reset_index(drop=True), report.merge(
        intervals.agreement.drop(columns=["spearman", "n_models"]), on=keys, how="left"))
    assert list(joined.index) == list(report.index)
    # a pair the intervals do not hold: missing there, as the join has it
    stranger = pd.concat([report, report.iloc[[0]].assign(scorer_b="zz")], ignore_index=True)
    expected = stranger.merge(intervals.agreement.drop(columns=["spearman", "n_models"]), on=keys, how="left")
    pd.testing.assert_frame_equal(intervals.beside(stranger), expected)
    assert intervals.beside(stranger)["ci_low"].isna().tolist() == [False] * len(report) + [True]
    assert intervals.beside(report.iloc[:0]).columns.tolist() == expected.columns.tolist()


def test_rho_on_few_items_carries_its_own_warning():
    rng = np.random.default_rng(5)
    rows = [{"task": "t", "item_id": f"i{i}", "model": f"m{m}", "scorer": judge, "metric": "CA",
             "term": float(rng.integers(0, 2))} for i in range(6) for m in range(4) for judge in ("a", "b")]
    result = table_intervals(pd.DataFrame(rows), n_resamples=200, seed=0)
    (warning,) = result.agreement["rho_warning"]
    assert "rho interval" in warning and "fewer than 10" in warning
    no_resamples = table_intervals(pd.DataFrame(rows), n_resamples=0)
    assert no_resamples.agreement["rho_warning"].isna().all()
