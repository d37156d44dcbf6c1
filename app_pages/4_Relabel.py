"""Relabel page: a queue of outputs, judge disagreements first, one keystroke or click per decision.

Dimensions with levels (CA's 0/1, a 1-5 scale) are decided in the browser's key queue
(:mod:`empathy_app.keyqueue`): each key or click carries the output that was on screen when it went down, the
next output shows at once, the keys are saved in order and never applied to another output; refused ones are
said so. Dimensions without levels are decided one output at a time with a value box (its Save refused once the
output was decided). The queue, and beside it the live metric of the dimension per model for a chosen judge,
run in one ``st.fragment``: a decision reruns that, not the page. For CA (a mean of labels) the browser updates
the live table at the key from the labels now and after that the server sent with the window, and the
fragment's recomputation replaces it once the key is saved. Decisions are recorded under the signed-in identity
(with a login) or the name committed in the sidebar, and bound to the text they were made on; a role that may not
decide sees the queue but every key is refused with the reason. The queue is the annotator's own: their assigned
outputs when the data set has an assignment design, their skips (kept in the store) last. A blind switch hides
every judge label (and the live metric) and orders the queue at random, seeded per annotator, never by judge
disagreement; the paper's rubric of the dimension stands beside each item.
"""

import pandas as pd  # noqa: E402
import streamlit as st  # noqa: E402

from empathy.evaluate import rank_by_direction  # noqa: E402
from empathy.io import BINARY_DIMENSIONS  # noqa: E402
from empathy.labels.ledger import adjudication_list, classify_rerun, decisions_of_items  # noqa: E402
from empathy.labels.locations import StoreError  # noqa: E402
from empathy.labels.queue_state import (  # noqa: E402
    annotator_progress,
    assignments,
    skip_output,
    skipped_outputs,
    unskip_output,
)
from empathy.labels.roles import AccessDenied  # noqa: E402
from empathy.labels.rules import (  # noqa: E402
    ALL_JUDGES,
    JUDGE_KINDS,
    RUBRIC_SOURCE,
    make_changes,
    override_targets,
    rubric,
)
from empathy.review import annotator_queue, blind_queue, blind_seed, human_agreement  # noqa: E402
from empathy_app import (  # noqa: E402
    audit_views,
    compute,
    decisions,
    exhibit_views,
    frame,
    identity,
    keyqueue,
    loading,
    overrides,
    relabel_focus,
    session_keys,
    sidebar,
    views,
)
from empathy_app.decisions import md, output_key  # noqa: E402

data = loading.require_data()
views.show_flash_error()
judge_ratings = data.dataset.ratings
all_outputs = data.all_data.outputs
dimensions = data.dataset.dimensions

controls = st.columns([2, 2, 3])
dimension = controls[0].selectbox("Dimension to relabel", dimensions, key=session_keys.RELABEL_DIMENSION,
                                  index=dimensions.index("ca") if "ca" in dimensions else 0,
                                  format_func=views.dimension_label)
raters_with = sorted(judge_ratings.loc[judge_ratings["dimension"] == dimension, "rater"].unique())
apply_to = controls[1].selectbox("Apply each decision to", [ALL_JUDGES, *raters_with], key="relabel_apply_to",
                                 help="'(all judges)' means every LLM and lexicon judge that rated the output; "
                                 "expert, crowd, human and author raters are changed only when chosen by name.")
tasks = sorted(t for t in data.dataset.outputs["task"].unique() if t)
task = controls[2].selectbox("Task", ["(all)", *tasks], key=session_keys.RELABEL_TASK)
who = decisions.access(data)
annotator = who.identity
options = st.columns([2, 2, 3])
# a role that may not see what blind mode hides (a viewer, unless the roles allow) is always blind
sees_hidden = who.sees_hidden()
st.session_state[session_keys.RELABEL_BLIND_WIDGET] = (not sees_hidden) or bool(
    st.session_state.get(session_keys.RELABEL_BLIND, False))
blind = options[0].toggle("Blind: hide judge labels", key=session_keys.RELABEL_BLIND_WIDGET,
                          on_change=lambda: st.session_state.__setitem__(
                              session_keys.RELABEL_BLIND, st.session_state[session_keys.RELABEL_BLIND_WIDGET]),
                          disabled=not sees_hidden,
                          help="Hides every judge's label (and which outputs the judges disagree on) so that "
                               "they cannot anchor your decision, and orders the queue at random (the same order "
                               "for you on every reload)." if sees_hidden else
                               f"Always on for {md(who.describe())}: the roles let viewers see the judges' labels "
                               "only with viewers_see_hidden = true.")
