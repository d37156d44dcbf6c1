"""Sample-size stability in the style of the paper's Table 7 (Section 4.4).

The paper recomputes SA on 50, 100, 150 and 200 counseling items, reports mean +- sd per model and reads the
Spearman correlation of the model rankings across sizes ("approaching 1" from 100 items on).
:func:`sample_size_stability` does this for any per-unit table:

* ``values_by_unit`` is a units x groups table: one row per unit (an item, or an (item, model) output), one
  column per group (a model for a metric, a rater for a rating dimension); NaN = the unit is not usable
  for that group (missing rating, undefined term, or not rated), and is left out of that group's statistic
  exactly as :mod:`empathy.metrics` leaves it out (never read as 0).
* For each size ``k``, ``n_resamples`` subsets of ``k`` units are drawn **without replacement** from
  ``np.random.default_rng(seed)`` (one generator for the whole run, the sizes drawn in the order given), and
  the statistic is computed per group on each subset. All groups share the same subsets (paired design, as
  when the paper enlarges one data set for every model).
* Per group and size: the mean and the sample standard deviation (``ddof = 1``) of the statistic over the
  resamples (the paper does not say which sd; with ``k`` equal to the number of units every subset is the
  whole table, so the sd is 0), plus the full-data value.
* The Spearman correlation of the groups' mean values between every pair of sizes and against the full
  data (:func:`rank_stability`), ``None`` with fewer than three groups or a constant column. This is the
  paper's reading of Table 7. Caveat: the average of a statistic over many random subsets converges to (for
  the mean: is an unbiased estimate of) its full-data value, so with many resamples these columns rank the
  groups almost exactly as the full data does at *every* size, however noisy one subset is.
* Therefore also, per size, the Spearman of *each resample's* group values with the full-data values,
  summarised as mean, sd and the share of resamples that reproduce the full ranking exactly
  (``resample_rank``): the answer to "had I rated only k items, how close would my ranking be?".

Statistics: ``"mean"`` (a metric is the mean of its per-item terms, so this is the metric on the subset),
``"median"``, or an agreement statistic of each group with a ``reference`` column (``"spearman"``,
``"pearson"``, ``"kappa_quadratic"``; e.g. how stable each LLM's agreement with the expert panel is at 50
items), or any callable ``f(values) -> float | None`` of a group's values on the subset.

Inputs from the data model: :func:`metric_terms` (per-item SA/EGM/CA terms per model and judge, from the
term functions of :mod:`empathy.metrics`) with :func:`metric_matrix`, and :func:`dimension_matrix` (one
rating dimension, outputs x raters).
"""

from __future__ import annotations

import itertools
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from empathy import metrics as m
from empathy.agreement import MIN_PAIRS, _average_ranks_by_row, cohen_kappa, pearson, spearman

STATISTICS: tuple[str, ...] = ("mean", "median", "spearman", "pearson", "kappa_quadratic")
REFERENCE_STATISTICS: frozenset[str] = frozenset({"spearman", "pearson", "kappa_quadratic"})
DEFAULT_RESAMPLES = 100
FULL = "all"

Statistic = str | Callable[[NDArray[np.float64]], float | None]


def parse_sizes(text: str, *, option: str = "", n_units: int | None = None) -> list[int]:
    """``"50, 100;150"`` -> ``[50, 100, 150]``: positive whole numbers in ASCII digits (the sizes of
    :func:`sample_size_stability`, as the CLI's ``--sizes`` and the Workbench's text field give them).

    Raises ValueError naming the bad entry (``1_000``, ``١٠`` and ``2.5`` are not sizes), or when there is
    none; messages start with ``option`` (``--sizes``) when given. ``n_units``: also refuse a size larger
    than the data (otherwise :func:`sample_size_stability`'s check).
    """
    prefix, example = (f"{option}: ", f" (use e.g. {option} 50,100,150,200)") if option else ("", "")
    sizes = []
    for part in text.replace(";", ",").split(","):
        part = part.strip()
        if not part:
            continue
        if not (part.isascii() and part.isdigit()):
            raise ValueError(f"{prefix}{part!r} is not a whole number{example}")
        if int(part) < 1:
            raise ValueError(f"{prefix}{part!r} is not a positive size")
        sizes.append(int(part))
    if not sizes:
        raise ValueError(f"{prefix}give at least one size" + (f" (e.g. {option} 50,100,150,200)" if option else ""))
    too_big = [s for s in sizes if n_units is not None and s > n_units]
    if too_big:
        raise ValueError(f"{prefix}size {too_big[0]} is larger than the data ({n_units} units)")
    return sizes


