"""Agreement workbench views: rater pairs, panels, LLM vs experts under the current overrides, stability.

The statistics come from :mod:`empathy.agreement`, :mod:`empathy.panels` and :mod:`empathy.stability`; this
module keeps them and draws them. ``app_pages/6_Workbench.py`` only lays it out.

What it keeps (issue 25: a rerun computes nothing, a decision recomputes what it touches): per data set and
dimension, the units x raters matrix of the judges' labels (:func:`dimension_matrix_of`; the overrides of the
dimension are written into a copy), per dimension the pair rows as contingency tables with every bootstrap
resample's table (:class:`PairTable`, patched for the units a decision changed), and every other table per (data
set, the overrides of the dimensions it reads): a decision on CA leaves the other dimensions' tables as they are.
The overrides are read once per run (:func:`overrides_now`). Where the matrices do not hold (an override filling a
gap, imported panels, a reference dimension) a table is computed from the effective ratings
(``*_from_ratings``); the tests compare the fast path with the straightforward computation, which they hold.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from empathy.agreement import (
    PairCounts,
    _rater_matrix,
    _unit_items,
    cohen_kappa,
    default_alpha_level,
    interval_warning,
    krippendorff_alpha,
    pair_row,
    pairwise_agreement,
    resample_counts,
    spearman_interval,
)
from empathy.labels.decisions import pair_decisions
from empathy.metrics import REFERENCE_DIMENSIONS
from empathy.panels import (
    MIN_PANEL_MEMBERS,
    NO_PANEL_KINDS,
    PANEL_PREFIX,
    compare_panels,
    default_panels,
    is_panel,
    panel_name,
    panel_ratings,
    rater_vs_panel,
    round_half_up,
)
from empathy.stability import (
    StabilityResult,
    dimension_matrix,
    metric_matrix,
    metric_terms,
    sample_size_stability,
)
from empathy_app import compute, session_keys
from empathy_app.loading import Loaded
from empathy_app.markup import hover_literal, html, md
from empathy_app.overrides import overrides_key
from empathy_app.views import interval_warnings

#: Float columns shown with three decimals (the data keeps full precision; tests read the exact value).
FLOAT_COLUMNS = ("spearman", "spearman_low", "spearman_high", "pearson", "kappa", "kappa_quadratic",
                 "kappa_quadratic_rounded", "percent_agreement", "krippendorff_alpha", "before", "after",
                 "change", "mean", "sd", "value", "n_units_mean", "same_ranking")


def _plain(ratings: pd.DataFrame) -> pd.DataFrame:
    return ratings.drop(columns=["overridden"], errors="ignore")


# ------------------------------------------------------------------ one dimension's units x raters, patched
#
# What the tables read of a dimension is its units x raters matrix (:func:`empathy.agreement._rater_matrix`). It is
# built once per data set from the judges' ratings; the overrides of that dimension (a handful) are written into a
# copy, so a decision costs a look-up of its cells, not a pass over millions of rating rows. Where that does not
# hold (an override filling a gap: a new unit or rater; an override of a dimension judged once per reference,
# whose unit is the mean of an item's copies) the matrix is built from the effective ratings, as before.


@dataclass
class DimensionMatrix:
    """Units x raters values of one dimension (NaN = not rated), as :func:`empathy.agreement._rater_matrix`."""

    dimension: str
    values: np.ndarray
    raters: list[str]
    clusters: np.ndarray | None  # each unit's item when units are (item, model) rows (cluster bootstrap)
    n_outputs: int  # distinct (item, model) rated on the dimension


@dataclass
class _Base:
    matrix: DimensionMatrix
    units: pd.MultiIndex | None  # (item_id, model) of each unit, None for a reference dimension
    kinds: dict[str, str]
    kind_pairs: tuple[tuple[str, str], ...]  # the distinct (rater, rater_kind) of the dimension
    present: np.ndarray | None  # whether each (unit, rater) cell has a rating row (NaN values too), as ``units``


#: Counted work, for the tests (``<what>:<dimension>``): a matrix built from rating rows, a pair's tables built or
#: patched, a live comparison, a stability table, a panel table, the raters' facts.
COUNTS: collections.Counter[str] = collections.Counter()


def _matrix_of(part: pd.DataFrame, dimension: str) -> tuple[DimensionMatrix, pd.Index]:
    COUNTS[f"matrix:{dimension}"] += 1
    matrix = _rater_matrix(part, dimension)
    outputs = len(part[["item_id", "model"]].drop_duplicates()) if len(part) else 0
    return DimensionMatrix(dimension, matrix.to_numpy(dtype=float), [str(c) for c in matrix.columns],
                           _unit_items(matrix), outputs), matrix.index


@st.cache_resource(show_spinner=False, max_entries=16)
def _base(key: str, dimension: str, _ratings: pd.DataFrame) -> _Base:
    """The dimension's matrix of the judges' own ratings, once per data set."""
    rows = compute._dimension_rows(key, _ratings).get(dimension, np.empty(0, dtype=np.int64))
    part = _plain(_ratings.iloc[rows])
    matrix, index = _matrix_of(part, dimension)
    units = None
    if isinstance(index, pd.MultiIndex):  # (item_id, model) rows; a reference dimension's units are items
        units = pd.MultiIndex.from_arrays([index.get_level_values(k).astype(str).to_numpy(dtype=object)
                                           for k in range(2)])
    kinds, pairs = {}, ()
    if "rater_kind" in part.columns:
        distinct = part[["rater", "rater_kind"]].fillna({"rater_kind": ""}).drop_duplicates()
        pairs = tuple(zip(distinct["rater"].astype(str), distinct["rater_kind"].astype(str), strict=True))
        first = distinct.drop_duplicates("rater")
        kinds = dict(zip(first["rater"].astype(str), first["rater_kind"].astype(str), strict=True))
    present = None
    if units is not None:
        present = ~np.isnan(matrix.values)
        missing = part[part["value"].isna()]  # rows without a value (a reason instead): few
        if len(missing):
            keys = [missing[c].astype(str).to_numpy(dtype=object) for c in ("item_id", "model")]
            rows = units.get_indexer(pd.MultiIndex.from_arrays(keys))
            present[rows, pd.Index(matrix.raters).get_indexer(missing["rater"].astype(str))] = True
    return _Base(matrix, units, kinds, pairs, present)


@st.cache_resource(show_spinner=False, max_entries=8)
def _row_keys(key: str, dimension: str, _ratings: pd.DataFrame) -> pd.MultiIndex:
    """The (item_id, model, rater) of the dimension's rating rows (for a dimension judged once per reference)."""
    rows = compute._dimension_rows(key, _ratings).get(dimension, np.empty(0, dtype=np.int64))
    part = _ratings.iloc[rows]
    return pd.MultiIndex.from_arrays([part[c].astype(str).to_numpy(dtype=object)
                                      for c in ("item_id", "model", "rater")])


