"""The mechanism x disagreement map and judge-vs-human calibration, on data sets worked by hand."""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from empathy.calibration import (
    ALL_MODELS,
    calibration_bias,
    calibration_bins,
    confusion_cells,
    confusion_matrix,
    dilution_benchmark,
    item_splits,
    paired,
)
from empathy.slice_tests import (
    cluster_rate_interval,
    exact_slice_p,
    exact_sum_distribution,
    holm,
    permutation_p_values,
    wilson_interval,
)
from empathy.slices import (
    ALL_JUDGES,
    default_threshold,
    describe,
    judge_human_events,
    judge_judge_events,
    output_features,
    override_events,
    ranked_slices,
    slice_feature,
    slice_map,
)


def _rating(item: str, model: str, rater: str, dimension: str, value: float, kind: str) -> dict[str, object]:
    return {"item_id": item, "model": model, "rater": rater, "dimension": dimension, "value": value,
            "rater_kind": kind}


# Six outputs (items 1-6 of model m), one human (author) and one judge (lexicon) on CA. The judge disagrees on
# outputs 4 and 5. The generation's agentless density is 0, 0, 0, 1, 2, 3.
CA_HUMAN = [0, 1, 0, 0, 1, 1]
CA_JUDGE = [0, 1, 0, 1, 0, 1]
AGENTLESS = [0.0, 0.0, 0.0, 1.0, 2.0, 3.0]


def _six() -> tuple[pd.DataFrame, pd.DataFrame]:
    ratings = pd.DataFrame(
        [_rating(str(i + 1), "m", "author", "ca", CA_HUMAN[i], "author") for i in range(6)]
        + [_rating(str(i + 1), "m", "lexicon", "ca", CA_JUDGE[i], "lexicon") for i in range(6)])
    features = pd.DataFrame({"item_id": [str(i + 1) for i in range(6)], "model": "m",
                             "agentless_gen": AGENTLESS, "task": ["a", "a", "b", "b", "b", "b"]})
    return features, ratings


def test_judge_human_events_by_hand() -> None:
    _, ratings = _six()
    events, threshold = judge_human_events(ratings, "ca")
    assert threshold == 0.5
    assert events["event"].tolist() == [0, 0, 0, 1, 1, 0]
    assert events["human_value"].tolist() == [float(v) for v in CA_HUMAN]
    assert set(events["judge"]) == {"lexicon"}


def test_slice_rates_and_exact_p_by_hand() -> None:
    # The median (an observed value) of the agentless densities is 0: slices "<= 0" (outputs 1-3, 0 of 3
    # disagree) and "> 0" (outputs 4-6, 2 of 3). Whole: 2/6. Both slices depart by 1/3. Under the null the
    # slice is any 3 of the 6 outputs: C(6, 3) = 20 ways, of which 4 hold neither disagreement (rate 0) and
    # 4 hold both (rate 2/3), so p = 8/20 = 0.4 exactly; Holm over the two slices: 0.8.
    features, ratings = _six()
    events, _ = judge_human_events(ratings, "ca")
    result = slice_map(features, events, outcome="judge_human", dimension="ca", feature_names=["agentless_gen"],
                       bins=2, n_permutations=20)
    table = result.table
    assert table["slice"].tolist() == ["<= 0", "> 0"]
    assert table["n_outputs"].tolist() == [3, 3]
    assert table["events"].tolist() == [0, 2]
    assert table["rate"].tolist() == pytest.approx([0.0, 2 / 3])
    assert table["whole_rate"].tolist() == pytest.approx([1 / 3, 1 / 3])
    assert table["rate_ratio"].tolist() == pytest.approx([0.0, 2.0])
    assert table["p_value"].tolist() == pytest.approx([0.4, 0.4])
    assert table["p_method"].tolist() == ["exact", "exact"]
    assert table["p_holm"].tolist() == pytest.approx([0.8, 0.8])
    assert table["outputs"].tolist()[1] == [("4", "m"), ("5", "m"), ("6", "m")]
    assert result.signature_fields() == {"permutations": "20", "slices": "holm"}


def test_monte_carlo_p_is_seeded_and_near_the_exact_value() -> None:
    features, ratings = _six()
    events, _ = judge_human_events(ratings, "ca")
    first = slice_map(features, events, outcome="judge_human", dimension="ca", feature_names=["agentless_gen"],
                      bins=2, n_permutations=19, seed=3).table
    again = slice_map(features, events, outcome="judge_human", dimension="ca", feature_names=["agentless_gen"],
                      bins=2, n_permutations=19, seed=3).table
    assert first["p_method"].tolist() == ["monte-carlo", "monte-carlo"]
    assert first["p_value"].tolist() == again["p_value"].tolist()
    # (1 + b) / (1 + B): a multiple of 1/20, never 0
    assert all(math.isclose(p * 20, round(p * 20)) and p > 0 for p in first["p_value"])
    # two slices, 19 permutations: no Holm p-value can fall below 2 / 20
    assert slice_map(features, events, outcome="judge_human", dimension="ca", feature_names=["agentless_gen"],
                     bins=2, n_permutations=19).holm_floor == pytest.approx(0.1)
    many = slice_map(features, events, outcome="judge_human", dimension="ca", feature_names=["agentless_gen"],
                     bins=2, n_permutations=20_000, seed=1).table
    assert many["p_value"].tolist() == pytest.approx([0.4, 0.4], abs=0.015)


