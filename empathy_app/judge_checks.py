"""The Judge report page's second part: a judge's repeatability, order effect and probes, with their signature.

The checks come from ``empathy judge-check --format json`` files (an LLM judge's are paid calls, counted and capped
on the command line before any call) or from the offline lexicon judge, run here on the data set's outputs (no
call). A failing output opens in Inspect at that output, filters cleared.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import streamlit as st

from empathy_app import session_keys, views
from empathy_app.markup import code, md

INSPECT_PAGE = "app_pages/3_Inspect.py"


@st.cache_data(show_spinner="Running the lexicon judge through the checks (offline)...", max_entries=4)
def lexicon_checks(key: str, outputs: pd.DataFrame) -> dict[str, Any]:
    """The lexicon judge's judge-check object on ``outputs`` (``key``: the data set's content key, for the cache)."""
    del key
    from empathy.judge_report.checks import CHECKS, run_checks
    from empathy.judge_report.repeatability import sample_outputs
    from empathy.judges.config import resolve_judge

    judge = resolve_judge("lexicon", None)
    sample = sample_outputs(outputs, min(len(outputs), 200), 0)
    return run_checks(outputs, judge, CHECKS, k=2, sample=sample, sample_size=len(sample), seed=0, n_resamples=200)


def read_checks(uploaded: Any) -> dict[str, Any] | None:
    """An uploaded judge-check JSON object, or ``None`` with a one-line error shown."""
    try:
        data = json.loads(uploaded.getvalue().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        st.error(f"{md(uploaded.name)}: not a judge-check JSON file ({type(exc).__name__})")
        return None
    if not isinstance(data, dict) or not isinstance(data.get("judge"), str):
        st.error(f"{md(uploaded.name)}: not a judge-check JSON file (no judge)")
        return None
    return data


def _open_in_inspect(label: str) -> None:
    for widget in (session_keys.INSPECT_TASK, session_keys.INSPECT_MODEL, session_keys.INSPECT_JUDGE,
                   session_keys.INSPECT_DIMENSION, session_keys.INSPECT_VALUE):
        st.session_state[widget] = "(any)"
    st.session_state[session_keys.INSPECT_DISAGREE] = False
    st.session_state[session_keys.INSPECT_PICK] = label


def show_checks(checks: dict[str, Any], prefix: str) -> None:
    """The tables of one judge-check object, its failing outputs (each one click from Inspect) and signature."""
    st.markdown(f"**{md(checks['judge'])}**")
    captions = {"repeatability": "flip_rate: share of run pairs that disagree on an output, with an item-cluster "
                                 "bootstrap interval; alpha: Krippendorff's alpha with the runs as raters",
                "order": "effect: mean over items of score(generation first) - score(reference first), Student t "
                         "interval and paired t-test; mean_abs: how far a score moves with the order",
                "probes": "violation_rate over the outputs an edit applies to, 95 % interval with the item as "
                          "the unit; a directional probe also fails when it moved none of the outputs that could move"}
    for name, caption in captions.items():
        if name not in checks:
            continue
        rows = checks.get(name) or []
        st.markdown(f"*{name}*")
        if rows:
            st.dataframe(pd.DataFrame(rows), hide_index=True, key=f"{prefix}_{name}")
            st.caption(caption)
        else:
            st.caption("nothing to measure (the lexicon judge rates each text alone: no order)" if name == "order"
                       else "nothing to measure")
    failures = pd.DataFrame(checks.get("failures") or [])
    if not failures.empty:
        st.markdown("*failing outputs*")
        st.dataframe(failures, hide_index=True, key=f"{prefix}_failures")
        labels = list(dict.fromkeys(f"{i} · {m}" for i, m in zip(failures["item_id"], failures["model"], strict=True)))
        chosen = st.selectbox("Failing output", labels, key=f"{prefix}_failing")
        if st.button("Open in Inspect", key=f"{prefix}_inspect", help="the Inspect page, filters cleared, at this "
                                                                      "output"):
            _open_in_inspect(chosen)
            st.switch_page(INSPECT_PAGE)
    views.signature_caption(checks.get("signature", ""))
    st.caption(f"judge {code(checks['judge'])}")
