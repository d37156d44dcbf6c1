"""Agreement workbench: every rater pair, panels vs crowd, LLM vs experts with the overrides, sample-size stability."""

import streamlit as st  # noqa: E402

from empathy import metrics  # noqa: E402
from empathy.panels import is_panel  # noqa: E402
from empathy.stability import STATISTICS, default_sizes  # noqa: E402
from empathy_app import compute, loading, views  # noqa: E402
from empathy_app import workbench as wb  # noqa: E402
from empathy_app.markup import codes, md  # noqa: E402

data = loading.require_data()
views.mode_caption(data)
dimensions = compute.dimensions_of(data)
now = wb.overrides_now(data)  # the overrides of this run, read once

controls = st.columns([3, 1, 1])
dimension = controls[0].selectbox("Dimension", dimensions, key="wb_dimension")
bootstrap = int(controls[1].number_input("Bootstrap resamples", min_value=0, max_value=5000, value=500, step=100,
                                         key="wb_bootstrap", help="for the Spearman intervals (0 = none)"))
seed = int(controls[2].number_input("Seed", min_value=0, value=0, step=1, key="wb_seed"))
every = st.checkbox("Pair and panel tables: every dimension (slower with many raters; lower the bootstrap)",
                    key="wb_every_dimension")
shown_dimensions = tuple(dimensions) if every else (dimension,)

# ------------------------------------------------------------------------------------------ rater pairs
st.subheader("Every pair of raters")
st.caption("Spearman with a percentile bootstrap interval over items, Pearson, Cohen's kappa (unweighted and "
           "quadratic; only for whole-number labels, blank otherwise), percent agreement, and Krippendorff's "
           "alpha of the dimension over all raters. " + views.labels_used(data))
# Each result is keyed on the data set and the overrides of the dimensions it reads (no hashing of ratings).
signature = f"{compute.report(data).signature}|bootstrap:{bootstrap}|seed:{seed}"
pairs = wb.pair_table(now, shown_dimensions, bootstrap, seed)
if pairs.empty:
    st.info(f"Only one rater rated {codes(shown_dimensions)}: there is no pair to compare. Load a data set "
            "with several raters (for example the Kumar et al. 2025 import) on the **Data** page.")
else:
    wb.show(pairs, "wb_pairs")
    views.agreement_warnings(wb.pair_provenance_of(now, pairs, shown_dimensions), ("dimension", "rater_a", "rater_b"))
    views.signature_caption(signature)

# ---------------------------------------------------------------------------------------------- panels
st.subheader("Panels: the mean of the experts, of the LLMs, and the crowd")
st.caption("A panel's value is the mean of its members' ratings of an output (raters grouped by rater_kind; "
           "the crowd stays as it is). Panel means are fractional, so plain kappa is blank; "
           "*kappa_quadratic_rounded* rounds both sides half up to the scale, on whole-number scales only.")
panels = wb.panel_table(now, shown_dimensions, bootstrap, seed)
if panels.empty:
    st.info("No panels to compare here: a panel needs two or more raters of one kind (expert, llm, ...), and a "
            "comparison needs two panels, or a panel and a crowd rater.")
else:
    wb.show(panels, "wb_panels")
    views.signature_caption(signature)

# ------------------------------------------------------------------------------- live: LLM vs experts
st.subheader("Agreement with a reference, live with your relabels")
targets = wb.comparison_targets(now)
raters_on_dimension = wb.raters_on(now, dimension)
if len(targets) < 2 or len(raters_on_dimension) < 2:
    st.info("Needs at least two raters on this dimension.")
else:
    default_target = targets.index("panel:experts") if "panel:experts" in targets else 0
    target = st.selectbox("Compare each rater with", targets, index=default_target, key="wb_target")
    kinds = wb.rater_kind_of(data)
    llms = [r for r in raters_on_dimension if kinds.get(r) == "llm"]
    candidates = [r for r in raters_on_dimension if r != target and not is_panel(r)]
    chosen = st.multiselect("Raters", candidates, default=[r for r in llms if r != target] or candidates,
                            key="wb_live_raters")
    live = wb.live_agreement(now, target, tuple(chosen), dimension)
    if live.empty:
        st.info("Nothing to compare: choose raters that share outputs with the reference.")
    else:
        st.caption(f"Spearman (and quadratic kappa) of each rater with **{md(target)}** on **{md(dimension)}**, "
                   "from the judges' own labels (*before*) and with the current overrides (*after*). Relabel a rater's "
                   "ratings on the **Relabel** or **Inspect** page and come back: *after* follows.")
        wb.show(live.dropna(axis="columns", how="all"), "wb_live")

