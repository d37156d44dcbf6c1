"""Reusable Streamlit views of the app; pages stay thin.

The data set's summary, the side-by-side texts with the mechanisms marked, value widgets, interval and agreement
warnings, the flash error and a table selection that drives a selectbox (:func:`follow_table_selection`). The
frame (pages, Home, key help) is :mod:`empathy_app.frame`; the charts :mod:`empathy_app.charts`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from pathlib import Path

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
from empathy_app.markup import code, codes, md

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
