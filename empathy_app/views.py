"""Reusable Streamlit views of the app; pages stay thin.

The pages' table (:data:`PAGES`), their headings and favicon (read by the frame in ``app.py``), the Home page, the
data set's summary, charts, value widgets, the flash error, the key help and a table selection that drives a
selectbox (:func:`follow_table_selection`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import streamlit as st

from empathy import metrics as m
from empathy.exhibits import CONFLICT_TASK
from empathy.io import BINARY_DIMENSIONS, DIMENSION_RANGES
from empathy.mechanisms import MechanismMarks, marks_legend_html, side_html, summary_html
from empathy.paths import PROJECT_ROOT
from empathy.render import conversation_html, conversation_turns, legend_html
from empathy.vocabulary import DIRECTIONS
from empathy_app import compute, loading, overrides, session_keys
from empathy_app.loading import Loaded
from empathy_app.markup import code, codes, html, md, plot_frame

if TYPE_CHECKING:  # Plotly Express is imported by the charts that draw (50 ms a process): not by every first run
    import plotly.graph_objects as go

# The icons are for the Home page's links (drawn with the Material font Streamlit serves itself). They are not
# given to st.Page: Streamlit's browser code turns the current page's icon into the favicon and fetches a
# Material icon's image from fonts.gstatic.com for that, which fails offline (emoji need an emoji font).
PAGES: tuple[tuple[str, str, str, str], ...] = (
    ("app_pages/1_Data.py", "Data", "Demo data, an upload or a path; validation; the overrides ledger.",
     ":material/database:"),
    ("app_pages/2_Overview.py", "Overview", "SA, EGM, CA and LD per model under each judge; rankings; signature.",
     ":material/leaderboard:"),
    ("app_pages/3_Inspect.py", "Inspect", "One output next to its reference, distancing highlighted; override labels.",
     ":material/search:"),
    ("app_pages/4_Relabel.py", "Relabel", "A queue of judge disagreements, one keystroke per decision.",
     ":material/edit_note:"),
    ("app_pages/5_Agreement.py", "Agreement", "Inter-judge Spearman (Table 6), human vs judges, ranking moves.",
     ":material/handshake:"),
    ("app_pages/6_Workbench.py", "Workbench", "Rater pairs with intervals, expert/LLM panels, Table 7-style stability.",
     ":material/science:"),
    ("app_pages/7_Judge.py", "Judge", "Run a judge (offline lexicon or a configured LLM) and add it as a rater.",
     ":material/gavel:"),
    ("app_pages/8_Items.py", "Items", "Every output's Eq. 1-4 terms, worst first; search, filters, side by side.",
     ":material/table_rows:"),
    ("app_pages/9_Disagreement.py", "Disagreement", "Where judges and humans disagree, by mechanism; calibration "
     "per model.", ":material/troubleshoot:"),

    ("app_pages/10_Exhibits.py", "Exhibits", "Pinned outputs with notes, a presentation mode, offline HTML; ranking "
     "fragility.", ":material/slideshow:"),
    ("app_pages/11_Judge_report.py", "Judge report", "May a judge replace the annotators? The Alt-Test per "
     "dimension, the judge's checks and one verdict line.", ":material/verified:"),
)
#: "How to read this" under the Overview's and Agreement's tables (static text, no data); the note under each
#: metric's chart is its registry entry's ``how_to_read`` (:class:`empathy.metrics.MetricSpec`).
HOW_TO_READ = {
    "metrics": "**How to read this.** Each cell is the mean of one model's per-output terms under one judge (the "
               "**Items** page lists the terms). A **negative SA** is not an error: Eq. 1 ranges over (-inf, 1] "
               "and SA < 0 means that judge finds the generations *more* intense than their references "
               "(over-dramatised), SA > 0 that it finds them flattened; judges can disagree on the sign, so "
               "compare the columns and the **Agreement** page. EGM counts a mismatch of disturbing detail in "
               "either direction. None = no output had a computable term.",
    "rankings": "**How to read this.** 1 = the best value in the metric's direction, for the paper's four metrics "
                "the least failure, within one column (metric and judge); tied values share the smaller rank. "
                "**LD ranks the "
                "pattern of distancing, not the number of highlights**: Eq. 4 standardises each side on its "
                "own, so a model whose texts are distanced everywhere alike can rank well although its texts are "
                "full of highlights. Choose the reference standardisation above to rank that level shift too.",
    "table6": "**How to read this.** Spearman's rho compares two judges' *rankings* of the models on a metric: "
              "1 = same order, even if one judge's values are all lower (or negative); -1 = reversed. With five "
              "models rho moves in steps of 0.1 (one swapped neighbouring pair gives 0.9). It is blank when a "
              "judge gives every model the same value.",
    "alpha": "**How to read this.** Krippendorff's alpha compares the raters output by output: 1 = they agree, "
             "0 = no better than chance, **below 0 = they disagree more than chance would**, systematically: "
             "for example one judge scores every text far lower than the other (interval alpha counts an offset "
             "as disagreement) or they react to different features. A negative alpha beside a high Table-6 rho "
             "means the judges order the models alike but score single texts differently.",
}
DIMENSION_HELP = {
    "e_ref": "affect intensity of the reference (0-1)", "e_gen": "affect intensity of the generation (0-1)",
    "u_ref": "disturbing-content count of the reference", "u_gen": "disturbing-content count of the generation",
    "ca": "conflict avoidance label (1 = avoids, 0 = engages)",
}


def summary(data: Loaded, *, full: bool = False) -> None:
    """The counts a researcher checks first (:meth:`empathy.io.Dataset.summary`).

    ``full``: of the whole data set, not only the task chosen in the sidebar.
    """
    dataset = data.all_data if full else data.dataset
    info = dataset.summary()
    if data.filtered and not full:
        st.caption(f"Task **{md(loading.task_label(data.task))}** only (sidebar): {len(dataset.outputs)} of "
                   f"{len(data.all_data.outputs)} outputs.")
    columns = st.columns(5)
    columns[0].metric("Items", info["items"])
    columns[1].metric("Models", len(info["models"]))
    columns[2].metric("Raters", len(info["raters"]))
    columns[3].metric("Ratings", info["ratings"])
    columns[4].metric("Missing ratings", info["missing_ratings"])
    st.markdown(
        "\n".join([
            f"- **Tasks:** {codes(info['tasks']) or '(none given)'}",
            f"- **Models:** {codes(info['models'])}",
            f"- **Raters:** {codes(info['raters']) or '(none)'}",
            f"- **Dimensions:** {codes(info['dimensions']) or '(none)'}",
            f"- **Outputs:** {info['outputs']} · **Sources:** {codes(_short(dataset.sources))}",
        ]))


def download_later(place: object, label: str, make: Callable[[], bytes], **options: object) -> None:
    """A download button in ``place`` whose file ``make`` writes when it is pressed (a Streamlit that takes a
    callable), not on every run of the page; a Streamlit too old for that (it refuses the callable) gets the bytes
    now. ``options`` go to ``download_button``.

    Pressing it does not rerun the page (``on_click="ignore"``): the file is written on a thread of its own while
    the rerun a press would start replaces the button, and the browser's download was then cancelled at times."""
    options = {"on_click": "ignore", **options}
    try:
        place.download_button(label, make, **options)  # type: ignore[attr-defined]
    except st.errors.StreamlitAPIException:
        place.download_button(label, make(), **options)  # type: ignore[attr-defined]


