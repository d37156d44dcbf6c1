"""Tests of the ledger as research record: overrides bound to the text judged, damaged stores, several humans,
label rules, the one override-target rule and judge re-runs (empathy.labels)."""

from __future__ import annotations

import math
import os
import shutil
import sqlite3
import threading

import numpy as np
import pandas as pd
import pytest

from empathy.labels.backends import open_store
from empathy.labels.ledger import adjudication_list, annotator_ratings, classify_rerun, ledger_status, open_ledger
from empathy.labels.locations import StoreError
from empathy.labels.records import Change, dataset_id, dataset_name, output_hashes, text_hash
from empathy.labels.rules import (
    ALL_JUDGES,
    decision_effects,
    effective_overrides,
    label_rule_field,
    make_changes,
    override_targets,
)
from empathy.labels.schema import SCHEMA_VERSION
from empathy.labels.sqlite import OverrideStore
from empathy.review import human_agreement

NAME = "outputs.csv"


def _outputs(rows: list[tuple[str, str, str]]) -> pd.DataFrame:
    return pd.DataFrame({"item_id": [r[0] for r in rows], "model": [r[1] for r in rows], "task": "",
                         "reference": [f"reference of {r[0]}" for r in rows], "generation": [r[2] for r in rows]})


def _ratings(outputs: pd.DataFrame, rater: str = "judge", value: float = 1.0) -> pd.DataFrame:
    return pd.DataFrame({"item_id": outputs["item_id"], "model": outputs["model"], "rater": rater,
                         "dimension": "ca", "value": value, "rater_kind": "llm", "reason": "",
                         "signature": f"{rater}-prompt-v1"})


@pytest.fixture()
def store(store_location):
    """A fresh store on each backend (SQLite file, PostgreSQL schema; see conftest.py)."""
    return open_store(store_location)


# ------------------------------------------------------------------------------------ text binding

def test_text_hash_is_bound_to_both_texts():
    assert text_hash("ab", "c") != text_hash("a", "bc")  # length-prefixed
    assert text_hash("a", "b") == text_hash("a", "b") != text_hash("a", "b ")
    assert len(text_hash("a", "b")) == 16


def test_add_drop_and_change_keep_orphan_and_stale_exactly_those(store):
    before = _outputs([("i1", "A", "gen 1"), ("i2", "A", "gen 2"), ("i3", "A", "gen 3")])
    ratings = _ratings(before)
    for item in ("i1", "i2", "i3"):
        store.set_overrides(NAME, make_changes(before, ratings, item, "A", ["judge"], "ca", 0.0), annotator="ann")
    ledger = open_ledger(store, NAME, before)
    assert ledger.counts == {"applied": 3, "stale": 0, "orphaned": 0, "unresolved": 0}
    # add i4, drop i2, regenerate i3 under the same id
    after = _outputs([("i1", "A", "gen 1"), ("i3", "A", "a new generation"), ("i4", "A", "gen 4")])
    assert dataset_id(after) != dataset_id(before)  # the version 1 key would have lost everything
    ledger = open_ledger(store, NAME, after)
    assert ledger.applied["item_id"].tolist() == ["i1"]
    assert ledger.status.stale["item_id"].tolist() == ["i3"]
    assert ledger.status.orphaned["item_id"].tolist() == ["i2"]
    assert ledger.counts == {"applied": 1, "stale": 1, "orphaned": 1, "unresolved": 0}
    # counted in decisions, the judge labels named (issue 26 item 6: "overrides: 1 applied (labels: ..." before)
    assert ledger.summary().startswith("overrides: 1 decision applied to 1 judge label (labels: latest), 1 stale")
    assert len(store.decisions(NAME)) == 3  # nothing deleted
    # confirming the stale decision on the new text applies it again
    assert store.confirm(NAME, ledger.status.stale, output_hashes(after), annotator="ann") == 1
    ledger = open_ledger(store, NAME, after)
    assert ledger.applied["item_id"].tolist() == ["i1", "i3"] and ledger.counts["stale"] == 0
    assert store.audit(NAME)["action"].tolist() == ["set", "set", "set", "confirm"]
    # restoring i2 makes its decision apply again
    again = pd.concat([after, before[before["item_id"] == "i2"]], ignore_index=True)
    assert open_ledger(store, NAME, again).applied["item_id"].tolist() == ["i1", "i2", "i3"]


def test_decision_without_hash_is_stale_until_confirmed():
    outputs = _outputs([("i1", "A", "g")])
    decisions = pd.DataFrame({"item_id": ["i1"], "model": ["A"], "rater": ["j"], "dimension": ["ca"],
                              "value": [1.0], "text_hash": [""]})
    status = ledger_status(decisions, outputs)
    assert status.counts == {"fresh": 0, "stale": 1, "orphaned": 0}


