"""Overview page: SA, EGM, CA and LD per model under each judge, with n, rankings, charts and the signature."""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import streamlit as st  # noqa: E402

from empathy.evaluate import rankings  # noqa: E402
from empathy.exports import table6_csv  # noqa: E402
from empathy.metrics import METRIC_DIMENSIONS  # noqa: E402
from empathy.review import metric_pivot  # noqa: E402
from empathy_app import markup, state, views  # noqa: E402

data = state.page_setup("Overview")
data = state.require_data(data, ratings=False)  # without ratings LD is still computed: it needs only the texts
views.mode_caption(data)
report = state.report(data)
table = report.table
paper_dimensions = sorted({d for dims in METRIC_DIMENSIONS.values() for d in dims})
if data.dataset.ratings.empty and data.filtered and not data.all_data.ratings.empty:
    st.info(f"No rating of the task **{markup.md(state.task_label(data.task))}** in this data set: only **LD** is "
            "computed here, from the texts themselves. Choose another task (or *All tasks*) in the sidebar for SA, "
            "EGM and CA.")
elif data.dataset.ratings.empty:
    st.info("This data set has no ratings yet: only **LD** is computed here, from the texts themselves. Add "
            "ratings files on the **Data** page, or rate the outputs with a judge on the **Judge** page, for SA, "
            "EGM and CA.")
elif not set(paper_dimensions) & set(data.dataset.dimensions):
    no_text = int((~views.has_texts(data.dataset.outputs)).sum())
    st.info("These ratings have none of the paper's judge dimensions (" + ", ".join(map(views.code, paper_dimensions))
            + "), so SA, EGM and CA cannot be computed here; only LD, which comes from the texts themselves"
            + (f" ({no_text} output(s) without text are left out)" if no_text else "") + ". The raters' agreement "
            "on this data set's own dimensions is on the **Workbench** page.")
if table.empty or table["value"].notna().sum() == 0:
    st.info("No metric could be computed from these ratings (no e_ref/e_gen, u_ref/u_gen or ca ratings, "
            "and no texts to analyse). Check the dimensions on the **Data** page.")
    st.stop()

st.subheader("Metrics per model")
st.caption(" · ".join(f"**{k}**: {v}" for k, v in views.METRIC_HELP.items()) + ". Lower is better for all four.")
st.dataframe(metric_pivot(table).round(3), hide_index=True, key="overview_pivot")
task_name = state.task_label(data.task)
download = table.assign(task=task_name) if data.filtered else table  # the engine calls its one group "all"
download = download.assign(signature=str(report.signature))  # the file carries what it depends on
suffix = "-" + re.sub(r"[^A-Za-z0-9_.-]+", "_", task_name) if data.filtered else ""
buttons = st.columns([1, 1, 2])
buttons[0].download_button("Download the results table (CSV)", markup.people_csv(download),
                           file_name=f"empathy-metrics{suffix}.csv", mime="text/csv", key="overview_download")
buttons[1].download_button("Download as the paper's Table 6 (CSV)",
                           table6_csv(download, report.signature).encode(),
                           file_name=f"empathy-table6{suffix}.csv", mime="text/csv", key="overview_download_table6",
                           help="One row per model, a column group per judge with its metrics (two header rows, "
                                "as the paper's Table 6), and the signature; spreadsheet-safe.")

st.subheader("Rankings (1 = least failure)")
ranked = rankings(table)
if ranked.empty:
    st.info("No ranking: every metric value is undefined.")
else:
    ranked["column"] = ranked["metric"] + " (" + ranked["scorer"] + ")"
    wide = ranked.pivot_table(index="model", columns="column", values="rank", aggfunc="first")
    order = [c for c in metric_pivot(table).columns if c in wide.columns]
    st.dataframe(wide[order].astype("Int64").reset_index(), hide_index=True, key="overview_ranks")

st.subheader("Charts")
metrics_present = [m for m in ("SA", "EGM", "CA", "LD") if table.loc[table["metric"] == m, "value"].notna().any()]
columns = st.columns(2)
for position, metric in enumerate(metrics_present):
    columns[position % 2].plotly_chart(views.metric_bars(table, metric), key=f"overview_chart_{metric}")

standard = views.standard_scatter(data, table)
if standard is not None:
    st.plotly_chart(standard, key="overview_standard_scatter")

st.subheader("Reproducibility signature")
st.code(str(report.signature), language=None)
