"""The Disagreement page's fast paths against the straightforward computation on randomised data: the split table
patched for the ledger's humans (:class:`empathy.calibration.ItemSplits`), and the judge-vs-human tables read on the
items humans rated only (:class:`empathy_app.disagreement.Rated`); counted calls show what a change recomputes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from empathy import slices as sl
from empathy.calibration import ItemSplits, calibration_bias, calibration_bins, confusion_cells, item_splits
from empathy_app import disagreement as dg
from empathy_app.compute import RowIndex

SCALES = {"ca": [0.0, 1.0], "u_gen": [0.0, 1.0, 2.0, 3.0], "e_ref": [0.0, 0.2, 0.5, 0.8, 1.0],
          "e_gen": [0.0, 0.25, 0.5, 1.0]}


def _data(seed: int, n_items: int = 15, models: tuple[str, ...] = ("m1", "M0", "b")):
    rng = np.random.default_rng(seed)
    outputs = pd.DataFrame([{"item_id": f"i{i:02d}" if i % 3 else f"x{i}", "model": m, "task": "t",
                             "reference": "r", "generation": "g"} for i in range(n_items) for m in models])
    rows = []
    raters = [("j0", "llm"), ("J1", "llm"), ("lex", "lexicon"), ("crowd", "crowd"), ("expert", "expert")]
    for item, model in zip(outputs["item_id"], outputs["model"], strict=True):
        for rater, kind in raters:
            if kind in ("expert", "crowd") and rng.random() < 0.8:
                continue
            for dimension, scale in SCALES.items():
                if rng.random() < 0.15:
                    continue
                value = float(rng.choice(scale)) if kind != "crowd" else float(rng.choice(scale)) / 2
                if rng.random() < 0.05:
                    value = np.nan
                rows.append({"item_id": item, "model": model, "rater": rater, "dimension": dimension, "value": value,
                             "rater_kind": kind, "reason": "", "signature": f"sig-{rater}"})
    ratings = pd.DataFrame(rows).sample(frac=1.0, random_state=seed).reset_index(drop=True)
    return outputs, ratings, rng


def _humans(ratings: pd.DataFrame, rng: np.random.Generator, count: int) -> pd.DataFrame:
    """Annotators' ratings on units the judges rated (as :func:`empathy.labels.ledger.annotator_ratings` gives)."""
    judged = ratings[ratings["rater_kind"] == "llm"].drop_duplicates(["item_id", "model", "dimension"])
    chosen = judged.iloc[rng.choice(len(judged), size=count, replace=False)]
    names = rng.choice(["ann", "zed", "Bea"], size=count)
    values = [float(rng.choice(SCALES[d])) for d in chosen["dimension"]]
    return pd.DataFrame({"item_id": chosen["item_id"].to_numpy(), "model": chosen["model"].to_numpy(),
                         "rater": names, "dimension": chosen["dimension"].to_numpy(), "value": values,
                         "rater_kind": "human", "reason": "", "signature": "human"}).drop_duplicates(
        ["item_id", "model", "dimension", "rater"]).reset_index(drop=True)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("dimension", list(SCALES))
def test_patched_splits_equal_item_splits_of_everything(seed, dimension):
    _, ratings, rng = _data(seed)
    fast = ItemSplits(ratings, dimension)
    for count in (0, 1, 4, 12):
        humans = _humans(ratings, rng, count) if count else _humans(ratings, rng, 1).iloc[:0]
        expected = item_splits(pd.concat([ratings, humans], ignore_index=True), dimension)
        pd.testing.assert_frame_equal(fast.table(humans), expected, check_dtype=False)


def test_a_decision_redoes_only_the_units_humans_rated():
    _, ratings, rng = _data(7, n_items=40)
    fast = ItemSplits(ratings, "ca")
    built = fast.rows_computed
    humans = _humans(ratings, rng, 3)
    humans = humans[humans["dimension"] == "ca"]
    fast.table(humans)
    assert fast.rows_computed == built + len(humans.drop_duplicates(["item_id", "model"]))


def test_a_human_named_like_a_judge_is_computed_whole():
    _, ratings, _ = _data(3, n_items=40)
    ca = ratings[ratings["dimension"] == "ca"]
    by_j0 = set(zip(ca.loc[ca["rater"] == "j0", "item_id"], ca.loc[ca["rater"] == "j0", "model"], strict=True))
    other = ca[(ca["rater"] == "J1").to_numpy()
               & np.array([(i, m) not in by_j0 for i, m in zip(ca["item_id"], ca["model"], strict=True)])]
    assert len(other)
    humans = other.head(3).assign(rater="j0", rater_kind="human", value=1.0)  # one rater, both kinds of row
    fast = ItemSplits(ratings, "ca")
    built = fast.rows_computed
    expected = item_splits(pd.concat([ratings, humans], ignore_index=True), "ca")
    pd.testing.assert_frame_equal(fast.table(humans), expected, check_dtype=False)
    assert fast.rows_computed == built  # computed whole by item_splits, not patched


