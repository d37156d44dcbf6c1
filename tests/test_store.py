"""Tests of the override store (empathy.labels), on both backends: SQLite and PostgreSQL (conftest.py)."""

from __future__ import annotations

import json
import math
import multiprocessing
import sqlite3
import threading

import numpy as np
import pandas as pd
import pytest

from empathy.io import DataError
from empathy.labels.backends import open_store
from empathy.labels.ledger import apply_overrides, human_ratings
from empathy.labels.locations import default_store_path
from empathy.labels.records import Change, dataset_id
from empathy.labels.rules import effective_overrides
from empathy.labels.sqlite import OverrideStore
from empathy.labels.transfer import escape_cell, export_csv, export_jsonl, import_ledger, unescape_cell

DS = "ds0"


@pytest.fixture()
def store(store_location):
    return open_store(store_location)


def _effective(store: OverrideStore, name: str) -> pd.DataFrame:
    """The latest decision per rating of a data set, as stored (these decisions carry no text hash)."""
    return effective_overrides(store.decisions(name)).effective


def _ratings() -> pd.DataFrame:
    return pd.DataFrame({
        "item_id": ["i1", "i1", "i2", "i2"],
        "model": ["m", "m", "m", "m"],
        "rater": ["j1", "j2", "j1", "j2"],
        "dimension": ["ca", "ca", "ca", "ca"],
        "value": [1.0, 0.0, np.nan, 1.0],
        "rater_kind": ["llm"] * 4,
        "reason": ["", "", "timeout", ""],
        "signature": ["s"] * 4,
    })


def test_wal_mode_and_schema(tmp_path):
    store = OverrideStore(tmp_path / "o.sqlite")
    connection = sqlite3.connect(store.path)
    assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = {r[0] for r in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"overrides", "audit"} <= tables


def test_the_sqlite_class_refuses_a_server_url_and_names_open_store(tmp_path, monkeypatch):
    # OverrideStore(url) returned the PostgreSQL backend through a lazy import (a cycle); now open_store does,
    # and the SQLite class says so instead of creating a file named after the URL
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="open_store") as info:
        OverrideStore("postgresql://ann:s3cret@db.example/team")
    assert "s3cret" not in str(info.value) and not any(tmp_path.iterdir())


def test_set_and_read_back(store):
    batch = store.set_override(DS, "i1", "m", "j1", "ca", 0, annotator="ann", reason="asks a question")
    assert batch == 1
    frame = _effective(store, DS)
    assert frame[["item_id", "model", "rater", "dimension", "value"]].to_dict(orient="records") == [
        {"item_id": "i1", "model": "m", "rater": "j1", "dimension": "ca", "value": 0.0}]
    assert frame["annotator"].tolist() == ["ann"]
    assert _effective(store, "other").empty
    audit = store.audit(DS)
    assert audit[["action", "old_value", "new_value", "annotator", "reason"]].iloc[0].tolist()[:1] == ["set"]
    assert math.isnan(audit["old_value"].iat[0]) and audit["new_value"].iat[0] == 0.0
    assert audit["at"].iat[0].endswith("+00:00")  # UTC
    store.set_override(DS, "i1", "m", "j1", "ca", 1, annotator="bob")
    audit = store.audit(DS)
    assert audit["old_value"].tolist()[1] == 0.0 and audit["new_value"].tolist()[1] == 1.0
    assert _effective(store, DS)["value"].tolist() == [1.0]
    assert store.count(DS) == 1


def test_durable_across_reopen(store_location):
    path = store_location
    open_store(path).set_override(DS, "i1", "m", "j1", "e_ref", 0.25, annotator="ann")
    reopened = open_store(path)
    assert _effective(reopened, DS)["value"].tolist() == [0.25]
    assert len(reopened.audit(DS)) == 1


def _writer(path: str, worker: int, count: int) -> None:
    store = open_store(path)
    for index in range(count):
        store.set_override(DS, f"item{index}", "m", f"w{worker}", "ca", index % 2, annotator=f"w{worker}")


