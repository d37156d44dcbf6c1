"""A Relabel queue kept to a chosen set of outputs, e.g. one cell of the Disagreement page's confusion matrix.

:func:`open_relabel` (called by the page that chooses the outputs) stores the keys in the session and switches
to Relabel; :func:`apply` (one call on the Relabel page, right after its queue is built) keeps the queue to
those outputs while the focus is set and the dimension is the one it was made for, shows a note saying so and
a button that clears it. The filtering itself is :func:`empathy.review.focus_queue`.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import streamlit as st

from empathy.review import focus_queue
from empathy_app import session_keys
from empathy_app.markup import md

RELABEL_PAGE = "app_pages/4_Relabel.py"


def open_relabel(keys: Sequence[tuple[str, str]], dimension: str, label: str) -> None:
    """Put ``keys`` in the session as the Relabel queue's focus on ``dimension`` and switch to Relabel."""
    st.session_state[session_keys.RELABEL_FOCUS] = {"keys": [(str(i), str(m)) for i, m in keys], "dimension": dimension,
                               "label": label}
    st.session_state[session_keys.RELABEL_DIMENSION] = dimension  # the rubric shown beside each output is this one's
    st.session_state[session_keys.RELABEL_TASK] = "(all)"  # a task chosen earlier would hide some of the cell's outputs
    st.switch_page(RELABEL_PAGE)


def _clear() -> None:
    st.session_state.pop(session_keys.RELABEL_FOCUS, None)


def apply(queue: pd.DataFrame, dimension: str) -> pd.DataFrame:
    """``queue`` kept to the focused outputs (with a note and a clear button), or unchanged without a focus."""
    focus = st.session_state.get(session_keys.RELABEL_FOCUS)
    if not focus:
        return queue
    with st.container(border=True, key="relabel_focus_note"):
        note, clear = st.columns([5, 1])
        clear.button("Show the whole queue", key="relabel_focus_clear", on_click=_clear, width="stretch")
        if focus["dimension"] != dimension:
            note.markdown(f"A filter to {len(focus['keys'])} output(s) of {md(focus['label'])} is set for "
                          f"**{md(focus['dimension'])}**; it is paused while you relabel **{md(dimension)}**.")
            return queue
        kept, missing = focus_queue(queue, focus["keys"])
        note.markdown(f"**Filtered to {len(kept)} output(s)** from {md(focus['label'])}."
                      + (f" {len(missing)} of the cell's outputs are not in this queue (another task in the "
                         "sidebar's filter, or no judge rating here)." if missing else ""))
    return kept