@pytest.mark.parametrize(("outputs", "store_file", "explicit", "expected"), [
    ("data/outputs.csv", "data/.empathy-overrides.sqlite", None, "outputs.csv"),
    ("data/sub/outputs.jsonl", "data/store.sqlite", None, "sub/outputs.jsonl"),
    (None, "data/x.sqlite", "kumar2025", "kumar2025"),
])
def test_dataset_name(tmp_path, outputs, store_file, explicit, expected):
    path = None if outputs is None else tmp_path / outputs
    assert dataset_name(path, store_path=tmp_path / store_file, explicit=explicit) == expected


def test_dataset_name_outside_the_store_folder_is_absolute(tmp_path):
    name = dataset_name(tmp_path / "a" / "outputs.csv", store_path=tmp_path / "b" / "s.sqlite")
    assert name == (tmp_path / "a" / "outputs.csv").resolve().as_posix()
    with pytest.raises(ValueError, match="outputs file or an explicit name"):
        dataset_name()


# ------------------------------------------------------------------------------------ migration

_V1_SCHEMA = """
CREATE TABLE overrides (dataset_id TEXT NOT NULL, item_id TEXT NOT NULL, model TEXT NOT NULL,
    rater TEXT NOT NULL, dimension TEXT NOT NULL, value REAL NOT NULL, annotator TEXT NOT NULL,
    updated_at TEXT NOT NULL, reason TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (dataset_id, item_id, model, rater, dimension));
CREATE TABLE audit (id INTEGER PRIMARY KEY AUTOINCREMENT, batch INTEGER NOT NULL, dataset_id TEXT NOT NULL,
    item_id TEXT NOT NULL, model TEXT NOT NULL, rater TEXT NOT NULL, dimension TEXT NOT NULL,
    annotator TEXT NOT NULL, at TEXT NOT NULL, old_value REAL, new_value REAL, reason TEXT NOT NULL DEFAULT '',
    action TEXT NOT NULL CHECK (action IN ('set', 'undo', 'import')), undone_by INTEGER);
CREATE INDEX audit_dataset ON audit (dataset_id, id);
"""


def test_version_1_store_is_migrated_and_adopted_without_loss(tmp_path):
    outputs = _outputs([("i1", "A", "g1"), ("i2", "A", "g2")])
    legacy = dataset_id(outputs)
    path = tmp_path / "v1.sqlite"
    connection = sqlite3.connect(path)
    connection.executescript(_V1_SCHEMA)
    connection.executemany(
        "INSERT INTO overrides VALUES (?,?,?,?,?,?,?,?,?)",
        [(legacy, "i1", "A", "judge", "ca", 0.0, "ann", "2026-01-01T00:00:01+00:00", "why"),
         ("otherhash", "x", "B", "judge", "ca", 1.0, "bob", "2026-01-01T00:00:02+00:00", "")])
    connection.executemany(
        "INSERT INTO audit (batch, dataset_id, item_id, model, rater, dimension, annotator, at, old_value,"
        " new_value, reason, action) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
        [(1, legacy, "i1", "A", "judge", "ca", "ann", "2026-01-01T00:00:00+00:00", None, 1.0, "", "set"),
         (2, legacy, "i1", "A", "judge", "ca", "ann", "2026-01-01T00:00:01+00:00", 1.0, 0.0, "why", "set"),
         (3, "otherhash", "x", "B", "judge", "ca", "bob", "2026-01-01T00:00:02+00:00", None, 1.0, "", "set")])
    connection.commit()
    connection.close()
    store = OverrideStore(path)
    assert (tmp_path / "v1.sqlite.v1-backup").exists()
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    everything = store.decisions()
    assert sorted(everything["dataset_id"]) == sorted([legacy, "otherhash"])
    assert len(store.audit()) == 3 and store.audit()["prior"].tolist() == [0, 1, 0]
    ledger = open_ledger(store, NAME, outputs)
    assert ledger.adopted == 1
    assert ledger.applied[["item_id", "value", "annotator", "reason"]].values.tolist() == [["i1", 0.0, "ann", "why"]]
    assert ledger.applied["text_hash"].tolist() == [output_hashes(outputs)[("i1", "A")]]
    assert store.audit(NAME)["action"].tolist() == ["set", "set", "migrate"]  # history follows the rows
    assert store.decisions("otherhash")["item_id"].tolist() == ["x"]  # another data set's rows stay
    # undo still works on migrated history
    assert store.undo_last("ann", dataset_id=NAME)["new_value"].tolist() == [0.0]
    assert store.decisions(NAME)["value"].tolist() == [1.0]
    # opening again neither migrates nor adopts twice
    assert open_ledger(OverrideStore(path), NAME, outputs).adopted == 0


# ------------------------------------------------------------------------------------ damaged stores

