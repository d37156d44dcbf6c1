"""Relabel page: a queue of outputs, judge disagreements first, one keystroke or click per decision.

Each decision carries the output it was made on (the buttons are keyed by output and their callback checks
that this output is still the one on screen), is recorded under the annotator name committed with a button,
and is bound to the text it was made on. A blind switch hides every judge label; the paper's rubric of the
dimension stands beside each item.
"""

from datetime import datetime, timezone

import pandas as pd  # noqa: E402
import streamlit as st  # noqa: E402

from empathy.io import BINARY_DIMENSIONS  # noqa: E402
from empathy.overrides import (  # noqa: E402
    ALL_JUDGES,
    RUBRIC_SOURCE,
    adjudication_list,
    classify_rerun,
    human_agreement,
    make_changes,
    override_targets,
    rubric,
)
from empathy.render import highlight_html, legend_html  # noqa: E402
from empathy.review import relabel_queue  # noqa: E402
from empathy.store import StoreError  # noqa: E402
from empathy_app import decisions, exhibit_views, relabel_focus, state, views  # noqa: E402
from empathy_app.decisions import md, output_key  # noqa: E402

SHOWN = "relabel_shown"  # (dimension, item_id, model, shown at) of the output on screen; None once decided

data = state.page_setup("Relabel")
data = state.require_data()
views.show_flash_error()
judge_ratings = data.dataset.ratings
all_outputs = data.all_data.outputs
dimensions = data.dataset.dimensions

controls = st.columns([2, 2, 3])
dimension = controls[0].selectbox("Dimension to relabel", dimensions, key="relabel_dimension",
                                  index=dimensions.index("ca") if "ca" in dimensions else 0,
                                  format_func=views.dimension_label)
raters_with = sorted(judge_ratings.loc[judge_ratings["dimension"] == dimension, "rater"].unique())
apply_to = controls[1].selectbox("Apply each decision to", [ALL_JUDGES, *raters_with], key="relabel_apply_to",
                                 help="'(all judges)' means every LLM and lexicon judge that rated the output; "
                                 "expert, crowd, human and author raters are changed only when chosen by name.")
tasks = sorted(t for t in data.dataset.outputs["task"].unique() if t)
task = controls[2].selectbox("Task", ["(all)", *tasks], key="relabel_task")
options = st.columns([2, 2, 3])
st.session_state["_w_relabel_blind"] = bool(st.session_state.get("relabel_blind", False))
blind = options[0].toggle("Blind: hide judge labels", key="_w_relabel_blind",
                          on_change=lambda: st.session_state.__setitem__("relabel_blind",
                                                                         st.session_state["_w_relabel_blind"]),
                          help="Hides every judge's label (and which outputs the judges disagree on) so that "
                               "they cannot anchor your decision.")
decisions.label_rule_select(options[1])

annotator = decisions.annotator_form()
try:
    ledger = state.ledger(data)
except StoreError as error:  # the file was damaged after the store was opened
    st.error(f"The override store cannot be used: {md(error)}")
    st.stop()
decisions.ledger_panel(data, ledger, annotator, "relabel_ledger")
if not annotator:
    st.info("Commit your annotator name above to start: it is recorded with every decision.")
    st.stop()

outputs = data.dataset.outputs if task == "(all)" else data.dataset.outputs[data.dataset.outputs["task"] == task]
rated = judge_ratings[judge_ratings["dimension"] == dimension]
rated_keys = pd.MultiIndex.from_frame(rated[["item_id", "model"]])
outputs = outputs[pd.MultiIndex.from_frame(outputs[["item_id", "model"]]).isin(rated_keys)]
# The queue is this annotator's: what others decided does not take an item out of it (each keeps their own).
mine = ledger.status.fresh
mine = mine[(mine["annotator"] == annotator) & (mine["role"] == "annotator")] if len(mine) else mine
if apply_to != ALL_JUDGES and len(mine):
    mine = mine[mine["rater"] == apply_to]  # relabelling one rater: the queue counts its decisions
