"""Random audits in the override store (empathy.labels.audits), on both backends: designs, marks, audit labels."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pandas as pd
import pytest

from empathy.audit import HEADER_FIELDS, OUTPUT_FIELDS, draw_audit
from empathy.inference import ALL_TASKS, ppi_estimates
from empathy.io import DataError
from empathy.labels.audits import (
    audit_decisions,
    audit_mark,
    audit_queue,
    design_list,
    load_design,
    load_designs,
    save_design,
)
from empathy.labels.backends import open_store
from empathy.labels.ledger import ledger_status
from empathy.labels.locations import StoreError
from empathy.labels.records import AuditMark, Change, output_hashes
from empathy.labels.rules import make_changes
from empathy.labels.schema import DESIGN_COLUMNS, DESIGN_OUTPUT_COLUMNS, SCHEMA_VERSION
from empathy.labels.sqlite import OverrideStore
from empathy.labels.transfer import export_csv, export_jsonl, import_ledger, migrate_store

DS = "outputs.csv"
ITEMS = [f"i{k:02d}" for k in range(12)]


def _outputs() -> pd.DataFrame:
    rows = [(item, model, "news" if k < 6 else "talk", f"reference {item}", f"generation {item} {model}")
            for k, item in enumerate(ITEMS) for model in ("a", "b")]
    return pd.DataFrame(rows, columns=["item_id", "model", "task", "reference", "generation"])


def _ratings() -> pd.DataFrame:
    """Judges J and K label CA on every output; J says 1 on even items, K on items divisible by 3."""
    rows = []
    for k, item in enumerate(ITEMS):
        for model in ("a", "b"):
            rows.append((item, model, "J", "ca", float(k % 2 == 0), "llm"))
            rows.append((item, model, "K", "ca", float(k % 3 == 0), "llm"))
    return pd.DataFrame(rows, columns=["item_id", "model", "rater", "dimension", "value", "rater_kind"])


OUTPUTS, RATINGS = _outputs(), _ratings()


def _close(*stores: OverrideStore) -> None:
    """Close a PostgreSQL store's idle connections now (a connection collected later, during another test that
    turns warnings into errors, would fail that test with its ResourceWarning)."""
    for opened in stores:
        if hasattr(opened, "close"):
            opened.close()


@pytest.fixture()
def store(store_location):
    opened = open_store(store_location)
    yield opened
    _close(opened)


@pytest.fixture()
def design():
    return draw_audit(OUTPUTS, RATINGS, judge="J", dimension="ca", per_model=4, seed=7)


def _decide(store: OverrideStore, design, item: str, model: str, value: float, *, annotator: str = "ann",
            in_audit_order: bool = True, outputs: pd.DataFrame = OUTPUTS) -> int:
    """A decision on every judge's CA of one output, as Relabel records it (marked when in audit order)."""
    changes = make_changes(outputs, RATINGS, item, model, ["J", "K"], "ca", value)
    mark = audit_mark(design, item, model) if in_audit_order else None
    return store.set_overrides(DS, changes, annotator=annotator, audit=mark)


def _labels(store: OverrideStore, design, rule: str = "latest"):
    fresh = ledger_status(store.decisions(DS), OUTPUTS).fresh
    return audit_decisions(fresh, design, rule=rule)


# ------------------------------------------------------------------------------------------ designs

def test_the_tables_hold_every_field_of_the_design_rows():
    assert DESIGN_COLUMNS[:len(HEADER_FIELDS)] == HEADER_FIELDS
    assert DESIGN_OUTPUT_COLUMNS == OUTPUT_FIELDS
    assert SCHEMA_VERSION >= 5  # the version that added them