@dataclass(frozen=True)
class StabilityResult:
    """Mean +- sd of a statistic per group and sample size, and the rank stability across sizes."""

    #: group, size, mean, sd, n_resamples, n_defined (resamples on which the statistic was defined),
    #: n_units_mean (mean number of usable units per resample)
    table: pd.DataFrame
    #: group, value, n (the statistic on all units and the usable units it rests on)
    full: pd.DataFrame
    #: size_a, size_b, spearman, n_groups (size ``"all"`` = the full data)
    rank_spearman: pd.DataFrame
    #: size, spearman_mean, spearman_sd, same_ranking, n_defined: per resample, the Spearman of the groups'
    #: values on that subset with their full-data values, summarised over the resamples of each size
    resample_rank: pd.DataFrame
    sizes: tuple[int, ...]
    n_resamples: int
    seed: int
    statistic: str
    reference: str | None
    n_units: int

    def wide(self, digits: int = 3) -> pd.DataFrame:
        """The Table 7 layout: one row per group, one ``mean ± sd`` column per size, and ``all``."""
        cells = self.table.assign(cell=[_cell(mu, sd, digits) for mu, sd in zip(self.table["mean"],
                                                                                self.table["sd"], strict=True)])
        out = cells.pivot(index="group", columns="size", values="cell")
        out.columns = [str(c) for c in out.columns]
        full = self.full.set_index("group")["value"]
        out[FULL] = [_cell(full.get(g), None, digits) for g in out.index]
        return out.reindex(self.full["group"]).reset_index()

    def means(self) -> pd.DataFrame:
        """Groups x sizes table of mean values (the input of :func:`rank_stability`), with ``all``."""
        out = self.table.pivot(index="group", columns="size", values="mean")
        out[FULL] = self.full.set_index("group")["value"]
        return out.reindex(self.full["group"])

    def to_json(self) -> dict[str, object]:
        """Plain JSON: ``stability`` rows, ``full`` rows, ``rank_spearman`` rows and the run's settings."""
        return {
            "statistic": self.statistic, "reference": self.reference, "sizes": list(self.sizes),
            "n_resamples": self.n_resamples, "seed": self.seed, "n_units": self.n_units,
            "stability": _records(self.table), "full": _records(self.full),
            "rank_spearman": _records(self.rank_spearman), "resample_rank": _records(self.resample_rank),
        }


def _records(frame: pd.DataFrame) -> list[dict[str, object]]:
    from empathy.io import json_records  # the one JSON cleaner (NaN -> null, numpy -> Python)

    return json_records(frame)


def _cell(mean: object, sd: object, digits: int) -> str:
    if mean is None or (isinstance(mean, float) and np.isnan(mean)):
        return "-"
    if sd is None:
        return f"{mean:.{digits}f}"
    if isinstance(sd, float) and np.isnan(sd):
        return f"{mean:.{digits}f} ± -"
    return f"{mean:.{digits}f} ± {sd:.{digits}f}"


def default_sizes(n_units: int, steps: int = 4) -> list[int]:
    """``steps`` evenly spaced sizes up to ``n_units`` (200 units -> 50, 100, 150, 200, as Table 7)."""
    if n_units < 1:
        raise ValueError(f"n_units must be positive, got {n_units}")
    if steps < 1:
        raise ValueError(f"steps must be positive, got {steps}")
    return sorted({max(1, round(n_units * (i + 1) / steps)) for i in range(steps)})


def _check_sizes(sizes: Sequence[int], n_units: int) -> tuple[int, ...]:
    if isinstance(sizes, str | bytes) or not len(sizes):
        raise ValueError(f"sizes must be a non-empty sequence of integers, got {sizes!r}")
    checked = []
    for size in sizes:
        if isinstance(size, bool) or not isinstance(size, int | np.integer):
            raise TypeError(f"sizes must be integers, got {size!r}")
        if size < 1:
            raise ValueError(f"size {size} must be at least 1")
        if size > n_units:
            raise ValueError(f"size {size} is larger than the data ({n_units} units); sampling is without "
                             f"replacement, so a size can be at most {n_units}")
        checked.append(int(size))
    if len(set(checked)) != len(checked):
        raise ValueError(f"sizes repeat: {list(sizes)}")
    return tuple(checked)