def test_two_processes_writing_at_once_lose_nothing(store_location):
    path = store_location
    open_store(path)
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_writer, args=(path, w, 40)) for w in range(2)]
    for process in workers:
        process.start()
    for process in workers:
        process.join(60)
        assert process.exitcode == 0
    store = open_store(path)
    assert len(_effective(store, DS)) == 80
    assert len(store.audit(DS)) == 80
    assert sorted(store.audit(DS)["batch"]) == list(range(1, 81))


def test_threads_sharing_one_store_lose_nothing(store):
    errors: list[BaseException] = []

    def run(worker: int) -> None:
        try:
            for index in range(25):
                store.set_override(DS, f"item{index}", "m", f"t{worker}", "u_gen", float(index),
                                   annotator="t")
        except BaseException as exc:  # noqa: BLE001 - collected and re-raised by the test
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(w,)) for w in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(_effective(store, DS)) == 75
    # same key written by every thread: the last write wins and every write is audited
    store.set_overrides(DS, [Change("k", "m", "j", "ca", 1)], annotator="a")
    assert len(store.audit(DS)) == 76


def test_undo_restores_previous_value_and_removes_new_override(store):
    store.set_override(DS, "i1", "m", "j1", "ca", 1, annotator="ann")
    store.set_override(DS, "i1", "m", "j1", "ca", 0, annotator="ann")
    store.set_override(DS, "i2", "m", "j1", "ca", 1, annotator="bob")
    undone = store.undo_last("ann")
    assert undone["new_value"].tolist() == [0.0]
    assert _effective(store, DS).set_index("item_id")["value"].to_dict() == {"i1": 1.0, "i2": 1.0}
    store.undo_last("ann")
    assert _effective(store, DS)["item_id"].tolist() == ["i2"]
    assert store.undo_last("ann").empty
    store.undo_last()  # bob's
    assert _effective(store, DS).empty
    audit = store.audit(DS)
    assert audit["action"].tolist() == ["set", "set", "set", "undo", "undo", "undo"]
    assert audit["undone_by"].notna().sum() == 3


def test_undo_of_a_batch_is_atomic(store):
    store.set_overrides(DS, [Change("i1", "m", j, "ca", 0) for j in ("j1", "j2", "j3")], annotator="ann")
    assert store.count(DS) == 3
    assert len(store.undo_last(dataset_id=DS)) == 3
    assert store.count(DS) == 0


def test_undo_keeps_a_later_change_by_someone_else(store):
    store.set_override(DS, "i1", "m", "j1", "ca", 1, annotator="ann")
    store.set_override(DS, "i1", "m", "j1", "ca", 0, annotator="bob")
    store.undo_last("ann")
    assert _effective(store, DS)["value"].tolist() == [0.0]


@pytest.mark.parametrize(("dimension", "value", "error"), [
    ("ca", 0.5, ValueError),
    ("ca", 2, ValueError),
    ("e_ref", 1.5, ValueError),
    ("e_gen", -0.1, ValueError),
    ("u_gen", -1, ValueError),
    ("u_ref", math.inf, ValueError),
    ("custom", math.nan, ValueError),
    ("ca", "1", TypeError),
    ("ca", True, TypeError),
])
def test_invalid_values_rejected_and_nothing_written(store, dimension, value, error):
    with pytest.raises(error, match=dimension):
        store.set_override(DS, "i1", "m", "j1", dimension, value, annotator="ann")
    assert _effective(store, DS).empty and store.audit(DS).empty


@pytest.mark.parametrize(("dimension", "value"), [("ca", 0), ("ca", 1), ("u_gen", 17), ("custom", -3.5)])
def test_valid_values_accepted(store, dimension, value):
    store.set_override(DS, "i1", "m", "j1", dimension, value, annotator="ann")
    assert _effective(store, DS)["value"].tolist() == [float(value)]


