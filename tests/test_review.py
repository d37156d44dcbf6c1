"""Tests of empathy.review: the fast recompute equals compute_metrics; queue, filters, human agreement."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from empathy.agreement import inter_judge_spearman
from empathy.evaluate import TextFeatures, compute_metrics
from empathy.labels.ledger import apply_overrides
from empathy.review import (
    Recompute,
    disagreement,
    focus_queue,
    human_vs_judges,
    inspect_filter,
    metric_pivot,
    ranking_shift,
    relabel_queue,
)


def _synthetic(n_models: int = 6, n_judges: int = 3, n_items: int = 30, seed: int = 0, holes: bool = True):
    rng = np.random.default_rng(seed)
    models = [f"m{i}" for i in range(n_models)]
    judges = [f"j{i}" for i in range(n_judges)]
    items = [f"i{k:03d}" for k in range(n_items)]
    outputs = pd.DataFrame([(i, m, "t", f"ref {i}", f"gen {i} {m}") for m in models for i in items],
                           columns=["item_id", "model", "task", "reference", "generation"])
    rows = []
    for j in judges:
        for m in models:
            for position, i in enumerate(items):
                e_ref = 0.0 if position == 0 else rng.random()  # one undefined SA term per group
                rows += [(i, m, j, "e_ref", e_ref), (i, m, j, "e_gen", rng.random()),
                         (i, m, j, "u_ref", float(rng.integers(0, 4))), (i, m, j, "u_gen", float(rng.integers(0, 4))),
                         (i, m, j, "ca", float(rng.integers(0, 2)))]
    ratings = pd.DataFrame(rows, columns=["item_id", "model", "rater", "dimension", "value"])
    if holes:
        ratings.loc[ratings.sample(frac=0.03, random_state=seed).index, "value"] = np.nan
        # j2 never rated CA for m0: a scope difference the fast path must keep
        ratings = ratings[~((ratings["rater"] == "j2") & (ratings["model"] == "m0") & (ratings["dimension"] == "ca"))]
    ratings = ratings.assign(rater_kind="llm", reason="", signature="sig").reset_index(drop=True)
    n = len(outputs)
    features = TextFeatures(rng.integers(1, 8, n).astype(float), rng.integers(1, 8, n).astype(float),
                            rng.random((n, 3)), rng.random((n, 3)), "test-analyser")
    return outputs, ratings, features


def _overrides(ratings: pd.DataFrame, count: int, seed: int) -> pd.DataFrame:
    chosen = ratings[ratings["value"].notna()].sample(count, random_state=seed)
    table = chosen[["item_id", "model", "rater", "dimension", "value"]].copy()
    flips = {"ca": lambda v: 1 - v, "e_ref": lambda v: 1 - v, "e_gen": lambda v: 1 - v,
             "u_ref": lambda v: v + 2, "u_gen": lambda v: v + 1}
    table["value"] = [flips[d](v) for d, v in zip(table["dimension"], table["value"], strict=True)]
    return table.reset_index(drop=True)


def _assert_same(fast, slow):
    pd.testing.assert_frame_equal(fast.table, slow.table, check_exact=False, rtol=1e-12, atol=1e-12)
    pd.testing.assert_frame_equal(fast.agreement.reset_index(drop=True), slow.agreement.reset_index(drop=True),
                                  check_exact=False, rtol=1e-12, atol=1e-12)
    assert str(fast.signature) == str(slow.signature)


@pytest.mark.parametrize(("seed", "count"), [(0, 0), (1, 1), (2, 25), (3, 200)])
def test_recompute_equals_compute_metrics(seed, count):
    outputs, ratings, features = _synthetic(seed=seed)
    engine = Recompute(outputs, ratings, features)
    overrides = _overrides(ratings, count, seed) if count else None
    fast = engine.report(overrides)
    slow = compute_metrics(outputs, apply_overrides(ratings, overrides), features=features,
                           n_overrides=0 if overrides is None else len(overrides))
    _assert_same(fast, slow)


def test_scorer_without_defined_values_is_left_out_of_agreement():
    outputs, ratings, features = _synthetic(seed=6, holes=False)
    ratings = ratings.copy()
    ratings.loc[(ratings["rater"] == "j1") & (ratings["dimension"] == "ca"), "value"] = np.nan
    fast = Recompute(outputs, ratings, features).report(None)
    _assert_same(fast, compute_metrics(outputs, ratings, features=features, n_overrides=0))
    ca_pairs = fast.agreement[fast.agreement["metric"] == "CA"]
    assert ca_pairs[["scorer_a", "scorer_b"]].values.tolist() == [["j0", "j2"]]


def test_override_of_an_absent_rating_falls_back_to_full_compute():
    outputs, ratings, features = _synthetic(seed=4)
    engine = Recompute(outputs, ratings, features)
    added = pd.DataFrame({"item_id": ["i000"], "model": ["m0"], "rater": ["j2"], "dimension": ["ca"], "value": [1.0]})
    fast = engine.report(added)
    slow = compute_metrics(outputs, apply_overrides(ratings, added), features=features, n_overrides=1)
    _assert_same(fast, slow)
    before = engine.report(None).table
    n_ca = lambda t: int(t[(t.metric == "CA") & (t.scorer == "j2") & (t.model == "m0")]["n"].sum())  # noqa: E731
    assert n_ca(before) == 0 and n_ca(fast.table) == 1


def test_ca_override_changes_exactly_one_value():
    outputs, ratings, features = _synthetic(seed=5, holes=False)
    engine = Recompute(outputs, ratings, features)
    before = engine.report(None).table.set_index(["metric", "scorer", "model"])["value"]
    key = ratings[(ratings["dimension"] == "ca") & (ratings["rater"] == "j1") & (ratings["model"] == "m3")].iloc[0]
    flipped = 1.0 - key["value"]
    override = pd.DataFrame([{**key[["item_id", "model", "rater", "dimension"]].to_dict(), "value": flipped}])
    after = engine.report(override).table.set_index(["metric", "scorer", "model"])["value"]
    changed = (before - after).abs() > 1e-12
    assert list(changed[changed].index) == [("CA", "j1", "m3")]
    assert after[("CA", "j1", "m3")] == pytest.approx(before[("CA", "j1", "m3")] + (flipped - key["value"]) / 30)


def test_inter_judge_spearman_hand_worked():
    # j1 ranks A > C > B, j2 ties A and C: rho = 1.5 / sqrt(2 * 1.5) = 0.8660
    table = pd.DataFrame({"metric": ["CA"] * 6, "scorer": ["j1"] * 3 + ["j2"] * 3,
                          "model": ["A", "B", "C"] * 2, "value": [0.75, 0.25, 0.5, 0.5, 0.0, 0.5]})
    result = inter_judge_spearman(table)
    assert result.to_dict("records") == [{"metric": "CA", "scorer_a": "j1", "scorer_b": "j2",
                                          "spearman": pytest.approx(np.sqrt(3) / 2), "n_models": 3}]


def _labels() -> pd.DataFrame:
    rows = [("i1", "A", "j1", 1), ("i1", "A", "j2", 0), ("i1", "A", "j3", 1),
            ("i2", "A", "j1", 1), ("i2", "A", "j2", 1),
            ("i3", "A", "j1", 0), ("i3", "A", "j2", 0), ("i3", "A", "j3", np.nan),
            ("i4", "A", "j1", 0), ("i4", "A", "j2", 1)]
    frame = pd.DataFrame(rows, columns=["item_id", "model", "rater", "value"]).assign(dimension="ca")
    return frame.assign(value=frame["value"].astype(float), rater_kind="llm", reason="", signature="")


def test_disagreement_flags_and_spread():
    table = disagreement(_labels(), "ca").set_index("item_id")
    assert table["disagree"].to_dict() == {"i1": True, "i2": False, "i3": False, "i4": True}
    assert table["n_judges"].to_dict() == {"i1": 3, "i2": 2, "i3": 2, "i4": 2}
    assert disagreement(_labels(), "e_ref").empty


def test_disagreement_counts_only_outputs_that_exist():
    # Two items, two models; model B has no output for i2. The item x model grid has 4 cells, the data 3 outputs.
    rows = [("i1", "A", "j1", 1), ("i1", "A", "j2", 0), ("i1", "B", "j1", 1), ("i1", "B", "j2", 1),
            ("i2", "A", "j1", 0), ("i2", "A", "j2", np.nan)]
    frame = pd.DataFrame(rows, columns=["item_id", "model", "rater", "value"]).assign(
        dimension="ca", rater_kind="llm", reason="", signature="")
    table = disagreement(frame.assign(value=frame["value"].astype(float)), "ca")
    assert sorted(zip(table["item_id"], table["model"], strict=True)) == [("i1", "A"), ("i1", "B"), ("i2", "A")]
    assert len(table) == 3 and int(table["disagree"].sum()) == 1  # "disagree on 1 of 3", not "of 4"
    by_key = table.set_index(["item_id", "model"])
    assert by_key["n_judges"].to_dict() == {("i1", "A"): 2, ("i1", "B"): 2, ("i2", "A"): 1}
    assert by_key.loc[("i2", "A"), "spread"] == 0.0
    assert np.isnan(by_key.loc[("i2", "A"), "j2"])  # a missing rating keeps its output's row
    # and the relabel queue built on it, without outputs, has the same three
    assert len(relabel_queue(frame.assign(value=frame["value"].astype(float)), "ca")) == 3


def test_relabel_queue_disagreements_first_and_done_marked():
    outputs = pd.DataFrame({"item_id": ["i1", "i2", "i3", "i4", "i5"], "model": ["A"] * 5})
    done = pd.DataFrame({"item_id": ["i4"], "model": ["A"], "rater": ["j1"], "dimension": ["ca"], "value": [1.0]})
    queue = relabel_queue(_labels(), "ca", outputs, done=done)
    assert queue["item_id"].tolist() == ["i1", "i4", "i2", "i3", "i5"]
    assert queue["done"].tolist() == [False, True, False, False, False]
    assert queue["disagree"].tolist() == [True, True, False, False, False]


def test_human_vs_judges_kappa_hand_worked():
    # human labels i1..i4 = 1, 1, 0, 1; j1 = 1, 1, 0, 0 -> po = 3/4, pe = (3/4)(1/2) + (1/4)(1/2) = 1/2,
    # kappa = (3/4 - 1/2) / (1 - 1/2) = 0.5; j2 = 0, 1, 0, 1 -> po = 3/4 -> kappa 0.5 as well.
    overrides = pd.DataFrame({"item_id": ["i1", "i2", "i3", "i4"], "model": ["A"] * 4, "rater": ["j3"] * 4,
                              "dimension": ["ca"] * 4, "value": [1.0, 1.0, 0.0, 1.0],
                              "updated_at": ["t1", "t2", "t3", "t4"]})
    table = human_vs_judges(_labels(), overrides).set_index("judge")
    assert table.loc["j1", "kappa"] == pytest.approx(0.5)
    assert table.loc["j1", "percent_agreement"] == pytest.approx(0.75)
    assert table.loc["j2", "kappa"] == pytest.approx(0.5)
    assert table.loc["j3", "n"] == 1  # j3 rated i1 (and i3 missing)
    assert human_vs_judges(_labels(), None).empty


def test_ranking_shift():
    before = pd.DataFrame({"scorer": ["j"] * 3, "metric": ["CA"] * 3, "model": ["A", "B", "C"],
                           "value": [0.1, 0.2, 0.3]})
    after = before.assign(value=[0.4, 0.2, 0.3])
    moves = ranking_shift(before, after).set_index("model")
    assert moves["rank_before"].to_dict() == {"A": 1, "B": 2, "C": 3}
    assert moves["rank_after"].to_dict() == {"A": 3, "B": 1, "C": 2}
    assert moves["moved"].to_dict() == {"A": -2, "B": 1, "C": 1}


def test_inspect_filter():
    outputs = pd.DataFrame({"item_id": ["i1", "i2", "i3", "i4", "i1"], "model": ["A", "A", "A", "A", "B"],
                            "task": ["x", "x", "y", "y", "x"]})
    ratings = _labels()
    keys = lambda **kw: [tuple(r) for r in inspect_filter(outputs, ratings, **kw)[["item_id", "model"]].values]  # noqa: E731
    assert keys() == [("i1", "A"), ("i1", "B"), ("i2", "A"), ("i3", "A"), ("i4", "A")]
    assert keys(task="y") == [("i3", "A"), ("i4", "A")]
    assert keys(model="B") == [("i1", "B")]
    assert keys(judge="j3") == [("i1", "A"), ("i3", "A")]
    assert keys(dimension="ca", value=0.0) == [("i1", "A"), ("i3", "A"), ("i4", "A")]
    assert keys(dimension="ca", value=0.0, judge="j1") == [("i3", "A"), ("i4", "A")]
    assert keys(dimension="ca", disagree_only=True) == [("i1", "A"), ("i4", "A")]


def test_metric_pivot_columns():
    table = pd.DataFrame({"model": ["A", "B", "A"], "scorer": ["j", "j", "spacy"], "metric": ["CA", "CA", "LD"],
                         "value": [0.5, 1.0, 2.0], "n": [4, 4, 4]})
    pivot = metric_pivot(table)
    assert list(pivot.columns) == ["model", "CA (j)", "n CA (j)", "LD (spacy)", "n LD (spacy)"]
    assert pivot["CA (j)"].tolist() == [0.5, 1.0]
    assert pd.isna(pivot["LD (spacy)"].iloc[1])


def test_egm_readings_lists_the_models_whose_egm_differs_between_the_two_readings():
    """Hand case: m1's EGM is 0.2 with the a+b=0 items counted as 0 (n 5) and 0.5 without them (n 2); m2's is
    the same under both (no such item), so it is not listed; m3 has only a+b=0 items, undefined when left out."""
    from empathy.review import egm_readings

    def table(rows):
        return pd.DataFrame([{"task": "all", "model": model, "scorer": "j", "metric": metric, "value": value,
                              "n": n, "n_missing": 0, "n_undefined": 0} for model, metric, value, n in rows])

    zero = table([("m1", "EGM", 0.2, 5), ("m2", "EGM", 0.4, 3), ("m3", "EGM", 0.0, 2), ("m1", "SA", 0.9, 5)])
    exclude = table([("m1", "EGM", 0.5, 2), ("m2", "EGM", 0.4, 3), ("m3", "EGM", float("nan"), 0),
                     ("m1", "SA", 0.9, 5)])
    shown = egm_readings(zero, exclude)
    assert list(shown.columns) == ["model", "scorer", "EGM (a+b=0 as 0)", "n (as 0)", "EGM (a+b=0 left out)",
                                   "n (left out)"]
    assert shown["model"].tolist() == ["m1", "m3"]
    assert shown.iloc[0, 2:].tolist() == [0.2, 5, 0.5, 2]
    assert shown.iloc[1, 2] == 0.0 and np.isnan(shown.iloc[1, 4])
    per_task = egm_readings(zero.assign(task="news"), exclude.assign(task="news"))
    assert per_task.columns[0] == "task" and per_task["task"].tolist() == ["news", "news"]


# ------------------------------------------------------------------ focus_queue: one confusion cell's outputs

def _focus_fixture() -> pd.DataFrame:
    # judges: i1/A split (1 vs 0), i2/A split, i3/B agree; i4/B rated by one judge only
    rows = [("i1", "A", "gpt", 1.0), ("i1", "A", "lex", 0.0), ("i2", "A", "gpt", 0.0), ("i2", "A", "lex", 1.0),
            ("i3", "B", "gpt", 1.0), ("i3", "B", "lex", 1.0), ("i4", "B", "gpt", 0.0)]
    ratings = pd.DataFrame(rows, columns=["item_id", "model", "rater", "value"]).assign(dimension="ca")
    return relabel_queue(ratings, "ca")


@pytest.mark.parametrize(("keys", "kept", "missing"), [
    # the queue's order (disagreements first, then by item), not the keys' order
    ([("i3", "B"), ("i1", "A")], [("i1", "A"), ("i3", "B")], []),
    ([("i4", "B"), ("i2", "A"), ("i2", "A")], [("i2", "A"), ("i4", "B")], []),  # a duplicate counts once
    ([("i9", "A"), ("i1", "A"), ("i1", "Z")], [("i1", "A")], [("i9", "A"), ("i1", "Z")]),
    ([], [], []),
])
def test_focus_queue_keeps_exactly_the_keys_in_queue_order(keys, kept, missing) -> None:
    queue = _focus_fixture()
    assert list(zip(queue["item_id"], queue["model"], strict=True)) == [("i1", "A"), ("i2", "A"), ("i3", "B"),
                                                                         ("i4", "B")]
    result, absent = focus_queue(queue, keys)
    assert list(zip(result["item_id"], result["model"], strict=True)) == kept
    assert list(result.index) == list(range(len(kept)))
    assert absent == missing
    assert list(result.columns) == list(queue.columns)  # disagree, spread, done travel with the rows


@pytest.mark.parametrize("keys", [[("i1",)], [("i1", 3)], ["i1A"], [None]])
def test_focus_queue_refuses_a_key_that_is_not_a_pair(keys) -> None:
    with pytest.raises(TypeError, match="key 0"):
        focus_queue(_focus_fixture(), keys)


def test_focus_queue_needs_the_key_columns() -> None:
    with pytest.raises(ValueError, match="model"):
        focus_queue(pd.DataFrame({"item_id": ["i1"]}), [("i1", "A")])
