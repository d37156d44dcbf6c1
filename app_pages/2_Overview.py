"""Overview page: every registered metric (SA, EGM, CA, LD) per model under each judge, with n, rankings, charts
and the signature; names, help, charts and rank directions come from the metric registry."""

import dataclasses
import re

import streamlit as st  # noqa: E402

from empathy import metrics  # noqa: E402
from empathy.evaluate import rankings  # noqa: E402
from empathy.exports import table6_csv  # noqa: E402
from empathy.review import egm_readings, metric_pivot, per_task  # noqa: E402
from empathy_app import charts, compute, intervals, loading, markup, views  # noqa: E402

data = loading.require_data(ratings=False)  # without ratings LD is still computed: it needs only the texts
views.mode_caption(data)
LD_READINGS = {"separate": "Eq. 4: each side standardised on its own (the paper)",
               "reference": "both sides with the reference's mean and sd (shows a uniform shift too)"}
ld_reading = st.radio("LD standardisation", list(LD_READINGS), format_func=LD_READINGS.get, horizontal=True,
                      key="overview_ld_standardization",
                      help="The command line's --ld-standardization. Eq. 4 compares the *pattern* of distancing: "
                           "a model that distances everywhere alike is not penalised. The reference reading "
                           "measures the level shift as well; the signature names it.")
report = compute.report(data, ld_standardization=ld_reading)
table = report.table
paper_dimensions = sorted({d for name in metrics.judged_metrics() for d in metrics.get_metric(name).dimensions})
judged = views.and_list(metrics.judged_metrics())
from_texts = views.and_list(metrics.text_metrics())
if data.dataset.ratings.empty and data.filtered and not data.all_data.ratings.empty:
    st.info(f"No rating of the task **{markup.md(loading.task_label(data.task))}** in this data set: only "
            f"**{from_texts}** is computed here, from the texts themselves. Choose another task (or *All tasks*) in "
            f"the sidebar for {judged}.")
elif data.dataset.ratings.empty:
    st.info(f"This data set has no ratings yet: only **{from_texts}** is computed here, from the texts themselves. "
            "Add ratings files on the **Data** page, or rate the outputs with a judge on the **Judge** page, for "
            f"{judged}.")
elif not set(paper_dimensions) & set(data.dataset.dimensions):
    no_text = int((~views.has_texts(data.dataset.outputs)).sum())
    st.info("These ratings have none of the paper's judge dimensions (" + ", ".join(map(views.code, paper_dimensions))
            + f"), so {judged} cannot be computed here; only {from_texts}, which comes from the texts themselves"
            + (f" ({no_text} output(s) without text are left out)" if no_text else "") + ". The raters' agreement "
            "on this data set's own dimensions is on the **Workbench** page.")
if table.empty or table["value"].notna().sum() == 0:
    st.info("No metric could be computed from these ratings (no e_ref/e_gen, u_ref/u_gen or ca ratings, "
            "and no texts to analyse). Check the dimensions on the **Data** page.")
    st.stop()

st.subheader("Metrics per model")
st.caption(views.metrics_legend())
pivot = metric_pivot(table)
rows = [c for c in ("task", "model") if c in pivot.columns]  # per task: a (task, model) row each
values = [c for c in pivot.columns if c not in rows and not c.startswith("n ")]
# a text-only metric (LD) has one scorer, the distancing analyser: its long name cut off the last column's header
fixed_scorer = {f"{name} ({metrics.get_metric(name).scorer})": name for name in metrics.text_metrics()}
# Only the values here, so that every metric fits the page's width (the n's doubled the columns and pushed CA
# and LD out of sight at 1400 px); how many outputs each value rests on is in the expander below.
st.dataframe(pivot[[*rows, *values]].round(3), hide_index=True, key="overview_pivot",
             column_config={column: st.column_config.NumberColumn(
                 fixed_scorer.get(column, column), format="%.3f", width="small",
                 # a tooltip is Markdown and the column names a judge (data)
                 help=views.metric_help(column.split(" ")[0]) + f" · column {markup.md(column)}")
                 for column in values})