@pytest.mark.parametrize("size", [2, 3, 4, 5])
def test_exact_p_is_the_hypergeometric_tail(size: int) -> None:
    # One unit per output: the permutation distribution of a slice's events is hypergeometric, so the exact
    # p-value is P(|X/k - E/N| >= observed) under hypergeom(N, E, k).
    events = np.array([1, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 1], dtype=float)
    codes = np.zeros(12, dtype=np.int64)
    codes[:size] = 1  # the slice: the first `size` outputs
    p, methods = permutation_p_values(codes, events, np.ones(12), n_permutations=1000)
    assert methods[1] == "exact"
    whole = events.sum() / 12
    observed = abs(events[:size].sum() / size - whole)
    x = np.arange(0, size + 1)
    reference = stats.hypergeom(12, int(events.sum()), size).pmf(x)[np.abs(x / size - whole) >= observed - 1e-12].sum()
    assert p[1] == pytest.approx(reference)


def test_exact_p_with_several_units_per_output_by_enumeration() -> None:
    # Outputs carry 2 judges each: events (2, 0, 1, 0), units 2 each. The slice {0}: rate 1, whole 3/8.
    # Choices of one output: rates 1, 0, 0.5, 0 -> |r - 3/8| = 5/8, 3/8, 1/8, 3/8: only output 0 is as
    # extreme, p = 1/4.
    p, methods = permutation_p_values(np.array([1, 0, 0, 0]), np.array([2.0, 0, 1, 0]), np.full(4, 2.0),
                                      n_permutations=10)
    assert methods == ["exact", "exact"]
    assert p[1] == pytest.approx(0.25)
    # The complement (3 outputs, rate 1/6, |1/6 - 3/8| = 5/24): choices of 3 have rates 1/6, 1/2, 1/3, 1/2 for
    # leaving out 0, 1, 2, 3, deviations 5/24, 1/8, 1/24, 1/8: again only 1 of 4.
    assert p[0] == pytest.approx(0.25)
    brute = [abs(sum([2.0, 0, 1, 0][i] for i in c) / 6 - 3 / 8) for c in combinations(range(4), 3)]
    assert sum(d >= 5 / 24 - 1e-12 for d in brute) / len(brute) == pytest.approx(0.25)


@pytest.mark.parametrize(("p", "expected"), [
    ([0.01, 0.04, 0.03, 0.005], [0.03, 0.06, 0.06, 0.02]),
    ([0.5, 0.2], [0.5, 0.4]),
    ([0.3, math.nan, 0.6], [0.6, math.nan, 0.6]),
    ([], []),
])
def test_holm_by_hand(p: list[float], expected: list[float]) -> None:
    assert holm(p).tolist() == pytest.approx(expected, nan_ok=True)


@pytest.mark.parametrize(("values", "thresholds", "labels", "codes"), [
    ([0, 0, 0, 0, 1, 2], None, ["<= 0", "> 0"], [0, 0, 0, 0, 1, 1]),
    ([1, 2, 3, 4, 5, 6], None, ["<= 2", "(2, 4]", "> 4"], [0, 0, 1, 1, 2, 2]),
    ([0, 1, 2, math.nan], [2], ["< 2", ">= 2", "missing"], [0, 0, 1, 2]),
    ([0, 1, 2, 3], [1, 3], ["< 1", "[1, 3)", ">= 3"], [0, 1, 1, 2]),
])
def test_slice_feature_cuts(values: list[float], thresholds: list[float] | None, labels: list[str],
                            codes: list[int]) -> None:
    slicing = slice_feature("agentless_gen", pd.Series(values, dtype=float), bins=3, thresholds=thresholds)
    assert slicing.labels == labels
    assert slicing.codes.tolist() == codes
    assert math.isnan(slicing.low[0]) and all(math.isfinite(v) or math.isnan(v) for v in slicing.low + slicing.high)


def test_threshold_bounds() -> None:
    slicing = slice_feature("agentless_gen", pd.Series([0.0, 1.0, 2.0, 3.0]), thresholds=[1, 3])
    assert slicing.low[1:] == [1.0, 3.0] and slicing.high[:2] == [1.0, 3.0]
    assert math.isnan(slicing.high[2])


def test_task_slices_and_per_judge() -> None:
    features, ratings = _six()
    events, _ = judge_human_events(ratings, "ca")
    table = slice_map(features, events, outcome="judge_human", dimension="ca", feature_names=["task"],
                      per_judge=True).table
    # Task a: outputs 1-2, no disagreement; task b: 2 of 4. Pooled and the one judge give the same rows.
    assert table["judge"].tolist() == [ALL_JUDGES, ALL_JUDGES, "lexicon", "lexicon"]
    assert table["slice"].tolist() == ["a", "b", "a", "b"]
    assert table["rate"].tolist() == pytest.approx([0.0, 0.5, 0.0, 0.5])
    # C(6, 2) = 15 choices of task a's two outputs: 6 hold no disagreement (|0 - 1/3|), 1 holds both (|1 - 1/3|)
    assert table["p_value"].tolist()[0] == pytest.approx(7 / 15)


def test_ranked_slices_and_description() -> None:
    features, ratings = _six()
    events, _ = judge_human_events(ratings, "ca")
    table = slice_map(features, events, outcome="judge_human", dimension="ca", bins=2, n_permutations=20).table
    ranked = ranked_slices(table, min_units=3)
    assert ranked.iloc[0]["p_holm"] == ranked["p_holm"].min()
    assert (ranked["n_units"] >= 3).all()
    assert ranked_slices(table, min_units=4)["n_units"].min() >= 4
    text = describe(ranked.iloc[0])
    assert "judge-human disagreement on ca (all judges)" in text and "p = " in text