#: The rows of a table the Data page sends to the browser (the first ones; the count says how many there are).
PREVIEW_ROWS = 1000


#: The outputs a picker lists around the open one. A selectbox's options go to the browser on every run of its page
#: (and Streamlit formats and indexes each): Inspect's 200,000 labels were 4.0 MB a click and 7 s in Chromium
#: before the next output showed (`docs/benchmarks.md`). The others are a step, a number (the caller's "go to")
#: or a filter away.
PICKER_WINDOW = 1000


def picker_window(labels: Sequence[str], position: int, size: int | None = None) -> tuple[int, Sequence[str]]:
    """Where a picker's options start and the options: every label when there are at most ``size`` (default
    :data:`PICKER_WINDOW`), else the ``size`` consecutive labels around ``position`` (the open one), kept within
    the list at its ends.

    Raises ``ValueError`` for a position outside the labels or a size below 1."""
    size = PICKER_WINDOW if size is None else size
    if size < 1:
        raise ValueError(f"a picker's window must list at least one label, got size {size}")
    if not 0 <= position < len(labels):
        raise ValueError(f"position {position} is outside the {len(labels)} labels")
    if len(labels) <= size:
        return 0, labels
    start = min(max(position - size // 2, 0), len(labels) - size)
    return start, labels[start:start + size]


def table_preview(table: pd.DataFrame, *, key: str, rows: int | None = None) -> None:
    """The first ``rows`` rows of ``table`` (default :data:`PREVIEW_ROWS`; all when fewer), saying how many it has:
    a table is sent to the browser on every run of its page, shown or not, so a whole ratings table of millions of
    rows cost seconds per run and hundreds of MiB."""
    rows = PREVIEW_ROWS if rows is None else rows
    if len(table) > rows:
        st.caption(f"The first {rows:,} of {len(table):,} rows.")
    st.dataframe(table.head(rows), hide_index=True, key=key)


def _short(paths: list[str]) -> list[str]:
    """Paths inside the project shown relative to it (``data/outputs.csv``), others unchanged."""
    shown = []
    for path in paths:
        try:
            shown.append(str(Path(path).resolve().relative_to(PROJECT_ROOT)))
        except (ValueError, OSError):
            shown.append(path)
    return shown


def _number(value: float, digits: int = 2) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def _count(value: float) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:g}"


def _side_scores(scores: pd.DataFrame, side: str, underlined: dict[str, int]) -> str:
    """One Markdown line of a side's affect (SA's input) and disturbing counts (EGM's input) per judge."""
    e, u, n = ("e_ref", "u_ref", "d") if side == "ref" else ("e_gen", "u_gen", "q")
    parts = []
    rated_e = scores[scores[e].notna()]
    if len(rated_e):
        parts.append(f"**{e}** (affect) " + " · ".join(f"{md(r.judge)} {_number(getattr(r, e))}"
                                                     for r in rated_e.itertuples()))
    rated_u = scores[scores[u].notna()]
    if len(rated_u):
        parts.append(f"**{u}** (disturbing) " + " · ".join(f"{md(r.judge)} {_count(getattr(r, u))}"
                                                          for r in rated_u.itertuples()))
    if len(scores):
        parts.append(f"{n} = {_count(scores[n].iloc[0])} sentences")
    total = sum(underlined.values())
    parts.append(f"underlined {total}" + (" (" + ", ".join(f"{k} {v}" for k, v in underlined.items()) + ")"
                                          if total else ""))
    return " · ".join(parts)


def output_marks(data: Loaded | None, texts: tuple[str, str], *, conflict: bool
                 ) -> tuple[MechanismMarks, compute.JudgedMarks]:
    """The marks of the four mechanisms on a pair (:func:`empathy_app.compute.marks_for`), with the LLM judges'
    own marks from their answer cache when ``data`` is given (:func:`empathy_app.compute.judged_for`)."""
    judged = compute.judged_for(data, texts) if data is not None else compute.JudgedMarks()
    return compute.marks_for(texts, conflict, judged.spans), judged


def blind_marks(texts: tuple[str, str]) -> MechanismMarks:
    """The LD marks only (:func:`empathy_app.compute.spans_for`), through the same renderer: what blind
    relabelling shows, since the lexicon judge's SA, EGM and CA marks carry its labels."""
    from empathy.mechanisms import mechanism_marks

    return mechanism_marks(texts[0], texts[1], distancing=compute.spans_for(texts), sentence_spans=((), ()),
                           conflict=False)


def conflict_shown(data: Loaded, item_id: str, model: str, task: object) -> bool:
    """Whether an output's texts get the CA marks: a counseling output or one a rater labelled ``ca``, as an
    exhibit does (:data:`empathy.exhibits.CONFLICT_TASK`)."""
    return str(task or "") == CONFLICT_TASK or (str(item_id), str(model)) in compute.output_facts(data).ca_rated


def draw_mechanisms(marks: MechanismMarks, *, key: str, judged: compute.JudgedMarks | None = None,
                    titles: tuple[str, str] = ("Reference", "Generation"), llm_judges: Sequence[str] = (),
                    captions: tuple[str, str] = ("", ""), height: int | None = None, blind: bool = False) -> None:
    """The two texts with the marks of all four mechanisms, from the one renderer: the legend
    (:func:`empathy.mechanisms.marks_legend_html`), each side (:func:`empathy.mechanisms.side_html`) in a bordered
    box keyed ``{key}_ref_text`` / ``{key}_gen_text`` under its title and caption, and under both the summary
    (:func:`empathy.mechanisms.summary_html`: each side's E, what the generation lost, the CA cues' sum, and that
    the SA and CA marks are the lexicon's when ``llm_judges`` are shown). ``judged``: the LLM judges' own marks,
    named in a caption each. ``blind``: ``marks`` are :func:`blind_marks` (LD only), said so, no summary."""
    if blind:
        st.markdown(legend_html(), unsafe_allow_html=True)
        st.caption("Blind: only the distancing (LD) marks; the lexicon judge's SA, EGM and CA marks carry its labels "
                   "and are hidden.")
    else:
        st.markdown(marks_legend_html(marks), unsafe_allow_html=True)
    if judged is not None and judged.counted:
        st.caption(f"Dotted: sentences in which {', '.join(code(j) for j in judged.counted)} counted disturbing "
                   "content (from the judge answer cache; hover for the count).")
    for judge, quote in judged.quoted if judged is not None else ():
        st.caption(f"Boxed: the passage {code(judge)} quoted as the evidence of its CA label (from the judge answer "
                   f"cache): “{md(quote)}”")
    columns = st.columns(2)
    for column, title, side_name, side, caption in zip(columns, titles, ("ref", "gen"),
                                                       (marks.reference, marks.generation), captions, strict=True):
        with column:
            st.markdown(f"**{md(title)}**")
            if caption:
                st.caption(caption)
            with st.container(border=True, key=f"{key}_{side_name}_text", height=height or "content"):
                st.markdown(side_html(side), unsafe_allow_html=True)
    if not blind:
        st.markdown(summary_html(marks, llm_judges=llm_judges), unsafe_allow_html=True)


def side_by_side(texts: tuple[str, str], *, key: str, scores: pd.DataFrame | None = None,
                 notes: list[tuple[str, str]] | tuple = (), data: Loaded | None = None, conflict: bool = False,
                 llm_judges: Sequence[str] = (), titles: tuple[str, str] = ("Reference", "Generation"),
                 height: int | None = None, blind: bool = False) -> None:
    """Reference and generation side by side, showing the four mechanisms in the text (:func:`draw_mechanisms`).

    LD as coloured backgrounds, EGM's disturbing content as red underlines, SA's affect words with a top border
    as strong as the word, and (``conflict``: a counseling output or one labelled ``ca``, :func:`conflict_shown`)
    the CA cues on the response and the client's tension on the narrative, each with its rule in a tooltip; above
    each side its affect intensity (SA's input) and disturbing count (EGM's input) per judge; under both the
    lexicon's E of each side, what the generation lost and the CA cues' sum, then the output's SA and EGM terms
    and CA label per judge (``scores``, :func:`empathy.mechanisms.output_scores`). ``notes``: the row's
    ``demo_note`` and ``source`` (:func:`empathy.mechanisms.note_fields`). ``data``: the loaded data set, whose
    LLM judges' cached answers mark the sentences they counted disturbing content in and the passage they quoted
    for CA (:func:`empathy_app.compute.judged_for`). ``llm_judges``: the LLM judges shown beside the text (the
    summary says the SA and CA marks are the lexicon's, not theirs). ``titles`` and ``height`` (of each text's box,
    scrolling) as for :func:`draw_mechanisms`; ``blind``: the LD marks only (:func:`blind_marks`), no judge's
    number. Widgets are keyed ``{key}_...``.
    """
    from empathy.mechanisms import category_counts

    for column, text in notes:
        st.caption(f"**{md(column)}**: {md(text)}")
    if blind:
        draw_mechanisms(blind_marks(texts), key=key, titles=titles, height=height, blind=True)
        return
    marks, judged = output_marks(data, texts, conflict=conflict)
    shown = scores if scores is not None else pd.DataFrame(columns=["judge", "e_ref", "e_gen", "u_ref", "u_gen", "d",
                                                                     "q"])
    captions = tuple(_side_scores(shown, name, category_counts(side.disturbing))
                     for name, side in (("ref", marks.reference), ("gen", marks.generation)))
    draw_mechanisms(marks, key=key, judged=judged, titles=titles, llm_judges=llm_judges, captions=captions,
                    height=height)
    if scores is not None and len(scores):
        st.markdown("**This output under each judge**: SA = (e_ref - e_gen) / e_ref (Eq. 1; < 0: the generation "
                    "is more intense); EGM = |a - b| / (a + b) with a = u_ref / d, b = u_gen / q (Eq. 2); CA = the "
                    "judge's label (Eq. 3). Hover a column name for more.")
        # a dimension no judge gave for this output (ca of a news item) would be a column of None
        scores = scores.drop(columns=[c for c in ("ca",) if scores[c].isna().all()])
        config = {
            "e_ref": st.column_config.NumberColumn(format="%.2f", help=DIMENSION_HELP["e_ref"]),
            "e_gen": st.column_config.NumberColumn(format="%.2f", help=DIMENSION_HELP["e_gen"]),
            "u_ref": st.column_config.NumberColumn(help=DIMENSION_HELP["u_ref"]),
            "u_gen": st.column_config.NumberColumn(help=DIMENSION_HELP["u_gen"]),
            "d": st.column_config.NumberColumn(help="sentences of the reference"),
            "q": st.column_config.NumberColumn(help="sentences of the generation"),
            "ca": st.column_config.NumberColumn(help=DIMENSION_HELP["ca"])}
        config.update({name: st.column_config.NumberColumn(format="%.3f", help=spec.description)
                       for name, spec in m.METRIC_SPECS.items() if name in scores.columns})
        st.dataframe(scores, hide_index=True, key=f"{key}_scores", column_config=config)


def output_side_by_side(data: Loaded, row: pd.Series, *, key: str, scores: pd.DataFrame | None = None,
                        notes: list[tuple[str, str]] | tuple = (), **layout: object) -> None:
    """:func:`side_by_side` of one output row (``item_id``, ``model``, ``task``, ``reference``, ``generation``): the
    CA marks where :func:`conflict_shown`, and the note that SA and CA marks are the lexicon's beside the output's
    LLM judges (:func:`empathy_app.compute.llm_judges_of`). ``layout``: ``titles``, ``height``, ``blind``."""
    item_id, model = str(row["item_id"]), str(row["model"])
    side_by_side((str(row["reference"]), str(row["generation"])), key=key, scores=scores, notes=notes, data=data,
                 conflict=conflict_shown(data, item_id, model, row.get("task")),
                 llm_judges=compute.llm_judges_of(data, item_id, model), **layout)


def and_list(names: Sequence[str], conjunction: str = "and") -> str:
    """``"SA, EGM and CA"``: names joined for a sentence (``conjunction="or"``: ``"SA, EGM or CA"``)."""
    names = list(names)
    return f"{', '.join(names[:-1])} {conjunction} {names[-1]}" if len(names) > 1 else "".join(names)


def metric_help(name: str) -> str:
    """The registry's one line on metric ``name`` (:attr:`empathy.metrics.MetricSpec.description`), ``""`` when
    ``name`` is not a registered metric (a column of another kind)."""
    spec = m.METRIC_SPECS.get(name)
    return spec.description if spec is not None else ""


def metrics_legend() -> str:
    """One line naming every registered metric with its help, and which direction is better for which."""
    names = {direction: [name for name, spec in m.METRIC_SPECS.items() if spec.better == direction]
             for direction in DIRECTIONS}
    directions = "; ".join(f"{direction.capitalize()} is better for {and_list(chosen)}"
                           for direction, chosen in names.items() if chosen)
    return " · ".join(f"**{name}**: {spec.description}" for name, spec in m.METRIC_SPECS.items()) + f". {directions}."


def rank_heading(metric: str) -> str:
    """How a ranking of ``metric`` reads under the one rank convention: ``"1 = lowest SA, the least failure"``."""
    spec = m.get_metric(metric)
    return f"1 = {'lowest' if spec.lower_is_better else 'highest'} {metric}" + (
        ", the least failure" if spec.lower_is_better else "")


def signature_caption(signature: object) -> None:
    """The reproducibility signature under a table (every table the app shows carries one, like Overview's)."""
    st.caption(f"Signature: {code(str(signature))}")


def _flagged(frame: pd.DataFrame, names: Sequence[str], most: int | None = None) -> tuple[pd.DataFrame, list[str]]:
    """The rows of ``frame`` with a ``warning`` (a non-empty string) and a Markdown bullet for each of the first
    ``most``: the row named by its ``names`` columns that it has, then its warning."""
    if "warning" not in frame.columns:
        return frame.iloc[0:0], []
    flagged = frame[frame["warning"].map(lambda w: isinstance(w, str) and bool(w))]
    shown = flagged if most is None else flagged.head(most)
    return flagged, [f"- {' / '.join(code(row[n]) for n in names if n in row and str(row[n]))}: {md(row['warning'])}"
                     for _, row in shown.iterrows()]


def interval_warnings(frame: pd.DataFrame, names: list[str], *, most: int = 8) -> None:
    """One warning box for the rows of ``frame`` whose ``warning`` column flags a bootstrap interval (zero width,
    or fewer than 10 items: :func:`empathy.agreement.interval_warning`) or a corrected one
    (:mod:`empathy.small_sample`), each row named by its ``names``."""
    flagged, lines = _flagged(frame, names, most)
    if flagged.empty:
        return
    more = f"\n\n... and {len(flagged) - most} more rows (see the `warning` column)." if len(flagged) > most else ""
    st.warning(f"**{len(flagged)} interval row{'s' if len(flagged) != 1 else ''} to read with care.** A bootstrap "
               "interval over a handful of items, of zero width, on terms too skewed for their number or of a share "
               "with few events does not show the uncertainty at its level; a corrected interval (after "
               "`corrected:`) says the same of its audit:\n\n" + "\n".join(lines) + more)


def plural(count: int, noun: str) -> str:
    """``"1 human decision"``, ``"2 human decisions"``."""
    return f"{count} {noun}" + ("" if count == 1 else "s")


def human_decisions(data: Loaded) -> tuple[int, int]:
    """The human decisions that apply to the shown outputs and the judge labels they replace: ``(decisions,
    labels)`` (:func:`empathy.labels.decisions.decision_count` of :func:`empathy_app.overrides.applied`: a decision
    applied to two judges is one decision, two labels)."""
    from empathy.labels.decisions import decision_count

    ledger = overrides.ledger(data)
    table = overrides.applied(data)
    # the ledger's own table (no task filter, every rater present): its count is computed once per ledger
    return (ledger.applied_decisions if table is ledger.applied else decision_count(table)), len(table)


def agreement_warnings(agreement: pd.DataFrame, names: Sequence[str] = ("metric", "task")) -> None:
    """One warning box for the agreement rows whose two raters carry the same human label somewhere (their
    ``warning``, :func:`empathy.review.agreement_labels` or :func:`empathy.labels.decisions.pair_decisions`), each
    row named by its ``names`` columns that it has: there, their agreement is a human's, not theirs."""
    flagged, lines = _flagged(agreement, names)
    if flagged.empty:
        return
    st.warning(f"**{plural(len(flagged), 'agreement row')} rest partly on human labels.** Where one human decision "
               "gave both raters of a pair the same label (an *(all judges)* decision does), their agreement is the "
               "human's; turn *Include human overrides* off in the sidebar for the raters' own:\n\n"
               + "\n".join(lines))


def mode_caption(data: Loaded) -> None:
    """One line: the task shown and whether the human decisions are included (both set in the sidebar)."""
    decisions, labels = human_decisions(data)
    scope = (f"Task **{md(loading.task_label(data.task))}** ({len(data.dataset.outputs)} of "
             f"{len(data.all_data.outputs)} outputs) · " if data.filtered else "")
    if compute.by_task(data):
        scope += "Computed **per task** (as in the paper; pool them in the sidebar) · "
    elif compute.pooled(data):
        scope += "**Tasks pooled** (one value per model over all tasks; signature tasks:pooled) · "
    if st.session_state[session_keys.WITH_OVERRIDES]:
        st.caption(f"{scope}Showing judge labels **with {plural(decisions, 'human decision')}** applied "
                   f"({plural(labels, 'judge label')} replaced; toggle in the sidebar).")
    else:
        st.caption(f"{scope}Showing **judge-only** numbers; {plural(decisions, 'human decision')} "
                   f"{'is' if decisions == 1 else 'are'} ignored (toggle in the sidebar).")


def labels_used(data: Loaded) -> str:
    """Which labels the numbers beside it rest on, under the sidebar's *Include human overrides* switch (Markdown,
    static apart from counts): the judges' own, or the judges' with N human decisions (and the label rule)."""
    decisions, labels = human_decisions(data)
    if not st.session_state[session_keys.WITH_OVERRIDES]:
        ignored = f"; {plural(decisions, 'human decision')} not counted" if decisions else ""
        return f"Labels: **the judges' own** (the sidebar's *Include human overrides* is off{ignored})."
    if not decisions:
        return "Labels: **the judges' own** (no human decision applies; *Include human overrides* is on)."
    return (f"Labels: **the judges' with {plural(decisions, 'human decision')}** ({plural(labels, 'judge label')} "
            f"replaced, {md(overrides.label_rule())} rule; the sidebar's *Include human overrides*).")


# Figures are cached on the (small) results table: the table only changes with the data or an override. Shared,
# not copied: never modified. They are drawn with Plotly's figure objects from plain dictionaries: Plotly Express
# cost 0.15-0.3 s a chart (its data-frame machinery and a validated update per trace), which was a quarter of
# Overview's first visit at 200,000 outputs and part of every rerun after a decision.
_FACET_GAP = 0.03  # the horizontal space between two task panels, as a share of the figure's width


@st.cache_resource(show_spinner=False, max_entries=64)
def metric_bars(table: pd.DataFrame, metric: str) -> go.Figure:
    """Bar chart of one metric by model, one bar per judge (scorer), one panel per task when there are several
    (values of different tasks are not comparable); with ``ci_low``/``ci_high`` columns (the rows' intervals), each
    bar has its error bar. A judge keeps its colour across panels; the hover shows judge, model, value, ``n`` and
    ``n_missing``. Every name from the data is HTML-escaped (Plotly draws labels as HTML)."""
    import plotly.graph_objects as go
    from plotly.colors import qualitative

    part = plot_frame(table[table["metric"] == metric].dropna(subset=["value"]), ["model", "scorer", "task"])
    tasks: list[str | None] = list(dict.fromkeys(part["task"])) if part["task"].nunique() > 1 else [None]
    with_errors = {"ci_low", "ci_high"} <= set(part.columns) and bool(part["ci_low"].notna().any())
    scorers = list(dict.fromkeys(part["scorer"]))
    colours = qualitative.Plotly
    label = html(metric)
    width = (1 - _FACET_GAP * (len(tasks) - 1)) / len(tasks)
    traces: list[dict[str, object]] = []
    in_legend: set[str] = set()  # a judge's bars of every panel share one legend entry
    layout: dict[str, object] = {
        "title": {"text": f"{label} by model and judge"}, "barmode": "group", "height": 340,
        "margin": {"t": 50, "b": 10, "l": 10, "r": 10}, "legend": {"title": {"text": "judge"}}, "annotations": []}
    for column, task in enumerate(tasks):
        suffix = str(column + 1) if column else ""
        shown = part if task is None else part[part["task"] == task]
        for number, scorer in enumerate(scorers):
            rows = shown[shown["scorer"] == scorer]
            if rows.empty:
                continue
            bar: dict[str, object] = {
                "type": "bar", "name": scorer, "legendgroup": scorer, "showlegend": scorer not in in_legend,
                "x": rows["model"].tolist(), "y": rows["value"].astype(float).tolist(),
                "marker": {"color": colours[number % len(colours)]}, "xaxis": f"x{suffix}", "yaxis": f"y{suffix}",
                # a missing count is JSON's null, not pandas' NA (which the figure's encoder cannot write)
                "customdata": [[None if pd.isna(v) else v for v in pair]
                               for pair in zip(rows["n"].tolist(), rows["n_missing"].tolist(), strict=True)],
                "hovertemplate": (f"judge={scorer.replace('%', '&#37;')}<br>model=%{{x}}<br>"
                                  f"{label.replace('%', '&#37;')}=%{{y}}<br>n=%{{customdata[0]}}<br>"
                                  "n_missing=%{customdata[1]}<extra></extra>")}
            if with_errors:
                above = (rows["ci_high"] - rows["value"]).clip(lower=0).astype(float)
                below = (rows["value"] - rows["ci_low"]).clip(lower=0).astype(float)
                bar["error_y"] = {"type": "data", "array": above.tolist(), "arrayminus": below.tolist()}
            traces.append(bar)
            in_legend.add(scorer)
        start = column * (width + _FACET_GAP)
        layout[f"xaxis{suffix}"] = {"domain": [start, start + width], "anchor": f"y{suffix}",
                                    "title": {"text": "model"}}
        layout[f"yaxis{suffix}"] = ({"anchor": "x", "title": {"text": label}} if not column else
                                    {"anchor": f"x{suffix}", "matches": "y", "showticklabels": False})
        if task is not None:
            layout["annotations"].append(  # type: ignore[union-attr]
                {"text": f"task={task}", "x": start + width / 2, "y": 1.0, "xref": "paper", "yref": "paper",
                 "xanchor": "center", "yanchor": "bottom", "showarrow": False})
    return go.Figure({"data": traces, "layout": layout})


@st.cache_resource(show_spinner=False, max_entries=64)
def spearman_heatmap(agreement: pd.DataFrame, metric: str) -> go.Figure | None:
    """Symmetric inter-judge Spearman matrix of one metric (diagonal 1), or ``None`` with fewer than 2 judges: the
    first judge's row at the top, each cell's value written in it, the colour scale fixed at -1..1."""
    import plotly.graph_objects as go

    part = agreement[agreement["metric"] == metric]
    judges = sorted(set(part["scorer_a"]) | set(part["scorer_b"]))
    if len(judges) < 2:
        return None
    labels = [html(j) for j in judges]  # Plotly draws axis labels as HTML
    position = {judge: k for k, judge in enumerate(judges)}
    matrix = np.eye(len(judges))
    for record in part.to_dict("records"):
        value = record["spearman"]
        value = np.nan if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)
        a, b = position[record["scorer_a"]], position[record["scorer_b"]]
        matrix[a, b] = matrix[b, a] = value
    cells = [[None if math.isnan(v) else v for v in row] for row in matrix.tolist()]
    heat = {"type": "heatmap", "z": cells, "x": labels, "y": labels, "zmin": -1, "zmax": 1, "colorscale": "RdBu",
            "texttemplate": "%{z:.3f}", "hovertemplate": "%{y} · %{x}: %{z:.3f}<extra></extra>"}
    layout = {"title": {"text": f"{html(metric)}: Spearman between judges"}, "height": 320,
              "margin": {"t": 50, "b": 10, "l": 10, "r": 10}, "yaxis": {"autorange": "reversed"},
              "xaxis": {"side": "bottom"}}
    return go.Figure({"data": [heat], "layout": layout})


