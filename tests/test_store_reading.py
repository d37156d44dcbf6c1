"""The SQLite store's reading connection: one per thread, kept while the file is the same one.

A page reads the store's version a dozen times in each run; each read opened a new connection, which cost more
than the query. These tests guard what keeping it must not change: every commit of another connection is seen by
the next read, a store file replaced by another is read anew, a damaged file is reported as before, and threads
never share a connection.
"""

from __future__ import annotations

import gc
import os
import shutil
import sqlite3
import threading

import pytest

from empathy.labels import sqlite as store_module
from empathy.labels.locations import StoreError
from empathy.labels.records import Change
from empathy.labels.sqlite import OverrideStore

DS = "ds"


def _decide(store: OverrideStore, item: str, value: float, annotator: str = "ann") -> None:
    store.set_overrides(DS, [Change(item, "m", "j1", "ca", value)], annotator=annotator)


@pytest.fixture()
def counted(monkeypatch):
    """How many connections the store opens (writes and reads alike)."""
    opened = []
    original = OverrideStore._connect

    def connect(self, **options):
        opened.append(threading.get_ident())
        return original(self, **options)

    monkeypatch.setattr(OverrideStore, "_connect", connect)
    return opened


def test_reads_on_one_thread_open_one_connection(tmp_path, counted):
    store = OverrideStore(tmp_path / "o.sqlite")
    counted.clear()
    versions = [store.version() for _ in range(20)]
    assert versions == [0] * 20
    assert len(counted) == 1  # opened once, at the first read
    store.decisions(DS)
    store.changed_since(DS, 0)
    assert len(counted) == 1


def test_every_commit_is_seen_by_the_next_read(tmp_path):
    path = tmp_path / "o.sqlite"
    reader = OverrideStore(path)
    writer = OverrideStore(path)  # another connection, as another session or process writes
    assert reader.version() == 0
    for count in range(1, 6):
        _decide(writer, f"i{count}", 1.0)
        assert reader.version() == count
        assert len(reader.decisions(DS)) == count
    # a write through a raw connection of its own (another program), no store object in between
    raw = sqlite3.connect(path, isolation_level=None)
    raw.execute("UPDATE audit SET seq = seq + 100")
    raw.close()
    assert reader.version() == 105


def test_a_store_file_replaced_by_another_is_read_anew(tmp_path):
    path = tmp_path / "o.sqlite"
    store = OverrideStore(path)
    _decide(store, "i1", 1.0)
    assert store.version() == 1
    other = OverrideStore(tmp_path / "other.sqlite")
    for count in range(3):
        _decide(other, f"x{count}", 0.0)
    os.replace(other.path, path)  # a restore: a new file in the store's place
    assert store.version() == 3
    assert sorted(store.decisions(DS)["item_id"]) == ["x0", "x1", "x2"]


def test_a_store_file_gone_is_not_read_from_the_kept_connection(tmp_path):
    path = tmp_path / "o.sqlite"
    store = OverrideStore(path)
    _decide(store, "i1", 1.0)
    assert store.version() == 1
    shutil.move(path, tmp_path / "moved.sqlite")
    # the old file is still open on the kept connection; a read must not answer from it
    with pytest.raises(StoreError):
        store.version()


def test_a_damaged_file_is_reported_after_reads_on_the_kept_connection(tmp_path):
    path = tmp_path / "o.sqlite"
    store = OverrideStore(path)
    _decide(store, "i1", 1.0)
    assert store.version() == 1
    with open(path, "r+b") as handle:  # damaged in place: same file, its header overwritten
        handle.write(b"not a database at all, just bytes" * 4)
    with pytest.raises(StoreError, match="damaged|cannot be used"):
        store.version()


def test_threads_read_on_connections_of_their_own(tmp_path, counted):
    store = OverrideStore(tmp_path / "o.sqlite")
    _decide(store, "i1", 1.0)
    assert store.version() == 1  # this thread's reader
    counted.clear()
    results: list[int] = []
    errors: list[BaseException] = []

    together = threading.Barrier(4)  # all alive at once: no thread's identity is reused by another

    def read() -> None:
        try:
            results.extend(store.version() for _ in range(10))
            together.wait(timeout=120)
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=read) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert results == [1] * 40
    assert len(counted) == 4 and len(set(counted)) == 4  # one connection per thread, none shared


def test_a_store_gone_closes_its_reading_connection(tmp_path):
    store = OverrideStore(tmp_path / "o.sqlite")
    store.version()
    held = store_module._READERS.stores
    assert store in held
    connection = held[store].connection
    del store, held
    gc.collect()
    with pytest.raises(sqlite3.ProgrammingError):  # closed
        connection.execute("SELECT 1")


# ------------------------------------------------------------------------------------------ the read indexes


def _plan(path, sql: str, params: tuple) -> str:
    connection = sqlite3.connect(path)
    try:
        return " | ".join(row[3] for row in connection.execute("EXPLAIN QUERY PLAN " + sql, params))
    finally:
        connection.close()


def test_what_changed_since_a_version_is_a_range_of_the_data_sets_commit_order(tmp_path):
    # read at every key of every annotator: it must not read every audit row of the data set
    path = tmp_path / "o.sqlite"
    store = OverrideStore(path)
    _decide(store, "i1", 1.0)
    touched = "SELECT DISTINCT item_id FROM audit WHERE dataset_id=? AND seq > ?"
    assert "audit_dataset_seq (dataset_id=? AND seq>?)" in _plan(path, touched, (DS, 0))
    assert "audit_dataset_seq (dataset_id=? AND seq>?)" in _plan(
        path, "SELECT 1 FROM audit WHERE dataset_id = ? AND seq > ? LIMIT 1", (DS, 0))
    assert "COVERING INDEX audit_batch" in _plan(path, "SELECT COALESCE(MAX(batch), 0) + 1 FROM audit", ())


def test_a_version_5_store_gains_the_read_indexes_and_keeps_its_decisions(tmp_path):
    path = tmp_path / "o.sqlite"
    store = OverrideStore(path)
    for count in range(3):
        _decide(store, f"i{count}", float(count % 2))
    before = store.decisions(DS)
    connection = sqlite3.connect(path)
    connection.execute("DROP INDEX audit_dataset_seq")
    connection.execute("DROP INDEX audit_batch")
    connection.execute("PRAGMA user_version=5")
    connection.commit()
    connection.close()
    reopened = OverrideStore(path)
    connection = sqlite3.connect(path)
    indexes = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type='index'")}
    assert connection.execute("PRAGMA user_version").fetchone()[0] == 6
    connection.close()
    assert {"audit_dataset_seq", "audit_batch"} <= indexes
    assert reopened.decisions(DS).equals(before)
    keys, rows = reopened.changed_decisions(DS, 1)
    assert sorted(keys["item_id"]) == ["i1", "i2"] and sorted(rows["item_id"]) == ["i1", "i2"]
