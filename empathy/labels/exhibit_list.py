"""The outputs pinned for a demo: each data set's ordered exhibit list, kept in the store's ``exhibits`` table.

Functions over any store (both backends: portable SQL through :meth:`empathy.labels.sqlite.OverrideStore.fetch`
and :meth:`~empathy.labels.sqlite.OverrideStore.transaction`). One row per (data set, item, model) with its
position (1, 2, ...) and a note; :mod:`empathy.exhibits` renders the list, the Exhibits page edits it.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from empathy.labels.records import check_text, utc_now
from empathy.labels.schema import EXHIBIT_COLUMNS
from empathy.labels.sqlite import OverrideStore

_ORDER = "ORDER BY position, item_id, model"


def exhibit_list(store: OverrideStore, dataset_id: str) -> pd.DataFrame:
    """The data set's pinned outputs in their order: :data:`~empathy.labels.schema.EXHIBIT_COLUMNS`."""
    check_text("dataset_id", dataset_id)
    frame = pd.DataFrame(store.fetch(f"SELECT {', '.join(EXHIBIT_COLUMNS)} FROM exhibits WHERE dataset_id=? {_ORDER}",
                                     (dataset_id,)), columns=list(EXHIBIT_COLUMNS))
    frame["position"] = frame["position"].astype(int)
    return frame


def pin_exhibit(store: OverrideStore, dataset_id: str, item_id: str, model: str, note: str = "", *,
                annotator: str = "") -> int:
    """Pin an output at the end of the data set's exhibit list, or change the note of a pinned one.

    Returns its position (1-based).
    """
    for name, value in (("dataset_id", dataset_id), ("item_id", item_id), ("model", model)):
        check_text(name, value)
    for name, value in (("note", note), ("annotator", annotator)):
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a string, got {type(value).__name__}")
    with store.transaction() as connection:
        key = (dataset_id, item_id, model)
        row = connection.execute("SELECT position FROM exhibits WHERE dataset_id=? AND item_id=? AND model=?",
                                 key).fetchone()
        if row is not None:
            connection.execute("UPDATE exhibits SET note=?, annotator=?, updated_at=? WHERE dataset_id=? AND "
                               "item_id=? AND model=?", (note, annotator, utc_now(), *key))
            return int(row[0])
        position = int(connection.execute("SELECT COALESCE(MAX(position), 0) + 1 FROM exhibits WHERE "
                                          "dataset_id=?", (dataset_id,)).fetchone()[0])
        connection.execute("INSERT INTO exhibits (dataset_id, item_id, model, position, note, annotator, "
                           "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                           (*key, position, note, annotator, utc_now()))
        return position


def unpin_exhibit(store: OverrideStore, dataset_id: str, item_id: str, model: str) -> bool:
    """Remove an output from the exhibit list (the others keep their order); False if it was not pinned."""
    with store.transaction() as connection:
        cursor = connection.execute("DELETE FROM exhibits WHERE dataset_id=? AND item_id=? AND model=?",
                                    (dataset_id, item_id, model))
        removed = cursor.rowcount > 0
        _renumber(connection, dataset_id, _keys(connection, dataset_id))
    return removed


def move_exhibit(store: OverrideStore, dataset_id: str, item_id: str, model: str, offset: int) -> int:
    """Move a pinned output ``offset`` places (negative: earlier), clamped to the list; returns its position.

    Raises ``ValueError`` when the output is not pinned.
    """
    if isinstance(offset, bool) or not isinstance(offset, int):
        raise TypeError(f"offset must be an integer, got {offset!r}")
    with store.transaction() as connection:
        keys = _keys(connection, dataset_id)
        if (item_id, model) not in keys:
            raise ValueError(f"({item_id}, {model}) is not an exhibit of {dataset_id}")
        index = keys.index((item_id, model))
        target = min(max(index + offset, 0), len(keys) - 1)
        keys.insert(target, keys.pop(index))
        _renumber(connection, dataset_id, keys)
        return target + 1


def exhibit_rows(store: OverrideStore) -> list[tuple]:
    """Every pinned exhibit row of every data set (``dataset_id`` then the columns), as stored (for migration)."""
    return store.fetch(f"SELECT dataset_id, {', '.join(EXHIBIT_COLUMNS)} FROM exhibits ORDER BY dataset_id, "
                       "position, item_id, model")


def _keys(connection: Any, dataset_id: str) -> list[tuple[str, str]]:
    """The data set's pinned ``(item_id, model)`` in their current order."""
    return [(str(r[0]), str(r[1])) for r in connection.execute(
        f"SELECT item_id, model FROM exhibits WHERE dataset_id=? {_ORDER}", (dataset_id,)).fetchall()]


def _renumber(connection: Any, dataset_id: str, keys: list[tuple[str, str]]) -> None:
    """Write positions 1..n in the order ``keys``."""
    for position, (item, model) in enumerate(keys, start=1):
        connection.execute("UPDATE exhibits SET position=? WHERE dataset_id=? AND item_id=? AND model=?",
                           (position, dataset_id, item, model))
