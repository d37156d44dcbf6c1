"""The Data page's view of an importer's report: counts, what was dropped or merged and why, the cross-checks."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from empathy_app.markup import code, md


def _short_file(path: str) -> str:
    return path.removeprefix("annotations/").removesuffix("_ratings.csv")


def _event_lines(events: pd.DataFrame) -> list[str]:
    """One Markdown bullet per (action, reason), with the files it concerns (a reason often repeats per file)."""
    lines = []
    for (action, why), part in events.groupby(["action", "why"], sort=False):
        files = ", ".join(code(_short_file(f)) for f in part["file"])
        counts = part["count"].astype(int)
        count = f"{counts.iloc[0]} each" if len(part) > 1 and counts.nunique() == 1 else f"{counts.sum()}"
        lines.append(f"- **{action}** {count} · {md(why)} — {files}")
    return lines


def show(report: object) -> None:
    """An importer's report in an expander: counts, and what was dropped or merged and why.

    ``report`` is an :class:`empathy.datasets.report.ImportReport` (every importer of
    :data:`empathy.datasets.IMPORTERS` returns one); its counts are rows, cells or columns as each reason says.
    """
    import json
    from dataclasses import asdict

    counts = report.counts
    events = pd.DataFrame([asdict(e) for e in report.events], columns=["file", "action", "count", "why"])
    checks = pd.DataFrame([asdict(c) for c in report.checks], columns=["file", "action", "count", "why"])
    mismatches = int((checks["action"] != "ok").sum())
    title = (f"Import report: {int(counts['ratings'].sum()) if len(counts) else 0} ratings of "
             f"{sum(i['items'] for i in report.items.values())} outputs · what was dropped, merged, ignored or "
             f"changed, and why · {len(checks)} cross-checks, {mismatches} mismatch(es)")
    with st.expander(title, expanded=False):
        runs = f" · repeated LLM runs: **{report.run_policy}** of the runs" if report.run_policy else ""
        st.caption(f"From {code(report.directory)}{runs} · seeker self-ratings "
                   f"{'imported' if report.include_seeker else 'not imported'}. Every quirk of the files and how it "
                   "is handled is described in the importer's document (`docs/`).")
        items = pd.DataFrame([{"corpus": corpus, **info} for corpus, info in report.items.items()])
        left, right = st.columns([2, 3])
        with left:
            st.markdown("**Outputs per corpus** (a corpus is a *model* and a *task* here)")
            st.dataframe(items, hide_index=True, key="data_kumar_items")
        with right:
            if len(counts):
                st.markdown("**Ratings per rater** (missing = empty or out-of-scale cells, never 0)")
                per_rater = counts.groupby("rater", sort=False)[["ratings", "missing"]].sum().reset_index()
                st.dataframe(per_rater, hide_index=True, key="data_kumar_raters")
        st.markdown("**Dropped, merged, ignored or changed** (the count is of rows, cells or columns, as the "
                    "reason says)")
        st.markdown("\n".join(_event_lines(events)))
        st.markdown(f"**Cross-checks against the other files of the data set** ({len(checks) - mismatches} of "
                    f"{len(checks)} agree)")
        st.markdown("\n".join(_event_lines(checks)))
        st.markdown("**Rows read per file**")
        files = pd.DataFrame([asdict(f) for f in report.files])
        if len(files):
            files["index_columns_dropped"] = files["index_columns_dropped"].map(", ".join)
            files["extra_columns"] = files["extra_columns"].map(", ".join)
        st.dataframe(files, hide_index=True, key="data_kumar_files")
        st.download_button("Download the report (JSON)", json.dumps(report.to_dict(), indent=2).encode(),
                           file_name="kumar2025-import-report.json", mime="application/json",
                           key="data_kumar_report_json")
