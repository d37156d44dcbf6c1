"""Relabel's "audit sample" order: draw a random audit, pick a stored one, decide its outputs in audit order, and
see beside the queue what the decisions so far estimate and how many more would settle each comparison.

Why an order of its own. The judge-disagreement and by-influence orders choose outputs *because of* what the
judges said; their decisions fix the data but are not a random sample, so they never feed the corrected
estimates (:mod:`empathy.inference`). An audit (:func:`empathy.audit.draw_audit`) draws the outputs at random
before anyone looks at them and puts them in one random order; a decision made on a drawn output *in that order*
carries the design's mark (:func:`empathy.labels.audits.audit_mark`) and only those feed PPI++. The mark travels
with the decision: each window entry the page sends in audit order carries it (:func:`mark_window`), the
browser copies it into the key's event, and :func:`empathy_app.keyqueue.apply_events` writes it
(``set_overrides(..., audit=...)``); the value box's Save gets it as an argument bound when the output was
drawn on the page (:func:`mark_for`). A key from any other order has no mark to carry.

Audit order hides the judges' labels (as blind mode does): a human who sees the judge's label tends to agree
with it, which would pull the correction towards the judge.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from empathy.audit import AuditDesign, audit_frame, draw_audit, frame_digest
from empathy.inference import ALL_TASKS, estimator_signature_fields
from empathy.label_budget import MIN_PLAN
from empathy.labels.audits import AuditDecisions, audit_decisions, audit_mark, audit_queue, save_design
from empathy.labels.ledger import Ledger
from empathy.labels.locations import StoreError
from empathy.labels.records import AuditMark
from empathy.labels.rules import JUDGE_KINDS, label_rule_field
from empathy.signature import Signature, judge_signatures
from empathy_app import intervals, session_keys, views
from empathy_app.loading import Loaded
from empathy_app.markup import code, md

#: The Relabel order that follows an audit design.
AUDIT_ORDER = "audit sample"
#: What the page says about the other orders' decisions (Markdown).
NOT_A_SAMPLE = ("Decisions made in the **judge disagreement** or **by influence** order are chosen because of what "
                "the judges said: they are not a random sample and never feed the corrected estimates. Only "
                "decisions made in **audit sample** order, on outputs an audit drew at random, do.")


def drawing_refused(data: Loaded, annotator: str) -> str | None:
    """Why ``annotator`` may not draw an audit into the data set's store (``None``: they may).

    Drawing is an annotator's or adjudicator's action: the store's own check of the right to decide
    (:meth:`empathy.labels.sqlite.OverrideStore.require`, nothing to check in a store without roles), and a store
    opened read-only refuses every write.
    """
    if not annotator:
        return "Commit your annotator name first: a design records who drew it."
    if getattr(data.store, "read_only", False):
        return f"The store {code(data.store.label)} is read-only: no audit can be drawn into it."
    try:
        data.store.require(annotator, "decide")
    except PermissionError as error:
        return md(error)
    return None


def _design_label(design: AuditDesign) -> str:
    strata = "model and task" if design.stratify_by_task else "model"
    return (f"audit:{design.short_digest} · {design.judge} on {design.dimension} · {design.per_model} per {strata} · "
            f"seed {design.seed} · {len(design.outputs)} outputs")


def _draw(data: Loaded, *, judge: str, dimension: str, per_model: int, seed: int, stratify: bool, annotator: str
          ) -> None:
    """Draw an audit of the whole data set (every task), store it and make it the design the queue follows."""
    refused = drawing_refused(data, annotator)
    if refused:
        st.session_state[session_keys.FLASH_ERROR] = f"No audit drawn: {refused}"
        return
    outputs, ratings = data.all_data.outputs, data.all_data.ratings
    try:
        design = draw_audit(outputs, ratings, judge=judge, dimension=dimension, per_model=per_model, seed=seed,
                            stratify_by_task=stratify)
        new = save_design(data.store, data.dataset_id, design, annotator=annotator)
    except (TypeError, ValueError, StoreError, PermissionError) as error:
        st.session_state[session_keys.FLASH_ERROR] = f"No audit drawn: {md(error)}"
        return
    st.session_state[session_keys.RELABEL_AUDIT_DESIGN] = design.digest
    st.session_state[session_keys.FLASH] = (
        f"{'Drew' if new else 'Already stored:'} audit {code('audit:' + design.short_digest)}: {len(design.outputs)} "
        f"outputs of {md(judge)} on {md(dimension)}, in one random order (seed {seed}). Decide them in this order.")


def _default_size(data: Loaded, dimension: str, largest: int = 20) -> int:
    """The draw's default size: ``largest`` per model, or fewer when a model has fewer rated outputs."""
    ratings = data.all_data.ratings
    rated = ratings[(ratings["dimension"].astype(str) == dimension) & ratings["value"].notna()]
    counts = rated.groupby(["rater", "model"]).size()
    return max(1, min(largest, int(counts.min()))) if len(counts) else largest


