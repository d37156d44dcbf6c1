"""Streamlit views of exhibits and ranking fragility (the Exhibits page, the Inspect pin control, Relabel order).

The content (exhibit views, HTML, fragility tables, the by-influence order) comes from :mod:`empathy.exhibits`
and :mod:`empathy.fragility`; this module only lays it out. Exhibit HTML goes through ``st.html`` (no Markdown
pass) and is built from escaped parts only (:func:`empathy.exhibits.exhibit_html`).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from empathy import metrics
from empathy.exhibits import EXHIBIT_CSS, ExhibitView, exhibit_html, exhibit_view
from empathy.fragility import FragilityReport, fragility, influence_order, order_queue
from empathy.labels.exhibit_list import pin_exhibit
from empathy.labels.locations import StoreError
from empathy_app import compute, identity, overrides, session_keys, views
from empathy_app.loading import Loaded
from empathy_app.markup import md


def pin_control(data: Loaded, item_id: str, model: str, key: str) -> None:
    """A "Pin as exhibit" popover: a note and a button that adds the output to the data set's exhibit list."""
    who = identity.access(data.store)
    refusal = who.why_not_curate()
    with st.popover("Pin as exhibit", help="Add this output to the Exhibits page, with a note."):
        note = st.text_area("Note", key=f"{key}_note", placeholder="What should the audience see here?")
        if st.button("Pin", key=f"{key}_pin", disabled=refusal is not None, help=md(refusal) if refusal else None):
            try:
                position = pin_exhibit(data.store, data.dataset_id, str(item_id), str(model), note,
                                       annotator=who.identity)
            except (StoreError, OSError) as error:
                st.error(f"Could not pin: {md(error)}")
            else:
                st.success(f"Pinned as exhibit {position}.")


def _values(data: Loaded) -> object:
    """The plan's rating values with the applied overrides patched in (under the global toggle), or ``None``
    for the judge-only values or when an override adds a rating the plan has no place for."""
    plan = compute.engine(data).plan
    if not st.session_state.get(session_keys.WITH_OVERRIDES, True):
        return None
    return plan.patch(overrides.applied(data))


@st.cache_data(show_spinner=False, max_entries=8)
def _fragility(key: str, okey: str, _data: Loaded, top: int) -> FragilityReport:
    return fragility(compute.engine(_data).plan, _values(_data), top=top)


def fragility_report(data: Loaded, top: int = 5) -> FragilityReport:
    """Fragility of the data set's judge metrics under the global toggle (cached per data set and overrides)."""
    okey = overrides.applied_key(data) if st.session_state.get(session_keys.WITH_OVERRIDES, True) else "none"
    return _fragility(f"{data.content_key}|{metrics.registry_token()}", okey, data, top)


@st.cache_data(show_spinner=False, max_entries=8)
def _influence(key: str, okey: str, dimension: str, _data: Loaded) -> pd.DataFrame:
    return influence_order(compute.engine(_data).plan.item_terms(_values(_data)), dimension)


def relabel_by_influence(data: Loaded, queue: pd.DataFrame, dimension: str) -> pd.DataFrame:
    """The Relabel queue in the "by influence" order (:func:`empathy.fragility.by_influence`); the order is
    cached per data set, overrides and dimension, so a decision costs one recompute, not one per rerun."""
    okey = overrides.applied_key(data) if st.session_state.get(session_keys.WITH_OVERRIDES, True) else "none"
    return order_queue(queue, _influence(data.content_key, okey, dimension, data))


def exhibit_views(data: Loaded, pinned: pd.DataFrame) -> list[ExhibitView]:
    """The view of each pinned output present in the (possibly task-filtered) data set, in order."""
    outputs = data.dataset.outputs
    keys = set(zip(outputs["item_id"].astype(str), outputs["model"].astype(str), strict=True))
    engine = compute.engine(data)
    applied = overrides.applied(data)
    out = []
    for record in pinned.to_dict("records"):
        if (record["item_id"], record["model"]) not in keys:
            continue
        row = outputs[(outputs["item_id"].astype(str) == record["item_id"])
                      & (outputs["model"].astype(str) == record["model"])].iloc[0]
        texts = (str(row["reference"]), str(row["generation"]))
        out.append(exhibit_view(outputs, data.dataset.ratings, applied, record["item_id"], record["model"],
                                note=record["note"], recompute=engine, spans=compute.spans_for(texts)))
    return out


