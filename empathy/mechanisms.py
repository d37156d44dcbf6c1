"""What makes the four mechanisms visible in one output's texts (the side-by-side view of Inspect and Items).

* LD (Eq. 4): the distancing spans of each side (:mod:`empathy.distancing`, drawn by :mod:`empathy.render`).
* EGM (Eq. 2): the disturbing-content elements the lexicon judge counts, with their category
  (:func:`disturbing_highlights`, from :func:`empathy.judges.lexicon.disturbing_spans`), and every judge's
  ``u_ref``/``u_gen`` with the sentence counts ``d``/``q`` and the output's EGM term (:func:`output_scores`).
* SA (Eq. 1): every judge's affect intensity ``e_ref``/``e_gen`` and the output's SA term
  (:func:`output_scores`).
* CA (Eq. 3): every judge's ``ca`` label of the output (:func:`output_scores`).

Which phrases are highlighted
-----------------------------
An LLM judge returns one count per sentence and no phrase: :func:`judged_highlights` marks the sentences it
counted something in (read from its answer cache by :func:`empathy.judges.run.cached_sentence_counts`; no
cached answer, no mark). Phrases can only come from the offline lexicon judge's checklist, a deterministic
function of the text: they are recomputed from the text (no lexicon rating is needed in the data set) on the
sentences the judges count on, so their number on a side *is* the lexicon judge's ``u`` of that side (tested
on the demo data). An LLM judge's count can differ; its ``u`` is shown beside the text.

The terms in :func:`output_scores` come from the terms functions of the metric registry
(:data:`empathy.metrics.METRIC_SPECS`, the ones every metric is computed with), so the SA and EGM shown for an
output are the terms the Items table lists, and a newly registered judge metric shows beside them; a term that
cannot be computed is NaN with a status, never 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from empathy import metrics as m
from empathy.io import RATING_REQUIRED, require_frame
from empathy.render import (
    AFFECT_PREFIX,
    CUE_PREFIX,
    DISTURBING_PREFIX,
    EVIDENCE_PREFIX,
    JUDGED_PREFIX,
    TENSION_PREFIX,
    escape_text,
    highlight_html,
    legend_html,
)

if TYPE_CHECKING:  # the judges package imports openai: only the functions that need the lexicon import it
    from empathy.judges.lexicon import ConflictCues, TextAffect, TextCue

#: Optional columns of an outputs table that describe a row for a reader (the demo data has both).
NOTE_COLUMNS: tuple[str, ...] = ("demo_note", "source")


def score_layout() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The judge dimensions :func:`output_scores` reads and its columns, from the registry's judge metrics.

    Per judge metric, in registry order: each of its dimensions not shown yet (followed by the sentence count
    of its side, ``d`` or ``q``, when the metric reads sentence counts), then its term and the term's status,
    except for a metric that is the mean of its one label (CA: the label *is* the term) and for one whose term
    depends on the other outputs of its group.
    """
    dimensions: list[str] = []
    columns: list[str] = ["judge"]
    for name in m.judged_metrics():
        spec = m.METRIC_SPECS[name]
        for dimension in spec.dimensions:
            if dimension in dimensions:
                continue
            dimensions.append(dimension)
            columns.append(dimension)
            count = "d" if m.DIMENSIONS[dimension].side == "reference" else "q"
            if spec.needs_sentences and count not in columns:
                columns.append(count)
        if not (spec.label_mean or spec.grouped or spec.needs_distancing):
            columns += [name, f"{name} status"]
    return tuple(dimensions), tuple(columns)


#: The judge dimensions shown beside the texts, in the paper's order (:func:`score_layout` of the paper's four).
#: Columns of :func:`output_scores` (idem).
SCORE_DIMENSIONS, SCORE_COLUMNS = score_layout()
_STATUS = {m.OK: "ok", m.MISSING: "missing", m.UNDEFINED: "undefined"}


def disturbing_highlights(text: str, sentence_spans: Sequence[tuple[int, int]] | None = None
                          ) -> list[dict[str, object]]:
    """Spans of the disturbing-content elements of ``text`` for :func:`empathy.render.highlight_html`.

    One dict per counted element: ``start``, ``end`` (character offsets), ``label`` ``"disturbing:<category>"``
    (death, violence, injury, graphic, abuse), ``rule`` (what the tooltip says: the checklist phrase counted)
    and ``text``. ``sentence_spans``: as for :func:`empathy.judges.lexicon.disturbing_spans`.
    """
    from empathy.judges.lexicon import disturbing_spans

    return [{"start": match.start, "end": match.end, "label": f"{DISTURBING_PREFIX}{match.category}",
             "rule": f"lexicon checklist, counted as '{match.phrase}'", "text": text[match.start:match.end]}
            for match in disturbing_spans(text, sentence_spans)]