@st.cache_data(show_spinner=False, max_entries=16)
def _fills_a_gap(key: str, okey: str, _data: Loaded, _current: pd.DataFrame) -> bool:
    """Whether an override adds a rating no judge gave (:class:`empathy.review.EffectiveRatings` then adds a row),
    found from the dimensions' matrices instead of an index of every rating."""
    COUNTS["gap_check"] += 1
    known = set(compute.dimensions_of(_data))
    for dimension, mine in _current.groupby(_current["dimension"].astype(str), sort=True):
        if dimension not in known:
            return True
        table = mine.drop_duplicates(["item_id", "model", "rater"], keep="last")
        columns = [table[c].astype(str).to_numpy(dtype=object) for c in ("item_id", "model", "rater")]
        base = _base(key, dimension, _data.dataset.ratings)
        if base.present is None:
            if not pd.MultiIndex.from_arrays(columns).isin(_row_keys(key, dimension, _data.dataset.ratings)).all():
                return True
            continue
        rows = base.units.get_indexer(pd.MultiIndex.from_arrays(columns[:2]))
        raters = pd.Index(base.matrix.raters).get_indexer(columns[2])
        if (rows < 0).any() or (raters < 0).any() or not base.present[rows, raters].all():
            return True
    return False


def _patched(base: _Base, mine: pd.DataFrame) -> np.ndarray | None:
    """The base matrix with the dimension's overrides written in; ``None`` when one does not fit a cell."""
    if base.units is None:
        return None
    table = mine.drop_duplicates(["item_id", "model", "rater"], keep="last")
    keys = pd.MultiIndex.from_arrays([table["item_id"].astype(str).to_numpy(dtype=object),
                                      table["model"].astype(str).to_numpy(dtype=object)])
    rows = base.units.get_indexer(keys)
    columns = pd.Index(base.matrix.raters).get_indexer(table["rater"].astype(str))
    if (rows < 0).any() or (columns < 0).any():
        return None
    values = base.matrix.values.copy()
    values[rows, columns] = table["value"].to_numpy(dtype=float)
    return values


@dataclass
class Now:
    """What one run of the page reads of the overrides, read once (each read asks the store for its version): the
    applied overrides under the sidebar's toggle (``None`` without), split by dimension on demand, each part named
    by a hash of its rows (a few rows: a decision on CA changes CA's key only)."""

    data: Loaded
    current: pd.DataFrame | None
    gap: bool  # an applied override adds a rating no judge gave (the effective ratings have more rows)
    _parts: dict[str, tuple[pd.DataFrame | None, str]] = dataclasses.field(default_factory=dict)

    def of(self, dimension: str) -> tuple[pd.DataFrame | None, str]:
        """The dimension's applied overrides (``None`` without) and their key (``"none"`` without)."""
        if dimension not in self._parts:
            mine = None
            if self.current is not None and len(self.current):
                mine = self.current[self.current["dimension"].astype(str) == dimension]
                mine = None if mine.empty else mine
            self._parts[dimension] = (mine, overrides_key(mine))
        return self._parts[dimension]

    def key(self, dimensions: Sequence[str] | None = None) -> str:
        """A key naming the effective ratings of ``dimensions`` (all by default) of this data set."""
        if dimensions is None:
            return f"{self.data.content_key}:{overrides_key(self.current)}"
        return self.data.content_key + ":" + ",".join(f"{d}={self.of(d)[1]}" for d in sorted(dimensions))


def overrides_now(data: Loaded, *, with_overrides: bool | None = None) -> Now:
    """The overrides of this run (under the sidebar's toggle, or as asked): call once per run, pass it on."""
    current = compute.overrides_used(data, with_overrides)
    gap = False
    if current is not None and len(current):
        gap = _fills_a_gap(data.content_key, overrides_key(current), data, current)
    return Now(data, current, gap)


