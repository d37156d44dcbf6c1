"""Loading outputs and ratings: formats, wide form, joins, missing ratings."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from empathy.io import DataError, build_dataset, load_dataset, load_outputs, load_ratings, validate_ratings

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