def test_judge_judge_and_override_events() -> None:
    ratings = pd.DataFrame([
        _rating("1", "m", "j1", "ca", 1, "llm"), _rating("1", "m", "j2", "ca", 0, "llm"),
        _rating("2", "m", "j1", "ca", 1, "llm"), _rating("2", "m", "j2", "ca", 1, "llm"),
        _rating("3", "m", "j1", "ca", 0, "llm"),
    ])
    events, threshold = judge_judge_events(ratings, "ca")
    assert threshold == 0.5
    assert events[["item_id", "n_judges", "event"]].values.tolist() == [["1", 2, 1], ["2", 2, 0]]
    applied = pd.DataFrame([
        {"item_id": "1", "model": "m", "rater": "j1", "dimension": "ca", "value": 0.0},  # overrides j1's 1
        {"item_id": "2", "model": "m", "rater": "j2", "dimension": "ca", "value": 1.0},  # confirms j2's 1
    ])
    overridden = override_events(ratings, applied, "ca")
    assert overridden["event"].tolist() == [1, 0, 0, 0, 0]
    assert override_events(ratings, pd.DataFrame(), "ca")["event"].sum() == 0


@pytest.mark.parametrize(("dimension", "values", "expected"), [
    ("ca", [0, 1, 1], 0.5),
    ("empathy", [1, 3, 5], 1.0),
    ("e_gen", [0.0, 0.25, 1.0], 0.2),
    ("e_gen", [0.4, 0.4], 1.0),
])
def test_default_threshold(dimension: str, values: list[float], expected: float) -> None:
    assert default_threshold(dimension, np.array(values, dtype=float)) == pytest.approx(expected)


def test_output_features_by_hand() -> None:
    outputs = pd.DataFrame({"item_id": ["1", "2"], "model": ["m", "m"], "task": ["t", "t"],
                            "reference": ["r", "r2"], "generation": ["one two three", ""]})
    ratings = pd.DataFrame([
        _rating("1", "m", "j1", "u_gen", 2, "llm"), _rating("1", "m", "j2", "u_gen", 4, "lexicon"),
        _rating("1", "m", "j1", "e_ref", 0.8, "llm"), _rating("1", "m", "j1", "e_gen", 0.3, "llm"),
        _rating("1", "m", "h", "e_gen", 0.0, "expert"),  # a human: not a judge, not in the features
    ])
    frame = output_features(outputs, ratings, [2.0, 1.0], [3.0, 0.0],
                            np.array([[0.5, 0.0, 1.0], [0.0, 0.0, 0.0]]), np.array([[1.0, 0.5, 0.0], [0, 0, 0]]))
    first = frame.iloc[0]
    assert first["nominalization_diff"] == pytest.approx(0.5)
    assert first["agentless_diff"] == pytest.approx(-1.0)
    assert first["disturbing_gen"] == pytest.approx(3.0 / 3.0)  # mean u_gen (2 + 4) / 2 over 3 sentences
    assert math.isnan(first["disturbing_ref"])  # no judge rated u_ref: missing, not 0
    assert first["affect_gap"] == pytest.approx(0.5)
    assert first["length_gen"] == 3
    assert math.isnan(frame.iloc[1]["disturbing_gen"])  # no sentences
    assert frame.iloc[1]["length_gen"] == 0


def test_bad_inputs_raise() -> None:
    features, ratings = _six()
    events, _ = judge_human_events(ratings, "ca")
    with pytest.raises(ValueError, match="unknown feature"):
        slice_map(features, events, outcome="judge_human", dimension="ca", feature_names=["nope"])
    with pytest.raises(ValueError, match="outcome"):
        slice_map(features, events, outcome="nope", dimension="ca")
    with pytest.raises(ValueError, match="n_permutations"):
        permutation_p_values(np.array([0, 1]), np.array([0.0, 1.0]), np.ones(2), n_permutations=0)
    with pytest.raises(ValueError, match="threshold"):
        judge_human_events(ratings, "ca", threshold=-1)
    with pytest.raises(ValueError, match="bins"):
        slice_feature("x", pd.Series([1.0, 2.0]), bins=1)


# ------------------------------------------------------------------------------------------ calibration

def _calibration_ratings() -> pd.DataFrame:
    # Model a: 4 outputs, experts e1, e2 and judge g. Model b: 2 outputs.
    rows = []
    labels = {  # (item, model): (e1, e2, g)
        ("1", "a"): (1, 1, 1), ("2", "a"): (1, 1, 0), ("3", "a"): (0, 0, 0), ("4", "a"): (1, 0, 1),
        ("1", "b"): (0, 0, 1), ("2", "b"): (0, 0, 1),
    }
    for (item, model), (e1, e2, g) in labels.items():
        rows += [_rating(item, model, "e1", "ca", e1, "expert"), _rating(item, model, "e2", "ca", e2, "expert"),
                 _rating(item, model, "g", "ca", g, "llm")]
    return pd.DataFrame(rows)