@pytest.mark.parametrize("stratify", [False, True])
def test_a_design_is_saved_listed_and_read_back_exactly(store, stratify):
    design = draw_audit(OUTPUTS, RATINGS, judge="J", dimension="ca", per_model=2, seed=3, stratify_by_task=stratify)
    assert save_design(store, DS, design, annotator="ann") is True
    assert save_design(store, DS, design) is False  # the digest covers every field: nothing new
    listed = design_list(store, DS)
    assert listed[["digest", "judge", "dimension", "per_model", "stratify_by_task", "seed", "n_drawn", "n_frame",
                   "annotator"]].values.tolist() == [[design.digest, "J", "ca", 2, stratify, 3, len(design.outputs),
                                                      24, "ann"]]
    for name in (design.digest, design.short_digest, f"audit:{design.short_digest}", design.digest[:6].upper()):
        assert load_design(store, DS, name) == design
    assert load_designs(store, DS) == [design]
    assert design_list(store, "other").empty
    with pytest.raises(ValueError, match=r"no audit design .* in data set 'other'.*its designs: none"):
        load_design(store, "other", design.digest)
    with pytest.raises(ValueError, match="at least 6 hex digits"):
        load_design(store, DS, "abc")


def test_a_second_design_and_an_ambiguous_prefix(store, design):
    other = draw_audit(OUTPUTS, RATINGS, judge="K", dimension="ca", per_model=3, seed=7)
    save_design(store, DS, design)
    save_design(store, DS, other)
    assert [d.digest for d in load_designs(store, DS)] == list(design_list(store, DS)["digest"])
    assert {d.judge for d in load_designs(store, DS)} == {"J", "K"}
    absent = next(p for p in ("ffffff", "eeeeee") if not design.digest.startswith(p) and not other.digest.startswith(p))
    with pytest.raises(ValueError, match=rf"no audit design '{absent}'.*its designs: "):
        load_design(store, DS, absent)
    both = next(k for k in range(64) if design.digest[:k] != other.digest[:k]) - 1
    if both >= 6:  # a shared prefix long enough to name a design (rare): it names neither
        with pytest.raises(ValueError, match="ambiguous"):
            load_design(store, DS, design.digest[:both])


@pytest.mark.parametrize(("statement", "message"), [
    ("UPDATE audit_design_outputs SET model = CASE WHEN model='a' THEN 'b' ELSE 'a' END WHERE position=0",
     "should have 4 output rows, has 5"),
    ("UPDATE audit_design_outputs SET item_id='zz' WHERE position=0", "does not match its rows"),
    ("UPDATE audit_design_outputs SET inclusion=0.5 WHERE position=2", "output row 2: inclusion 0.5"),
    ("UPDATE audit_designs SET seed=8", "does not match its rows"),
    ("DELETE FROM audit_design_outputs WHERE position=5", "n_drawn is 8 but there are 7 output rows"),
    ("UPDATE audit_designs SET format=9", "format 9 is not supported"),
])
def test_a_damaged_design_row_is_one_store_error(store, design, statement, message):
    save_design(store, DS, design)
    with store.transaction() as connection:
        connection.execute(statement)
    with pytest.raises(StoreError, match=message) as caught:
        load_design(store, DS, design.short_digest)
    text = str(caught.value)
    assert "\n" not in text and f"damaged audit design {design.short_digest}" in text and "outputs.csv" in text


def test_a_seed_too_large_for_the_store_is_refused(store):
    big = draw_audit(OUTPUTS, RATINGS, judge="J", dimension="ca", per_model=1, seed=2 ** 63)
    with pytest.raises(ValueError, match="too large to store"):
        save_design(store, DS, big)
    assert design_list(store, DS).empty


# ------------------------------------------------------------------------------------------ marks

def test_an_audit_mark_names_the_drawn_output(design):
    first = design.outputs[0]
    assert audit_mark(design, first.item_id, first.model) == AuditMark(design.digest, 0)
    undrawn = next((i, m) for i in ITEMS for m in ("a", "b")
                   if (i, m) not in {(o.item_id, o.model) for o in design.outputs})
    with pytest.raises(ValueError, match="did not draw output"):
        audit_mark(design, *undrawn)
    with pytest.raises(ValueError, match="64 lowercase hex"):
        AuditMark("abc", 0)
    with pytest.raises(ValueError, match="at least 0"):
        AuditMark(design.digest, -1)


