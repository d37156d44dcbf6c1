"""Agreement page: inter-judge Spearman per metric (Table 6), human vs judges, and how overrides moved ranks."""

import dataclasses

import streamlit as st  # noqa: E402

from empathy import metrics  # noqa: E402
from empathy.agreement import table6_notice  # noqa: E402
from empathy.exports import agreement_csv  # noqa: E402
from empathy.review import per_task, ranking_shift  # noqa: E402
from empathy_app import charts, compute, intervals, loading, overrides, views  # noqa: E402
from empathy_app.markup import codes, md  # noqa: E402

data = loading.require_data()
views.mode_caption(data)
current = overrides.applied(data)
# One truth (issue 26): every number here follows the sidebar's "Include human overrides", as every other page's
# does, and says which labels it rests on. With it on, overrides recompute the inter-judge Spearman live; where a
# human decision wrote the same label into both judges of a pair, the row says so (agreement a human created).
report = compute.report(data)
agreement = compute.table6_labels(data)  # the toggle's labels; cached per data set and overrides
judges = sorted(set(report.table.loc[report.table["metric"].isin(metrics.judged_metrics()), "scorer"]))

st.subheader("Inter-judge agreement on the per-model metrics (the paper's Table 6)")
st.caption("Spearman correlation between two judges' per-model values of a metric, over the models both "
           "scored. The paper reports 0.835-0.948 for SA and 0.748-0.924 for CA.")
if not judges:
    st.info("No judge rated the paper's dimensions here (e_ref/e_gen, u_ref/u_gen, ca), so there is no per-model "
            f"{views.and_list(metrics.judged_metrics(), 'or')} to correlate. The raters' agreement on this data set's "
            "own dimensions is below (Krippendorff's alpha) and, pair by pair and panel by panel, on the **Workbench** "
            "page.")
elif len(judges) < 2:
    st.info(f"Only one judge ({codes(judges) or 'none'}) rated this data set: inter-judge agreement needs "
            "at least two. Add another judge's ratings on the **Data** page.")
else:
    notice = table6_notice(report.table)
    if notice:
        st.info(md(notice) + ".")
    split = per_task(report.table)  # per task: the judges are compared within each task
    for number, task in enumerate(sorted(set(agreement["task"]), key=str)):
        if split:
            st.markdown(f"**Task {md(task)}**")
        columns = st.columns(3)
        shown = 0
        for metric in metrics.judged_metrics():
            # the metric's own rows: its figure stays cached while a decision moves another metric's rho
            figure = charts.spearman_heatmap(agreement[(agreement["task"] == task) & (agreement["metric"] == metric)]
                                            .reset_index(drop=True), metric)
            if figure is not None:
                columns[shown % 3].plotly_chart(figure, key=f"agreement_heatmap_{metric}" + (f"_{number}" * split))
                shown += 1
    # rho's interval over item resamples, the exact permutation p over models and Kendall's tau-b (cached per data
    # set and overrides, as the Overview's intervals)
    bootstrap = intervals.intervals(data)  # the sidebar's toggle, as the report above
    table6 = bootstrap.beside(agreement)
    pairs = (table6 if split else table6.drop(columns=["task"], errors="ignore")).copy()
    pairs["spearman"] = pairs["spearman"].astype(float).round(3)
    st.markdown(views.labels_used(data))
    st.dataframe(pairs.drop(columns=["warning", "rho_warning"], errors="ignore"), hide_index=True,
                 key="agreement_pairs",
                 column_config={"labels": st.column_config.TextColumn(help="judges: each judge's own labels; "
                                "with_overrides: with the human decisions applied"),
                                "human_decisions": st.column_config.NumberColumn(
                                    help="distinct human decisions in the two judges' labels of this metric"),
                                "same_human_label": st.column_config.NumberColumn(
                                    help="outputs on which both judges carry the same human label")}
                 | {c: st.column_config.NumberColumn(c, format="%.3f") for c in ("ci_low", "ci_high", "kendall_tau_b")}
                 | {c: st.column_config.NumberColumn(c, format="%.4g") for c in ("p_exact", "p_kendall", "p_se")})
    views.agreement_warnings(agreement)
    views.interval_warnings(intervals.rho_warnings(table6), ["task", "metric", "scorer_a", "scorer_b"])
    views.signature_caption(dataclasses.replace(report.signature, extra={
        **report.signature.extra, **intervals.signature_fields(bootstrap)}))
    st.caption(views.HOW_TO_READ["table6"])
    st.caption("**ci_low, ci_high**: rho's 95 % interval over item resamples (an item's outputs of every model "
               "resampled together). **p_exact**: the permutation p-value of rho over the models' orderings (exact up "
               "to 10 models, every ordering counted with its ties; Monte Carlo beyond, p_se its standard error): "
               "with 5 models no rho below 1 reaches p < 0.083. **kendall_tau_b**: Kendall's tau-b of the same "
               "values, steadier than rho when a metric takes few distinct values (CA), with its own p "
               "(p_kendall).")

    table6_signature = dataclasses.replace(report.signature, extra={
        **report.signature.extra, **intervals.signature_fields(bootstrap)})
    st.download_button("Download the agreement table (CSV)", agreement_csv(table6, table6_signature).encode(),
                       file_name="empathy-agreement.csv", mime="text/csv", key="agreement_download",
                       help="Spearman per metric and judge pair with the number of models, rho's 95 % interval "
                            "over items, the exact p and Kendall's tau-b, which labels each row rests on (labels, "
                            "human_decisions, same_human_label, warning) and the signature; spreadsheet-safe.")

