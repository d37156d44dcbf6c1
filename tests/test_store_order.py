"""The store's own commit order decides "latest" and undo, never a writer's clock (issue 24 item 3); both backends."""

from __future__ import annotations

import sqlite3

import pandas as pd
import pytest

import empathy.labels.sqlite as sqlite_backend
from empathy.labels.backends import open_store
from empathy.labels.ledger import annotator_ratings, human_ratings, ledger_from_decisions
from empathy.labels.records import Change, in_commit_order, text_hash
from empathy.labels.rules import decision_effects, effective_overrides
from empathy.labels.schema import SCHEMA_VERSION
from empathy.labels.transfer import export_jsonl, import_ledger, migrate_store

DS = "ds"
OUTPUTS = pd.DataFrame({"item_id": ["i1", "i2"], "model": ["m", "m"], "reference": ["r1", "r2"],
                        "generation": ["g1", "g2"]})
H1, H2 = text_hash("r1", "g1"), text_hash("r2", "g2")
# alice's laptop runs one hour fast; bob's clock is right and he decides one second after her
ALICE_CLOCK = "2026-03-01T11:00:00.000000+00:00"
BOB_CLOCK = "2026-03-01T10:00:01.000000+00:00"


@pytest.fixture()
def clock(monkeypatch):
    """Set the writer's clock the store records (``updated_at``/``at``): ``clock["now"] = ...``."""
    now = {"now": ALICE_CLOCK}
    monkeypatch.setattr(sqlite_backend, "utc_now", lambda: now["now"])
    return now


def _skewed_pair(location: str, clock: dict) -> tuple:
    """alice (1 h fast) decides 1, then bob decides 0 one second later, each through their own store object."""
    alice, bob = open_store(location), open_store(location)
    clock["now"] = ALICE_CLOCK
    alice.set_override(DS, "i1", "m", "j", "ca", 1, annotator="alice", text_hash=H1, judge_value=1.0)
    clock["now"] = BOB_CLOCK
    bob.set_override(DS, "i1", "m", "j", "ca", 0, annotator="bob", text_hash=H1, judge_value=1.0)
    return alice, bob


def test_the_latest_decision_is_the_last_committed_not_the_fastest_clock(store_location, clock):
    alice, bob = _skewed_pair(store_location, clock)
    decisions = bob.decisions(DS)
    assert decisions.set_index("annotator")["updated_at"].to_dict() == {"alice": ALICE_CLOCK, "bob": BOB_CLOCK}
    assert decisions.set_index("annotator")["seq"].to_dict() == {"alice": 1, "bob": 2}
    assert bob.version() == 2
    effective = effective_overrides(decisions, "latest").effective
    assert effective[["annotator", "value"]].values.tolist() == [["bob", 0.0]]
    # the clock alone would have chosen alice: the store's order is what changed
    by_clock = effective_overrides(decisions.drop(columns=["seq"]), "latest").effective
    assert by_clock[["annotator", "value"]].values.tolist() == [["alice", 1.0]]
    # the audit's old value of bob's change is alice's decision, the latest before it in commit order
    audit = bob.audit(DS)
    assert audit[["annotator", "old_value", "new_value", "seq"]].values.tolist() == [
        ["alice", 1.0, 1.0, 1], ["bob", 1.0, 0.0, 2]]
    assert human_ratings(decisions)["value"].tolist() == [0.0]


def test_undo_undoes_the_last_committed_change(store_location, clock):
    alice, bob = _skewed_pair(store_location, clock)
    clock["now"] = "2026-03-01T09:00:00.000000+00:00"  # a third clock, slow: it must not matter either
    undone = alice.undo_last(dataset_id=DS)
    assert undone["annotator"].tolist() == ["bob"] and undone["new_value"].tolist() == [0.0]
    left = alice.decisions(DS)
    assert left["annotator"].tolist() == ["alice"]
    assert effective_overrides(left).effective["value"].tolist() == [1.0]
    assert alice.audit(DS)["action"].tolist() == ["set", "set", "undo"]
    assert alice.audit(DS)["seq"].tolist() == [1, 2, 3]