def dimension_label(dimension: str) -> str:
    """A dimension with its meaning when the app knows it (``ca - conflict avoidance ...``), else its name."""
    meaning = DIMENSION_HELP.get(dimension)
    return f"{dimension} - {meaning}" if meaning else dimension


_SCALE = re.compile(r"^\s*(-?\d+)\s*-\s*(-?\d+)\s*$")


def rating_scale(data: Loaded, dimension: str) -> tuple[int, int] | None:
    """The whole-number scale of a dimension, or ``None`` when it is open or unknown.

    Binary labels are (0, 1). Otherwise the outputs may declare it in a ``scale`` column (``"0-2"``, ``"1-5"``:
    the Kumar et al. 2025 import does, per corpus); it is used when every output rated on ``dimension`` declares
    the same one and it has at most 11 levels.
    """
    if dimension in BINARY_DIMENSIONS:
        return (0, 1)
    if dimension in DIMENSION_RANGES:
        return None
    outputs, ratings = data.all_data.outputs, data.all_data.ratings
    if "scale" not in outputs.columns:
        return None
    rated = ratings.loc[ratings["dimension"] == dimension, ["item_id", "model"]].drop_duplicates()
    declared = rated.merge(outputs[["item_id", "model", "scale"]], on=["item_id", "model"], how="left")["scale"]
    values = set(declared.fillna("").astype(str))
    if len(values) != 1:
        return None
    match = _SCALE.match(values.pop())
    if match is None:
        return None
    low, high = int(match.group(1)), int(match.group(2))
    return (low, high) if low < high and high - low <= 10 else None