@st.cache_resource(show_spinner=False, max_entries=32)
def _effective_matrix(key: str, dimension: str, okey: str, _data: Loaded, _mine: pd.DataFrame | None
                      ) -> DimensionMatrix:
    base = _base(key, dimension, _data.dataset.ratings)
    if _mine is None:
        return base.matrix
    values = _patched(base, _mine)
    if values is not None:
        return dataclasses.replace(base.matrix, values=values)
    effective = compute.effective_ratings(_data)
    return _matrix_of(_plain(effective[effective["dimension"] == dimension]), dimension)[0]


def dimension_matrix_of(now: Now, dimension: str) -> DimensionMatrix:
    """The units x raters matrix of ``dimension`` of the effective ratings, kept per (data set, the dimension's
    overrides): the judges' matrix with the overrides written in."""
    mine, okey = now.of(dimension)
    return _effective_matrix(now.data.content_key, dimension, okey, now.data, mine)


def rater_kinds(now: Now, dimension: str) -> dict[str, str]:
    """``rater_kind`` of each rater of the dimension (empty when the data have none)."""
    return _base(now.data.content_key, dimension, now.data.dataset.ratings).kinds


# --------------------------------------------------------------------------------------- every pair of raters


class PairTable:
    """The pair rows of one dimension at one bootstrap and seed, kept and patched as the dimension's labels change.

    :meth:`update` with the same matrix returns the rows as they are (a rerun computes nothing); with a new matrix
    (a decision) it finds the units whose values changed and patches each pair's contingency tables
    (:class:`empathy.agreement.PairCounts`: the statistics and every bootstrap resample) for those units only.
    Pairs on continuous scores (more than :data:`empathy.agreement.MAX_TABLE_CATEGORIES` values) and changes that
    add a pair or a value are computed again, straightforwardly (:func:`empathy.agreement.pair_row`).
    """

    def __init__(self, dimension: str, bootstrap: int, seed: int) -> None:
        self.dimension, self.bootstrap, self.seed = dimension, bootstrap, seed
        self.lock = threading.Lock()
        self.matrix: DimensionMatrix | None = None
        self.counts: dict[tuple[str, str], PairCounts | None] = {}
        self.rows: dict[tuple[str, str], dict[str, object]] = {}
        self.table: pd.DataFrame | None = None

    def _resample_counts(self, n_units: int) -> np.ndarray:
        return _draws(n_units, self.bootstrap, self.seed)

    def _build(self, matrix: DimensionMatrix, i: int, j: int) -> tuple[PairCounts | None, dict[str, object]]:
        COUNTS[f"pair_built:{self.dimension}"] += 1
        x, y = matrix.values[:, i], matrix.values[:, j]
        counts = PairCounts.build(x, y, matrix.clusters, n_resamples=self.bootstrap, seed=self.seed,
                                  draws=self._resample_counts)
        if counts is not None:
            return counts, counts.row()
        row = pair_row(x, y)
        if self.bootstrap:  # continuous scores: the same interval from the shared draws, ranks by weight
            ci = spearman_interval(x, y, matrix.clusters, n_resamples=self.bootstrap, seed=self.seed,
                                   draws=self._resample_counts)
            row.update({"spearman_low": ci.low, "spearman_high": ci.high,
                        "warning": interval_warning({"spearman": ci})})
        return None, row

    def update(self, matrix: DimensionMatrix) -> pd.DataFrame:
        """The rows of ``matrix``'s pairs (columns as :func:`empathy.agreement.pairwise_agreement`)."""
        with self.lock:
            if matrix is self.matrix and self.table is not None:
                return self.table
            names = sorted(matrix.raters)
            position = {name: k for k, name in enumerate(matrix.raters)}
            previous = self.matrix
            same_shape = (previous is not None and previous.raters == matrix.raters
                          and previous.values.shape == matrix.values.shape)
            changed = np.empty(0, dtype=np.int64)
            if same_shape:
                old, new = previous.values, matrix.values
                differs = (old != new) & ~(np.isnan(old) & np.isnan(new))
                changed = np.flatnonzero(differs.any(axis=1))
            for rater_a, rater_b in itertools.combinations(names, 2):
                i, j = position[rater_a], position[rater_b]
                pair = (rater_a, rater_b)
                if same_shape and pair in self.rows:
                    touched = changed[(differs[changed, i] | differs[changed, j])]
                    if not len(touched):
                        continue
                    counts = self.counts.get(pair)
                    if counts is not None and all(counts.change(int(u), (old[u, i], old[u, j]),
                                                                (new[u, i], new[u, j])) for u in touched):
                        COUNTS[f"pair_patched:{self.dimension}"] += 1
                        self.rows[pair] = counts.row()
                        continue
                self.counts[pair], self.rows[pair] = self._build(matrix, i, j)
            columns = ["dimension", "rater_a", "rater_b", "n", "spearman", "pearson", "kappa", "kappa_quadratic",
                       "percent_agreement"] + (["spearman_low", "spearman_high", "warning"] if self.bootstrap
                                               else [])
            rows = [{"dimension": self.dimension, "rater_a": a, "rater_b": b, **self.rows[(a, b)]}
                    for a, b in itertools.combinations(names, 2)]
            table = pd.DataFrame(rows, columns=columns)
            data = matrix.values.T
            level = default_alpha_level(data.ravel(), self.dimension)
            table["krippendorff_alpha"] = krippendorff_alpha(data, level) if len(data) else None
            table["alpha_level"] = level
            self.matrix, self.table = matrix, _floats(table)
            return self.table


