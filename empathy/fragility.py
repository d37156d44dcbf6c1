"""How fragile a model ranking is: how few labels or how small a score change reorders two adjacent models.

Everything here reads the per-item terms of the metric plan (:meth:`empathy.evaluate.MetricPlan.item_terms`):
the same terms functions and the same scope as the results table, so a group's value here is its value there.
All four equations are means of per-item terms, which is what makes the answers below exact and linear in the
number of terms. The rankings follow the one rank convention (:func:`empathy.evaluate.rank_by_direction`): within
each (task, metric, judge) the models are sorted from the best value in the metric's direction
(:attr:`empathy.metrics.MetricSpec.better`; lower for all four of the paper's metrics) to the worst, ties by model
name, and each adjacent pair ``better``, ``worse`` is examined (``rank``: the better model's rank under that
convention). *Reordering* the pair means making ``better`` strictly worse than ``worse`` (a tie is not a reversal).
The text below describes a lower-is-better metric; for a higher-is-better one every move is mirrored.

* **Binary metrics (CA)**: the fewest label flips, exact. Flipping one of ``better``'s usable 0 labels to 1
  raises its share by ``1/n_better``; flipping one of ``worse``'s 1 labels to 0 lowers its share by
  ``1/n_worse``. :func:`flips_to_reverse` tries every number ``x`` of flips on ``better`` (``0 .. zeros``) and
  takes the fewest flips ``y`` on ``worse`` that make ``(k_a + x) / n_a > (k_b - y) / n_b`` (integer arithmetic,
  no rounding); the minimum of ``x + y`` is reported with its split. Every 0 of ``better`` and every 1 of
  ``worse`` is an equally good flip, so no particular item is named. Missing labels stay missing.
* **Continuous metrics (SA, EGM)**: the smallest change of *one* item's term that reorders the pair. Raising a
  term of ``better`` by ``d`` raises its mean by ``d / n_better``, so the pair reorders when
  ``d > n_better * gap``; lowering one of ``worse``'s terms needs ``d > n_worse * gap``. A term can move only
  within its range: a term of the form ``1 - x / y`` (:attr:`empathy.metrics.MetricSpec.ratio_of`; SA's
  ``1 - E(g)/E(t)``) lies in ``[1 - high(x)/y, 1 - low(x)/y]`` with the reference-side ``y`` held fixed
  (SA: ``[1 - 1/E(t), 1]``), any other within the metric's range of Table 1 (EGM: ``[0, 1]``); a side on which
  no item has room is infeasible (``None``). ``shift_needed`` is the smaller feasible side (an infimum: any
  larger change reorders). For a ``1 - x / y`` term the same answer is also given as the smallest change of
  one *judge score* ``x`` (``score_shift``; SA's term moves by ``dE(g)/E(t)``, so the item with the smallest
  ``E(t)`` among those with room needs the smallest score change). Reference-side scores (E(t), U(t)) are
  shared by every model's output of an item and are not moved. When no single item can, ``items_needed``
  (:func:`items_to_reverse`) is the fewest items that could, each moved to the end of its range (exact: largest
  contributions first); for CA it equals ``flips_needed``.
* **Leave-one-out influence**: for a group with ``n`` usable terms and mean ``v``, dropping item ``i`` gives
  ``(n v - t_i) / (n - 1)``; its influence is ``v - LOO_i = (t_i - v) / (n - 1)`` (positive: the item raises
  the model's value, which makes it look worse on a lower-is-better metric). For SA the term ``t_i`` itself is
  reported too (one item reaches -2.68 on the demo). ``None`` with a single usable item.
* **By-influence order** (:func:`influence_order`): per output, its largest ``|influence| / gap`` over the
  metrics reading a dimension and the judges, where ``gap`` is the distance of its model to the nearest
  adjacent model in that ranking (0 -> infinite): the share of the margin to the closest rival that this one
  item accounts for. Relabelling in this order checks first what can change the conclusion.
* **Ratio of means for SA** (:func:`ratio_of_means`, for every metric with a ``1 - x / y`` term):
  ``1 - sum E(g) / sum E(t)`` over the same usable items as Eq. 1's mean of ratios, with both rankings side by
  side. Not in the paper; shown because the mean of ratios lets a few items with a small E(t) dominate.

LD reads no judge rating (it is a function of the texts), so it has no flips and is left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from empathy import metrics as m
from empathy.evaluate import MetricPlan, rank_by_direction

GROUP: list[str] = ["task", "metric", "scorer"]
PAIR_COLUMNS: tuple[str, ...] = (
    "task", "metric", "scorer", "rank", "better", "worse", "value_better", "value_worse", "gap", "n_better",
    "n_worse", "kind", "items_needed", "flips_needed", "flips_better", "flips_worse", "shift_needed", "shift_model",
    "shift_item", "score_shift", "score_item")
INFLUENCE_COLUMNS: tuple[str, ...] = ("task", "metric", "scorer", "model", "item_id", "term", "value", "n",
                                      "loo_value", "influence")
ROM_COLUMNS: tuple[str, ...] = ("task", "metric", "scorer", "model", "mean_of_ratios", "ratio_of_means",
                                "rank_mean_of_ratios", "rank_ratio_of_means", "differs", "n")


def flips_to_reverse(k_better: int, n_better: int, k_worse: int, n_worse: int) -> tuple[int, int, int] | None:
    """The fewest 0->1 flips on ``better`` plus 1->0 flips on ``worse`` that make ``better``'s share strictly larger.

    ``k`` is the number of 1 labels and ``n`` the number of usable labels of each model. Returns
    ``(total, flips_on_better, flips_on_worse)`` (the smallest ``flips_on_better`` among the minima), or
    ``None`` when even every flip does not reverse the pair.
    """
    for name, k, n in (("better", k_better, n_better), ("worse", k_worse, n_worse)):
        if not 0 <= k <= n or n < 1:
            raise ValueError(f"{name}: need 0 <= k <= n and n >= 1, got k={k}, n={n}")
    x = np.arange(n_better - k_better + 1, dtype=np.int64)
    # (k_a + x)/n_a > (k_b - y)/n_b  <=>  y * n_a > k_b * n_a - (k_a + x) * n_b; the smallest such integer y
    deficit = k_worse * n_better - (k_better + x) * n_worse
    y = np.maximum(0, deficit // n_better + 1)
    feasible = y <= k_worse
    if not feasible.any():
        return None
    total = np.where(feasible, x + y, np.iinfo(np.int64).max)
    best = int(np.argmin(total))
    return int(total[best]), int(x[best]), int(y[best])


def items_to_reverse(room_better: np.ndarray, n_better: int, room_worse: np.ndarray, n_worse: int, gap: float
                     ) -> int | None:
    """The fewest items whose terms, each moved as far as its range allows, reorder a pair of continuous means.

    Moving a term of ``better`` up by its room raises that mean by ``room / n_better``; moving one of ``worse``'s
    down lowers the other by ``room / n_worse``. Each item closes the gap independently, so taking the largest
    contributions first is optimal: the answer is the smallest ``k`` whose top ``k`` contributions exceed
    ``gap`` (strictly: a tie is not a reversal), or ``None`` when all of them together do not.
    """
    if n_better < 1 or n_worse < 1:
        raise ValueError(f"n_better and n_worse must be at least 1, got {n_better} and {n_worse}")
    contributions = np.concatenate([np.asarray(room_better, dtype=float) / n_better,
                                    np.asarray(room_worse, dtype=float) / n_worse])
    contributions = np.sort(contributions[np.isfinite(contributions) & (contributions > 0)])[::-1]
    reached = np.flatnonzero(np.cumsum(contributions) > gap)
    return int(reached[0]) + 1 if len(reached) else None


def _room(metric: str, side: pd.DataFrame, upward: bool) -> np.ndarray:
    lower, upper = _term_bounds(metric, side)
    term = side["term"].to_numpy(dtype=float)
    return (upper - term) if upward else (term - lower)


def _term_bounds(metric: str, frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The range each usable term can move within when the output-side score changes (see module docstring)."""
    spec = m.get_metric(metric)
    n = len(frame)
    if spec.ratio_of is not None:
        x, y = spec.ratio_of
        fixed = frame[y].to_numpy(dtype=float)
        return 1.0 - m.DIMENSIONS[x].high / fixed, 1.0 - m.DIMENSIONS[x].low / fixed
    low, high = spec.value_range
    return np.full(n, float(low)), np.full(n, float(high))


