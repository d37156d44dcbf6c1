"""Human decisions counted as a person made them, and what they put into the agreement of two judges.

A row of the ledger is one annotator's label of one *rating* (item, model, rater, dimension). A decision made for
"(all judges)" writes one row per judge that rated the output, all with the same output, dimension, annotator,
role, value and time (one transaction, :meth:`empathy.labels.sqlite.OverrideStore.write_batch`): one decision,
several rows. Wherever a person reads a count, it is of decisions (:func:`decision_count`); the per-rating count
(rows) is shown only where it is named so ("applied to 200 judge labels", ``overridden_ratings`` in a signature).

:func:`pair_decisions` says, for two judges compared on some dimensions (a row of Table 6), how many human
decisions their labels hold and on how many outputs both judges carry the *same* human label: there, their
agreement is a human's, not theirs (an "(all judges)" decision writes exactly that).

Pure functions of tables: no store, no file.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

#: The columns that make rows one decision: the rows of one "(all judges)" decision differ only in ``rater``.
#: A frame without some of them (a hand-made overrides table) is grouped on those it has.
DECISION_KEY: tuple[str, ...] = ("item_id", "model", "dimension", "annotator", "role", "value", "updated_at")
_OUTPUT_KEY = ["item_id", "model", "dimension"]


def _require(rows: pd.DataFrame, name: str) -> None:
    if not isinstance(rows, pd.DataFrame):
        raise TypeError(f"{name} must be a pandas DataFrame, got {type(rows).__name__}")
    missing = [column for column in _OUTPUT_KEY if column not in rows.columns]
    if missing:
        raise ValueError(f"{name} lack the column(s) {', '.join(missing)}")


def decision_count(rows: pd.DataFrame | None) -> int:
    """Distinct human decisions among ledger rows (applied overrides, stale or orphaned decisions, ...).

    Rows that agree on every column of :data:`DECISION_KEY` the frame has are one decision: a decision applied to
    two judges is 1, two annotators' decisions on the same rating are 2, one annotator's decisions at two times
    are 2. ``None`` or an empty frame: 0. Raises ValueError for a frame without ``item_id``, ``model`` and
    ``dimension``.
    """
    if rows is None or len(rows) == 0:
        return 0
    _require(rows, "rows")
    columns = [column for column in DECISION_KEY if column in rows.columns]
    # distinct rows of the columns' texts (as ``astype(str).drop_duplicates()``), counted on integer codes: the
    # frame operations cost milliseconds per call on the few rows of a pair, and a Python set per row on many
    return int(len(np.unique(_row_codes([rows[column].astype(str) for column in columns]))))


def _row_codes(columns: list[pd.Series]) -> NDArray[np.int64]:
    """One integer per row, equal for two rows exactly when every column is equal (missing values equal)."""
    code = np.zeros(len(columns[0]) if columns else 0, dtype=np.int64)
    for column in columns:
        codes, distinct = pd.factorize(column, use_na_sentinel=False)
        # numbered again after each column: the codes stay below the row count, never overflow
        code = pd.factorize(code * max(len(distinct), 1) + codes)[0].astype(np.int64)
    return code


@dataclass(frozen=True)
class PairDecisions:
    """The human decisions in two judges' labels (:func:`pair_decisions`).

    ``decisions``: distinct decisions on either judge's labels; ``shared``: outputs (item, model, dimension) on
    which both judges carry the same human label, where agreement between them is a human's.
    """

    rater_a: str
    rater_b: str
    decisions: int
    shared: int

    @property
    def warning(self) -> str | None:
        """One sentence when ``shared`` > 0, else ``None``."""
        if not self.shared:
            return None
        outputs = "output" if self.shared == 1 else "outputs"
        return (f"on {self.shared} {outputs} a human decision gave {self.rater_a} and {self.rater_b} the same label "
                "(an '(all judges)' decision does): agreement a human created, not the judges'")


def pair_decisions(applied: pd.DataFrame | None, rater_a: str, rater_b: str, dimensions: Iterable[str],
                   outputs: pd.DataFrame | None = None) -> PairDecisions:
    """The human decisions in the labels of judges ``rater_a`` and ``rater_b`` on ``dimensions``.

    Parameters
    ----------
    applied
        The applied overrides (:attr:`empathy.labels.ledger.Ledger.applied`: one row per rating), or ``None``.
    rater_a, rater_b
        The two judges (a row of Table 6: ``scorer_a``, ``scorer_b``).
    dimensions
        The dimensions their metric reads (SA: ``e_ref``, ``e_gen``; EGM: ``u_ref``, ``u_gen``; CA: ``ca``).
    outputs
        Only these outputs (``item_id``, ``model`` columns; a task's outputs for a per-task row); all by default.

    Raises
    ------
    TypeError, ValueError
        For a frame that is not one or lacks ``item_id``, ``model``, ``dimension`` (``outputs``: ``item_id``,
        ``model``).
    """
    dimensions = [str(dimension) for dimension in dimensions]
    if applied is None or len(applied) == 0:
        return PairDecisions(str(rater_a), str(rater_b), 0, 0)
    _require(applied, "applied overrides")
    if "rater" not in applied.columns or "value" not in applied.columns:
        raise ValueError("applied overrides lack the column(s) rater, value")
    rows = applied[applied["rater"].astype(str).isin([str(rater_a), str(rater_b)])
                   & applied["dimension"].astype(str).isin(dimensions)]
    if outputs is not None and len(rows):
        if not isinstance(outputs, pd.DataFrame) or not {"item_id", "model"} <= set(outputs.columns):
            raise ValueError("outputs must be a DataFrame with item_id and model columns")
        keep = pd.MultiIndex.from_arrays([outputs["item_id"].astype(str), outputs["model"].astype(str)])
        rows = rows[pd.MultiIndex.from_arrays([rows["item_id"].astype(str), rows["model"].astype(str)]).isin(keep)]
    if rows.empty:
        return PairDecisions(str(rater_a), str(rater_b), 0, 0)
    shared = 0
    if rater_a != rater_b:
        # per output and dimension: its raters and its distinct values (missing values not counted, as
        # ``nunique``); both judges with one value is a label a human gave them both
        output = _row_codes([rows[column].astype(str) for column in _OUTPUT_KEY])
        outputs_seen = int(output.max()) + 1
        raters = _distinct_per(output, rows["rater"].astype(str), outputs_seen)
        given = rows["value"].notna().to_numpy()
        values = _distinct_per(output[given], rows["value"][given], outputs_seen)
        shared = int(((raters == 2) & (values == 1)).sum())
    return PairDecisions(str(rater_a), str(rater_b), decision_count(rows), shared)


def _distinct_per(groups: NDArray[np.int64], labels: pd.Series, size: int) -> NDArray[np.int64]:
    """How many distinct ``labels`` each group ``0 .. size - 1`` has (``groups``: the group of each label)."""
    codes, distinct = pd.factorize(labels, use_na_sentinel=False)
    pairs = np.unique(groups * max(len(distinct), 1) + codes)
    return np.bincount(pairs // max(len(distinct), 1), minlength=size)
