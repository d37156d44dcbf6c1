"""Disagreement page views: the mechanism x disagreement map, its slices' items, judge-vs-human calibration.

The numbers come from :mod:`empathy.slices` and :mod:`empathy.calibration`; this module caches them per data
content, ledger and options, and draws them. ``app_pages/9_Disagreement.py`` only lays it out.

Judges are read with their own labels (an override copied into a judge would agree with the human by
construction); the ledger's decisions join the human side as raters of kind ``human``, and the override rate
reads the ledger's applied labels.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from empathy import calibration as cal
from empathy import slices as sl
from empathy.evaluate import TextFeatures
from empathy.labels.ledger import annotator_ratings
from empathy.signature import judge_signatures
from empathy_app.markup import hover_literal, html

OUTCOME_LABELS = {
    "judge_human": "judge vs human",
    "override": "overridden by a human (ledger)",
    "judge_judge": "judges split",
}
#: Holm-adjusted p-value below which a slice is drawn as significant.
ALPHA = 0.05


def with_humans(ratings: pd.DataFrame, fresh_decisions: pd.DataFrame, *, ready: bool = False) -> pd.DataFrame:
    """The judges' own ratings plus each annotator of the ledger as a human rater (``ready``: the decisions are
    :func:`empathy.labels.ledger.annotator_ratings` already)."""
    humans = fresh_decisions if ready else annotator_ratings(fresh_decisions)
    if humans.empty:
        return ratings
    return pd.concat([ratings.drop(columns=["overridden"], errors="ignore"), humans], ignore_index=True)


def judged_dimensions(ratings: pd.DataFrame, *more: pd.DataFrame) -> list[str]:
    """Dimensions at least one automatic judge rated (in ``ratings`` or ``more``), the paper's first."""
    found: set[str] = set()
    for frame in (ratings, *more):
        kinds = frame["rater_kind"].fillna("").astype(str) if "rater_kind" in frame.columns else None
        part = frame if kinds is None else frame[kinds.isin(sl.JUDGE_KINDS)]
        found |= set(part["dimension"].astype(str).unique().tolist())
    paper = [d for d in ("ca", "e_gen", "e_ref", "u_gen", "u_ref") if d in found]
    return paper + sorted(found - set(paper))


class Rated:
    """The page's ratings under one ledger, each part made once (per data set and ledger, shared by the runs).

    ``whole``: the judges' own ratings and the ledger's annotators (:func:`with_humans`); ``paired``: only the
    rows of the items some human rated (every judge's, every human's): what the judge-vs-human tables read, found
    by the data set's row index instead of a mask over millions of ratings. Those tables compare a judge with the
    humans on a unit (an output, or an item for a reference dimension), so units without a human add no row, and
    their result on ``paired`` is their result on ``whole`` (the thresholds drawn from every judge's values are
    passed in, see :func:`events`).
    """

    def __init__(self, ratings: pd.DataFrame, fresh: pd.DataFrame, human_items: frozenset[str],
                 rows_of_items: object, content_key: str = "") -> None:
        self._content_key = content_key
        self.judged = ratings
        self.humans = annotator_ratings(fresh)
        self._human_items = human_items
        self._rows_of_items = rows_of_items

    @functools.cached_property
    def whole(self) -> pd.DataFrame:
        return with_humans(self.judged, self.humans, ready=True)

    @functools.cached_property
    def paired(self) -> pd.DataFrame:
        items = sorted(self._human_items | set(self.humans["item_id"].astype(str)))
        part = self._rows_of_items(self.judged, items)  # type: ignore[operator]
        return with_humans(part, self.humans, ready=True)

    @functools.cached_property
    def dimensions(self) -> list[str]:
        return judged_dimensions(self.judged, self.humans)

    @functools.cached_property
    def judges(self) -> dict[str, str]:
        # the data set's raters: once per data set (by its content key; none given: computed here)
        found = (_judge_signatures(self._content_key, self.judged) if self._content_key
                 else judge_signatures(self.judged))
        if set(self.humans["rater"].astype(str)) & set(found):  # a human named as a judge: one rater, both rows
            return judge_signatures(self.whole)
        if len(self.humans):
            found = {**found, **judge_signatures(self.humans)}
            found = dict(sorted(found.items()))
        return found


@st.cache_resource(show_spinner=False, max_entries=4)
def _judge_signatures(key: str, _ratings: pd.DataFrame) -> dict[str, str]:
    return judge_signatures(_ratings)


