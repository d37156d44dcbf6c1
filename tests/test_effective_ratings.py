"""The effective ratings prepared once per data set (empathy.review.EffectiveRatings): the same frame as
apply_overrides under any overrides, its key index in 32 bits where the keys fit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from empathy.labels.ledger import apply_overrides
from empathy.review import EffectiveRatings, _KeyIndex


def _ratings(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [{"item_id": f"i{item}", "model": model, "rater": rater, "dimension": dimension,
             "value": float(rng.integers(0, 2)), "signature": f"{rater}-v1"}
            for item in range(40) for model in ("a", "b") for rater in ("j1", "j2")
            for dimension in ("ca", "e_gen") if rng.random() > 0.1]
    return pd.DataFrame(rows).astype({c: "string[pyarrow]" for c in ("item_id", "model", "rater", "dimension")})


@pytest.mark.parametrize("seed", range(6))
def test_effective_ratings_equal_apply_overrides(seed):
    rng = np.random.default_rng(seed + 50)
    ratings = _ratings(seed)
    engine = EffectiveRatings(ratings)
    assert engine._index.sorted.dtype == np.int32 and engine._index.order.dtype == np.int32
    for count in (0, 1, 7, 30):
        picked = ratings.iloc[rng.integers(0, len(ratings), count)][["item_id", "model", "rater", "dimension"]]
        overrides = picked.assign(value=rng.integers(0, 2, count).astype(float)).reset_index(drop=True)
        if count and seed % 2:  # a gap filled (a rating no judge gave): a new row, apply_overrides' own
            overrides.loc[0, "item_id"] = "i999"
        expected = apply_overrides(ratings, overrides if count else None)
        pd.testing.assert_frame_equal(engine(overrides if count else None), expected)
    # the ratings are read, never changed
    pd.testing.assert_frame_equal(ratings, _ratings(seed))


def test_the_key_index_finds_every_row_and_nothing_else():
    ratings = _ratings(9)
    columns = ["item_id", "model", "rater", "dimension"]
    index = _KeyIndex(ratings, columns)
    assert (index.rows_of(ratings[columns]) == np.arange(len(ratings))).all()
    absent = pd.DataFrame({"item_id": ["i999", "i1"], "model": ["a", "zz"], "rater": ["j1", "j1"],
                           "dimension": ["ca", "ca"]})
    assert index.rows_of(absent).tolist() == [-1, -1]
    assert index.rows_of(absent).dtype == np.int64
