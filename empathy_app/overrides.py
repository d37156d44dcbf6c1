"""The human overrides of the loaded data set: its ledger under the session's label rule, the overrides that
apply, and the key that names them in the caches.

Every count and every metric of the app reads the decisions through :func:`ledger` (one path: the Data page,
the sidebar, Overview and Relabel cannot disagree); :func:`applied` is what enters the ratings. The store is
opened with the data set (:func:`empathy_app.loading.get_store`); what its decisions mean is
:mod:`empathy.labels.ledger`'s.
"""

from __future__ import annotations

import hashlib
import os

import pandas as pd
import streamlit as st

from empathy.labels.ledger import Ledger, open_ledger
from empathy.labels.records import dataset_id as legacy_dataset_id
from empathy.labels.records import output_hashes
from empathy.labels.sqlite import OverrideStore
from empathy_app import session_keys
from empathy_app.loading import Loaded
from empathy_app.markup import code


@st.cache_resource(show_spinner=False, max_entries=8)
def _output_hashes(key: str, _outputs: pd.DataFrame) -> tuple[dict[tuple[str, str], str], str]:
    return output_hashes(_outputs), legacy_dataset_id(_outputs)


@st.cache_resource(show_spinner=False, max_entries=16)
def _ledger(path: str, name: str, rule: str, key: str, version: int, _store: OverrideStore,
            _outputs: pd.DataFrame) -> Ledger:
    hashes, legacy = _output_hashes(key, _outputs)
    return open_ledger(_store, name, _outputs, rule, hashes=hashes, legacy_id=legacy)


def output_hash_map(data: Loaded) -> dict[tuple[str, str], str]:
    """:func:`empathy.labels.records.output_hashes` of the loaded outputs (computed once per data set, shared)."""
    return _output_hashes(data.base_key or data.content_key, data.all_data.outputs)[0]


def label_rule() -> str:
    """The session's label rule (latest / majority / adjudicated), chosen on Relabel."""
    return str(st.session_state.get(session_keys.LABEL_RULE, "latest"))


def ledger(data: Loaded) -> Ledger:
    """The data set's decisions sorted against its outputs: applied, stale, orphaned, unresolved.

    Under the session's label rule (:func:`label_rule`). Computed again whenever the store changed (any session,
    any process: :meth:`OverrideStore.version` is read on every call), else shared; version 1 rows of the same
    outputs are moved to the data set's name first. Callers must not modify the frames.
    """
    key = data.base_key or data.content_key
    return _ledger(data.store.label, data.dataset_id, label_rule(), key, data.store.version(), data.store,
                   data.all_data.outputs)


def applied(data: Loaded) -> pd.DataFrame:
    """The overrides that apply to the data set now, read from the store on every rerun (other sessions' included).

    Only those of raters in the data set and, under a task filter, of that task's outputs: any other would
    enter the ratings as a new row (:func:`empathy.labels.ledger.apply_overrides` adds unmatched overrides), e.g. as
    a phantom rater after a rater added on the Judge page was removed or the session ended.
    """
    table = ledger(data).applied  # stale, orphaned and unresolved decisions are never applied
    if table.empty:
        return table
    keep = table["rater"].astype(str).isin(data.all_data.raters).to_numpy(copy=True)
    if data.filtered:
        keys = pd.MultiIndex.from_frame(data.dataset.outputs[["item_id", "model"]])
        keep &= pd.MultiIndex.from_frame(table[["item_id", "model"]].astype(str)).isin(keys)
    return table if keep.all() else table[keep].reset_index(drop=True)


def overrides_key(table: pd.DataFrame | None) -> str:
    """Hash of an overrides table's keys and values (small: one row per override), ``"none"`` when empty.

    With the content key it names everything computed from the effective ratings, so a cache entry is reused
    until an override (of this session or another) changes.
    """
    if table is None or table.empty:
        return "none"
    columns = [c for c in ("item_id", "model", "rater", "dimension", "value") if c in table.columns]
    hashed = pd.util.hash_pandas_object(table[columns].astype(str), index=False).to_numpy()
    return hashlib.sha256(hashed.tobytes()).hexdigest()[:20]


def store_path_note(data: Loaded) -> str:
    """Where the overrides of this data set are kept (for the Data page)."""
    env = os.environ.get("EMPATHY_STORE")
    where = code(data.store.label)  # a server URL's password masked
    if data.store.backend == "postgresql":
        where = f"the team's PostgreSQL store {where}"
    return where + (" (from EMPATHY_STORE)" if env else "")