def _group_statistic(statistic: Statistic, reference: NDArray[np.float64] | None
                     ) -> Callable[[NDArray[np.float64], NDArray[np.int64]], float]:
    """f(column values, unit indices) -> value (NaN when undefined)."""
    def nan_if_none(value: float | None) -> float:
        return np.nan if value is None else float(value)

    if callable(statistic):
        return lambda column, index: nan_if_none(statistic(column[index]))
    if statistic == "mean":
        return lambda column, index: float(np.nanmean(column[index]))
    if statistic == "median":
        return lambda column, index: float(np.nanmedian(column[index]))
    if reference is None:
        raise ValueError(f"statistic {statistic!r} needs a reference column")
    if statistic == "spearman":
        return lambda column, index: nan_if_none(spearman(column[index], reference[index]))
    if statistic == "pearson":
        return lambda column, index: nan_if_none(pearson(column[index], reference[index]))
    return lambda column, index: nan_if_none(cohen_kappa(column[index], reference[index], weights="quadratic"))


def _fast(statistic: Statistic, column: NDArray[np.float64], reference: NDArray[np.float64] | None,
          subsets: NDArray[np.int64]) -> NDArray[np.float64] | None:
    """The statistic on every subset at once, or ``None`` when only the per-subset loop is exact.

    Used for ``mean`` and, without missing values, ``spearman``: the same numbers as the loop (Spearman is
    Pearson on average ranks, as :func:`empathy.agreement.spearman`), many times faster at Table 7 scale.
    """
    if isinstance(statistic, str) and statistic == "mean":
        return np.nanmean(column[subsets], axis=1)
    if not (isinstance(statistic, str) and statistic == "spearman") or reference is None:
        return None
    if np.isnan(column).any() or np.isnan(reference).any() or subsets.shape[1] < MIN_PAIRS:
        return None
    # average ranks per row, exactly scipy.stats.rankdata(axis=1) (whole or half numbers), without importing SciPy
    # on the page's first visit (2-3 s of CPU)
    x = _average_ranks_by_row(column[subsets])
    y = _average_ranks_by_row(reference[subsets])
    x -= x.mean(axis=1, keepdims=True)
    y -= y.mean(axis=1, keepdims=True)
    denominator = np.sqrt((x * x).sum(axis=1) * (y * y).sum(axis=1))
    constant = (np.ptp(column[subsets], axis=1) == 0) | (np.ptp(reference[subsets], axis=1) == 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = (x * y).sum(axis=1) / denominator
    return np.where(constant, np.nan, np.clip(rho, -1.0, 1.0))


def _sd(values: NDArray[np.float64]) -> float:
    """Sample sd (ddof = 1); exactly 0 for identical values, where numpy's two-pass formula leaves ~1e-16."""
    if len(values) < 2:
        return np.nan
    if values.min() == values.max():
        return 0.0
    return float(values.std(ddof=1))


def _usable(column: NDArray[np.float64], reference: NDArray[np.float64] | None) -> NDArray[np.bool_]:
    ok = ~np.isnan(column)
    return ok if reference is None else ok & ~np.isnan(reference)


def sample_size_stability(values_by_unit: pd.DataFrame, sizes: Sequence[int], *,
                          n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0, statistic: Statistic = "mean",
                          reference: str | None = None, groups: Sequence[str] | None = None
                          ) -> StabilityResult:
    """Mean +- sd of a per-group statistic over ``n_resamples`` random subsets of each size (Table 7 style).

    Parameters
    ----------
    values_by_unit
        Units x groups, numeric (NaN = not usable for that group).
    sizes
        Subset sizes, each between 1 and the number of units.
    n_resamples
        Subsets per size (at least 2, so that a standard deviation exists).
    seed
        Seed of ``np.random.default_rng``; the same seed gives the same subsets and the same numbers.
    statistic
        ``"mean"``, ``"median"``, ``"spearman"``, ``"pearson"``, ``"kappa_quadratic"`` (these three against
        the ``reference`` column), or a callable of a group's values on the subset.
    reference
        A column of ``values_by_unit`` that each group is compared with (agreement statistics only); it is
        not itself a group.
    groups
        The columns to report (default: every column except ``reference``).
    """
    if not isinstance(values_by_unit, pd.DataFrame):
        raise TypeError(f"values_by_unit must be a DataFrame, got {type(values_by_unit).__name__}")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int | np.integer) or n_resamples < 2:
        raise ValueError(f"n_resamples must be an integer >= 2, got {n_resamples!r}")
    if not callable(statistic) and statistic not in STATISTICS:
        raise ValueError(f"statistic must be one of {STATISTICS} or a callable, got {statistic!r}")
    needs_reference = not callable(statistic) and statistic in REFERENCE_STATISTICS
    if needs_reference and reference is None:
        raise ValueError(f"statistic {statistic!r} compares each group with a reference column; pass reference=")
    if reference is not None and not needs_reference:
        raise ValueError(f"reference is only used by {sorted(REFERENCE_STATISTICS)}, not {statistic!r}")
    if reference is not None and reference not in values_by_unit.columns:
        raise ValueError(f"reference {reference!r} is not a column; columns are {list(values_by_unit.columns)}")
    names = [c for c in values_by_unit.columns if c != reference] if groups is None else list(groups)
    unknown = [g for g in names if g not in values_by_unit.columns or g == reference]
    if unknown:
        raise ValueError(f"unknown group(s) {unknown}; columns are {list(values_by_unit.columns)}")
    if not names:
        raise ValueError("values_by_unit has no group column")
    try:
        values = values_by_unit[names].to_numpy(dtype=float)
    except (TypeError, ValueError):
        bad = next(c for c in names if not pd.api.types.is_numeric_dtype(values_by_unit[c]))
        raise TypeError(f"column {bad!r} of values_by_unit is not numeric") from None
    ref = values_by_unit[reference].to_numpy(dtype=float) if reference is not None else None
    n_units = len(values_by_unit)
    checked = _check_sizes(sizes, n_units)
    compute = _group_statistic(statistic, ref)
    usable = np.column_stack([_usable(values[:, g], ref) for g in range(len(names))])
    name = statistic if isinstance(statistic, str) else getattr(statistic, "__name__", "custom")

    rng = np.random.default_rng(seed)
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # nanmean of an all-NaN subset is NaN, reported as such
        everything = np.arange(n_units)
        full_rows = [{"group": g, "value": compute(values[:, j], everything), "n": int(usable[:, j].sum())}
                     for j, g in enumerate(names)]
        full_values = np.array([row["value"] for row in full_rows], dtype=float)
        rank_rows = []
        for size in checked:
            # argsort of uniform draws gives each row an independent uniformly random permutation;
            # its first `size` entries are a subset drawn without replacement. Sorting the subset fixes the
            # summation order, so equal subsets give bit-identical statistics (sd exactly 0 at full size).
            subsets = np.sort(rng.random((n_resamples, n_units)).argsort(axis=1)[:, :size], axis=1)
            per_resample = np.full((n_resamples, len(names)), np.nan)
            for j, group in enumerate(names):
                column = values[:, j]
                stats_ = _fast(statistic, column, ref, subsets)
                if stats_ is None:
                    stats_ = np.array([compute(column, subset) for subset in subsets])
                per_resample[:, j] = stats_
                defined = stats_[~np.isnan(stats_)]
                rows.append({
                    "group": group, "size": size,
                    "mean": float(defined.mean()) if len(defined) else np.nan,
                    "sd": _sd(defined),
                    "n_resamples": n_resamples, "n_defined": len(defined),
                    "n_units_mean": float(usable[subsets, j].sum(axis=1).mean()),
                })
            rank_rows.append(_resample_rank(size, per_resample, full_values))
    table = pd.DataFrame(rows, columns=["group", "size", "mean", "sd", "n_resamples", "n_defined",
                                        "n_units_mean"])
    full = pd.DataFrame(full_rows, columns=["group", "value", "n"])
    means = table.pivot(index="group", columns="size", values="mean").reindex(names)[list(checked)]
    means[FULL] = full.set_index("group")["value"]
    resample_rank = pd.DataFrame(rank_rows, columns=["size", "spearman_mean", "spearman_sd", "same_ranking",
                                                     "n_defined"])
    return StabilityResult(table=table, full=full, rank_spearman=rank_stability(means),
                           resample_rank=resample_rank, sizes=checked,
                           n_resamples=int(n_resamples), seed=int(seed), statistic=name, reference=reference,
                           n_units=n_units)


