"""The item table for error analysis: one row per output with its per-item terms, counts and disagreement.

:func:`item_table` lays out, for every output (``item_id``, ``model``, ``task``):

* per judge, the per-item terms of every judge metric of the registry (:func:`empathy.metrics.judged_metrics`:
  Eq. 1-3, SA term, EGM term, CA label), taken from :func:`empathy.stability.metric_terms`, which runs the term
  functions of :mod:`empathy.metrics` with the scopes of :func:`empathy.evaluate.compute_metrics`; so the mean of
  a (model, judge) group's non-NaN terms *is* that group's metric value on the Overview (tested on the demo data);
* the per-output term of every text-only metric (:func:`empathy.metrics.text_metrics`: the LD term of Eq. 4,
  ``||z_t - z_g||_2``), from its registry entry's terms function, run within the same groups as
  :func:`empathy.evaluate.compute_metrics` (each model, or each (task, model) with ``by_task``) and with the same
  ``ld_standardization``; and beside it the *distancing shift* (``"LD shift"``,
  :mod:`empathy.distancing.shift`): the generation's distancing minus its reference's on one scale for every
  output, the sort that answers "which generations are more distanced than their reference" (the Eq. 4 term
  measures distance from the model's own pattern, in either direction);
* the distancing counts of each side (nominalizations, impersonal subjects, agentless clauses) and the
  sentence counts, from the same :class:`empathy.evaluate.TextFeatures` the metrics use;
* the judges' disagreement per rating dimension: the range (max - min) of the judges' values;
* the override state of the output, from the applied overrides of the ledger
  (:attr:`empathy.labels.ledger.Ledger.applied`).

Missing and undefined values
----------------------------
A term that cannot be computed is NaN, never 0, and its status column (``"SA:<judge> status"``, ``"LD status"``)
says why: ``"missing"`` (a rating the term needs is empty or absent), ``"undefined"`` (the equation has no
value: SA with E(t) = 0, EGM or LD on a text without sentences, LD of a group with fewer than two usable
items) or ``"not rated"`` (the judge rated none of the metric's dimensions for this output, so the output is
outside that judge's scope). A disagreement range is NaN when fewer than two judges gave a value. Distancing
counts are NaN only when the analyser gave no sentence count; a text without sentences has counts 0.

The helpers :func:`search_items`, :func:`filter_items` and :func:`worst_first` narrow and order the table;
none of them turns a NaN into a number (a NaN never passes a minimum and always sorts last).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from empathy import metrics as m
from empathy.distancing.result import LABELS
from empathy.distancing.shift import SHIFT_COLUMN, distancing_shift
from empathy.escaping import spreadsheet_cell
from empathy.evaluate import TextFeatures
from empathy.io import DIMENSION_RANGES, RATING_REQUIRED, require_frame
from empathy.labels.schema import KEY_COLUMNS

#: The key of a row of the item table.
ITEM_KEYS: tuple[str, str, str] = ("item_id", "model", "task")
#: Status names of the status columns.
STATUS_NAMES: dict[int, str] = {m.OK: "ok", m.MISSING: "missing", m.UNDEFINED: "undefined"}
NOT_RATED = "not rated"
SIDES: tuple[str, str] = ("ref", "gen")
#: Sentence and distancing-count columns, in table order.
COUNT_COLUMNS: tuple[str, ...] = ("sentences_ref", "sentences_gen",
                                  *(f"{label}_{side}" for label in LABELS for side in SIDES))
#: Text columns (searched by :func:`search_items`).
TEXT_COLUMNS: tuple[str, str] = ("reference", "generation")
OVERRIDE_COLUMNS: tuple[str, str] = ("overrides", "override_dimensions")


def term_column(metric: str, judge: str | None = None) -> str:
    """Column of a term: ``"SA:<judge>"`` for a judge metric, the metric's name (``"LD"``) for a text-only one."""
    if metric not in m.METRIC_SPECS:
        raise ValueError(f"metric must be one of {tuple(m.METRIC_SPECS)}, got {metric!r}")
    if not m.METRIC_SPECS[metric].judged:
        return metric
    if judge is None:
        raise ValueError(f"{metric} has one term per judge; pass the judge")
    return f"{metric}:{judge}"


def status_column(metric: str, judge: str | None = None) -> str:
    """Column saying why a term is NaN (``"ok"``, ``"missing"``, ``"undefined"``, ``"not rated"``)."""
    return f"{term_column(metric, judge)} status"


def range_column(dimension: str) -> str:
    """Column of the judges' disagreement on a rating dimension: ``"range:<dimension>"``."""
    return f"range:{dimension}"