def _draw_form(data: Loaded, dimension: str, judges: list[str], annotator: str, key: str) -> None:
    refused = drawing_refused(data, annotator)
    with st.form(f"{key}_draw", border=False):
        columns = st.columns([2, 1, 1, 2])
        judge = columns[0].selectbox("Judge to audit", judges, key=f"{key}_judge")
        per_model = columns[1].number_input("Outputs per model", min_value=1, value=_default_size(data, dimension),
                                            step=1, key=f"{key}_per_model",
                                            help="Drawn at random from each model's outputs the judge rated (per "
                                                 "model and task when stratified).")
        seed = columns[2].number_input("Seed", min_value=0, value=0, step=1, key=f"{key}_seed",
                                       help="The same data, judge, size and seed draw the same audit.")
        tasks = sorted({str(t) for t in data.all_data.outputs.get("task", pd.Series(dtype=str)).fillna("")} - {""})
        stratify = columns[3].checkbox("Stratify by task", key=f"{key}_stratify", disabled=len(tasks) < 2,
                                       help="Draw the number above from every (model, task) instead of every model.")
        st.caption(f"Draws from every task of the data set, whatever the filters. Audits {code(dimension)} (the "
                   "dimension chosen above).")
        if st.form_submit_button("Draw and save the audit", disabled=refused is not None, key=f"{key}_draw_save"):
            _draw(data, judge=str(judge), dimension=dimension, per_model=int(per_model), seed=int(seed),
                  stratify=bool(stratify), annotator=annotator)
            st.rerun()
    if refused:
        st.caption(refused)


def judges_of(data: Loaded, dimension: str) -> list[str]:
    """The raters an audit of ``dimension`` can audit: the automatic judges (LLM, lexicon) that rated it, else
    every rater that did."""
    ratings = data.all_data.ratings
    rated = ratings[ratings["dimension"].astype(str) == dimension]
    raters = sorted(rated["rater"].astype(str).unique())
    if "rater_kind" not in rated.columns:
        return raters
    kinds = rated.drop_duplicates("rater").set_index(rated.drop_duplicates("rater")["rater"].astype(str))[
        "rater_kind"].astype(str)
    return [r for r in raters if kinds.get(r, "") in JUDGE_KINDS] or raters


def panel(data: Loaded, dimension: str, annotator: str, *, key: str) -> AuditDesign | None:
    """The audit order's panel: why it exists, a form to draw a new audit of ``dimension`` (annotators and
    adjudicators), and the stored audits of ``dimension`` to follow. Returns the design the queue follows, or
    ``None`` (none stored, or the chosen one cannot be estimated: a damaged design, or one drawn from other
    outputs, is named and not offered for deciding)."""
    st.caption("**Audit sample**: the outputs a random audit drew, in its random order, the judges' labels hidden. "
               "Decide them in this order and stop anywhere: the decisions so far are a random sample of every "
               "model, and correct the judge's values (PPI++, on the Overview and beside the queue). Skipping an "
               "output leaves a gap the estimates count (n_skipped).")
    designs, problems = intervals.stored_designs(data)
    for problem in problems:
        st.warning(problem)
    mine = [d for d in designs if d.dimension == dimension]
    others = sorted({d.dimension for d in designs} - {dimension})
    with st.expander("Draw a new audit", expanded=not mine):
        _draw_form(data, dimension, judges_of(data, dimension), annotator, key)
    if others:
        st.caption(f"Audits of other dimensions ({', '.join(map(code, others))}): choose that dimension above to "
                   "decide them.")
    if not mine:
        st.info(f"No audit of {code(dimension)} yet: draw one above.")
        return None
    digests = [d.digest for d in mine]
    if st.session_state.get(session_keys.RELABEL_AUDIT_DESIGN) not in digests:
        st.session_state[session_keys.RELABEL_AUDIT_DESIGN] = digests[0]  # the newest
    chosen = st.selectbox("Audit to decide", digests, key=session_keys.RELABEL_AUDIT_DESIGN,
                          format_func=lambda digest: _design_label(mine[digests.index(digest)]))
    design = mine[digests.index(chosen)]
    problem = frame_problem(data, design)
    if problem:
        st.error(f"Audit {code('audit:' + design.short_digest)} cannot be estimated: {md(problem)}. Its decisions "
                 "would correct nothing; draw a new audit.")
        return None
    return design