def value_widget(dimension: str, key: str, current: float | None = None,
                 scale: tuple[int, int] | None = None) -> float:
    """An input suited to the dimension: 0/1 radio for binary labels, a bounded number otherwise.

    ``scale`` (from :func:`rating_scale`): a whole-number scale, offered as a radio of its levels.
    """
    if dimension in BINARY_DIMENSIONS or scale is not None:
        low, high = scale if scale is not None else (0, 1)
        options = [float(v) for v in range(low, high + 1)]
        nearest = min(options, key=lambda v: abs(v - current)) if current is not None and not math.isnan(current) \
            else options[0]
        return float(st.radio(f"New value of {md(dimension)}", options, index=options.index(nearest), horizontal=True,
                              key=key, format_func=lambda v: f"{v:g}"))
    low, high = DIMENSION_RANGES.get(dimension, (-math.inf, math.inf))
    default = current if current is not None and not math.isnan(current) else max(low, 0.0) if low > -math.inf else 0.0
    step = 0.05 if high == 1.0 else 1.0
    return float(st.number_input(f"New value of {md(dimension)}", min_value=None if math.isinf(low) else float(low),
                                 max_value=None if math.isinf(high) else float(high), value=float(default),
                                 step=step, key=key))


def has_text(row: pd.Series) -> bool:
    """Whether an output row has a reference or a generation to show (Perceived Empathy rows have neither)."""
    return bool(str(row.get("reference", "")).strip() or str(row.get("generation", "")).strip())