def test_the_ledger_and_its_digest_follow_the_commit_order(store_location, clock, tmp_path):
    alice, bob = _skewed_pair(store_location, clock)
    ledger = ledger_from_decisions(DS, bob.decisions(DS), OUTPUTS, "latest")
    assert ledger.applied[["annotator", "value"]].values.tolist() == [["bob", 0.0]]
    only_bob = open_store(tmp_path / "bob.sqlite")
    only_bob.set_override(DS, "i1", "m", "j", "ca", 0, annotator="bob", text_hash=H1)
    assert ledger.digest == ledger_from_decisions(DS, only_bob.decisions(DS), OUTPUTS, "latest").digest
    # what one more decision by carol would do: the label now is bob's 0, after hers it is hers
    effects = decision_effects({("i1", "m"): 1.0}, bob.decisions(DS), [("i1", "m")], rater="j", dimension="ca",
                               annotator="carol", levels=[0.0, 1.0])
    assert effects[("i1", "m")].before == 0.0 and dict(effects[("i1", "m")].after) == {0.0: 0.0, 1.0: 1.0}
    # alice deciding again replaces her own row and becomes the latest although her clock did not move
    clock["now"] = ALICE_CLOCK
    alice.set_override(DS, "i1", "m", "j", "ca", 1, annotator="alice", text_hash=H1)
    assert effective_overrides(bob.decisions(DS)).effective[["annotator", "value"]].values.tolist() == [
        ["alice", 1.0]]


def test_annotator_ratings_and_adjudication_take_the_last_committed(store_location, clock):
    store = open_store(store_location)
    clock["now"] = ALICE_CLOCK
    store.set_overrides(DS, [Change("i1", "m", "j1", "ca", 1), Change("i1", "m", "j2", "ca", 1)], annotator="ann")
    store.adjudicate(DS, [Change("i1", "m", "j1", "ca", 1)], annotator="chair")
    clock["now"] = BOB_CLOCK
    store.set_override(DS, "i1", "m", "j2", "ca", 0, annotator="ann")  # later in the store, earlier by the clock
    store.adjudicate(DS, [Change("i1", "m", "j1", "ca", 0)], annotator="chair2")
    decisions = store.decisions(DS)
    assert annotator_ratings(decisions)["value"].tolist() == [0.0]
    adjudicated = effective_overrides(decisions, "adjudicated").effective
    # j1: chair2's adjudication, committed last (chair's clock is later); j2: ann alone, her last decision
    assert adjudicated.set_index("rater")["value"].to_dict() == {"j1": 0.0, "j2": 0.0}


def test_in_commit_order_falls_back_to_the_clock_only_without_seq():
    frame = pd.DataFrame({"value": [1.0, 2.0, 3.0], "updated_at": ["t3", "t1", "t2"], "seq": [1, 3, 2]})
    assert in_commit_order(frame)["value"].tolist() == [1.0, 3.0, 2.0]
    assert in_commit_order(frame.drop(columns="seq"))["value"].tolist() == [2.0, 3.0, 1.0]
    ties = pd.DataFrame({"value": [1.0, 2.0], "updated_at": ["t2", "t1"], "seq": [0, 0]})  # unaudited version 1 rows
    assert in_commit_order(ties)["value"].tolist() == [2.0, 1.0]


def test_an_exported_ledger_keeps_the_order_through_an_import(store_location, clock, tmp_path):
    _, bob = _skewed_pair(store_location, clock)
    path = tmp_path / "ledger.jsonl"
    assert export_jsonl(bob, path, DS) == 2
    lines = path.read_text(encoding="utf-8").splitlines()
    assert ['"alice"' in lines[0], '"bob"' in lines[1]] == [True, True]  # commit order, not key order
    copy = open_store(tmp_path / "copy.sqlite")
    assert import_ledger(copy, path) == 2
    assert effective_overrides(copy.decisions(DS)).effective["annotator"].tolist() == ["bob"]


def test_migration_keeps_the_commit_order(clock, tmp_path, postgres_url):
    _skewed_pair(str(tmp_path / "a.sqlite"), clock)
    migrate_store(tmp_path / "a.sqlite", postgres_url, translate_names=False)
    server = open_store(postgres_url)
    assert server.decisions(DS).set_index("annotator")["seq"].to_dict() == {"alice": 1, "bob": 2}
    server.set_override(DS, "i1", "m", "j", "ca", 1, annotator="carol")
    assert server.decisions(DS).set_index("annotator")["seq"].to_dict() == {"alice": 1, "bob": 2, "carol": 3}


