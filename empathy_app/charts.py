"""The app's charts: a metric's bars by model and judge, Table 6's Spearman heatmap, and the standard metrics
against an empathy metric.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import streamlit as st

from empathy_app import compute, session_keys
from empathy_app.loading import Loaded
from empathy_app.markup import html, plot_frame

if TYPE_CHECKING:  # Plotly Express is imported by the charts that draw (50 ms a process): not by every first run
    import plotly.graph_objects as go

# Figures are cached on the (small) results table: the table only changes with the data or an override. Shared,
# not copied: never modified. They are drawn with Plotly's figure objects from plain dictionaries: Plotly Express
# cost 0.15-0.3 s a chart (its data-frame machinery and a validated update per trace), which was a quarter of
# Overview's first visit at 200,000 outputs and part of every rerun after a decision.
_FACET_GAP = 0.03  # the horizontal space between two task panels, as a share of the figure's width


@st.cache_resource(show_spinner=False, max_entries=64)
def metric_bars(table: pd.DataFrame, metric: str) -> go.Figure:
    """Bar chart of one metric by model, one bar per judge (scorer), one panel per task when there are several
    (values of different tasks are not comparable); with ``ci_low``/``ci_high`` columns (the rows' intervals), each
    bar has its error bar. A judge keeps its colour across panels; the hover shows judge, model, value, ``n`` and
    ``n_missing``. Every name from the data is HTML-escaped (Plotly draws labels as HTML)."""
    import plotly.graph_objects as go
    from plotly.colors import qualitative

    part = plot_frame(table[table["metric"] == metric].dropna(subset=["value"]), ["model", "scorer", "task"])
    tasks: list[str | None] = list(dict.fromkeys(part["task"])) if part["task"].nunique() > 1 else [None]
    with_errors = {"ci_low", "ci_high"} <= set(part.columns) and bool(part["ci_low"].notna().any())
    scorers = list(dict.fromkeys(part["scorer"]))
    colours = qualitative.Plotly
    label = html(metric)
    width = (1 - _FACET_GAP * (len(tasks) - 1)) / len(tasks)
    traces: list[dict[str, object]] = []
    in_legend: set[str] = set()  # a judge's bars of every panel share one legend entry
    layout: dict[str, object] = {
        "title": {"text": f"{label} by model and judge"}, "barmode": "group", "height": 340,
        "margin": {"t": 50, "b": 10, "l": 10, "r": 10}, "legend": {"title": {"text": "judge"}}, "annotations": []}
    for column, task in enumerate(tasks):
        suffix = str(column + 1) if column else ""
        shown = part if task is None else part[part["task"] == task]
        for number, scorer in enumerate(scorers):
            rows = shown[shown["scorer"] == scorer]
            if rows.empty:
                continue
            bar: dict[str, object] = {
                "type": "bar", "name": scorer, "legendgroup": scorer, "showlegend": scorer not in in_legend,
                "x": rows["model"].tolist(), "y": rows["value"].astype(float).tolist(),
                "marker": {"color": colours[number % len(colours)]}, "xaxis": f"x{suffix}", "yaxis": f"y{suffix}",
                # a missing count is JSON's null, not pandas' NA (which the figure's encoder cannot write)
                "customdata": [[None if pd.isna(v) else v for v in pair]
                               for pair in zip(rows["n"].tolist(), rows["n_missing"].tolist(), strict=True)],
                "hovertemplate": (f"judge={scorer.replace('%', '&#37;')}<br>model=%{{x}}<br>"
                                  f"{label.replace('%', '&#37;')}=%{{y}}<br>n=%{{customdata[0]}}<br>"
                                  "n_missing=%{customdata[1]}<extra></extra>")}
            if with_errors:
                above = (rows["ci_high"] - rows["value"]).clip(lower=0).astype(float)
                below = (rows["value"] - rows["ci_low"]).clip(lower=0).astype(float)
                bar["error_y"] = {"type": "data", "array": above.tolist(), "arrayminus": below.tolist()}
            traces.append(bar)
            in_legend.add(scorer)
        start = column * (width + _FACET_GAP)
        layout[f"xaxis{suffix}"] = {"domain": [start, start + width], "anchor": f"y{suffix}",
                                    "title": {"text": "model"}}
        layout[f"yaxis{suffix}"] = ({"anchor": "x", "title": {"text": label}} if not column else
                                    {"anchor": f"x{suffix}", "matches": "y", "showticklabels": False})
        if task is not None:
            layout["annotations"].append(  # type: ignore[union-attr]
                {"text": f"task={task}", "x": start + width / 2, "y": 1.0, "xref": "paper", "yref": "paper",
                 "xanchor": "center", "yanchor": "bottom", "showarrow": False})
    return go.Figure({"data": traces, "layout": layout})


@st.cache_resource(show_spinner=False, max_entries=64)
def spearman_heatmap(agreement: pd.DataFrame, metric: str) -> go.Figure | None:
    """Symmetric inter-judge Spearman matrix of one metric (diagonal 1), or ``None`` with fewer than 2 judges: the
    first judge's row at the top, each cell's value written in it, the colour scale fixed at -1..1."""
    import plotly.graph_objects as go

    part = agreement[agreement["metric"] == metric]
    judges = sorted(set(part["scorer_a"]) | set(part["scorer_b"]))
    if len(judges) < 2:
        return None
    labels = [html(j) for j in judges]  # Plotly draws axis labels as HTML
    position = {judge: k for k, judge in enumerate(judges)}
    matrix = np.eye(len(judges))
    for record in part.to_dict("records"):
        value = record["spearman"]
        value = np.nan if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)
        a, b = position[record["scorer_a"]], position[record["scorer_b"]]
        matrix[a, b] = matrix[b, a] = value
    cells = [[None if math.isnan(v) else v for v in row] for row in matrix.tolist()]
    heat = {"type": "heatmap", "z": cells, "x": labels, "y": labels, "zmin": -1, "zmax": 1, "colorscale": "RdBu",
            "texttemplate": "%{z:.3f}", "hovertemplate": "%{y} · %{x}: %{z:.3f}<extra></extra>"}
    layout = {"title": {"text": f"{html(metric)}: Spearman between judges"}, "height": 320,
              "margin": {"t": 50, "b": 10, "l": 10, "r": 10}, "yaxis": {"autorange": "reversed"},
              "xaxis": {"side": "bottom"}}
    return go.Figure({"data": [heat], "layout": layout})


def standard_scatter(data: Loaded, table: pd.DataFrame) -> go.Figure | None:
    """Standard metric (ROUGE-L, chrF, CIDEr-D, Sem-Sim) against an empathy metric, one point per model."""
    try:
        from empathy.standard import STANDARD_METRICS
    except ImportError:
        st.caption("Standard-metric scatter: appears once `empathy.standard` is available.")
        return None
    st.subheader("Standard metric vs empathy metric")
    st.caption("Each point is a model: a high standard score (overlap or similarity with the reference) with a "
               "high empathy-failure value is the pattern the paper reports. Sem-Sim here is the offline "
               "TF-IDF cosine unless an embedding endpoint is configured in the CLI.")
    choices = table.dropna(subset=["value"])[["metric", "scorer"]].drop_duplicates()
    options = [f"{r.metric} ({r.scorer})" for r in choices.itertuples()]
    if not options:
        return None
    # On demand only: they read every text pair (ROUGE-L is an LCS per pair), which at scale costs far more
    # than the rest of the page, and a visit to Overview must not pay it.
    done = st.session_state.setdefault(session_keys.STANDARD_COMPUTED, [])
    if data.content_key not in done:
        if not st.button("Compute the standard metrics", key="overview_std_compute",
                         help="ROUGE-L, chrF, CIDEr-D and Sem-Sim (offline TF-IDF) of every output against its "
                              "reference; computed once per data set and kept."):
            return None
        done.append(data.content_key)
    left, right = st.columns(2)
    standard_name = left.selectbox("Standard metric", list(STANDARD_METRICS), key="overview_std_metric")
    empathy_name = right.selectbox("Empathy metric", options, key="overview_std_empathy")
    with st.spinner("Computing ROUGE-L, chrF, CIDEr-D and Sem-Sim..."):
        standard = compute.standard_per_model(data)
    chosen = choices.iloc[options.index(empathy_name)]
    keys = ["task", "model"] if compute.by_task(data) else ["model"]  # per task: a point per (task, model)
    part = table[(table["metric"] == chosen["metric"]) & (table["scorer"] == chosen["scorer"])][[*keys, "value"]]
    merged = standard[[*keys, standard_name]].merge(part, on=keys, how="inner").dropna()
    if merged.empty:
        st.info("No model has both values.")
        return None
    label = html(empathy_name)  # holds a scorer name: Plotly draws titles and axis labels as HTML
    import plotly.express as px

    figure = px.scatter(plot_frame(merged, ["model"]), x=standard_name, y="value", text="model",
                        labels={"value": label, standard_name: standard_name},
                        title=f"{label} vs {standard_name} per model")
    figure.update_traces(textposition="top center", marker={"size": 12})
    figure.update_layout(height=420, margin={"t": 50, "b": 10, "l": 10, "r": 10})
    return figure