@st.cache_resource(show_spinner=False, max_entries=4)
def _human_items(key: str, _ratings: pd.DataFrame) -> frozenset[str]:
    if "rater_kind" not in _ratings.columns:
        return frozenset()
    kinds = _ratings["rater_kind"].fillna("").astype(str)
    return frozenset(_ratings.loc[kinds.isin(sl.HUMAN_KINDS), "item_id"].astype(str).unique().tolist())


@st.cache_resource(show_spinner=False, max_entries=4)
def _rated(key: str, content_key: str, _ratings: pd.DataFrame, _fresh: pd.DataFrame, _rows_of_items: object
           ) -> Rated:
    return Rated(_ratings, _fresh, _human_items(content_key, _ratings), _rows_of_items, content_key)


def rated(key: str, content_key: str, ratings: pd.DataFrame, fresh: pd.DataFrame, rows_of_items: object) -> Rated:
    """The :class:`Rated` of the data set's ``ratings`` and the ledger's ``fresh`` decisions, ``key`` naming both
    (made once per key: a rerun recomputes none of it)."""
    return _rated(key, content_key, ratings, fresh, rows_of_items)


@st.cache_resource(show_spinner=False, max_entries=4)
def output_features(key: str, _outputs: pd.DataFrame, _ratings: pd.DataFrame, _text: TextFeatures
                    ) -> pd.DataFrame:
    """:func:`empathy.slices.output_features` of the data set (keyed on its content; shared, not copied: a
    cached copy was unpickled on every run)."""
    return sl.output_features(_outputs, _ratings, _text.sentences_ref, _text.sentences_gen, _text.densities_ref,
                              _text.densities_gen)


@st.cache_resource(show_spinner=False, max_entries=16)
def _compared_values(key: str, dimension: str, _ratings: pd.DataFrame) -> np.ndarray:
    """The values of ``dimension`` of the data set's judges and humans (what the default threshold reads)."""
    # the two columns read, not a copy of every column of the rows (+60 MiB at 200,000 outputs)
    part = _ratings.loc[_ratings["dimension"] == dimension, [c for c in ("value", "rater_kind") if c in _ratings]]
    kinds = part["rater_kind"].fillna("").astype(str) if "rater_kind" in part.columns else None
    if kinds is not None:
        part = part[kinds.isin([*sl.HUMAN_KINDS, *sl.JUDGE_KINDS])]
    values = part["value"].to_numpy(dtype=float)
    return values[~np.isnan(values)]


def judge_human_threshold(content_key: str, dimension: str, rated: Rated) -> float:
    """:func:`empathy.slices.default_threshold` of every judge's and human's value of ``dimension`` (as
    :func:`empathy.slices.judge_human_events` draws it from all the ratings it is given)."""
    values = _compared_values(content_key, dimension, rated.judged)
    if len(rated.humans):
        mine = rated.humans.loc[rated.humans["dimension"] == dimension, "value"].to_numpy(dtype=float)
        values = np.concatenate([values, mine[~np.isnan(mine)]])
    return sl.default_threshold(dimension, values)


@st.cache_resource(show_spinner=False, max_entries=32)
def _events(key: str, outcome: str, dimension: str, _rated: Rated, _applied: pd.DataFrame, content_key: str
            ) -> tuple[pd.DataFrame, float | None]:
    if outcome == "judge_human":
        # the items with a human rating only (every other unit has no pair), at the threshold of every rating
        return sl.judge_human_events(_rated.paired, dimension,
                                     threshold=judge_human_threshold(content_key, dimension, _rated))
    if outcome == "judge_judge":
        return sl.judge_judge_events(_rated.judged, dimension)  # judges only: the ledger is not read
    return sl.override_events(_rated.judged, _applied, dimension), None


def events(key: str, outcome: str, dimension: str, rated: Rated, applied: pd.DataFrame, content_key: str
           ) -> tuple[pd.DataFrame, float | None]:
    """The disagreement events of one outcome and dimension (and the threshold used): those of
    :func:`empathy.slices.judge_human_events`, :func:`~empathy.slices.judge_judge_events` or
    :func:`~empathy.slices.override_events` on the judges' ratings and the ledger's humans (``rated.whole``),
    computed once per data set and ledger (the judges-only map once per data set). Shared: not to be modified."""
    if outcome == "judge_judge":
        key = content_key
    return _events(key, outcome, dimension, rated, applied, content_key)


