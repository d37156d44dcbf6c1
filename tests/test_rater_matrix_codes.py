"""The units x raters matrix from sorted key codes (:func:`empathy.agreement._rater_matrix`) and the split table built
on it without a copy of the rating rows (:class:`empathy.calibration.ItemSplits`) against the straightforward
computation (the rows selected, a three-level index, ``unstack``) on randomised data; counted calls show that the
fast path reshapes no index and copies no rating row."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from empathy import agreement, calibration
from empathy import slices as sl
from empathy.agreement import _rater_matrix
from empathy.calibration import ItemSplits
from empathy_app import disagreement as dg


def _straight_matrix(ratings: pd.DataFrame, dimension: str) -> pd.DataFrame:
    """The matrix as it was computed before: every column of the rows copied, indexed and unstacked."""
    subset = ratings[ratings["dimension"] == dimension]
    if dimension in agreement.REFERENCE_DIMENSIONS:
        return subset.groupby(["item_id", "rater"], sort=True)["value"].mean().unstack("rater")
    return subset.set_index(["item_id", "model", "rater"])["value"].unstack("rater")


def _straight_splits(ratings: pd.DataFrame, more: pd.DataFrame, dimension: str) -> pd.DataFrame:
    """:func:`empathy.calibration.item_splits` of both together, its rows selected and copied as before."""
    whole = pd.concat([ratings, more], ignore_index=True)
    part = whole[whole["dimension"] == dimension].astype({"item_id": str, "model": str, "rater": str})
    return calibration.item_splits(part, dimension)


def _ratings(seed: int, *, strings: bool = True, n_items: int = 25) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for item in rng.permutation(n_items):
        for model in ("mB", "ma", "M0", "z"):
            for rater in ("j1", "J0", "judge", "lex"):
                for dimension in ("ca", "u_gen", "e_ref", "e_gen"):
                    if rng.random() < 0.3:  # missing cells, whole units and raters missing on some items
                        continue
                    value = float(rng.integers(0, 4)) if dimension != "e_gen" else round(float(rng.random()), 2)
                    rows.append({"item_id": f"i{item:03d}" if item % 4 else f"Q{item}", "model": model,
                                 "rater": rater, "dimension": dimension,
                                 "value": np.nan if rng.random() < 0.05 else value,
                                 "rater_kind": "lexicon" if rater == "lex" else "llm", "reason": "why",
                                 "signature": f"s-{rater}"})
    frame = pd.DataFrame(rows).sample(frac=1.0, random_state=seed).reset_index(drop=True)
    if not strings:
        frame = frame.astype({"item_id": object, "model": object, "rater": object})
    return frame


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("strings", [True, False])
def test_matrix_from_codes_equals_the_unstacked_index(seed, strings):
    ratings = _ratings(seed, strings=strings)
    for dimension in ("ca", "u_gen", "e_ref", "e_gen", "absent"):
        expected = _straight_matrix(ratings, dimension)
        found = _rater_matrix(ratings, dimension)
        pd.testing.assert_frame_equal(found, expected)
        assert found.index.names == expected.index.names and found.columns.name == expected.columns.name


def test_integer_values_and_repeated_cells_are_left_to_unstack():
    ratings = _ratings(1)
    whole = ratings.assign(value=ratings["value"].fillna(0).astype(np.int64))
    pd.testing.assert_frame_equal(_rater_matrix(whole, "ca"), _straight_matrix(whole, "ca"))
    twice = pd.concat([ratings, ratings.head(1)], ignore_index=True)
    dimension = str(ratings["dimension"].iloc[0])
    with pytest.raises(ValueError, match="duplicate"):
        _straight_matrix(twice, dimension)
    with pytest.raises(ValueError, match="duplicate"):
        _rater_matrix(twice, dimension)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("strings", [True, False])
def test_splits_without_a_copy_equal_the_straight_table(seed, strings):
    ratings = _ratings(seed, strings=strings)
    rng = np.random.default_rng(seed + 100)
    for dimension in ("ca", "u_gen", "e_ref", "e_gen"):
        fast = ItemSplits(ratings, dimension)
        judged = ratings[ratings["dimension"] == dimension].drop_duplicates(["item_id", "model"])
        for count in (0, 3):
            humans = judged.iloc[rng.choice(len(judged), size=count, replace=False)].assign(
                rater="ann", rater_kind="human", value=1.0)
            pd.testing.assert_frame_equal(fast.table(humans), _straight_splits(ratings, humans, dimension))


def test_compared_values_read_two_columns_alike():
    ratings = _ratings(3)
    for dimension in ("ca", "e_gen"):
        part = ratings[ratings["dimension"] == dimension]
        values = part[part["rater_kind"].isin([*sl.HUMAN_KINDS, *sl.JUDGE_KINDS])]["value"]
        expected = values.to_numpy(float)
        np.testing.assert_array_equal(dg._compared_values.__wrapped__("k", dimension, ratings),
                                      expected[~np.isnan(expected)])


def _count(monkeypatch, owner, name, calls):
    original = getattr(owner, name)

    def counted(*args, **kwargs):
        # astype of the keys (a copy of the rows), not of the raters' kinds
        if name != "astype" or (isinstance(args[1], dict) and "item_id" in args[1]):
            calls.append(name)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)


def test_the_fast_path_builds_no_index_of_the_rows_and_copies_none(monkeypatch):
    ratings = _ratings(2)
    objects = ratings.astype({"item_id": object})
    integers = ratings.assign(value=ratings["value"].fillna(0).astype(np.int64))
    calls: list[str] = []
    _count(monkeypatch, pd.DataFrame, "set_index", calls)
    _count(monkeypatch, pd.Series, "unstack", calls)
    _count(monkeypatch, pd.DataFrame, "astype", calls)
    splits = ItemSplits(ratings, "ca")
    assert splits.table(ratings.iloc[:0]).shape[0] > 0
    assert calls == []  # string keys, float values: codes only, the rows never copied whole
    ItemSplits(objects, "ca")
    assert calls.count("astype") == 1 and calls.count("set_index") == 0  # other key types: the keys made strings
    _rater_matrix(integers, "ca")
    assert calls.count("set_index") == 1  # integer values: unstack decides the dtype


@pytest.mark.parametrize("seed", range(4))
def test_alpha_of_chosen_dimensions_in_place_equals_alpha_of_their_rows(seed):
    ratings = _ratings(seed).assign(overridden=False)  # as the effective ratings carry it
    for dimensions in (["ca"], ["e_ref"], ["e_gen", "u_gen"], ["absent"], ["ca", "absent"]):
        cut = ratings[ratings["dimension"].isin(dimensions)].drop(columns=["overridden"])
        pd.testing.assert_frame_equal(agreement.krippendorff_by_dimension(ratings, dimensions=dimensions),
                                      agreement.krippendorff_by_dimension(cut))


@pytest.mark.parametrize("strings", [True, False])
def test_output_features_names_equal_those_of_a_numpy_array_of_strings(strings):
    ratings = _ratings(4, strings=strings)
    outputs = ratings.drop_duplicates(["item_id", "model"])[["item_id", "model"]].reset_index(drop=True)
    outputs = outputs.assign(generation="a b c", task=np.where(np.arange(len(outputs)) % 3, "t1", None))
    if not strings:
        outputs = outputs.astype({"task": object})
    n = len(outputs)
    rng = np.random.default_rng(4)
    densities = rng.random((n, len(sl.LABELS)))
    found = sl.output_features(outputs, ratings, np.ones(n), np.full(n, 2.0), densities, densities / 2)
    expected = pd.DataFrame({"item_id": outputs["item_id"].astype(str).to_numpy(),
                             "model": outputs["model"].astype(str).to_numpy(),
                             "task": outputs["task"].fillna("").astype(str).to_numpy()})
    for column in ("item_id", "model", "task"):
        pd.testing.assert_series_equal(found[column], expected[column])
    means = sl._judge_means(found, ratings, sl.JUDGE_KINDS, ("u_gen", "e_gen"))
    judged = ratings[ratings["dimension"] == "u_gen"].groupby(["item_id", "model"])["value"].mean()
    straight = judged.reindex(pd.MultiIndex.from_frame(outputs[["item_id", "model"]])).to_numpy()
    np.testing.assert_allclose(means["u_gen"], straight, rtol=1e-15, atol=0)


def test_a_model_name_per_output_keeps_both_tables_linear_and_equal():
    """1,200 outputs, each with an item and a model of its own: the items x models product (1.44 million cells,
    more than the keys allow to mark) is never allocated, and the matrix and the judges' means are those of the
    straightforward computation."""
    rng = np.random.default_rng(7)
    n = 1_200
    rows = [{"item_id": f"i{k}", "model": f"m{k}", "rater": rater, "dimension": dimension,
             "value": float(rng.integers(0, 3)), "rater_kind": "llm"}
            for k in range(n) for rater in ("j1", "j2") for dimension in ("ca", "u_gen") if rng.random() < 0.8]
    ratings = pd.DataFrame(rows).sample(frac=1.0, random_state=7).reset_index(drop=True)
    allocated: list[int] = []
    zeros = np.zeros

    def counted_zeros(shape, *args, **kwargs):
        allocated.append(int(np.prod(shape)))
        return zeros(shape, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(np, "zeros", counted_zeros)
        found = _rater_matrix(ratings, "ca")
        keys = pd.DataFrame({"item_id": [f"i{k}" for k in range(n)], "model": [f"m{k}" for k in range(n)]},
                            dtype="str")
        means = sl._judge_means(keys, ratings, sl.JUDGE_KINDS, ("u_gen",))
    assert max(allocated, default=0) < n * n // 10
    pd.testing.assert_frame_equal(found, _straight_matrix(ratings, "ca"))
    judged = ratings[ratings["dimension"] == "u_gen"].groupby(["item_id", "model"])["value"].mean()
    straight = judged.reindex(pd.MultiIndex.from_frame(keys)).to_numpy()
    np.testing.assert_allclose(means["u_gen"], straight, rtol=1e-15, atol=0)