@pytest.mark.parametrize(("field", "kwargs"), [
    ("annotator", {"annotator": " "}),
    ("item_id", {"item_id": ""}),
])
def test_empty_names_rejected(store, field, kwargs):
    arguments = {"dataset_id": DS, "item_id": "i1", "model": "m", "rater": "j1", "dimension": "ca",
                 "value": 1, "annotator": "ann"}
    arguments.update(kwargs)
    with pytest.raises(ValueError, match=field):
        store.set_override(**arguments)


def test_a_failing_batch_writes_nothing(store):
    with pytest.raises(ValueError):
        store.set_overrides(DS, [Change("i1", "m", "j1", "ca", 1), Change("i2", "m", "j1", "ca", 3)],
                            annotator="ann")
    assert store.count(DS) == 0


@pytest.mark.parametrize(("raw", "escaped"), [
    ("=HYPERLINK(\"x\")", "'=HYPERLINK(\"x\")"),
    ("+1", "'+1"),
    ("-2", "'-2"),
    ("@SUM(A1)", "'@SUM(A1)"),
    ("\tx", "'\tx"),
    ("\rx", "'\rx"),
    ("'quoted", "''quoted"),
    ("plain", "plain"),
    ("", ""),
])
def test_escape_cell_round_trip(raw, escaped):
    assert escape_cell(raw) == escaped
    assert unescape_cell(escaped) == raw


EVIL = ["=cmd|' /C calc'!A0", "+SUM(1)", "-1+2", "@x", "\tTAB", "'=already",
        "ok, with \"quotes\"\nand newline"]


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_export_import_round_trip(tmp_path, store, suffix):
    for index, text in enumerate(EVIL):
        store.set_override(DS, text, "m", "j1", "ca", index % 2, annotator=f"ann{index}", reason=text)
    store.set_override(DS, "i", "m", "j1", "custom", -0.5, annotator="=evil")
    path = tmp_path / f"ledger{suffix}"
    exporter = export_csv if suffix == ".csv" else export_jsonl
    assert exporter(store, path, DS) == len(EVIL) + 1
    if suffix == ".csv":
        content = path.read_text(encoding="utf-8")
        for line in content.splitlines()[1:]:
            for cell in line.split(","):
                assert not cell.startswith(("=", "+", "@")), cell
        assert "'=cmd" in content and "'=evil" in content and ",-0.5," in content
    else:
        first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
        assert set(first) == {"dataset_id", "item_id", "model", "rater", "dimension", "value", "annotator",
                              "role", "updated_at", "reason", "text_hash", "judge_value", "judge_signature",
                              "audit_design", "audit_position"}
    other = OverrideStore(tmp_path / "other.sqlite")
    # decided without a text hash (stale in the source too): refused unless asked for, then kept as they were
    with pytest.raises(DataError, match=f"row {2 if suffix == '.csv' else 1}, column 'text_hash': no text hash"):
        import_ledger(other, path)
    assert other.decisions().empty
    assert import_ledger(other, path, allow_stale=True) == len(EVIL) + 1
    before = _effective(store, DS).drop(columns=["updated_at"])
    after = _effective(other, DS).drop(columns=["updated_at"])
    pd.testing.assert_frame_equal(before, after)
    assert set(other.audit(DS)["action"]) == {"import"}
    # re-targeted import into another data set, undone as one batch
    assert import_ledger(other, path, dataset_id="ds1", annotator="me", allow_stale=True) == len(EVIL) + 1
    assert set(_effective(other, "ds1")["annotator"]) == {"me"}
    other.undo_last(dataset_id="ds1")
    assert other.count("ds1") == 0 and other.count(DS) == len(EVIL) + 1