@pytest.mark.parametrize("seed", range(4))
def test_judge_human_tables_on_the_items_humans_rated_equal_those_on_every_rating(seed):
    outputs, ratings, rng = _data(seed)
    index = RowIndex(outputs, ratings)
    humans = _humans(ratings, rng, 10)
    decisions = humans.rename(columns={"rater": "annotator"})
    rated = dg.Rated(ratings, pd.DataFrame(), dg._human_items.__wrapped__("k", ratings), index.ratings_of_items)
    rated.humans = humans  # the ledger's annotators (annotator_ratings of the decisions)
    whole = pd.concat([ratings, humans], ignore_index=True)
    pd.testing.assert_frame_equal(rated.whole, whole)
    assert len(rated.paired) < len(whole)
    assert len(decisions) == len(humans)
    for dimension in SCALES:
        expected = sl.judge_human_events(whole, dimension)
        found = sl.judge_human_events(rated.paired, dimension,
                                      threshold=dg.judge_human_threshold(f"data-{seed}", dimension, rated))
        assert found[1] == expected[1]
        pd.testing.assert_frame_equal(found[0], expected[0])
        pd.testing.assert_frame_equal(calibration_bias(rated.paired, dimension, bootstrap=40, seed=seed),
                                      calibration_bias(whole, dimension, bootstrap=40, seed=seed))
        pd.testing.assert_frame_equal(calibration_bins(rated.paired, dimension), calibration_bins(whole, dimension))
        if dimension in ("ca", "u_gen"):
            pd.testing.assert_frame_equal(confusion_cells(rated.paired, dimension), confusion_cells(whole, dimension))
    assert rated.dimensions == dg.judged_dimensions(whole)
    assert rated.judges == __import__("empathy.signature", fromlist=["judge_signatures"]).judge_signatures(whole)


def test_bias_rows_kept_for_untouched_pairs_equal_a_fresh_computation(monkeypatch):
    import empathy.calibration as cal_module

    _, ratings, rng = _data(11, n_items=20)
    calls: list[int] = []
    original = cal_module.bootstrap_ci
    monkeypatch.setattr(cal_module, "bootstrap_ci", lambda *a, **k: calls.append(1) or original(*a, **k))
    memo: dict = {}
    humans = _humans(ratings, rng, 15)
    humans = humans[humans["dimension"] == "ca"]
    whole = pd.concat([ratings, humans], ignore_index=True)
    first = calibration_bias(whole, "ca", bootstrap=30, seed=2, memo=memo)
    pd.testing.assert_frame_equal(first, calibration_bias(whole, "ca", bootstrap=30, seed=2))
    calls.clear()
    assert calibration_bias(whole, "ca", bootstrap=30, seed=2, memo=memo).equals(first)
    assert calls == []  # nothing changed: every row kept
    # one more human label on one model's output: only that model's (model, judge) rows are bootstrapped again
    judged = ratings[(ratings["dimension"] == "ca") & (ratings["rater_kind"] == "llm")]
    done = set(zip(humans["item_id"], humans["model"], strict=True))
    fresh = judged[[(i, m) not in done for i, m in zip(judged["item_id"], judged["model"], strict=True)]].iloc[0]
    extra = humans.iloc[:1].assign(item_id=fresh["item_id"], model=fresh["model"], value=1.0)
    more = pd.concat([whole, extra], ignore_index=True)
    after = calibration_bias(more, "ca", bootstrap=30, seed=2, memo=memo)
    judges_of_model = after[after["model"] == fresh["model"]]["judge"].nunique()
    assert 0 < len(calls) <= 2 * judges_of_model  # bias and slope of that model's pairs only
    assert len(after) > judges_of_model  # (other models' rows were kept)
    pd.testing.assert_frame_equal(after, calibration_bias(more, "ca", bootstrap=30, seed=2))


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("rows", [0, 4, 10_000])
def test_the_split_preview_equals_the_head_and_counts_of_item_splits(seed, rows):
    """What the page holds of the split table (its counts and first rows) equals the straightforward table's; the
    first rows are arrays of their own (not slices keeping the whole table's Arrow buffers)."""
    outputs, ratings, rng = _data(seed, n_items=30)
    ratings = ratings.astype({c: "str" for c in ("item_id", "model", "rater", "dimension", "rater_kind")})
    index = RowIndex(outputs, ratings)
    humans = _humans(ratings, rng, 12)
    rated = dg.Rated(ratings, pd.DataFrame(), dg._human_items.__wrapped__("k", ratings), index.ratings_of_items)
    rated.humans = humans
    for dimension in SCALES:
        expected = item_splits(pd.concat([ratings, humans], ignore_index=True), dimension)
        preview = dg._split_preview.__wrapped__(f"k{seed}", dimension, f"data-{seed}-{rows}", rows, rated)
        assert (preview.n_units, preview.n_split) == (len(expected), int(expected["split"].sum()))
        pd.testing.assert_frame_equal(preview.head, expected.head(rows))
        pd.testing.assert_frame_equal(dg.splits(dimension, rated, f"data-{seed}-{rows}"), expected)
        if 0 < rows < len(expected):
            for column in ("item_id", "model", "values"):
                shown = preview.head[column].array.__arrow_array__()
                whole = expected[column].array.__arrow_array__()
                assert shown.get_total_buffer_size() < whole.get_total_buffer_size() / 2, column