@st.cache_resource(show_spinner=False, max_entries=4)
def _draws(n_units: int, bootstrap: int, seed: int) -> np.ndarray:
    """The bootstrap's draws as counts per unit and resample (one byte each: 10 MB at 500 resamples of 20,000
    items), shared by every pair and dimension with as many units."""
    COUNTS["draws"] += 1
    return resample_counts(n_units, bootstrap, seed)


@st.cache_resource(show_spinner=False, max_entries=16)
def _pair_holder(key: str, dimension: str, bootstrap: int, seed: int) -> PairTable:
    return PairTable(dimension, bootstrap, seed)


def pair_table(now: Now, dimensions: Sequence[str], bootstrap: int, seed: int) -> pd.DataFrame:
    """Every pair of raters on the dimensions: Spearman with CI, kappa, and Krippendorff's alpha (as
    :func:`empathy.agreement.pairwise_agreement` and :func:`~empathy.agreement.krippendorff_by_dimension` of the
    effective ratings). Kept per dimension: a decision on CA leaves the other dimensions' rows as they are, and
    patches CA's pairs (:class:`PairTable`)."""
    parts = []
    for dimension in dimensions:
        matrix = dimension_matrix_of(now, dimension)
        if not matrix.raters:
            continue
        parts.append(_pair_holder(now.data.content_key, dimension, bootstrap, seed).update(matrix))
    if not parts:
        return _floats(pd.DataFrame(columns=["dimension", "rater_a", "rater_b", "n", "spearman", "pearson", "kappa",
                                             "kappa_quadratic", "percent_agreement"]
                                    + (["spearman_low", "spearman_high", "warning"] if bootstrap else [])
                                    + ["krippendorff_alpha", "alpha_level"]))
    return pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]


@st.cache_data(show_spinner=False, max_entries=32)
def _provenance(key: str, _pairs: pd.DataFrame, _applied: pd.DataFrame | None) -> pd.DataFrame:
    return pair_provenance(_pairs, _applied)


def pair_provenance_of(now: Now, pairs: pd.DataFrame, dimensions: Sequence[str]) -> pd.DataFrame:
    """:func:`pair_provenance` of :func:`pair_table`'s rows, kept per (data set, the dimensions' overrides)."""
    return _provenance(now.key(dimensions), pairs, now.current)


def pair_provenance(pairs: pd.DataFrame, applied: pd.DataFrame | None) -> pd.DataFrame:
    """Per rater pair of :func:`pair_table` (``dimension``, ``rater_a``, ``rater_b``), the human decisions in the two
    raters' labels and the warning where both carry the same human label
    (:func:`empathy.labels.decisions.pair_decisions`); ``applied``: the overrides the pairs were computed with, or
    ``None`` for the raters' own labels."""
    rows = []
    for record in pairs[["dimension", "rater_a", "rater_b"]].to_dict("records"):
        found = pair_decisions(applied, record["rater_a"], record["rater_b"], [record["dimension"]])
        rows.append({**record, "human_decisions": found.decisions, "warning": found.warning})
    return pd.DataFrame(rows, columns=["dimension", "rater_a", "rater_b", "human_decisions", "warning"])


# ---------------------------------------------------------------------------------------------------- panels


def _comparable(kinds: dict[str, str], raters: Sequence[str]) -> int:
    """How many raters :func:`empathy.panels.compare_panels` can compare at most on raters with these kinds: a
    panel per kind of two or more raters (not crowd) plus every crowd rater."""
    by_kind = collections.Counter(kinds.get(r, "") for r in raters if not is_panel(r))
    panels = sum(1 for kind, count in by_kind.items() if kind not in NO_PANEL_KINDS and count >= MIN_PANEL_MEMBERS)
    return panels + by_kind.get("crowd", 0)


def _empty_panels(bootstrap: int) -> pd.DataFrame:
    """The columns :func:`empathy.panels.compare_panels` gives when there is nothing to compare."""
    columns = ["dimension", "rater_a", "rater_b", "n", "spearman", "pearson", "kappa", "kappa_quadratic",
               "kappa_quadratic_rounded", "percent_agreement"]
    if bootstrap:
        columns = columns[:5] + ["spearman_low", "spearman_high"] + columns[5:] + ["warning"]
    return _floats(pd.DataFrame(columns=columns))


def _dimension_rows_of(now: Now, dimension: str) -> pd.DataFrame:
    """The effective rating rows of one dimension (its rows found once per data set)."""
    effective = compute.effective_ratings(now.data)
    if now.gap:
        return _plain(effective[effective["dimension"] == dimension])
    rows = compute._dimension_rows(now.data.content_key, now.data.dataset.ratings).get(
        dimension, np.empty(0, dtype=np.int64))
    return _plain(effective.iloc[rows])


@st.cache_data(show_spinner=False, max_entries=64)
def _panel_part(key: str, dimension: str, panels: tuple[tuple[str, tuple[str, ...]], ...], bootstrap: int,
                seed: int, _ratings: pd.DataFrame) -> pd.DataFrame:
    COUNTS[f"panel_table:{dimension}"] += 1
    raters = set(_ratings["rater"].astype(str))
    chosen = {name: [m for m in members if m in raters] for name, members in panels}
    return compare_panels(_ratings, {name: members for name, members in chosen.items() if members},
                          dimensions=[dimension], bootstrap=bootstrap, seed=seed)