def judged_highlights(counts: Sequence[object], judge: str) -> list[dict[str, object]]:
    """Spans of the sentences in which the LLM judge ``judge`` counted disturbing content (count > 0).

    ``counts``: :class:`empathy.judges.run.SentenceCount` items (``start``, ``end``, ``count``) of one text, from
    :func:`empathy.judges.run.cached_sentence_counts`. Label ``"judged:<judge>"``; the rule (tooltip) gives the
    count. Sentences counted 0 or without a cached answer are not marked.
    """
    spans = []
    for item in counts:
        count = getattr(item, "count", None)
        if count is not None and count > 0:
            spans.append({"start": int(item.start), "end": int(item.end), "label": f"{JUDGED_PREFIX}{judge}",
                          "rule": f"{count:g} disturbing element(s) counted in this sentence"})
    return spans


def category_counts(spans: Sequence[Mapping[str, object]]) -> dict[str, int]:
    """Disturbing elements per category among ``spans`` (other labels ignored), in first-seen order."""
    counts: dict[str, int] = {}
    for span in spans:
        label = str(span.get("label", ""))
        if label.startswith(DISTURBING_PREFIX):
            category = label.removeprefix(DISTURBING_PREFIX)
            counts[category] = counts.get(category, 0) + 1
    return counts


def _count(value: object, name: str) -> float:
    if value is None:
        return math.nan
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise TypeError(f"{name} must be a number or None, got {type(value).__name__}")
    value = float(value)
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value:g}")
    return value


def output_scores(ratings: pd.DataFrame, item_id: str, model: str, sentences_ref: float | None,
                  sentences_gen: float | None, *, egm_both_zero: str = "zero") -> pd.DataFrame:
    """Each judge's labels of one output and its terms of every judge metric: what Eq. 1-3 read and give for it.

    Parameters
    ----------
    ratings
        Long-form ratings (the judges' own or the effective ones with overrides applied).
    item_id, model
        The output.
    sentences_ref, sentences_gen
        ``d`` and ``q`` of Eq. 2: the sentence counts of reference and generation (``None``/NaN: unknown).
    egm_both_zero
        As for :func:`empathy.metrics.granularity_mismatch_terms`.

    Returns
    -------
    DataFrame
        The columns of :func:`score_layout` (:data:`SCORE_COLUMNS` for the paper's metrics), one row per rater
        that rated any of its dimensions of this output, sorted by name. A label the rater did not give is NaN;
        ``SA``/``EGM`` are the terms ``(e_ref - e_gen) / e_ref`` and ``|a - b| / (a + b)`` with
        ``a = u_ref / d``, ``b = u_gen / q`` (from the registry's terms functions), NaN when not computable,
        with ``"SA status"``/``"EGM status"`` saying why (``ok``, ``missing``, ``undefined``).

    Raises
    ------
    TypeError, ValueError
        For ratings without the long-form columns, a negative or non-numeric sentence count, or a label out of
        its range (the message of :mod:`empathy.metrics`).
    """
    require_frame(ratings, RATING_REQUIRED, "ratings")
    d = _count(sentences_ref, "sentences_ref")
    q = _count(sentences_gen, "sentences_gen")
    dimensions, columns = score_layout()
    mine = ratings[(ratings["item_id"].astype(str) == str(item_id)) & (ratings["model"].astype(str) == str(model))
                   & ratings["dimension"].isin(dimensions)]
    if mine.empty:
        return pd.DataFrame(columns=list(columns))
    wide = (mine.assign(value=mine["value"].astype(float)).groupby(["rater", "dimension"], sort=True)["value"]
            .first().unstack("dimension").reindex(columns=list(dimensions)))
    n = len(wide)
    values: dict[str, object] = {"judge": wide.index.astype(str), "d": d, "q": q}
    values.update({dimension: wide[dimension].to_numpy(float) for dimension in dimensions})
    options = m.MetricOptions(egm_both_zero=egm_both_zero)
    for name in m.judged_metrics():
        if name not in columns:
            continue
        spec = m.METRIC_SPECS[name]
        counts = {"sentences_ref": np.full(n, d), "sentences_gen": np.full(n, q)} if spec.needs_sentences else {}
        terms, status = spec.terms(m.TermInputs(ratings={k: values[k] for k in spec.dimensions}, options=options,
                                                **counts))
        values[name] = terms
        values[f"{name} status"] = [_STATUS[int(s)] for s in status]
    return pd.DataFrame({column: values[column] for column in columns}).reset_index(drop=True)