def _resample_rank(size: int, per_resample: NDArray[np.float64], full_values: NDArray[np.float64]
                   ) -> dict[str, object]:
    """Spearman of each resample's group values with the full-data values, summarised for one size."""
    rhos = [spearman(row, full_values) for row in per_resample]
    defined = np.array([r for r in rhos if r is not None], dtype=float)
    return {"size": size, "spearman_mean": float(defined.mean()) if len(defined) else np.nan,
            "spearman_sd": _sd(defined), "same_ranking": float(np.mean(np.isclose(defined, 1.0)))
            if len(defined) else np.nan, "n_defined": len(defined)}


def rank_stability(means: pd.DataFrame) -> pd.DataFrame:
    """Spearman correlation of the groups' values between every pair of columns (sizes) of ``means``.

    ``means`` is groups x sizes (for example the published Table 7 means, or :meth:`StabilityResult.means`).
    Groups missing on either side are left out of that pair. Columns: size_a, size_b, spearman, n_groups.
    """
    rows = []
    for a, b in itertools.combinations(list(means.columns), 2):
        x = pd.to_numeric(means[a], errors="coerce").to_numpy(dtype=float)
        y = pd.to_numeric(means[b], errors="coerce").to_numpy(dtype=float)
        both = ~(np.isnan(x) | np.isnan(y))
        rows.append({"size_a": a, "size_b": b, "spearman": spearman(x[both], y[both]), "n_groups": int(both.sum())})
    return pd.DataFrame(rows, columns=["size_a", "size_b", "spearman", "n_groups"])