def test_marks_are_checked_against_the_stored_design_and_nothing_is_written(store, design):
    first, second = design.outputs[0], design.outputs[1]
    changes = make_changes(OUTPUTS, RATINGS, first.item_id, first.model, ["J"], "ca", 1.0)
    with pytest.raises(ValueError, match="is not stored for data set 'outputs.csv'"):
        store.set_overrides(DS, changes, annotator="ann", audit=audit_mark(design, first.item_id, first.model))
    save_design(store, DS, design)
    with pytest.raises(ValueError, match=rf"holds output \({second.item_id!r}, {second.model!r}\) at position 1"):
        store.set_overrides(DS, changes, annotator="ann", audit=AuditMark(design.digest, 1))
    with pytest.raises(ValueError, match="holds nothing at position 99"):
        store.set_overrides(DS, changes, annotator="ann", audit=AuditMark(design.digest, 99))
    other_dimension = [Change(first.item_id, first.model, "J", "e_gen", 0.5)]
    with pytest.raises(ValueError, match="audits 'ca', not 'e_gen'"):
        store.set_overrides(DS, other_dimension, annotator="ann", audit=AuditMark(design.digest, 0))
    with pytest.raises(TypeError, match="AuditMark"):
        store.set_overrides(DS, changes, annotator="ann", audit=(design.digest, 0))
    assert store.decisions(DS).empty and store.audit(DS).empty
    store.set_overrides(DS, changes, annotator="ann", audit=AuditMark(design.digest, 0))
    row = store.decisions(DS).iloc[0]
    assert (row["audit_design"], row["audit_position"]) == (design.digest, 0)
    trail = store.audit(DS).iloc[0]
    assert (trail["audit_design"], trail["audit_position"]) == (design.digest, 0)


# ------------------------------------------------------------------------------------------ the audit's labels

def test_only_decisions_in_audit_order_are_audit_decisions(store, design):
    save_design(store, DS, design)
    drawn = [(o.item_id, o.model) for o in design.outputs]
    for k, (item, model) in enumerate(drawn[:3]):
        _decide(store, design, item, model, float(k % 2))          # audit order: positions 0, 1, 2
    _decide(store, design, *drawn[5], 1.0, in_audit_order=False)   # the same output from the disagreement queue
    undrawn = next((i, m) for i in ITEMS for m in ("a", "b") if (i, m) not in set(drawn))
    _decide(store, design, *undrawn, 1.0, in_audit_order=False)
    labels = _labels(store, design)
    assert labels.decisions[["item_id", "model", "value", "position"]].values.tolist() == [
        [*drawn[0], 0.0, 0], [*drawn[1], 1.0, 1], [*drawn[2], 0.0, 2]]
    assert (labels.unmarked, labels.unresolved, labels.mismatched) == (1, 0, 0)
    assert "3 of 8 drawn outputs decided in audit order" in labels.summary()
    assert "1 decided outside audit order (not used)" in labels.summary()
    queue = audit_queue(design, labels)
    assert queue["decided"].tolist() == [True, True, True] + [False] * 5
    assert queue.loc[queue["decided"], "value"].tolist() == [0.0, 1.0, 0.0]
    # the estimator takes them as they are: 3 decided outputs, spread over the two models
    report = ppi_estimates(OUTPUTS, RATINGS, design, labels.decisions)
    pooled = report.table[(report.table["task"] == ALL_TASKS)]
    assert int(pooled["n_decided"].sum()) == 3 and int(pooled["n_drawn"].sum()) == 8


