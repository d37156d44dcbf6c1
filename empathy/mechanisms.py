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

import numpy as np
import pandas as pd

from empathy import metrics as m
from empathy.io import RATING_REQUIRED, require_frame
from empathy.render import DISTURBING_PREFIX, JUDGED_PREFIX

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
