"""Relabel page: a queue of outputs, judge disagreements first, one keystroke or click per decision."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pandas as pd  # noqa: E402
import streamlit as st  # noqa: E402

from empathy.io import BINARY_DIMENSIONS  # noqa: E402
from empathy.render import highlight_html, legend_html  # noqa: E402
from empathy.review import relabel_queue  # noqa: E402
from empathy.store import Change  # noqa: E402
from empathy_app import state, views  # noqa: E402

data = state.page_setup("Relabel")
data = state.require_data()
views.show_flash_error()
judge_ratings = data.dataset.ratings
dimensions = data.dataset.dimensions

controls = st.columns([2, 2, 3])
dimension = controls[0].selectbox("Dimension to relabel", dimensions, key="relabel_dimension",
                                  index=dimensions.index("ca") if "ca" in dimensions else 0,
                                  format_func=views.dimension_label)
raters_with = sorted(judge_ratings.loc[judge_ratings["dimension"] == dimension, "rater"].unique())
# Human reference raters (experts, a crowd) are what judges are checked against: "(all judges)" never
# overwrites them; choose one of them by name to relabel it.
human_kinds = {"expert", "crowd", "human"}
kinds = judge_ratings.drop_duplicates("rater").set_index("rater")["rater_kind"]
judges_with = [r for r in raters_with if kinds.get(r, "") not in human_kinds] or raters_with
apply_to = controls[1].selectbox("Apply each decision to", ["(all judges)", *raters_with], key="relabel_apply_to",
                                 help="'(all judges)' means every judge that rated the output; expert, crowd "
                                 "and human raters are changed only when chosen by name.")
tasks = sorted(t for t in data.dataset.outputs["task"].unique() if t)
task = controls[2].selectbox("Task", ["(all)", *tasks], key="relabel_task")

annotator = st.session_state.get("annotator", "").strip()
if not annotator:
    st.info("Enter your name as **Annotator** in the sidebar to start: it is recorded with every decision.")
    st.stop()

outputs = data.dataset.outputs if task == "(all)" else data.dataset.outputs[data.dataset.outputs["task"] == task]
rated = judge_ratings[judge_ratings["dimension"] == dimension]
rated_keys = pd.MultiIndex.from_frame(rated[["item_id", "model"]])
outputs = outputs[pd.MultiIndex.from_frame(outputs[["item_id", "model"]]).isin(rated_keys)]
decided = state.overrides(data)
if apply_to != "(all judges)" and len(decided):
    decided = decided[decided["rater"] == apply_to]  # relabelling one rater: the queue counts its decisions
queue = relabel_queue(judge_ratings, dimension, outputs, done=decided)
scale = views.rating_scale(data, dimension)
if queue.empty:
    st.info(f"No output has a judge rating of {dimension} here.")
    st.stop()
done = int(queue["done"].sum())
st.progress(done / len(queue), text=f"{done} of {len(queue)} decided · {int(queue['disagree'].sum())} with "
                                     f"judge disagreement (shown first)")
skipped = set(map(tuple, st.session_state["relabel_skipped"]))
pending = queue[~queue["done"]]
pending = pd.concat([pending[[(i, m) not in skipped for i, m in zip(pending["item_id"], pending["model"],
                                                                     strict=True)]],
                     pending[[(i, m) in skipped for i, m in zip(pending["item_id"], pending["model"], strict=True)]]])
if pending.empty:
    st.success(f"Every output in this queue has a human {dimension} decision. Change the filters or undo.")
    if st.button("Undo my last decision", key="relabel_undo_done", shortcut="U"):
        views.undo(data)
        st.rerun()
    st.stop()

current = pending.iloc[0]
item_id, model_name = current["item_id"], current["model"]
targets = ([j for j in judges_with
            if not rated[(rated["item_id"] == item_id) & (rated["model"] == model_name) & (rated["rater"] == j)].empty]
           or judges_with) if apply_to == "(all judges)" else [apply_to]
row = data.dataset.outputs[(data.dataset.outputs["item_id"] == item_id)
                           & (data.dataset.outputs["model"] == model_name)].iloc[0]


def _decide(value: float) -> None:
    reason = st.session_state.get("relabel_reason", "")
    changes = [Change(item_id, model_name, judge, dimension, value, reason) for judge in targets]
    if views.save_overrides(data, changes):
        st.session_state["relabel_reason"] = ""


def _skip() -> None:
    st.session_state["relabel_skipped"] = [*st.session_state["relabel_skipped"], (item_id, model_name)]


def _undo() -> None:
    views.undo(data)


labels = current[[c for c in current.index if c in judges_with]]
label_text = ", ".join(views.code(f"{j}: {'-' if pd.isna(v) else f'{v:g}'}") for j, v in labels.items())
st.markdown(f"{views.code(item_id)} · {views.code(model_name)} (task {views.code(row['task'] or '-')}) — "
            f"judges say {label_text}"
            + (" — **judges disagree**" if current["disagree"] else ""))
if views.has_text(row):
    texts = (row["reference"], row["generation"])
    spans = state.spans_for(texts)
    st.markdown(legend_html(), unsafe_allow_html=True)
    sides = st.columns(2)
    for column, title, text, text_spans in zip(sides, ("Reference / prompt", "Generation"), texts, spans,
                                               strict=True):
        with column:
            st.markdown(f"**{title}**")
            with st.container(border=True, height=320):
                st.markdown(highlight_html(text, text_spans), unsafe_allow_html=True)
    views.conversation(row, "relabel_conversation")
else:
    views.no_text_note(row, "Decide from the other raters' labels, or skip it.")

st.text_input("Reason (optional, kept in the audit trail)", key="relabel_reason")
if scale is not None and dimension not in BINARY_DIMENSIONS:
    low, high = scale
    # Relabelling one rater: its current label is the highlighted button.
    now = {float(labels[apply_to])} if apply_to in labels.index and pd.notna(labels[apply_to]) else set()
    st.markdown(f"**{dimension}** on the scale {low}-{high}" + (f" ({views.code(apply_to)} says "
                f"{next(iter(now)):g})" if now else ""))
    levels = st.columns(high - low + 1)
    for cell, level in zip(levels, range(low, high + 1), strict=True):
        cell.button(f"Level {level}", key=f"relabel_level_{level}", on_click=_decide, args=(float(level),),
                    shortcut=str(level) if 0 <= level <= 9 else None, width="stretch",
                    type="primary" if float(level) in now else "secondary",
                    help=f"{dimension} = {level}" + (" (the current label)" if float(level) in now else ""))
buttons = st.columns(4)
if dimension in BINARY_DIMENSIONS:
    buttons[0].button(f"{dimension} = 0", key="relabel_zero", on_click=_decide, args=(0.0,), shortcut="0",
                      type="primary", width="stretch", help="Engages with the tension (no conflict avoidance)")
    buttons[1].button(f"{dimension} = 1", key="relabel_one", on_click=_decide, args=(1.0,), shortcut="1",
                      type="primary", width="stretch", help="Avoids the conflict (premature solution/harmony)")
elif scale is None:
    with buttons[0]:
        value = views.value_widget(dimension, "relabel_value", float(labels.dropna().mean()) if labels.notna().any()
                                   else None)
    buttons[1].button("Save", key="relabel_save", on_click=_decide, args=(value,), shortcut="Enter",
                      type="primary", width="stretch")
skip_at, undo_at = (2, 3) if scale is None or dimension in BINARY_DIMENSIONS else (0, 1)
buttons[skip_at].button("Skip", key="relabel_skip", on_click=_skip, shortcut="S", width="stretch")
buttons[undo_at].button("Undo", key="relabel_undo", on_click=_undo, shortcut="U", width="stretch")
keys = ("0 / 1" if dimension in BINARY_DIMENSIONS else f"{scale[0]}-{min(scale[1], 9)}" if scale is not None
        else "Enter")
st.caption(f"Keys: {keys} decide, S skip, U undo. "
           f"Decisions are saved as {views.code(annotator)} for {', '.join(map(views.code, targets))}.")