def _is_binary(metric: str) -> bool:
    spec = m.get_metric(metric)
    return len(spec.dimensions) == 1 and m.DIMENSIONS[spec.dimensions[0]].binary


@dataclass(frozen=True)
class FragilityReport:
    """Adjacent-pair fragility, leave-one-out influence and the SA ratio-of-means ranking of one data set."""

    #: one row per adjacent pair of models in each (task, metric, judge) ranking: :data:`PAIR_COLUMNS`
    pairs: pd.DataFrame
    #: the ``top`` most influential items of each (task, metric, judge, model), largest ``|influence|`` first
    #: (ties in the data's order): :data:`INFLUENCE_COLUMNS`
    influence: pd.DataFrame
    #: SA under Eq. 1 (mean of ratios) and as a ratio of means per (task, judge, model): :data:`ROM_COLUMNS`
    ratio_of_means: pd.DataFrame
    #: per (item_id, model): its largest ``|influence| / gap`` (see :func:`influence_order`)
    order: pd.DataFrame

    def to_json(self) -> dict[str, object]:
        """Plain JSON: ``pairs``, ``influence``, ``ratio_of_means`` and ``order`` rows (NaN -> null)."""
        return {name: _records(getattr(self, name)) for name in ("pairs", "influence", "ratio_of_means", "order")}