decisions.label_rule_select(options[1])

decisions.identity_line(who)
try:
    ledger = overrides.ledger(data)
except StoreError as error:  # the file was damaged after the store was opened
    st.error(f"The override store cannot be used: {md(error)}")
    st.stop()
if not annotator:
    # keys that came after a sign-out (sent before this page knew of it): each refused and said so, nothing written
    held = keyqueue.apply_events(data, st.session_state.get(session_keys.RELABEL_KEYQUEUE), annotator="",
                                 scale_of=lambda _: None, refusal=f"{who.why_not('decide')}; nothing was written")
    for outcome in held.outcomes or st.session_state.pop(session_keys.RELABEL_OUTCOMES, None) or []:
        if outcome.kind == "refused":
            st.error(outcome.text)
    decisions.ledger_panel(data, ledger, annotator, "relabel_ledger")
    st.stop()

outputs = data.dataset.outputs if task == "(all)" else data.dataset.outputs[data.dataset.outputs["task"] == task]
rated = judge_ratings[judge_ratings["dimension"] == dimension]
rated_keys = pd.MultiIndex.from_frame(rated[["item_id", "model"]])
outputs = outputs[pd.MultiIndex.from_frame(outputs[["item_id", "model"]]).isin(rated_keys)]
scale = views.rating_scale(data, dimension)
keyed = dimension in BINARY_DIMENSIONS or scale is not None  # decided by a key: the browser's queue


def _scale_of(dim: str) -> tuple[int, int] | None:
    return (0, 1) if dim in BINARY_DIMENSIONS else views.rating_scale(data, dim)


def _undo() -> None:
    decisions.undo(data, annotator)
    st.session_state[session_keys.RELABEL_SHOWN] = None


def _decide(value: float, dim: str, item: str, model: str, choice: str, mark=None) -> None:
    """Record ``value`` for the output the pressed button belonged to, if it is still the one on screen
    (dimensions without levels, decided with a value box and a button: one output at a time); ``mark``: its
    audit mark, bound when the button was drawn in audit order (``None`` in any other order)."""
    shown = st.session_state.get(session_keys.RELABEL_SHOWN)
    if shown is None or tuple(shown[:3]) != (dim, item, model):
        st.session_state[session_keys.FLASH_ERROR] = (f"Refused: that key was for {md(item)} / {md(model)}, which "
                                                      "is no longer the output on screen (already decided). Nothing "
                                                      "was saved; decide the output now shown.")
        return
    who = annotator
    chosen = override_targets(judge_ratings, item, model, dim, choice)
    try:
        changes = make_changes(all_outputs, judge_ratings, item, model, chosen, dim, value,
                               st.session_state.get(session_keys.RELABEL_REASON, ""))
    except ValueError as error:
        st.session_state[session_keys.FLASH_ERROR] = f"Not saved: {md(error)}"
        return
    # before the save: who else had decided it, by the store's commit order after it was shown (never a clock)
    others = keyqueue.decided_meanwhile(data.store.decisions(data.dataset_id), item, model, dim, annotator=who,
                                        shown_at=int(shown[3]))
    if decisions.save(data, changes, who, audit=mark):
        # one decision per output shown: a second key for it is refused
        st.session_state[session_keys.RELABEL_SHOWN] = None
        st.session_state[session_keys.RELABEL_REASON] = ""
        if len(others):
            st.session_state[session_keys.FLASH] += (" Note: " + ", ".join(sorted(map(md, set(others["annotator"]))))
                                                     + " decided this output meanwhile; both decisions are kept.")


def _skip(item: str, model: str) -> None:
    """Set the output aside for this annotator (a row of the store: kept across reloads, seen by the team)."""
    refused = identity.write_refusal(annotator)
    if refused:
        st.session_state[session_keys.FLASH_ERROR] = f"Not skipped: {md(refused)}."
        return
    try:
        skip_output(data.store, data.dataset_id, item, model, dimension, annotator=annotator)
    except (AccessDenied, StoreError, TypeError, ValueError) as error:
        st.session_state[session_keys.FLASH_ERROR] = f"Not skipped: {md(error)}"
        return
    st.session_state[session_keys.RELABEL_SHOWN] = None