@st.cache_resource(show_spinner=False, max_entries=32)
def slice_map(key: str, outcome: str, dimension: str, bins: int, permutations: int, seed: int, per_judge: bool,
              _features: pd.DataFrame, _events: pd.DataFrame, threshold: float | None, exact: bool = True
              ) -> sl.SliceMap:
    """The map (cached per data, ledger and options: a rerun that changes nothing recomputes nothing; shared, not
    copied, so its slices' output lists are not unpickled on every run).

    ``exact``: every p-value that can be computed exactly is (:func:`empathy.slice_tests.exact_slice_p`), the others by
    Monte Carlo with ``permutations`` draws and their standard error (``p_se``)."""
    return sl.slice_map(_features, _events, outcome=outcome, dimension=dimension, bins=bins,
                        n_permutations=permutations, seed=seed, per_judge=per_judge, threshold=threshold,
                        exact=exact)


#: The signature's name of the map's rate intervals (:func:`empathy.slice_tests.cluster_rate_interval`).
RATE_INTERVAL = {"rate-interval": "cluster-wilson(item)"}


def map_figure(table: pd.DataFrame, title: str) -> go.Figure:
    """The map as a paper figure: each slice's rate with its cluster-aware interval, the whole's rate as a line.

    The interval is the map's ``rate_low``/``rate_high`` (:func:`empathy.slice_tests.cluster_rate_interval`: the item,
    the conversation, is the unit; a Wilson interval over (output, judge) units would treat the judges of one
    output and the models of one item as independent, and be too narrow). One row per (feature, slice), grouped
    by feature; filled markers are slices whose Holm-adjusted p-value is below :data:`ALPHA`, marker area grows
    with the slice's units.
    """
    part = table.reset_index(drop=True)
    low, high = part["rate_low"].to_numpy(float), part["rate_high"].to_numpy(float)
    labels = [f"{html(f)} · {html(s)}" for f, s in zip(part["feature"], part["slice"], strict=True)]
    significant = part["p_holm"].to_numpy(float) < ALPHA
    figure = go.Figure()
    for flag, name, symbol in ((False, f"Holm p ≥ {ALPHA:g}", "circle-open"), (True, f"Holm p < {ALPHA:g}",
                                                                                "circle")):
        rows = np.flatnonzero(significant == flag)
        if len(rows) == 0:
            continue
        rate = part["rate"].to_numpy(float)[rows]
        hover = [hover_literal(f"{part['feature'][r]} {part['slice'][r]}: {part['events'][r]}/{part['n_units'][r]}"
                               f" · p = {part['p_value'][r]:.3g} · Holm {part['p_holm'][r]:.3g}") for r in rows]
        figure.add_trace(go.Scatter(
            x=rate, y=[labels[r] for r in rows], mode="markers", name=name, hovertemplate="%{text}<extra></extra>",
            text=hover, marker={"symbol": symbol, "size": 7 + 3 * np.sqrt(part["n_units"].to_numpy(float)[rows]),
                                "line": {"width": 2}, "color": "#b2182b" if flag else "#2166ac"},
            error_x={"type": "data", "symmetric": False, "array": high[rows] - rate, "arrayminus": rate - low[rows],
                     "thickness": 1.2, "width": 0}))
    whole = float(part["whole_rate"].iloc[0]) if len(part) else math.nan
    if math.isfinite(whole):
        figure.add_vline(x=whole, line_dash="dash", line_color="#555",
                         annotation_text=f"whole: {whole:.0%}", annotation_position="top")
    figure.update_layout(title=html(title), height=max(320, 22 * len(part) + 120),
                         margin={"t": 60, "b": 40, "l": 10, "r": 10}, legend={"orientation": "h", "y": -0.08},
                         xaxis={"title": "disagreement rate (95% interval, item as unit)", "range": [-0.02, 1.02],
                                "tickformat": ".0%"},
                         yaxis={"autorange": "reversed", "type": "category"})
    return figure


def slice_items(events_table: pd.DataFrame, outputs: list[tuple[str, str]], judge: str) -> pd.DataFrame:
    """The event rows of a slice's outputs (one judge's, or every judge's for the pooled map), events first."""
    keys = pd.DataFrame(outputs, columns=["item_id", "model"])
    rows = events_table.merge(keys, on=["item_id", "model"], how="inner")
    if judge != sl.ALL_JUDGES:
        rows = rows[rows["judge"] == judge]
    return rows.sort_values(["event", "item_id", "model"], ascending=[False, True, True]).reset_index(drop=True)


