"""Inspect page: one output beside its reference, distancing highlighted, every judge's labels, overrides."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import streamlit as st  # noqa: E402

from empathy.render import highlight_html, legend_html  # noqa: E402
from empathy.review import disagreement, inspect_filter  # noqa: E402
from empathy.store import Change  # noqa: E402
from empathy_app import state, views  # noqa: E402

data = state.page_setup("Inspect")
data = state.require_data(ratings=False)
views.show_flash_error()
views.mode_caption(data)
outputs = data.dataset.outputs
judge_ratings = data.dataset.ratings
ratings = state.effective_ratings(data)
ANY = "(any)"

with st.container(border=True):
    top = st.columns(4)
    tasks = sorted(t for t in outputs["task"].unique() if t)
    task = top[0].selectbox("Task", [ANY, *tasks], key="inspect_task")
    model = top[1].selectbox("Model", [ANY, *data.dataset.models], key="inspect_model")
    judge = top[2].selectbox("Judge", [ANY, *data.dataset.raters], key="inspect_judge")
    dimensions = data.dataset.dimensions
    dimension = top[3].selectbox("Label", [ANY, *dimensions], key="inspect_dimension",
                                 format_func=lambda d: d if d == ANY else views.dimension_label(d))
    bottom = st.columns(4)
    values = []
    if dimension != ANY:
        present = ratings.loc[ratings["dimension"] == dimension, "value"].dropna().unique()
        values = sorted(float(v) for v in present)
    value = bottom[0].selectbox("Label value", [ANY, *values], key="inspect_value",
                                format_func=lambda v: v if v == ANY else f"{v:g}", disabled=dimension == ANY)
    disagree_only = bottom[1].checkbox("Only where judges disagree", key="inspect_disagree",
                                       disabled=dimension == ANY or len(data.dataset.raters) < 2,
                                       help="Needs a label and at least two judges.")

keys = inspect_filter(outputs, ratings, task=None if task == ANY else task, model=None if model == ANY else model,
                      judge=None if judge == ANY else judge, dimension=None if dimension == ANY else dimension,
                      value=None if value == ANY else value, disagree_only=bool(disagree_only))
if keys.empty:
    st.info("No output matches these filters. Widen them above.")
    st.stop()

labels = [f"{i} · {m}" for i, m in zip(keys["item_id"], keys["model"], strict=True)]
if st.session_state.get("_w_inspect_pick") not in labels:
    st.session_state["_w_inspect_pick"] = labels[0]


def _step(offset: int) -> None:
    position = labels.index(st.session_state["_w_inspect_pick"])
    st.session_state["_w_inspect_pick"] = labels[(position + offset) % len(labels)]


nav = st.columns([1, 6, 1])
nav[0].button("◀ Previous", key="inspect_prev", on_click=_step, args=(-1,), shortcut="Left",
              width="stretch")
pick = nav[1].selectbox(f"Output ({len(labels)} match)", labels, key="_w_inspect_pick", label_visibility="collapsed")
nav[2].button("Next ▶", key="inspect_next", on_click=_step, args=(1,), shortcut="Right", width="stretch")
position = labels.index(pick)
item_id, model_name = keys.iloc[position]["item_id"], keys.iloc[position]["model"]
row = outputs[(outputs["item_id"] == item_id) & (outputs["model"] == model_name)].iloc[0]
st.caption(f"Output {position + 1} of {len(labels)} · task {views.code(row['task'] or '-')} · "
           f"item {views.code(item_id)} · model {views.code(model_name)}")

if views.has_text(row):
    texts = (row["reference"], row["generation"])
    spans = state.spans_for(texts)
    analysis = state.densities_for(texts)
    st.markdown(legend_html(), unsafe_allow_html=True)
    sides = st.columns(2)
    for column, title, text, text_spans in zip(sides, ("Reference", "Generation"), texts, spans, strict=True):
        with column:
            st.markdown(f"**{title}**")
            with st.container(border=True):
                st.markdown(highlight_html(text, text_spans), unsafe_allow_html=True)
    views.conversation(row, "inspect_conversation")

    density = pd.DataFrame({
        "reference": list(analysis[0][2]), "generation": list(analysis[1][2]),
    }, index=["nominalization", "impersonal", "agentless"])
    density["difference (gen - ref)"] = density["generation"] - density["reference"]
    counts = pd.DataFrame({"reference": [analysis[0][0]], "generation": [analysis[1][0]],
                           "difference (gen - ref)": [analysis[1][0] - analysis[0][0]]}, index=["sentences"])
    st.markdown("**Distancing densities** (spans per sentence)")
    st.dataframe(pd.concat([counts.astype(float), density]).round(3), key="inspect_densities")
else:
    views.no_text_note(row, "No highlights or distancing densities; the labels are below.")

st.subheader("Judges' labels for this output")
mine = ratings[(ratings["item_id"] == item_id) & (ratings["model"] == model_name)]
base = judge_ratings[(judge_ratings["item_id"] == item_id) & (judge_ratings["model"] == model_name)]
if mine.empty:
    st.info("No judge rated this output.")
else:
    effective = mine.pivot_table(index="dimension", columns="rater", values="value", aggfunc="first", dropna=False)
    original = base.pivot_table(index="dimension", columns="rater", values="value", aggfunc="first", dropna=False)
    flags = mine.pivot_table(index="dimension", columns="rater", values="overridden", aggfunc="first")
    shown = effective.copy().astype(object)
    for dim_name in shown.index:
        for rater in shown.columns:
            now = effective.loc[dim_name, rater]
            text = "-" if pd.isna(now) else f"{now:g}"
            if bool(flags.get(rater, pd.Series(dtype=bool)).get(dim_name, False)):
                was = original.get(rater, pd.Series(dtype=float)).get(dim_name, np.nan)
                text += f"  (judge: {'-' if pd.isna(was) else f'{was:g}'}, overridden)"
            shown.loc[dim_name, rater] = text
    st.dataframe(shown.reset_index(), hide_index=True, key="inspect_labels")
    reasons = base[base["reason"].astype(str) != ""]
    if len(reasons):
        st.caption("Missing-rating reasons: " + "; ".join(
            views.code(f"{r.rater}/{r.dimension}: {r.reason}") for r in reasons.itertuples()))

st.markdown("**Override a label**")
judges_here = data.dataset.raters
if not dimensions:
    st.info("No rating dimensions in this data set.")
    st.stop()
controls = st.columns([2, 2, 3])
target = controls[0].selectbox("Judge", ["(all judges)", *judges_here], key="inspect_override_judge")
here = sorted(base["dimension"].unique()) or dimensions  # this output's dimensions (a corpus has its own)
dim_choice = controls[1].selectbox("Dimension", here, key="inspect_override_dimension",
                                   index=here.index("ca") if "ca" in here else 0)
current_values = mine[mine["dimension"] == dim_choice]["value"].dropna()
with controls[2]:
    new_value = views.value_widget(dim_choice, "inspect_override_value",
                                   float(current_values.iloc[0]) if len(current_values) else None,
                                   scale=views.rating_scale(data, dim_choice))
reason = st.text_input("Reason (optional)", key="inspect_override_reason")
rated_by = sorted(base.loc[base["dimension"] == dim_choice, "rater"].unique()) or judges_here
targets = rated_by if target == "(all judges)" else [target]
buttons = st.columns([1, 1, 4])
if buttons[0].button("Save override", key="inspect_save", type="primary"):
    changes = [Change(item_id, model_name, rater, dim_choice, new_value, reason) for rater in targets]
    if views.save_overrides(data, changes):
        st.rerun()
    views.show_flash_error()
if buttons[1].button("Undo my last", key="inspect_undo"):
    views.undo(data)
    st.rerun()

dis = disagreement(judge_ratings, dim_choice)
if len(data.dataset.raters) >= 2 and len(dis):
    share = dis["disagree"].mean()
    st.caption(f"Judges disagree on {dim_choice} for {int(dis['disagree'].sum())} of {len(dis)} outputs "
               f"({share:.0%}).")