def _unskip(pairs: list[tuple[str, str]]) -> None:
    """Bring this annotator's skipped outputs back into the queue (in its order, no longer last)."""
    refused = identity.write_refusal(annotator)
    if refused:
        st.session_state[session_keys.FLASH_ERROR] = f"Not brought back: {md(refused)}."
        return
    try:
        for item, model in pairs:
            unskip_output(data.store, data.dataset_id, item, model, dimension, annotator=annotator)
    except (AccessDenied, StoreError) as error:
        st.session_state[session_keys.FLASH_ERROR] = f"Not brought back: {md(error)}"


def _live_metrics(last: tuple[str, str] | None, items: list[dict] | None = None,
                  fresh: pd.DataFrame | None = None, ahead: list[tuple[str, str]] | None = None) -> dict | None:
    """The metric this dimension feeds (CA for ``ca``), per model and ranked under the one rank convention
    (:func:`empathy.evaluate.rank_by_direction`: 1 = the best value in the metric's direction, for CA the least
    conflict avoidance; ties share the smaller rank), for one judge, with the human decisions applied:
    recomputed by the app's live engine (:class:`empathy.review.Recompute`, the plan of
    :func:`empathy.evaluate.plan_metrics` evaluated on the patched values) after every decision, in this
    fragment. What the last decision changed is marked: the model decided, its value before and after, and
    every rank that moved.

    With the key queue's window ``items`` and a metric that is a mean of labels (CA), the table is drawn in the
    browser (:func:`empathy_app.keyqueue.live_state`): each key updates it at once from the labels now and after
    (``fx`` of each window entry, from the ``fresh`` decisions), and the server's recomputation replaces it when
    the key is saved. Returns that state (``None`` when the table is drawn here)."""
    from empathy.metrics import METRIC_SPECS

    metric = next((spec.name for spec in METRIC_SPECS.values() if dimension in spec.dimensions), None)
    if metric is None or not raters_with:
        return None
    if blind:
        st.caption(f"Live {md(metric)} per model: hidden in blind mode (its change after a decision would tell "
                   "you the judges' label).")
        return None
    kinds = keyqueue.rater_kinds(data, rated, dimension)
    judges = [r for r in raters_with if kinds.get(r, "") in JUDGE_KINDS] or list(raters_with)
    default = apply_to if apply_to in raters_with else judges[0]
    judge = st.selectbox("Live metric for judge", raters_with, index=raters_with.index(default),
                         key="relabel_live_judge", help="The judge whose metric per model is shown, with your "
                         "and the other annotators' decisions applied (label rule above).")
    spec = METRIC_SPECS[metric]
    # a metric of the judges' labels alone (CA) waits for no text analysis (a new data set's is in the background)
    report = compute.report(data, with_overrides=True, needs_texts=spec.needs_sentences or spec.needs_distancing)
    table = report.table
    table = table[(table["metric"] == metric) & (table["scorer"] == judge)]
    shown_task = None
    if "task" in table.columns and table["task"].nunique() > 1:
        shown_task = task if task != "(all)" else str(table["task"].iloc[0])
        table = table[table["task"] == shown_task]
    if table.empty:
        st.caption(f"No {md(metric)} for {md(judge)} here.")
        return None
    table = table.assign(rank=rank_by_direction(table, ()))  # one metric, judge and task here
    table = table.sort_values(["rank", "model"], na_position="last", kind="stable").reset_index(drop=True)
    if items is not None:
        low, high = _scale_of(dimension) or (0, 1)
        live = keyqueue.live_state(data, table, items, metric=metric, judge=judge, dimension=dimension,
                                   apply_to=apply_to, annotator=annotator, decisions=fresh,
                                   rule=overrides.label_rule(),
                                   levels=[float(v) for v in range(low, high + 1)], task=shown_task,
                                   ahead=ahead or ())
        if live is not None:
            keyqueue.show_live()
            # the server's: while keys are unsaved the table above runs ahead of it (and says so)
            views.signature_caption(report.signature)
            return live
    scope = (metric, judge, str(table["task"].iloc[0]) if "task" in table.columns else "")
    previous = st.session_state.setdefault(session_keys.RELABEL_LIVE_PREVIOUS, {}).get(scope, {})
    before = [previous.get(m) for m in table["model"]]  # (value, rank) as last shown, None for a new model
    shown = pd.DataFrame({
        "rank": table["rank"],
        "model": table["model"].astype(str),
        f"{metric} ({judge})": table["value"].round(4),
        "change": [round(v - b[0], 4) if b is not None else float("nan")
                   for v, b in zip(table["value"], before, strict=True)],
        "rank before": pd.array([b[1] if b is not None else None for b in before], dtype="Int64"),
        "n": table["n"].astype(int),
        "last decision": ["◀" if last is not None and m == last[1] else "" for m in table["model"]],
    })
    st.markdown(f"**Live {md(metric)} per model ({md(judge)})**, with the human decisions (ranked, "
                f"{views.rank_heading(metric)})")
    st.dataframe(shown, hide_index=True, key="relabel_live_table")
    if last is not None and previous:
        row = table[table["model"].astype(str) == last[1]]
        if len(row):
            old = previous.get(last[1], (float("nan"), None))
            moved = int((shown["rank before"].notna() & shown["rank"].notna()
                         & (shown["rank before"] != shown["rank"])).fillna(False).sum())
            now = row["rank"].iloc[0]
            st.caption(f"Last decision {md(last[0])} / {md(last[1])}: {md(metric)} ({md(judge)}) of "
                       f"{md(last[1])} {old[0]:.4f} → {float(row['value'].iloc[0]):.4f}, rank {old[1] or '-'} → "
                       f"{'-' if pd.isna(now) else int(now)}; {moved} model(s) changed rank.")
    st.session_state[session_keys.RELABEL_LIVE_PREVIOUS][scope] = {
        str(m): (float(v), None if pd.isna(r) else int(r))
        for m, v, r in zip(table["model"], table["value"], table["rank"], strict=True)}
    views.signature_caption(report.signature)
    return None


