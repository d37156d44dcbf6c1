"""Agreement workbench views: rater pairs, panels, LLM vs experts under the current overrides, stability.

The statistics come from :mod:`empathy.agreement`, :mod:`empathy.panels` and :mod:`empathy.stability`; this
module caches them per (data content, overrides) and draws them. ``app_pages/6_Workbench.py`` only lays it out.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from empathy.agreement import krippendorff_by_dimension, pairwise_agreement
from empathy.labels.decisions import pair_decisions
from empathy.panels import compare_panels, is_panel, panel_ratings, rater_vs_panel
from empathy.stability import (
    StabilityResult,
    dimension_matrix,
    metric_matrix,
    metric_terms,
    sample_size_stability,
)
from empathy_app.markup import hover_literal, html, md
from empathy_app.views import interval_warnings

#: Float columns shown with three decimals (the data keeps full precision; tests read the exact value).
FLOAT_COLUMNS = ("spearman", "spearman_low", "spearman_high", "pearson", "kappa", "kappa_quadratic",
                 "kappa_quadratic_rounded", "percent_agreement", "krippendorff_alpha", "before", "after",
                 "change", "mean", "sd", "value", "n_units_mean", "same_ranking")


def _plain(ratings: pd.DataFrame) -> pd.DataFrame:
    return ratings.drop(columns=["overridden"], errors="ignore")


@st.cache_data(show_spinner=False, max_entries=32)
def pair_table(_ratings: pd.DataFrame, key: str, dimensions: tuple[str, ...], bootstrap: int, seed: int
               ) -> pd.DataFrame:
    """Every pair of raters on the dimensions: Spearman with CI, kappa, and Krippendorff's alpha."""
    ratings = _plain(_ratings)
    ratings = ratings[ratings["dimension"].isin(dimensions)]
    pairs = pairwise_agreement(ratings, dimensions=list(dimensions), bootstrap=bootstrap, seed=seed)
    alphas = krippendorff_by_dimension(ratings)
    pairs = pairs.merge(alphas[["dimension", "alpha", "level"]].rename(
        columns={"alpha": "krippendorff_alpha", "level": "alpha_level"}), on="dimension", how="left")
    return _floats(pairs)


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


@st.cache_data(show_spinner=False, max_entries=32)
def panel_table(_ratings: pd.DataFrame, key: str, dimensions: tuple[str, ...], bootstrap: int, seed: int
                ) -> pd.DataFrame:
    """Panels (by rater_kind) compared with each other and the crowd."""
    ratings = _plain(_ratings)
    return _floats(compare_panels(ratings[ratings["dimension"].isin(dimensions)], dimensions=list(dimensions),
                                  bootstrap=bootstrap, seed=seed))


def comparison_targets(ratings: pd.DataFrame) -> list[str]:
    """What the individual raters can be compared with: the panels first, then every rater."""
    with_panels = panel_ratings(_plain(ratings))
    panels = sorted(r for r in with_panels["rater"].unique() if is_panel(r))
    return panels + sorted(r for r in ratings["rater"].unique() if not is_panel(r))


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


@st.cache_data(show_spinner=False, max_entries=32)
def live_agreement(_before: pd.DataFrame, _after: pd.DataFrame, key: str, target: str, raters: tuple[str, ...],
                   dimension: str) -> pd.DataFrame:
    """Each rater's agreement with ``target`` on ``dimension`` without and with the overrides.

    Columns: rater, n, overridden (this rater's overridden ratings on the dimension), spearman before/after,
    change, kappa_quadratic before/after (``None`` for fractional values).
    """
    columns = ["rater", "n", "overridden", "spearman_before", "spearman_after", "change",
               "kappa_quadratic_before", "kappa_quadratic_after", "kappa_quadratic_rounded_before",
               "kappa_quadratic_rounded_after"]
    if not raters:
        return pd.DataFrame(columns=columns)
    before = _against(_before, target, list(raters), dimension)
    after = _against(_after, target, list(raters), dimension)
    if before.empty or after.empty:
        return pd.DataFrame(columns=columns)
    merged = after.merge(before, on="rater", suffixes=("_after", "_before"), how="left")
    if "overridden" in _after.columns:
        part = _after[(_after["dimension"] == dimension) & _after["overridden"].astype(bool)]
        counts = part.groupby("rater").size()
    else:
        counts = pd.Series(dtype=int)
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
    return out[columns]


@st.cache_data(show_spinner=False, max_entries=16)
def dimension_stability(_ratings: pd.DataFrame, key: str, dimension: str, sizes: tuple[int, ...],
                        n_resamples: int, seed: int, statistic: str, reference: str | None,
                        with_panels: bool) -> StabilityResult:
    """Stability of a statistic per rater on one dimension (units = rated outputs)."""
    ratings = _plain(_ratings)
    if with_panels or (reference or "").startswith("panel:"):
        ratings = panel_ratings(ratings)
    matrix = dimension_matrix(ratings, dimension)
    return sample_size_stability(matrix, list(sizes), n_resamples=n_resamples, seed=seed, statistic=statistic,
                                 reference=reference)


def dimension_units(ratings: pd.DataFrame, dimension: str) -> int:
    """Number of outputs rated on ``dimension`` by anyone (the largest possible stability size)."""
    part = ratings[ratings["dimension"] == dimension]
    return int(part[["item_id", "model"]].drop_duplicates().shape[0])


@st.cache_data(show_spinner=False, max_entries=16)
def metric_stability_matrix(_outputs: pd.DataFrame, _ratings: pd.DataFrame, _sentences: pd.DataFrame | None,
                            key: str, metric: str, judge: str) -> pd.DataFrame:
    """Items x models of one judge's per-item terms of ``metric`` (a judge metric of the registry: SA, EGM, CA)."""
    terms = metric_terms(_outputs, _plain(_ratings), metric, sentences=_sentences)
    return metric_matrix(terms, judge)


def metric_judges(ratings: pd.DataFrame, metric: str) -> list[str]:
    """Judges with at least one rating in the dimensions of ``metric``."""
    from empathy.metrics import get_metric

    part = ratings[ratings["dimension"].isin(get_metric(metric).dimensions)]
    return sorted(part["rater"].unique())


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

