"""Krippendorff's alpha kept for overrides (empathy.agreement.LiveAlpha): equal to the full computation, the
effective ratings built and the dimension's matrix factorised again, under any set of overrides."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from empathy.agreement import LiveAlpha, krippendorff_by_dimension
from empathy.review import EffectiveRatings

COLUMNS = ["dimension", "alpha", "level", "n_raters", "n_units"]


def _ratings(seed: int, *, scale: tuple[float, ...] = (0.0, 1.0), missing: float = 0.1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for item in range(30):
        for model in ("m1", "m2", "m3"):
            for rater in ("j1", "j2", "j3"):
                if rng.random() < missing:  # a rating absent: a gap an override may fill
                    continue
                for dimension in ("ca", "e_gen"):
                    value = float(rng.choice(scale)) if dimension == "ca" else float(rng.random())
                    rows.append({"item_id": f"i{item:02d}", "model": model, "rater": rater,
                                 "dimension": dimension, "value": value})
    frame = pd.DataFrame(rows)
    frame.loc[rng.random(len(frame)) < 0.03, "value"] = np.nan  # a rating without a value
    return frame.astype({c: "string[pyarrow]" for c in ("item_id", "model", "rater", "dimension")})


def _overrides(ratings: pd.DataFrame, seed: int, dimension: str, count: int,
               values: tuple[float, ...]) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    mine = ratings[ratings["dimension"] == dimension]
    rows = []
    for _ in range(count):
        if rng.random() < 0.3:  # a gap filled: an output of the dimension, a rater it lacks there (maybe absent)
            item, model = mine.iloc[int(rng.integers(len(mine)))][["item_id", "model"]]
            rater = str(rng.choice(["j1", "j2", "j3"]))
        else:
            item, model, rater = mine.iloc[int(rng.integers(len(mine)))][["item_id", "model", "rater"]]
        rows.append({"item_id": str(item), "model": str(model), "rater": str(rater), "dimension": dimension,
                     "value": float(rng.choice(values))})
    return pd.DataFrame(rows)


def _full(ratings: pd.DataFrame, overrides: pd.DataFrame | None, dimension: str) -> dict:
    every = EffectiveRatings(ratings)(overrides)
    return krippendorff_by_dimension(every, dimensions=[dimension]).iloc[0].to_dict()


def _same(found: dict, expected: dict) -> None:
    assert list(found) == COLUMNS
    for column in COLUMNS:
        a, b = found[column], expected[column]
        if column == "alpha" and a is not None and b is not None and not (isinstance(b, float) and math.isnan(b)):
            assert a == pytest.approx(b, rel=1e-12, abs=1e-12)
        elif column == "alpha":
            assert (a is None or (isinstance(a, float) and math.isnan(a))) and (
                b is None or (isinstance(b, float) and math.isnan(b)))
        else:
            assert a == b, column


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize(("dimension", "scale", "values"), [
    ("ca", (0.0, 1.0), (0.0, 1.0)),                  # nominal, stays nominal
    ("ca", (0.0, 1.0), (0.0, 1.0, 2.0)),             # an override brings a third level: ordinal
    ("ca", (0.0, 1.0, 2.0), (0.0, 1.0)),             # overrides may take the third level away
    ("e_gen", (0.0, 1.0), (0.25, 0.5, np.nan)),      # interval; an override may clear a value
])
def test_live_alpha_equals_the_full_computation(seed, dimension, scale, values):
    ratings = _ratings(seed, scale=scale)
    live = LiveAlpha(ratings, dimension)
    assert live.ready
    _same(live.row(None), _full(ratings, None, dimension))
    for count in (1, 5, 40):
        overrides = _overrides(ratings, seed * 100 + count, dimension, count, values)
        found = live.row(overrides)
        if found is None:  # only for an override the judges' matrix has no cell for
            continue
        _same(found, _full(ratings, overrides, dimension))
    # the matrix kept is not changed by a row(): the judges' own alpha again
    _same(live.row(None), _full(ratings, None, dimension))


def test_live_alpha_answers_most_sets_of_overrides():
    # the gaps of outputs that have the dimension are cells of the matrix: only a new output or rater falls back
    ratings = _ratings(1)
    live = LiveAlpha(ratings, "ca")
    answered = sum(live.row(_overrides(ratings, k, "ca", 5, (0.0, 1.0))) is not None for k in range(30))
    assert answered == 30


@pytest.mark.parametrize(("change", "why"), [
    ({"rater": "j9"}, "a rater the dimension has no column for"),
    ({"item_id": "i99"}, "an output with no rating of the dimension"),
])
def test_live_alpha_falls_back_where_the_matrix_has_no_cell(change, why):
    ratings = _ratings(2)
    overrides = _overrides(ratings, 3, "ca", 3, (0.0, 1.0)).assign(**change)
    assert LiveAlpha(ratings, "ca").row(overrides) is None, why


@pytest.mark.parametrize("dimension", ["e_ref", "absent"])
def test_live_alpha_is_not_ready_for_a_reference_or_absent_dimension(dimension):
    ratings = _ratings(3)
    ratings["dimension"] = ratings["dimension"].replace({"ca": "e_ref"}) if dimension == "e_ref" else ratings[
        "dimension"]
    live = LiveAlpha(ratings, dimension)
    assert not live.ready and live.row(None) is None


def test_an_override_that_replaces_the_only_other_level_makes_the_dimension_binary_again():
    # one rating of 2 makes CA ordinal; the decision that replaces it makes it nominal (0/1), as the full
    # computation finds it from the effective values
    ratings = _ratings(4, scale=(0.0, 1.0), missing=0.0)
    ratings = ratings[ratings["value"].notna()].reset_index(drop=True)
    first = ratings.index[ratings["dimension"] == "ca"][0]
    ratings.loc[first, "value"] = 2.0
    live = LiveAlpha(ratings, "ca")
    assert live.row(None)["level"] == "ordinal"
    decision = ratings.loc[[first], ["item_id", "model", "rater", "dimension"]].assign(value=1.0)
    found = live.row(decision)
    assert found["level"] == "nominal"
    _same(found, _full(ratings, decision, "ca"))