def _beside_queue(audit, last: tuple[str, str] | None = None, items: list[dict] | None = None,
                  fresh: pd.DataFrame | None = None, ahead: list[tuple[str, str]] | None = None) -> dict | None:
    """Beside the queue: the live metric (:func:`_live_metrics`, its arguments; returns its browser state), or in
    audit order what the audit's decisions so far estimate, with the window's entries marked as audit decisions
    (the browser sends each key's mark with its event)."""
    if audit is None:
        return _live_metrics(last, items, fresh, ahead)
    if items is not None:
        audit_views.mark_window(items, audit_design)
    audit_views.beside_queue(data, audit_design, audit)
    return None


def _show_outcomes() -> None:
    """What the last keys did: the last saved decision, every refusal, and decisions made meanwhile elsewhere."""
    outcomes = st.session_state.get(session_keys.RELABEL_OUTCOMES) or []
    saved = [o for o in outcomes if o.kind in ("saved", "meanwhile", "undone", "skipped")]
    if saved:
        more = f" ({len(saved)} keys applied in this update)" if len(saved) > 1 else ""
        st.success(saved[-1].text + more)
    meanwhile = [o for o in outcomes if o.kind == "meanwhile"]
    if meanwhile:
        st.warning(f"**Another session decided {len(meanwhile)} of these outputs in the meantime** (after they "
                   "were shown to you); both decisions are kept, see the adjudication list below. "
                   + meanwhile[-1].text)
    refused = [o for o in outcomes if o.kind == "refused"]
    for outcome in refused[:5]:
        st.error(outcome.text)
    if len(refused) > 5:
        st.error(f"... and {len(refused) - 5} more refused key(s).")


# A data set whose texts were never analysed: the queue needs no parse (CA is the judges' labels), so it is
# usable at once while a background parse fills the distancing cache; the window's outputs show plain text
# until the parse reaches them. Meanwhile the browser's queue asks for the fragment again every few seconds when no
# key is on its way (keyqueue.show's poll_ms: a timer of the component, not the fragment's run_every, which only a
# whole-page rerun could stop); the run that finds the parse done draws the marks and tells it to stop. The page is
# never rerun as a whole for the parse: a whole-page rerun among keys in flight left keys with no output on screen.
parsing = compute.background_parse(data) if keyed else None