def test_a_later_decision_outside_audit_order_clears_the_mark_and_undo_restores_it(store, design):
    save_design(store, DS, design)
    item, model = design.outputs[0].item_id, design.outputs[0].model
    _decide(store, design, item, model, 1.0)
    assert _labels(store, design).decisions["value"].tolist() == [1.0]
    _decide(store, design, item, model, 0.0, in_audit_order=False)   # changed from the disagreement queue
    labels = _labels(store, design)
    assert labels.decisions.empty and labels.unmarked == 1
    assert (store.decisions(DS)["audit_design"] == "").all()
    store.undo_last(dataset_id=DS)
    labels = _labels(store, design)
    assert labels.decisions[["value", "position"]].values.tolist() == [[1.0, 0]]
    assert set(store.decisions(DS)["audit_design"]) == {design.digest}
    _decide(store, design, item, model, 0.0)   # decided again in audit order: the new value counts
    assert _labels(store, design).decisions["value"].tolist() == [0.0]
    store.undo_last(dataset_id=DS)
    store.undo_last(dataset_id=DS)
    assert store.decisions(DS).empty and _labels(store, design).decisions.empty


def test_several_annotators_are_resolved_by_the_label_rule(store, design):
    save_design(store, DS, design)
    (i0, m0), (i1, m1) = [(o.item_id, o.model) for o in design.outputs[:2]]
    _decide(store, design, i0, m0, 1.0, annotator="ann")
    _decide(store, design, i0, m0, 0.0, annotator="bob")
    _decide(store, design, i1, m1, 1.0, annotator="ann")
    _decide(store, design, i1, m1, 1.0, annotator="bob")
    latest = _labels(store, design, "latest")
    assert latest.decisions[["value", "n_annotators"]].values.tolist() == [[0.0, 2], [1.0, 2]]
    majority = _labels(store, design, "majority")
    assert majority.decisions[["item_id", "value"]].values.tolist() == [[i1, 1.0]] and majority.unresolved == 1
    changes = make_changes(OUTPUTS, RATINGS, i0, m0, ["J", "K"], "ca", 1.0)
    store.adjudicate(DS, [Change(**{**c.__dict__, "audit_design": design.digest, "audit_position": 0})
                          for c in changes], annotator="lead")
    adjudicated = _labels(store, design, "adjudicated")
    assert adjudicated.decisions[["item_id", "value"]].values.tolist() == [[i0, 1.0], [i1, 1.0]]


def test_stale_decisions_and_foreign_marks_are_left_out(store, design):
    save_design(store, DS, design)
    (i0, m0), (i1, m1) = [(o.item_id, o.model) for o in design.outputs[:2]]
    _decide(store, design, i0, m0, 1.0, outputs=OUTPUTS.assign(generation="an older text"))
    _decide(store, design, i1, m1, 1.0)
    assert _labels(store, design).decisions["item_id"].tolist() == [i1]
    # a mark of this design on the wrong position (an imported ledger): counted, never used
    decisions = store.decisions(DS).assign(audit_position=5)
    labels = audit_decisions(decisions, design)
    assert labels.decisions.empty and labels.mismatched == 4  # two outputs x two judges
    other = draw_audit(OUTPUTS, RATINGS, judge="K", dimension="ca", per_model=4, seed=7)
    assert audit_decisions(store.decisions(DS), other).decisions.empty


# ------------------------------------------------------------------------------------------ moving a store

@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_marks_travel_with_the_ledger_file(tmp_path, store, design, suffix):
    save_design(store, DS, design)
    for output in design.outputs[:2]:
        _decide(store, design, output.item_id, output.model, 1.0)
    _decide(store, design, *[(o.item_id, o.model) for o in design.outputs][4], 0.0, in_audit_order=False)
    path = tmp_path / f"ledger{suffix}"
    (export_jsonl if suffix == ".jsonl" else export_csv)(store, path, DS)
    if suffix == ".jsonl":
        records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        assert {(r["audit_design"], r["audit_position"]) for r in records} == {
            (design.digest, 0), (design.digest, 1), ("", None)}
    copy = OverrideStore(tmp_path / "copy.sqlite")
    assert import_ledger(copy, path) == 6
    columns = ["item_id", "model", "rater", "audit_design", "audit_position"]
    pd.testing.assert_frame_equal(copy.decisions(DS)[columns], store.decisions(DS)[columns])
    assert copy.audit(DS)["audit_design"].tolist().count(design.digest) == 4
    # the design drawn again in the copy (same data, judge, size and seed: the same digest) finds them
    save_design(copy, DS, draw_audit(OUTPUTS, RATINGS, judge="J", dimension="ca", per_model=4, seed=7))
    assert len(_labels(copy, design).decisions) == 2


