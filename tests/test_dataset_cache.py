"""The disk cache of validated data sets (empathy.dataset_cache) and the fast paths of the first validation.

A cache hit must give exactly the tables a fresh load gives; a changed file (even with the same size and
modification time) is read again; a damaged cache file is rebuilt, never an error; a second open does not
validate again (counted calls). The fast paths of empathy.io (numbers read once per distinct text, the quoted-cell
scan, text columns without Python objects) are compared with the straightforward computation on random data.
"""

from __future__ import annotations

import os
import random
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from empathy import dataset_cache, io
from empathy.dataset_cache import load_dataset_cached
from empathy.io import DataError, load_dataset

OUTPUTS = (
    "item_id,model,task,reference,generation,j1:ca,notes\n"
    "i1,A,t1,I feel lost.,It's fine.,0,x\n"
    "i1,B,t1,I feel lost.,'=SUM(1),1,\n"
    "i2,A,t2,\"He said \"\"no\"\".\",Sorry to hear.,1,y\n"
    "i2,B,t2,Nothing.,,0,\n"
)
RATINGS = (
    "item_id,model,rater,dimension,value,rater_kind,reason,signature\n"
    "i1,A,j2,ca,1,llm,,sig\n"
    "i1,A,j2,e_ref,0.25,llm,,sig\n"
    "i1,B,j2,ca,0,llm,,sig\n"
    "i2,A,j2,ca,,llm,refused,sig\n"
    "i2,B,j2,u_gen,3,llm,,sig\n"
    "i2,B,j2,custom,7.5,human,,\n"
)
RATINGS_JSONL = (
    '{"item_id": "i1", "model": "A", "rater": "j3", "dimension": "ca", "value": 1}\n'
    "\n"
    '{"item_id": "i2", "model": "B", "rater": "j3", "dimension": "e_gen", "value": 0.5, "rater_kind": "llm"}\n'
)


def _files(folder: Path) -> tuple[Path, list[Path]]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "outputs.csv").write_text(OUTPUTS, encoding="utf-8")
    (folder / "ratings.csv").write_text(RATINGS, encoding="utf-8")
    (folder / "ratings_b.jsonl").write_text(RATINGS_JSONL, encoding="utf-8")
    return folder / "outputs.csv", [folder / "ratings.csv", folder / "ratings_b.jsonl"]


def _assert_same(left, right) -> None:
    pd.testing.assert_frame_equal(left.outputs, right.outputs)
    pd.testing.assert_frame_equal(left.ratings, right.ratings)
    assert left.sources == right.sources
    assert left.outputs.attrs == right.outputs.attrs and left.ratings.attrs == right.ratings.attrs


def test_a_cache_hit_gives_the_tables_of_a_fresh_load(tmp_path):
    outputs, ratings = _files(tmp_path / "data")
    fresh = load_dataset(outputs, ratings)
    first = load_dataset_cached(outputs, ratings, cache_dir=tmp_path / "cache")
    second = load_dataset_cached(outputs, ratings, cache_dir=tmp_path / "cache")
    assert (first.from_cache, second.from_cache) == (False, True)
    assert first.key == second.key and len(first.key) == 64
    _assert_same(second.dataset, fresh)
    _assert_same(first.dataset, fresh)
    assert second.dataset.summary() == fresh.summary()
    # the spreadsheet prefix was removed and the wide column moved into the ratings, as a fresh load does
    assert second.dataset.outputs.loc[1, "generation"] == "=SUM(1)"
    assert ("j1", "ca") in set(zip(second.dataset.ratings["rater"], second.dataset.ratings["dimension"], strict=True))


def test_the_cache_file_is_private_and_beside_the_distancing_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EMPATHY_CACHE_DIR", str(tmp_path / "cache"))
    assert dataset_cache.default_cache_dir() == tmp_path / "cache" / "datasets"
    outputs, ratings = _files(tmp_path / "data")
    load_dataset_cached(outputs, ratings)
    stored = list((tmp_path / "cache" / "datasets").iterdir())
    assert len(stored) == 1 and stored[0].suffix == ".pkl"
    assert stored[0].stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "cache" / "datasets").stat().st_mode & 0o777 == 0o700