def _clean(value: object) -> object:
    if value is pd.NA or value is None:
        return None
    if isinstance(value, np.bool_ | bool):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        return None if not np.isfinite(value) else float(value)
    return value


def _records(frame: pd.DataFrame) -> list[dict[str, object]]:
    return [{k: _clean(v) for k, v in row.items()} for row in frame.to_dict("records")]


def _usable(terms: pd.DataFrame) -> pd.DataFrame:
    """The usable terms of judge metrics, with each group's code (``_group``), n and mean beside every term."""
    usable = terms[(terms["status"] == m.OK) & terms["metric"].isin(m.judged_metrics())].copy()
    # one factorisation of the group names; every per-group figure after it is a bincount on the codes
    code = usable.groupby([*GROUP, "model"], sort=False).ngroup().to_numpy(dtype=np.int64)
    n = np.bincount(code)
    total = np.bincount(code, weights=usable["term"].to_numpy(dtype=float))
    usable["_group"] = code
    usable["n"] = n[code]
    usable["value"] = (total / np.maximum(n, 1))[code]
    return usable


def _values(usable: pd.DataFrame) -> pd.DataFrame:
    """One row per (task, metric, judge, model): value, n, ones (the count of 1 terms), rank (the one convention)
    and ``_key`` (the value signed so that smaller is better); sorted into rankings, best first."""
    code = usable["_group"].to_numpy(dtype=np.int64)
    ones = np.bincount(code, weights=(usable["term"].to_numpy(dtype=float) == 1.0), minlength=int(code.max(
        initial=-1)) + 1)
    values = usable.drop_duplicates("_group")[[*GROUP, "model", "_group", "value", "n"]].copy()
    values["ones"] = ones[values["_group"].to_numpy()].astype(int)
    lower = values["metric"].map(lambda name: m.get_metric(name).lower_is_better).to_numpy(dtype=bool)
    values["_key"] = np.where(lower, 1.0, -1.0) * values["value"].to_numpy(dtype=float)
    values["rank"] = rank_by_direction(values, GROUP)
    return values.sort_values([*GROUP, "_key", "model"], key=lambda s: s.astype(str) if s.name != "_key" else s,
                              kind="stable").reset_index(drop=True)