_CELL = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(?:(?:±|\+-|\+/-|\$\\pm\$)\s*"
                   r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?))?\s*$")


def parse_summary_cell(text: object) -> tuple[float, float | None]:
    """``"0.481 ± 0.012"`` (or ``+-``, ``$\\pm$``, or a bare number) -> (0.481, 0.012)."""
    if isinstance(text, int | float | np.integer | np.floating) and not isinstance(text, bool):
        return float(text), None
    match = _CELL.match(str(text))
    if not match:
        raise ValueError(f"expected a number or 'mean ± sd', got {text!r}")
    return float(match.group(1)), float(match.group(2)) if match.group(2) is not None else None


def parse_summary_table(frame: pd.DataFrame, *, name: str = "<table>") -> pd.DataFrame:
    """A per-group summary table (first column the group, one column per size) -> groups x sizes of means.

    Cells are numbers or ``mean ± sd`` strings as in the paper's Table 7; a bad cell raises
    :class:`empathy.io.DataError` with its row (CSV numbering, header = row 1) and column.
    """
    from empathy.io import DataError

    if frame.shape[1] < 3:
        raise DataError(name, "a summary table needs a group column and at least two size columns")
    group_column = frame.columns[0]
    out = pd.DataFrame(index=frame[group_column].astype(str))
    for column in frame.columns[1:]:
        values = []
        for position, cell in enumerate(frame[column]):
            try:
                values.append(parse_summary_cell(cell)[0])
            except ValueError as exc:
                raise DataError(name, str(exc), row=position + 2, column=str(column)) from None
        out[str(column)] = values
    out.index.name = "group"
    return out


# ---------------------------------------------------------------------------------- from the data model