def has_texts(outputs: pd.DataFrame) -> pd.Series:
    """:func:`has_text` of every row of an outputs table, vectorised."""
    def filled(column: str) -> pd.Series:
        if column not in outputs.columns:
            return pd.Series(False, index=outputs.index)
        return outputs[column].fillna("").astype(str).str.strip() != ""
    return filled("reference") | filled("generation")


def no_text_note(row: pd.Series, advice: str = "") -> None:
    """Say that an output has no text, instead of drawing two empty boxes."""
    corpus = row.get("corpus") or row.get("model")
    st.info(f"This output has no text: the conversations of {code(corpus)} are not public, only their ratings "
            f"are in the data set.{' ' + advice if advice else ''}")


def conversation(row: pd.Series, key: str) -> None:
    """The whole conversation of a multi-turn output, turn by turn, when the outputs carry it.

    Rendered by :func:`empathy.render.conversation_html`: the turns are data, so no Markdown link, image,
    maths or directive in them forms (only the speaker names are bold).
    """
    text = str(row.get("conversation", "") or "")
    turns = conversation_turns(text)
    if len(turns) <= 2:
        return
    with st.expander(f"The whole conversation ({len(turns)} turns, in order)"):
        with st.container(height=360, key=key):
            st.markdown(conversation_html(text), unsafe_allow_html=True)