def _check_features(features: TextFeatures, n: int) -> None:
    if not isinstance(features, TextFeatures):
        raise TypeError(f"features must be a TextFeatures (empathy.evaluate.text_features), "
                        f"got {type(features).__name__}")
    shapes = {"sentences_ref": features.sentences_ref.shape, "sentences_gen": features.sentences_gen.shape,
              "densities_ref": features.densities_ref.shape, "densities_gen": features.densities_gen.shape}
    expected = {"sentences_ref": (n,), "sentences_gen": (n,), "densities_ref": (n, len(LABELS)),
                "densities_gen": (n, len(LABELS))}
    wrong = {k: v for k, v in shapes.items() if v != expected[k]}
    if wrong:
        raise ValueError(f"features do not match the {n} outputs: shapes {wrong} (expected {expected}); "
                         "compute them with text_features(outputs) on the same outputs")


def _counts(sentences: np.ndarray, densities: np.ndarray) -> np.ndarray:
    """Counts per label back from densities (count / sentences): exact after rounding for any real text.

    A text without sentences has no span, so its counts are 0 (its densities are NaN); an unknown sentence
    count gives NaN counts.
    """
    with np.errstate(invalid="ignore"):
        counts = np.rint(densities * sentences[:, None])
    counts[sentences == 0] = 0.0
    counts[np.isnan(sentences)] = np.nan
    return counts


