"""Recording human decisions from the Inspect and Relabel pages: widget keys per output, who is deciding (the
line every page that writes shows), saving with the item the annotator saw, undo, and the ledger's status (stale,
orphaned). A write the session's role does not allow is refused with the text of
:class:`empathy.labels.roles.AccessDenied`; nothing is written.

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
from empathy.labels.roles import AccessDenied
from empathy.vocabulary import LABEL_RULE_HELP, LABEL_RULES
from empathy_app import identity, overrides, session_keys
from empathy_app.loading import Loaded


def output_key(prefix: str, *parts: object) -> str:
    """A widget key unique to one output (and dimension, target...): a widget keyed by it opens on that
    output's own state instead of keeping the previous output's value. Length-prefixed, so no two different
    part lists give the same key."""
    return prefix + "|" + "|".join(f"{len(str(p))}:{p}" for p in parts)


def md(value: object) -> str:
    """A data string as literal Markdown text."""
    return markdown_literal(value)


def access(data: Loaded | None) -> identity.Access:
    """Who is deciding in this run, and what they may do on the data set's store (:mod:`empathy_app.identity`)."""
    return identity.access(data.store if data is not None else None)


def identity_line(who: identity.Access, action: str = "decide") -> bool:
    """Say on the page who decides (``Deciding as alice@lab.example (annotator)``) or why this session may not
    ``action`` (the reason, e.g. signed out, or a viewer's role); return whether it may."""
    reason = who.why_not(action)
    if reason is None:
        st.caption(f"Deciding as **{md(who.describe())}**: every decision is recorded under this name.")
        return True
    # a read-only store is a state to fix (an error); a missing name or a role is who you are (information)
    (st.error if who.read_only else st.info)(md(reason) + ("" if who.identity else "."))
    return False


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
        st.session_state[session_keys.FLASH_ERROR] = ("Not saved: no annotator. Type your name in the sidebar and "
                                                      "press **Use this name** (or sign in).")
        return False
    refused = identity.write_refusal(annotator)
    if refused:
        st.session_state[session_keys.FLASH_ERROR] = f"Not saved: {md(refused)}."
        return False
    try:
        batch = data.store.set_overrides(data.dataset_id, changes, annotator=annotator, audit=audit)
    except AccessDenied as error:
        st.session_state[session_keys.FLASH_ERROR] = f"Not saved: {md(error)}"
        return False
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
    if not annotator:
        st.session_state[session_keys.FLASH_ERROR] = "Not undone: no annotator (whose decision to undo?)."
        return
    refused = identity.write_refusal(annotator)
    if refused:
        st.session_state[session_keys.FLASH_ERROR] = f"Not undone: {md(refused)}."
        return
    try:
        undone = data.store.undo_last(annotator, dataset_id=data.dataset_id)
    except AccessDenied as error:
        st.session_state[session_keys.FLASH_ERROR] = f"Not undone: {md(error)}"
        return
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
    """The ledger's status line in human decisions (applied, stale, orphaned, unresolved; a decision applied to
    several judges is one), with the lists and a confirm button."""
    counts = ledger.counts
    decided = ledger.decision_counts
    text = (f"Ledger ({md(ledger.rule)} rule): **{decided['applied']}** decisions applied (to {counts['applied']} "
            f"judge labels) · **{decided['stale']}** stale (text changed, not applied) · **{decided['orphaned']}** "
            f"orphaned (output gone, kept) · **{decided['unresolved']}** unresolved disagreements")
    st.caption(text)
    if not (counts["stale"] or counts["orphaned"] or counts["unresolved"]):
        return
    columns = ["item_id", "model", "rater", "dimension", "value", "annotator", "updated_at"]
    with st.expander("Stale, orphaned and unresolved decisions"):
        if counts["stale"]:
            st.markdown("**Stale**: the reference or generation changed after the decision. Check the text on "
                        "Inspect, then confirm to apply the decision again.")
            st.dataframe(ledger.status.stale[columns], hide_index=True, key=f"{key}_stale")
            refusal = access(data).why_not("decide") or identity.write_refusal(annotator)
            if st.button(f"Confirm all {decided['stale']} on the current texts", key=f"{key}_confirm",
                         disabled=refusal is not None, help=md(refusal) if refusal else None):
                try:
                    count = data.store.confirm(data.dataset_id, ledger.status.stale,
                                               output_hashes(data.all_data.outputs), annotator=annotator)
                    st.session_state[session_keys.FLASH] = f"Confirmed {count} stale decision(s) as {md(annotator)}."
                except (StoreError, AccessDenied) as error:
                    st.session_state[session_keys.FLASH_ERROR] = f"Not confirmed: {md(error)}"
                st.rerun()
        if counts["orphaned"]:
            st.markdown("**Orphaned**: the output is no longer in the data set; kept in the store.")
            st.dataframe(ledger.status.orphaned[columns], hide_index=True, key=f"{key}_orphaned")
        if counts["unresolved"]:
            st.markdown("**Unresolved**: annotators disagree and the rule leaves the judge's label.")
            st.dataframe(pd.DataFrame(ledger.unresolved), hide_index=True, key=f"{key}_unresolved")


def team_progress(progress: pd.DataFrame, *, key: str) -> None:
    """Per annotator: outputs assigned, decided, skipped and remaining
    (:func:`empathy.labels.queue_state.annotator_progress`), or a line saying nobody has started."""
    if progress.empty:
        st.caption("No annotator has an assignment, a decision or a skip here yet.")
        return
    st.dataframe(progress, hide_index=True, key=key)
    st.caption("Decided: outputs decided in the annotator's own name (stale ones included); skipped: set aside and "
               "not decided; remaining: assigned and neither. Assignments are made on the Data page.")