#: Static CSS (no data) that hides the sidebar and the control that reopens it (Presentation mode).
HIDE_SIDEBAR_CSS = ("<style>[data-testid='stSidebar'], [data-testid='stSidebarCollapsedControl'], "
                    "[data-testid='stExpandSidebarButton'] {display: none !important;}</style>")


def hide_sidebar() -> None:
    """Hide the sidebar on this run of the page (the next run without this call shows it again)."""
    st.html(HIDE_SIDEBAR_CSS)


def show_flash_error() -> None:
    """Show (once) the error a page's action left in the session for its next run."""
    message = st.session_state.pop(session_keys.FLASH_ERROR, None)
    if message:
        st.error(message)


def standard_scatter(data: Loaded, table: pd.DataFrame) -> go.Figure | None:
    """Standard metric (ROUGE-L, chrF, CIDEr-D, Sem-Sim) against an empathy metric, one point per model."""
    try:
        from empathy.standard import STANDARD_METRICS
    except ImportError:
        st.caption("Standard-metric scatter: appears once `empathy.standard` is available.")
        return None
    st.subheader("Standard metric vs empathy metric")
    st.caption("Each point is a model: a high standard score (overlap or similarity with the reference) with a "
               "high empathy-failure value is the pattern the paper reports. Sem-Sim here is the offline "
               "TF-IDF cosine unless an embedding endpoint is configured in the CLI.")
    choices = table.dropna(subset=["value"])[["metric", "scorer"]].drop_duplicates()
    options = [f"{r.metric} ({r.scorer})" for r in choices.itertuples()]
    if not options:
        return None
    # On demand only: they read every text pair (ROUGE-L is an LCS per pair), which at scale costs far more
    # than the rest of the page, and a visit to Overview must not pay it.
    done = st.session_state.setdefault(session_keys.STANDARD_COMPUTED, [])
    if data.content_key not in done:
        if not st.button("Compute the standard metrics", key="overview_std_compute",
                         help="ROUGE-L, chrF, CIDEr-D and Sem-Sim (offline TF-IDF) of every output against its "
                              "reference; computed once per data set and kept."):
            return None
        done.append(data.content_key)
    left, right = st.columns(2)
    standard_name = left.selectbox("Standard metric", list(STANDARD_METRICS), key="overview_std_metric")
    empathy_name = right.selectbox("Empathy metric", options, key="overview_std_empathy")
    with st.spinner("Computing ROUGE-L, chrF, CIDEr-D and Sem-Sim..."):
        standard = compute.standard_per_model(data)
    chosen = choices.iloc[options.index(empathy_name)]
    keys = ["task", "model"] if compute.by_task(data) else ["model"]  # per task: a point per (task, model)
    part = table[(table["metric"] == chosen["metric"]) & (table["scorer"] == chosen["scorer"])][[*keys, "value"]]
    merged = standard[[*keys, standard_name]].merge(part, on=keys, how="inner").dropna()
    if merged.empty:
        st.info("No model has both values.")
        return None
    label = html(empathy_name)  # holds a scorer name: Plotly draws titles and axis labels as HTML
    import plotly.express as px

    figure = px.scatter(plot_frame(merged, ["model"]), x=standard_name, y="value", text="model",
                        labels={"value": label, standard_name: standard_name},
                        title=f"{label} vs {standard_name} per model")
    figure.update_traces(textposition="top center", marker={"size": 12})
    figure.update_layout(height=420, margin={"t": 50, "b": 10, "l": 10, "r": 10})
    return figure


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