def note_fields(row: Mapping[str, object]) -> list[tuple[str, str]]:
    """The row's :data:`NOTE_COLUMNS` that hold text, as ``(column, text)`` (blank and NaN cells left out)."""
    fields = []
    for column in NOTE_COLUMNS:
        value = row.get(column)
        if value is None or (isinstance(value, float) and math.isnan(value)):
            continue
        text = str(value).strip()
        if text:
            fields.append((column, text))
    return fields


# ------------------------------------------------------------------------------------- all four, in the text

#: Whose marks SA and CA get in the text: always the offline lexicon judge's (its words and cue rules), also beside
#: an LLM judge's numbers, which come with no words (:func:`mechanisms_html` says so when LLM judges are shown).
MARKS_BY = "lexicon"
LLM_MARKS_NOTE = ("The SA and CA marks are the offline lexicon judge's (VADER's affect words, the CA cue rules), not "
                  "{judges}'s: an LLM judge gives one number per text and no words.")


def affect_highlights(affect: TextAffect) -> list[dict[str, object]]:
    """SA marks of a text for :func:`empathy.render.highlight_html`: one per contribution of ``affect``.

    Label ``affect:word`` or ``affect:emphasis``; ``weight`` the contribution's share of ``E`` (the weights add up
    to ``affect.intensity``); ``strength`` its magnitude on VADER's scale (``|valence| / 4``, at most 1), which
    sets how strongly it is drawn; ``rule`` the tooltip (valence, weight, ``E``).
    """
    from empathy.judges.lexicon import VALENCE_SCALE

    spans = []
    for part in affect.contributions:
        if part.kind == "word":
            rule = (f"'{part.text}' valence {part.valence:+.2f} (VADER, after its rules), weight {part.weight:.3f} "
                    f"of E = {affect.intensity:.3f}")
        else:
            rule = f"emphasis '{part.text}', weight {part.weight:.3f} of E = {affect.intensity:.3f}"
        spans.append({"start": part.start, "end": part.end, "label": f"{AFFECT_PREFIX}{part.kind}", "rule": rule,
                      "text": part.text, "weight": part.weight, "strength": min(1.0, part.magnitude / VALENCE_SCALE)})
    return spans


def cue_highlights(cues: Sequence[TextCue], prefix: str = CUE_PREFIX) -> list[dict[str, object]]:
    """CA marks for :func:`empathy.render.highlight_html`: a response's cues (``prefix`` ``cue:``) or a client
    narrative's tension (``tension:``), labelled ``<prefix><category>`` with the rule in the tooltip."""
    return [{"start": cue.start, "end": cue.end, "label": f"{prefix}{cue.category}", "rule": cue.rule,
             "text": cue.text} for cue in cues]


def evidence_highlights(evidence: object, judge: str, label: float | None = None) -> list[dict[str, object]]:
    """The passage an LLM judge quoted as evidence of its CA label (:class:`empathy.judges.evidence.Evidence`,
    from ``JudgeRun.evidence`` or :func:`empathy.judges.run.cached_evidence`), as a span on the response; none
    when the quote was not found in the response (it is never drawn from the judge's own string)."""
    start, end = getattr(evidence, "start", None), getattr(evidence, "end", None)
    if getattr(evidence, "status", "") != "quoted" or start is None or end is None:
        return []
    rule = f"label {label:g}" if label is not None else ""
    return [{"start": int(start), "end": int(end), "label": f"{EVIDENCE_PREFIX}{judge}", "rule": rule}]


