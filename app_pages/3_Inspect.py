"""Inspect page: one output beside its reference, distancing highlighted, every judge's labels, overrides."""

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import streamlit as st  # noqa: E402

from empathy.labels.decisions import decision_count  # noqa: E402
from empathy.labels.locations import StoreError  # noqa: E402
from empathy.labels.rules import ALL_JUDGES, make_changes, override_targets  # noqa: E402
from empathy.mechanisms import note_fields, output_scores  # noqa: E402
from empathy.review import inspect_filter  # noqa: E402
from empathy_app import compute, decisions, exhibit_views, frame, loading, overrides, session_keys, views  # noqa: E402
from empathy_app.decisions import md, output_key  # noqa: E402

data = loading.require_data(ratings=False)
views.show_flash_error()
views.mode_caption(data)
outputs = data.dataset.outputs
judge_ratings = data.dataset.ratings
ratings = compute.effective_ratings(data)
ANY = "(any)"

with st.container(border=True):
    top = st.columns(4)
    tasks = sorted(t for t in outputs["task"].unique() if t)
    task = top[0].selectbox("Task", [ANY, *tasks], key=session_keys.INSPECT_TASK)
    model = top[1].selectbox("Model", [ANY, *data.dataset.models], key=session_keys.INSPECT_MODEL)
    judge = top[2].selectbox("Judge", [ANY, *data.dataset.raters], key=session_keys.INSPECT_JUDGE)
    dimensions = data.dataset.dimensions
    dimension = top[3].selectbox("Label", [ANY, *dimensions], key=session_keys.INSPECT_DIMENSION,
                                 format_func=lambda d: d if d == ANY else views.dimension_label(d))
    bottom = st.columns(4)
    values = []
    if dimension != ANY:
        present = ratings.loc[ratings["dimension"] == dimension, "value"].dropna().unique()
        values = sorted(float(v) for v in present)
    value = bottom[0].selectbox("Label value", [ANY, *values], key=session_keys.INSPECT_VALUE,
                                format_func=lambda v: v if v == ANY else f"{v:g}", disabled=dimension == ANY)
    disagree_only = bottom[1].checkbox("Only where judges disagree", key=session_keys.INSPECT_DISAGREE,
                                       disabled=dimension == ANY or len(data.dataset.raters) < 2,
                                       help="Needs a label and at least two judges.")

keys = inspect_filter(outputs, ratings, task=None if task == ANY else task, model=None if model == ANY else model,
                      judge=None if judge == ANY else judge, dimension=None if dimension == ANY else dimension,
                      value=None if value == ANY else value, disagree_only=bool(disagree_only))
if keys.empty:
    st.info("No output matches these filters. Widen them above.")
    st.stop()

labels = compute.output_labels(keys)
if st.session_state.get(session_keys.INSPECT_PICK) not in labels:
    st.session_state[session_keys.INSPECT_PICK] = labels[0]


def _step(offset: int) -> None:
    position = labels.index(st.session_state[session_keys.INSPECT_PICK])
    st.session_state[session_keys.INSPECT_PICK] = labels[(position + offset) % len(labels)]


def _go_to() -> None:
    number = st.session_state.get(session_keys.INSPECT_GO_TO)
    if number is not None and 1 <= number <= len(labels):  # the box's bounds; a number beyond them moves nothing
        st.session_state[session_keys.INSPECT_PICK] = labels[int(number) - 1]
        st.session_state[session_keys.INSPECT_GO_TO] = None  # an empty box again, not a number that goes stale


# the picker lists a window around the open output (all when there are few): its options go to the browser on
# every run, and 200,000 of them were megabytes a click
position = labels.index(st.session_state[session_keys.INSPECT_PICK])
start, listed = views.picker_window(labels, position)
nav = st.columns([1, 5, 1, 1])
nav[0].button("◀ Previous", key="inspect_prev", on_click=_step, args=(-1,), shortcut="Left",
              width="stretch")
nav[1].selectbox(f"Output ({len(labels)} match)", listed, key=session_keys.INSPECT_PICK,
                 label_visibility="collapsed")
nav[2].button("Next ▶", key="inspect_next", on_click=_step, args=(1,), shortcut="Right", width="stretch")
with nav[3]:
    frame.keys_help("inspect")
if len(listed) < len(labels):
    window = f"outputs {start + 1:,}-{start + len(listed):,} of {len(labels):,}"
    st.columns([2, 3])[0].number_input(f"The list holds {window}: go to output number", min_value=1,
                                       max_value=len(labels), value=None, step=1, key=session_keys.INSPECT_GO_TO,
                                       on_change=_go_to, placeholder=f"1-{len(labels):,}")