def _judge_terms(keys: pd.MultiIndex, outputs: pd.DataFrame, ratings: pd.DataFrame, sentences: pd.DataFrame
                 ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    from empathy.stability import metric_terms  # here: it imports scipy.stats (seconds), which the table needs not

    terms: dict[str, np.ndarray] = {}
    statuses: dict[str, np.ndarray] = {}
    for metric in m.judged_metrics():
        needs = m.METRIC_SPECS[metric].needs_sentences
        part = metric_terms(outputs, ratings, metric, sentences=sentences if needs else None)
        for judge, rows in part.groupby("judge", sort=True):
            position = keys.get_indexer(pd.MultiIndex.from_frame(rows[["item_id", "model"]]))
            column = term_column(metric, str(judge))
            values = np.full(len(keys), np.nan)
            values[position] = rows["term"].to_numpy(dtype=float)
            status = np.full(len(keys), NOT_RATED, dtype=object)
            status[position] = [STATUS_NAMES[int(s)] for s in rows["status"]]
            terms[column] = values
            statuses[status_column(metric, str(judge))] = status
    return terms, statuses


def _text_terms(spec: m.MetricSpec, groups: pd.Series, features: TextFeatures, options: m.MetricOptions
                ) -> tuple[np.ndarray, np.ndarray]:
    """Per output, the term of a text-only metric and its status name, run per group when its terms depend on
    the group (LD standardises within each model), as :meth:`empathy.evaluate.MetricPlan.evaluate` does."""
    terms = np.full(len(groups), np.nan)
    status = np.full(len(groups), STATUS_NAMES[m.UNDEFINED], dtype=object)
    every = np.arange(len(groups))
    for index in (groups.groupby(groups, sort=True).indices.values() if spec.grouped else [every]):
        inputs = m.TermInputs(
            sentences_ref=features.sentences_ref[index].astype(float) if spec.needs_sentences else None,
            sentences_gen=features.sentences_gen[index].astype(float) if spec.needs_sentences else None,
            densities_ref=features.densities_ref[index] if spec.needs_distancing else None,
            densities_gen=features.densities_gen[index] if spec.needs_distancing else None, options=options)
        part, codes = spec.terms(inputs)
        terms[index] = part
        status[index] = [STATUS_NAMES[int(c)] for c in codes]
    return terms, status


def _shift(features: TextFeatures) -> tuple[np.ndarray, np.ndarray]:
    """The distancing shift of every output (:mod:`empathy.distancing.shift`) and its status name."""
    shift = distancing_shift(features.densities_ref, features.densities_gen)
    return shift, np.where(np.isnan(shift), STATUS_NAMES[m.UNDEFINED], STATUS_NAMES[m.OK]).astype(object)


def _dimension_order(dimensions: Sequence[str]) -> list[str]:
    paper = [d for d in DIMENSION_RANGES if d in dimensions]
    return paper + sorted(d for d in dimensions if d not in DIMENSION_RANGES)


def _ranges(keys: pd.MultiIndex, ratings: pd.DataFrame) -> dict[str, np.ndarray]:
    """Per dimension, max - min of the judges' non-missing values (NaN with fewer than two values)."""
    out: dict[str, np.ndarray] = {}
    inside = pd.MultiIndex.from_frame(ratings[["item_id", "model"]]).isin(keys)
    part = ratings[inside]
    if part.empty:
        return out
    values = part["value"].to_numpy(dtype=float)
    known = ~np.isnan(values)
    grouped = pd.DataFrame({"item_id": part["item_id"].to_numpy()[known], "model": part["model"].to_numpy()[known],
                            "dimension": part["dimension"].to_numpy()[known], "value": values[known]})
    stats = grouped.groupby(["dimension", "item_id", "model"], sort=False)["value"].agg(["max", "min", "count"])
    for dimension in _dimension_order(sorted(part["dimension"].astype(str).unique())):
        column = np.full(len(keys), np.nan)
        if dimension in stats.index.get_level_values(0):
            rows = stats.xs(dimension, level="dimension")
            rows = rows[rows["count"] >= 2]
            position = keys.get_indexer(rows.index)
            column[position] = (rows["max"] - rows["min"]).to_numpy(dtype=float)
        out[range_column(dimension)] = column
    return out


def _override_state(keys: pd.MultiIndex, overrides: pd.DataFrame | None) -> tuple[np.ndarray, np.ndarray]:
    count = np.zeros(len(keys), dtype=np.int64)
    dimensions = np.full(len(keys), "", dtype=object)
    if overrides is None or len(overrides) == 0:
        return count, dimensions
    require_frame(overrides, KEY_COLUMNS, "overrides")
    table = overrides.drop_duplicates(list(KEY_COLUMNS), keep="last")
    position = keys.get_indexer(pd.MultiIndex.from_frame(table[["item_id", "model"]].astype(str)))
    table = table.assign(_row=position)[position >= 0]
    for row, part in table.groupby("_row", sort=False):
        count[int(row)] = len(part)
        dimensions[int(row)] = ", ".join(_dimension_order(sorted(part["dimension"].astype(str).unique())))
    return count, dimensions


def item_table(outputs: pd.DataFrame, ratings: pd.DataFrame, features: TextFeatures, *,
               overrides: pd.DataFrame | None = None, by_task: bool = False, ld_standardization: str = "separate",
               include_ld: bool = True) -> pd.DataFrame:
    """One row per output with its Eq. 1-4 terms per judge, distancing counts, disagreement and override state.

    Parameters
    ----------
    outputs
        Validated outputs (item_id, model, reference, generation; task optional), one row per (item, model).
    ratings
        Long-form ratings: the judges' own, or the effective ones with the overrides applied
        (:func:`empathy.labels.ledger.apply_overrides`); the terms and ranges are computed from exactly these.
    features
        :func:`empathy.evaluate.text_features` of ``outputs`` (same rows, same order).
    overrides
        Applied overrides (:attr:`empathy.labels.ledger.Ledger.applied`); only their keys are read, to mark
        which outputs a human has corrected. ``None`` or empty: no output is marked.
    by_task, ld_standardization, include_ld
        As for :func:`empathy.evaluate.compute_metrics`: LD is standardised within each model (or each
        (task, model) with ``by_task``), ``"separate"`` per side as in Eq. 4 or ``"reference"``.

    Returns
    -------
    DataFrame
        In outputs order: ``item_id, model, task``; per judge metric and judge ``"SA:<judge>"``,
        ``"EGM:<judge>"``, ``"CA:<judge>"`` (a column only for judges that rated the metric's dimensions);
        ``"LD"`` and ``"LD shift"``; ``"range:<dimension>"`` per rating dimension; :data:`COUNT_COLUMNS`;
        ``overrides`` (number of overridden ratings of the output) and ``override_dimensions`` (their
        dimensions, ``""`` if none); one ``"<term> status"`` column per term column; ``reference`` and
        ``generation``. A term that cannot be computed is NaN and its status says why (module docstring); it is never 0.

    Raises
    ------
    TypeError, ValueError
        For a missing column, features of other outputs, duplicate outputs, or an invalid rating value
        (the message of :mod:`empathy.metrics` names the argument and position).
    """
    require_frame(outputs, ("item_id", "model", *TEXT_COLUMNS), "outputs")
    require_frame(ratings, RATING_REQUIRED, "ratings")
    if ld_standardization not in m.LD_STANDARDIZATIONS:
        raise ValueError(f"ld_standardization must be one of {m.LD_STANDARDIZATIONS}, got {ld_standardization!r}")
    outputs = outputs.reset_index(drop=True)
    if "task" not in outputs.columns:
        outputs = outputs.assign(task="")
    _check_features(features, len(outputs))
    keys = pd.MultiIndex.from_frame(outputs[["item_id", "model"]].astype(str))
    if keys.has_duplicates:
        item, model = keys[keys.duplicated()][0]
        raise ValueError(f"outputs have more than one row for (item_id, model) = ({item}, {model})")

    table = outputs[list(ITEM_KEYS)].copy()
    sentences = features.frame(outputs)
    terms, statuses = _judge_terms(keys, outputs, ratings, sentences) if len(ratings) else ({}, {})
    for column, values in terms.items():
        table[column] = values
    groups = (outputs["task"].astype(str) + "\x00" + outputs["model"].astype(str)) if by_task \
        else outputs["model"].astype(str)
    options = m.MetricOptions(ld_standardization=ld_standardization)
    for name in m.text_metrics():
        spec = m.METRIC_SPECS[name]
        if spec.needs_distancing and not include_ld:
            continue
        table[term_column(name)], statuses[status_column(name)] = _text_terms(spec, groups, features, options)
    if include_ld:
        table[SHIFT_COLUMN], statuses[f"{SHIFT_COLUMN} status"] = _shift(features)
    for column, values in (_ranges(keys, ratings) if len(ratings) else {}).items():
        table[column] = values
    table["sentences_ref"] = features.sentences_ref.astype(float)
    table["sentences_gen"] = features.sentences_gen.astype(float)
    counts = {"ref": _counts(features.sentences_ref.astype(float), features.densities_ref.astype(float)),
              "gen": _counts(features.sentences_gen.astype(float), features.densities_gen.astype(float))}
    for position, label in enumerate(LABELS):
        for side in SIDES:
            table[f"{label}_{side}"] = counts[side][:, position]
    table["overrides"], table["override_dimensions"] = _override_state(keys, overrides)
    for column, values in statuses.items():
        table[column] = values
    for column in TEXT_COLUMNS:
        table[column] = outputs[column].to_numpy()
    return table


def term_columns(table: pd.DataFrame) -> list[str]:
    """The term columns of an item table (``SA:<judge>``... of the judge metrics and ``LD`` of the text-only
    ones, as the registry names them), in table order."""
    prefixes = tuple(f"{metric}:" for metric in m.judged_metrics())
    text = set(m.text_metrics())
    return [c for c in table.columns
            if (c in text or str(c).startswith(prefixes)) and not str(c).endswith(" status")]


def _metric_of(column: str) -> m.MetricSpec | None:
    """The registry entry whose term a column holds (``SA:<judge>``, ``LD``), ``None`` for any other column."""
    name, colon, _ = str(column).partition(":")
    spec = m.METRIC_SPECS.get(name)
    if spec is None or str(column).endswith(" status") or (colon != "") != spec.judged:
        return None
    return spec


def search_items(table: pd.DataFrame, query: str) -> pd.DataFrame:
    """Rows whose reference, generation or item_id contains ``query`` (case-insensitive, literal substring).

    An empty or blank query returns the table unchanged.
    """
    if not isinstance(query, str):
        raise TypeError(f"query must be a string, got {type(query).__name__}")
    require_frame(table, ("item_id", *TEXT_COLUMNS), "the item table")
    needle = query.strip().casefold()
    if not needle:
        return table
    hit = np.zeros(len(table), dtype=bool)
    for column in ("item_id", *TEXT_COLUMNS):
        hit |= table[column].astype(str).str.casefold().str.contains(needle, regex=False).to_numpy(dtype=bool)
    return table[hit]


def filter_items(table: pd.DataFrame, *, min_counts: Mapping[str, float] | None = None,
                 models: Sequence[str] | None = None, overridden: bool | None = None) -> pd.DataFrame:
    """Rows with at least ``min_counts[column]`` in each given numeric column, of ``models``, (not) overridden.

    ``min_counts`` maps a numeric column (a count of :data:`COUNT_COLUMNS`, or a term or range) to its
    minimum; a NaN never passes. ``models``: keep these models only (``None``: all). ``overridden``: ``True``
    keeps outputs with at least one override, ``False`` those without, ``None`` both.
    """
    require_frame(table, ("model",), "the item table")
    keep = np.ones(len(table), dtype=bool)
    for column, minimum in (min_counts or {}).items():
        if column not in table.columns or not pd.api.types.is_numeric_dtype(table[column]):
            numeric = [c for c in table.columns if pd.api.types.is_numeric_dtype(table[c])]
            raise ValueError(f"min_counts: {column!r} is not a numeric column of the item table; use one of "
                             f"{numeric}")
        if isinstance(minimum, bool) or not isinstance(minimum, int | float | np.integer | np.floating) \
                or np.isnan(minimum):
            raise ValueError(f"min_counts[{column!r}] must be a number, got {minimum!r}")
        keep &= (table[column].to_numpy(dtype=float) >= float(minimum))  # NaN >= x is False
    if models is not None:
        if isinstance(models, str):
            raise TypeError("models must be a sequence of model names, not one string")
        keep &= table["model"].isin(list(models)).to_numpy(dtype=bool)
    if overridden is not None:
        require_frame(table, ("overrides",), "the item table")
        has = table["overrides"].to_numpy() > 0
        keep &= has if overridden else ~has
    return table[keep]


def worst_first(table: pd.DataFrame, column: str, *, absolute: bool = False) -> pd.DataFrame:
    """The rows sorted by ``column`` from the worst down, NaN last.

    "Worst" follows the direction of the column's metric in the registry (:attr:`empathy.metrics.MetricSpec.better`):
    the largest term first for a lower-is-better metric (all four of the paper's are failures that grow with the
    value, 0 = none), the smallest first for a higher-is-better one. Disagreement ranges and counts grow with
    trouble too, so they sort largest first. ``absolute``: sort by magnitude, largest first, e.g. to bring an SA
    term that is far below 0 (a generation more intense than its reference) up with the strongly attenuated
    ones. Ties keep the table's order (stable sort).
    """
    if column not in table.columns or not pd.api.types.is_numeric_dtype(table[column]):
        raise ValueError(f"cannot sort by {column!r}: not a numeric column of the item table; numeric columns "
                         f"are {[c for c in table.columns if pd.api.types.is_numeric_dtype(table[c])]}")
    values = table[column].to_numpy(dtype=float)
    spec = _metric_of(column)
    largest_worst = spec is None or spec.lower_is_better
    key = -np.abs(values) if absolute else (-values if largest_worst else values)
    order = np.argsort(np.where(np.isnan(key), np.inf, key), kind="stable")
    return table.iloc[order]


def items_csv(table: pd.DataFrame, signature: str) -> bytes:
    """The item table as a CSV for people (spreadsheets): every text cell and header through
    :func:`empathy.escaping.spreadsheet_cell`, NaN as an empty cell, and a ``signature`` column (the
    reproducibility signature of the numbers, :mod:`empathy.signature`) on every row."""
    out = table.copy()
    for column in out.columns:
        if not pd.api.types.is_numeric_dtype(out[column]) and not pd.api.types.is_bool_dtype(out[column]):
            out[column] = [spreadsheet_cell(str(v)) if isinstance(v, str) else v for v in out[column]]
    out["signature"] = spreadsheet_cell(str(signature))
    out.columns = [spreadsheet_cell(str(c)) for c in out.columns]
    return out.to_csv(index=False).encode("utf-8")


# ------------------------------------------------------------------------------------------ incremental table


def _output_codes(keys: pd.MultiIndex, ratings: pd.DataFrame) -> np.ndarray:
    """The row of ``keys`` (the outputs) each rating row belongs to, -1 for a rating of no listed output."""
    if not len(ratings):
        return np.empty(0, dtype=np.int64)
    return keys.get_indexer(pd.MultiIndex.from_arrays([ratings["item_id"].astype(str),
                                                       ratings["model"].astype(str)]))


def _narrow(codes: np.ndarray, count: int) -> np.ndarray:
    """``codes`` (-1 .. ``count`` - 1) in the smallest signed integer type that holds them: the codes of a
    judge or a dimension per rating row are one byte each, not eight (issue 25, the worker's memory)."""
    return codes.astype(np.int8 if count < 127 else np.int16 if count < 32_767 else np.int32)


def _kept(values: np.ndarray, rows: np.ndarray | None) -> np.ndarray:
    """``values[rows]`` for a mask, or ``values`` itself (no copy) when ``rows`` is ``None`` (every row)."""
    return values if rows is None else values[rows]


def _factorized(column: pd.Series, rows: np.ndarray | None) -> tuple[np.ndarray, pd.Index]:
    """Codes of ``column``'s values as text on ``rows`` (a mask; ``None``: every row) and the names they stand for
    (each once), in the smallest integer type that holds them (-1: a missing value)."""
    codes, names = pd.factorize(column)
    text = pd.Index([str(name) for name in names])
    unique, remap = np.unique(np.asarray(text, dtype=object), return_inverse=True)
    # two values with one text are one name; the appended -1 is what a missing value's code (-1) picks
    remap = _narrow(np.append(remap.reshape(-1), -1), len(unique))
    return _kept(remap[codes], rows), pd.Index(unique)


def _located(codes: np.ndarray) -> np.ndarray | None:
    """The mask of the rating rows located on an output (``codes`` >= 0), ``None`` when every row is."""
    inside = codes >= 0
    return None if inside.all() else inside


def _units(pair: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(pair, return_inverse=True)`` for codes below ``size``, by marking a table of that size (linear;
    a sort of millions of codes was seconds), or by ``np.unique`` when the table would be large."""
    if size > 50_000_000:
        return np.unique(pair, return_inverse=True)
    seen = np.zeros(size, dtype=bool)
    seen[pair] = True
    units = np.flatnonzero(seen)
    lookup = np.zeros(size, dtype=np.int64)
    lookup[units] = np.arange(len(units))
    return units, lookup[pair]


def _fast_judge_terms(n_outputs: int, codes: np.ndarray, ratings: pd.DataFrame, sentences_ref: np.ndarray,
                      sentences_gen: np.ndarray) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]] | None:
    """:func:`_judge_terms` on rating rows already located (``codes``: the output row of each), with arrays in
    place of :func:`empathy.stability.metric_terms`' string keys, unstack and merge (seconds at millions of rows).

    The same terms function of each registry entry gets the same inputs (each (output, judge)'s values of the
    metric's dimensions, NaN where absent; the output's sentence counts), so the terms are the same numbers.
    ``None`` when a (output, rater, dimension) key repeats (``metric_terms`` refuses that: the caller runs it
    for its error).
    """
    terms: dict[str, np.ndarray] = {}
    statuses: dict[str, np.ndarray] = {}
    if not (codes >= 0).any():
        return terms, statuses
    # every rating row on an output (the usual case): the columns are read in place, not copied
    inside = _located(codes)
    # codes of the Series itself (Arrow strings factorised without a Python object per row), then the rows kept
    rater_codes, rater_names = pd.factorize(ratings["rater"])
    rater_codes = _kept(_narrow(rater_codes, len(rater_names)), inside)
    dimension_codes, dimension_names = _factorized(ratings["dimension"], inside)
    values = _kept(ratings["value"].to_numpy(dtype=float), inside)
    output = _kept(codes, inside)
    n_raters = len(rater_names)
    for metric in m.judged_metrics():
        spec = m.METRIC_SPECS[metric]
        wanted = [k for k, name in enumerate(dimension_names) if name in spec.dimensions]
        if not wanted:
            continue
        rows = np.flatnonzero(np.isin(dimension_codes, wanted))
        pair = output[rows].astype(np.int64) * n_raters + rater_codes[rows]
        units, unit_of_row = _units(pair, n_outputs * n_raters)
        columns = {}
        for dimension in spec.dimensions:
            column = np.full(len(units), np.nan)
            if dimension in dimension_names:
                mine = np.flatnonzero(dimension_codes[rows] == dimension_names.get_loc(dimension))
                if len(mine) and np.bincount(unit_of_row[mine], minlength=len(units)).max() > 1:
                    return None
                column[unit_of_row[mine]] = values[rows[mine]]
            columns[dimension] = column
        unit_output, unit_rater = units // n_raters, units % n_raters
        inputs = m.TermInputs(ratings=columns, options=m.MetricOptions(egm_both_zero="zero"))
        if spec.needs_sentences:
            inputs = m.TermInputs(ratings=columns, options=inputs.options,
                                  sentences_ref=sentences_ref[unit_output], sentences_gen=sentences_gen[unit_output])
        found, codes_of_unit = spec.terms(inputs)
        found = np.where(codes_of_unit == m.OK, found, np.nan)
        for rater in sorted(np.unique(unit_rater), key=lambda r: rater_names[r]):
            mine = unit_rater == rater
            position = unit_output[mine]
            column = term_column(metric, str(rater_names[rater]))
            term = np.full(n_outputs, np.nan)
            term[position] = found[mine]
            status = np.full(n_outputs, NOT_RATED, dtype=object)
            status[position] = [STATUS_NAMES[int(s)] for s in codes_of_unit[mine]]
            terms[column] = term
            statuses[status_column(metric, str(rater_names[rater]))] = status
    return terms, statuses


def _fast_ranges(n_outputs: int, codes: np.ndarray, ratings: pd.DataFrame) -> dict[str, np.ndarray]:
    """:func:`_ranges` on rating rows already located: per dimension, max - min of the known values of each
    output (NaN with fewer than two), by array reductions instead of a groupby on string keys."""
    out: dict[str, np.ndarray] = {}
    if not (codes >= 0).any():
        return out
    inside = _located(codes)
    dimension_codes, dimension_names = _factorized(ratings["dimension"], inside)
    values = _kept(ratings["value"].to_numpy(dtype=float), inside)
    output = _kept(codes, inside)
    for dimension in _dimension_order([str(d) for d in dimension_names]):
        rows = np.flatnonzero((dimension_codes == dimension_names.get_loc(dimension)) & ~np.isnan(values))
        count = np.bincount(output[rows], minlength=n_outputs)
        high = np.full(n_outputs, -np.inf)
        low = np.full(n_outputs, np.inf)
        np.maximum.at(high, output[rows], values[rows])
        np.minimum.at(low, output[rows], values[rows])
        column = np.full(n_outputs, np.nan)
        two = count >= 2
        column[two] = high[two] - low[two]
        out[range_column(dimension)] = column
    return out


def _override_keys(overrides: pd.DataFrame | None) -> set[tuple[str, str, str, str]]:
    if overrides is None or len(overrides) == 0:
        return set()
    require_frame(overrides, KEY_COLUMNS, "overrides")
    return set(zip(*(overrides[c].astype(str).tolist() for c in KEY_COLUMNS), strict=True))


class ItemTable:
    """:func:`item_table` of one data set, kept up to date by patching the outputs a change touches.

    What does not depend on the ratings (the keys, the text-only terms such as LD, the distancing counts) is
    computed once; the judge terms, the judges' ranges and the override state are computed for every output at
    the first call and, after that, again only for the outputs whose rating values or overrides changed (a decision
    changes one output's terms: its row is recomputed, not the table). Every call returns a new frame (the columns
    it changed are new arrays), so a frame handed out earlier never changes under its reader.

    The texts (``reference``, ``generation``) are not copied into the table (at 200,000 outputs they were a copy
    of every text per table); :meth:`with_texts` adds them to the rows asked for. ``outputs``, ``ratings`` and
    ``features`` as for :func:`item_table`; ``ratings`` are the data set's own ratings: the ratings handed to
    :meth:`table` are these or derived from them with the same rows in the same order and other values (what
    :class:`empathy.review.EffectiveRatings` gives), else (rows added or removed) the table is computed whole.
    """

    def __init__(self, outputs: pd.DataFrame, ratings: pd.DataFrame, features: TextFeatures, *,
                 by_task: bool = False, ld_standardization: str = "separate", include_ld: bool = True,
                 codes: np.ndarray | None = None) -> None:
        require_frame(outputs, ("item_id", "model", *TEXT_COLUMNS), "outputs")
        require_frame(ratings, RATING_REQUIRED, "ratings")
        if ld_standardization not in m.LD_STANDARDIZATIONS:
            raise ValueError(f"ld_standardization must be one of {m.LD_STANDARDIZATIONS}, got "
                             f"{ld_standardization!r}")
        outputs = outputs.reset_index(drop=True)
        if "task" not in outputs.columns:
            outputs = outputs.assign(task="")
        _check_features(features, len(outputs))
        self.outputs = outputs
        self.keys = pd.MultiIndex.from_frame(outputs[["item_id", "model"]].astype(str))
        if self.keys.has_duplicates:
            item, model = self.keys[self.keys.duplicated()][0]
            raise ValueError(f"outputs have more than one row for (item_id, model) = ({item}, {model})")
        self.n_ratings = len(ratings)
        #: the output row of each rating row (-1: a rating of no listed output), found once
        self.codes = _output_codes(self.keys, ratings) if codes is None else np.asarray(codes, dtype=np.int64)
        if len(self.codes) != len(ratings):
            raise ValueError(f"codes: {len(self.codes)} positions for {len(ratings)} rating rows")
        self.sentences_ref = features.sentences_ref.astype(float)
        self.sentences_gen = features.sentences_gen.astype(float)
        base = outputs[list(ITEM_KEYS)].copy()
        groups = (outputs["task"].astype(str) + "\x00" + outputs["model"].astype(str)) if by_task \
            else outputs["model"].astype(str)
        options = m.MetricOptions(ld_standardization=ld_standardization)
        self._text_terms: dict[str, np.ndarray] = {}
        self._text_statuses: dict[str, np.ndarray] = {}
        for name in m.text_metrics():
            spec = m.METRIC_SPECS[name]
            if spec.needs_distancing and not include_ld:
                continue
            self._text_terms[term_column(name)], self._text_statuses[status_column(name)] = _text_terms(
                spec, groups, features, options)
        if include_ld:
            self._text_terms[SHIFT_COLUMN], self._text_statuses[f"{SHIFT_COLUMN} status"] = _shift(features)
        counts = {"ref": _counts(self.sentences_ref, features.densities_ref.astype(float)),
                  "gen": _counts(self.sentences_gen, features.densities_gen.astype(float))}
        self._counts = {"sentences_ref": self.sentences_ref, "sentences_gen": self.sentences_gen}
        for position, label in enumerate(LABELS):
            for side in SIDES:
                self._counts[f"{label}_{side}"] = counts[side][:, position]
        self._base = base
        self._values: np.ndarray | None = None
        self._overrides: set[tuple[str, str, str, str]] = set()
        self._rated: tuple[dict[str, np.ndarray], dict[str, np.ndarray], dict[str, np.ndarray]] | None = None
        self._override_count = np.zeros(len(outputs), dtype=np.int64)
        self._override_dimensions = np.full(len(outputs), "", dtype=object)
        self._table: pd.DataFrame | None = None
        #: outputs recomputed by the calls so far (the whole table counts every output): what a test counts
        self.rows_computed = 0

    # -- the parts that read the ratings
    def _rated_parts(self, codes: np.ndarray, ratings: pd.DataFrame, n_outputs: int, sentences_ref: np.ndarray,
                     sentences_gen: np.ndarray, outputs: pd.DataFrame, keys: pd.MultiIndex
                     ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], dict[str, np.ndarray]]:
        if not len(ratings):
            return {}, {}, {}
        found = _fast_judge_terms(n_outputs, codes, ratings, sentences_ref, sentences_gen)
        if found is None:  # a repeated key: metric_terms says which, as item_table does
            frame = outputs[["item_id", "model", "task"]].assign(sentences_ref=sentences_ref,
                                                                 sentences_gen=sentences_gen)
            found = _judge_terms(keys, outputs, ratings, frame)
        terms, statuses = found
        return terms, statuses, _fast_ranges(n_outputs, codes, ratings)

    def _whole(self, ratings: pd.DataFrame, overrides: pd.DataFrame | None) -> None:
        codes = self.codes if len(ratings) == self.n_ratings else _output_codes(self.keys, ratings)
        self._rated = self._rated_parts(codes, ratings, len(self.outputs), self.sentences_ref, self.sentences_gen,
                                        self.outputs, self.keys)
        self._override_count, self._override_dimensions = _override_state(self.keys, overrides)
        self.rows_computed += len(self.outputs)

    def _patch(self, rows: np.ndarray, ratings: pd.DataFrame, overrides: pd.DataFrame | None) -> bool:
        """Recompute the outputs ``rows``; ``False`` when their terms name a column the table lacks (then the
        table is computed whole)."""
        assert self._rated is not None
        mine = np.flatnonzero(np.isin(self.codes, rows))
        local = np.searchsorted(rows, self.codes[mine])
        part = ratings.iloc[mine]
        keys = self.keys[rows]
        terms, statuses, ranges = self._rated_parts(local, part, len(rows), self.sentences_ref[rows],
                                                    self.sentences_gen[rows], self.outputs.iloc[rows], keys)
        old_terms, old_statuses, old_ranges = self._rated
        if not set(terms) <= set(old_terms) or not set(ranges) <= set(old_ranges):
            return False
        new_terms, new_statuses, new_ranges = dict(old_terms), dict(old_statuses), dict(old_ranges)
        for column in old_terms:
            values = old_terms[column].copy()
            values[rows] = terms.get(column, np.nan)
            new_terms[column] = values
            status_name = f"{column} status"
            status = old_statuses[status_name].copy()
            status[rows] = statuses[status_name] if status_name in statuses else NOT_RATED
            new_statuses[status_name] = status
        for column in old_ranges:
            values = old_ranges[column].copy()
            values[rows] = ranges.get(column, np.nan)
            new_ranges[column] = values
        self._rated = (new_terms, new_statuses, new_ranges)
        if overrides is not None and len(overrides):
            wanted = set(zip(keys.get_level_values(0), keys.get_level_values(1), strict=True))
            pairs = zip(overrides["item_id"].astype(str).tolist(), overrides["model"].astype(str).tolist(),
                        strict=True)
            overrides = overrides[[pair in wanted for pair in pairs]]
        count, dimensions = _override_state(keys, overrides)
        self._override_count = self._override_count.copy()
        self._override_count[rows] = count
        self._override_dimensions = self._override_dimensions.copy()
        self._override_dimensions[rows] = dimensions
        self.rows_computed += len(rows)
        return True

    def _changed_rows(self, ratings: pd.DataFrame, overrides: pd.DataFrame | None,
                      keys: set[tuple[str, str, str, str]]) -> np.ndarray | None:
        """The outputs whose values or overrides differ from the last call's, ``None`` when the table must be
        computed whole (the first call, or rating rows added or removed)."""
        if self._values is None or len(ratings) != self.n_ratings or len(self._values) != self.n_ratings:
            return None
        values = ratings["value"].to_numpy(dtype=float)
        before = self._values
        moved = np.flatnonzero(~((values == before) | (np.isnan(values) & np.isnan(before))))
        rows = set(self.codes[moved].tolist())
        changed = keys ^ self._overrides
        if changed:
            rows |= set(self.keys.get_indexer([(item, model) for item, model, _, _ in changed]).tolist())
        rows.discard(-1)
        return np.array(sorted(rows), dtype=np.int64)

    def table(self, ratings: pd.DataFrame, overrides: pd.DataFrame | None = None) -> pd.DataFrame:
        """:func:`item_table` of ``ratings`` and ``overrides`` without the text columns (the same columns in the
        same order otherwise, the same values): the outputs that changed since the last call recomputed, or
        the whole table when rows were added or removed."""
        require_frame(ratings, RATING_REQUIRED, "ratings")
        keys = _override_keys(overrides)
        rows = self._changed_rows(ratings, overrides, keys)
        if rows is not None and len(rows) == 0 and self._table is not None:
            return self._table
        if rows is None or not self._patch(rows, ratings, overrides):
            self._whole(ratings, overrides)
        self._values = ratings["value"].to_numpy(dtype=float, copy=True) if len(ratings) == self.n_ratings \
            else None
        self._overrides = keys
        self._table = self._assemble()
        return self._table

    def _assemble(self) -> pd.DataFrame:
        assert self._rated is not None
        terms, statuses, ranges = self._rated
        columns: dict[str, object] = {c: self._base[c] for c in ITEM_KEYS}
        columns.update(terms)
        columns.update(self._text_terms)
        columns.update(ranges)
        columns.update(self._counts)
        columns["overrides"] = self._override_count
        columns["override_dimensions"] = self._override_dimensions
        columns.update(statuses)
        columns.update(self._text_statuses)
        return pd.DataFrame(columns, index=self._base.index, copy=False)

    def with_texts(self, rows: pd.DataFrame) -> pd.DataFrame:
        """``rows`` of a table of :meth:`table` (any subset, any order) with their ``reference`` and
        ``generation``: :func:`item_table`'s columns."""
        out = rows.copy()
        positions = rows.index.to_numpy()
        for column in TEXT_COLUMNS:  # only these rows' texts converted (not every output's)
            out[column] = self.outputs[column].iloc[positions].to_numpy()
        return out


def search_mask(table: pd.DataFrame, texts: pd.DataFrame, query: str) -> np.ndarray:
    """:func:`search_items` as a boolean mask over ``table``'s rows, the texts taken from ``texts`` (the outputs,
    row for row), so a table without its text columns can be searched."""
    if not isinstance(query, str):
        raise TypeError(f"query must be a string, got {type(query).__name__}")
    needle = query.strip().casefold()
    if not needle:
        return np.ones(len(table), dtype=bool)
    hit = table["item_id"].astype(str).str.casefold().str.contains(needle, regex=False).to_numpy(dtype=bool)
    for column in TEXT_COLUMNS:
        hit = hit | texts[column].astype(str).str.casefold().str.contains(needle, regex=False).to_numpy(dtype=bool)
    return hit