@st.cache_data(show_spinner=False, max_entries=16)
def _panel_table(key: str, _ratings: pd.DataFrame, dimensions: tuple[str, ...], bootstrap: int, seed: int
                 ) -> pd.DataFrame:
    COUNTS[f"panel_table:{','.join(dimensions)}"] += 1
    ratings = _plain(_ratings)
    return _floats(compare_panels(ratings[ratings["dimension"].isin(dimensions)], dimensions=list(dimensions),
                                  bootstrap=bootstrap, seed=seed))


def panel_table(now: Now, dimensions: Sequence[str], bootstrap: int, seed: int) -> pd.DataFrame:
    """Panels (by rater_kind) compared with each other and the crowd (:func:`empathy.panels.compare_panels` of the
    effective ratings of the dimensions).

    The panels are those of the dimensions' raters together (as there); each dimension's rows are kept per (data
    set, that dimension's overrides), so a decision on CA recomputes CA's rows only. Without two panels, or a panel
    and a crowd rater, there is nothing to compare: the empty table comes without a pass over the ratings.
    """
    bases = [_base(now.data.content_key, d, now.data.dataset.ratings) for d in dimensions]
    pairs = sorted({pair for base in bases for pair in base.kind_pairs})
    kinds = dict(pairs)
    raters = sorted({r for d in dimensions for r in dimension_matrix_of(now, d).raters})
    mixed = len(kinds) < len(pairs)  # a rater of two kinds: the straightforward path
    if not now.gap and not mixed and _comparable(kinds, raters) < 2:
        return _empty_panels(bootstrap)
    if now.gap or mixed or _rater_facts(now.data).imported_panels:
        return _panel_table(now.key(dimensions), compute.effective_ratings(now.data), tuple(dimensions), bootstrap,
                            seed)
    panels = default_panels(pd.DataFrame(pairs, columns=["rater", "rater_kind"]))
    chosen = tuple((name, tuple(members)) for name, members in panels.items())
    parts = [_panel_part(now.key([d]), d, chosen, bootstrap, seed, _dimension_rows_of(now, d)) for d in dimensions]
    return _floats(pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0])


# ------------------------------------------------------------------------- live: each rater vs a reference


@dataclass(frozen=True)
class _Raters:
    """What the page reads of the raters, once per data set: names, first rater_kind, who has a value, panels."""

    names: tuple[str, ...]
    kinds: dict[str, str]
    with_value: frozenset[str]
    panels: dict[str, list[str]]
    imported_panels: bool  # panel:* raters in the data themselves (then the straightforward path)


@st.cache_data(show_spinner=False, max_entries=8)
def _raters(key: str, _ratings: pd.DataFrame) -> _Raters:
    COUNTS["raters"] += 1
    ratings = _plain(_ratings)
    names = tuple(str(r) for r in pd.unique(ratings["rater"]))
    kinds: dict[str, str] = {}
    pairs = pd.DataFrame(columns=["rater", "rater_kind"])
    if "rater_kind" in ratings.columns:
        pairs = ratings[["rater", "rater_kind"]].drop_duplicates()
        first = pairs.drop_duplicates("rater")
        kinds = dict(zip(first["rater"].astype(str), first["rater_kind"].fillna("").astype(str), strict=True))
    counted = ratings.groupby("rater", observed=True)["value"].count()
    with_value = frozenset(str(r) for r, c in counted.items() if c > 0)
    imported = any(is_panel(r) for r in names)
    return _Raters(names, kinds, with_value, default_panels(pairs) if len(pairs) and not imported else {}, imported)


def _rater_facts(data: Loaded) -> _Raters:
    return _raters(data.content_key, data.dataset.ratings)


def comparison_targets(now: Now) -> list[str]:
    """What the individual raters can be compared with: the panels first, then every rater (as
    :func:`empathy.panels.panel_ratings` of the effective ratings would give; once per data set: an override only
    ever gives a rater a value)."""
    facts = _rater_facts(now.data)
    if facts.imported_panels or now.gap:
        return _targets_from_ratings(now.key(), compute.effective_ratings(now.data))
    current = now.current
    valued = facts.with_value | (set() if current is None else set(current["rater"].astype(str)))
    panels = sorted(panel_name(name) for name, members in facts.panels.items() if valued & set(members))
    return panels + sorted(r for r in facts.names if not is_panel(r))


@st.cache_data(show_spinner=False, max_entries=8)
def _targets_from_ratings(key: str, _ratings: pd.DataFrame) -> list[str]:
    """:func:`comparison_targets` from the effective ratings: where an override fills a gap or the data bring panels."""
    with_panels = panel_ratings(_plain(_ratings))
    panels = sorted(r for r in with_panels["rater"].unique() if is_panel(r))
    return panels + sorted(r for r in _ratings["rater"].unique() if not is_panel(r))


def rater_kind_of(data: Loaded) -> dict[str, str]:
    """Each rater's ``rater_kind`` (its first row's), once per data set."""
    return _rater_facts(data).kinds


def raters_on(now: Now, dimension: str) -> list[str]:
    """The raters with a rating row on ``dimension`` in the effective ratings, sorted."""
    if now.gap:
        effective = compute.effective_ratings(now.data)
        return sorted(effective.loc[effective["dimension"] == dimension, "rater"].unique())
    return sorted(dimension_matrix_of(now, dimension).raters)


