"""The store reads its frames in chunks straight into Arrow, typed exactly as ``pd.DataFrame(rows)`` types them.

Issue 25 (the server's memory at 30,000 decision rows): the whole read held as Python tuples raised the peak by
39 MiB for a 6 MiB frame. These tests guard what reading in chunks must not change (the frame, its types, across
chunk boundaries and for values Arrow would type otherwise than pandas) and that it reads in chunks.
"""

from __future__ import annotations

import pandas as pd
import pytest

from empathy.labels import sqlite as store_module
from empathy.labels.ledger import _decision_keys
from empathy.labels.records import Change
from empathy.labels.sqlite import OverrideStore, _frame_in_chunks

DS = "ds"


class _Cursor:
    """A DB-API cursor over fixed rows that records how it was read."""

    def __init__(self, rows: list[tuple]):
        self.rows = list(rows)
        self.sizes: list[int] = []

    def fetchmany(self, size: int) -> list[tuple]:
        self.sizes.append(size)
        taken, self.rows = self.rows[:size], self.rows[size:]
        return taken

    def fetchall(self) -> list[tuple]:  # pragma: no cover - a chunked read never calls it
        raise AssertionError("the whole result was fetched at once")


@pytest.mark.parametrize(("rows", "dtypes"), [
    # text with a missing value in another chunk: pandas's text type, NaN for the missing one
    ([("a", 1.0), (None, 2.0), ("c", 3.0)], ["str", "float64"]),
    # whole numbers with a missing one: reals, as pandas makes them
    ([(1, "x"), (None, "y"), (3, "z")], ["float64", "str"]),
    # whole numbers in one chunk, reals in the next: reals
    ([(1, "x"), (2.5, "y")], ["float64", "str"]),
    # whole numbers only: integers
    ([(7, "x"), (8, "y"), (9, "z")], ["int64", "str"]),
    # a column with no value at all: objects (None)
    ([(None, "x"), (None, "y")], ["object", "str"]),
])
def test_a_chunked_frame_equals_the_plain_frame(rows, dtypes):
    cursor = _Cursor(rows)
    frame = _frame_in_chunks(cursor, ["a", "b"], 1)
    expected = pd.DataFrame(rows, columns=["a", "b"])
    pd.testing.assert_frame_equal(frame, expected, check_exact=True)
    assert [str(dtype) for dtype in frame.dtypes] == dtypes
    assert cursor.sizes == [1] * (len(rows) + 1)  # a chunk at a time, then the empty chunk that ends it
    # one piece per text column, as the plain frame has
    assert all(frame[c].array._pa_array.num_chunks == 1 for c in frame.columns if str(frame[c].dtype) == "str")


@pytest.mark.parametrize("rows", [
    [("a",), (1,)],  # text in one chunk, a number in the next (SQLite keeps what it was given in a column)
    [("a", ), (2.5,)],
    [(b"\x00\x01",)],  # bytes
    [("\ud800",)],  # a lone surrogate: not UTF-8
    [(2 ** 70,)],  # a whole number beyond 64 bits
])
def test_values_arrow_types_otherwise_are_left_to_the_plain_read(rows):
    assert _frame_in_chunks(_Cursor(rows), ["a"], 1) is None


def test_no_rows_is_the_plain_empty_frame():
    pd.testing.assert_frame_equal(_frame_in_chunks(_Cursor([]), ["a", "b"], 4), pd.DataFrame([], columns=["a", "b"]))


def test_decisions_read_in_chunks_equal_the_plain_read(tmp_path, monkeypatch):
    store = OverrideStore(tmp_path / "o.sqlite")
    # chunk boundaries inside runs of missing judge values and audit positions, reasons and hashes of every kind
    changes = [Change(f"i{k:03d}", f"m{k % 3}", "j1", "ca", float(k % 2), reason="" if k % 4 else f"why {k}",
                      text_hash="" if k % 5 == 0 else f"h{k}", judge_value=None if k < 7 else float(k % 2),
                      judge_signature="" if k % 2 else "sig")
               for k in range(23)]
    store.set_overrides(DS, changes[:11], annotator="ann")
    store.set_overrides(DS, changes[5:], annotator="other")
    monkeypatch.setattr(store_module, "READ_CHUNK_ROWS", 4)
    read = store_module._frame_in_chunks
    calls = []
    monkeypatch.setattr(store_module, "_frame_in_chunks",
                        lambda cursor, columns, size: calls.append(size) or read(cursor, columns, size))
    chunked, everything, audit = store.decisions(DS), store.decisions(), store.audit(DS)
    assert calls == [4, 4, 4] and len(chunked) == 29
    monkeypatch.setattr(store_module, "_frame_in_chunks", lambda cursor, columns, size: None)
    for frame, plain in ((chunked, store.decisions(DS)), (everything, store.decisions()), (audit, store.audit(DS))):
        pd.testing.assert_frame_equal(frame, plain, check_exact=True)
    assert chunked["judge_value"].isna().sum() == 7 + 2  # ann's i000-i006 and other's i005-i006


def test_decision_keys_count_each_decision_once_across_chunks(monkeypatch):
    from empathy.labels import ledger as ledger_module

    monkeypatch.setattr(ledger_module, "_KEYED_ROWS_PER_CHUNK", 2)
    rows = pd.DataFrame({
        # one decision applied to three judges (3 rows), then two whose fields, joined plainly, read alike
        "item_id": ["i1", "i1", "i1", "ab", "a"], "model": ["m", "m", "m", "c", "bc"],
        "dimension": ["ca"] * 5, "annotator": ["ann"] * 5, "role": ["annotator"] * 5,
        "value": [1.0, 1.0, 1.0, 0.0, 0.0], "updated_at": ["t1"] * 5, "rater": ["j1", "j2", "j3", "j1", "j1"]})
    counts = _decision_keys(rows)
    assert sorted(counts.values()) == [1, 1, 3]
    assert all(isinstance(key, bytes) and len(key) == 16 for key in counts)  # a digest each, not the joined text
    assert len(counts) == len(rows.drop(columns="rater").astype(str).drop_duplicates())