def test_confusion_cells_by_hand() -> None:
    cells = confusion_cells(_calibration_ratings(), "ca")
    a = cells[cells["model"] == "a"]
    # Model a: human 1 / judge 1 on item 1; human 1 / judge 0 on item 2; human 0 / judge 0 on item 3;
    # item 4's experts tie (1 and 0): left out and counted.
    assert a[["human_label", "judge_label", "count"]].values.tolist() == [[0, 0, 1], [1, 0, 1], [1, 1, 1]]
    assert a["n_tied"].tolist() == [1, 1, 1]
    assert a["outputs"].tolist() == [[("3", "a")], [("2", "a")], [("1", "a")]]
    assert a["share"].tolist() == pytest.approx([1 / 3] * 3)
    b = cells[cells["model"] == "b"]
    assert b[["human_label", "judge_label", "count"]].values.tolist() == [[0, 1, 2]]
    assert b["outputs"].tolist() == [[("1", "b"), ("2", "b")]]
    matrix = confusion_matrix(cells, "a", "g")
    assert matrix.values.tolist() == [[1, 0], [1, 1]]


def test_confusion_on_a_scale_rounds_the_human_mean_half_up() -> None:
    # A 0-2 scale: experts 1 and 2 (mean 1.5 -> 2), 0 and 1 (0.5 -> 1), 2 and 2 (2); the judge says 2, 1, 0.
    rows = []
    for item, (e1, e2, g) in {"1": (1, 2, 2), "2": (0, 1, 1), "3": (2, 2, 0)}.items():
        rows += [_rating(item, "a", "e1", "level", e1, "expert"), _rating(item, "a", "e2", "level", e2, "expert"),
                 _rating(item, "a", "g", "level", g, "llm")]
    cells = confusion_cells(pd.DataFrame(rows), "level")
    assert cells[["human_label", "judge_label", "count"]].values.tolist() == [[1, 1, 1], [2, 0, 1], [2, 2, 1]]
    assert cells["n_tied"].tolist() == [0, 0, 0]
    matrix = confusion_matrix(cells, "a", "g")
    assert list(matrix.index) == [0.0, 1.0, 2.0] and matrix.loc[2.0, 0.0] == 1
    with pytest.raises(ValueError, match="not whole numbers"):
        confusion_cells(pd.DataFrame([_rating("1", "a", "e", "e_gen", 0.5, "expert"),
                                      _rating("1", "a", "g", "e_gen", 0.25, "llm")]), "e_gen")


def test_calibration_bias_and_bins_by_hand() -> None:
    rows = []
    # Model a: human e = 0.2, 0.4, 0.6, 0.8; the judge flattens: 0.3, 0.4, 0.5, 0.6 (slope 0.5, bias -0.05).
    # Model b: the judge adds 0.1 everywhere (slope 1, bias 0.1).
    for i, (h, j) in enumerate([(0.2, 0.3), (0.4, 0.4), (0.6, 0.5), (0.8, 0.6)]):
        rows += [_rating(str(i), "a", "expert", "e_gen", h, "expert"), _rating(str(i), "a", "g", "e_gen", j, "llm")]
    for i, (h, j) in enumerate([(0.2, 0.3), (0.5, 0.6), (0.8, 0.9)]):
        rows += [_rating(str(i), "b", "expert", "e_gen", h, "expert"), _rating(str(i), "b", "g", "e_gen", j, "llm")]
    ratings = pd.DataFrame(rows)
    bias = calibration_bias(ratings, "e_gen", bootstrap=200, seed=0).set_index("model")
    assert bias.loc["a", "bias"] == pytest.approx(-0.05)
    assert bias.loc["a", "slope"] == pytest.approx(0.5)
    assert bias.loc["b", "bias"] == pytest.approx(0.1)
    assert bias.loc["b", "slope"] == pytest.approx(1.0)
    # Every resample of model b has bias 0.1: a degenerate interval
    assert bias.loc["b", "bias_low"] == pytest.approx(0.1) and bias.loc["b", "bias_high"] == pytest.approx(0.1)
    assert bias.loc["a", "bias_low"] <= -0.05 <= bias.loc["a", "bias_high"]
    again = calibration_bias(ratings, "e_gen", bootstrap=200, seed=0).set_index("model")
    assert again.loc["a", "bias_low"] == bias.loc["a", "bias_low"]
    # issue 27: such intervals are flagged (zero width; 3 and 4 items, fewer than 10); one human: no benchmark
    assert bias.loc["b", "warning"] == ("bias interval [0.1, 0.1] has zero width; slope interval [1, 1] has zero "
                                        "width; bias and slope intervals rest on 3 items (fewer than 10): the "
                                        "percentile bootstrap understates the uncertainty here")
    # model a's judge is exactly 0.5 h + 0.2: every resample has slope 0.5, so that interval is a point too
    assert bias.loc["a", "warning"].startswith("slope interval [0.5, 0.5] has zero width; bias and slope intervals "
                                               "rest on 4 items (fewer than 10)")
    assert bias["human_slope"].isna().all()
    assert calibration_bias(ratings, "e_gen", bootstrap=0).set_index("model")["warning"].isna().all()
    # Two equal-width bins over the human range [0.2, 0.8]: [0.2, 0.5) and [0.5, 0.8]
    bins = calibration_bins(ratings, "e_gen", bins=2)
    a = bins[bins["model"] == "a"]
    assert a["n"].tolist() == [2, 2]
    assert a["mean_human"].tolist() == pytest.approx([0.3, 0.7])
    assert a["mean_judge"].tolist() == pytest.approx([0.35, 0.55])
    b = bins[bins["model"] == "b"]
    assert b["n"].tolist() == [1, 2] and b["mean_judge"].tolist() == pytest.approx([0.3, 0.75])


