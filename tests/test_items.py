"""The item table: hand-worked terms, counts, ranges and override state; the helpers; consistency with the pipeline."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from empathy.distancing.shift import SHIFT_COLUMN, distancing_shift
from empathy.evaluate import LD_SCORER, TextFeatures, compute_metrics, text_features
from empathy.io import load_dataset
from empathy.items import (
    COUNT_COLUMNS,
    NOT_RATED,
    filter_items,
    item_table,
    items_csv,
    range_column,
    search_items,
    status_column,
    term_column,
    term_columns,
    worst_first,
)
from empathy.labels.ledger import apply_overrides
from empathy.paths import DEMO_DIR

NAN = math.nan
SQRT2 = math.sqrt(2.0)

# ------------------------------------------------------------------------------------- hand-worked data
# Four outputs: model A on items i1, i2, i3 and model B on i1. A/i3's generation is empty (0 sentences).
OUTPUTS = pd.DataFrame({
    "item_id": ["i1", "i2", "i3", "i1"],
    "model": ["A", "A", "A", "B"],
    "task": ["t", "t", "t", "t"],
    "reference": ["Ref one. It was decided.", "Ref TWO about the Flood.", "Ref three.", "Ref one. It was decided."],
    "generation": ["Gen one. Gen one b.", "A generation. Another one.", "", "The NEEDLE here."],
})
# Densities (nominalization, impersonal, agentless) per sentence and sentence counts per side.
FEATURES = TextFeatures(
    sentences_ref=np.array([2.0, 1.0, 1.0, 2.0]),
    sentences_gen=np.array([2.0, 2.0, 0.0, 1.0]),
    densities_ref=np.array([[0, 1, 0], [2, 1, 0], [0, 0, 0], [0, 1, 0]], dtype=float),
    densities_gen=np.array([[1, 0, 0.5], [1, 0, 1.5], [NAN, NAN, NAN], [0, 0, 1]], dtype=float),
    signature="hand",
)


def _r(item, model, rater, dimension, value):
    return {"item_id": item, "model": model, "rater": rater, "dimension": dimension, "value": value,
            "rater_kind": "llm", "reason": "", "signature": ""}


RATINGS = pd.DataFrame([
    # SA, judge j1: A/i1 (0.8-0.2)/0.8 = 0.75; A/i2 E(t) = 0 -> undefined; A/i3 e_gen empty -> missing;
    # B/i1 (0.8-0.6)/0.8 = 0.25.
    _r("i1", "A", "j1", "e_ref", 0.8), _r("i1", "A", "j1", "e_gen", 0.2),
    _r("i2", "A", "j1", "e_ref", 0.0), _r("i2", "A", "j1", "e_gen", 0.4),
    _r("i3", "A", "j1", "e_ref", 0.5), _r("i3", "A", "j1", "e_gen", NAN),
    _r("i1", "B", "j1", "e_ref", 0.8), _r("i1", "B", "j1", "e_gen", 0.6),
    # SA, judge j2: A/i1 (0.5-0.4)/0.5 = 0.2; A/i2 not rated by j2; A/i3 (0.5-0.5)/0.5 = 0;
    # B/i1 (0.8-1.0)/0.8 = -0.25.
    _r("i1", "A", "j2", "e_ref", 0.5), _r("i1", "A", "j2", "e_gen", 0.4),
    _r("i3", "A", "j2", "e_ref", 0.5), _r("i3", "A", "j2", "e_gen", 0.5),
    _r("i1", "B", "j2", "e_ref", 0.8), _r("i1", "B", "j2", "e_gen", 1.0),
    # EGM, j1 only: A/i1 a = 2/2 = 1, b = 1/2 = 0.5 -> |0.5|/1.5 = 1/3; A/i2 a = b = 0 -> 0;
    # A/i3 q = 0 -> undefined; B/i1 a = 2/2 = 1, b = 3/1 = 3 -> 2/4 = 0.5.
    _r("i1", "A", "j1", "u_ref", 2), _r("i1", "A", "j1", "u_gen", 1),
    _r("i2", "A", "j1", "u_ref", 0), _r("i2", "A", "j1", "u_gen", 0),
    _r("i3", "A", "j1", "u_ref", 1), _r("i3", "A", "j1", "u_gen", 0),
    _r("i1", "B", "j1", "u_ref", 2), _r("i1", "B", "j1", "u_gen", 3),
    # CA: j1 A/i1 1, A/i2 0; j2 A/i1 0, B/i1 1.
    _r("i1", "A", "j1", "ca", 1), _r("i2", "A", "j1", "ca", 0),
    _r("i1", "A", "j2", "ca", 0), _r("i1", "B", "j2", "ca", 1),
])

OVERRIDES = pd.DataFrame({"item_id": ["i1", "i3"], "model": ["A", "A"], "rater": ["j2", "j1"],
                          "dimension": ["ca", "e_gen"], "value": [1.0, 0.25], "annotator": ["ann", "ann"],
                          "updated_at": ["2026-01-01", "2026-01-01"], "reason": ["", ""]})


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return item_table(OUTPUTS, RATINGS, FEATURES, overrides=OVERRIDES)


def _col(table: pd.DataFrame, column: str) -> list[float]:
    return table[column].to_list()


def _same(actual: list, expected: list) -> None:
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected, strict=True):
        if isinstance(e, float) and math.isnan(e):
            assert isinstance(a, float) and math.isnan(a), (actual, expected)
        else:
            assert a == pytest.approx(e), (actual, expected)


@pytest.mark.parametrize(("column", "expected", "status"), [
    ("SA:j1", [0.75, NAN, NAN, 0.25], ["ok", "undefined", "missing", "ok"]),
    ("SA:j2", [0.2, NAN, 0.0, -0.25], ["ok", NOT_RATED, "ok", "ok"]),
    ("EGM:j1", [1 / 3, 0.0, NAN, 0.5], ["ok", "ok", "undefined", "ok"]),
    ("CA:j1", [1.0, 0.0, NAN, NAN], ["ok", "ok", NOT_RATED, NOT_RATED]),
    ("CA:j2", [0.0, NAN, NAN, 1.0], ["ok", NOT_RATED, NOT_RATED, "ok"]),
    # LD of model A over its usable items i1, i2 (i3 has no generation sentence): reference nominalization
    # [0, 2] -> z [-1, 1], the other reference dimensions are constant -> 0; generation agentless [0.5, 1.5]
    # -> z [-1, 1]. i1: (-1, 0, 0) - (0, 0, -1) -> sqrt(2); i2 likewise. Model B has one item -> undefined.
    ("LD", [SQRT2, SQRT2, NAN, NAN], ["ok", "ok", "undefined", "undefined"]),
])
def test_hand_worked_terms_and_their_status(table, column, expected, status):
    _same(_col(table, column), expected)
    assert _col(table, f"{column} status") == status


def test_hand_worked_distancing_shift(table):
    # Usable outputs: i1/A, i2/A, i1/B (i3 has no generation sentence), pooled over both models. Reference
    # nominalization [0, 2, 0]: population sd sqrt(8/9); the other two reference dimensions do not vary and are
    # left out. i1/A: (1 - 0) / sqrt(8/9) = 3 / (2 sqrt 2); i2/A: (1 - 2) / sqrt(8/9); i1/B: 0.
    _same(_col(table, SHIFT_COLUMN), [3 / (2 * SQRT2), -3 / (2 * SQRT2), NAN, 0.0])
    assert _col(table, f"{SHIFT_COLUMN} status") == ["ok", "ok", "undefined", "ok"]


@pytest.mark.parametrize(("ref", "gen", "expected"), [
    ([[1, 1, 1], [1, 1, 1]], [[2, 2, 2], [0, 0, 0]], [NAN, NAN]),       # no reference varies: no scale
    ([[0, 0, 0]], [[1, 1, 1]], [NAN]),                                  # one output: no spread to measure by
    ([[0, 0, 0], [1, 1, 1]], [[0.5, 0.5, 0.5], [1, 1, 1]], [3.0, 0.0]),  # sd 0.5 in each: 3 x (0.5 / 0.5)
])
def test_distancing_shift_edge_cases(ref, gen, expected):
    _same(distancing_shift(np.array(ref, dtype=float), np.array(gen, dtype=float)).tolist(), expected)


def test_demo_sorted_by_shift_lists_no_faithful_output_in_its_top_ten(demo):
    """The Eq. 4 term sorted worst first brings up outputs the demo notes as faithful; the shift does not."""
    dataset, features = demo
    outputs = dataset.outputs.reset_index(drop=True)
    table = item_table(outputs, dataset.ratings, features)
    faithful = outputs["demo_note"].fillna("").str.contains("faithful")
    assert faithful.iloc[worst_first(table, "LD").index[:10]].sum() > 0
    assert faithful.iloc[worst_first(table, SHIFT_COLUMN).index[:10]].sum() == 0


def test_a_judge_without_ratings_of_a_metric_has_no_column(table):
    assert "EGM:j2" not in table.columns
    assert term_columns(table) == ["SA:j1", "SA:j2", "EGM:j1", "CA:j1", "CA:j2", "LD"]


def test_reference_standardisation_is_passed_to_ld():
    # With the reference statistics (mean (1, 1, 0), sd (1, 0, 0)) the generation z is 0 in every dimension,
    # so the terms are |z_t| = 1 for i1 and i2.
    out = item_table(OUTPUTS, RATINGS, FEATURES, ld_standardization="reference")
    _same(_col(out, "LD"), [1.0, 1.0, NAN, NAN])


@pytest.mark.parametrize(("dimension", "expected"), [
    ("e_ref", [0.3, NAN, 0.0, 0.0]),    # A/i2 has j1 only; A/i1 |0.8 - 0.5|
    ("e_gen", [0.2, NAN, NAN, 0.4]),    # A/i3: j1's value is missing, one value left
    ("u_ref", [NAN, NAN, NAN, NAN]),    # one judge
    ("ca", [1.0, NAN, NAN, NAN]),       # A/i1 j1 1 vs j2 0; the others have one judge
])
def test_disagreement_is_the_range_over_judges_with_a_value(table, dimension, expected):
    _same(_col(table, range_column(dimension)), expected)


def test_counts_come_back_from_densities_and_sentences(table):
    expected = {
        "sentences_ref": [2, 1, 1, 2], "sentences_gen": [2, 2, 0, 1],
        "nominalization_ref": [0, 2, 0, 0], "nominalization_gen": [2, 2, 0, 0],
        "impersonal_ref": [2, 1, 0, 2], "impersonal_gen": [0, 0, 0, 0],
        "agentless_ref": [0, 0, 0, 0], "agentless_gen": [1, 3, 0, 1],  # an empty text has no span: 0
    }
    for column in COUNT_COLUMNS:
        assert _col(table, column) == [float(x) for x in expected[column]], column


def test_override_state(table):
    assert _col(table, "overrides") == [1, 0, 1, 0]
    assert _col(table, "override_dimensions") == ["ca", "", "e_gen", ""]
    none = item_table(OUTPUTS, RATINGS, FEATURES)
    assert _col(none, "overrides") == [0, 0, 0, 0]


def test_terms_follow_the_ratings_given_so_effective_ratings_show_the_override():
    effective = apply_overrides(RATINGS, OVERRIDES)
    out = item_table(OUTPUTS, effective, FEATURES, overrides=OVERRIDES)
    _same(_col(out, "SA:j1"), [0.75, NAN, 0.5, 0.25])  # A/i3 (0.5 - 0.25) / 0.5
    _same(_col(out, "CA:j2"), [1.0, NAN, NAN, 1.0])
    _same(_col(out, range_column("ca")), [0.0, NAN, NAN, NAN])


def test_keys_text_and_order_are_those_of_the_outputs(table):
    assert _col(table, "item_id") == ["i1", "i2", "i3", "i1"]
    assert _col(table, "model") == ["A", "A", "A", "B"]
    assert _col(table, "generation") == list(OUTPUTS["generation"])


def test_no_ratings_gives_ld_and_counts_only():
    out = item_table(OUTPUTS, RATINGS.iloc[0:0], FEATURES)
    assert term_columns(out) == ["LD"]
    assert not [c for c in out.columns if c.startswith("range:")]
    _same(_col(out, "LD"), [SQRT2, SQRT2, NAN, NAN])


@pytest.mark.parametrize(("call", "error", "match"), [
    (lambda: item_table(OUTPUTS.drop(columns=["generation"]), RATINGS, FEATURES), ValueError, "generation"),
    (lambda: item_table(OUTPUTS, RATINGS.drop(columns=["rater"]), FEATURES), ValueError, "rater"),
    (lambda: item_table(OUTPUTS.iloc[:3], RATINGS, FEATURES), ValueError, "do not match the 3 outputs"),
    (lambda: item_table(OUTPUTS, RATINGS, "features"), TypeError, "TextFeatures"),
    (lambda: item_table(OUTPUTS, RATINGS, FEATURES, ld_standardization="pooled"), ValueError, "pooled"),
    (lambda: item_table(pd.concat([OUTPUTS, OUTPUTS.iloc[:1]]), RATINGS,
                        TextFeatures(*(np.concatenate([a, a[:1]]) for a in (
                            FEATURES.sentences_ref, FEATURES.sentences_gen, FEATURES.densities_ref,
                            FEATURES.densities_gen)), signature="x")), ValueError, r"\(i1, A\)"),
    (lambda: item_table(OUTPUTS, RATINGS.assign(value=RATINGS["value"].where(RATINGS["dimension"] != "ca", 2)),
                        FEATURES), ValueError, "not a binary label"),
    (lambda: item_table(OUTPUTS, RATINGS, FEATURES, overrides=OVERRIDES.drop(columns=["rater"])), ValueError,
     "overrides lack"),
])
def test_bad_input_is_named(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_column_name_helpers():
    assert term_column("SA", "gpt") == "SA:gpt"
    assert status_column("LD") == "LD status"
    with pytest.raises(ValueError, match="pass the judge"):
        term_column("CA")
    with pytest.raises(ValueError, match="metric must be one of"):
        term_column("XX", "j")


# ------------------------------------------------------------------------------------------------ helpers

@pytest.mark.parametrize(("query", "expected"), [
    ("needle", [("i1", "B")]),            # generation, case-insensitive
    ("flood", [("i2", "A")]),             # reference
    ("I3", [("i3", "A")]),                # item_id
    ("it was decided.", [("i1", "A"), ("i1", "B")]),
    ("(", []),                            # a literal, not a regex
    ("  ", [("i1", "A"), ("i2", "A"), ("i3", "A"), ("i1", "B")]),
])
def test_search(table, query, expected):
    found = search_items(table, query)
    assert list(zip(found["item_id"], found["model"], strict=True)) == expected


@pytest.mark.parametrize(("kwargs", "expected"), [
    ({"min_counts": {"agentless_gen": 1}}, [("i1", "A"), ("i2", "A"), ("i1", "B")]),
    ({"min_counts": {"agentless_gen": 2, "nominalization_ref": 2}}, [("i2", "A")]),
    ({"min_counts": {"LD": 0}}, [("i1", "A"), ("i2", "A")]),   # NaN never passes a minimum
    ({"models": ["B"]}, [("i1", "B")]),
    ({"overridden": True}, [("i1", "A"), ("i3", "A")]),
    ({"overridden": False, "models": ["A"]}, [("i2", "A")]),
])
def test_filter(table, kwargs, expected):
    found = filter_items(table, **kwargs)
    assert list(zip(found["item_id"], found["model"], strict=True)) == expected


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"min_counts": {"reference": 1}}, "not a numeric column"),
    ({"min_counts": {"nope": 1}}, "not a numeric column"),
    ({"min_counts": {"agentless_gen": "2"}}, "must be a number"),
    ({"models": "A"}, "not one string"),
])
def test_filter_rejects_bad_arguments(table, kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        filter_items(table, **kwargs)


@pytest.mark.parametrize(("column", "absolute", "expected"), [
    # SA:j2 = [0.2, NaN, 0, -0.25]: largest first, NaN last.
    ("SA:j2", False, [("i1", "A"), ("i3", "A"), ("i1", "B"), ("i2", "A")]),
    # by magnitude: |-0.25| > 0.2 > 0.
    ("SA:j2", True, [("i1", "B"), ("i1", "A"), ("i3", "A"), ("i2", "A")]),
    # EGM:j1 = [1/3, 0, NaN, 0.5]
    ("EGM:j1", False, [("i1", "B"), ("i1", "A"), ("i2", "A"), ("i3", "A")]),
    # ties (sqrt 2 twice) keep the table order; NaN rows keep theirs at the end
    ("LD", False, [("i1", "A"), ("i2", "A"), ("i3", "A"), ("i1", "B")]),
])
def test_worst_first(table, column, absolute, expected):
    ordered = worst_first(table, column, absolute=absolute)
    assert list(zip(ordered["item_id"], ordered["model"], strict=True)) == expected


def test_worst_first_rejects_text_columns(table):
    with pytest.raises(ValueError, match="'generation': not a numeric column"):
        worst_first(table, "generation")


def test_helpers_compose_search_filter_sort(table):
    found = worst_first(filter_items(search_items(table, "ref"), models=["A"]), "SA:j1")
    assert list(found["item_id"]) == ["i1", "i2", "i3"]


# ------------------------------------------------------------------------------ consistency with pipeline

@pytest.fixture(scope="module")
def demo():
    dataset = load_dataset(DEMO_DIR / "outputs.csv", sorted(DEMO_DIR.glob("ratings*.csv")))
    features = text_features(dataset.outputs)
    return dataset, features


@pytest.mark.parametrize("by_task", [False, True])
def test_demo_group_means_equal_compute_metrics(demo, by_task):
    dataset, features = demo
    table = item_table(dataset.outputs, dataset.ratings, features, by_task=by_task)
    report = compute_metrics(dataset.outputs, dataset.ratings, features=features, by_task=by_task).table
    group = ["task", "model"] if by_task else ["model"]
    checked = 0
    for row in report.itertuples():
        column = "LD" if row.metric == "LD" else term_column(row.metric, row.scorer)
        part = table if not by_task else table[table["task"] == row.task]
        values = part.loc[part["model"] == row.model, column].dropna()
        assert len(values) == row.n, (row, group)
        if row.n:
            assert values.mean() == pytest.approx(row.value, abs=1e-12), row
            checked += 1
        statuses = part.loc[part["model"] == row.model, f"{column} status"]
        assert (statuses == "missing").sum() == row.n_missing, row
        assert (statuses == "undefined").sum() == row.n_undefined, row
    # SA, EGM and CA under both judges and LD, for all five models
    assert {(r.metric, r.scorer) for r in report.itertuples()} >= {
        ("SA", "author"), ("SA", "lexicon"), ("EGM", "author"), ("EGM", "lexicon"), ("CA", "author"),
        ("CA", "lexicon"), ("LD", LD_SCORER)}
    assert checked >= 35


def test_demo_sa_group_means_equal_compute_metrics_sa(demo):
    """The brief's check, spelled out for SA: mean of each (model, judge) group's usable terms = SA value."""
    dataset, features = demo
    table = item_table(dataset.outputs, dataset.ratings, features)
    report = compute_metrics(dataset.outputs, dataset.ratings, features=features).table
    sa = report[report["metric"] == "SA"]
    assert len(sa) == 10
    for row in sa.itertuples():
        terms = table.loc[table["model"] == row.model, f"SA:{row.scorer}"]
        assert terms.mean() == pytest.approx(row.value, abs=1e-12)  # pandas' mean skips the NaN terms


def test_csv_neutralises_formulas_and_carries_the_signature():
    import io

    from empathy.escaping import unspreadsheet_cell

    outputs = OUTPUTS.assign(generation=["=HYPERLINK(\"x\")", "+1", "plain", "-2"], model=["A", "A", "A", "@B"])
    ratings = RATINGS.assign(model=RATINGS["model"].replace({"B": "@B"}),
                             rater=RATINGS["rater"].replace({"j2": "=j2"}))
    table = item_table(outputs, ratings, FEATURES)
    text = items_csv(table, "empathy:0.1.0|seed:0").decode()
    back = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    assert list(back["generation"]) == ["'=HYPERLINK(\"x\")", "'+1", "plain", "'-2"]
    assert list(back["model"]) == ["A", "A", "A", "'@B"]
    assert "'SA:=j2" not in back.columns and "SA:=j2" in back.columns  # only a leading = is a formula
    assert set(back["signature"]) == {"empathy:0.1.0|seed:0"}
    assert back.loc[1, "SA:j1"] == ""  # NaN stays empty, never 0
    assert float(back.loc[0, "SA:j1"]) == pytest.approx(0.75)
    assert [unspreadsheet_cell(v) for v in back["generation"]] == list(outputs["generation"])
