"""Recording human decisions from the Inspect and Relabel pages: widget keys per output, the committed
annotator, saving with the item the annotator saw, undo, and the ledger's status (stale, orphaned).

Every data string (item, model, rater, annotator names) shown through Markdown goes through
:func:`empathy.escaping.markdown_literal`.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from empathy.escaping import markdown_literal
from empathy.labels.ledger import Ledger
from empathy.labels.locations import StoreError
from empathy.labels.records import AuditMark, Change, output_hashes
from empathy.vocabulary import LABEL_RULE_HELP, LABEL_RULES
from empathy_app import overrides, session_keys
from empathy_app.loading import Loaded


def output_key(prefix: str, *parts: object) -> str:
    """A widget key unique to one output (and dimension, target...): a widget keyed by it opens on that
    output's own state instead of keeping the previous output's value. Length-prefixed, so no two different
    part lists give the same key."""
    return prefix + "|" + "|".join(f"{len(str(p))}:{p}" for p in parts)


def md(value: object) -> str:
    """A data string as literal Markdown text."""
    return markdown_literal(value)


def committed_annotator() -> str:
    """The annotator name committed with the button of :func:`annotator_form` (``""`` before)."""
    return str(st.session_state.get(session_keys.RELABEL_ANNOTATOR, "")).strip()


def _commit() -> None:
    name = str(st.session_state.get(session_keys.RELABEL_ANNOTATOR_WIDGET, "")).strip()
    if name:
        st.session_state[session_keys.RELABEL_ANNOTATOR] = name
        st.session_state[session_keys.ANNOTATOR] = name  # Inspect and the sidebar use the same name
    else:
        st.session_state[session_keys.FLASH_ERROR] = "Type a name first, then press **Start as this annotator**."


def _release() -> None:
    st.session_state[session_keys.RELABEL_ANNOTATOR] = ""


def annotator_form() -> str:
    """Ask for the annotator's name and commit it only with a button (keys typed into the box never decide).

    Returns the committed name, or ``""`` while none is committed.
    """
    name = committed_annotator()
    if name:
        columns = st.columns([4, 1])
        columns[0].markdown(f"Deciding as **{md(name)}**: every decision is recorded under this name.")
        columns[1].button("Change annotator", key="relabel_change_annotator", on_click=_release)
        return name
    with st.form("relabel_annotator_form", border=True):
        st.text_input("Annotator name", key=session_keys.RELABEL_ANNOTATOR_WIDGET,
                      value=str(st.session_state.get(session_keys.ANNOTATOR, "")),
                      help="Recorded with every decision. It takes effect only when you press the button; "
                           "the decision keys do nothing while you type here.")
        st.form_submit_button("Start as this annotator", on_click=_commit, type="primary",
                              key="relabel_commit_annotator")
    return ""


def _keep_label_rule() -> None:
    st.session_state[session_keys.LABEL_RULE] = st.session_state[session_keys.LABEL_RULE_WIDGET]


def label_rule_select(container=st) -> str:
    """The label rule (latest / majority / adjudicated) used when several annotators decided a rating."""
    st.session_state[session_keys.LABEL_RULE_WIDGET] = overrides.label_rule()
    container.selectbox("When annotators differ, use", LABEL_RULES, key=session_keys.LABEL_RULE_WIDGET,
                        on_change=_keep_label_rule,
                        help="; ".join(f"{rule}: {text}" for rule, text in LABEL_RULE_HELP.items()))
    return overrides.label_rule()


def save(data: Loaded, changes: list[Change], annotator: str, *, audit: AuditMark | None = None) -> bool:
    """Write one decision (several judges' ratings) for ``annotator``; flash the result, escaped.

    ``audit``: the mark of a decision made in audit order on a drawn output (``None`` from any other order).
    """
    if not annotator.strip():
        st.session_state[session_keys.FLASH_ERROR] = "Enter and commit your annotator name first."
        return False
    try:
        batch = data.store.set_overrides(data.dataset_id, changes, annotator=annotator, audit=audit)
    except StoreError as error:
        st.session_state[session_keys.FLASH_ERROR] = f"Not saved: the override store cannot be used: {md(error)}"
        return False
    except (TypeError, ValueError) as error:
        st.session_state[session_keys.FLASH_ERROR] = f"Not saved: {md(error)}"
        return False
    first = changes[0]
    raters = ", ".join(md(r) for r in sorted({c.rater for c in changes}))
    st.session_state[session_keys.FLASH] = (f"Saved (change #{batch}): {md(first.dimension)} = {first.value:g} for "
                                            f"{md(first.item_id)} / {md(first.model)} ({raters}) as {md(annotator)}"
                                            + (f", an audit decision (position {audit.position})." if audit else "."))
    return True


def undo(data: Loaded, annotator: str | None) -> None:
    """Undo ``annotator``'s last change on this data set (flash escaped)."""
    try:
        undone = data.store.undo_last(annotator or None, dataset_id=data.dataset_id)
    except StoreError as error:
        st.session_state[session_keys.FLASH_ERROR] = f"Not undone: the override store cannot be used: {md(error)}"
        return
    if undone.empty:
        st.session_state[session_keys.FLASH_ERROR] = "Nothing to undo."
        return
    row = undone.iloc[0]
    st.session_state[session_keys.FLASH] = (f"Undone: {md(row['dimension'])} of {md(row['item_id'])} / "
                                            f"{md(row['model'])} ({len(undone)} label(s)).")


def ledger_panel(data: Loaded, ledger: Ledger, annotator: str, key: str) -> None:
    """The ledger's status line (applied, stale, orphaned, unresolved), with the lists and a confirm button."""
    counts = ledger.counts
    text = (f"Ledger ({md(ledger.rule)} rule): **{counts['applied']}** overrides applied · "
            f"**{counts['stale']}** stale (text changed, not applied) · **{counts['orphaned']}** orphaned "
            f"(output gone, kept) · **{counts['unresolved']}** unresolved disagreements")
    st.caption(text)
    if not (counts["stale"] or counts["orphaned"] or counts["unresolved"]):
        return
    columns = ["item_id", "model", "rater", "dimension", "value", "annotator", "updated_at"]
    with st.expander("Stale, orphaned and unresolved decisions"):
        if counts["stale"]:
            st.markdown("**Stale**: the reference or generation changed after the decision. Check the text on "
                        "Inspect, then confirm to apply the decision again.")
            st.dataframe(ledger.status.stale[columns], hide_index=True, key=f"{key}_stale")
            if st.button(f"Confirm all {counts['stale']} on the current texts", key=f"{key}_confirm",
                         disabled=not annotator):
                try:
                    count = data.store.confirm(data.dataset_id, ledger.status.stale,
                                               output_hashes(data.all_data.outputs), annotator=annotator)
                    st.session_state[session_keys.FLASH] = f"Confirmed {count} stale decision(s) as {md(annotator)}."
                except StoreError as error:
                    st.session_state[session_keys.FLASH_ERROR] = f"Not confirmed: {md(error)}"
                st.rerun()
        if counts["orphaned"]:
            st.markdown("**Orphaned**: the output is no longer in the data set; kept in the store.")
            st.dataframe(ledger.status.orphaned[columns], hide_index=True, key=f"{key}_orphaned")
        if counts["unresolved"]:
            st.markdown("**Unresolved**: annotators disagree and the rule leaves the judge's label.")
            st.dataframe(pd.DataFrame(ledger.unresolved), hide_index=True, key=f"{key}_unresolved")