def show_exhibit(view: ExhibitView, position: int | None = None) -> None:
    """One exhibit, full width, with its CSS (``st.html``: no Markdown pass over the escaped HTML)."""
    st.html(f"<style>{EXHIBIT_CSS}</style>{exhibit_html(view, position=position)}")


def fragility_section(data: Loaded, key: str) -> None:
    """Adjacent pairs with the flips or shift needed to reorder them, and each model's most influential items."""
    report = fragility_report(data)
    if report.pairs.empty:
        st.info("No judge metric ranks two models here, so there is no ranking to be fragile.")
        return
    ranked = list(dict.fromkeys(report.pairs["metric"]))
    columns = st.columns(2)
    metric = columns[0].selectbox("Metric", ranked, key=f"{key}_metric")
    judges = sorted(set(report.pairs.loc[report.pairs["metric"] == metric, "scorer"]), key=str)
    judge = columns[1].selectbox("Judge", judges, key=f"{key}_judge")
    pairs = report.pairs[(report.pairs["metric"] == metric) & (report.pairs["scorer"] == judge)]
    spec = metrics.get_metric(metric)
    # 0 -> 1 flips raise a share: they put the better model behind on a lower-is-better metric
    raised, lowered = ("0", "1") if spec.lower_is_better else ("1", "0")
    if (pairs["kind"] == "flips").all():
        shown = pairs[["task", "rank", "better", "worse", "value_better", "value_worse", "flips_needed",
                       "flips_better", "flips_worse"]]
        st.caption(f"Fewest {md(metric)} label flips that put the better-ranked model strictly behind the next one "
                   f"(flips_better: its {raised} labels turned to {lowered}; flips_worse: the other's {lowered} "
                   f"labels turned to {raised}). Ranks: {views.rank_heading(metric)}.")
    else:
        shown = pairs[["task", "rank", "better", "worse", "value_better", "value_worse", "items_needed",
                       "shift_needed", "shift_model", "shift_item", "score_shift", "score_item"]]
        score = f", for {md(metric)}, the smallest change of one judge score {spec.ratio_of[0]} (score_shift)" if (
            spec.ratio_of) else ""
        st.caption(f"Smallest change of one item's {md(metric)} term that reorders the pair (shift_needed; "
                   "empty when no single item can), the fewest items that could if each moved to the end of its "
                   f"range (items_needed){score}. Ranks: {views.rank_heading(metric)}.")
    st.dataframe(shown, hide_index=True, key=f"{key}_pairs")
    influence = report.influence[(report.influence["metric"] == metric) & (report.influence["scorer"] == judge)]
    st.markdown("**Most influential items** (leave-one-out: how much the model's value moves when the item is "
                "left out; positive = the item raises the value, which makes the model look "
                f"{'worse' if spec.lower_is_better else 'better'})")
    st.dataframe(influence[["task", "model", "item_id", "term", "value", "loo_value", "influence"]],
                 hide_index=True, key=f"{key}_influence")
    rom = report.ratio_of_means[(report.ratio_of_means["metric"] == metric)
                                & (report.ratio_of_means["scorer"] == judge)]
    if spec.ratio_of is not None and len(report.ratio_of_means):
        x, y = spec.ratio_of
        reading = f"{md(metric)} as a ratio of means (1 - Σ{x} / Σ{y})"
        if rom["differs"].any():
            st.markdown(f"**{reading}** ranks these models differently from {spec.equation}'s mean of ratios:")
            st.dataframe(rom, hide_index=True, key=f"{key}_rom")
        else:
            st.caption(f"{reading} ranks the models as {spec.equation} does.")
