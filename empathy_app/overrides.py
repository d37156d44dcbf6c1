"""The human overrides of the loaded data set: its ledger under the session's label rule, the overrides that
apply, and the key that names them in the caches.

Every count and every metric of the app reads the decisions through :func:`ledger` (one path: the Data page,
the sidebar, Overview and Relabel cannot disagree); :func:`applied` is what enters the ratings. The store is
opened with the data set (:func:`empathy_app.loading.get_store`); what its decisions mean is
:mod:`empathy.labels.ledger`'s.
"""

from __future__ import annotations

import collections
import functools
import hashlib
import os
import threading
import uuid
from collections.abc import Sequence
from collections.abc import Set as AbstractSet

import pandas as pd
import streamlit as st

from empathy.labels.ledger import Ledger, ledger_status, open_ledger, updated_ledger
from empathy.labels.records import dataset_id as legacy_dataset_id
from empathy.labels.records import output_hashes
from empathy.labels.schema import KEY_COLUMNS, ORDER_COLUMN
from empathy_app import loading, session_keys
from empathy_app.loading import Loaded
from empathy_app.markup import code


@st.cache_resource(show_spinner=False, max_entries=8)
def _output_hashes(key: str, _outputs: pd.DataFrame) -> tuple[dict[tuple[str, str], str], str]:
    return output_hashes(_outputs), legacy_dataset_id(_outputs)


class _Held:
    """One data set's ledger under one label rule, kept up to date with the store (shared by every session).

    ``version`` is the store's version (:meth:`~empathy.labels.sqlite.OverrideStore.version`) the ledger is
    current at; ``stamps`` the version at which each dimension's decisions last changed, and ``generation`` a
    token of the last full read: together they name the applied overrides of some dimensions without hashing
    them (:func:`applied_key`). ``reads`` counts the full reads (:func:`empathy.labels.ledger.open_ledger`) and
    ``updates`` the incremental ones, for the tests.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.ledger: Ledger | None = None
        self.version = -1
        self.stamps: dict[str, int] = {}
        self.generation = ""
        self.reads = 0
        self.updates = 0
        self.applied: dict[str, pd.DataFrame] = {}
        # per annotator: the (item, model, dimension, rater) of their own decisions, and those with an audit mark
        # (plus the mark); built from the ledger once, then patched with each update's changed rows
        self.own: dict[str, tuple[set[tuple], set[tuple]]] = {}
        # per (rater, dimension): the fresh decisions on it by output, each by (annotator, role); built from the
        # ledger once, then patched with each update's changed rows
        self.fresh_by_output: dict[tuple[str, str], _OutputIndex] = {}
        # per annotator: the (item, model, dimension, rater) of their own fresh decisions (role annotator); built
        # from the ledger once, then patched with each update's changed rows
        self.own_fresh: dict[str, set[tuple]] = {}
        # per data set (content key, unfiltered): its raters, when every applied override is of one of them (the
        # rater filter of :func:`applied` keeps the ledger's frame whole); dropped when a change brings another
        self.all_known: dict[str, frozenset[str]] = {}


#: Every how many updates of a held ledger the heap's freed pages are given back (:func:`_current`; and after each
#: full read). The splices' small Arrow arrays and the joins of a column's pieces leave freed blocks glibc keeps:
#: the Relabel server's resident set rose 10-16 MiB over its first 40 keys at 30,000 decision rows and its peak
#: moved by 12 MiB between runs (225-238 MiB); given back after the read and every 8 keys (a trim: 3-4 ms), the peak
#: was 221-223 MiB (docs/benchmarks.md).
TRIM_EVERY_UPDATES = 8


@st.cache_resource(show_spinner=False, max_entries=16)
def _held(path: str, name: str, rule: str, key: str) -> _Held:
    return _Held()


def _current(data: Loaded) -> _Held:
    """The held ledger of the data set under the session's label rule, brought to the store's version now.

    The first call (and one after the store's version went down: another store at the path, or after rows were
    written under the outputs' version 1 key) reads every decision (:func:`empathy.labels.ledger.open_ledger`, which
    also moves version 1 rows to the data set's name); later
    calls read only the decisions changed since (:meth:`~empathy.labels.sqlite.OverrideStore.changed_decisions`,
    O(changes)) and update the ledger (:func:`empathy.labels.ledger.updated_ledger`): a decision costs the same
    whatever the ledger's size.
    """
    key = data.base_key or data.content_key
    held = _held(data.store.label, data.dataset_id, label_rule(), key)
    version = data.store.version()
    if version == held.version and held.ledger is not None:
        return held
    with held.lock:  # one session updates; the others wait and find it current
        if held.ledger is not None and version == held.version:
            return held
        hashes, legacy = _output_hashes(key, data.all_data.outputs)
        # rows written since under the outputs' version 1 key (a tool of before the data sets' names): the full
        # read moves them to the data set's name, as at the first read
        moved = (legacy != data.dataset_id and held.ledger is not None
                 and data.store.changed_since(legacy, held.version))
        if held.ledger is None or version < held.version or moved:
            held.ledger = open_ledger(data.store, data.dataset_id, data.all_data.outputs, label_rule(), hashes=hashes,
                                      legacy_id=legacy)
            # the version read before: rows it moved from a version 1 key are read again, by key (harmless)
            held.version = version
            held.stamps, held.generation = {}, f"{held.version}.{uuid.uuid4().hex[:8]}"
            held.reads += 1
            held.own, held.fresh_by_output, held.own_fresh, held.all_known = {}, {}, {}, {}
            loading.release_freed_memory()  # the store's read: its chunks' objects and Arrow pieces, freed
        else:
            changed, rows = data.store.changed_decisions(data.dataset_id, held.version)
            held.ledger = updated_ledger(held.ledger, changed, rows, data.all_data.outputs, hashes=hashes)
            for annotator, sets in held.own.items():
                _patch_own(sets, annotator, changed, rows)
            if held.fresh_by_output or held.own_fresh:
                # an unchanged decision stays fresh or not while the outputs are the same: the changed rows' status
                fresh_rows = ledger_status(rows, data.all_data.outputs, hashes).fresh
                for (rater, dimension), index in held.fresh_by_output.items():
                    _patch_by_output(index, rater, dimension, changed, fresh_rows)
                for annotator, decided in held.own_fresh.items():
                    decided -= _own_sets(changed, annotator)[0]
                    decided |= _own_sets(fresh_rows, annotator)[0]
            # a rater outside a data set can enter the applied overrides only with a changed rating of theirs
            changed_raters = set(changed["rater"].astype(str).tolist())
            held.all_known = {key: raters for key, raters in held.all_known.items() if changed_raters <= raters}
            held.stamps.update(dict.fromkeys(changed["dimension"].astype(str), version))
            held.version = version
            held.updates += 1
            if held.updates % TRIM_EVERY_UPDATES == 1:
                loading.release_freed_memory()
        held.applied = {}
    return held


def own_fresh_decisions(data: Loaded, annotator: str) -> set[tuple]:
    """``annotator``'s own fresh decisions (role ``annotator``: :attr:`Ledger.status`'s ``fresh``) as
    ``(item_id, model, dimension, rater)``: a copy of a set built from the ledger once per full read and patched
    with each update's changed rows (a key does not select them from every decision)."""
    held = _current(data)
    with held.lock:
        decided = held.own_fresh.get(annotator)
        if decided is None:
            decided = held.own_fresh[annotator] = _own_sets(held.ledger.status.fresh, annotator)[0]
        return set(decided)


