"""Results and agreement tables laid out for people: the paper's Table 6 (model x judge, per metric) as CSV.

Both files are meant for spreadsheets: every text cell (model, judge, task and metric names come from data) goes
through :func:`empathy.escaping.spreadsheet_cell`, numbers stay numbers, and every row carries the results'
reproducibility signature (:mod:`empathy.signature`) in a last ``signature`` column, as the long results CSV
does, so a file cut out of its context still says how it was computed.

The Table 6 layout has two header rows, as the paper's table: the judge (scorer) over each group of columns,
then the metric. LD is computed from the texts, not by a judge; its scorer (``spacy-distancing``) gets a group
of its own. A judge's metric without any value (a judge that rated no CA, say) has no column.

>>> import pandas as pd
>>> results = pd.DataFrame({"model": ["A", "A", "B", "B"], "scorer": ["gpt", "gpt", "gpt", "gpt"],
...                         "metric": ["SA", "CA", "SA", "CA"], "value": [0.5, 1.0, 0.25, 0.0]})
>>> print(table6_csv(results, "empathy:0.1.0"), end="")
model,gpt,gpt,signature
,SA,CA,
A,0.5,1.0,empathy:0.1.0
B,0.25,0.0,empathy:0.1.0
"""

from __future__ import annotations

import csv
import io
import math

import numpy as np
import pandas as pd

from empathy import metrics as m
from empathy.escaping import spreadsheet_cell
from empathy.io import require_frame

__all__ = ["agreement_csv", "agreement_table", "table6", "table6_csv"]

_RESULT_COLUMNS = ("model", "scorer", "metric", "value")
_AGREEMENT_COLUMNS = ("metric", "scorer_a", "scorer_b", "spearman", "n_models")


def _metric_order(metric: str) -> tuple[int, str]:
    return (m.registry_position(metric), metric)


def _by_task(table: pd.DataFrame) -> bool:
    return "task" in table.columns and table["task"].nunique(dropna=False) > 1


def table6(table: pd.DataFrame) -> pd.DataFrame:
    """A results table (``model, scorer, metric, value``; optional ``task``) in the paper's Table 6 layout.

    Rows: one per model (per task and model when the table holds several tasks), sorted. Columns: a
    :class:`pandas.MultiIndex` of (scorer, metric); scorers sorted with LD's scorer last, metrics in the
    paper's order (SA, EGM, CA, LD) within a scorer; a (scorer, metric) pair without any value is left out.
    A duplicated (task, model, scorer, metric) raises ``ValueError`` (which value would be shown?).
    """
    require_frame(table, _RESULT_COLUMNS, "the results table")
    keys = ["task", "model"] if _by_task(table) else ["model"]
    frame = table[[*keys, "scorer", "metric", "value"]].copy()
    frame["value"] = pd.to_numeric(frame["value"], errors="coerce").astype(float)
    duplicated = frame.duplicated([*keys, "scorer", "metric"])
    if duplicated.any():
        row = frame[duplicated].iloc[0]
        raise ValueError(f"the results table has more than one value for model {row['model']!r}, scorer "
                         f"{row['scorer']!r}, metric {row['metric']!r}")
    wide = frame.pivot(index=keys, columns=["scorer", "metric"], values="value")
    present = [c for c in wide.columns if wide[c].notna().any()]
    # a text-only metric's fixed scorer (LD's distancing analyser) goes after the judges
    text_only = frame["metric"].isin(m.text_metrics())
    fixed = set(frame.loc[text_only, "scorer"]) - set(frame.loc[~text_only, "scorer"])
    order = sorted(present, key=lambda c: (c[0] in fixed, str(c[0]), _metric_order(str(c[1]))))
    out = wide[order] if order else wide.iloc[:, :0]
    out.columns = pd.MultiIndex.from_tuples(order, names=["scorer", "metric"]) if order else out.columns
    return out.sort_index()