@pytest.mark.parametrize(("content", "suffix", "message"), [
    ("dataset_id,item_id,model,rater,dimension,value,annotator\nd,i,m,j,ca,0.5,a\n", ".csv",
     r"row 2, column 'value'"),
    ("dataset_id,item_id,model,rater,value\nd,i,m,j,1\n", ".csv", r"column 'dimension'"),
    ("dataset_id,item_id,model,rater,dimension,value,annotator\nd,i,m,j,ca,x,a\n", ".csv", "not a number"),
    ("dataset_id,item_id,model,rater,dimension,value,annotator\nd,,m,j,ca,1,a\n", ".csv",
     r"row 2, column 'item_id'"),
    ('{"dataset_id":"d","item_id":"i","model":"m","rater":"j","dimension":"ca","value":1,"annotator":"a"}\n'
     "not json\n", ".jsonl", r"row 2.*invalid JSON"),
    ('{"dataset_id":"d","item_id":"i","model":"m","rater":"j","dimension":"ca","value":1}\n', ".jsonl",
     r"column 'annotator'"),
    ("x", ".txt", "unsupported"),
])
def test_import_errors_name_file_row_column(tmp_path, store, content, suffix, message):
    path = tmp_path / f"bad{suffix}"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DataError, match=message) as info:
        import_ledger(store, path)
    assert str(path) in str(info.value)
    assert store.audit().empty


def test_dataset_id_is_stable_and_order_independent():
    outputs = pd.DataFrame({"item_id": ["a", "b", "c"], "model": ["m1", "m1", "m2"], "generation": ["x"] * 3})
    first = dataset_id(outputs)
    assert len(first) == 16 and int(first, 16) >= 0
    assert dataset_id(outputs.iloc[::-1]) == first
    assert dataset_id(outputs.assign(generation="changed")) == first
    assert dataset_id(outputs.iloc[:2]) != first
    # keys are length-prefixed, so shifting characters between item and model changes the id
    assert dataset_id(pd.DataFrame({"item_id": ["ab"], "model": ["c"]})) != dataset_id(
        pd.DataFrame({"item_id": ["a"], "model": ["bc"]}))
    with pytest.raises(ValueError, match="model"):
        dataset_id(pd.DataFrame({"item_id": ["a"]}))


def test_default_store_path(tmp_path, monkeypatch):
    monkeypatch.delenv("EMPATHY_STORE", raising=False)
    assert default_store_path(tmp_path) == tmp_path / ".empathy-overrides.sqlite"
    monkeypatch.setenv("EMPATHY_STORE", str(tmp_path / "x.sqlite"))
    assert default_store_path(tmp_path) == tmp_path / "x.sqlite"


def test_apply_overrides_replaces_and_flags():
    ratings = _ratings()
    overrides = pd.DataFrame({"item_id": ["i1", "i2", "i9"], "model": ["m", "m", "m"],
                              "rater": ["j2", "j1", "j1"], "dimension": ["ca", "ca", "ca"],
                              "value": [1.0, 0.0, 1.0]})
    out = apply_overrides(ratings, overrides)
    assert out["value"].tolist()[:4] == [1.0, 1.0, 0.0, 1.0]
    assert out["overridden"].tolist() == [False, True, True, False, True]
    assert out.iloc[4][["item_id", "rater", "value"]].tolist() == ["i9", "j1", 1.0]
    assert ratings["value"].tolist()[1] == 0.0  # input untouched
    untouched = apply_overrides(ratings, None)
    assert not untouched["overridden"].any() and len(untouched) == 4
    assert apply_overrides(ratings, overrides.iloc[:0])["overridden"].sum() == 0


def test_apply_overrides_requires_columns():
    with pytest.raises(ValueError, match="rater"):
        apply_overrides(_ratings().drop(columns=["rater"]), None)


def test_human_ratings_latest_wins():
    overrides = pd.DataFrame({"item_id": ["i1", "i1", "i2"], "model": ["m"] * 3, "rater": ["j1", "j2", "j1"],
                              "dimension": ["ca"] * 3, "value": [1.0, 0.0, 1.0],
                              "updated_at": ["2026-01-01T00:00:02", "2026-01-01T00:00:01",
                                             "2026-01-01T00:00:03"]})
    human = human_ratings(overrides)
    assert human[["item_id", "rater", "value", "rater_kind"]].values.tolist() == [
        ["i1", "human", 1.0, "human"], ["i2", "human", 1.0, "human"]]
    assert human_ratings(overrides.iloc[:0]).empty