def test_a_file_changed_with_the_same_size_and_time_is_read_again(tmp_path):
    outputs, ratings = _files(tmp_path / "data")
    cache = tmp_path / "cache"
    before = load_dataset_cached(outputs, ratings, cache_dir=cache)
    info = ratings[0].stat()
    text = ratings[0].read_text(encoding="utf-8").replace("i1,B,j2,ca,0,", "i1,B,j2,ca,1,")
    ratings[0].write_text(text, encoding="utf-8")
    os.utime(ratings[0], ns=(info.st_atime_ns, info.st_mtime_ns))
    assert ratings[0].stat().st_size == info.st_size and ratings[0].stat().st_mtime_ns == info.st_mtime_ns
    after = load_dataset_cached(outputs, ratings, cache_dir=cache)
    assert not after.from_cache and after.key != before.key
    _assert_same(after.dataset, load_dataset(outputs, ratings))
    row = after.dataset.ratings[(after.dataset.ratings["item_id"] == "i1") & (after.dataset.ratings["model"] == "B")
                                & (after.dataset.ratings["rater"] == "j2")]
    assert row["value"].tolist() == [1.0]


def test_other_paths_or_other_rules_are_other_keys(tmp_path, monkeypatch):
    outputs, ratings = _files(tmp_path / "data")
    cache = tmp_path / "cache"
    assert not load_dataset_cached(outputs, ratings, cache_dir=cache).from_cache
    assert not load_dataset_cached(outputs, ratings[:1], cache_dir=cache).from_cache
    copy = tmp_path / "copy"
    copy_outputs, copy_ratings = _files(copy)
    moved = load_dataset_cached(copy_outputs, copy_ratings, cache_dir=cache)
    assert not moved.from_cache and moved.dataset.sources[0] == str(copy_outputs)  # messages name the new path
    monkeypatch.setattr(dataset_cache, "_RULES", "other rules")
    assert not load_dataset_cached(outputs, ratings, cache_dir=cache).from_cache
    assert load_dataset_cached(outputs, ratings, cache_dir=cache).from_cache


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty", "other format", "shared"])
def test_a_damaged_cache_file_is_rebuilt_never_an_error(tmp_path, damage):
    outputs, ratings = _files(tmp_path / "data")
    cache = tmp_path / "cache"
    load_dataset_cached(outputs, ratings, cache_dir=cache)
    (stored,) = cache.iterdir()
    if damage == "garbage":
        stored.write_bytes(b"\x80\x05not a pickle at all")
    elif damage == "truncated":
        stored.write_bytes(stored.read_bytes()[:200])
    elif damage == "empty":
        stored.write_bytes(b"")
    elif damage == "other format":
        import pickle

        stored.write_bytes(pickle.dumps({"format": -1}))
    else:
        stored.chmod(0o666)  # writable by others: never unpickled
    again = load_dataset_cached(outputs, ratings, cache_dir=cache)
    assert not again.from_cache
    _assert_same(again.dataset, load_dataset(outputs, ratings))
    assert stored.stat().st_mode & 0o777 == 0o600
    assert load_dataset_cached(outputs, ratings, cache_dir=cache).from_cache  # rebuilt


def test_a_cache_folder_that_cannot_be_written_leaves_loading_as_it_was(tmp_path):
    outputs, ratings = _files(tmp_path / "data")
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("x")
    result = load_dataset_cached(outputs, ratings, cache_dir=blocked / "datasets")
    assert not result.from_cache
    _assert_same(result.dataset, load_dataset(outputs, ratings))


def _count_io_calls(monkeypatch, calls: dict[str, int]) -> None:
    """Count each call of the ``empathy.io`` functions named in ``calls`` into it (they still run)."""
    def counting(name):
        original = getattr(io, name)

        def wrapper(*args, **kwargs):
            calls[name] += 1
            return original(*args, **kwargs)
        return wrapper

    for name in calls:
        monkeypatch.setattr(io, name, counting(name))


def test_a_second_open_does_not_read_or_validate_again(tmp_path, monkeypatch):
    calls = {"read_table": 0, "validate_outputs": 0, "validate_ratings": 0}

    _count_io_calls(monkeypatch, calls)
    outputs, ratings = _files(tmp_path / "data")
    load_dataset_cached(outputs, ratings, cache_dir=tmp_path / "cache")
    assert calls == {"read_table": 3, "validate_outputs": 1, "validate_ratings": 2}
    load_dataset_cached(outputs, ratings, cache_dir=tmp_path / "cache")
    assert calls == {"read_table": 3, "validate_outputs": 1, "validate_ratings": 2}