with st.expander("How many outputs each value rests on (n)"):
    counts = pivot[[*rows, *(c for c in pivot.columns if c.startswith("n "))]]
    st.dataframe(counts.rename(columns=lambda c: c.removeprefix("n ")), hide_index=True, key="overview_counts")
st.caption(views.HOW_TO_READ["metrics"])

# every value with its item-cluster bootstrap interval and rank interval, and where an audit corrects a judge, the
# corrected value beside the judge's (both cached: the bootstrap per data set and overrides, PPI per audit labels)
audits = intervals.audit_estimates(data)
reports = intervals.scoped_reports(audits.reports, data)
bootstrap = intervals.intervals(data)
with_intervals = intervals.value_table(table, bootstrap, reports, by_task=compute.by_task(data))
shown = with_intervals if per_task(table) else with_intervals.drop(columns="task")
audited = any(len(r.table) for r in reports)  # an audit of a dimension these values read: its column, even empty
st.subheader("Values with 95 % intervals" + (", and corrected by the audit" if audited else ""))
for problem in audits.problems:
    st.warning(problem)
number = {c: st.column_config.NumberColumn(c, format="%.3f") for c in ("value", "ci_low", "ci_high", "corrected",
                                                                        "corrected_low", "corrected_high", "human")}
hidden = [] if audited else list(intervals.CORRECTED_COLUMNS)
names = list(dict.fromkeys(shown["metric"]))
corrected_names = list(dict.fromkeys(shown.loc[shown["n_audit"].notna(), "metric"]))
chosen_metric = st.radio("Intervals of", ["all", *names], horizontal=True, key="overview_intervals_metric",
                         index=1 + names.index(corrected_names[0]) if corrected_names else 0,
                         help="One metric's rows, or all (the first metric an audit corrects is shown first).")
part = shown if chosen_metric == "all" else shown[shown["metric"] == chosen_metric]
table_shown = part.drop(columns=[*hidden, "warning"])
table_shown.insert(table_shown.columns.get_loc("rank") + 1, "rank_interval",
                   [intervals.rank_range(lo, hi) for lo, hi in zip(part["rank_low"], part["rank_high"], strict=True)])
st.dataframe(table_shown.drop(columns=["rank_low", "rank_high"]), hide_index=True, key="overview_intervals",
             column_config=number)
st.caption("**value**: as in the table above (with the human overrides when the sidebar includes them). "
           + intervals.settings_caption(bootstrap) + (
               " **corrected**: the judge's value corrected by a random human audit (PPI++ from the judge's own "
               "labels and the decisions made in *audit sample* order on Relabel; decisions from the other orders "
               "never count), with its 95 % interval, the audited outputs it uses (n_audit) and the humans' mean on "
               "them alone (human). " + intervals.SMALL_AUDIT_NOTE
               if audited else " No audit corrects these values yet: draw one on **Relabel** (order *audit sample*)."))
# the corrected intervals' warnings first: the box lists a few rows, and those say what the audit cannot promise
flagged_first = part.sort_values("warning", key=lambda w: ~w.fillna("").str.contains("corrected: "), kind="stable")
views.interval_warnings(flagged_first, [c for c in ("task", "model", "scorer", "metric") if c in part.columns])
# how often the order of two neighbouring models survives resampling the items (the same resamples)
pairs = bootstrap.pairs if chosen_metric == "all" else bootstrap.pairs[bootstrap.pairs["metric"] == chosen_metric]
if len(pairs):
    st.markdown("**Is each model better than the next?** (`p_better`)")
    order = pairs[[c for c in ("task", "scorer", "metric") if per_task(table) or c != "task"]].assign(
        better=pairs["better"], worse=pairs["worse"], difference=pairs["difference"],
        difference_low=pairs["difference_low"], difference_high=pairs["difference_high"],
        p_better=pairs["p_better"])
    st.dataframe(order, hide_index=True, key="overview_pairs", column_config={
        c: st.column_config.NumberColumn(c, format="%.3f")
        for c in ("difference", "difference_low", "difference_high", "p_better")})
    st.caption(intervals.P_BETTER_MEANING)