@st.fragment
def _queue_area() -> None:
    """The queue (progress, the output on screen, the decision keys) and beside it the live metric and the
    rubric: rerun alone after each decision (and, while the texts are parsed, at the queue's polls)."""
    top = st.container()  # the ledger's line, drawn once this run's keys are saved (it counts them)
    # the parse's line has a place of its own, kept (empty) once the parse is done: the elements after it keep their
    # place, so the queue's component is updated, never mounted again, at the end of the parse
    parse_line = st.container()
    # read once, before the window is built: a parse that ends while it is built leaves entries plain, and the next
    # poll (this run still asks for one) marks them
    poll_ms = int(compute.PARSE_POLL_S * 1000) if parsing is not None and not parsing.finished.is_set() else 0
    if poll_ms:
        parse_line.caption(f"Text analysis in the background (highlights): {parsing.progress.describe()}. The queue "
                           "works meanwhile; an output shows plain text until the analysis reaches it.")
    left, right = st.columns([4, 3] if audit_order else [5, 2])  # the audit's tables need the room
    with left, compute.QUEUE_RUNS.running():  # a background parse takes its next round of texts after this run
        _queue_body(right, top, poll_ms)
    sidebar.show_decision_count(data)  # the sidebar's count with this run's keys (a key reruns this fragment only)


def _rubric() -> None:
    with st.container(border=True, key="relabel_rubric"):
        definition = rubric(dimension)
        if definition is None:
            st.markdown(f"**{md(views.dimension_label(dimension))}**: no rubric in the paper for this dimension.")
        else:
            st.markdown(f"**Rubric of {md(dimension)}** ({RUBRIC_SOURCE})")
            for level in sorted(definition, reverse=True):
                st.markdown(f"**{level:g}** — {definition[level]}")


def _my_queue(queue: pd.DataFrame, audit: bool) -> tuple[pd.DataFrame, str, list[tuple[str, str]]]:
    """This annotator's queue in its order (blind: seeded random; else judge disagreement or by influence), kept to
    their assigned outputs when the data set has an assignment design, their skips last; with the progress
    text's note on the order and design, and the skipped outputs. An ``audit`` sample keeps its random order
    as it is (the correction needs its prefix decided in that order): no reordering, no assignment filter, no
    skips moved last."""
    if audit:
        return queue, "", []
    if blind:  # never by what the judges said: the order would tell what blind mode hides
        queue = blind_queue(queue, seed=blind_seed(data.dataset_id, dimension, annotator))
        note = " · blind: in a random order of your own"
    elif st.session_state.get(session_keys.RELABEL_ORDER) == "by influence":
        queue = exhibit_views.relabel_by_influence(data, queue, dimension)
        note = f" · {int(queue['disagree'].sum())} with judge disagreement (most influential first)"
    else:
        note = f" · {int(queue['disagree'].sum())} with judge disagreement (shown first)"
    design = assignments(data.store, data.dataset_id)
    mine = design[design["annotator"] == annotator]
    if len(mine):
        note += f" · your assigned outputs (design {md(mine['design'].iloc[0])})"
    elif len(design):
        note += " · the assignment design gives you no output: every output is shown"
    skipped = skipped_outputs(data.store, data.dataset_id, annotator=annotator, dimension=dimension)
    queue = annotator_queue(queue, assigned=mine, skipped=skipped)
    aside = set(zip(skipped["item_id"].astype(str), skipped["model"].astype(str), strict=True))
    pending = queue[~queue["done"]]
    skipped_here = [pair for pair in zip(pending["item_id"].astype(str), pending["model"].astype(str), strict=True)
                    if pair in aside] if aside else []
    if skipped_here:
        note += f" · {len(skipped_here)} skipped (last)"
    return queue, note, skipped_here