def _own_sets(decisions: pd.DataFrame, annotator: str) -> tuple[set[tuple], set[tuple]]:
    """The ``(item_id, model, dimension, rater)`` of ``annotator``'s own decisions (role ``annotator``) among
    ``decisions``, and those carrying an audit design's mark, with the mark."""
    if not len(decisions):
        return set(), set()
    mine = decisions[(decisions["annotator"] == annotator) & (decisions["role"] == "annotator")]
    decided = set(zip(mine["item_id"], mine["model"], mine["dimension"], mine["rater"], strict=True))
    # an audit decision is one carrying the design's mark: a decision from another order leaves the output to decide
    # in audit order
    if "audit_design" not in mine.columns:
        return decided, set()
    marked = mine[mine["audit_design"].fillna("").astype(str) != ""]
    return decided, set(zip(marked["item_id"], marked["model"], marked["dimension"], marked["rater"],
                            marked["audit_design"], strict=True))


def _patch_own(sets: tuple[set[tuple], set[tuple]], annotator: str, keys: pd.DataFrame, rows: pd.DataFrame) -> None:
    """:func:`_own_sets` of the ledger after the store changed ``keys`` (replaced by ``rows``), from the sets of
    before: the changed keys of ``annotator``'s own decisions taken out, their rows now put in (one row per key:
    :data:`~empathy.labels.schema.KEY_COLUMNS`, annotator and role)."""
    decided, audited = sets
    gone = _own_sets(keys.assign(audit_design="") if len(keys) else keys, annotator)[0]
    decided -= gone
    if gone:
        audited.difference_update({key for key in audited if key[:4] in gone})
    now, marked = _own_sets(rows, annotator)
    decided |= now
    audited |= marked