def import_report(report: object) -> None:
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


#: The heading (and browser tab title) of a page whose navigation title says less; other pages' heading is
#: their navigation title.
HEADINGS: dict[str, str] = {"Home": "Empathic failure in LLM outputs", "Workbench": "Agreement workbench"}
#: The favicon: an image served by the app itself (a ``:material/...:`` icon would make the browser fetch it
#: from fonts.gstatic.com, which fails offline; see :data:`PAGES`).
ICON = Path(__file__).resolve().parent / "icon.png"


def heading(title: str) -> str:
    """The heading drawn above a page (by the frame in ``app.py``) for its navigation title."""
    return HEADINGS.get(title, title)


def page_icon() -> str | Path:
    """The favicon: :data:`ICON`, or an emoji an installed copy without the image can still draw locally."""
    return ICON if ICON.is_file() else "🫶"


#: What the landing page says first (static).
HOME_INTRO = ("Measure the four mechanisms of empathic failure of *the empathy mechanisms paper* (Section 2.2): "
              "**Sentiment Attenuation** (SA), **Empathic Granularity Mismatch** (EGM), **Conflict Avoidance** (CA) "
              "and **Linguistic Distancing** (LD); compare the judges that produce them; correct their labels by "
              "hand. Every number on every page follows your overrides on the next rerun.")


