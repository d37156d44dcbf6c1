"""Items page: every output with its per-item SA, EGM, CA and LD terms, worst first; search, filters, one row's text."""

import pandas as pd  # noqa: E402
import streamlit as st  # noqa: E402

from empathy import metrics  # noqa: E402
from empathy.distancing.result import LABELS  # noqa: E402
from empathy.distancing.shift import SHIFT_COLUMN  # noqa: E402
from empathy.items import (  # noqa: E402
    COUNT_COLUMNS,
    items_csv,
    term_columns,
)
from empathy.mechanisms import note_fields, output_scores  # noqa: E402
from empathy_app import compute, item_views, loading, session_keys, views  # noqa: E402
from empathy_app.markup import md  # noqa: E402

data = loading.require_data(ratings=False)
views.show_flash_error()
views.mode_caption(data)
outputs = data.dataset.outputs
if data.dataset.ratings.empty:
    st.info(f"This data set has no ratings, so there are no judge terms ({', '.join(metrics.judged_metrics())}) or "
            f"disagreements to list; the table shows each output's {views.and_list(metrics.text_metrics())} term "
            "and distancing counts, which come from the texts. Add ratings on the **Data** page.")


ratings = compute.effective_ratings(data)
# held once per data set and patched where a decision changed it: a rerun reuses the same frame
table = item_views.item_table(data)
terms = term_columns(table) + ([SHIFT_COLUMN] if SHIFT_COLUMN in table.columns else [])
ranges = [c for c in table.columns if str(c).startswith("range:")]
status_columns = [c for c in table.columns if str(c).endswith(" status")]
LABEL_NAMES = {"nominalization": "nominalizations", "impersonal": "impersonal", "agentless": "agentless"}


def _label(column: str) -> str:
    """How a sortable column is offered: ``SA · judge lexicon``, ``LD``, ``judges' range on e_ref``."""
    if column == SHIFT_COLUMN:
        return "LD shift · more distanced than the reference"
    if column.startswith("range:"):
        return f"judges' range on {column.removeprefix('range:')}"
    metric, _, judge = column.partition(":")
    return f"{metric} · judge {judge}" if judge else metric


larger_worse = [name for name, spec in metrics.METRIC_SPECS.items() if spec.lower_is_better]
smaller_worse = [name for name, spec in metrics.METRIC_SPECS.items() if not spec.lower_is_better]
st.caption("One row per output. Each judge's per-item term of Eq. 1-3 (the mean of a model's terms under a judge "
           "is its value on the Overview), the LD term of Eq. 4 (standardised within the model: how far an output "
           "is from its model's usual pattern, in either direction), the *LD shift* (how much more distancing the "
           "generation uses than its reference, in reference standard deviations summed over the three kinds, one "
           "scale for every output: the sort for \"more distanced than its reference\"), how far the judges are "
           "apart on each label (max - min), the distancing counts of each side and whether a human override "
           "exists. A term that cannot be computed (missing rating, E(t) = 0, a text without sentences, or an "
           "output the judge did not rate) shows as *None*, never 0; tick *Why None* to see which. "
           + ("Larger is worse for every term." if not smaller_worse else
              f"Larger is worse for {views.and_list(larger_worse)}, smaller for {views.and_list(smaller_worse)}; "
              "*Worst first* sorts each that way."))

with st.container(border=True):
    top = st.columns([3, 2, 3, 1.3])
    query = top[0].text_input("Search", key="items_search", placeholder="words in the reference or generation, or "
                              "an item id", help="Case-insensitive; the text as typed, not a pattern.")
    models = top[1].multiselect("Models", data.dataset.models, key="items_models", placeholder="all models")
    sortable = terms + ranges
    default = sortable[0] if sortable else None  # the first judge metric's first judge (SA), else the first term
    if sortable and st.session_state.get(session_keys.ITEMS_SORT) not in sortable:
        st.session_state[session_keys.ITEMS_SORT] = default
    sort_by = top[2].selectbox("Worst first by", sortable, key=session_keys.ITEMS_SORT, format_func=_label,
                               disabled=not sortable)
    absolute = top[3].checkbox("By size", key="items_abs", help="Sort by the magnitude, so that an SA term far "
                               "below 0 (generation more intense than the reference) comes first too.")
    why = top[3].checkbox("Why None", key="items_why", help="Show the status of every term: ok, missing, "
                          "undefined or not rated.")
    bottom = st.columns([2, 1, 1, 1, 2])
    side = bottom[0].radio("Counts of the", ["generation", "reference"], key="items_side", horizontal=True)
    suffix = "gen" if side == "generation" else "ref"
    minimums = {f"{label}_{suffix}": bottom[1 + position].number_input(
        f"Min {LABEL_NAMES[label]}", min_value=0, value=0, step=1, key=f"items_min_{label}") for position, label in
        enumerate(LABELS)}
    overridden = bottom[4].selectbox("Human overrides", ["any", "with an override", "without"],
                                     key="items_overridden")

rows = item_views.order(table, outputs, query=query, min_counts={k: v for k, v in minimums.items() if v > 0},
                        models=models or None,
                        overridden={"any": None, "with an override": True, "without": False}[overridden],
                        sort_by=sort_by, absolute=absolute)