queue = relabel_queue(judge_ratings, dimension, outputs, done=mine)
queue = relabel_focus.apply(queue, dimension)  # one confusion cell's outputs, from Disagreement
if st.radio("Order", ["judge disagreement", "by influence"], horizontal=True, key="relabel_order",
            help="By influence: first the outputs whose one label accounts for most of the margin between their "
                 "model and the nearest rival (ranking fragility)") == "by influence" and len(queue):
    queue = exhibit_views.relabel_by_influence(data, queue, dimension)
scale = views.rating_scale(data, dimension)
if queue.empty:
    st.info(f"No output has a judge rating of {md(dimension)} here.")
    st.stop()
done = int(queue["done"].sum())
st.progress(done / len(queue), text=f"{done} of {len(queue)} decided by you" + (
    "" if blind else f" · {int(queue['disagree'].sum())} with judge disagreement (shown first)"))
skipped = set(map(tuple, st.session_state["relabel_skipped"]))
pending = queue[~queue["done"]]
pending = pd.concat([pending[[(i, m) not in skipped for i, m in zip(pending["item_id"], pending["model"],
                                                                     strict=True)]],
                     pending[[(i, m) in skipped for i, m in zip(pending["item_id"], pending["model"], strict=True)]]])


def _undo() -> None:
    decisions.undo(data, decisions.committed_annotator())
    st.session_state[SHOWN] = None


if pending.empty:
    st.success(f"Every output in this queue has your {md(dimension)} decision. Change the filters or undo.")
    st.button("Undo my last decision", key="relabel_undo_done", shortcut="U", on_click=_undo)
    st.stop()

current = pending.iloc[0]
item_id, model_name = str(current["item_id"]), str(current["model"])
row = all_outputs[(all_outputs["item_id"] == item_id) & (all_outputs["model"] == model_name)].iloc[0]
targets = override_targets(judge_ratings, item_id, model_name, dimension, apply_to)
shown_now = (dimension, item_id, model_name)
previous = st.session_state.get(SHOWN)
if previous is None or tuple(previous[:3]) != shown_now:
    st.session_state[SHOWN] = (*shown_now, datetime.now(timezone.utc).isoformat(timespec="microseconds"))


def _decide(value: float, dim: str, item: str, model: str, choice: str) -> None:
    """Record ``value`` for the output the pressed button belonged to, if it is still the one on screen."""
    shown = st.session_state.get(SHOWN)
    if shown is None or tuple(shown[:3]) != (dim, item, model):
        st.session_state["flash_error"] = (f"Refused: that key was for {md(item)} / {md(model)}, which is no "
                                           "longer the output on screen (already decided). Nothing was saved; "
                                           "decide the output now shown.")
        return
    who = decisions.committed_annotator()
    chosen = override_targets(judge_ratings, item, model, dim, choice)
    try:
        changes = make_changes(all_outputs, judge_ratings, item, model, chosen, dim, value,
                               st.session_state.get("relabel_reason", ""))
    except ValueError as error:
        st.session_state["flash_error"] = f"Not saved: {md(error)}"
        return
    others = data.store.decisions(data.dataset_id)
    if len(others):
        others = others[(others["item_id"] == item) & (others["model"] == model) & (others["dimension"] == dim)
                        & (others["annotator"] != who) & (others["updated_at"] > shown[3])]
    if decisions.save(data, changes, who):
        st.session_state[SHOWN] = None  # one decision per output shown: a second key for it is refused
        st.session_state["relabel_reason"] = ""
        if len(others):
            st.session_state["flash"] += (" Note: " + ", ".join(sorted(map(md, set(others["annotator"]))))
                                          + " decided this output meanwhile; both decisions are kept.")


def _skip(item: str, model: str) -> None:
    st.session_state["relabel_skipped"] = [*st.session_state["relabel_skipped"], (item, model)]
    st.session_state[SHOWN] = None


labels = current[[c for c in current.index if c in raters_with]]
judge_labels = labels[[r for r in labels.index if r in targets or r == apply_to]]
header = f"{views.code(item_id)} · {views.code(model_name)} (task {views.code(row['task'] or '-')})"
if blind:
    st.markdown(header + " — judge labels hidden (blind)")
else:
    label_text = ", ".join(views.code(f"{j}: {'-' if pd.isna(v) else f'{v:g}'}") for j, v in labels.items())
    st.markdown(f"{header} — raters say {label_text}" + (" — **judges disagree**" if current["disagree"] else ""))