def _queue_body(right, top, poll_ms: int) -> None:
    """The queue under the area's columns (``poll_ms``: the key queue's poll while the texts are parsed)."""
    who = annotator
    # the identity now, not at the page's last run: a sign-out in another tab of the browser ends it between keys
    gone = identity.write_refusal(who)
    applied = keyqueue.apply_events(data, st.session_state.get(session_keys.RELABEL_KEYQUEUE), annotator=who,
                                    scale_of=_scale_of, refusal=gone or access_refusal)
    if applied.outcomes:
        st.session_state[session_keys.RELABEL_OUTCOMES] = applied.outcomes
    if gone:
        st.rerun(scope="app")  # the whole page (and the sidebar) says who decides now; the refusals stay shown
    try:
        now = overrides.ledger(data)
    except StoreError as error:
        st.error(f"The override store cannot be used: {md(error)}")
        return
    with top:
        decisions.ledger_panel(data, now, who, "relabel_ledger")
    audit = None
    if audit_order:  # the design's drawn outputs in its random order (none: the panel above says why)
        if audit_design is None:
            return
        mine = now.status.fresh
        mine = mine[(mine["annotator"] == who) & (mine["role"] == "annotator")] if len(mine) else mine
        if apply_to != ALL_JUDGES and len(mine):
            mine = mine[mine["rater"] == apply_to]  # relabelling one rater: the queue counts its decisions
        queue, audit = audit_views.queue_of(now, audit_design, mine, outputs)
    else:
        # the queue is this annotator's: what others decided does not take an output out of it (each keeps theirs);
        # their own fresh decisions are kept with the held ledger (patched per key, not selected from every one)
        own = overrides.own_fresh_decisions(data, who)
        if apply_to != ALL_JUDGES:  # relabelling one rater: the queue counts its decisions
            own = {key for key in own if key[3] == apply_to}
        queue = keyqueue.queue_for(data, dimension, task, outputs, own)
        queue = relabel_focus.apply(queue, dimension)  # one confusion cell's outputs, from Disagreement
    if queue.empty:
        st.info("None of these outputs is in this queue (check the task filter in the sidebar).")
        return
    try:
        queue, order_note, skipped_here = _my_queue(queue, audit is not None)
    except StoreError as error:
        st.error(f"The override store cannot be used: {md(error)}")
        return
    if queue.empty:
        st.info("None of your assigned outputs is in this queue (check the task filter in the sidebar).")
        return
    done = int(queue["done"].sum())
    st.progress(done / len(queue), text=audit_views.progress_text(queue, audit_design, audit) if audit else
                f"{done} of {len(queue)} decided by you{order_note}")
    _show_outcomes()
    pending = queue[~queue["done"]]  # the skipped ones last (annotator_queue)
    if skipped_here:
        st.button(f"Bring back my {len(skipped_here)} skipped output(s)", key="relabel_unskip", on_click=_unskip,
                  args=(skipped_here,), disabled=access_refusal is not None,
                  help="They return to their place in your queue instead of coming last.")
    done_text = f"Every output in this queue has your {dimension} decision. Change the filters or undo (U)."
    if keyed:
        _keyed_queue(right, now, pending, audit, done_text, poll_ms)
        return
    saved = [o for o in applied.outcomes if o.kind in ("saved", "meanwhile") and o.item is not None]
    with right:
        if audit is not None or not pending.empty:
            _beside_queue(audit, saved[-1].item if saved else None)
        _rubric()
    if pending.empty:
        st.success(md(done_text))
        st.button("Undo my last decision", key="relabel_undo_done", shortcut="U", on_click=_undo)
        return
    _one_output(pending.iloc[0], now)


def _keyed_queue(right, now, pending: pd.DataFrame, audit, done_text: str, poll_ms: int) -> None:
    """Dimensions with levels: the browser's key queue (a window of outputs), the live metric and the rubric;
    ``poll_ms``: how often the browser asks for the fragment again while no key is on its way (0: never)."""
    who = annotator
    everyone = now.decisions
    others: dict[tuple[str, str], list[str]] = {}
    head = pending.head(keyqueue.WINDOW)  # only the window's outputs say who else decided them
    if len(everyone) and len(head):
        # the window's items' rows, by bisection in the ledger's decisions (sorted by item), not a pass over all
        here = decisions_of_items(everyone, head["item_id"].astype(str).unique().tolist(),
                                  ["item_id", "model", "dimension", "annotator"])
        here = here[(here["dimension"] == dimension) & (here["annotator"] != who)]
        by_output: dict[tuple[str, str], set[str]] = {}
        # in Python: a group-by's iteration costs more per group than these few rows
        for item, model, name in zip(*(here[c].astype(str).tolist() for c in ("item_id", "model", "annotator")),
                                     strict=True):
            by_output.setdefault((item, model), set()).add(name)
        others = {pair: sorted(names) for pair, names in by_output.items()}
    items = keyqueue.window_items(data, pending, dimension=dimension, apply_to=apply_to, blind=blind,
                                  raters=raters_with, others=others)
    with right:  # the live metric first: its state goes to the browser with the window
        after = pending.iloc[len(items):len(items) + keyqueue.WINDOW]
        live = _beside_queue(audit, None, items, now.status.fresh,
                             list(zip(after["item_id"].astype(str), after["model"].astype(str), strict=True)))
        _rubric()
    keyqueue.show(items=items, dimension=dimension, apply_to=apply_to, annotator=who, scale=scale,
                  remaining=len(pending), done_text=done_text, live=live, poll_ms=poll_ms)
    keys = "0 / 1" if dimension in BINARY_DIMENSIONS else f"{scale[0]}-{min(scale[1], 9)}"
    st.caption(f"Keys: {keys} decide, S skip, U undo. Each key is recorded for the output on screen when it "
               "went down: the next output shows at once and the keys are saved in order, none dropped; a key "
               "for an output that is no longer to decide is refused, never applied to another one. If the "
               "server falls more than a window of outputs behind, or while an undo is on its way, keys are "
               "paused and the page says so.")
    frame.keys_help("relabel")  # "?" opens the key list