def test_a_malformed_file_gives_the_same_message_and_caches_nothing(tmp_path):
    outputs, ratings = _files(tmp_path / "data")
    ratings[0].write_text(RATINGS.replace("i1,A,j2,e_ref,0.25", "i1,A,j2,e_ref,1.5"), encoding="utf-8")
    with pytest.raises(DataError) as direct:
        load_dataset(outputs, ratings)
    with pytest.raises(DataError) as cached:
        load_dataset_cached(outputs, ratings, cache_dir=tmp_path / "cache")
    assert str(cached.value) == str(direct.value)
    assert "row 3" in str(direct.value) and "value" in str(direct.value)
    assert not (tmp_path / "cache").exists() or not list((tmp_path / "cache").iterdir())
    missing = tmp_path / "data" / "nope.csv"
    with pytest.raises(DataError) as gone:
        load_dataset_cached(outputs, [missing], cache_dir=tmp_path / "cache")
    with pytest.raises(DataError) as gone_direct:
        load_dataset(outputs, [missing])
    assert str(gone.value) == str(gone_direct.value)


def test_only_the_newest_data_sets_are_kept(tmp_path):
    cache = tmp_path / "cache"
    for k in range(dataset_cache.KEEP + 2):
        outputs, ratings = _files(tmp_path / f"data{k}")
        load_dataset_cached(outputs, ratings, cache_dir=cache)
    assert len([p for p in cache.iterdir() if p.suffix == ".pkl"]) == dataset_cache.KEEP


# ------------------------------------------------------------------------ fast paths against the plain ones

def _random_cells(rng: random.Random, n: int) -> list[str | None]:
    pool = ["0", "1", "1.0", " 1 ", "0.000", "+1", "-0", "1e0", "0.99999999999999999", "1.00000000000000001",
            "nan", "NA", "", "null", "None", "inf", "-Infinity", "1_000", "٣", "abc", "0x10", ".5", "5.", "3",
            "6", "7", "2.5e-1", "1E+2", "true"]
    return [None if rng.random() < 0.05 else rng.choice(pool) if rng.random() < 0.7 else f"{rng.random():.3f}"
            for _ in range(n)]


@pytest.mark.parametrize("seed", range(5))
def test_numbers_read_per_distinct_text_equal_the_cell_by_cell_reading(seed):
    rng = random.Random(seed)
    raw = pd.Series(_random_cells(rng, 3000), dtype="str")
    fast = io.parse_numbers(raw)
    plain = io._parse_cells(raw)
    assert len(raw) > io._DISTINCT_FROM
    np.testing.assert_array_equal(fast.values, plain.values)
    for field in ("not_a_number", "boolean", "written"):
        np.testing.assert_array_equal(getattr(fast, field), getattr(plain, field))


@pytest.mark.parametrize("seed", range(3))
def test_values_checked_per_distinct_text_give_the_same_first_error(seed, tmp_path):
    rng = random.Random(seed)
    dimensions = ["ca", "e_ref", "u_gen", "custom"]
    cells = [rng.choice(["0", "1", "1.0", "0.5", "6", "0.99999999999999999", "1.00000000000000001", "2"])
             for _ in range(2500)]
    frame = pd.DataFrame({"item_id": [f"i{k}" for k in range(2500)], "model": "A", "rater": "j",
                          "dimension": [rng.choice(dimensions) for _ in range(2500)], "value": cells})
    path = tmp_path / "r.csv"
    frame.to_csv(path, index=False)
    expected = None
    for position, (dimension, cell) in enumerate(zip(frame["dimension"], cells, strict=True)):
        low, high = io.DIMENSION_RANGES.get(dimension, (None, None))
        if low is None:
            continue
        from decimal import Decimal

        number = Decimal(cell)
        wrong = number not in (low, high) if dimension in io.BINARY_DIMENSIONS else not low <= number <= high
        if wrong:
            expected = position + 2
            break
    if expected is None:
        io.load_ratings(path)
        return
    with pytest.raises(DataError, match=rf"row {expected}\b"):
        io.load_ratings(path)