def test_reference_dimension_is_one_unit_per_item() -> None:
    ratings = pd.DataFrame([
        _rating("1", "a", "h", "e_ref", 0.8, "author"), _rating("1", "b", "h", "e_ref", 0.8, "author"),
        _rating("1", "a", "g", "e_ref", 0.4, "lexicon"), _rating("1", "b", "g", "e_ref", 0.6, "lexicon"),
    ])
    table = paired(ratings, "e_ref")
    assert table[["item_id", "model", "judge_value", "human_value"]].values.tolist() == [["1", ALL_MODELS, 0.5, 0.8]]


def test_a_crowd_mean_does_not_change_the_scale() -> None:
    # A 1-5 scale: the crowd's mean 3.4 is fractional, yet one scale point stays the step.
    ratings = pd.DataFrame([
        _rating("1", "a", "e", "empathy", 4, "expert"), _rating("1", "a", "g", "empathy", 3, "llm"),
        _rating("1", "a", "c", "empathy", 3.4, "crowd"),
        _rating("2", "a", "e", "empathy", 4, "expert"), _rating("2", "a", "g", "empathy", 5, "llm"),
        _rating("2", "a", "c", "empathy", 4.2, "crowd"),
    ])
    _, threshold = judge_human_events(ratings, "empathy")
    assert threshold == 1.0
    assert item_splits(ratings, "empathy")["split"].tolist() == [True, True]


def test_item_splits_by_hand() -> None:
    ratings = _calibration_ratings()
    splits = item_splits(ratings, "ca")
    # Split (both labels present): (1,b), (2,b), (2,a), (4,a); unanimous: (1,a), (3,a).
    assert splits["split"].tolist() == [True] * 4 + [False] * 2
    top = splits.iloc[0]
    assert top["spread"] == 1 and top["n_raters"] == 3
    assert top["modal_share"] == pytest.approx(2 / 3)
    assert set(splits.loc[~splits["split"], "item_id"] + splits.loc[~splits["split"], "model"]) == {"1a", "3a"}
    assert splits.set_index(["item_id", "model"]).loc[("4", "a"), "values"] == "e1=1, e2=0, g=1"


def test_wilson_interval_equals_scipy() -> None:
    low, high = wilson_interval([2, 0, 5], [3, 4, 5])
    for k, n, lo, hi in zip([2, 0, 5], [3, 4, 5], low, high, strict=True):
        reference = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
        assert (lo, hi) == pytest.approx((reference.low, reference.high))
    low, high = wilson_interval([0], [0])
    assert math.isnan(low[0]) and math.isnan(high[0])


def test_dilution_benchmark_is_one_human_on_the_others_mean() -> None:
    """Three humans who agree exactly give 1; with noise, each human's OLS slope on the other two's mean (numpy's
    polyfit as the reference), averaged over the humans."""
    same = pd.DataFrame([_rating(str(i), "m", h, "e_gen", v, "expert") for i, v in enumerate([0.1, 0.4, 0.9])
                         for h in ("h1", "h2", "h3")])
    assert dilution_benchmark(same, "e_gen").set_index("model").loc["m", "human_slope"] == pytest.approx(1.0)
    values = {"h1": [1, 2, 3, 4, 5, 2], "h2": [2, 2, 4, 4, 5, 1], "h3": [1, 3, 2, 5, 4, 3]}
    rows = [_rating(str(i), "m", h, "level", v, "expert") for h, vs in values.items() for i, v in enumerate(vs)]
    rows += [_rating(str(i), "m", "llm", "level", 3.0 + 0.1 * i, "llm") for i in range(6)]
    ratings = pd.DataFrame(rows)
    expected = []
    for human, own in values.items():
        others = np.mean([values[h] for h in values if h != human], axis=0)
        expected.append(np.polyfit(others, own, 1)[0])
    table = dilution_benchmark(ratings, "level").set_index("model")
    assert table.loc["m", "human_slope"] == pytest.approx(np.mean(expected))
    assert (table.loc["m", "human_slope_min"], table.loc["m", "human_slope_max"]) == pytest.approx(
        (min(expected), max(expected)))
    assert table.loc["m", "n_humans"] == 3
    # calibration_bias carries it beside the judge's slope
    assert calibration_bias(ratings, "level", bootstrap=0)["human_slope"].tolist() == pytest.approx(
        [np.mean(expected)])
    # a reference dimension: one unit per item, model (all models)
    reference = pd.DataFrame([_rating(str(i), m, h, "e_ref", v, "expert") for h, vs in values.items()
                              for i, v in enumerate(vs) for m in ("a", "b")])
    assert dilution_benchmark(reference, "e_ref")["model"].tolist() == [ALL_MODELS]
    assert dilution_benchmark(reference[reference["rater"] == "h1"], "e_ref").empty


def test_kumar_slopes_against_the_dilution_benchmark() -> None:
    """Issue 27's figures, from the project's importer: one expert on the mean of the other two gives 0.64-0.89
    (mean over the three experts) on the 21 dimensions; the LLMs' mean slope is at or below it on 13 of 21."""
    from empathy.paths import shared_dataset

    directory = shared_dataset("kumar2025-empathic-communication")
    if directory is None:
        pytest.skip("shared/datasets/kumar2025-empathic-communication is absent")
    from empathy.datasets import import_kumar2025

    ratings = import_kumar2025(directory).ratings
    rows = []
    for _, part in ratings.groupby("model"):
        for dimension in sorted(part["dimension"].unique()):
            bias = calibration_bias(part, dimension, bootstrap=0)
            rows.append((dimension, bias["human_slope"].iloc[0], bias["slope"].mean()))
    assert len(rows) == 21
    benchmarks = [b for _, b, _ in rows]
    assert (round(min(benchmarks), 2), round(max(benchmarks), 2)) == (0.64, 0.89)
    assert sum(judge <= benchmark for _, benchmark, judge in rows) == 13