@dataclass(frozen=True)
class SideMarks:
    """The marks of one text (reference or generation): LD, EGM, SA and CA, as located spans.

    ``distancing``: LD spans (as given); ``disturbing``: the lexicon checklist's elements (EGM;
    :func:`disturbing_highlights`); ``judged``: sentences an LLM judge counted disturbing content in (optional);
    ``affect``: the lexicon judge's ``E`` with its contributions (SA); ``cues``: the CA cues of a response or the
    tension of a client narrative; ``cue_prefix`` says which.
    """

    text: str
    distancing: tuple[object, ...]
    disturbing: tuple[Mapping[str, object], ...]
    judged: tuple[Mapping[str, object], ...]
    affect: TextAffect
    cues: tuple[TextCue, ...] = ()
    cue_prefix: str = CUE_PREFIX

    def spans(self) -> list[object]:
        """Every mark of the text, for :func:`empathy.render.highlight_html`."""
        return [*self.distancing, *self.disturbing, *self.judged, *affect_highlights(self.affect),
                *cue_highlights(self.cues, self.cue_prefix)]


@dataclass(frozen=True)
class MechanismMarks:
    """The four mechanisms' marks on a reference/generation pair (:func:`mechanism_marks`).

    ``conflict``: the lexicon's CA cues of the generation, ``None`` where CA is not shown (then the reference
    has no tension marks either). ``marks_by``: whose SA and CA marks these are (:data:`MARKS_BY`).
    """

    reference: SideMarks
    generation: SideMarks
    conflict: ConflictCues | None
    marks_by: str = MARKS_BY

    @property
    def lost(self) -> list[str]:
        """The affect words the reference carries and the generation dropped, heaviest first."""
        from empathy.judges.lexicon import lost_affect

        return lost_affect(self.reference.affect, self.generation.affect)

    def lost_summary(self, limit: int = 6) -> str:
        """``"lost: devastated, furious"`` (:func:`empathy.judges.lexicon.lost_summary`)."""
        from empathy.judges.lexicon import lost_summary

        return lost_summary(self.reference.affect, self.generation.affect, limit)

    def conflict_summary(self) -> str:
        """The lexicon's CA label from its cues, e.g. ``"A = 3 (solution 2, reassurance 1) > X = 1.5: label 1"``;
        ``""`` when CA is not shown."""
        if self.conflict is None:
            return ""
        from empathy.judges.lexicon import HARMONY_CATEGORIES

        counts: dict[str, int] = {}
        for cue in self.conflict.cues:
            counts[cue.category] = counts.get(cue.category, 0) + 1
        avoid = ", ".join(f"{name} {counts[name]}" for name in ("solution", *HARMONY_CATEGORIES) if name in counts)
        explore = ", ".join(f"{name} {counts[name]}" for name in ("question", "reflection") if name in counts)
        a, x = self.conflict.avoidance, self.conflict.exploration
        return (f"A = {a:g}" + (f" ({avoid})" if avoid else "") + f" {'>' if a > x else '<='} X = {x:g}"
                + (f" ({explore})" if explore else "") + f": lexicon CA label {self.conflict.label}")


def mechanism_marks(reference: str, generation: str, *,
                    distancing: Sequence[Sequence[object]] | None = None,
                    sentence_spans: Sequence[Sequence[tuple[int, int]]] | None = None,
                    conflict: bool = True,
                    judged: Sequence[Sequence[Mapping[str, object]]] | None = None) -> MechanismMarks:
    """The marks of all four mechanisms on one output, each side's from one implementation of its judge rule.

    Parameters
    ----------
    reference, generation
        The two texts (a client narrative and a response on counseling rows).
    distancing
        The LD spans of each text (:mod:`empathy.distancing`); none by default.
    sentence_spans
        The sentences of each text the judges rate; by default the spaCy parse of a judge run
        (:func:`empathy.judges.segment.sentence_spans`), so that on each side the SA weights add up to the
        lexicon judge's ``E`` and the EGM marks number its ``u``.
    conflict
        Show CA: the lexicon's cues on the generation, the client's tension on the reference.
    judged
        Marks of LLM judges per text: the sentences they counted disturbing content in
        (:func:`judged_highlights`) and, on the response, the evidence they quoted for CA
        (:func:`evidence_highlights`); none by default.

    Raises
    ------
    TypeError, ValueError
        For a text that is not a string or sentence offsets outside their text.
    """
    from empathy.judges.lexicon import affect_breakdown, client_tension, conflict_cues

    texts = (reference, generation)
    for name, text in zip(("reference", "generation"), texts, strict=True):
        if not isinstance(text, str):
            raise TypeError(f"{name} must be a str, got {type(text).__name__}")
    if sentence_spans is None:
        from empathy.judges.segment import sentence_spans as parse_sentences

        sentence_spans = parse_sentences(list(texts))
    distancing = distancing if distancing is not None else ((), ())
    judged = judged if judged is not None else ((), ())
    for name, given in (("distancing", distancing), ("sentence_spans", sentence_spans), ("judged", judged)):
        if len(given) != 2:
            raise ValueError(f"{name} must hold two lists (reference, generation), got {len(given)}")
    sentences = [[text[a:b] for a, b in spans] for text, spans in zip(texts, sentence_spans, strict=True)]
    cues = conflict_cues(generation, sentences[1]) if conflict else None
    tension = client_tension(reference, sentences[0]) if conflict else ()
    located = [(tuple(distancing[k]), tuple(disturbing_highlights(text, sentence_spans[k])), tuple(judged[k]),
                affect_breakdown(text, sentence_spans[k])) for k, text in enumerate(texts)]
    return MechanismMarks(SideMarks(reference, *located[0], tension, TENSION_PREFIX),
                          SideMarks(generation, *located[1], cues.cues if cues is not None else (), CUE_PREFIX), cues)