@st.cache_data(show_spinner=False, max_entries=16)
def confusion(key: str, dimension: str, _ratings: pd.DataFrame) -> pd.DataFrame | None:
    """Confusion cells, or ``None`` for a dimension whose judge values are not whole numbers."""
    try:
        return cal.confusion_cells(_ratings, dimension)
    except ValueError:
        return None


@st.cache_resource(show_spinner=False, max_entries=8)
def _bias_rows(key: str, dimension: str) -> dict:
    return {}


@st.cache_data(show_spinner=False, max_entries=16)
def bias(key: str, dimension: str, bootstrap: int, seed: int, _ratings: pd.DataFrame, content_key: str = ""
         ) -> pd.DataFrame:
    """Bias and slope per model and judge with item-bootstrap intervals; the rows of the (model, judge) pairs whose
    pairs a decision did not change are kept from before (per data set and dimension), not bootstrapped again."""
    memo = _bias_rows(content_key, dimension) if content_key else None
    if memo is not None and len(memo) > 4096:  # rows of ledgers long past
        memo.clear()
    return cal.calibration_bias(_ratings, dimension, bootstrap=bootstrap, seed=seed, memo=memo)


@st.cache_data(show_spinner=False, max_entries=16)
def bins(key: str, dimension: str, n_bins: int, _ratings: pd.DataFrame) -> pd.DataFrame:
    """Calibration bins per model and judge."""
    return cal.calibration_bins(_ratings, dimension, bins=n_bins)


@st.cache_resource(show_spinner=False, max_entries=8)
def _fixed_splits(key: str, dimension: str, _ratings: pd.DataFrame) -> cal.ItemSplits:
    return cal.ItemSplits(_ratings, dimension)


def splits(dimension: str, rated: Rated, content_key: str) -> pd.DataFrame:
    """Per-item spread of every rater's value (:func:`empathy.calibration.item_splits` of ``rated.whole``): the
    judges' part once per data set, the units the ledger's humans rated redone per ledger
    (:class:`empathy.calibration.ItemSplits`). Made on each call: :func:`split_preview` is what a page holds."""
    return _fixed_splits(content_key, dimension, rated.judged).table(rated.humans)


@dataclass(frozen=True)
class SplitPreview:
    """What the page shows of :func:`splits`: the number of units, of split units, and the first rows."""

    n_units: int
    n_split: int
    head: pd.DataFrame


@st.cache_resource(show_spinner=False, max_entries=16)
def _split_preview(key: str, dimension: str, content_key: str, rows: int, _rated: Rated) -> SplitPreview:
    table = splits(dimension, _rated, content_key)
    # the first rows taken into arrays of their own (a slice of Arrow strings would keep the whole table's
    # buffers): the whole table, 28 MiB at 200,000 outputs, was held per ledger and dimension, up to 16 of them
    head = table.take(np.arange(min(rows, len(table)))).reset_index(drop=True)
    return SplitPreview(len(table), int(table["split"].sum()), head)


def split_preview(key: str, dimension: str, rated: Rated, content_key: str, rows: int) -> SplitPreview:
    """:func:`splits`' counts and its first ``rows`` rows (the most split), made once per data set, ledger
    (``key``) and dimension. Shared: not to be modified."""
    return _split_preview(key, dimension, content_key, rows, rated)


def calibration_figure(table: pd.DataFrame, judge: str, dimension: str) -> go.Figure:
    """Mean judge score against mean human score per bin, one line per model, with the diagonal."""
    part = table[table["judge"] == judge]
    figure = go.Figure()
    low = float(min(part["mean_human"].min(), part["mean_judge"].min())) if len(part) else 0.0
    high = float(max(part["mean_human"].max(), part["mean_judge"].max())) if len(part) else 1.0
    figure.add_trace(go.Scatter(x=[low, high], y=[low, high], mode="lines", name="judge = human",
                                line={"dash": "dot", "color": "#888"}))
    for model, rows in part.groupby("model", sort=True):
        figure.add_trace(go.Scatter(x=rows["mean_human"], y=rows["mean_judge"], mode="lines+markers",
                                    name=html(model), marker={"size": 6 + 2 * np.sqrt(rows["n"].to_numpy(float))},
                                    hovertemplate=hover_literal(str(model)) + ": human %{x:.3f}, judge %{y:.3f}"
                                                                              "<extra></extra>"))
    figure.update_layout(title=html(f"{dimension}: judge {judge} against the humans, per model"), height=420,
                         xaxis_title="mean human score (bin)", yaxis_title="mean judge score",
                         margin={"t": 60, "b": 40, "l": 10, "r": 10})
    return figure