st.subheader("Instance-level agreement between judges")
alpha = compute.alpha_by_dimension(data)  # cached per dimension
if compute.rater_count(data) >= 2 and len(alpha):
    alpha = alpha.assign(alpha=alpha["alpha"].astype(float).round(3))
    st.markdown(views.labels_used(data))
    st.dataframe(alpha, hide_index=True, key="agreement_alpha")
    views.signature_caption(report.signature)
    st.caption(views.HOW_TO_READ["alpha"])
else:
    st.caption("Krippendorff's alpha needs at least two raters.")

st.subheader("Human vs each judge (from the overrides)")
if current.empty:
    st.info("No human decision yet. Relabel some outputs on the **Relabel** or **Inspect** page; the human "
            "label of an output is its most recent decision (under the label rule).")
else:
    human = compute.human_agreement(data)
    if human.empty:
        st.info("The overridden outputs have no judge ratings to compare with.")
    else:
        shown_human = human.copy()
        for column in ("spearman", "pearson", "kappa", "kappa_quadratic", "percent_agreement"):
            shown_human[column] = shown_human[column].astype(float).round(3)
        st.caption("Compared with each judge's own (not overridden) labels. Cohen's kappa is the statistic "
                   "for the binary CA label, Spearman for the scores; None = undefined (too few items or "
                   "a constant side).")
        st.dataframe(shown_human, hide_index=True, key="agreement_human")
        views.signature_caption(compute.report(data, with_overrides=True).signature)

st.subheader("How the overrides moved the model ranking")
if current.empty:
    st.caption("No overrides, so no movement.")
else:
    before = compute.report(data, with_overrides=False).table
    after = compute.report(data, with_overrides=True).table
    moves = ranking_shift(before, after)
    changed = moves[(moves["rank_before"] != moves["rank_after"])
                    | ((moves["value_before"] - moves["value_after"]).abs() > 1e-12)]
    if changed.empty:
        st.success("The overrides changed no metric value and no rank.")
    else:
        st.caption("rank 1 = the best value in the metric's direction (the least failure); *moved* > 0 means the "
                   "model rose in the ranking.")
        st.dataframe(changed.round(3), hide_index=True, key="agreement_moves")