def marks_legend_html(marks: MechanismMarks) -> str:
    """The legend of what :func:`side_html` draws for ``marks`` (static markup)."""
    judged = [str(_field(span, "label")) for span in (*marks.reference.judged, *marks.generation.judged)]
    shown = marks.conflict is not None
    return legend_html(disturbing=True, judged=any(label.startswith(JUDGED_PREFIX) for label in judged),
                       affect=True, conflict=shown, tension=shown,
                       evidence=any(label.startswith(EVIDENCE_PREFIX) for label in judged))


def _field(span: object, name: str) -> object:
    return span.get(name) if isinstance(span, Mapping) else getattr(span, name, None)


def side_html(side: SideMarks) -> str:
    """One text with all its marks (:func:`empathy.render.highlight_html`, numbered: ``data-mark`` per span)."""
    return highlight_html(side.text, side.spans(), numbered=True)


def summary_html(marks: MechanismMarks, *, llm_judges: Sequence[str] = ()) -> str:
    """Under the two texts: the lexicon's ``E`` of each side, what the generation lost, the CA label from its
    cues, and, when ``llm_judges`` are shown beside the text, that the marks are the lexicon's (escaped, and
    Markdown-neutral like :func:`empathy.render.highlight_html`: safe for ``st.markdown(unsafe_allow_html=True)``)."""
    e_ref, e_gen = marks.reference.affect.intensity, marks.generation.affect.intensity
    lines = [f"SA marks: E(reference) = {e_ref:.3f}, E(generation) = {e_gen:.3f} (the lexicon judge's; the marks' "
             f"weights add up to these). {marks.lost_summary()}"]
    if marks.conflict is not None:
        lines.append("CA cues: " + marks.conflict_summary())
    if llm_judges:
        lines.append(LLM_MARKS_NOTE.format(judges=", ".join(llm_judges)))
    return ('<div class="mechanism-summary">'
            + "".join(f"<p>{escape_text(line)}</p>" for line in lines) + "</div>")


def mechanisms_html(marks: MechanismMarks, *, titles: tuple[str, str] = ("Reference", "Generation"),
                    llm_judges: Sequence[str] = ()) -> str:
    """The one renderer of the four mechanisms on a pair: legend, the two texts side by side, the summary.

    Every data string is escaped and Markdown-neutral (:func:`empathy.render.escape_text`: texts, titles, judge
    names and words), inline styles only, no script, one line: safe for ``st.markdown(unsafe_allow_html=True)``,
    ``st.html`` and a self-contained page. The app draws the same parts in its own columns: :func:`marks_legend_html`,
    :func:`side_html` per side, :func:`summary_html`.
    """
    sides = "".join(f'<div class="side" style="flex:1 1 0;min-width:0"><h3>{escape_text(title)}</h3>'
                    f"{side_html(side)}</div>"
                    for title, side in zip(titles, (marks.reference, marks.generation), strict=True))
    return (f'<div class="mechanisms">{marks_legend_html(marks)}<div class="sides" style="display:flex;gap:16px">'
            f"{sides}</div>{summary_html(marks, llm_judges=llm_judges)}</div>")