def _one_output(current: pd.Series, now) -> None:
    """Dimensions without levels: one output at a time, a value box and Save (its key refused once decided)."""
    item_id, model_name = str(current["item_id"]), str(current["model"])
    row = all_outputs[(all_outputs["item_id"] == item_id) & (all_outputs["model"] == model_name)].iloc[0]
    targets = override_targets(judge_ratings, item_id, model_name, dimension, apply_to)
    shown_now = (dimension, item_id, model_name)
    previous = st.session_state.get(session_keys.RELABEL_SHOWN)
    if previous is None or tuple(previous[:3]) != shown_now:
        # the store's version when shown: "decided meanwhile" is a later commit, whatever the clocks say
        st.session_state[session_keys.RELABEL_SHOWN] = (*shown_now, data.store.version())
    labels = current[[c for c in current.index if c in raters_with]]
    judge_labels = labels[[r for r in labels.index if r in targets or r == apply_to]]
    header = f"{views.code(item_id)} · {views.code(model_name)} (task {views.code(row['task'] or '-')})"
    if blind:
        st.markdown(header + " — judge labels hidden (blind)")
    else:
        label_text = ", ".join(views.code(f"{j}: {'-' if pd.isna(v) else f'{v:g}'}") for j, v in labels.items())
        st.markdown(f"{header} — raters say {label_text}" + (" — **judges disagree**" if current["disagree"] else ""))
    if views.has_text(row):
        views.output_side_by_side(data, row, key="relabel", titles=("Reference / prompt", "Generation"), height=320,
                                  blind=blind)
        views.conversation(row, "relabel_conversation")
    else:
        views.no_text_note(row, "Decide from the other raters' labels, or skip it.")
    if not targets:
        st.warning(f"No LLM or lexicon judge rated {md(dimension)} of this output, so '(all judges)' has nothing "
                   "to replace. Choose a rater by name in **Apply each decision to**, or skip it.")
    buttons = st.columns(4)
    with buttons[0]:
        start = None if blind else (float(judge_labels.dropna().mean()) if judge_labels.notna().any() else None)
        value = views.value_widget(dimension, output_key("relabel_value", dimension, item_id, model_name, apply_to),
                                   start)
    buttons[1].button("Save", key=output_key("relabel_save", dimension, item_id, model_name), on_click=_decide,
                      args=(value, dimension, item_id, model_name, apply_to,
                            audit_views.mark_for(audit_design, item_id, model_name)), shortcut="Enter", type="primary",
                      width="stretch", disabled=not targets or access_refusal is not None, help=refusal_help)
    buttons[2].button("Skip", key="relabel_skip", on_click=_skip, args=(item_id, model_name), shortcut="S",
                      width="stretch", disabled=access_refusal is not None, help=refusal_help)
    buttons[3].button("Undo", key="relabel_undo", on_click=_undo, shortcut="U", width="stretch",
                      disabled=access_refusal is not None, help=refusal_help)
    st.caption(f"Keys: Enter saves, S skip, U undo. One decision per output shown: a key pressed again before the "
               f"next output appears is refused, never applied to another output. Decisions are saved as "
               f"{views.code(annotator)} for "
               f"{', '.join(map(views.code, targets)) or '(nobody)'}.")


if outputs.empty:
    st.info(f"No output has a judge rating of {md(dimension)} here.")
    st.stop()
used = st.session_state.get(session_keys.RELABEL_REASON_USED)
if used and st.session_state.get(session_keys.RELABEL_REASON) == used:
    st.session_state[session_keys.RELABEL_REASON] = ""  # recorded with a decision: the next one starts without it
    st.session_state.pop(session_keys.RELABEL_REASON_USED, None)
