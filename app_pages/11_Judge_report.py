"""Judge report page: may a judge replace the annotators on a dimension? The Alt-Test and the verdict line."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import streamlit as st  # noqa: E402

from empathy.judge_report.alt_test import DEFAULT_MIN_INSTANCES, SCORINGS, default_epsilon, rater_kinds  # noqa: E402
from empathy.judge_report.verdict import verdict_line  # noqa: E402
from empathy_app import (  # noqa: E402
    judge_checks,  # noqa: E402
    loading,
    overrides,
    views,
)
from empathy_app import judge_report as jr  # noqa: E402
from empathy_app.markup import code, md, people_csv  # noqa: E402

data = loading.require_data()
ledger = overrides.ledger(data)
ratings = jr.rated(data.dataset.ratings, ledger.status.fresh)
dimensions = jr.testable_dimensions(ratings)
st.caption("The Alternative Annotator Test (Calderon, Reichart & Dror, ACL 2025): leave one annotator out and ask, "
           "instance by instance, whether the judge or the excluded annotator agrees better with the remaining "
           "annotators; a one-sided test against the margin epsilon, Benjamini-Yekutieli over the annotators "
           "(q = 0.05). The judge passes when it wins against at least half of them; the advantage probability "
           "ranks judges. The team's own decisions count as annotators (kind human).")
with st.expander("Repeatability, order effect and probes", expanded=False):
    st.caption("An LLM judge's checks are paid calls: run them on the command line, where the requests are counted "
               "and capped before any call (`python -m empathy judge-check OUTPUTS --judge NAME --max-calls N "
               "--format json > checks.json`), and load the file here. The offline lexicon judge runs here.")
    uploaded = st.file_uploader("judge-check files (JSON)", type=["json"], accept_multiple_files=True,
                                key="jr_checks_files")
    loaded = [c for c in (judge_checks.read_checks(f) for f in uploaded or []) if c is not None]
    if st.toggle("Run the lexicon judge's checks (offline, no call)", key="jr_lexicon_checks"):
        loaded.append(judge_checks.lexicon_checks(data.content_key, data.dataset.outputs))
    for number, checks in enumerate(loaded):
        judge_checks.show_checks(checks, f"jr_checks_{number}")
checks_by_judge = {c["judge"]: c for c in loaded}
if not dimensions:
    st.info("The Alt-Test needs two or more human annotators (rater kind expert, human or author, or the team's "
            "decisions in the ledger) on the same output, and no dimension here has them. Import a data set with "
            "several annotators (the Kumar et al. import on the **Data** page) or have a second annotator relabel "
            "on the **Relabel** page.")
    st.stop()

with st.container(border=True):
    top = st.columns([2, 2, 2])
    dimension = top[0].selectbox("Dimension", dimensions, key="jr_dimension", format_func=views.dimension_label)
    humans, others = jr.raters_of(ratings, dimension)
    annotators = top[1].multiselect("Annotators", humans, default=humans, key=f"jr_annotators_{dimension}")
    judges = top[2].multiselect("Judges", others + [h for h in humans if h not in annotators], default=others,
                                key=f"jr_judges_{dimension}")
    low = st.columns(3)
    scoring = low[0].selectbox("Scoring", ["(default)", *SCORINGS], key="jr_scoring",
                               help="accuracy for categories (the default on a 0/1 dimension), neg-rmse for scales "
                                    "(the default otherwise), rank: neg-rmse on rank percentiles")
    kinds = rater_kinds(ratings[ratings["rater"].isin(annotators)])
    epsilon = low[1].number_input("Epsilon", min_value=0.0, max_value=0.99, step=0.05, key=f"jr_epsilon_{dimension}",
                                  value=default_epsilon([kinds[a] for a in annotators if a in kinds]),
                                  help="the cost-benefit margin: 0.2 for experts, 0.15 skilled, 0.1 crowd (the "
                                       "default follows the annotators' kind; mixed kinds: the smallest)")
    min_instances = int(low[2].number_input("Instances per annotator", min_value=2, value=DEFAULT_MIN_INSTANCES,
                                            step=1, key="jr_min_instances",
                                            help="the paper's 30; below 30 the Wilcoxon signed-rank test replaces "
                                                 "the t-test"))

if len(annotators) < 2 or not judges:
    st.info("Choose two or more annotators and at least one judge.")
    st.stop()
key = f"{data.content_key}|{ledger.digest}|{len(ledger.status.fresh)}"
result = jr.report(key, ratings, data.dataset.outputs, dimension, judges, annotators,
                   None if scoring == "(default)" else scoring, float(epsilon), min_instances)
for judge, reason in result.refused:
    st.warning(f"{code(judge)}: {md(reason)}")
if not result.found:
    st.stop()


st.subheader("Verdict")
for verdict in sorted(result.found, key=lambda v: -v.alt.advantage_probability):
    line = verdict_line(verdict.alt, verdict.length, checks_by_judge.get(verdict.judge))
    st.markdown(f"- **{md(verdict.judge)}** {md(line)}")
st.dataframe(result.summary(), hide_index=True, key="jr_summary")
views.signature_caption(result.found[0].signature if len(result.found) == 1
                        else " ; ".join(v.signature for v in result.found))
left, right = st.columns(2)
left.download_button("Download the verdicts (CSV)", people_csv(result.csv()), file_name="empathy-judge-report.csv",
                     mime="text/csv", key="jr_download_csv")
right.download_button("Download the verdicts (JSON)", result.json(), file_name="empathy-judge-report.json",
                      mime="application/json", key="jr_download_json")

st.subheader("Per annotator")
st.caption("rho_f (judge_advantage): share of the annotator's instances where the judge aligns at least as well with "
           "the remaining annotators; rho_h the same for the annotator. The judge wins against an annotator when "
           "H0 rho_f <= rho_h - epsilon is rejected after Benjamini-Yekutieli (p_adjusted <= 0.05).")
st.dataframe(result.per_annotator(), hide_index=True, key="jr_annotators_table")
for verdict in result.found:
    views.signature_caption(verdict.signature)
