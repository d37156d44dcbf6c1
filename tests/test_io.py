"""Loading outputs and ratings: formats, wide form, joins, missing ratings."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from empathy.io import (
    DataError,
    build_dataset,
    load_dataset,
    load_outputs,
    load_ratings,
    require_frame,
    validate_ratings,
)

OUTPUT_ROWS = [
    {"item_id": "1", "model": "a", "task": "news", "reference": "r1", "generation": "g1", "lang": "en"},
    {"item_id": "2", "model": "a", "task": "news", "reference": "r2", "generation": "g2", "lang": "en"},
    {"item_id": "1", "model": "b", "task": "news", "reference": "r1", "generation": "h1", "lang": "en"},
]


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_outputs_in_every_format_load_the_same(tmp_path, fmt):
    frame = pd.DataFrame(OUTPUT_ROWS)
    path = tmp_path / f"out.{fmt}"
    if fmt == "csv":
        frame.to_csv(path, index=False)
    elif fmt == "jsonl":
        path.write_text("\n".join(json.dumps(r) for r in OUTPUT_ROWS) + "\n")
    else:
        frame.to_parquet(path)
    outputs, wide = load_outputs(path)
    assert list(outputs["generation"]) == ["g1", "g2", "h1"]
    assert list(outputs["lang"]) == ["en"] * 3  # metadata kept
    assert wide.empty


def test_numeric_ids_are_read_as_text(tmp_path):
    path = tmp_path / "out.jsonl"
    path.write_text('{"item_id": 7, "model": "a", "reference": "r", "generation": "g"}\n')
    outputs, _ = load_outputs(path)
    assert outputs["item_id"].tolist() == ["7"]
    assert outputs["task"].tolist() == [""]  # task is optional


def test_wide_rating_columns_become_long_ratings(tmp_path):
    path = tmp_path / "out.csv"
    path.write_text("item_id,model,reference,generation,gpt-5.2:ca,gpt-5.2:e_ref,lex:ca\n"
                    "1,a,r,g,1,0.5,\n2,a,r,g,0,0.25,1\n")
    outputs, wide = load_outputs(path)
    assert "gpt-5.2:ca" not in outputs.columns
    got = {(r.item_id, r.rater, r.dimension): r.value for r in wide.itertuples()}
    assert got[("1", "gpt-5.2", "ca")] == 1.0
    assert got[("2", "gpt-5.2", "e_ref")] == 0.25
    assert math.isnan(got[("1", "lex", "ca")])  # an empty cell is a missing rating, kept as NaN
    assert got[("2", "lex", "ca")] == 1.0


def test_missing_ratings_keep_their_reason(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("item_id,model,rater,dimension,value,rater_kind,reason\n"
                    "1,a,j,ca,,llm,timeout after 4 tries\n1,a,j,e_ref,0.3,llm,\n")
    ratings = load_ratings(path)
    assert math.isnan(ratings["value"].iat[0])
    assert ratings["reason"].iat[0] == "timeout after 4 tries"
    assert ratings["value"].iat[1] == 0.3


def test_other_dimensions_are_kept_unchecked(tmp_path):
    frame = pd.DataFrame({"item_id": ["1"], "model": ["a"], "rater": ["expert1"], "dimension": ["empathy"],
                          "value": ["4"]})
    ratings = validate_ratings(frame)
    assert ratings["value"].tolist() == [4.0]


def test_dataset_summary(tmp_path):
    out = tmp_path / "out.csv"
    pd.DataFrame(OUTPUT_ROWS).to_csv(out, index=False)
    rat = tmp_path / "r.csv"
    rat.write_text("item_id,model,rater,dimension,value\n1,a,j,ca,1\n2,a,j,ca,\n1,b,k,e_ref,0.5\n")
    dataset = load_dataset(out, [rat])
    summary = dataset.summary()
    assert summary["tasks"] == ["news"]
    assert summary["models"] == ["a", "b"]
    assert summary["raters"] == ["j", "k"]
    assert summary["dimensions"] == ["ca", "e_ref"]
    assert (summary["items"], summary["outputs"], summary["ratings"], summary["missing_ratings"]) == (2, 3, 3, 1)


def test_same_rating_in_two_files_is_an_error(tmp_path):
    out = tmp_path / "out.csv"
    pd.DataFrame(OUTPUT_ROWS).to_csv(out, index=False)
    for name in ("r1.csv", "r2.csv"):
        (tmp_path / name).write_text("item_id,model,rater,dimension,value\n1,a,j,ca,1\n")
    with pytest.raises(DataError, match="more than one file"):
        load_dataset(out, [tmp_path / "r1.csv", tmp_path / "r2.csv"])


def test_build_dataset_without_ratings():
    frame = pd.DataFrame(OUTPUT_ROWS)
    from empathy.io import validate_outputs

    outputs, wide = validate_outputs(frame)
    dataset = build_dataset(outputs, wide)
    assert dataset.ratings.empty and dataset.summary()["ratings"] == 0


def test_parquet_nullable_int64_na_is_a_missing_rating(tmp_path):
    path = tmp_path / "r.parquet"
    pd.DataFrame({"item_id": pd.array([7, 8], dtype="Int64"), "model": "a", "rater": "j", "dimension": "ca",
                  "value": pd.array([1, None], dtype="Int64")}).to_parquet(path)
    ratings = load_ratings(path)
    assert ratings["item_id"].tolist() == ["7", "8"]
    assert ratings["value"].iat[0] == 1.0 and math.isnan(ratings["value"].iat[1])


def test_output_ids_are_stripped_like_rating_ids(tmp_path):
    out = tmp_path / "out.csv"
    out.write_text('item_id,model,task,reference,generation\n" x ",a ,news ,r,g\n')
    rat = tmp_path / "r.csv"
    rat.write_text("item_id,model,rater,dimension,value\nx,a,j,ca,1\n")
    dataset = load_dataset(out, [rat])
    assert dataset.outputs[["item_id", "model", "task"]].values.tolist() == [["x", "a", "news"]]
    assert dataset.ratings["value"].tolist() == [1.0]


@pytest.mark.parametrize(("cell", "expected"), [
    ("0.5", 0.5), (" 1 ", 1.0), ("+1", 1.0), ("1e-1", 0.1), (".5", 0.5), ("5.", 5.0), ("", math.nan),
    ("NaN", math.nan), ("na", math.nan), ("null", math.nan), ("None", math.nan),
])
def test_number_cells_that_parse(cell, expected):
    frame = pd.DataFrame({"item_id": ["1"], "model": ["a"], "rater": ["j"], "dimension": ["u_gen"],
                          "value": [cell]}, dtype=object)
    value = validate_ratings(frame)["value"].iat[0]
    assert (math.isnan(value) and math.isnan(expected)) or value == expected


@pytest.mark.parametrize("cell", ["1_000", "\u0661", "\u06f1\u06f2", "\uff11", "\u0967", "0x10", "1,5", "--1",
                                  "1e", ".", "true", "½", "²"])
def test_number_cells_python_would_take_but_a_spreadsheet_would_not(cell):
    frame = pd.DataFrame({"item_id": ["1"], "model": ["a"], "rater": ["j"], "dimension": ["u_gen"],
                          "value": [cell]}, dtype=object)
    with pytest.raises(DataError, match="row 2, column 'value': not a number"):
        validate_ratings(frame)


def _reference_validation(cells: list[object], dimensions: list[str]) -> tuple[list[float], str | None]:
    """The per-row validation as it was before vectorising (with the ASCII-number rule): the reference."""
    import re

    from empathy.io import BINARY_DIMENSIONS, DIMENSION_RANGES

    number = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
    values = []
    for position, (raw, dimension) in enumerate(zip(cells, dimensions, strict=True)):
        where = f"<ratings>, row {position + 2}, column 'value': "
        if raw is None or (isinstance(raw, float) and math.isnan(raw)):
            value = math.nan
        elif isinstance(raw, float | int):
            value = float(raw)
            if math.isinf(value):
                return values, where + "value is infinite"
        else:
            text = str(raw).strip()
            if text.lower() in ("", "nan", "na", "null", "none"):
                value = math.nan
            elif text.lower().lstrip("+-") in ("inf", "infinity"):
                return values, where + "value is infinite"
            elif not number.fullmatch(text):
                return values, where + f"not a number: {text[:40]!r}"
            else:
                value = float(text)
                if math.isinf(value):
                    return values, where + "value is infinite"
        values.append(value)
        if math.isnan(value) or dimension not in DIMENSION_RANGES:
            continue
        low, high = DIMENSION_RANGES[dimension]
        if dimension in BINARY_DIMENSIONS and value not in (0.0, 1.0):
            return values, where + f"'{dimension}' must be 0 or 1, got {raw!r}"
        if not low <= value <= high:
            return values, where + f"'{dimension}' must be in [{low:g}, {high:g}], got {raw!r}"
    return values, None


@pytest.mark.parametrize("seed", range(40))
def test_vectorised_validation_matches_the_row_by_row_reference(seed):
    """Random columns of good, missing, malformed and out-of-range cells: same values, same first error."""
    import numpy as np

    rng = np.random.default_rng(seed)
    pool = ["0", "1", "0.5", "0.25", " 1 ", "", "nan", "NA", "2", "-1", "1.5", "x", "1_0", "\uff11", "inf", "1e400",
            "3", 0.5, 1, 0, 2.5, None, float("nan")]
    n = int(rng.integers(1, 60))
    # mostly valid cells, so that the first error falls anywhere in the column
    good = [c for c in pool if c in ("0", "1", "", "nan", "NA", " 1 ", 1, 0, None)]
    cells = [pool[int(rng.integers(len(pool)))] if rng.random() < 0.08 else good[int(rng.integers(len(good)))]
             for _ in range(n)]
    if rng.random() < 0.5:
        cells = [c for c in cells if isinstance(c, str)]  # a CSV-like text column
        n = len(cells)
        if n == 0:
            return
    dimensions = [["ca", "e_ref", "u_gen", "empathy"][int(rng.integers(4))] for _ in range(n)]
    frame = pd.DataFrame({"item_id": [str(i) for i in range(n)], "model": "a", "rater": "j",
                          "dimension": dimensions, "value": pd.Series(cells, dtype=object)})
    expected_values, expected_error = _reference_validation(cells, dimensions)
    if expected_error is None:
        got = validate_ratings(frame)["value"].tolist()
        assert np.allclose(got, expected_values, equal_nan=True)
    else:
        with pytest.raises(DataError) as caught:
            validate_ratings(frame)
        assert str(caught.value) == expected_error


def test_write_ratings_neutralises_csv_and_reads_back_exactly(tmp_path):
    from empathy.io import write_ratings

    ratings = pd.DataFrame({"item_id": ["=1+2", "'quoted", "-3"], "model": ["+cmd", "@x", "m"],
                            "rater": ["j", "j", "j"], "dimension": ["u_gen"] * 3, "value": [-1.0, 0.0, float("nan")],
                            "rater_kind": ["llm"] * 3, "reason": ["", "", "=bad reason"], "signature": ["s"] * 3})
    for suffix in (".csv", ".jsonl", ".parquet"):
        path = tmp_path / f"r{suffix}"
        ratings.loc[ratings["value"] < 0, "value"] = 1.0  # u_gen is a count: keep the table valid
        write_ratings(ratings, path)
        back = load_ratings(path)
        assert back["item_id"].tolist() == ratings["item_id"].tolist(), suffix
        assert back["model"].tolist() == ratings["model"].tolist(), suffix
        assert back["reason"].tolist() == ratings["reason"].tolist(), suffix
    raw = (tmp_path / "r.csv").read_text().splitlines()
    assert raw[1].startswith("'=1+2,'+cmd,") and raw[2].startswith("''quoted,'@x,")
    assert json.loads((tmp_path / "r.jsonl").read_text().splitlines()[0])["item_id"] == "=1+2"


def test_json_records_turns_numpy_and_missing_into_plain_json():
    import numpy as np

    from empathy.io import json_records

    frame = pd.DataFrame({"a": [1, 2], "b": [0.5, np.nan], "c": ["x", None],
                          "d": pd.array([1, None], dtype="Int64")})
    assert json_records(frame) == [{"a": 1, "b": 0.5, "c": "x", "d": 1}, {"a": 2, "b": None, "c": None, "d": None}]
    assert json.dumps(json_records(frame))  # every value is plain JSON


def test_a_carriage_return_in_an_id_survives_the_csv_round_trip(tmp_path):
    from empathy.io import write_ratings

    ratings = pd.DataFrame({"item_id": ["a\rb", "c"], "model": "m", "rater": "j", "dimension": "ca",
                            "value": [1.0, 0.0]})
    write_ratings(ratings, tmp_path / "r.csv")
    assert load_ratings(tmp_path / "r.csv")["item_id"].tolist() == ["a\rb", "c"]


@pytest.mark.parametrize(("frame", "error", "message"), [
    ([{"item_id": "a"}], TypeError, "^ratings must be a pandas DataFrame, got list$"),
    (pd.DataFrame({"item_id": ["a"]}), ValueError, "^ratings lacks the column\\(s\\) model, value$"),
    (pd.DataFrame(columns=["model"]), ValueError, "^ratings lacks the column\\(s\\) item_id, value$"),
])
def test_require_frame_names_the_argument_and_every_missing_column(frame, error, message):
    with pytest.raises(error, match=message):
        require_frame(frame, ("item_id", "model", "value"), "ratings")


def test_require_frame_accepts_a_frame_with_the_columns_and_more():
    require_frame(pd.DataFrame(columns=["value", "item_id", "model", "extra"]), ("item_id", "model", "value"),
                  "ratings")


@pytest.mark.parametrize(("right_keys", "by_position"), [
    (["b", "a", "c"], True),         # every left row finds one right row: taken by position
    (["b", "a"], False),             # "c" finds none: the join, with a missing value
    (["b", "a", "c", "a"], False),   # "a" twice in right: the join, with both rows
])
def test_left_join_is_pandas_left_merge(right_keys, by_position):
    from empathy.io import left_join

    left = pd.DataFrame({"k": ["a", "c", "b"], "n": [1, 2, 3]}, index=[10, 11, 12])
    right = pd.DataFrame({"k": right_keys, "x": [float(i) for i in range(len(right_keys))],
                          "s": [f"v{i}" for i in range(len(right_keys))]})
    joined = left_join(left, right, ["k"])
    expected = left.merge(right, on=["k"], how="left")
    pd.testing.assert_frame_equal(joined.reset_index(drop=True), expected)
    assert list(joined.index) == ([10, 11, 12] if by_position else list(range(len(expected))))
