"""Disagreement page: where judges and humans disagree (the mechanism x disagreement map), each slice's items,
judge-vs-human calibration per model, and the items every rater splits on."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pandas as pd  # noqa: E402
import streamlit as st  # noqa: E402

from empathy.calibration import confusion_matrix  # noqa: E402
from empathy.labels.decisions import decision_count  # noqa: E402
from empathy.labels.rules import rubric  # noqa: E402
from empathy.signature import Signature  # noqa: E402
from empathy.slices import ALL_JUDGES, describe, ranked_slices  # noqa: E402
from empathy_app import compute, loading, overrides, relabel_focus, session_keys, views  # noqa: E402
from empathy_app import disagreement as dg  # noqa: E402
from empathy_app.markup import code, md, people_csv  # noqa: E402

data = loading.require_data()
outputs = data.dataset.outputs
ledger = overrides.ledger(data)
# Judges keep their own labels here; the ledger's annotators are human raters beside the data's experts.
key = f"{data.content_key}|{ledger.digest}|{len(ledger.status.fresh)}"
# made once per data set and ledger (a rerun concatenates, scans and signs nothing again)
rated = dg.rated(key, data.content_key, data.dataset.ratings, ledger.status.fresh,
                 compute.row_index(data).ratings_of_items)
dimensions = rated.dimensions
if not dimensions:
    st.info("No automatic judge (rater kind llm or lexicon) rated this data set, so there is no judge "
            "disagreement to map. Run one on the **Judge** page.")
    st.stop()
st.caption("Judges are read with their own labels; human overrides from the ledger count as human raters "
           f"({decision_count(ledger.status.fresh)} fresh decision(s)), and the override rate reads the ledger.")

with st.container(border=True):
    top = st.columns([2, 2, 1, 1, 1, 1, 1])
    outcome = top[0].selectbox("Disagreement", list(dg.OUTCOME_LABELS), key="dis_outcome",
                               format_func=dg.OUTCOME_LABELS.get)
    dimension = top[1].selectbox("Dimension", dimensions, key="dis_dimension", format_func=views.dimension_label)
    bins = int(top[2].number_input("Bins", min_value=2, max_value=6, value=3, step=1, key="dis_bins",
                                   help="quantile bins per feature"))
    permutations = int(top[3].selectbox("Permutations", [200, 1000, 5000], index=1, key="dis_permutations"))
    seed = int(top[4].number_input("Seed", min_value=0, value=0, step=1, key="dis_seed"))
    per_judge = top[5].checkbox("Per judge", key="dis_per_judge", help="map each judge on its own too")
    exact = top[6].checkbox("Exact p", value=True, key="dis_exact",
                            help="Every p-value that can be computed exactly is (the permutations above serve the "
                                 "others, whose Monte Carlo standard error is p_se). Off: all by Monte Carlo.")

st.subheader("The mechanism x disagreement map")
events, threshold = dg.events(key, outcome, dimension, rated, ledger.applied, data.content_key)
if events.empty:
    need = {"judge_human": "a judge and a human rater (kind expert, human or author, or an override in the "
                           "ledger) on the same output",
            "judge_judge": "two judges on the same output", "override": "a judge rating"}[outcome]
    st.info(f"Nothing to map for {code(dimension)}: no output has {need}.")
else:
    features = dg.output_features(data.content_key, outputs, data.dataset.ratings, compute.features(data))
    map_key = data.content_key if outcome == "judge_judge" else key  # judges alone: the ledger is not read
    result = dg.slice_map(map_key, outcome, dimension, bins, permutations, seed, per_judge, features, events,
                          threshold, exact)
    signature = Signature(distancing=compute.features(data).signature, judges=rated.judges, seed=seed,
                          extra={"outcome": outcome, **result.signature_fields(), **dg.RATE_INTERVAL,
                                 **ledger.signature_fields()})
    table = result.table
    st.caption(f"{int(events['event'].sum())} of {len(events)} units disagree"
               + (f" (values at least {threshold:g} apart)" if threshold is not None else "")
               + ". Each feature is cut at its quantiles; a slice's rate is tested against the whole by permuting "
                 "which outputs fall in it, Holm-corrected over the map: exactly wherever the null distribution can "
                 "be computed, otherwise by Monte Carlo with its standard error (p_se). Intervals take the item "
                 "(conversation) as the unit: the judges of one output and the models of one item are not "
                 "independent.")
    carlo = int((result.table["p_method"] == "monte-carlo").sum())
    if carlo:
        st.caption(f"{carlo} of {len(result.table)} p-values by Monte Carlo ({permutations:,} permutations); the "
                   f"largest standard error is {result.table['p_se'].max():.3g}.")
    if result.holm_floor >= 0.05:
        st.warning(f"{len(table)} slices and {permutations:,} permutations: no Holm-adjusted p-value can fall below "
                   f"{result.holm_floor:.3g}, whatever the data. Choose more permutations to test at 0.05.")
    judges = [ALL_JUDGES] + sorted(set(table["judge"]) - {ALL_JUDGES})
    shown_judge = st.selectbox("Judge", judges, key="dis_map_judge") if len(judges) > 1 else ALL_JUDGES
    mine = table[table["judge"] == shown_judge]
    st.plotly_chart(dg.map_figure(mine, f"{dg.OUTCOME_LABELS[outcome]} on {dimension} ({shown_judge}) by feature"),
                    key="dis_map_chart")
    views.signature_caption(signature)
    # written when pressed: every slice lists its outputs (all of them, at 200,000 outputs), not on every run
    views.download_later(st, "Download the map (CSV)", lambda: people_csv(
        mine.assign(outputs=mine["outputs"].map(lambda keys: "; ".join(f"{i} / {m}" for i, m in keys)),
                    signature=str(signature))), file_name="empathy-disagreement-map.csv", mime="text/csv",
        key="dis_map_download")

    st.subheader("Slices that depart most from the whole")
    min_units = int(st.number_input("Smallest slice ranked (units)", min_value=1, value=5, step=1,
                                    key="dis_min_units"))
    ranked = ranked_slices(mine, top=None, min_units=min_units)
    if ranked.empty:
        st.info("No slice is large enough to rank; lower the smallest slice.")
    else:
        st.markdown(f"**Strongest:** {md(describe(ranked.iloc[0]))}")
        shown = ranked.drop(columns=["outputs", "low", "high", "outcome", "dimension"])
        event = st.dataframe(shown, hide_index=True, key="dis_ranked", on_select="rerun",
                             selection_mode="single-row",
                             column_config={c: st.column_config.NumberColumn(c, format="%.3f")
                                            for c in ("rate", "whole_rate", "rate_ratio", "difference", "p_value",
                                                      "p_holm", "rate_low", "rate_high", "p_se")})
        views.signature_caption(signature)
        names = [f"{f} · {s} ({n} units)" for f, s, n in zip(ranked["feature"], ranked["slice"], ranked["n_units"],
                                                               strict=True)]
        views.follow_table_selection(event, names, session_keys.DIS_SLICE, session_keys.DIS_RANKED_SELECTION)
        pick = st.selectbox("Open a slice's items (or select a row above)", names, key=session_keys.DIS_SLICE)
        row = ranked.iloc[names.index(pick)]
        items = dg.slice_items(events, row["outputs"], shown_judge)
        st.caption(f"{len(items)} unit(s) of {row['n_outputs']} output(s); disagreements first.")
        st.dataframe(items, hide_index=True, key="dis_slice_items")
        views.signature_caption(signature)
        keys = list(dict.fromkeys(zip(items["item_id"], items["model"], strict=True)))
        choices = [f"{i} · {m}" for i, m in keys]
        if choices:
            opened = st.selectbox("Output", choices, key="dis_output")
            item_id, model = keys[choices.index(opened)]
            source = outputs[(outputs["item_id"] == item_id) & (outputs["model"] == model)]
            if not source.empty and views.has_text(source.iloc[0]):
                views.output_side_by_side(data, source.iloc[0], key="disagreement")
            elif not source.empty:
                views.no_text_note(source.iloc[0])
            if st.button("Open in Inspect", key="dis_open_inspect", help="the Inspect page, filters cleared, at "
                                                                        "this output"):
                for widget in (session_keys.INSPECT_TASK, session_keys.INSPECT_MODEL, session_keys.INSPECT_JUDGE,
                               session_keys.INSPECT_DIMENSION, session_keys.INSPECT_VALUE):
                    st.session_state[widget] = "(any)"
                st.session_state[session_keys.INSPECT_DISAGREE] = False
                st.session_state[session_keys.INSPECT_PICK] = opened
                st.switch_page("app_pages/3_Inspect.py")

# ------------------------------------------------------------------------------------------ calibration
st.subheader("Judge vs human, per model")
calibration_signature = Signature(judges=rated.judges, seed=seed,
                                  extra={"human": "expert+human+author", **ledger.signature_fields()})
cells = dg.confusion(key, dimension, rated.paired)
if cells is not None and not cells.empty:
    st.caption("Confusion matrix of each judge against the humans' label (their mean, rounded half up; a tie "
               "between humans on a 0/1 label is left out and counted as *n_tied*).")
    pairs = cells[["model", "judge"]].drop_duplicates()
    options = [f"{m} · {j}" for m, j in zip(pairs["model"], pairs["judge"], strict=True)]
    pair = st.selectbox("Model and judge", options, key="dis_pair")
    model, judge = pairs.iloc[options.index(pair)]
    left, right = st.columns([1, 2])
    with left:
        matrix = confusion_matrix(cells, model, judge)
        matrix.index = [f"human {v:g}" for v in matrix.index]
        matrix.columns = [f"judge {v:g}" for v in matrix.columns]
        st.dataframe(matrix, key="dis_matrix")
        views.signature_caption(calibration_signature)
    with right:
        mine = cells[(cells["model"] == model) & (cells["judge"] == judge)]
        cell_names = [f"human {h:g} → judge {j:g} ({n})" for h, j, n in zip(mine["human_label"], mine["judge_label"],
                                                                            mine["count"], strict=True)]
        cell = st.selectbox("Cell", cell_names, key="dis_cell")
        chosen = mine.iloc[cell_names.index(cell)]
        st.dataframe(pd.DataFrame(chosen["outputs"], columns=["item_id", "model"]), hide_index=True,
                     key="dis_cell_items")
        views.signature_caption(calibration_signature)
        definition = rubric(dimension)
        if definition is not None:  # what the two labels of the cell mean, in the paper's words
            st.caption(" · ".join(f"**{side} {value:g}** — {md(definition.get(value, '(not in the rubric)'))}"
                                  for side, value in (("human", chosen["human_label"]),
                                                      ("judge", chosen["judge_label"]))))
        count = len(chosen["outputs"])
        if st.button(f"Relabel these {count} outputs", key="dis_relabel_cell", type="primary",
                     help="the Relabel queue kept to this cell's outputs, with the rubric of "
                          f"{md(dimension)} beside each"):
            relabel_focus.open_relabel(chosen["outputs"], dimension, f"{model} · {judge}: {cell}")
elif cells is None:
    st.caption(f"{code(dimension)} is a score, not a label: its calibration is below.")
else:
    st.info(f"No output of {code(dimension)} has both a judge's and a human's rating.")

bootstrap = int(st.number_input("Bootstrap resamples of items (bias and slope intervals)", min_value=0,
                                max_value=5000, value=500, step=100, key="dis_bootstrap"))
biases = dg.bias(key, dimension, bootstrap, seed, rated.paired, data.content_key)
if not biases.empty:
    st.caption("Bias = mean(judge - human); slope of the judge's score on the humans' mean. Intervals resample "
               "items. A slope below 1 is not by itself a judge that flattens the humans' differences: the "
               "humans' mean is noisy, which pulls every slope on it towards 0 (regression dilution). "
               "human_slope, one human's slope on the mean of the other humans, is what that noise alone gives; "
               "a judge compresses where its slope is clearly below it (empty with fewer than two humans).")
    st.dataframe(biases, hide_index=True, key="dis_bias")
    views.interval_warnings(biases, ["model", "judge"])
    views.signature_caption(Signature(judges=rated.judges, seed=seed,
                                      extra={"bootstrap": str(bootstrap), "items": "cluster",
                                             **ledger.signature_fields()}))
    if cells is None:
        curve = dg.bins(key, dimension, 5, rated.paired)
        judge_names = sorted(set(curve["judge"]))
        judge = st.selectbox("Judge", judge_names, key="dis_curve_judge")
        st.plotly_chart(dg.calibration_figure(curve, judge, dimension), key="dis_curve")
        st.dataframe(curve.drop(columns=["outputs"]), hide_index=True, key="dis_bins")
        views.signature_caption(calibration_signature)

st.subheader("Items every rater splits on")
# the counts and the first rows (the most split), held per ledger: a table is sent to the browser on every run,
# and all 200,000 units were seconds of CPU per run
split = dg.split_preview(key, dimension, rated, data.content_key, views.PREVIEW_ROWS)
if not split.n_units:
    st.caption("Needs two raters on the same unit.")
else:
    st.caption(f"{split.n_split} of {split.n_units} units have raters at least one disagreement step "
               "apart (spread = max - min of every rater's value; modal share = the largest group of raters "
               "giving one value).")
    if split.n_units > len(split.head):
        st.caption(f"The first {len(split.head):,} of {split.n_units:,} rows.")
    views.table_preview(split.head, key="dis_splits")
    views.signature_caption(calibration_signature)