def _against(ratings: pd.DataFrame, target: str, raters: list[str], dimension: str) -> pd.DataFrame:
    table = panel_ratings(_plain(ratings))
    table = table[table["dimension"] == dimension]
    if is_panel(target):
        return rater_vs_panel(table, target, raters=raters, dimensions=[dimension])
    rows = []
    for rater in raters:
        pairs = pairwise_agreement(table, dimensions=[dimension], raters=[rater, target])
        if len(pairs):
            rows.append(pairs.iloc[0].drop(["rater_a", "rater_b"]).to_dict()
                        | {"rater": rater, "panel": target, "kappa_quadratic_rounded": None})
    return pd.DataFrame(rows)


def _against_matrix(matrix: DimensionMatrix, facts: _Raters, target: str, raters: list[str]) -> pd.DataFrame:
    """:func:`_against` read from the dimension's matrix: a panel is its members' mean per unit (NaN skipped), a
    pair's statistics come from its contingency table where the labels are discrete."""
    COUNTS[f"against:{matrix.dimension}"] += 1
    position = {name: k for k, name in enumerate(matrix.raters)}
    values = matrix.values
    if is_panel(target):
        members = [position[m] for m in facts.panels.get(target.removeprefix(PANEL_PREFIX), []) if m in position]
        present = ~np.isnan(values[:, members]) if members else np.zeros((len(values), 0), dtype=bool)
        if not present.any():
            raise ValueError(f"rater_vs_panel: no rater {target!r} in the ratings; add it with panel_ratings()")
        with np.errstate(invalid="ignore", divide="ignore"):
            reference = np.where(present, values[:, members], 0.0).sum(axis=1) / present.sum(axis=1)
        individual = [k for name, k in position.items() if facts.kinds.get(name, "") != "crowd"]
        whole = values[:, individual]
        whole = whole[~np.isnan(whole)]
        integer = bool(len(whole)) and bool(np.all(whole == np.floor(whole)))
    else:
        reference = values[:, position[target]] if target in position else None
        integer = False
    rows = []
    for rater in raters:
        if rater == target or is_panel(rater) or rater not in position or reference is None:
            continue
        x = values[:, position[rater]]
        counts = PairCounts.build(x, reference, None)
        row = counts.row() if counts is not None else pair_row(x, reference)
        rounded = (cohen_kappa(round_half_up(x), round_half_up(reference), weights="quadratic")
                   if integer else None)
        rows.append({"dimension": matrix.dimension, "rater": rater, "panel": target, **row,
                     "kappa_quadratic_rounded": rounded})
    return pd.DataFrame(rows)


@st.cache_data(show_spinner=False, max_entries=64)
def _against_cached(key: str, okey: str, dimension: str, target: str, raters: tuple[str, ...],
                    _matrix: DimensionMatrix, _facts: _Raters) -> pd.DataFrame:
    return _against_matrix(_matrix, _facts, target, list(raters))


def _overridden_counts(mine: pd.DataFrame | None) -> pd.Series:
    if mine is None:
        return pd.Series(dtype=int)
    return mine.drop_duplicates(["item_id", "model", "rater"], keep="last").groupby(
        mine["rater"].astype(str)).size()


def live_agreement(now: Now, target: str, raters: tuple[str, ...], dimension: str) -> pd.DataFrame:
    """Each rater's agreement with ``target`` on ``dimension`` without and with the overrides.

    Columns: rater, n, overridden (this rater's overridden ratings on the dimension), spearman before/after,
    change, kappa_quadratic before/after (``None`` for fractional values). The *before* side is computed once per
    data set; the *after* side once per set of the dimension's overrides, from the dimension's matrix (a decision
    on another dimension leaves it as it is).
    """
    data = now.data
    facts = _rater_facts(data)
    if not raters:
        return _live_columns()
    if dimension in REFERENCE_DIMENSIONS or facts.imported_panels or now.gap:
        return _live_from_ratings(now.key([dimension]), compute.effective_ratings(data, with_overrides=False),
                              compute.effective_ratings(data), target, raters, dimension)
    before = _against_cached(data.content_key, "none", dimension, target, raters,
                             _base(data.content_key, dimension, data.dataset.ratings).matrix, facts)
    mine, okey = now.of(dimension)
    after = before if mine is None else _against_cached(data.content_key, okey, dimension, target, raters,
                                                        dimension_matrix_of(now, dimension), facts)
    return _live_table(before, after, _overridden_counts(mine))


@st.cache_data(show_spinner=False, max_entries=32)
def _live_from_ratings(key: str, _before: pd.DataFrame, _after: pd.DataFrame, target: str,
                       raters: tuple[str, ...], dimension: str) -> pd.DataFrame:
    """:func:`live_agreement` from the effective ratings without (``_before``) and with (``_after``) the overrides:
    for a reference dimension, imported panels or an override that fills a gap."""
    if "overridden" in _after.columns:
        part = _after[(_after["dimension"] == dimension) & _after["overridden"].astype(bool)]
        counts = part.groupby("rater").size()
    else:
        counts = pd.Series(dtype=int)
    return _live_table(_against(_before, target, list(raters), dimension),
                       _against(_after, target, list(raters), dimension), counts)


_LIVE_COLUMNS = ["rater", "n", "overridden", "spearman_before", "spearman_after", "change",
                 "kappa_quadratic_before", "kappa_quadratic_after", "kappa_quadratic_rounded_before",
                 "kappa_quadratic_rounded_after"]


def _live_columns() -> pd.DataFrame:
    return pd.DataFrame(columns=_LIVE_COLUMNS)