order = st.radio("Order", ["judge disagreement", "by influence", audit_views.AUDIT_ORDER], horizontal=True,
                 key=session_keys.RELABEL_ORDER,
                 help="By influence: first the outputs whose one label accounts for most of the margin between their "
                      "model and the nearest rival (ranking fragility). Audit sample: the outputs a random audit "
                      "drew, in its random order: the only decisions that correct the judges' values. Blind mode "
                      "orders the other two at random (seeded per annotator, data set and dimension), never by what "
                      "the judges said.")
st.caption(audit_views.NOT_A_SAMPLE)
audit_order = order == audit_views.AUDIT_ORDER
audit_design = audit_views.panel(data, dimension, annotator, key="relabel_audit") if audit_order else None
blind = blind or audit_order  # audit order hides the judges' labels: seen, they would pull the human's towards them
access_refusal = who.why_not("decide")
refusal_help = md(access_refusal) if access_refusal else None
_queue_area()
st.text_input("Reason (optional, kept in the audit trail with your next decision)", key=session_keys.RELABEL_REASON)
try:
    ledger = overrides.ledger(data)  # again: the queue above may have saved decisions in this run
except StoreError as error:
    st.error(f"The override store cannot be used: {md(error)}")
    st.stop()

def _agreement_and_adjudication() -> None:
    """Human-human agreement on the outputs two or more annotators decided, and the list to adjudicate."""
    st.caption("Updated when the page reruns (any control above, or a reload), not after each key.")
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
        not_adjudicator = who.why_not("adjudicate")
        if not_adjudicator:
            st.caption(f"Recording an adjudication is not open to you: {md(not_adjudicator)}.")
        if st.button("Record adjudication", key="relabel_adjudicate_save", disabled=not_adjudicator is not None,
                     help=md(not_adjudicator) if not_adjudicator else None):
            raters = sorted(set(ledger.status.fresh.loc[(ledger.status.fresh["item_id"] == chosen["item_id"])
                                                        & (ledger.status.fresh["model"] == chosen["model"])
                                                        & (ledger.status.fresh["dimension"] == dimension),
                                                        "rater"]))
            changes = make_changes(all_outputs, judge_ratings, chosen["item_id"], chosen["model"], raters,
                                   dimension, verdict, "adjudication")
            try:
                batch = data.store.adjudicate(data.dataset_id, changes, annotator=annotator)
            except (AccessDenied, StoreError, ValueError) as error:
                st.error(f"Not adjudicated: {md(error)}")
            else:
                st.session_state[session_keys.FLASH] = (f"Adjudicated (change #{batch}): {md(dimension)} = "
                                                        f"{verdict:g} for {md(chosen['item_id'])} / "
                                                        f"{md(chosen['model'])} by {md(annotator)}.")
                st.rerun()
    else:
        st.caption(f"No disagreement between annotators on {md(dimension)}.")


def _team_progress() -> None:
    """Each annotator's decisions and assignments on the dimension."""
    decisions.team_progress(annotator_progress(data.store, data.dataset_id, dimension=dimension,
                                               outputs=overrides.output_keys(data), decisions=ledger.decisions),
                            key="relabel_team_progress")


def _rerun_meets_ledger() -> None:
    """A judge's re-run against the decisions that overrode it: confirmed, disputed, stale, orphaned."""
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
        mine = ledger.decisions[ledger.decisions["rater"] == overridden]
        # the re-run's ratings of the decided outputs only (their rows looked up, not every rating compared)
        decided_pairs = list(dict.fromkeys(zip(mine["item_id"].astype(str), mine["model"].astype(str), strict=True)))
        result = classify_rerun(mine, compute.row_index(data, whole=True).ratings_of_many(data.all_data.ratings,
                                                                                          decided_pairs),
                                all_outputs, rater_map={overridden: rerun_of}, hashes=overrides.output_hash_map(data))
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


# Each of these reads every decision of the ledger (30,000 rows in a team's: tens of MiB and most of a full
# run's CPU): drawn only while its expander is open (opening one reruns the page), not on every full run.
for label, box_key, draw in (("Several annotators: agreement and adjudication", "relabel_agreement_box",
                              _agreement_and_adjudication),
                             (f"Team progress on {md(dimension)}", "relabel_progress_box", _team_progress),
                             ("A judge re-run meets the ledger", "relabel_rerun_box", _rerun_meets_ledger)):
    box = st.expander(label, key=box_key, on_change="rerun")
    with box:
        if box.open:
            draw()

if parsing is not None:
    parsing.begin()  # this run is drawn: a new data set's background parse may take the CPU now (not before)