@st.cache_data(show_spinner=False, max_entries=32)
def _frame_problem(key: str, digest: str, _outputs: pd.DataFrame, _ratings: pd.DataFrame, _design: AuditDesign
                   ) -> str:
    try:
        frame = audit_frame(_outputs, _ratings, judge=_design.judge, dimension=_design.dimension)
    except ValueError as error:
        return str(error)
    if frame_digest(frame) != _design.frame_digest:
        return (f"the outputs or {_design.judge}'s ratings on {_design.dimension} changed since it was drawn (frame "
                f"of {len(frame)} outputs, {_design.n_frame} then)")
    return ""


def frame_problem(data: Loaded, design: AuditDesign) -> str:
    """Why ``design`` no longer fits the data set (its frame changed since the draw), or ``""``."""
    return _frame_problem(data.content_key, design.digest, data.all_data.outputs, data.all_data.ratings, design)


def labels(ledger: Ledger, design: AuditDesign) -> AuditDecisions:
    """The design's audit labels from the ledger's fresh decisions under its label rule."""
    return audit_decisions(ledger.status.fresh, design, rule=ledger.rule, stale=ledger.status.stale)


def queue(design: AuditDesign, decided: AuditDecisions, mine: pd.DataFrame, outputs: pd.DataFrame
          ) -> pd.DataFrame:
    """The Relabel queue in audit order: the design's drawn outputs among ``outputs`` (the page's filters), ``done``
    where ``mine`` (this annotator's fresh decisions) holds an audit decision of this design on it (a decision
    from another order leaves the output to decide), ``disagree`` False (the labels are hidden), and
    :func:`empathy.labels.audits.audit_queue`'s columns (``position``; ``decided``: it has an audit label)."""
    frame = audit_queue(design, decided)
    keys = pd.MultiIndex.from_frame(frame[["item_id", "model"]])
    marked = mine[(mine["dimension"] == design.dimension)
                  & (mine["audit_design"].fillna("").astype(str) == design.digest)] if len(mine) else mine
    frame["done"] = keys.isin(pd.MultiIndex.from_frame(marked[["item_id", "model"]].astype(str))) if len(
        marked) else False
    frame["disagree"] = False
    shown = keys.isin(pd.MultiIndex.from_frame(outputs[["item_id", "model"]].astype(str)))
    return frame[shown].reset_index(drop=True)


def queue_of(ledger: Ledger, design: AuditDesign, mine: pd.DataFrame, outputs: pd.DataFrame
             ) -> tuple[pd.DataFrame, AuditDecisions]:
    """The audit queue (:func:`queue`) and the design's audit labels from ``ledger``; a warning when the page's
    filters leave drawn outputs out (an audit is decided whole, in its order)."""
    decided = labels(ledger, design)
    shown = queue(design, decided, mine, outputs)
    left_out = len(design.outputs) - len(shown)
    if left_out:
        st.warning(f"{left_out} drawn output(s) are outside the task filters (here or in the sidebar) and are not "
                   "shown: an audit is decided whole, in its order. Choose all tasks to decide them.")
    return shown, decided


def progress_text(shown: pd.DataFrame, design: AuditDesign, decided: AuditDecisions) -> str:
    """The progress line of the audit queue."""
    done = int(shown["done"].sum())
    return (f"{done} of {len(shown)} decided by you in audit order · {len(decided.decisions)} of "
            f"{len(design.outputs)} drawn outputs have an audit label ({decided.rule} rule) · judge labels hidden")


def mark_window(items: list[dict], design: AuditDesign) -> list[dict]:
    """The window entries with the audit mark of each (the design's digest and the output's position): the browser
    copies it into the event of a key pressed on the entry."""
    positions = {(o.item_id, o.model): o.position for o in design.outputs}
    for entry in items:
        position = positions.get((entry["item"], entry["model"]))
        if position is not None:
            entry["audit"] = {"design": design.digest, "position": int(position)}
    return items