def _live_table(before: pd.DataFrame, after: pd.DataFrame, counts: pd.Series) -> pd.DataFrame:
    if before.empty or after.empty:
        return _live_columns()
    merged = after.merge(before, on="rater", suffixes=("_after", "_before"), how="left")
    out = pd.DataFrame({
        "rater": merged["rater"], "n": merged["n_after"],
        "overridden": [int(counts.get(r, 0)) for r in merged["rater"]],
        "spearman_before": merged["spearman_before"], "spearman_after": merged["spearman_after"],
        "kappa_quadratic_before": merged["kappa_quadratic_before"],
        "kappa_quadratic_after": merged["kappa_quadratic_after"],
        "kappa_quadratic_rounded_before": merged.get("kappa_quadratic_rounded_before"),
        "kappa_quadratic_rounded_after": merged.get("kappa_quadratic_rounded_after"),
    })
    out = _floats(out)
    out.insert(5, "change", out["spearman_after"] - out["spearman_before"])
    return out[_LIVE_COLUMNS]


#: Above this many rated outputs the stability table waits for a click (:func:`stability_waits`): it draws
#: ``resamples x sizes`` subsets, seconds of CPU at 200,000 outputs, and is not what the page shows first.
STABILITY_AUTO_UNITS = 10_000


def stability_waits(n_units: int) -> bool:
    """Whether the stability table of ``n_units`` units is computed only on request."""
    return n_units > STABILITY_AUTO_UNITS


def stability_matrix(now: Now, dimension: str, with_panels: bool) -> pd.DataFrame:
    """(item_id, model) x raters of the dimension, with a column per panel when ``with_panels``: as
    :func:`empathy.stability.dimension_matrix` of :func:`empathy.panels.panel_ratings` of the effective ratings,
    from the dimension's matrix (a panel's value: its members' mean, NaN skipped)."""
    facts = _rater_facts(now.data)
    if dimension in REFERENCE_DIMENSIONS or facts.imported_panels or now.gap:
        ratings = _plain(compute.effective_ratings(now.data))
        return dimension_matrix(panel_ratings(ratings) if with_panels else ratings, dimension)
    matrix = dimension_matrix_of(now, dimension)
    base = _base(now.data.content_key, dimension, now.data.dataset.ratings)
    columns = dict(zip(matrix.raters, matrix.values.T, strict=True))
    if with_panels:
        position = {name: k for k, name in enumerate(matrix.raters)}
        for name, members in facts.panels.items():
            chosen = [position[m] for m in members if m in position]
            present = ~np.isnan(matrix.values[:, chosen])
            if not present.any():
                continue
            with np.errstate(invalid="ignore", divide="ignore"):
                columns[panel_name(name)] = (np.where(present, matrix.values[:, chosen], 0.0).sum(axis=1)
                                             / present.sum(axis=1))
    return pd.DataFrame({name: columns[name] for name in sorted(columns)}, index=base.units)


@st.cache_data(show_spinner=False, max_entries=16)
def _dimension_stability(key: str, dimension: str, sizes: tuple[int, ...], n_resamples: int, seed: int,
                         statistic: str, reference: str | None, with_panels: bool, _now: Now) -> StabilityResult:
    COUNTS[f"stability:{dimension}"] += 1
    matrix = stability_matrix(_now, dimension, with_panels)
    return sample_size_stability(matrix, list(sizes), n_resamples=n_resamples, seed=seed, statistic=statistic,
                                 reference=reference)


def dimension_stability(now: Now, dimension: str, sizes: tuple[int, ...], n_resamples: int, seed: int,
                        statistic: str, reference: str | None, with_panels: bool) -> StabilityResult:
    """Stability of a statistic per rater on one dimension (units = rated outputs), kept per (data set, the
    dimension's overrides)."""
    panels = with_panels or (reference or "").startswith("panel:")
    return _dimension_stability(now.key([dimension]), dimension, sizes, n_resamples, seed, statistic, reference,
                                panels, now)


@st.cache_data(show_spinner=False, max_entries=16)
def _metric_matrix(key: str, metric: str, judge: str, _data: Loaded) -> pd.DataFrame:
    COUNTS[f"metric_matrix:{metric}"] += 1
    from empathy.metrics import get_metric

    outputs = _data.dataset.outputs
    sentences = compute.features(_data).frame(outputs) if get_metric(metric).needs_sentences else None
    terms = metric_terms(outputs, _plain(compute.effective_ratings(_data)), metric, sentences=sentences)
    return metric_matrix(terms, judge)


def metric_stability_matrix(now: Now, metric: str, judge: str) -> pd.DataFrame:
    """Items x models of one judge's per-item terms of ``metric`` (a judge metric of the registry: SA, EGM, CA),
    kept per (data set, the overrides of the metric's dimensions)."""
    from empathy.metrics import get_metric

    return _metric_matrix(now.key(get_metric(metric).dimensions), metric, judge, now.data)


@st.cache_data(show_spinner=False, max_entries=16)
def _metric_stability(key: str, metric: str, judge: str, sizes: tuple[int, ...], n_resamples: int, seed: int,
                      _matrix: pd.DataFrame) -> StabilityResult:
    COUNTS[f"stability:{metric}"] += 1
    return sample_size_stability(_matrix, list(sizes), n_resamples=n_resamples, seed=seed)