def own_decisions(data: Loaded, annotator: str) -> tuple[set[tuple], set[tuple]]:
    """``annotator``'s own decisions in the ledger now, as ``(item_id, model, dimension, rater)``, and those with an
    audit mark as ``(item_id, model, dimension, rater, audit_design)``: copies of sets built from the ledger once
    per full read and patched with each update's changed rows (a key does not select them from every decision)."""
    held = _current(data)
    with held.lock:
        sets = held.own.get(annotator)
        if sets is None:
            sets = held.own[annotator] = _own_sets(held.ledger.decisions, annotator)
        return set(sets[0]), set(sets[1])


#: The fields of a decision that :func:`empathy.labels.rules.decision_effects` (the live metric) and its
#: fingerprint in :func:`empathy_app.keyqueue.live_state` read, in the order of the decisions' columns: the index
#: keeps these only (a team's 10,000 rows of one judge's dimension as whole rows of fifteen fields cost 9 MiB at
#: the Relabel page's peak).
EFFECT_FIELDS: tuple[str, ...] = (*KEY_COLUMNS, "value", "annotator", "role", "updated_at", ORDER_COLUMN)


@functools.cache
def _effect_row(fields: tuple[str, ...]) -> type:
    return collections.namedtuple("Decision", fields)


#: The fields of :data:`EFFECT_FIELDS` whose values :class:`_OutputIndex` does not share between rows: a decision's
#: own time and commit, and its label (a number: equal numbers of two types, 1 and 1.0 or 0.0 and -0.0, are one key).
_OWN_VALUES = frozenset({"value", "updated_at", ORDER_COLUMN})


class _OutputIndex(dict):
    """The fresh decisions on one rater's dimension by output and then by (annotator, role) (:func:`_by_output`).

    ``shared`` holds each text that rows repeat (an item, a model, an annotator, a role) once, and the
    rows refer to it: read from Arrow, every row's fields were texts of their own, and a team's 10,000 rows held
    their items, models and annotators 10,000 times over (half the index's 6.8 MiB at Relabel's peak).
    """

    __slots__ = ("shared",)

    def __init__(self) -> None:
        super().__init__()
        self.shared: dict[object, object] = {}


def _by_output(frame: pd.DataFrame, rater: str, dimension: str,
               index: _OutputIndex | None = None) -> _OutputIndex:
    """The rows of ``frame`` (decisions) on ``rater``'s ``dimension``, by output and then by (annotator, role), as
    named tuples of :data:`EFFECT_FIELDS` (those ``frame`` has), put into ``index`` (a row replaces the one of the
    same output, annotator and role) or a new one; returned."""
    index = _OutputIndex() if index is None else index
    if len(frame):
        here = frame[(frame["rater"] == rater) & (frame["dimension"] == dimension)]
        fields = tuple(column for column in EFFECT_FIELDS if column in here.columns)
        make = _effect_row(fields)._make
        shared = index.shared
        columns = [here[column].tolist() if column in _OWN_VALUES
                   else [shared.setdefault(value, value) for value in here[column].tolist()] for column in fields]
        for row in map(make, zip(*columns, strict=True)):
            who = (str(row.annotator), str(row.role))
            index.setdefault((str(row.item_id), str(row.model)), {})[shared.setdefault(who, who)] = row
    return index


def _patch_by_output(index: _OutputIndex, rater: str, dimension: str, keys: pd.DataFrame,
                     fresh_rows: pd.DataFrame) -> None:
    """:func:`_by_output` of the fresh decisions after the store changed ``keys`` (``fresh_rows``: the fresh ones
    of their rows now), from the index of before (one row per key: :data:`~empathy.labels.schema.KEY_COLUMNS`,
    annotator and role; an unchanged decision stays fresh or not while the outputs are the same)."""
    if len(keys):
        mine = keys[(keys["rater"] == rater) & (keys["dimension"] == dimension)]
        for item, model, annotator, role in zip(mine["item_id"], mine["model"], mine["annotator"], mine["role"],
                                                strict=True):
            rows = index.get((str(item), str(model)))
            if rows is not None:
                rows.pop((str(annotator), str(role)), None)
                if not rows:
                    del index[(str(item), str(model))]
    _by_output(fresh_rows, rater, dimension, index)