def mark_for(design: AuditDesign | None, item_id: str, model: str) -> AuditMark | None:
    """The mark of a decision on ``(item_id, model)`` in audit order of ``design`` (``None`` without a design)."""
    return None if design is None else audit_mark(design, item_id, model)


def _further(separated: bool, reachable: bool, further: object, note: object) -> str:
    """A pair's further decisions as the budget table says them: none when separated now, else the number or
    why there is none (the budget's note up to its colon: not planned, not reachable, no difference)."""
    if separated:
        return "none (separated)"
    return str(int(further)) if reachable else str(note).split(":")[0]


def _fixed(values: object) -> list[str]:
    """Numbers as text with three decimals (empty where missing), as the tables beside the queue show them."""
    return ["" if pd.isna(v) else f"{float(v):.3f}" for v in values]


def beside_queue(data: Loaded, design: AuditDesign, decided: AuditDecisions) -> None:
    """Beside the audit queue: per model the judge's value, the value corrected by the decisions so far (PPI++)
    with its interval and half-width, and the label budget (the further audit decisions that would separate each
    adjacent pair). Recomputed when the audit's labels change (cached per design and labels)."""
    report, problem = intervals.estimate(data, design, decided)
    if report is None:
        st.error(f"Audit {code('audit:' + design.short_digest)} is not estimable: {md(problem)}")
        return
    pooled = report.table[report.table["task"] == ALL_TASKS]
    plan = intervals.budget(report)
    # plain tables (a handful of rows, their numbers text in the page); st.table renders its cells as Markdown:
    # the names from data go in as Markdown literals
    for metric, part in pooled.groupby("metric", sort=False):
        st.markdown(f"**{md(metric)} corrected by the audit** ({code(design.judge)} on {code(design.dimension)}, "
                    f"{len(decided.decisions)} audit label(s))")
        st.table(pd.DataFrame({
            "model": part["model"].map(md), "judge": _fixed(part["judge_value"]),
            "corrected": _fixed(part["ppi_value"]),
            "±": _fixed([intervals.half_width(lo, hi) for lo, hi in zip(part["ppi_low"], part["ppi_high"],
                                                                        strict=True)]),
            "n_audit": part["n_audit"].astype(int).to_numpy()}).set_index("model"))
        notes = []
        if part["ppi_value"].isna().any():
            notes.append("a model needs two audited outputs for a corrected value")
        if (part["n_audit"] < intervals.SMALL_AUDIT).any():
            notes.append(intervals.SMALL_AUDIT_NOTE[0].lower() + intervals.SMALL_AUDIT_NOTE[1:].rstrip("."))
        if part["n_skipped"].sum():
            notes.append(f"{int(part['n_skipped'].sum())} drawn output(s) skipped before the last decision: the "
                         "sample has gaps (decide them to close them)")
        st.caption("Corrected ± the half-width of its 95 % interval (PPI++)" + (": " + "; ".join(notes) if notes
                                                                                 else "") + ".")
        pairs = plan.pairs[plan.pairs["metric"] == metric]
        if len(pairs):
            st.markdown("**Label budget**: further audit decisions to separate adjacent models")
            st.table(pd.DataFrame({
                "better": pairs["better"].map(md), "worse": pairs["worse"].map(md),
                "difference": _fixed(pairs["difference"]),
                "separated": pairs["separated"].map({True: "yes", False: "no"}).to_numpy(),
                "further": [_further(*row) for row in zip(pairs["separated"], pairs["reachable"],
                                                          pairs["further_decisions"], pairs["note"], strict=True)]
            }).set_index(["better", "worse"]))
            measured = (f" In simulation {plan.hit_rate:.0%} of such plans separated their pair."
                        if plan.hit_rate is not None else "")
            st.caption("*separated*: a t-test at 5 % tells the two apart now. *further*: the audit decisions that "
                       "would give that test 80 % power against today's difference shrunk toward 0 (an observed "
                       "gap overstates the true one), split evenly between the two models; *not planned*: fewer "
                       f"than {MIN_PLAN} audited outputs on a model; *not reachable*: even auditing every output "
                       "would not." + measured)
    rule, name = label_rule_field(decided.rule)
    fields = {**estimator_signature_fields([report]), **plan.signature_fields(), rule: name}
    views.signature_caption(Signature(judges=judge_signatures(
        data.all_data.ratings[data.all_data.ratings["rater"].astype(str) == design.judge]), extra=fields))