# ------------------------------------------------------------------------------------------- stability
st.subheader("Sample-size stability (the paper's Table 7)")
st.caption("For each size, random subsets of the units are drawn without replacement (seeded); the table shows "
           "mean ± sd over the subsets per group and the Spearman of the group rankings between sizes "
           "(and with all units). The paper reads Spearman near 1 from 100 items on as a stable ranking.")
source = st.radio("Groups", ["raters on the dimension", "models under a metric"], horizontal=True,
                  key="wb_stability_source")
result = None
title = ""
settings = st.columns([2, 1, 1])
n_resamples = int(settings[1].number_input("Resamples per size", min_value=2, max_value=2000, value=100, step=50,
                                           key="wb_resamples"))
if source == "raters on the dimension":
    n_units = wb.dimension_matrix_of(now, dimension).n_outputs
    with_panels = st.checkbox("Include the panels as groups", value=True, key="wb_with_panels")
    options = st.columns(2)
    statistic = options[0].selectbox("Statistic", [s for s in STATISTICS], key="wb_statistic",
                                     help="mean/median of each rater's ratings, or each rater's agreement "
                                          "with a reference")
    reference = None
    if statistic in ("spearman", "pearson", "kappa_quadratic"):
        reference = options[1].selectbox("Reference", targets, index=targets.index("panel:experts")
                                         if "panel:experts" in targets else 0, key="wb_reference")
    sizes_text = settings[0].text_input("Sizes", ", ".join(map(str, default_sizes(n_units))), key="wb_sizes_dim")
    try:
        sizes = wb.parse_sizes(sizes_text, n_units)
        # on a large data set the table waits for a click (it is not what the page shows first)
        if wb.stability_allowed(n_units, n_resamples, len(sizes)):
            result = wb.dimension_stability(now, dimension, tuple(sizes), n_resamples, seed, statistic, reference,
                                            with_panels)
            title = f"{statistic} of {dimension} by rater" + (f" (vs {reference})" if reference else "")
    except ValueError as error:
        st.error(f"Sizes: {md(error)}")
else:
    options = st.columns(2)
    metric = options[0].selectbox("Metric", list(metrics.judged_metrics()), key="wb_metric")
    judges = wb.metric_judges(now, metric)
    if not judges:
        st.info(f"No judge rated the dimensions of {metric} in this data set.")
    else:
        judge = options[1].selectbox("Judge", judges, key="wb_judge")
        n_units = len(wb.metric_stability_matrix(now, metric, judge))
        sizes_text = settings[0].text_input("Sizes", ", ".join(map(str, default_sizes(n_units))),
                                            key="wb_sizes_metric")
        try:
            sizes = wb.parse_sizes(sizes_text, n_units)
            if wb.stability_allowed(n_units, n_resamples, len(sizes)):
                result = wb.metric_stability(now, metric, judge, tuple(sizes), n_resamples, seed)
                title = f"{metric} by model (judge {judge}), items resampled"
        except ValueError as error:
            st.error(f"Sizes: {md(error)}")
if result is not None:
    st.caption(f"{result.n_units} units · {result.n_resamples} subsets per size · seed {result.seed}")
    st.dataframe(result.wide(), hide_index=True, key="wb_stability_table")
    st.plotly_chart(wb.stability_figure(result, title), key="wb_stability_chart")
    if len(result.full) < 3:
        # With two groups every rank correlation is undefined: the tables would be all None, which reads as a
        # failure of the tool rather than of the question.
        st.info(f"The rank tables (Spearman of the rankings across sizes) are not shown: there are only "
                f"{len(result.full)} group(s) here, and a rank correlation needs at least three (two groups have "
                "one order or the other, so Spearman is undefined). The mean ± sd table above is the answer for "
                "two raters; add raters (or choose *models under a metric*) to compare rankings.")
    else:
        ranks = st.columns(2)
        with ranks[0]:
            st.markdown("**Spearman of the mean columns across sizes** (the paper's reading of Table 7)")
            wb.show(result.rank_spearman.astype({"size_a": str, "size_b": str}), "wb_stability_ranks")
        with ranks[1]:
            st.markdown("**Per subset: Spearman with the full-data ranking**")
            wb.show(result.resample_rank, "wb_stability_resample_ranks")
        st.caption("Averaging over many subsets recovers the full-data values, so the left table is close to 1 at "
                   "every size by construction; the right one shows how far a single subset of that size can "
                   "move the ranking (*same_ranking* = share of subsets giving exactly the full ranking).")