def home_intro() -> None:
    """The landing page's first paint: what the app does and the links to the pages. Static, so the frame draws
    it before the data set is loaded (:func:`first_paint`): the main area is never blank while that runs."""
    st.markdown(HOME_INTRO)
    st.subheader("Pages")
    for path, label, text, icon in PAGES:
        st.page_link(path, label=f"**{label}** - {text}", icon=icon)


def home() -> None:
    """The landing page once the data set is loaded (its text and links are :func:`home_intro`): the data set's
    summary."""
    data = loading.current_data()
    st.subheader("The data set")
    if data is None:
        st.info("Choose a data set on the **Data** page.")
        st.stop()
    summary(data)


#: A page's first paint, by navigation title: static content the frame draws before anything slow (loading the
#: data set, the sidebar's counts), then the page runs as usual.
FIRST_PAINT = {"Home": home_intro}


def first_paint(title: str) -> None:
    """Draw the first paint of the page titled ``title`` (:data:`FIRST_PAINT`), if it has one."""
    paint = FIRST_PAINT.get(title)
    if paint is not None:
        paint()


def navigation(root: Path) -> list[tuple[str, str, str]]:
    """The app's pages after Home, as ``(script, title, url path)``: :data:`PAGES`, then every other
    ``app_pages/N_Name.py`` under ``root`` (sorted by file name) as ``/Name``.

    ``app.py`` builds ``st.navigation`` from this list and ``tests/test_browser_payload.py`` visits each entry,
    so a page added to ``app_pages/`` is served and checked without editing either.
    """
    pages = [(path, title, title.replace(" ", "_")) for path, title, *_ in PAGES]
    known = {path for path, *_ in PAGES}
    for extra in sorted((root / "app_pages").glob("[0-9]*_*.py")):
        if f"app_pages/{extra.name}" not in known:
            name = extra.stem.split("_", 1)[1]
            pages.append((f"app_pages/{extra.name}", name.replace("_", " "), name))
    return pages


#: The keys of each page that has them (the buttons' ``shortcut=`` on Inspect and Relabel), for the ``?`` help.
KEYS: dict[str, tuple[tuple[str, str], ...]] = {
    "inspect": (("← / →", "previous / next output of the filtered list"),),
    "relabel": (("0 / 1", "label a binary dimension (ca: 0 engages, 1 avoids the conflict) and go to the next"),
                ("0-9", "choose that level on a whole-number scale (e.g. 1-5) and go to the next"),
                ("Enter", "save the typed value of a continuous dimension (e_ref, u_gen, ...)"),
                ("S", "skip this output (it stays in the queue)"),
                ("U", "undo your last decision")),
}


@st.dialog("Keyboard keys", width="medium")
def _keys_dialog(page: str) -> None:
    rows = KEYS[page]
    st.markdown("| key | what it does |\n| --- | --- |\n" + "\n".join(f"| **{key}** | {text} |" for key, text in rows))
    st.caption("Keys act when the focus is not in a text field: after typing (the annotator name, a search, a "
               "reason) press **Tab** or click on the page first. **?** opens this help.")


def keys_help(page: str) -> None:
    """A small "Keys (?)" button that opens the page's key list in a dialog; typing ``?`` opens it too.

    ``page``: a key of :data:`KEYS`. The ``?`` key is listened for by :data:`empathy_app.sidebar.KEYS_SCRIPT` (in
    the sidebar of every page, so that it is mounted with the page, not only when this button first appears).
    """
    if page not in KEYS:
        raise ValueError(f"no key list for page {page!r}; pages with keys: {sorted(KEYS)}")
    if st.button("⌨ Keys (?)", key="keys_help", help="The keyboard keys of this page (press ? to open)"):
        _keys_dialog(page)


def follow_table_selection(event: object, labels: Sequence[str], pick_key: str, selection_key: str, *,
                           order: str | None = None, order_key: str | None = None) -> None:
    """Keep the selectbox ``pick_key`` (over ``labels``, one per table row) the one source of truth for the open row.

    A newly selected row of the table (``event``, what ``st.dataframe(..., on_select="rerun")`` returned) moves
    the pick; the same selection seen again on a later rerun does not, so a pick made in the selectbox since
    stays. ``selection_key`` remembers the last selection seen. A pick no longer among ``labels`` (the table was
    filtered) falls back to the first row. ``order``: a token of the table's order (its sort, search and filters),
    remembered under ``order_key``; when it differs from the last one seen, the pick moves to the new first row,
    so the output open under a re-sorted table is its top row, not the one open before (key the table by the
    order too, :func:`table_key`, so that no stale row stays selected). ``labels`` must not be empty. The keys are
    constants of :mod:`empathy_app.session_keys`.
    """
    selected = list(event.selection.rows) if event is not None else []  # type: ignore[attr-defined]
    if order is not None and order_key is not None and st.session_state.get(order_key) != order:
        st.session_state[order_key] = order
        st.session_state[pick_key] = labels[0]
        st.session_state[selection_key] = selected
        return
    if selected and selected != st.session_state.get(selection_key) and selected[0] < len(labels):
        st.session_state[pick_key] = labels[selected[0]]
    st.session_state[selection_key] = selected
    if st.session_state.get(pick_key) not in labels:
        st.session_state[pick_key] = labels[0]


def table_key(prefix: str, order: str) -> str:
    """A table's widget key that changes with its ``order`` token (:func:`follow_table_selection`): a re-sorted
    table is a new widget, with no row selected that now holds another output."""
    import hashlib

    return f"{prefix}_{hashlib.sha256(order.encode('utf-8')).hexdigest()[:10]}"