def _good_store_bytes(tmp_path) -> bytes:
    path = tmp_path / "good.sqlite"
    store = OverrideStore(path)
    for index in range(200):
        store.set_override("ds", f"i{index}", "m", "j", "ca", index % 2, annotator="a", reason="x" * 100)
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    return path.read_bytes()


@pytest.mark.parametrize(("case", "message"), [
    ("empty", r"is empty \(0 bytes\)"),
    ("truncated", "is truncated"),
    ("header_only", "is truncated"),
    ("random", "is not an SQLite override store"),
    ("damaged_page", "is damaged"),
])
def test_damaged_store_is_an_error_and_nothing_is_overwritten(tmp_path, case, message):
    good = _good_store_bytes(tmp_path)
    content = {"empty": b"", "truncated": good[: len(good) // 2], "header_only": good[:60],
               "random": np.random.default_rng(0).bytes(8192),
               "damaged_page": good[:4096 * 2] + np.random.default_rng(1).bytes(4096) + good[4096 * 3:]}[case]
    path = tmp_path / f"{case}.sqlite"
    path.write_bytes(content)
    with pytest.raises(StoreError, match=message) as caught:
        OverrideStore(path)
    assert "\n" not in str(caught.value) and str(path) in str(caught.value)
    assert path.read_bytes() == content
    assert not (tmp_path / f"{case}.sqlite-wal").exists()


def test_a_checkpoint_in_progress_is_not_taken_for_truncation(tmp_path):
    """Another process's WAL checkpoint writes page 1 (the new page count) before the pages that extend the file;
    a store opened (or written) in between must wait for the file to catch up, not call it truncated (4 writers
    in bench/bench_store_backends.py hit this)."""
    good = _good_store_bytes(tmp_path)
    path = tmp_path / "busy.sqlite"
    path.write_bytes(good[:-4096])  # the header already counts the last page; the checkpoint has yet to write it

    def finish_checkpoint() -> None:
        with path.open("ab") as handle:
            handle.write(good[-4096:])

    timer = threading.Timer(0.12, finish_checkpoint)
    timer.start()
    store = OverrideStore(path)
    timer.join()
    assert store.count("ds") == 200 and path.read_bytes() == good


def test_read_only_store_is_an_error(tmp_path):
    good = tmp_path / "ro.sqlite"
    good.write_bytes(_good_store_bytes(tmp_path))
    os.chmod(good, 0o444)
    try:
        with pytest.raises(StoreError, match="is read-only"):
            OverrideStore(good)
    finally:
        os.chmod(good, 0o644)


def test_store_made_read_only_after_opening_refuses_writes(tmp_path):
    path = tmp_path / "later.sqlite"
    store = OverrideStore(path)
    store.set_override("ds", "i", "m", "j", "ca", 1, annotator="a")
    os.chmod(path, 0o444)
    try:
        with pytest.raises(StoreError, match="is read-only"):
            store.set_override("ds", "i", "m", "j", "ca", 0, annotator="a")
    finally:
        os.chmod(path, 0o644)
    assert store.decisions("ds")["value"].tolist() == [1.0]


def test_store_damaged_after_opening_raises_store_error_on_read(tmp_path):
    path = tmp_path / "later.sqlite"
    store = OverrideStore(path)
    store.set_override("ds", "i", "m", "j", "ca", 1, annotator="a")
    shutil.rmtree(tmp_path / "later.sqlite-wal", ignore_errors=True)
    path.write_bytes(b"")
    with pytest.raises(StoreError, match="is empty"):
        store.set_override("ds", "i", "m", "j", "ca", 0, annotator="a")


def test_newer_schema_is_refused(tmp_path):
    path = tmp_path / "new.sqlite"
    OverrideStore(path)
    connection = sqlite3.connect(path)
    connection.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    connection.close()
    with pytest.raises(StoreError, match="newer version"):
        OverrideStore(path)


# ------------------------------------------------------------------------------------ audit old value

def test_first_override_audit_row_has_the_judge_value(store):
    outputs = _outputs([("i1", "A", "g")])
    ratings = _ratings(outputs, value=1.0)
    changes = make_changes(outputs, ratings, "i1", "A", ["judge"], "ca", 0.0, "asks")
    assert changes[0].judge_value == 1.0 and changes[0].judge_signature == "judge-prompt-v1"
    store.set_overrides(NAME, changes, annotator="ann")
    store.set_overrides(NAME, make_changes(outputs, ratings, "i1", "A", ["judge"], "ca", 1.0), annotator="ann")
    audit = store.audit(NAME)
    assert audit[["old_value", "new_value"]].values.tolist() == [[1.0, 0.0], [0.0, 1.0]]
    decisions = store.decisions(NAME)
    assert decisions[["judge_value", "judge_signature"]].values.tolist() == [[1.0, "judge-prompt-v1"]]


def test_first_override_of_a_gap_has_no_old_value(store):
    outputs = _outputs([("i1", "A", "g")])
    ratings = _ratings(outputs).assign(value=np.nan)
    store.set_overrides(NAME, make_changes(outputs, ratings, "i1", "A", ["judge"], "ca", 1.0), annotator="ann")
    assert math.isnan(store.audit(NAME)["old_value"].iat[0])


# ------------------------------------------------------------------------------------ override targets

def _panel() -> pd.DataFrame:
    kinds = {"gpt": "llm", "lex": "lexicon", "exp": "expert", "crowd": "crowd", "auth": "author",
             "hum": "human", "unk": ""}
    rows = [("X", "M", r, k) for r, k in kinds.items()]
    rows += [("Y", "M", "exp", "expert"), ("Y", "M", "lex", "lexicon"), ("Z", "M", "exp", "expert")]
    return pd.DataFrame({"item_id": [r[0] for r in rows], "model": [r[1] for r in rows],
                         "rater": [r[2] for r in rows], "dimension": "ca", "value": 1.0,
                         "rater_kind": [r[3] for r in rows]})


@pytest.mark.parametrize(("item", "choice", "expected"), [
    ("X", ALL_JUDGES, ["gpt", "lex"]),
    ("Y", ALL_JUDGES, ["lex"]),
    ("Z", ALL_JUDGES, []),
    ("X", "exp", ["exp"]),
    ("X", "auth", ["auth"]),
    ("Z", "gpt", ["gpt"]),  # a rater chosen by name fills a gap
])
def test_override_targets(item, choice, expected):
    assert override_targets(_panel(), item, "M", "ca", choice) == expected


def test_override_targets_other_dimension_and_errors():
    assert override_targets(_panel(), "X", "M", "e_gen") == []
    with pytest.raises(ValueError, match="choose"):
        override_targets(_panel(), "X", "M", "ca", "")
    with pytest.raises(ValueError, match="no rater"):
        make_changes(_outputs([("X", "M", "g")]), _panel(), "X", "M", [], "ca", 1.0)
    with pytest.raises(ValueError, match="not in the data set"):
        make_changes(_outputs([("X", "M", "g")]), _panel(), "nope", "M", ["gpt"], "ca", 1.0)


# ------------------------------------------------------------------------------------ several humans

def test_two_annotators_keep_their_own_decisions(store):
    store.set_override(NAME, "i1", "A", "judge", "ca", 1, annotator="ann")
    store.set_override(NAME, "i1", "A", "judge", "ca", 0, annotator="bob")
    decisions = store.decisions(NAME)
    assert decisions[["annotator", "value"]].values.tolist() == [["ann", 1.0], ["bob", 0.0]]
    assert effective_overrides(decisions).effective["value"].tolist() == [0.0]  # latest
    assert effective_overrides(decisions).effective["n_annotators"].tolist() == [2]
    assert store.count(NAME) == 1
    store.undo_last("bob")
    assert store.decisions(NAME)["annotator"].tolist() == ["ann"]


def _votes() -> pd.DataFrame:
    # (item, annotator, role, value) in time order
    rows = [("K1", "ann", "annotator", 1.0), ("K1", "bob", "annotator", 0.0),
            ("K2", "ann", "annotator", 1.0), ("K2", "bob", "annotator", 1.0), ("K2", "cy", "annotator", 0.0),
            ("K3", "ann", "annotator", 0.0),
            ("K4", "ann", "annotator", 1.0), ("K4", "bob", "annotator", 0.0), ("K4", "eve", "adjudicator", 0.0),
            ("K5", "ann", "annotator", 1.0), ("K5", "eve", "adjudicator", 0.0), ("K5", "bob", "annotator", 1.0)]
    return pd.DataFrame({"item_id": [r[0] for r in rows], "model": "A", "rater": "judge", "dimension": "ca",
                         "value": [r[3] for r in rows], "annotator": [r[1] for r in rows],
                         "role": [r[2] for r in rows],
                         "updated_at": [f"2026-01-01T00:00:{i:02d}" for i in range(len(rows))]})


@pytest.mark.parametrize(("rule", "expected", "unresolved"), [
    ("latest", {"K1": 0.0, "K2": 0.0, "K3": 0.0, "K4": 0.0, "K5": 1.0}, []),
    ("majority", {"K2": 1.0, "K3": 0.0, "K4": 0.0, "K5": 0.0}, ["K1"]),
    ("adjudicated", {"K3": 0.0, "K4": 0.0, "K5": 0.0}, ["K1", "K2"]),
])
def test_label_rules(rule, expected, unresolved):
    result = effective_overrides(_votes(), rule)
    assert dict(zip(result.effective["item_id"], result.effective["value"], strict=True)) == expected
    assert result.unresolved["item_id"].tolist() == unresolved
    if unresolved:
        assert result.unresolved["decisions"].iat[0] == "ann=1, bob=0"
    assert label_rule_field(rule) == ("labels", rule)


_OWN = {("K1", "A"): 1.0, ("K2", "A"): 0.0, ("K3", "A"): 1.0, ("K4", "A"): 1.0, ("K5", "A"): 1.0,
        ("K6", "A"): float("nan"), ("K7", "A"): 0.0}  # the judge's own labels (K6 missing; K6, K7 undecided)


@pytest.mark.parametrize(("rule", "annotator", "expected"), [
    # item: (label now, after annotator decides 0, after 1), worked by hand from _votes()
    ("majority", "dan", {"K1": (1.0, 0.0, 1.0), "K2": (1.0, 0.0, 1.0), "K3": (0.0, 0.0, 1.0),
                         "K4": (0.0, 0.0, 0.0), "K5": (0.0, 0.0, 0.0), "K6": (None, 0.0, 1.0),
                         "K7": (0.0, 0.0, 1.0)}),
    ("adjudicated", "dan", {"K1": (1.0, 1.0, 1.0), "K2": (0.0, 0.0, 0.0), "K3": (0.0, 0.0, 1.0),
                            "K4": (0.0, 0.0, 0.0), "K5": (0.0, 0.0, 0.0), "K6": (None, 0.0, 1.0)}),
    ("latest", "dan", {"K1": (0.0, 0.0, 1.0), "K2": (0.0, 0.0, 1.0), "K4": (0.0, 0.0, 1.0),
                       "K5": (1.0, 0.0, 1.0)}),
    # ann decides again: her new decision replaces her earlier one
    ("majority", "ann", {"K1": (1.0, 0.0, 1.0), "K2": (1.0, 0.0, 1.0), "K3": (0.0, 0.0, 1.0)}),
])
def test_decision_effects(rule, annotator, expected):
    outputs = [(item, "A") for item in expected]
    effects = decision_effects(_OWN, _votes(), outputs, rater="judge", dimension="ca", annotator=annotator,
                               levels=[0.0, 1.0], rule=rule)
    got = {item: (effects[(item, "A")].before, effects[(item, "A")].after[0.0], effects[(item, "A")].after[1.0])
           for item in expected}
    assert got == expected
    # the label after a decision is what the rule says once the decision is stored (the effect is exact)
    for item, (_, *afters) in expected.items():
        for level, after in zip((0.0, 1.0), afters, strict=True):
            votes = _votes()
            votes = votes[~((votes["item_id"] == item) & (votes["annotator"] == annotator))]
            stored = pd.concat([votes, pd.DataFrame([{"item_id": item, "model": "A", "rater": "judge",
                                                      "dimension": "ca", "value": level, "annotator": annotator,
                                                      "role": "annotator", "updated_at": "2026-01-02T00:00:00"}])])
            table = effective_overrides(stored, rule).effective
            row = table[table["item_id"] == item]
            assert (float(row["value"].iat[0]) if len(row) else _OWN[(item, "A")]) == after


@pytest.mark.parametrize("rule", ["latest", "majority", "adjudicated"])
def test_the_live_index_keeps_every_field_decision_effects_reads(rule):
    """The app's index of fresh decisions by output keeps a decision's rating key, value, annotator, role, time
    and commit order only (issue 25: the Relabel page's memory); the effects of its rows are those of whole rows."""
    from empathy_app.overrides import EFFECT_FIELDS, _by_output

    votes = _votes()
    whole = votes.assign(reason="why", text_hash="h", judge_value=1.0, judge_signature="sig", audit_design="",
                         audit_position=pd.array([pd.NA] * len(votes), dtype="Int64"), seq=range(len(votes)))
    # commit order against the clock: the index must keep seq, or the latest decision changes
    whole["updated_at"] = whole["updated_at"].iloc[::-1].to_numpy()
    index = _by_output(whole, "judge", "ca")
    rows = pd.DataFrame([index[pair][key] for pair in sorted(index) for key in sorted(index[pair])])
    assert tuple(rows.columns) == EFFECT_FIELDS and len(rows) == len(whole)
    outputs = sorted({*index, ("K6", "A"), ("K7", "A")})
    for annotator in ("dan", "ann", "eve"):
        kept = decision_effects(_OWN, rows, outputs, rater="judge", dimension="ca", annotator=annotator,
                                levels=[0.0, 1.0], rule=rule)
        assert kept == decision_effects(_OWN, whole, outputs, rater="judge", dimension="ca", annotator=annotator,
                                        levels=[0.0, 1.0], rule=rule)


def test_the_live_index_holds_each_repeated_text_once():
    """Rows read from Arrow-backed columns (as the store gives them) share one object per item, model, rater,
    dimension, annotator and role in the live index, also for rows patched in later (issue 25: a team's 10,000
    rows held those texts 10,000 times over); each row's time stays its own."""
    from empathy_app.overrides import _by_output, _patch_by_output

    text = pd.StringDtype("pyarrow")
    votes = _votes().astype({c: text for c in ("item_id", "model", "rater", "dimension", "annotator", "role",
                                                "updated_at")})
    index = _by_output(votes.iloc[:-1], "judge", "ca")
    _patch_by_output(index, "judge", "ca", votes.iloc[-1:], votes.iloc[-1:])
    rows = [row for pair in index.values() for row in pair.values()]
    assert len(rows) == len(votes)
    for field, distinct in (("item_id", 5), ("model", 1), ("rater", 1), ("dimension", 1), ("annotator", 4),
                            ("role", 2)):
        assert len({id(getattr(row, field)) for row in rows}) == distinct, field
    assert len({id(row.updated_at) for row in rows}) == len(votes)
    keys = [key for pair in index.values() for key in pair]
    assert len({id(key) for key in keys}) == len(set(keys)) == 4  # (annotator, role): one tuple each
    assert sorted(row.updated_at for row in rows) == sorted(votes["updated_at"])


def test_decision_effects_ignore_other_raters_and_check_the_rule():
    other = _votes().assign(rater="another")
    effects = decision_effects(_OWN, other, [("K1", "A")], rater="judge", dimension="ca", annotator="dan",
                               levels=[0.0, 1.0], rule="majority")
    assert effects[("K1", "A")].before == 1.0 and dict(effects[("K1", "A")].after) == {0.0: 0.0, 1.0: 1.0}
    with pytest.raises(ValueError, match="label rule"):
        decision_effects(_OWN, _votes(), [], rater="judge", dimension="ca", annotator="dan", levels=[0.0],
                         rule="loudest")


def test_unknown_label_rule():
    with pytest.raises(ValueError, match="label rule"):
        effective_overrides(_votes(), "loudest")


def _two_annotators() -> pd.DataFrame:
    # ann [1, 1, 0, 0], bob [1, 0, 0, 0] on i1..i4, both applied to two judges; i5 decided by ann alone
    rows = []
    for annotator, values in (("ann", [1, 1, 0, 0, 1]), ("bob", [1, 0, 0, 0])):
        for index, value in enumerate(values, start=1):
            for judge in ("j1", "j2"):
                rows.append((f"i{index}", judge, annotator, float(value)))
    return pd.DataFrame({"item_id": [r[0] for r in rows], "model": "A", "rater": [r[1] for r in rows],
                         "dimension": "ca", "value": [r[3] for r in rows], "annotator": [r[2] for r in rows],
                         "role": "annotator", "updated_at": [f"t{i:03d}" for i in range(len(rows))]})


def test_annotator_ratings_one_per_output_and_annotator():
    ratings = annotator_ratings(_two_annotators())
    assert len(ratings) == 9 and set(ratings["rater_kind"]) == {"human"}
    assert ratings[ratings["rater"] == "bob"]["value"].tolist() == [1.0, 0.0, 0.0, 0.0]


def test_human_agreement_hand_worked():
    # po = 3/4; pe = .5*.25 + .5*.75 = .5 -> kappa .5. Krippendorff nominal: o10 = o01 = 1, n = 8, n1 = 3,
    # n0 = 5: Do = 2/8, De = 2*3*5/(8*7) -> alpha = 1 - (1/4)/(15/28) = 8/15.
    result = human_agreement(_two_annotators())
    assert result.n_items == 4
    pair = result.pairs.iloc[0]
    assert (pair["rater_a"], pair["rater_b"], pair["n"]) == ("ann", "bob", 4)
    assert pair["percent_agreement"] == pytest.approx(0.75)
    assert pair["kappa"] == pytest.approx(0.5)
    assert result.alpha["alpha"].iat[0] == pytest.approx(8 / 15)
    assert human_agreement(_two_annotators()[lambda f: f["annotator"] == "ann"]).n_items == 0


def test_adjudication_list_and_its_audit_row(store):
    decisions = _two_annotators()
    for row in decisions.itertuples():
        store.set_override(NAME, row.item_id, "A", row.rater, "ca", row.value, annotator=row.annotator)
    table = adjudication_list(store.decisions(NAME))
    assert table[["item_id", "decisions", "n_annotators"]].values.tolist() == [["i2", "ann=1, bob=0", 2]]
    assert math.isnan(table["adjudicated"].iat[0])
    store.adjudicate(NAME, [Change("i2", "A", j, "ca", 0.0, "eve reads it as engaging") for j in ("j1", "j2")],
                     annotator="eve")
    table = adjudication_list(store.decisions(NAME))
    assert table["adjudicated"].tolist() == [0.0]
    audit = store.audit(NAME)
    last = audit.iloc[-2:][["action", "annotator", "role"]].values.tolist()
    assert last == [["adjudicate", "eve", "adjudicator"]] * 2
    assert "i2" not in effective_overrides(store.decisions(NAME), "adjudicated").unresolved["item_id"].tolist()


# ------------------------------------------------------------------------------------ judge re-run

def test_rerun_classification_by_hand():
    before = _outputs([(f"i{i}", "A", f"g{i}") for i in range(1, 6)])
    decisions = pd.DataFrame({
        "item_id": ["i1", "i2", "i3", "i4", "i5", "i1"], "model": "A",
        "rater": ["gpt", "gpt", "gpt", "gpt", "gpt", "other"], "dimension": "ca",
        "value": [1.0, 0.0, 1.0, 1.0, 1.0, 0.0], "annotator": "ann", "role": "annotator",
        "text_hash": [output_hashes(before)[(f"i{i}", "A")] for i in (1, 2, 3, 4, 5, 1)]})
    # i3's text changed, i4 is gone; the re-run (gpt-v2) says 1 for i1 and i2, nothing for i5
    now = _outputs([("i1", "A", "g1"), ("i2", "A", "g2"), ("i3", "A", "changed"), ("i5", "A", "g5")])
    new = pd.DataFrame({"item_id": ["i1", "i2", "i3"], "model": "A", "rater": "gpt-v2", "dimension": "ca",
                        "value": [1.0, 1.0, 1.0]})
    result = classify_rerun(decisions, new, now, rater_map={"gpt": "gpt-v2"})
    assert result.counts == {"confirmed": 1, "disputed": 2, "stale": 1, "orphaned": 1}
    assert result.confirmed["item_id"].tolist() == ["i1"]
    assert result.disputed["item_id"].tolist() == ["i2", "i5"]
    assert result.disputed["new_value"].iat[0] == 1.0 and math.isnan(result.disputed["new_value"].iat[1])
    assert result.stale["item_id"].tolist() == ["i3"] and result.orphaned["item_id"].tolist() == ["i4"]
    assert result.summary().startswith("re-run vs overrides: 1 confirmed")
    # a continuous dimension within tolerance counts as confirmed
    close = classify_rerun(decisions.assign(value=0.5, dimension="e_gen"),
                           new.assign(value=0.55, dimension="e_gen"), now, rater_map={"gpt": "gpt-v2"},
                           tolerance=0.1)
    assert close.counts["confirmed"] == 2
    with pytest.raises(ValueError, match="tolerance"):
        classify_rerun(decisions, new, now, tolerance=-1)


def test_cli_helpers_read_the_ledger_of_files(tmp_path):
    from empathy.labels.ledger import apply_ledger, ledger_for_files, rerun_against_ledger

    outputs = _outputs([("i1", "A", "g1"), ("i2", "A", "g2")])
    ratings = _ratings(outputs, value=1.0)
    store_path = tmp_path / "data" / ".empathy-overrides.sqlite"
    store = OverrideStore(store_path)
    store.set_overrides("outputs.csv", make_changes(outputs, ratings, "i1", "A", ["judge"], "ca", 0.0), annotator="a")
    ledger = ledger_for_files(store_path, tmp_path / "data" / "outputs.csv", outputs)
    assert ledger.counts["applied"] == 1
    assert apply_ledger(ratings, ledger)["value"].tolist() == [0.0, 1.0]
    rerun = rerun_against_ledger(ledger, _ratings(outputs, rater="judge", value=0.0), outputs)
    assert rerun.counts == {"confirmed": 1, "disputed": 0, "stale": 0, "orphaned": 0}
    (tmp_path / "broken.sqlite").write_bytes(b"")
    with pytest.raises(StoreError):
        ledger_for_files(tmp_path / "broken.sqlite", tmp_path / "outputs.csv", outputs)


def test_ledger_digest_names_which_overrides_apply(store, tmp_path):
    outputs = _outputs([("i1", "A", "gen 1"), ("i2", "A", "gen 2")])
    ratings = _ratings(outputs)
    empty = open_ledger(store, NAME, outputs)
    assert empty.digest == "e3b0c44298fc"  # SHA-256 of nothing
    assert empty.signature_fields() == {"labels": "latest", "ledger": "e3b0c44298fc"}
    store.set_overrides(NAME, make_changes(outputs, ratings, "i1", "A", ["judge"], "ca", 0.0), annotator="a")
    store.set_overrides(NAME, make_changes(outputs, ratings, "i2", "A", ["judge"], "ca", 0.0), annotator="a")
    two = open_ledger(store, NAME, outputs)
    # the same overrides written in the other order give the same digest
    other = OverrideStore(tmp_path / "p.sqlite")  # the other backend for a PostgreSQL store: same digest
    other.set_overrides(NAME, make_changes(outputs, ratings, "i2", "A", ["judge"], "ca", 0.0), annotator="b")
    other.set_overrides(NAME, make_changes(outputs, ratings, "i1", "A", ["judge"], "ca", 0.0), annotator="b")
    assert open_ledger(other, NAME, outputs).digest == two.digest != empty.digest
    # the same number of overrides with another value is another ledger
    store.set_overrides(NAME, make_changes(outputs, ratings, "i2", "A", ["judge"], "ca", 1.0), annotator="a")
    changed = open_ledger(store, NAME, outputs)
    assert len(changed.applied) == len(two.applied) == 2 and changed.digest != two.digest


def _row_by_row_digest(applied: pd.DataFrame) -> str:
    """The digest as documented, written out row by row (how it was computed before 2026-12-01)."""
    import hashlib

    columns = ["item_id", "model", "rater", "dimension", "value", "text_hash"]
    rows = sorted("\x1f".join(repr(v) if isinstance(v, float) else str(v) for v in row)
                  for row in applied[columns].itertuples(index=False))
    return hashlib.sha256(b"".join(row.encode("utf-8") + b"\x1e" for row in rows)).hexdigest()[:12]


@pytest.mark.parametrize(("rule", "expected"), [("latest", "2672c53c6d0b"), ("majority", "5cb2aeedd3f8")])
def test_ledger_digest_is_the_published_value(store, rule, expected):
    # pinned: digests in results tables published before must still name the same ledger (values from b3626cc)
    outputs = pd.DataFrame({"item_id": ["i1", "i2", "i3"], "model": ["A", "A", "B|c"], "task": "",
                            "reference": ["r1", "r2", "r3"], "generation": ["g1", "g2", "=g3"]})
    ratings = pd.DataFrame({"item_id": list(outputs["item_id"]) * 2, "model": list(outputs["model"]) * 2,
                            "rater": ["judge"] * 3 + ["other judge"] * 3, "dimension": "ca", "value": 1.0,
                            "rater_kind": "llm", "reason": "", "signature": "s"})
    store.set_overrides("d", make_changes(outputs, ratings, "i1", "A", ["judge", "other judge"], "ca", 0.0),
                        annotator="a")
    store.set_overrides("d", make_changes(outputs, ratings, "i3", "B|c", ["judge"], "ca", 0.0), annotator="b")
    store.set_overrides("d", make_changes(outputs, ratings, "i3", "B|c", ["judge"], "ca", 1.0), annotator="a")
    ledger = open_ledger(store, "d", outputs, rule)
    assert ledger.digest == expected == _row_by_row_digest(ledger.applied)
    assert len(ledger.applied) == (3 if rule == "latest" else 2)  # under majority the 1-1 tie on i3 is left out


@pytest.mark.parametrize("rows", [40, 600])  # rows compared in Python (a decision's own rows) and as columns
def test_make_changes_binds_each_rater_to_its_last_label_and_signature(rows):
    """make_changes on frames of either size: each target rater's judge value and signature from its last row on
    the dimension (an earlier duplicate row ignored), None and "" for a missing value or signature and for a rater
    that did not rate, the text hash of the output's row; an absent output is a ValueError naming it."""
    outputs = _outputs([(f"i{k}", m, f"text {k} {m}") for k in range(rows // 4) for m in ("A", "B")])
    ratings = pd.concat([_ratings(outputs, "j1", 1.0), _ratings(outputs, "j2", 0.0)], ignore_index=True)
    ratings["signature"] = ratings["rater"] + "-v1"
    # i1/A: j1 rated twice (the last row counts), j2's value and signature missing; another dimension in between
    extra = pd.DataFrame([{"item_id": "i1", "model": "A", "rater": "j1", "dimension": "sa", "value": 0.3,
                           "rater_kind": "llm", "signature": "j1-sa"},
                          {"item_id": "i1", "model": "A", "rater": "j1", "dimension": "ca", "value": 0.0,
                           "rater_kind": "llm", "signature": "j1-v2"}])
    ratings = pd.concat([ratings, extra], ignore_index=True).astype({"item_id": "str", "model": "str"})
    ratings.loc[(ratings["item_id"] == "i1") & (ratings["model"] == "A") & (ratings["rater"] == "j2"),
                ["value", "signature"]] = [np.nan, None]
    changes = make_changes(outputs, ratings, "i1", "A", ["j1", "j2", "j3"], "ca", 1.0, "why")
    digest = output_hashes(outputs)[("i1", "A")]
    assert [(c.rater, c.judge_value, c.judge_signature, c.text_hash, c.value, c.reason) for c in changes] == [
        ("j1", 0.0, "j1-v2", digest, 1.0, "why"), ("j2", None, "", digest, 1.0, "why"),
        ("j3", None, "", digest, 1.0, "why")]
    with pytest.raises(ValueError, match="'i9999' / 'A' is not in the data set"):
        make_changes(outputs, ratings, "i9999", "A", ["j1"], "ca", 1.0)