def test_kumar_docs_rates_and_biases_match_the_code() -> None:
    """docs/kumar2025.md's disagreement rates and biases come from bench/kumar2025_disagreement.py's method."""
    from pathlib import Path

    from empathy.paths import shared_dataset

    directory = shared_dataset("kumar2025-empathic-communication")
    if directory is None:
        pytest.skip("shared/datasets/kumar2025-empathic-communication is absent")
    from empathy.datasets import CORPORA, import_kumar2025

    docs = (Path(__file__).resolve().parent.parent / "docs" / "kumar2025.md").read_text(encoding="utf-8")
    ratings = import_kumar2025(directory).ratings
    for corpus in ("epitome", "lend_an_ear", "empatheticdialogues"):
        for dimension in CORPORA[corpus].dimensions:
            events, _ = judge_human_events(ratings, dimension, threshold=1.0)
            events = events[events["model"] == corpus]
            shares = [events.loc[events["judge"] == j, "event"].mean() for j in ("gpt", "claude", "gemini")]
            line = (f"| {CORPORA[corpus].title} | `{dimension}` | {len(events)} | {events['event'].mean():.0%} | "
                    + " | ".join(f"{s:.0%}" for s in shares) + " |")
            assert line in docs, line
    bias = calibration_bias(ratings[ratings["model"] == "lend_an_ear"], "dismissing_emotions", bootstrap=1000,
                            seed=0).set_index("judge")
    row = bias.loc["gpt"]
    assert (f"{row['bias']:+.2f} [{row['bias_low']:+.2f}, {row['bias_high']:+.2f}], slope {row['slope']:.2f}"
            in docs)


# ------------------------------------------------------------------ exact p-values and cluster-aware intervals


@pytest.mark.parametrize(("values", "size"), [
    ([0, 1, 1, 2, 2, 2], 3), ([0, 0, 3, 1], 2), ([2, 2, 2], 2), ([1, 0, 2, 1, 0, 2, 1, 1], 5), ([0, 1], 0),
])
def test_exact_sum_distribution_equals_enumeration(values: list[int], size: int) -> None:
    distribution = exact_sum_distribution(values, size)
    brute = np.zeros(len(distribution))
    chosen = list(combinations(values, size))
    for c in chosen:
        brute[sum(c)] += 1 / len(chosen)
    assert distribution == pytest.approx(brute, abs=1e-12)
    assert exact_sum_distribution([0.5, 1.0], 1) is None  # not whole numbers: the caller enumerates or samples


def test_exact_sum_distribution_worked_by_hand() -> None:
    # Values (0, 1, 1, 2), draw 2: the six pairs sum to 1, 1, 2, 2, 3, 3 -> P(0..4) = (0, 2, 2, 2, 0) / 6
    assert exact_sum_distribution([0, 1, 1, 2], 2) == pytest.approx([0, 1 / 3, 1 / 3, 1 / 3, 0])


@pytest.mark.parametrize("units", [1, 2, 3])
def test_exact_slice_p_equals_the_enumeration(units: int) -> None:
    rng = np.random.default_rng(units)
    events = rng.integers(0, units + 1, 11).astype(float)
    whole = events.sum() / (11 * units)
    for size in (1, 4, 6, 10):
        observed = abs(events[:size].sum() / (size * units) - whole)
        exact = exact_slice_p(events, np.full(11, float(units)), size, observed)
        brute = [abs(events[list(c)].sum() / (size * units) - whole) >= observed - 1e-9
                 for c in combinations(range(11), size)]
        assert exact == pytest.approx(np.mean(brute), abs=1e-12)
    assert exact_slice_p(events, np.r_[np.full(10, 2.0), 1.0], 3, 0.1) is None  # unequal units


def test_exact_p_by_default_where_computable_and_monte_carlo_se_otherwise() -> None:
    # The hand-worked map above with 19 permutations: Monte Carlo by default (the library's historical
    # behaviour), exact (0.4, hypergeometric: one unit per output) with exact=True, whatever the permutations.
    features, ratings = _six()
    events, _ = judge_human_events(ratings, "ca")
    sampled = slice_map(features, events, outcome="judge_human", dimension="ca", feature_names=["agentless_gen"],
                        bins=2, n_permutations=19, seed=3)
    p = sampled.table["p_value"].to_numpy(float)
    assert sampled.table["p_se"].tolist() == pytest.approx(list(np.sqrt(p * (1 - p) / 19)))
    exact = slice_map(features, events, outcome="judge_human", dimension="ca", feature_names=["agentless_gen"],
                      bins=2, n_permutations=19, exact=True)
    assert exact.table["p_value"].tolist() == pytest.approx([0.4, 0.4])
    assert exact.table["p_method"].tolist() == ["exact", "exact"]
    assert exact.table["p_se"].isna().all() and exact.holm_floor == 0.0
    assert exact.signature_fields() == {"permutations": "19", "slices": "holm", "p": "exact-where-computable"}
    with pytest.raises(TypeError, match="exact must be True or False"):
        slice_map(features, events, outcome="judge_human", dimension="ca", exact="yes")