others_here = ledger.decisions
if len(others_here):
    others_here = others_here[(others_here["item_id"] == item_id) & (others_here["model"] == model_name)
                              & (others_here["dimension"] == dimension) & (others_here["annotator"] != annotator)]
    if len(others_here):
        st.caption("Also decided by " + ", ".join(sorted(map(md, set(others_here["annotator"]))))
                   + " (their labels are kept apart from yours).")
text_side, rubric_side = st.columns([3, 1])
with text_side:
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
with rubric_side, st.container(border=True, key="relabel_rubric"):
    definition = rubric(dimension)
    if definition is None:
        st.markdown(f"**{md(views.dimension_label(dimension))}**: no rubric in the paper for this dimension.")
    else:
        st.markdown(f"**Rubric of {md(dimension)}** ({RUBRIC_SOURCE})")
        for level in sorted(definition, reverse=True):
            st.markdown(f"**{level:g}** — {definition[level]}")

st.text_input("Reason (optional, kept in the audit trail)", key="relabel_reason")
if not targets:
    st.warning(f"No LLM or lexicon judge rated {md(dimension)} of this output, so '(all judges)' has nothing to "
               "replace. Choose a rater by name in **Apply each decision to**, or skip it.")
args_for = (dimension, item_id, model_name, apply_to)
enabled = bool(targets)
if scale is not None and dimension not in BINARY_DIMENSIONS:
    low, high = scale
    # Relabelling one rater: its current label is the highlighted button (never in blind mode).
    now = ({float(labels[apply_to])} if not blind and apply_to in labels.index and pd.notna(labels[apply_to])
           else set())
    st.markdown(f"**{md(dimension)}** on the scale {low}-{high}" + (
        f" ({views.code(apply_to)} says {next(iter(now)):g})" if now else ""))
    levels = st.columns(high - low + 1)
    for cell, level in zip(levels, range(low, high + 1), strict=True):
        cell.button(f"Level {level}", key=output_key(f"relabel_level_{level}", dimension, item_id, model_name),
                    on_click=_decide, args=(float(level), *args_for), disabled=not enabled,
                    shortcut=str(level) if 0 <= level <= 9 else None, width="stretch",
                    type="primary" if float(level) in now else "secondary",
                    help=f"{dimension} = {level}" + (" (the current label)" if float(level) in now else ""))
buttons = st.columns(4)
if dimension in BINARY_DIMENSIONS:
    buttons[0].button(f"{dimension} = 0", key=output_key("relabel_zero", dimension, item_id, model_name),
                      on_click=_decide, args=(0.0, *args_for), shortcut="0", disabled=not enabled,
                      type="primary", width="stretch", help="Engages with the tension (no conflict avoidance)")
    buttons[1].button(f"{dimension} = 1", key=output_key("relabel_one", dimension, item_id, model_name),
                      on_click=_decide, args=(1.0, *args_for), shortcut="1", disabled=not enabled,
                      type="primary", width="stretch", help="Avoids the conflict (premature solution/harmony)")
elif scale is None:
    with buttons[0]:
        start = None if blind else (float(judge_labels.dropna().mean()) if judge_labels.notna().any() else None)
        value = views.value_widget(dimension, output_key("relabel_value", dimension, item_id, model_name, apply_to),
                                   start)
    buttons[1].button("Save", key=output_key("relabel_save", dimension, item_id, model_name), on_click=_decide,
                      args=(value, *args_for), shortcut="Enter", type="primary", width="stretch",
                      disabled=not enabled)
skip_at, undo_at = (2, 3) if scale is None or dimension in BINARY_DIMENSIONS else (0, 1)
buttons[skip_at].button("Skip", key="relabel_skip", on_click=_skip, args=(item_id, model_name), shortcut="S",
                        width="stretch")
buttons[undo_at].button("Undo", key="relabel_undo", on_click=_undo, shortcut="U", width="stretch")
keys = ("0 / 1" if dimension in BINARY_DIMENSIONS else f"{scale[0]}-{min(scale[1], 9)}" if scale is not None
        else "Enter")
st.caption(f"Keys: {keys} decide, S skip, U undo. One decision per output shown: a key pressed again before the "
           f"next output appears is refused, never applied to another output. Decisions are saved as "
           f"{views.code(annotator)} for {', '.join(map(views.code, targets)) or '(nobody)'}.")