def _continuous_shift(metric: str, side: pd.DataFrame, needed: float, upward: bool
                      ) -> tuple[bool, object, float | None, object]:
    """Whether one of ``side``'s terms can move by more than ``needed`` (raise if ``upward``), an item that can,
    and for a ``1 - x / y`` term (SA) the smallest change of the score ``x`` (E(g)) with its item."""
    room = _room(metric, side, upward)
    feasible = room > needed
    if not feasible.any():
        return False, None, None, None
    item = side["item_id"].to_numpy()[int(np.argmax(room))]
    ratio = m.get_metric(metric).ratio_of
    if ratio is None:
        return True, item, None, None
    # dx = d * y (SA: dE(g) = d * E(t)): among items with room, the smallest y needs the smallest score change
    scale = np.where(feasible, side[ratio[1]].to_numpy(dtype=float), np.inf)
    best = int(np.argmin(scale))
    return True, item, float(needed * scale[best]), side["item_id"].to_numpy()[best]


def _pairs(usable: pd.DataFrame, values: pd.DataFrame) -> pd.DataFrame:
    rows = []
    by_group = dict(iter(usable.groupby("_group", sort=False)))
    for key, ranking in values.groupby(GROUP, sort=False):
        task, metric, scorer = key
        ranking = ranking.reset_index(drop=True)
        binary = _is_binary(metric)
        # lower is better: better's terms move up, worse's down, to reorder them (mirrored when higher is better)
        up = m.get_metric(metric).lower_is_better
        for position in range(len(ranking) - 1):
            a, b = ranking.iloc[position], ranking.iloc[position + 1]
            gap = float(b["_key"] - a["_key"])
            row: dict[str, object] = {
                "task": task, "metric": metric, "scorer": scorer, "rank": int(a["rank"]), "better": a["model"],
                "worse": b["model"], "value_better": float(a["value"]), "value_worse": float(b["value"]),
                "gap": gap, "n_better": int(a["n"]), "n_worse": int(b["n"]),
                "kind": "flips" if binary else "shift", "items_needed": None, "flips_needed": None,
                "flips_better": None, "flips_worse": None, "shift_needed": None, "shift_model": None,
                "shift_item": None, "score_shift": None, "score_item": None}
            if binary:
                # on a higher-is-better binary metric the share of 0 labels is the lower-is-better one
                k_a, k_b = ((int(a["ones"]), int(b["ones"])) if up
                            else (int(a["n"] - a["ones"]), int(b["n"] - b["ones"])))
                found = flips_to_reverse(k_a, int(a["n"]), k_b, int(b["n"]))
                if found is not None:
                    row["flips_needed"], row["flips_better"], row["flips_worse"] = found
                    row["items_needed"] = found[0]
            else:
                side_a, side_b = by_group[a["_group"]], by_group[b["_group"]]
                row["items_needed"] = items_to_reverse(_room(metric, side_a, up), int(a["n"]),
                                                       _room(metric, side_b, not up), int(b["n"]), gap)
                options = []
                for model, side, n, upward in ((a["model"], side_a, int(a["n"]), up),
                                               (b["model"], side_b, int(b["n"]), not up)):
                    needed = n * gap
                    ok, item, score, score_item = _continuous_shift(metric, side, needed, upward)
                    if ok:
                        options.append((needed, model, item, score, score_item))
                if options:
                    needed, model, item, _, _ = min(options, key=lambda o: o[0])
                    row.update(shift_needed=needed, shift_model=model, shift_item=item)
                    scores = [o for o in options if o[3] is not None]
                    if scores:
                        best = min(scores, key=lambda o: o[3])
                        row.update(score_shift=best[3], score_item=best[4])
            rows.append(row)
    pairs = pd.DataFrame(rows, columns=list(PAIR_COLUMNS))
    for column in ("items_needed", "flips_needed", "flips_better", "flips_worse"):
        pairs[column] = pairs[column].astype("Int64")  # counts, with <NA> for a continuous metric
    return pairs