def test_exact_p_of_a_large_slice_is_the_hypergeometric_tail() -> None:
    # 400 outputs, one judge each: C(400, 150) arrangements, out of reach of enumeration, exact by Fisher's test.
    rng = np.random.default_rng(0)
    events = (rng.random(400) < 0.3).astype(float)
    codes = np.zeros(400, dtype=np.int64)
    codes[:150] = 1
    events[:150] = (rng.random(150) < 0.4).astype(float)
    p, methods = permutation_p_values(codes, events, np.ones(400), n_permutations=1000, exact=True)
    assert methods == ["exact", "exact"]
    total, whole = int(events.sum()), events.sum() / 400
    observed = abs(events[:150].sum() / 150 - whole)
    x = np.arange(151)
    tail = stats.hypergeom(400, total, 150).pmf(x)[np.abs(x / 150 - whole) >= observed - 1e-9].sum()
    assert p[1] == pytest.approx(tail)


def test_cluster_rate_interval_by_hand() -> None:
    # One unit per item: the Wilson interval at n = items times (z / t_{K-1})^2.
    events = np.array([1.0, 0, 0, 1, 0, 0, 0, 0, 1, 0])
    low, high = cluster_rate_interval(np.zeros(10, dtype=np.int64), events, np.ones(10), np.arange(10))
    z, t = stats.norm.ppf(0.975), stats.t.ppf(0.975, 9)
    # r = 0.3; v = 10/9 * sum (e - 0.3)^2 / 100 = 10/9 * 2.1 / 100; n_eff = 0.21 / v = 9; times (z/t)^2
    n_eff = 9 * (z / t) ** 2
    centre = (0.3 + z * z / (2 * n_eff)) / (1 + z * z / n_eff)
    half = z * np.sqrt(0.3 * 0.7 / n_eff + z * z / (4 * n_eff ** 2)) / (1 + z * z / n_eff)
    assert (low[0], high[0]) == pytest.approx((centre - half, centre + half))
    # Two items of 3 outputs x 2 judges whose events all agree within the item (6/6 and 0/6): rate 0.5 but
    # really 2 independent units -> n_eff 2 x (z / t_1)^2, far wider than Wilson's 12 units.
    low, high = cluster_rate_interval(np.zeros(6, dtype=np.int64), np.array([2.0, 2, 2, 0, 0, 0]), np.full(6, 2.0),
                                      ["a", "a", "a", "b", "b", "b"])
    w_low, w_high = wilson_interval([6], [12])
    assert high[0] - low[0] > 2 * (w_high[0] - w_low[0])
    # rate 0: the effective size is the number of items (here 3 of 6 units)
    low, high = cluster_rate_interval(np.zeros(6, dtype=np.int64), np.zeros(6), np.ones(6), [1, 1, 2, 2, 3, 3])
    z_low, z_high = wilson_interval([0], [3 * (z / stats.t.ppf(0.975, 2)) ** 2])
    assert (low[0], high[0]) == pytest.approx((z_low[0], z_high[0]))


def test_map_rows_carry_cluster_aware_intervals() -> None:
    features, ratings = _six()
    events, _ = judge_human_events(ratings, "ca")
    table = slice_map(features, events, outcome="judge_human", dimension="ca", feature_names=["task"],
                      n_permutations=20).table.set_index("slice")
    low, high = cluster_rate_interval(np.array([0, 0, 1, 1, 1, 1]), events.sort_values("item_id")["event"],
                                      np.ones(6), [str(i) for i in range(1, 7)])
    assert (table.loc["a", "rate_low"], table.loc["b", "rate_high"]) == pytest.approx((low[0], high[1]))


def test_cluster_interval_covers_where_wilson_does_not() -> None:
    # 1,000 seeded data sets of 40 items x 3 outputs x 2 judges with item-level rates: the numbers
    # docs/statistics.md quotes
    from pathlib import Path

    from validation.coverage import cluster_rate_coverage

    result = cluster_rate_coverage()
    assert 0.93 <= result.coverage <= 0.97, result
    assert result.reference < 0.9, result  # Wilson over units is too narrow on clustered events
    docs = (Path(__file__).resolve().parent.parent / "docs" / "statistics.md").read_text(encoding="utf-8")
    assert result.row() in docs, result.row()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_generation_lengths_are_the_words_of_str_split(seed):
    """length_gen counts each distinct text once: the same numbers as ``Series.str.split().str.len()``."""
    from empathy.slices import _word_counts

    rng = np.random.default_rng(seed)
    pieces = ["word", " ", "  ", "\t", "\n", "\u2003", "\u00a0", "\x1c", "é", ""]
    texts = ["".join(rng.choice(pieces, size=rng.integers(0, 12))) for _ in range(300)]
    series = pd.Series(texts + [None, texts[0], texts[1]], dtype=object)
    expected = series.fillna("").astype(str).str.split().str.len().to_numpy(float)
    np.testing.assert_array_equal(_word_counts(series), expected)