# ------------------------------------------------------------------------------------------ the schema step

def _history(location: str, clock: dict) -> pd.DataFrame:
    """Every kind of write, clocks skewed: set, import-like batch, adjudicate, confirm, undo (restoring a value,
    and one that finds a later change); returns the decisions with the seq the live code gave them."""
    store = open_store(location)
    clock["now"] = ALICE_CLOCK
    store.set_override(DS, "i1", "m", "j", "ca", 1, annotator="alice", text_hash=H1)
    clock["now"] = BOB_CLOCK
    store.set_override(DS, "i1", "m", "j", "ca", 0, annotator="bob", text_hash=H1)
    store.write_batch({(DS, "carol", "annotator"): [Change("i2", "m", "j", "ca", 1, text_hash=H2)]}, action="import")
    store.set_override(DS, "i2", "m", "j", "ca", 1, annotator="alice", text_hash=H2)
    store.set_override(DS, "i2", "m", "j", "ca", 0, annotator="alice", text_hash=H2)
    store.undo_last("alice")  # alice's i2 back to 1: the undo restamps it
    store.adjudicate(DS, [Change("i1", "m", "j", "ca", 1, text_hash=H1)], annotator="chair")
    store.confirm(DS, store.decisions(DS).iloc[:1], {("i1", "m"): H1}, annotator="chair")  # keeps its place
    return store.decisions(DS)


def _downgrade(location: str) -> None:
    """Turn a store back into schema version 3 (no seq, no skips or assignments, no audit designs, no index on the
    commit order), as an older empathy left it."""
    statements = ["DROP INDEX IF EXISTS audit_dataset_seq", "DROP INDEX audit_seq",
                  "ALTER TABLE overrides DROP COLUMN seq", "ALTER TABLE audit DROP COLUMN seq",
                  "DROP TABLE skips", "DROP TABLE assignments", "DROP TABLE audit_design_outputs",
                  "DROP TABLE audit_designs",
                  *(f"ALTER TABLE {table} DROP COLUMN {column}" for table in ("overrides", "audit")
                    for column in ("audit_design", "audit_position"))]
    if location.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(location, autocommit=True) as connection:
            for statement in [*statements, "UPDATE empathy_meta SET value = '3' WHERE key = 'schema_version'"]:
                connection.execute(statement)
        return
    connection = sqlite3.connect(location)
    for statement in [*statements, "PRAGMA user_version=3"]:
        connection.execute(statement)
    connection.commit()
    connection.close()


def test_the_schema_step_backfills_the_order_from_the_audit_ids(store_location, clock):
    live = _history(store_location, clock)
    assert effective_overrides(live).effective.set_index("item_id")["annotator"].to_dict() == {
        "i1": "chair", "i2": "alice"}
    _downgrade(store_location)
    upgraded = open_store(store_location)
    assert SCHEMA_VERSION == 6
    backfilled = upgraded.decisions(DS)
    # every decision gets the seq the live code gave it: the id of the audit row that last set its value
    pd.testing.assert_frame_equal(backfilled, live)
    audit = upgraded.audit(DS)
    assert audit["seq"].tolist() == audit["id"].tolist()
    # and the next change continues the order
    upgraded.set_override(DS, "i1", "m", "j", "ca", 0, annotator="dan")
    assert int(upgraded.decisions(DS)["seq"].max()) == int(audit["seq"].max()) + 1


def test_a_decision_without_history_gets_order_zero_and_falls_back_to_its_clock(tmp_path, clock):
    path = str(tmp_path / "v3.sqlite")
    open_store(path).set_override(DS, "i1", "m", "j", "ca", 1, annotator="alice")
    _downgrade(path)
    connection = sqlite3.connect(path)  # a version 1 row copied without its audit trail
    connection.execute("INSERT INTO overrides (dataset_id, item_id, model, rater, dimension, annotator, role, value,"
                       " updated_at) VALUES ('ds', 'i9', 'm', 'j', 'ca', 'old', 'annotator', 0, '2020-01-01')")
    connection.commit()
    connection.close()
    decisions = open_store(path).decisions(DS)
    assert decisions.set_index("item_id")["seq"].to_dict() == {"i1": 1, "i9": 0}