def metric_stability(now: Now, metric: str, judge: str, sizes: tuple[int, ...], n_resamples: int, seed: int
                     ) -> StabilityResult:
    """:func:`empathy.stability.sample_size_stability` of :func:`metric_stability_matrix` (items resampled), kept
    per (data set, the overrides of the metric's dimensions)."""
    from empathy.metrics import get_metric

    return _metric_stability(now.key(get_metric(metric).dimensions), metric, judge, sizes, n_resamples, seed,
                             metric_stability_matrix(now, metric, judge))


def metric_judges(now: Now, metric: str) -> list[str]:
    """Judges with at least one rating in the dimensions of ``metric``."""
    from empathy.metrics import get_metric

    dimensions = get_metric(metric).dimensions
    if now.gap:
        ratings = compute.effective_ratings(now.data)
        return sorted(ratings.loc[ratings["dimension"].isin(dimensions), "rater"].unique())
    present = [d for d in compute.dimensions_of(now.data) if d in dimensions]
    return sorted({r for d in present for r in dimension_matrix_of(now, d).raters})


def stability_allowed(n_units: int, n_resamples: int, n_sizes: int) -> bool:
    """Whether the stability table is computed in this run: at once up to :data:`STABILITY_AUTO_UNITS` units, else
    once its button was pressed in this session (a caption and the button are drawn until then)."""
    if not stability_waits(n_units) or st.session_state.get(session_keys.WB_STABILITY_ASKED):
        return True
    st.caption(f"{n_units:,} units: the stability table is computed when you ask for it ({n_resamples} subsets per "
               f"size, {n_sizes} sizes); it then stays for the session.")
    if st.button("Compute the stability table", key="wb_stability_go"):
        st.session_state[session_keys.WB_STABILITY_ASKED] = True
        return True
    return False


def parse_sizes(text: str, n_units: int) -> list[int]:
    """``"50, 100, 150"`` -> [50, 100, 150] (:func:`empathy.stability.parse_sizes`, sizes up to ``n_units``)."""
    from empathy.stability import parse_sizes as parse

    return parse(text, n_units=n_units)


def stability_figure(result: StabilityResult, title: str) -> go.Figure:
    """Mean ± sd per group across sample sizes (one line per group, error bars = sd over resamples)."""
    figure = go.Figure()
    # Group names and the title come from data: Plotly draws them as HTML, so they are escaped.
    for group, part in result.table.groupby("group", sort=False):
        figure.add_trace(go.Scatter(
            x=part["size"], y=part["mean"], mode="lines+markers", name=html(group),
            error_y={"type": "data", "array": part["sd"].fillna(0).to_numpy(), "visible": True},
            hovertemplate="size %{x}<br>mean %{y:.3f}<extra>" + hover_literal(group) + "</extra>"))
    figure.update_layout(title=html(title), xaxis_title="sample size (units)", yaxis_title=html(result.statistic),
                         height=380, margin={"t": 50, "b": 10, "l": 10, "r": 10}, legend_title_text="group")
    figure.update_xaxes(tickvals=list(result.sizes))
    return figure


def _floats(frame: pd.DataFrame) -> pd.DataFrame:
    """Agreement columns as floats (``None`` -> NaN) so that the table sorts and formats as numbers."""
    out = frame.copy()
    for column in out.columns:
        if column in FLOAT_COLUMNS or column.startswith(("spearman", "kappa", "pearson")):
            out[column] = pd.to_numeric(out[column], errors="coerce").astype(float)
    return out


def number_config(frame: pd.DataFrame) -> dict[str, object]:
    """Column formats: three decimals for the statistics."""
    return {c: st.column_config.NumberColumn(format="%.3f") for c in frame.columns
            if c in FLOAT_COLUMNS or str(c).startswith(("spearman", "kappa", "pearson"))
            if pd.api.types.is_float_dtype(frame[c])}


#: Why a statistic column can be empty for every row (said when :func:`show` hides it).
EMPTY_REASONS = {
    "kappa": "Cohen's kappa needs whole-number labels",
    "kappa_quadratic": "Cohen's kappa needs whole-number labels",
    "kappa_quadratic_rounded": "rounding to a scale needs a whole-number scale",
    "kappa_quadratic_before": "Cohen's kappa needs whole-number labels",
    "kappa_quadratic_after": "Cohen's kappa needs whole-number labels",
    "spearman_low": "no bootstrap (0 resamples) or too few items",
    "spearman_high": "no bootstrap (0 resamples) or too few items",
}


def show(frame: pd.DataFrame, key: str) -> None:
    """A data frame with three-decimal statistics and no index; columns empty in every row are hidden and named
    with the reason (a table full of None reads as a broken tool)."""
    # a warning column without a warning is no statistic to explain: drop it quietly (views.interval_warnings says
    # what a filled one means)
    quiet = [c for c in ("warning",) if c in frame.columns and frame[c].isna().all()]
    empty = [c for c in frame.columns if c not in quiet and len(frame) and frame[c].isna().all()]
    shown = frame.drop(columns=[*quiet, *empty])
    st.dataframe(shown, hide_index=True, key=key, column_config=number_config(shown))
    names = [c for c in ("dimension", "rater_a", "rater_b", "rater", "panel") if c in shown.columns]
    interval_warnings(shown, names)
    if empty:
        reasons = sorted({EMPTY_REASONS.get(str(c), "undefined for these raters") for c in empty})
        # our statistics' names read as they are; any other column may be named by data (a rater), so escaped
        names = ", ".join(str(c) if c in EMPTY_REASONS else md(c) for c in empty)
        st.caption(f"Not shown, empty for every row: {names} ({'; '.join(reasons)}).")