def fresh_rows_of(data: Loaded, decisions: pd.DataFrame, rater: str, dimension: str,
                  pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], list[tuple]] | None:
    """The rows of ``decisions`` on ``rater``'s ``dimension`` for each of ``pairs`` (``(item_id, model)``) that has
    some, in the frame's order (by annotator, then role), when ``decisions`` is the held ledger's fresh decisions
    (:attr:`Ledger.status`); ``None`` for any other frame. Looked up in an index of the fresh decisions built once
    per full read and patched with each update's changed rows (a key does not select them from every decision)."""
    held = _current(data)
    if held.ledger is None or decisions is not held.ledger.status.fresh:
        return None
    with held.lock:
        index = held.fresh_by_output.get((rater, dimension))
        if index is None:
            index = held.fresh_by_output[(rater, dimension)] = _by_output(decisions, rater, dimension)
        return {pair: [rows[key] for key in sorted(rows)] for pair in dict.fromkeys(pairs)
                if (rows := index.get(pair))}


def output_hash_map(data: Loaded) -> dict[tuple[str, str], str]:
    """:func:`empathy.labels.records.output_hashes` of the loaded outputs (computed once per data set, shared)."""
    return _output_hashes(data.base_key or data.content_key, data.all_data.outputs)[0]


def output_keys(data: Loaded) -> AbstractSet[tuple[str, str]]:
    """The ``(item_id, model)`` of every loaded output, as a set (computed once per data set, shared)."""
    return output_hash_map(data).keys()


def label_rule() -> str:
    """The session's label rule (latest / majority / adjudicated), chosen on Relabel."""
    return str(st.session_state.get(session_keys.LABEL_RULE, "latest"))


def ledger(data: Loaded) -> Ledger:
    """The data set's decisions sorted against its outputs: applied, stale, orphaned, unresolved.

    Under the session's label rule (:func:`label_rule`). Brought up to date whenever the store changed (any
    session, any process: :meth:`OverrideStore.version` is read on every call) from the decisions changed since,
    else shared; version 1 rows of the same outputs are moved to the data set's name at the first read. Callers
    must not modify the frames.
    """
    return _current(data).ledger


def applied(data: Loaded) -> pd.DataFrame:
    """The overrides that apply to the data set now, read from the store on every rerun (other sessions' included).

    Only those of raters in the data set and, under a task filter, of that task's outputs: any other would
    enter the ratings as a new row (:func:`empathy.labels.ledger.apply_overrides` adds unmatched overrides), e.g. as
    a phantom rater after a rater added on the Judge page was removed or the session ended. Kept per ledger and
    data set (the same frame for every call until the store changes).
    """
    held = _current(data)
    found = held.applied.get(data.content_key)
    if found is not None:
        return found
    table = held.ledger.applied  # stale, orphaned and unresolved decisions are never applied
    raters = frozenset(map(str, data.all_data.raters))  # a rater added or removed on the Judge page counts
    if len(table) and (data.filtered or held.all_known.get(data.content_key) != raters):
        keep = table["rater"].astype(str).isin(data.all_data.raters).to_numpy(copy=True)
        if not data.filtered and keep.all():  # known so until a change brings a rater outside the data set
            held.all_known[data.content_key] = raters
        if data.filtered:
            keys = pd.MultiIndex.from_frame(data.dataset.outputs[["item_id", "model"]])
            keep &= pd.MultiIndex.from_frame(table[["item_id", "model"]].astype(str)).isin(keys)
        table = table if keep.all() else table[keep].reset_index(drop=True)
    if table is held.ledger.applied and "decision_counts" in held.ledger.__dict__:
        # its decision count is known (kept up to date per key): the report's signature does not count it again
        from empathy.review import remember_decision_count

        remember_decision_count(table, held.ledger.decision_counts["applied"])
    held.applied[data.content_key] = table
    return table


def applied_key(data: Loaded, dimensions: Sequence[str] | None = None) -> str:
    """A key naming :func:`applied` (of ``dimensions`` only, when given) without hashing it: the ledger's full read
    and the store's version at which those dimensions' decisions last changed.

    Equal keys, equal overrides (any change to a dimension's decisions, of any session, stamps it with the
    store's new version); a decision on CA leaves the key of the other dimensions as it was, so what is computed
    from those stays cached. ``"none"`` when no override applies (the same as :func:`overrides_key`).
    """
    table = applied(data)
    if table is None or table.empty:
        return "none"
    # whether any applies to those dimensions (a mask, not a selection of every column of the rows)
    if dimensions is not None and not table["dimension"].isin(list(dimensions)).any():
        return "none"
    held = _current(data)
    chosen = sorted(held.stamps) if dimensions is None else sorted(map(str, dimensions))
    stamps = ",".join(f"{d}@{held.stamps[d]}" for d in chosen if d in held.stamps)
    return f"{held.generation}|{label_rule()}|{stamps}"


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