if len(rows) == 0:
    st.info("No output matches the search and filters. Widen them above.")
    st.stop()

keys = ["item_id", "model", "task"]
lead = [sort_by] if sort_by is not None else []
visible = (keys + lead + [c for c in terms + ranges if c not in lead] + list(COUNT_COLUMNS)
           + ["overrides", "override_dimensions"] + (status_columns if why else []) + ["generation"])
config = {c: st.column_config.NumberColumn(c, format="%.3f") for c in terms + ranges}
config.update({c: st.column_config.NumberColumn(c, format="%d") for c in COUNT_COLUMNS})
config["generation"] = st.column_config.TextColumn("generation", width="large")
# the sort column's label names a judge (data): Markdown-escaped, or a rater called ![i](http://host/x.png)
# would put an image in the page
# the table sent to the browser is the first rows in this order (the worst first): a table is sent on every run,
# and every row of 200,000 outputs with its generation was seconds of CPU and gigabytes per run; the CSV has all
listed = item_views.engine(data).with_texts(table.iloc[rows[:views.PREVIEW_ROWS]])
st.caption(f"{len(rows)} of {len(table)} outputs" + (f", worst {md(_label(sort_by))} first" if sort_by else "")
           + (f"; the table lists the first {len(listed):,} (the CSV has every row)" if len(listed) < len(rows)
              else "")
           + ". The top row is open below; select a row to open it instead (a column header sorts the view only).")
# what decides the rows' order: a new one opens its top row below (and is a new table, with no stale selection)
order = repr((sort_by, bool(absolute), query, list(models), sorted(minimums.items()), overridden, side))
event = st.dataframe(listed[visible], hide_index=True, key=views.table_key("items_table", order), column_config=config,
                     on_select="rerun", selection_mode="single-row", height=420)
signature = str(compute.report(data).signature)
texts_of = item_views.engine(data).with_texts
views.download_later(st, "Download these rows (CSV)", lambda: items_csv(texts_of(table.iloc[rows]), signature),
                     file_name="empathy-items.csv", mime="text/csv", key="items_download")

# The selectbox is the one source of truth for the open row; a newly selected table row moves it.
labels = compute.output_labels(listed[["item_id", "model"]])  # the rows listed (the options go to the browser too)
views.follow_table_selection(event, labels, session_keys.ITEMS_PICK, session_keys.ITEMS_TABLE_SELECTION, order=order,
                             order_key=session_keys.ITEMS_TABLE_ORDER)

def _sentences(value: float) -> float | None:
    return None if pd.isna(value) else float(value)


st.subheader("One output")
pick = st.selectbox("Output (in the table's order)", labels, key=session_keys.ITEMS_PICK)
row = listed.iloc[labels.index(pick)]
index = compute.row_index(data)  # one output's rows looked up, not every row compared
source = index.output(outputs, row["item_id"], row["model"]).iloc[0]
st.caption(f"Task {views.code(row['task'] or '-')} · item {views.code(row['item_id'])} · model "
           f"{views.code(row['model'])}" + (f" · overridden: {md(row['override_dimensions'])}"
                                            if row["overrides"] else ""))
if views.has_text(source):
    views.output_side_by_side(data, source, key="items", notes=note_fields(source),
                              scores=output_scores(index.ratings_of(ratings, row["item_id"], row["model"]),
                                                   row["item_id"], row["model"],
                                                   _sentences(row["sentences_ref"]), _sentences(row["sentences_gen"])))
    views.conversation(source, "items_conversation")
else:
    views.no_text_note(source, "Its judge terms are in the table above.")

details = pd.DataFrame({
    "term": terms,
    "value": [row[c] for c in terms],
    "status": [row[f"{c} status"] for c in terms],
})
counts = pd.DataFrame({"reference": [row[f"{label}_ref"] for label in ("sentences", *LABELS)],
                       "generation": [row[f"{label}_gen"] for label in ("sentences", *LABELS)]},
                      index=["sentences", *LABELS])
mine = index.ratings_of(ratings, row["item_id"], row["model"])
left, middle, right = st.columns(3)
with left:
    st.markdown("**Terms of this output** (None = not computable; the status says why)")
    st.dataframe(details, hide_index=True, key="items_row_terms",
                 column_config={"value": st.column_config.NumberColumn("value", format="%.3f")})
with middle:
    st.markdown("**Judges' labels** (the terms' inputs)")
    if mine.empty:
        st.caption("No judge rated this output.")
    else:
        labels_table = mine.pivot_table(index="dimension", columns="rater", values="value", aggfunc="first",
                                        dropna=False)
        order = [d for d in ("e_ref", "e_gen", "u_ref", "u_gen", "ca") if d in labels_table.index]
        labels_table = labels_table.reindex(order + sorted(set(labels_table.index) - set(order)))
        labels_table.columns.name = None
        st.dataframe(labels_table.round(3).reset_index(), hide_index=True, key="items_row_labels")
with right:
    st.markdown("**Distancing counts**")
    st.dataframe(counts.reset_index(names="count"), hide_index=True, key="items_row_counts")
st.caption("To correct a judge's label of this output, open it on the **Inspect** page.")