interval_signature = dataclasses.replace(report.signature, extra={
    **report.signature.extra, **intervals.signature_fields(bootstrap, [r for r in reports if audited])})
views.signature_caption(interval_signature)
st.download_button("Download the values with intervals (CSV)",
                   markup.people_csv(with_intervals.assign(signature=str(interval_signature))),
                   file_name="empathy-intervals.csv", mime="text/csv", key="overview_download_intervals",
                   help="Every value with its 95 % bootstrap interval, rank and rank interval (and, where an audit "
                        "exists, the corrected value with its interval), the warnings and the signature naming the "
                        "bootstrap and the audit; spreadsheet-safe.")
task_name = loading.task_label(data.task)
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
# both files and the tables above rest on the labels the sidebar's switch chose: said beside them, counted in the
# signature (decisions:N, overridden_ratings:N)
buttons[2].caption(views.labels_used(data))

for metric in metrics.metrics_reading("egm_both_zero"):
    if not table.loc[table["metric"] == metric, "value"].notna().any():
        continue
    # Eq. 2 is 0/0 for an item with a + b = 0: the default counts it as 0 (our choice); leaving it out can move
    # values and rankings a lot (issue 15), so both readings are shown wherever they differ.
    left_out = compute.report(data, egm_both_zero="exclude")
    readings = egm_readings(table, left_out.table, metric)
    if len(readings):
        st.subheader(f"{metric} under both readings of a + b = 0")
        st.caption("An item whose reference and generation both have no disturbing sentence (a + b = 0) counts "
                   f"as {metric} 0 in the table above (Eq. 2 is 0/0 there: counting 0 is this project's default "
                   f"choice, not the paper's); left out as undefined, these models' {metric} differs as below "
                   "(`--egm-both-zero exclude` on the command line).")
        st.dataframe(readings.round(3), hide_index=True, key="overview_egm_readings")
        views.signature_caption(left_out.signature)

st.subheader("Rankings (1 = the best in the metric's direction: the least failure)")
ranked = rankings(table)
if ranked.empty:
    st.info("No ranking: every metric value is undefined.")
else:
    ranked["column"] = ranked["metric"] + " (" + ranked["scorer"] + ")"
    wide = ranked.pivot_table(index=["task", "model"] if per_task(table) else "model", columns="column",
                              values="rank", aggfunc="first")
    order = [c for c in metric_pivot(table).columns if c in wide.columns]
    shown_ranks = intervals.with_rank_intervals(wide[order].astype("Int64"), shown)
    st.dataframe(shown_ranks.reset_index(), hide_index=True, key="overview_ranks")
    st.caption(views.HOW_TO_READ["rankings"] + " Beside each rank its 95 % interval over item resamples.")
    views.signature_caption(dataclasses.replace(report.signature, extra={**report.signature.extra,
                                                                         **intervals.signature_fields(bootstrap)}))

st.subheader("Charts")
charted = [name for name in metrics.charted_metrics()
           if table.loc[table["metric"] == name, "value"].notna().any()]
bars = intervals.chart_frame(table, with_intervals)
st.caption("Error bars: 95 % intervals (item-cluster bootstrap; for a judge corrected by the audit, PPI++). "
           f"Signature: {markup.code(str(interval_signature))}")
columns = st.columns(2)
for position, metric in enumerate(charted):
    with columns[position % 2]:
        # the metric's own rows: its figure stays cached while a decision moves another metric's values
        st.plotly_chart(charts.metric_bars(bars[bars["metric"] == metric].reset_index(drop=True), metric),
                        key=f"overview_chart_{metric}")
        if metrics.get_metric(metric).how_to_read:
            st.caption(metrics.get_metric(metric).how_to_read)

standard = charts.standard_scatter(data, table)
if standard is not None:
    st.plotly_chart(standard, key="overview_standard_scatter")

st.subheader("Reproducibility signature")
st.code(str(report.signature), language=None)