@pytest.mark.parametrize("seed", range(20))
def test_the_quoted_cell_scan_finds_what_the_regular_expression_finds(seed):
    rng = random.Random(seed)
    alphabet = [b"a", b"'", b",", b'"', b"\n", b"\r", b"x y"]
    for _ in range(200):
        data = b"".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        found = re.search(io._QUOTED_CELL, data)
        assert (io._quoted_cell_at(data) is None) == (found is None), data
        if found is not None:
            assert io._quoted_cell_at(data) == found.end() - 1


def test_text_columns_keep_their_values_without_python_objects():
    values = pd.Series(["a", None, " b ", "", "nan"], dtype="str")
    plain = values.astype(object).where(values.notna(), "").astype(str)
    pd.testing.assert_series_equal(io._string_column(values), plain)
    mixed = pd.Series(["a", None, 3, 2.5], dtype=object)
    assert io._string_column(mixed).tolist() == ["a", "", "3", "2.5"]


@pytest.mark.parametrize("seed", range(5))
def test_llm_judges_per_output_by_whole_columns_equal_the_row_by_row_sets(seed):
    from empathy_app import compute

    rng = random.Random(seed)
    n = 400
    frame = pd.DataFrame({"item_id": [f"i{rng.randint(0, 30)}" for _ in range(n)],
                          "model": [rng.choice(["A", "B", "ü"]) for _ in range(n)],
                          "rater": [rng.choice(["j1", "J0", "gpt-5", "é", "j10"]) for _ in range(n)]}, dtype="str")
    expected: dict[tuple[str, str], set[str]] = {}
    for item, model, rater in frame.itertuples(index=False):
        expected.setdefault((item, model), set()).add(rater)
    found = compute._judges_per_output(frame["item_id"], frame["model"], frame["rater"])
    assert found == {pair: tuple(sorted(names)) for pair, names in expected.items()}
    assert compute._judges_per_output(frame["item_id"][:0], frame["model"][:0], frame["rater"][:0]) == {}


@pytest.mark.parametrize("seed", range(5))
def test_the_row_index_finds_the_rows_the_masks_find(seed):
    from empathy_app import compute

    rng = random.Random(seed)
    pairs = list(dict.fromkeys((f"i{rng.randint(0, 40)}", rng.choice(["A", "B", "C", "é"])) for _ in range(80)))
    outputs = pd.DataFrame({"item_id": [i for i, _ in pairs], "model": [m for _, m in pairs]}, dtype="str")
    rows = [rng.choice(pairs) if rng.random() < 0.9 else ("ghost", "A") for _ in range(600)]
    ratings = pd.DataFrame({"item_id": [i for i, _ in rows], "model": [m for _, m in rows],
                            "value": [rng.random() for _ in rows]}).astype({"item_id": "str", "model": "str"})
    index = compute.RowIndex(outputs, ratings)
    for item, model in [*pairs, ("ghost", "A"), ("i0", "Z")]:
        # a rating of no output (never in a validated data set) is found for none
        mask = (ratings["item_id"] == item) & (ratings["model"] == model) & ((item, model) in pairs)
        pd.testing.assert_frame_equal(index.ratings_of(ratings, item, model), ratings[mask])
        expected = outputs[(outputs["item_id"] == item) & (outputs["model"] == model)]
        pd.testing.assert_frame_equal(index.output(outputs, item, model), expected)
    empty = compute.RowIndex(outputs, ratings.iloc[:0])
    assert empty.ratings_of(ratings.iloc[:0], *pairs[0]).empty


def test_the_row_index_stays_linear_with_a_model_name_per_output():
    """An (item, model) look-up table sized by the outputs, not by items x models (one model name per output would
    make that product quadratic); every output is still found at its row, an absent pair at none."""
    from empathy_app import compute

    n = 3_000
    outputs = pd.DataFrame({"item_id": [f"i{k}" for k in range(n)], "model": [f"m{k}" for k in range(n)]},
                           dtype="str")
    index = compute.RowIndex(outputs, outputs.iloc[:0].assign(value=[]))
    assert sum(array.size for array in vars(index).values() if isinstance(array, np.ndarray)) <= 4 * n + 8
    assert [index.position(f"i{k}", f"m{k}") for k in range(0, n, 7)] == list(range(0, n, 7))
    assert index.position("i1", "m2") is None and index.position("i1", "nobody") is None