item_id, model_name = keys.iloc[position]["item_id"], keys.iloc[position]["model"]
index = compute.row_index(data)  # one output's rows looked up, not every row compared
row = index.output(outputs, item_id, model_name).iloc[0]
st.caption(f"Output {position + 1} of {len(labels)} · task {views.code(row['task'] or '-')} · "
           f"item {views.code(item_id)} · model {views.code(model_name)}")
exhibit_views.pin_control(data, item_id, model_name, "inspect_exhibit")

if views.has_text(row):
    texts = (row["reference"], row["generation"])
    analysis = compute.densities_for(texts)
    views.output_side_by_side(data, row, key="inspect", notes=note_fields(row),
                              scores=output_scores(index.ratings_of(ratings, item_id, model_name), item_id,
                                                   model_name, analysis[0][0], analysis[1][0]))
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
    for column, text in note_fields(row):
        st.caption(f"**{md(column)}**: {md(text)}")
    views.no_text_note(row, "No highlights or distancing densities; the labels are below.")

st.subheader("Judges' labels for this output")
mine = index.ratings_of(ratings, item_id, model_name)
base = index.ratings_of(judge_ratings, item_id, model_name)
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
try:
    ledger = overrides.ledger(data)
except StoreError as error:  # the file was damaged after the store was opened
    st.error(f"The override store cannot be used: {md(error)}")
    st.stop()
who = decisions.access(data)
annotator = who.identity
decisions.ledger_panel(data, ledger, annotator, "inspect_ledger")
stale_here = ledger.status.stale
if len(stale_here):
    stale_here = stale_here[(stale_here["item_id"] == item_id) & (stale_here["model"] == model_name)]
    if len(stale_here):
        st.warning(f"{decision_count(stale_here)} decision(s) on this output were made on a different text and are not "
                   "applied until confirmed (see the ledger above).")
controls = st.columns([2, 2, 3])
target = controls[0].selectbox("Judge", [ALL_JUDGES, *judges_here], key="inspect_override_judge",
                               help="'(all judges)' means every LLM and lexicon judge that rated this output; "
                                    "expert, crowd, human and author raters are changed only when chosen by name.")
here = sorted(base["dimension"].unique()) or dimensions  # this output's dimensions (a corpus has its own)
dim_choice = controls[1].selectbox("Dimension", here, key="inspect_override_dimension",
                                   index=here.index("ca") if "ca" in here else 0)
targets = override_targets(base, item_id, model_name, dim_choice, target)
# The form opens on this output's current label of the (first) target: keyed by output, dimension and target,
# so it never keeps the value of the output shown before.
shown_rater = targets[0] if targets else None
current_values = mine[(mine["dimension"] == dim_choice) & (mine["rater"] == shown_rater)]["value"].dropna()
with controls[2]:
    new_value = views.value_widget(dim_choice, output_key("inspect_override_value", item_id, model_name, dim_choice,
                                                          target),
                                   float(current_values.iloc[0]) if len(current_values) else None,
                                   scale=views.rating_scale(data, dim_choice))
reason = st.text_input("Reason (optional)", key="inspect_override_reason")
if not targets:
    st.warning(f"No LLM or lexicon judge rated {md(dim_choice)} of this output: choose a rater by name.")
refusal = who.why_not("decide")
buttons = st.columns([1, 1, 4])
if buttons[0].button("Save override", key=output_key("inspect_save", item_id, model_name), type="primary",
                     disabled=not targets or refusal is not None, help=md(refusal) if refusal else None):
    try:
        changes = make_changes(index.output(outputs, item_id, model_name), base, item_id, model_name, targets,
                               dim_choice, new_value, reason)
    except ValueError as error:
        st.session_state[session_keys.FLASH_ERROR] = f"Not saved: {md(error)}"
    else:
        if decisions.save(data, changes, annotator):
            st.rerun()
    views.show_flash_error()
if buttons[1].button("Undo my last", key="inspect_undo", disabled=refusal is not None,
                     help=md(refusal) if refusal else None):
    decisions.undo(data, annotator)
    st.rerun()
st.caption(f"Saving applies to {', '.join(map(views.code, targets)) or '(nobody)'} as "
           f"{views.code(who.describe()) if annotator else '(nobody yet)'}."
           + (f" {md(refusal)}." if refusal else ""))

disagreeing, rated_outputs = compute.disagreement_count(data, dim_choice)
if len(data.dataset.raters) >= 2 and rated_outputs:
    st.caption(f"Judges disagree on {dim_choice} for {disagreeing} of {rated_outputs} outputs "
               f"({disagreeing / rated_outputs:.0%}).")