@pytest.mark.parametrize("storage", ["pyarrow", "python"])
@pytest.mark.parametrize("seed", range(6))
def test_judge_means_by_codes_equal_the_groupby_and_merge(storage: str, seed: int) -> None:
    """The per-output judge means summed by integer codes equal the straightforward groupby over
    (item_id, model, dimension) merged onto the outputs: gaps, humans left out, ratings of unknown outputs,
    missing values and keys, duplicated outputs rows."""
    from empathy.slices import JUDGE_KINDS, _judge_means

    rng = np.random.default_rng(seed)
    dims = ("u_ref", "u_gen", "e_ref", "e_gen")
    n = 200
    dtype = pd.StringDtype(storage)
    ratings = pd.DataFrame({
        "item_id": pd.array([f"i{k}" for k in rng.integers(0, 12, n)], dtype=dtype),
        "model": pd.array([f"m{k}" for k in rng.integers(0, 4, n)], dtype=dtype),
        "rater": pd.array([f"r{k}" for k in rng.integers(0, 3, n)], dtype=dtype),
        "dimension": pd.array(rng.choice([*dims, "ca"], n), dtype=dtype),
        "value": rng.random(n).round(2),
        "rater_kind": pd.array(rng.choice(["llm", "human", "lexicon"], n), dtype=dtype)})
    ratings.loc[rng.random(n) < 0.1, "value"] = np.nan
    ratings.loc[rng.random(n) < 0.05, "item_id"] = None
    keys = pd.DataFrame({"item_id": [f"i{k}" for k in rng.integers(0, 14, 40)],
                         "model": [f"m{k}" for k in rng.integers(0, 4, 40)]})
    got = _judge_means(keys, ratings, JUDGE_KINDS, dims)
    part = ratings[ratings["dimension"].isin(dims) & ratings["rater_kind"].isin(JUDGE_KINDS)]
    means = part.groupby(["item_id", "model", "dimension"])["value"].mean().unstack("dimension")
    means = means.reindex(columns=list(dims)).reset_index().astype({"item_id": str, "model": str})
    expected = keys.merge(means, on=["item_id", "model"], how="left")
    assert len(expected) == len(keys)
    for dimension in dims:
        np.testing.assert_allclose(got[dimension], expected[dimension].to_numpy(float), rtol=1e-15, atol=0)


@pytest.mark.parametrize("block", [1, 7, 64, 1 << 18])
@pytest.mark.parametrize("storage", ["pyarrow", "python"])
def test_codes_in_by_blocks_equal_one_look_up_of_every_row(monkeypatch: pytest.MonkeyPatch, block: int,
                                                           storage: str) -> None:
    """Positions looked up a block of rows at a time equal the straightforward look-up of every marked row (absent
    and missing values -1), whatever the block's size against the column's."""
    from empathy import slices

    monkeypatch.setattr(slices, "_CODE_BLOCK", block)
    rng = np.random.default_rng(block)
    names = [f"i{k}" for k in rng.integers(0, 30, 300)]
    column = pd.Series(pd.array([None if rng.random() < 0.05 else n for n in names], dtype=pd.StringDtype(storage)))
    index = pd.Index([f"i{k}" for k in range(0, 25)])
    rows = rng.random(len(column)) < 0.6
    expected = np.array([index.get_loc(v) if isinstance(v, str) and v in index else -1
                         for v in column.astype(object)[rows]], dtype=np.int64)
    found = slices._codes_in(index, column, rows)
    np.testing.assert_array_equal(found, expected)


def test_judge_means_sum_one_dimension_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cells are numbered per dimension: no call sees more than one dimension's rows (the int64 keys of all
    four at once were the page's transient), and the means are those of a groupby."""
    from empathy import slices

    sizes: list[int] = []
    original = slices.unique_keys

    def counted(keys: np.ndarray, n_possible: int) -> tuple[np.ndarray, np.ndarray]:
        sizes.append(len(keys))
        return original(keys, n_possible)

    monkeypatch.setattr(slices, "unique_keys", counted)
    rng = np.random.default_rng(3)
    dims = ("u_ref", "u_gen", "e_ref", "e_gen")
    n = 400
    ratings = pd.DataFrame({"item_id": [f"i{k}" for k in rng.integers(0, 20, n)],
                            "model": [f"m{k}" for k in rng.integers(0, 3, n)], "rater": "j",
                            "dimension": rng.choice(dims, n), "value": rng.random(n), "rater_kind": "llm"})
    keys = ratings[["item_id", "model"]].drop_duplicates().reset_index(drop=True)
    got = slices._judge_means(keys, ratings, slices.JUDGE_KINDS, dims)
    per_dimension = ratings["dimension"].value_counts()
    assert sorted(sizes) == sorted(int(per_dimension[d]) for d in dims)
    expected = ratings.groupby(["item_id", "model", "dimension"])["value"].mean().unstack("dimension")
    for dimension in dims:
        wanted = expected[dimension].reindex(pd.MultiIndex.from_frame(keys)).to_numpy(float)
        np.testing.assert_allclose(got[dimension], wanted, rtol=1e-15, atol=0)


def test_wilson_ends_are_exactly_0_and_1_when_no_or_every_unit_is_an_event():
    # hand-worked: with k = 0 the upper end is z^2 / (n + z^2); the lower end is 0, not a 1e-18 residue
    z2 = 1.959963984540054 ** 2
    low, high = wilson_interval([0, 356, 0], [356, 356, 0])
    assert low[0] == 0.0 and high[1] == 1.0
    assert high[0] == pytest.approx(z2 / (356 + z2), rel=1e-12) and low[1] == pytest.approx(1 - z2 / (356 + z2))
    assert np.isnan(low[2]) and np.isnan(high[2])