@pytest.mark.usefixtures("_store", "_cache")
def test_a_new_session_on_the_same_files_does_not_validate_them_again(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from empathy_app import loading

    calls = {"validate_outputs": 0, "validate_ratings": 0}

    _count_io_calls(monkeypatch, calls)
    outputs, ratings = _files(tmp_path / "data")
    source = {"kind": "path", "outputs": str(outputs), "ratings": [str(p) for p in ratings]}
    app = str(Path(__file__).resolve().parent.parent / "app.py")
    shown = []
    for _session in range(2):
        loading._datasets_held.clear()  # a new process: only the disk cache is left
        at = AppTest.from_file(app, default_timeout=240)
        at.session_state["source"] = source
        at.run()
        at.switch_page("app_pages/3_Inspect.py").run()
        assert not at.exception, [e.value for e in at.exception]
        shown.append([frame.value for frame in at.dataframe])
    assert calls == {"validate_outputs": 1, "validate_ratings": 2}
    assert len(shown[0]) == len(shown[1]) >= 1
    for first, second in zip(*shown, strict=True):
        pd.testing.assert_frame_equal(first, second)
    # an edited file is read and validated again on the next open
    ratings[0].write_text(RATINGS.replace("i2,B,j2,u_gen,3", "i2,B,j2,u_gen,4"), encoding="utf-8")
    loading._datasets_held.clear()
    at = AppTest.from_file(app, default_timeout=240)
    at.session_state["source"] = source
    at.run()
    assert not at.exception
    assert calls == {"validate_outputs": 2, "validate_ratings": 4}


@pytest.mark.parametrize("seed", range(4))
def test_output_facts_answered_per_output_equal_the_whole_table(seed):
    from empathy_app import compute

    rng = random.Random(seed)
    pairs = list(dict.fromkeys((f"i{rng.randint(0, 25)}", rng.choice(["A", "B", "C"])) for _ in range(60)))
    outputs = pd.DataFrame({"item_id": [i for i, _ in pairs], "model": [m for _, m in pairs]}, dtype="str")
    rows = [rng.choice(pairs) for _ in range(500)]
    ratings = pd.DataFrame({"item_id": [i for i, _ in rows], "model": [m for _, m in rows],
                            "rater": [rng.choice(["j1", "j2", "gpt", "expert"]) for _ in rows],
                            "dimension": [rng.choice(["ca", "e_ref", "u_gen"]) for _ in rows],
                            "rater_kind": [rng.choice(["llm", "llm", "human", ""]) for _ in rows]}, dtype="str")
    # the straightforward computation: one pass over every rating
    llm: dict[tuple[str, str], set[str]] = {}
    for item, model, rater, kind in zip(ratings["item_id"], ratings["model"], ratings["rater"],
                                        ratings["rater_kind"], strict=True):
        if kind == "llm":
            llm.setdefault((item, model), set()).add(rater)
    expected = {pair: tuple(sorted(names)) for pair, names in llm.items()}
    ca = {(i, m) for i, m, d in zip(ratings["item_id"], ratings["model"], ratings["dimension"], strict=True)
          if d == "ca"}
    facts = compute._output_facts(f"facts-{seed}", ratings, compute.RowIndex(outputs, ratings))
    for pair in [*pairs, ("nope", "A")]:
        assert facts.llm_judges.get(pair, ()) == expected.get(pair, ())
        assert (pair in facts.ca_rated) == (pair in ca)
    assert dict(facts.llm_judges) == expected
    assert facts.llm_raters == {rater for names in expected.values() for rater in names}


def test_numbers_of_a_long_column_with_no_cell_or_one_distinct_cell():
    for cells in ([None] * 1500, ["0.5"] * 1500, [""] * 1500):
        raw = pd.Series(cells, dtype="str")
        fast, plain = io.parse_numbers(raw), io._parse_cells(raw)
        np.testing.assert_array_equal(fast.values, plain.values)
        for field in ("not_a_number", "boolean", "written"):
            np.testing.assert_array_equal(getattr(fast, field), getattr(plain, field))
            assert getattr(fast, field).dtype == bool