def _with_influence(usable: pd.DataFrame) -> pd.DataFrame:
    out = usable.copy()
    n = out["n"].to_numpy(dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        loo = np.where(n > 1, (n * out["value"].to_numpy() - out["term"].to_numpy()) / (n - 1), np.nan)
    out["loo_value"] = loo
    out["influence"] = out["value"] - out["loo_value"]
    return out


def _nearest_gap(values: pd.DataFrame) -> pd.DataFrame:
    """Per (task, metric, judge, model): the distance to the nearest other model of its ranking (NaN if alone)."""
    out = values.copy()
    grouped = out.groupby(GROUP, sort=False)["_key"]
    below = out["_key"] - grouped.shift(1)
    above = grouped.shift(-1) - out["_key"]
    out["gap"] = np.fmin(below.to_numpy(dtype=float), above.to_numpy(dtype=float))
    return out[[*GROUP, "model", "gap"]]


def influence_order(terms: pd.DataFrame, dimension: str | None = None) -> pd.DataFrame:
    """Outputs ordered by how much of the margin to the nearest rival one item's term accounts for.

    Parameters
    ----------
    terms
        :meth:`empathy.evaluate.MetricPlan.item_terms` (optionally with overrides patched in).
    dimension
        Only metrics that read this judge dimension (the Relabel queue's); all judge metrics when ``None``.

    Returns
    -------
    DataFrame
        item_id, model, leverage (``|influence| / gap``, ``inf`` when the model ties its neighbour), metric,
        scorer and influence of the (metric, judge) where the leverage is largest; sorted by leverage
        (largest first), then item_id and model. Outputs whose model has no rival (a single model) are left out.
    """
    usable = _usable(terms)
    return _order(_with_influence(usable), _values(usable), dimension)


def _order(scored: pd.DataFrame, values: pd.DataFrame, dimension: str | None) -> pd.DataFrame:
    """:func:`influence_order` from the usable terms with their influence and the groups' values."""
    columns = ["item_id", "model", "leverage", "metric", "scorer", "influence"]
    if dimension is not None:
        reads = {name for name, spec in m.METRIC_SPECS.items() if dimension in spec.dimensions}
        scored = scored[scored["metric"].isin(reads)]
    if scored.empty:
        return pd.DataFrame(columns=columns)
    scored = scored.merge(_nearest_gap(values), on=[*GROUP, "model"], how="left")
    scored = scored[scored["gap"].notna() & scored["influence"].notna()]
    magnitude = scored["influence"].abs().to_numpy(dtype=float)
    gap = scored["gap"].to_numpy(dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        leverage = np.where(gap > 0, magnitude / np.where(gap > 0, gap, 1.0), np.where(magnitude > 0, np.inf, 0.0))
    # equal leverages computed along different float paths (1/6 and -1/6 of a mean) must tie, so that the
    # order falls back to item_id and model and stays stable across reruns
    scored = scored.assign(leverage=np.round(leverage, 12))
    # the largest leverage of each output first (numeric sort of every term; among equal leverages the plan's
    # order: metric, then judge), then the one row per output sorted with its names
    scored = scored.iloc[np.argsort(-scored["leverage"].to_numpy(), kind="stable")]
    best = scored.drop_duplicates(["item_id", "model"], keep="first")
    best = best.sort_values(["leverage", "item_id", "model"], ascending=[False, True, True], kind="stable")
    return best[columns].reset_index(drop=True)


def order_queue(queue: pd.DataFrame, order: pd.DataFrame) -> pd.DataFrame:
    """The Relabel queue (rows with item_id, model) re-sorted by :func:`influence_order`: highest leverage first,
    outputs without a leverage last in their previous order. Adds a ``leverage`` column."""
    keyed = queue.merge(order[["item_id", "model", "leverage"]], on=["item_id", "model"], how="left")
    keyed["_position"] = np.arange(len(keyed))
    keyed["_known"] = keyed["leverage"].notna()
    keyed = keyed.sort_values(["_known", "leverage", "_position"], ascending=[False, False, True], kind="stable")
    return keyed.drop(columns=["_position", "_known"]).reset_index(drop=True)


def ratio_of_means(terms: pd.DataFrame) -> pd.DataFrame:
    """SA per (task, judge, model) as Eq. 1's mean of ratios and as ``1 - sum E(g) / sum E(t)``, with both ranks
    (:func:`empathy.evaluate.rank_by_direction`: 1 = least attenuation; ties share the lower rank) and whether
    the two rankings place the model differently. Both are over the same usable items (status OK).

    Computed for every metric whose terms are ``1 - x / y`` of two judge dimensions
    (:attr:`empathy.metrics.MetricSpec.ratio_of`; SA: ``x = e_gen``, ``y = e_ref``), named in ``metric``.
    """
    parts = []
    for name, spec in m.METRIC_SPECS.items():
        if spec.ratio_of is None:
            continue
        x, y = spec.ratio_of
        mine = terms[(terms["metric"] == name) & (terms["status"] == m.OK)]
        if mine.empty or not {x, y} <= set(mine.columns):
            continue
        out = mine.groupby(["task", "scorer", "model"], sort=True).agg(
            mean_of_ratios=("term", "mean"), x=(x, "sum"), y=(y, "sum"), n=("term", "size")).reset_index()
        out["metric"] = name
        out["ratio_of_means"] = 1.0 - out["x"] / out["y"]
        for column in ("mean_of_ratios", "ratio_of_means"):
            out[f"rank_{column}"] = rank_by_direction(out, ["task", "scorer"], value=column).astype(int)
        out["differs"] = out["rank_mean_of_ratios"] != out["rank_ratio_of_means"]
        parts.append(out[list(ROM_COLUMNS)])
    if not parts:
        return pd.DataFrame(columns=list(ROM_COLUMNS))
    return pd.concat(parts, ignore_index=True)


#: The name under which the ratio-of-means reading was introduced (SA is the one ``1 - x / y`` metric of the paper).
sa_ratio_of_means = ratio_of_means


def fragility(plan: MetricPlan, values: np.ndarray | None = None, *, metrics: Sequence[str] | None = None,
              top: int = 5) -> FragilityReport:
    """Ranking fragility of every judge metric of ``plan`` (see the module docstring).

    Parameters
    ----------
    plan
        The data set's :class:`empathy.evaluate.MetricPlan` (its ``by_task`` decides the rankings' scope).
    values
        Rating values with overrides patched in (:meth:`~empathy.evaluate.MetricPlan.patch`); default: the
        plan's own ratings.
    metrics
        Registry names to examine (default: every judge metric); a text-only metric (LD) raises ``ValueError``.
    top
        How many of the most influential items to keep per (task, metric, judge, model).
    """
    if isinstance(top, bool) or not isinstance(top, int | np.integer) or top < 1:
        raise ValueError(f"top must be a positive integer, got {top!r}")
    if metrics is not None:
        for name in metrics:
            if not m.get_metric(name).judged:
                raise ValueError(f"{name} reads no judge rating, so no label can reorder it; "
                                 f"choose from {', '.join(m.judged_metrics())}")
    terms = plan.item_terms(values, metrics=metrics or list(m.judged_metrics()))
    usable = _usable(terms)
    values_table = _values(usable)
    scored = _with_influence(usable)
    order = _order(scored, values_table, None)
    # the top items of each group: one numeric sort of every term (largest |influence| first, undefined last,
    # ties in the data's order), then only the kept rows sorted by their group's names
    size = scored["influence"].abs().to_numpy(dtype=float)
    ranked = scored.iloc[np.argsort(-np.where(np.isnan(size), -np.inf, size), kind="stable")]
    influence = ranked.groupby([*GROUP, "model"], sort=False).head(int(top))
    influence = influence.sort_values([*GROUP, "model"], kind="stable")
    return FragilityReport(pairs=_pairs(usable, values_table),
                           influence=influence[list(INFLUENCE_COLUMNS)].reset_index(drop=True),
                           ratio_of_means=ratio_of_means(terms), order=order)


def by_influence(queue: pd.DataFrame, plan: MetricPlan, dimension: str, values: np.ndarray | None = None
                 ) -> pd.DataFrame:
    """The Relabel queue of ``dimension`` in the "by influence" order: :func:`order_queue` of
    :func:`influence_order` over the plan's terms (``values``: the ratings with overrides patched in)."""
    return order_queue(queue, influence_order(plan.item_terms(values), dimension))