views.keys_help("relabel")  # "?" opens the key list

with st.expander("Several annotators: agreement and adjudication"):
    agreement = human_agreement(ledger.status.fresh)
    if agreement.n_items == 0:
        st.caption("No output has been decided by two or more annotators yet.")
    else:
        st.markdown(f"Human-human agreement on the **{agreement.n_items}** outputs decided by two or more annotators")
        st.dataframe(agreement.pairs[["dimension", "rater_a", "rater_b", "n", "kappa", "percent_agreement"]],
                     hide_index=True, key="relabel_human_pairs")
        st.dataframe(agreement.alpha, hide_index=True, key="relabel_human_alpha")
    conflicts = adjudication_list(ledger.status.fresh)
    conflicts = conflicts[conflicts["dimension"] == dimension] if len(conflicts) else conflicts
    if len(conflicts):
        st.markdown(f"**{len(conflicts)}** outputs where annotators disagree on {md(dimension)}:")
        st.dataframe(conflicts, hide_index=True, key="relabel_conflicts")
        labels_of = [f"{i} · {m}" for i, m in zip(conflicts["item_id"], conflicts["model"], strict=True)]
        pick = st.selectbox("Adjudicate", labels_of, key="relabel_adjudicate_pick")
        chosen = conflicts.iloc[labels_of.index(pick)]
        verdict = views.value_widget(dimension, output_key("relabel_adjudicate_value", dimension, chosen["item_id"],
                                                           chosen["model"]), None, scale=scale)
        if st.button("Record adjudication", key="relabel_adjudicate_save"):
            raters = sorted(set(ledger.status.fresh.loc[(ledger.status.fresh["item_id"] == chosen["item_id"])
                                                        & (ledger.status.fresh["model"] == chosen["model"])
                                                        & (ledger.status.fresh["dimension"] == dimension),
                                                        "rater"]))
            changes = make_changes(all_outputs, judge_ratings, chosen["item_id"], chosen["model"], raters,
                                   dimension, verdict, "adjudication")
            batch = data.store.adjudicate(data.dataset_id, changes, annotator=annotator)
            st.session_state["flash"] = (f"Adjudicated (change #{batch}): {md(dimension)} = {verdict:g} for "
                                         f"{md(chosen['item_id'])} / {md(chosen['model'])} by {md(annotator)}.")
            st.rerun()
    else:
        st.caption(f"No disagreement between annotators on {md(dimension)}.")

with st.expander("A judge re-run meets the ledger"):
    decided_raters = sorted(set(ledger.decisions["rater"])) if len(ledger.decisions) else []
    if not decided_raters:
        st.caption("No human decision yet.")
    else:
        st.caption("Choose the judge your decisions overrode and its re-run (e.g. a new prompt version added as "
                   "another rater on the Judge page): every decision is confirmed (the re-run now agrees with "
                   "the human), still disputed, stale (text changed) or orphaned (output gone).")
        picks = st.columns(2)
        overridden = picks[0].selectbox("Judge the decisions overrode", decided_raters, key="relabel_rerun_old")
        rerun_of = picks[1].selectbox("Its re-run", sorted(data.all_data.raters), key="relabel_rerun_new")
        result = classify_rerun(ledger.decisions[ledger.decisions["rater"] == overridden], data.all_data.ratings,
                                all_outputs, rater_map={overridden: rerun_of})
        counts = result.counts
        st.markdown(f"**{counts['confirmed']}** confirmed · **{counts['disputed']}** still disputed · "
                    f"**{counts['stale']}** stale · **{counts['orphaned']}** orphaned")
        shown_columns = ["item_id", "model", "rater", "dimension", "value", "annotator"]
        for tab, (title, frame) in zip(st.tabs(["Confirmed", "Still disputed", "Stale", "Orphaned"]),
                                       (("confirmed", result.confirmed), ("disputed", result.disputed),
                                        ("stale", result.stale), ("orphaned", result.orphaned)), strict=True):
            with tab:
                extra = ["new_value"] if "new_value" in frame.columns else []
                st.dataframe(frame[[*shown_columns, *extra]], hide_index=True, key=f"relabel_rerun_{title}")