def _cell(value: object) -> object:
    """A CSV cell for people: text neutralised, NaN empty, numbers as numbers."""
    if isinstance(value, str):
        return spreadsheet_cell(value)
    if value is None or value is pd.NA:
        return ""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return ""
    return value


def _write(rows: list[list[object]]) -> str:
    buffer = io.StringIO()
    # Text cells holding a line break are quoted by the writer; a lone CR is quoted too (every reader would
    # take it for a line end), hence QUOTE_MINIMAL plus an explicit "\n" terminator.
    writer = csv.writer(buffer, lineterminator="\n")
    for row in rows:
        writer.writerow([_cell(v) for v in row])
    return buffer.getvalue()


def table6_csv(table: pd.DataFrame, signature: object) -> str:
    """:func:`table6` as CSV text with two header rows (scorer, then metric) and a ``signature`` column.

    ``signature`` is the results' reproducibility signature (``str(report.signature)``), repeated on every row.
    """
    wide = table6(table)
    keys = list(wide.index.names)
    header_scorer = [*keys, *(str(s) for s, _ in wide.columns), "signature"]
    header_metric = [*([""] * len(keys)), *(str(m) for _, m in wide.columns), ""]
    rows = [header_scorer, header_metric]
    text = str(signature)
    for index, values in zip(wide.index, wide.to_numpy(dtype=float), strict=True):
        key = list(index) if isinstance(index, tuple) else [index]
        rows.append([*(str(k) for k in key), *values.tolist(), text])
    return _write(rows)


#: rho's uncertainty, in the order of the command line's agreement rows (``metrics --format json``).
AGREEMENT_UNCERTAINTY: tuple[str, ...] = ("ci_low", "ci_high", "p_exact", "p_method", "p_se", "kendall_tau_b",
                                          "p_kendall", "n_items")


def agreement_table(agreement: pd.DataFrame) -> pd.DataFrame:
    """Inter-judge Spearman pairs (:func:`empathy.agreement.spearman_pairs`) for people: one row per metric
    and judge pair, metrics in the paper's order, then by task (when there are several) and judges; ``spearman`` as a
    float (NaN when undefined) and ``n_models`` as an integer. The columns saying which labels a row rests on
    (:data:`empathy.review.PROVENANCE_COLUMNS`: ``labels``, ``human_decisions``, ``same_human_label``,
    ``warning``, added by :func:`empathy.review.agreement_labels`) are kept when present, and so are rho's
    uncertainty columns (:data:`AGREEMENT_UNCERTAINTY`: the bootstrap interval over items, the exact permutation
    p, Kendall's tau-b; :meth:`empathy.bootstrap.TableIntervals.beside` adds them), before the provenance."""
    from empathy.review import PROVENANCE_COLUMNS

    require_frame(agreement, _AGREEMENT_COLUMNS, "the agreement table")
    keys = ["task"] if _by_task(agreement) else []
    uncertainty = [column for column in AGREEMENT_UNCERTAINTY if column in agreement.columns]
    provenance = [column for column in PROVENANCE_COLUMNS if column in agreement.columns]
    out = agreement[[*keys, *_AGREEMENT_COLUMNS, *uncertainty, *provenance]].copy()
    out["spearman"] = pd.to_numeric(out["spearman"], errors="coerce").astype(float)
    out["n_models"] = pd.to_numeric(out["n_models"], errors="coerce").astype("Int64")
    out["_order"] = out["metric"].map(lambda name: _metric_order(str(name))[0])
    out = out.sort_values(["_order", *keys, "scorer_a", "scorer_b"], kind="stable").drop(columns="_order")
    return out.reset_index(drop=True)


def agreement_csv(agreement: pd.DataFrame, signature: object) -> str:
    """:func:`agreement_table` as CSV text with a ``signature`` column (the results' signature)."""
    table = agreement_table(agreement)
    rows: list[list[object]] = [[*table.columns, "signature"]]
    text = str(signature)
    for record in table.itertuples(index=False):
        rows.append([*record, text])
    return _write(rows)
