"""The results rows of an audit's PPI++ estimates: one per (task, model, metric), with every key a metrics row has.

Every row of a results table (:func:`empathy.inference.estimator_table`, the ``metrics`` command's JSON, the
Overview) carries ``n``, ``n_missing``, ``n_undefined``, ``rank``, ``rank_low``, ``rank_high`` and ``warning``
(the README's row contract). For a PPI row they read:

* ``n``: the outputs of the audit's frame (those the judge rated on the audited dimension); ``n_missing``: those
  of them whose judge term lacks a rating of another dimension the metric reads; ``n_undefined``: those whose
  judge term is undefined (SA with ``E(t) = 0``, ...). Neither enters the estimate, as for the judge's row.
* ``rank``: the rank of the corrected value among the same audit's corrected values of the same task, judge
  and metric (:func:`empathy.evaluate.rank_by_direction`: 1 = the least failure). ``rank_low`` and
  ``rank_high`` are null: a rank interval needs the models' joint sampling distribution, which the bootstrap
  has and the separate PPI intervals do not.
* ``warning``: why the interval's level is not promised or how it was made safe
  (:mod:`empathy.small_sample`), ``null`` otherwise; a zero-width interval always carries one.
"""

from __future__ import annotations

import math

import pandas as pd

from empathy.small_sample import zero_width_warning

#: ``estimator`` of a PPI row.
ESTIMATOR_PPI = "ppi"


def _warning(row: dict[str, object]) -> str | None:
    """The row's warning, with the zero-width one added where an interval has no width and nothing says so."""
    warning = row["warning"] if isinstance(row["warning"], str) and row["warning"] else None
    low, high = row["ppi_low"], row["ppi_high"]
    finite = all(isinstance(v, (int, float)) and math.isfinite(v) for v in (low, high))
    if finite and high <= low and (warning is None or "zero width" not in warning):  # type: ignore[operator]
        warning = "; ".join(w for w in (warning, zero_width_warning("the PPI interval")) if w)
    return warning


def ppi_result_rows(part: pd.DataFrame, audit: str) -> list[dict[str, object]]:
    """The results rows of PPI table rows (:data:`empathy.inference.PPI_COLUMNS`) of one audit.

    Parameters
    ----------
    part : DataFrame
        Rows of :attr:`empathy.inference.PPIReport.table` (the pooled ones, or one level of tasks).
    audit : str
        The design's short digest, the rows' ``audit``.

    Returns
    -------
    list of dict
        One row per input row, keyed by :data:`empathy.inference.ESTIMATOR_COLUMNS` (see the module docstring).
    """
    from empathy.evaluate import rank_by_direction  # the one rank convention

    ranks = rank_by_direction(part.rename(columns={"judge": "scorer"}), value="ppi_value") if len(part) else []
    rows = []
    for row, rank in zip(part.to_dict("records"), ranks, strict=True):
        rows.append({
            "task": row["task"], "model": row["model"], "scorer": row["judge"], "metric": row["metric"],
            "estimator": ESTIMATOR_PPI, "value": row["ppi_value"], "ci_low": row["ppi_low"],
            "ci_high": row["ppi_high"], "n": row["n_frame"], "n_missing": row["n_missing"],
            "n_undefined": row["n_undefined"], "rank": rank, "rank_low": pd.NA, "rank_high": pd.NA,
            "n_audit": row["n_audit"], "n_decided": row["n_decided"], "n_pending": row["n_pending"],
            "n_skipped": row["n_skipped"], "n_unusable": row["n_unusable"], "human": row["human_value"],
            "human_low": row["human_low"], "human_high": row["human_high"], "lam": row["lam"],
            "n_effective": row["n_effective"], "ess_gain": row["ess_gain"], "scheme": row["scheme"],
            "audit": audit, "warning": _warning(row)})
    return rows
