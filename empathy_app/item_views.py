"""The Items page's table: :class:`empathy.items.ItemTable` of the data set, held once per data set and patched.

The table's parts that do not read the ratings are computed once per data set (shared by every session); after a
decision only the decided outputs' rows are recomputed; a rerun that changed nothing hands back the same frame
(no copy, no pickle: ``st.cache_data`` would store the table pickled and unpickle a copy of it on every run).
"""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import streamlit as st

from empathy.items import ItemTable, filter_items, search_mask, worst_first
from empathy.metrics import registry_token
from empathy_app import compute, overrides
from empathy_app.loading import Loaded


class _Held:
    """One data set's :class:`ItemTable`, the inputs of its last table and that table."""

    def __init__(self, engine: ItemTable) -> None:
        self.engine = engine
        self.lock = threading.Lock()
        self.inputs: tuple[object, object] | None = None
        self.table: pd.DataFrame | None = None


@st.cache_resource(show_spinner=False, max_entries=4)
def _held(key: str, by_task: bool, registry: str, _outputs: pd.DataFrame, _ratings: pd.DataFrame,
          _features: object, _index: compute.RowIndex) -> _Held:
    # the rating rows' output positions (3 million int64 at 200,000 outputs) made only when the table is built,
    # not on every run that finds it held
    return _Held(ItemTable(_outputs, _ratings, _features, by_task=by_task, codes=_index.rating_positions()))


def engine(data: Loaded) -> ItemTable:
    """The data set's :class:`ItemTable` (built once per data set, task scope and metric registry; shared)."""
    return _holder(data).engine


def _holder(data: Loaded) -> _Held:
    return _held(data.content_key, compute.by_task(data), registry_token(), data.dataset.outputs,
                 data.dataset.ratings, compute.features(data), compute.row_index(data))


def item_table(data: Loaded) -> pd.DataFrame:
    """The item table (no text columns) of the effective ratings under the sidebar's toggle, every output marked
    with its applied overrides: the same frame while neither changes, the changed outputs' rows patched when
    they do. Shared: not to be modified."""
    ratings = compute.effective_ratings(data)
    current = overrides.applied(data)
    held = _holder(data)
    with held.lock:
        if held.inputs is not None and held.inputs[0] is ratings and held.inputs[1] is current:
            assert held.table is not None
            return held.table
        held.table = held.engine.table(ratings, current)
        held.inputs = (ratings, current)
        return held.table


def order(table: pd.DataFrame, outputs: pd.DataFrame, *, query: str, min_counts: dict[str, float],
          models: list[str] | None, overridden: bool | None, sort_by: str | None, absolute: bool) -> np.ndarray:
    """The rows of ``table`` (positions) that the search and filters keep, worst first by ``sort_by``: what
    :func:`empathy.items.search_items`, :func:`empathy.items.filter_items` and :func:`empathy.items.worst_first`
    keep and order, found on the positions so that no copy of the whole table is made."""
    keep = search_mask(table, outputs, query)
    kept = np.flatnonzero(keep)
    if min_counts or models is not None or overridden is not None:
        part = table.iloc[kept]
        kept = kept[table.index.get_indexer(filter_items(part, min_counts=min_counts, models=models,
                                                         overridden=overridden).index)]
    if sort_by is not None and len(kept):
        sorted_rows = worst_first(table[[sort_by]].iloc[kept], sort_by, absolute=absolute)
        kept = table.index.get_indexer(sorted_rows.index)
    return kept