def metric_terms(outputs: pd.DataFrame, ratings: pd.DataFrame, metric: str, *,
                 sentences: pd.DataFrame | None = None, egm_both_zero: str = "zero") -> pd.DataFrame:
    """Per-item terms of a judge metric (SA, EGM, CA: any registry entry with judge dimensions) for every
    (model, judge), from the terms function of its :data:`empathy.metrics.METRIC_SPECS` entry.

    A judge's scope is the (item, model) outputs it has at least one rating row for in the metric's
    dimensions, as in :func:`empathy.evaluate.compute_metrics`, so the mean of a group's usable terms is
    that group's metric value. EGM needs the sentence counts: ``sentences`` with columns item_id, model,
    sentences_ref, sentences_gen (e.g. ``TextFeatures.frame(outputs)``); ``egm_both_zero`` as for
    :func:`empathy.evaluate.compute_metrics`.

    Returns
    -------
    DataFrame
        item_id, model, judge, term (NaN unless usable), status (:data:`empathy.metrics.OK`, ``MISSING``
        or ``UNDEFINED``).
    """
    spec = m.get_metric(metric)
    if not spec.judged:
        raise ValueError(f"metric must be one of {sorted(m.METRIC_DIMENSIONS)}, got {metric!r}")
    dimensions = spec.dimensions
    # lists first: iterating pandas' Arrow-backed strings element by element costs ~1 us a value
    keys = set(zip(outputs["item_id"].tolist(), outputs["model"].tolist(), strict=True))
    part = ratings[ratings["dimension"].isin(dimensions)]
    part = part[[key in keys for key in zip(part["item_id"].tolist(), part["model"].tolist(), strict=True)]]
    columns = ["item_id", "model", "judge", "term", "status"]
    if part.empty:
        return pd.DataFrame(columns=columns)
    wide = (part.set_index(["item_id", "model", "rater", "dimension"])["value"].unstack("dimension")
            .reindex(columns=list(dimensions)).reset_index())
    inputs = m.TermInputs(ratings={d: wide[d].to_numpy(dtype=float) for d in dimensions},
                          options=m.MetricOptions(egm_both_zero=egm_both_zero))
    if spec.needs_sentences:
        if sentences is None:
            raise ValueError(f"{metric} needs the sentence counts: pass sentences= (item_id, model, sentences_ref, "
                             "sentences_gen), e.g. text_features(outputs).frame(outputs)")
        counts = wide[["item_id", "model"]].merge(
            sentences[["item_id", "model", "sentences_ref", "sentences_gen"]], on=["item_id", "model"],
            how="left")
        inputs = replace(inputs, sentences_ref=counts["sentences_ref"].to_numpy(dtype=float),
                         sentences_gen=counts["sentences_gen"].to_numpy(dtype=float))
    terms, status = spec.terms(inputs)
    out = wide[["item_id", "model", "rater"]].rename(columns={"rater": "judge"})
    out["term"] = np.where(status == m.OK, terms, np.nan)
    out["status"] = status
    return out[columns].sort_values(["judge", "model", "item_id"]).reset_index(drop=True)


def metric_matrix(terms: pd.DataFrame, judge: str | None = None) -> pd.DataFrame:
    """Items x models table of one judge's terms (from :func:`metric_terms`), ready for
    :func:`sample_size_stability`; the judge may be omitted when there is only one."""
    judges = sorted(terms["judge"].unique())
    if judge is None:
        if len(judges) != 1:
            raise ValueError(f"several judges rated this metric; choose one of {judges}")
        judge = judges[0]
    if judge not in judges:
        raise ValueError(f"judge {judge!r} has no terms for this metric; judges are {judges}")
    part = terms[terms["judge"] == judge]
    matrix = part.pivot(index="item_id", columns="model", values="term")
    matrix.columns.name = None
    return matrix


def dimension_matrix(ratings: pd.DataFrame, dimension: str, *, raters: Sequence[str] | None = None
                     ) -> pd.DataFrame:
    """(item_id, model) x raters table of one rating dimension (NaN where a rater gave no value)."""
    part = ratings[ratings["dimension"] == dimension]
    if part.empty:
        known = sorted(ratings["dimension"].unique())
        raise ValueError(f"no ratings on dimension {dimension!r}; dimensions are {known}")
    matrix = part.set_index(["item_id", "model", "rater"])["value"].unstack("rater")
    if raters is not None:
        unknown = [r for r in raters if r not in matrix.columns]
        if unknown:
            raise ValueError(f"rater(s) {unknown} did not rate {dimension!r}; raters are {list(matrix.columns)}")
        matrix = matrix[list(raters)]
    matrix.columns.name = None
    return matrix.astype(float)