@pytest.mark.parametrize(("cells", "column", "message"), [
    (("abc", "1"), "audit_design", "64 lowercase hex"),
    (("a" * 64, "one"), "audit_position", "not a position"),
    (("a" * 64, "-1"), "audit_position", "not a position"),
    (("", "3"), "audit_position", "without an audit design"),
])
def test_a_bad_mark_in_a_ledger_file_names_its_row_and_column(tmp_path, cells, column, message):
    path = tmp_path / "ledger.csv"
    path.write_text("dataset_id,item_id,model,rater,dimension,value,annotator,audit_design,audit_position\n"
                    "d,i,m,j,ca,1,a,,\n"
                    f"d,i2,m,j,ca,1,a,{cells[0]},{cells[1]}\n", encoding="utf-8")
    store = OverrideStore(tmp_path / "s.sqlite")
    with pytest.raises(DataError, match=rf"row 3, column '{column}'.*{message}"):
        import_ledger(store, path)
    assert store.decisions().empty


def test_migrate_copies_designs_and_marks(tmp_path, store_location, design):
    source = open_store(store_location)
    save_design(source, DS, design, annotator="ann")
    _decide(source, design, design.outputs[0].item_id, design.outputs[0].model, 1.0)
    target = tmp_path / "copy.sqlite"
    report = migrate_store(store_location, target, rename={DS: "renamed.csv"})
    assert report.designs == 1 and "; 1 audit design" in report.summary()
    copy = OverrideStore(target)
    assert load_design(copy, "renamed.csv", design.short_digest) == design
    assert design_list(copy, "renamed.csv")["annotator"].tolist() == ["ann"]
    assert set(copy.decisions("renamed.csv")["audit_design"]) == {design.digest}
    # the copy must be empty: a design alone counts
    with pytest.raises(StoreError, match="audit design rows"):
        migrate_store(store_location, target, rename={DS: "renamed.csv"})
    _close(source)


# ------------------------------------------------------------------------------------------ the schema step

def test_a_version_4_store_is_upgraded_and_keeps_its_decisions(store_location, design):
    store = open_store(store_location)
    store.set_override(DS, "i00", "a", "J", "ca", 1.0, annotator="ann")
    with store.transaction() as connection:
        connection.execute("DROP TABLE audit_design_outputs")
        connection.execute("DROP TABLE audit_designs")
        for table in ("overrides", "audit"):
            for column in ("audit_design", "audit_position"):
                connection.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
        if store.backend == "sqlite":
            connection.execute("PRAGMA user_version=4")
        else:
            connection.execute("UPDATE empathy_meta SET value='4' WHERE key='schema_version'")
    reopened = open_store(store_location)
    if reopened.backend == "sqlite":
        assert sqlite3.connect(store_location).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    else:
        assert reopened.schema_version() == SCHEMA_VERSION
    row = reopened.decisions(DS).iloc[0]
    assert row["value"] == 1.0 and row["audit_design"] == "" and pd.isna(row["audit_position"])
    assert save_design(reopened, DS, design)
    assert load_design(reopened, DS, design.digest) == design
    _close(store, reopened)


def test_the_hashes_of_the_outputs_bind_audit_decisions_to_their_text(store, design):
    # the mark does not replace the text hash: a decision is fresh only on the text it was made on
    save_design(store, DS, design)
    first = design.outputs[0]
    _decide(store, design, first.item_id, first.model, 1.0)
    hashes = output_hashes(OUTPUTS)
    assert set(store.decisions(DS)["text_hash"]) == {hashes[(first.item_id, first.model)]}
    assert np.isclose(_labels(store, design).decisions["value"], [1.0]).all()
