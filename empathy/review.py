"""Human review of judge ratings: fast live recompute, disagreement, relabel queue and what overrides changed.

The app recomputes every metric after each human override. :class:`Recompute` prepares, once per data set,
everything :func:`empathy.evaluate.compute_metrics` derives from the *positions* of the ratings (the wide
rating matrix, each metric's item scope, the (model, judge) groups, LD, the judge signatures); a recompute
then only patches the overridden values into arrays, re-runs the per-item term functions of
:mod:`empathy.metrics` and sums per group with ``np.bincount``. The result equals ``compute_metrics`` on the
effective ratings (checked in ``tests/test_review.py``); an override that adds a rating absent from the data
changes a metric's scope, and then the full ``compute_metrics`` runs instead.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from empathy import metrics as m
from empathy.agreement import pairwise_agreement, spearman
from empathy.evaluate import LD_SCORER, TABLE_COLUMNS, MetricsReport, TextFeatures, compute_metrics
from empathy.signature import Signature, judge_signatures
from empathy.store import KEY_COLUMNS, apply_overrides, human_ratings

#: Name of the human rater in agreement tables built from overrides.
HUMAN = "human"
_METRIC_ORDER = {name: position for position, name in enumerate(m.METRICS)}


@dataclass(frozen=True)
class _MetricPlan:
    metric: str
    rows: NDArray[np.int64]          # rows of the joined frame in this metric's scope
    codes: NDArray[np.int64]         # group code of each scoped row
    groups: pd.DataFrame             # task, model, scorer per code
    model_codes: NDArray[np.int64]   # per group: position of its model in ``models``
    scorer_codes: NDArray[np.int64]  # per group: position of its scorer in ``scorers``
    models: list[str]
    scorers: list[str]


class Recompute:
    """Metrics of one data set under any set of overrides, recomputed in milliseconds.

    Parameters
    ----------
    outputs, ratings
        The validated outputs and the judge-only ratings (:class:`empathy.io.Dataset`).
    features
        Sentence counts and distancing densities (:func:`empathy.evaluate.text_features`).
    include_ld, ld_standardization
        As for :func:`empathy.evaluate.compute_metrics`.
    """

    def __init__(self, outputs: pd.DataFrame, ratings: pd.DataFrame, features: TextFeatures, *,
                 include_ld: bool = True, ld_standardization: str = "separate"):
        self.outputs = outputs
        self.ratings = ratings
        self.features = features
        self.include_ld = include_ld
        self.ld_standardization = ld_standardization
        self._judges = judge_signatures(ratings)
        text = features.frame(outputs)
        text["task"] = "all"
        self._plans: list[_MetricPlan] = []
        self._values: dict[str, NDArray[np.float64]] = {}
        self._presence: dict[str, NDArray[np.bool_]] = {}
        self._row_of: dict[tuple[str, str, str], int] = {}
        self._sentences: tuple[NDArray[np.float64], NDArray[np.float64]] = (np.empty(0), np.empty(0))
        if len(ratings):
            keyed = ratings.set_index(list(KEY_COLUMNS))
            values = keyed["value"].unstack("dimension")
            presence = pd.Series(True, index=keyed.index).unstack("dimension", fill_value=False)
            joined = values.join(presence.add_prefix("has_")).reset_index().merge(
                text, on=["item_id", "model"], how="inner")
            dimensions = [str(c) for c in values.columns]
            self._values = {d: joined[d].to_numpy(dtype=float) for d in dimensions}
            self._presence = {d: joined[f"has_{d}"].to_numpy(dtype=bool) for d in dimensions}
            keys = zip(joined["item_id"].astype(str).tolist(), joined["model"].astype(str).tolist(),
                       joined["rater"].astype(str).tolist(), strict=True)
            self._row_of = {key: row for row, key in enumerate(keys)}
            self._sentences = (joined["sentences_ref"].to_numpy(dtype=float),
                               joined["sentences_gen"].to_numpy(dtype=float))
            for metric, needed in m.METRIC_DIMENSIONS.items():
                in_scope = np.zeros(len(joined), dtype=bool)
                for dimension in needed:
                    if dimension in self._presence:
                        in_scope |= self._presence[dimension]
                rows = np.flatnonzero(in_scope)
                if not len(rows):
                    continue
                scoped = joined.iloc[rows]
                codes, uniques = pd.MultiIndex.from_frame(scoped[["task", "model", "rater"]]).factorize(sort=True)
                groups = uniques.to_frame(index=False, name=["task", "model", "scorer"])
                model_codes, models = pd.factorize(groups["model"], sort=True)
                scorer_codes, scorers = pd.factorize(groups["scorer"], sort=True)
                self._plans.append(_MetricPlan(metric, rows, np.asarray(codes, dtype=np.int64), groups,
                                               np.asarray(model_codes, dtype=np.int64),
                                               np.asarray(scorer_codes, dtype=np.int64),
                                               [str(x) for x in models], [str(x) for x in scorers]))
        self._ld = self._ld_table(text) if include_ld else pd.DataFrame(columns=list(TABLE_COLUMNS))
        # The table's rows (and their order) depend only on which ratings exist, not on their values.
        skeleton_parts = [plan.groups.assign(metric=plan.metric) for plan in self._plans]
        if include_ld and len(self._ld):
            skeleton_parts.append(self._ld[["task", "model", "scorer", "metric"]])
        if skeleton_parts:
            skeleton = pd.concat(skeleton_parts, ignore_index=True)
            skeleton["_position"] = np.arange(len(skeleton))
            skeleton = skeleton.sort_values(["task", "metric", "scorer", "model"],
                                            key=lambda s: s.map(_METRIC_ORDER) if s.name == "metric" else s)
            self._order = skeleton.pop("_position").to_numpy()
            self._skeleton = skeleton.reset_index(drop=True)
        else:
            self._order = np.empty(0, dtype=int)
            self._skeleton = pd.DataFrame(columns=["task", "model", "scorer", "metric"])

    def _ld_table(self, text: pd.DataFrame) -> pd.DataFrame:
        rows = []
        for (task, model), index in text.groupby(["task", "model"], sort=True).indices.items():
            result = m.linguistic_distancing(self.features.densities_ref[index], self.features.densities_gen[index],
                                             standardization=self.ld_standardization)
            rows.append({"task": task, "model": model, "scorer": LD_SCORER, "metric": "LD",
                         "value": np.nan if result.value is None else result.value, "n": result.n,
                         "n_missing": result.n_missing, "n_undefined": result.n_undefined})
        return pd.DataFrame(rows, columns=list(TABLE_COLUMNS))

    def _column(self, values: dict[str, NDArray[np.float64]], dimension: str, rows: NDArray[np.int64]
                ) -> NDArray[np.float64]:
        if dimension in values:
            return values[dimension][rows]
        return np.full(len(rows), np.nan)

    def _patched(self, overrides: pd.DataFrame | None) -> dict[str, NDArray[np.float64]] | None:
        """Rating arrays with the overrides applied, or ``None`` when an override adds a new rating."""
        if overrides is None or len(overrides) == 0:
            return self._values
        patched = dict(self._values)
        copied: set[str] = set()
        columns = [overrides[c].astype(str).tolist() for c in KEY_COLUMNS]
        values = overrides["value"].to_numpy(dtype=float)
        for item, model, rater, dimension, value in zip(*columns, values, strict=True):
            row = self._row_of.get((item, model, rater))
            if row is None or dimension not in patched or not self._presence[dimension][row]:
                return None
            if dimension not in copied:
                patched[dimension] = patched[dimension].copy()
                copied.add(dimension)
            patched[dimension][row] = value  # later rows win, as drop_duplicates(keep="last")
        return patched

    def report(self, overrides: pd.DataFrame | None = None) -> MetricsReport:
        """The metrics report with ``overrides`` applied (``None`` or empty: judge-only)."""
        n_overrides = 0 if overrides is None else len(overrides)
        values = self._patched(overrides)
        if values is None:
            return compute_metrics(self.outputs, apply_overrides(self.ratings, overrides), features=self.features,
                                   include_ld=self.include_ld, ld_standardization=self.ld_standardization,
                                   n_overrides=n_overrides)
        columns: dict[str, list[NDArray]] = {"value": [], "n": [], "n_missing": [], "n_undefined": []}
        agreement_rows = []
        for plan in self._plans:
            rows = plan.rows
            if plan.metric == "SA":
                terms, status = m.sentiment_attenuation_terms(self._column(values, "e_ref", rows),
                                                              self._column(values, "e_gen", rows))
            elif plan.metric == "EGM":
                terms, status = m.granularity_mismatch_terms(
                    self._column(values, "u_ref", rows), self._column(values, "u_gen", rows),
                    self._sentences[0][rows], self._sentences[1][rows])
            else:
                terms, status = m.conflict_avoidance_terms(self._column(values, "ca", rows))
            size = len(plan.groups)
            usable = status == m.OK
            n = np.bincount(plan.codes, weights=usable, minlength=size).astype(int)
            total = np.bincount(plan.codes, weights=np.where(usable, terms, 0.0), minlength=size)
            value = np.where(n > 0, total / np.maximum(n, 1), np.nan)
            columns["value"].append(value)
            columns["n"].append(n)
            columns["n_missing"].append(np.bincount(plan.codes, weights=status == m.MISSING,
                                                    minlength=size).astype(int))
            columns["n_undefined"].append(np.bincount(plan.codes, weights=status == m.UNDEFINED,
                                                      minlength=size).astype(int))
            agreement_rows.extend(_pairs(plan, value))
        if self.include_ld and len(self._ld):
            for column in columns:
                columns[column].append(self._ld[column].to_numpy())
        table = self._skeleton.copy()
        for column, parts in columns.items():
            merged = np.concatenate(parts) if parts else np.empty(0)
            table[column] = merged[self._order].astype(float if column == "value" else int)
        table = table[list(TABLE_COLUMNS)]
        agreement = pd.DataFrame(agreement_rows, columns=["metric", "scorer_a", "scorer_b", "spearman", "n_models"])
        agreement.insert(0, "task", "all")
        signature = Signature(distancing=self.features.signature if self.include_ld or len(self.ratings) else None,
                              judges=self._judges, overrides=n_overrides,
                              extra={"ld-std": self.ld_standardization}
                              if self.ld_standardization != "separate" else {})
        return MetricsReport(table=table, agreement=agreement, signature=signature, by_task=False)


def _pairs(plan: _MetricPlan, value: NDArray[np.float64]) -> list[dict[str, object]]:
    """Inter-judge Spearman rows of one metric from its per-group values (models x scorers grid)."""
    grid = np.full((len(plan.models), len(plan.scorers)), np.nan)
    grid[plan.model_codes, plan.scorer_codes] = value
    rows = []
    # a scorer without any defined value of this metric is absent from the pivot of inter_judge_spearman
    scored = [column for column in range(len(plan.scorers)) if not np.isnan(grid[:, column]).all()]
    for a, b in itertools.combinations(scored, 2):
        keep = ~(np.isnan(grid[:, a]) | np.isnan(grid[:, b]))
        rows.append({"metric": plan.metric, "scorer_a": plan.scorers[a], "scorer_b": plan.scorers[b],
                     "spearman": spearman(grid[keep, a], grid[keep, b]), "n_models": int(keep.sum())})
    return rows


def fast_inter_judge_spearman(table: pd.DataFrame, metrics: Sequence[str] = ("SA", "EGM", "CA")
                              ) -> pd.DataFrame:
    """:func:`empathy.agreement.inter_judge_spearman` over a results table, without per-metric pivots."""
    rows = []
    for metric in metrics:
        part = table[(table["metric"] == metric) & table["value"].notna()]
        if part.empty:
            continue
        models = sorted(set(part["model"]))
        scorers = sorted(set(part["scorer"]))
        grid = np.full((len(models), len(scorers)), np.nan)
        grid[[models.index(x) for x in part["model"]], [scorers.index(x) for x in part["scorer"]]] = part["value"]
        for a, b in itertools.combinations(range(len(scorers)), 2):
            keep = ~(np.isnan(grid[:, a]) | np.isnan(grid[:, b]))
            rows.append({"metric": metric, "scorer_a": scorers[a], "scorer_b": scorers[b],
                         "spearman": spearman(grid[keep, a], grid[keep, b]), "n_models": int(keep.sum())})
    return pd.DataFrame(rows, columns=["metric", "scorer_a", "scorer_b", "spearman", "n_models"])


def judge_labels(ratings: pd.DataFrame, dimension: str) -> pd.DataFrame:
    """One row per (item_id, model) with each judge's value of ``dimension`` as a column (NaN where absent)."""
    subset = ratings[ratings["dimension"] == dimension]
    if subset.empty:
        return pd.DataFrame(columns=["item_id", "model"])
    wide = subset.pivot_table(index=["item_id", "model"], columns="rater", values="value", aggfunc="first",
                              dropna=False)
    wide.columns = [str(c) for c in wide.columns]
    return wide.reset_index()


def disagreement(ratings: pd.DataFrame, dimension: str) -> pd.DataFrame:
    """Per (item_id, model): the judges' values of ``dimension``, how many rated it, and their spread.

    ``disagree`` is true when at least two judges gave different values (for binary labels: some said 0 and
    some 1). ``spread`` is max - min of the present values (0 with fewer than two).
    """
    wide = judge_labels(ratings, dimension)
    judges = [c for c in wide.columns if c not in ("item_id", "model")]
    values = wide[judges].to_numpy(dtype=float) if judges else np.empty((len(wide), 0))
    present = (~np.isnan(values)).sum(axis=1)
    high = np.where(np.isnan(values), -np.inf, values).max(axis=1, initial=-np.inf)
    low = np.where(np.isnan(values), np.inf, values).min(axis=1, initial=np.inf)
    spread = np.where(present >= 2, high - low, 0.0) if len(wide) else np.empty(0)
    wide["n_judges"] = present
    wide["spread"] = spread
    wide["disagree"] = spread > 0
    return wide


def relabel_queue(ratings: pd.DataFrame, dimension: str, outputs: pd.DataFrame | None = None,
                  done: pd.DataFrame | None = None) -> pd.DataFrame:
    """The order in which to relabel ``dimension``: judge disagreements first (widest spread first), then the rest.

    ``outputs`` (optional) adds items no judge rated at the end. ``done`` (the current overrides) marks the
    (item_id, model) pairs that already have a human decision for this dimension (column ``done``). Ties are
    broken by item_id and model so that the queue is stable across reruns.
    """
    table = disagreement(ratings, dimension)
    if outputs is not None:
        keys = outputs[["item_id", "model"]].drop_duplicates()
        table = keys.merge(table, on=["item_id", "model"], how="left")
        table["n_judges"] = table["n_judges"].fillna(0).astype(int)
        table["spread"] = table["spread"].fillna(0.0)
        table["disagree"] = table["disagree"].fillna(False).astype(bool)
    table["done"] = False
    if done is not None and len(done):
        decided = done[done["dimension"] == dimension][["item_id", "model"]].drop_duplicates()
        keys = set(zip(decided["item_id"], decided["model"], strict=True))
        table["done"] = [(i, mo) in keys for i, mo in zip(table["item_id"], table["model"], strict=True)]
    table = table.sort_values(["disagree", "spread", "n_judges", "item_id", "model"],
                              ascending=[False, False, False, True, True], kind="stable")
    return table.reset_index(drop=True)


def human_vs_judges(judge_ratings: pd.DataFrame, overrides: pd.DataFrame | None,
                    dimensions: Sequence[str] | None = None) -> pd.DataFrame:
    """Instance-level agreement of the human verdicts (from overrides) with each judge's own ratings.

    Rows of :func:`empathy.agreement.pairwise_agreement` with ``rater_a == "human"``; empty without overrides.
    Kappa is the statistic for binary CA, Spearman for the scores.
    """
    human = human_ratings(overrides, rater=HUMAN) if overrides is not None else human_ratings(pd.DataFrame())
    columns = ["dimension", "judge", "n", "spearman", "pearson", "kappa", "kappa_quadratic", "percent_agreement"]
    if human.empty:
        return pd.DataFrame(columns=columns)
    chosen = list(dimensions) if dimensions is not None else sorted(human["dimension"].unique())
    judges = judge_ratings[judge_ratings["rater"] != HUMAN]
    combined = pd.concat([judges, human], ignore_index=True)
    pairs = pairwise_agreement(combined, dimensions=[d for d in chosen if d in set(combined["dimension"])])
    rows = []
    for record in pairs.to_dict("records"):
        if HUMAN not in (record["rater_a"], record["rater_b"]):
            continue
        judge = record["rater_b"] if record["rater_a"] == HUMAN else record["rater_a"]
        rows.append({"dimension": record["dimension"], "judge": judge, **{k: record[k] for k in columns[2:]}})
    return pd.DataFrame(rows, columns=columns)


def ranking_shift(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    """How each model's rank moved per (scorer, metric) between two results tables (1 = least failure).

    Columns: scorer, metric, model, value_before, value_after, rank_before, rank_after, moved (before - after;
    positive means the model moved up the ranking).
    """
    def ranked(table: pd.DataFrame) -> pd.DataFrame:
        frame = table.dropna(subset=["value"])[["scorer", "metric", "model", "value"]].copy()
        frame["rank"] = frame.groupby(["scorer", "metric"])["value"].rank(method="min")
        return frame

    merged = ranked(before).merge(ranked(after), on=["scorer", "metric", "model"], how="outer",
                                  suffixes=("_before", "_after"))
    merged["moved"] = merged["rank_before"] - merged["rank_after"]
    merged["metric_order"] = merged["metric"].map(_METRIC_ORDER)
    merged = merged.sort_values(["metric_order", "scorer", "rank_after", "model"]).drop(columns="metric_order")
    return merged.reset_index(drop=True)


def metric_pivot(table: pd.DataFrame) -> pd.DataFrame:
    """Wide view of a results table: one row per model, one column per ``METRIC (scorer)`` and its n."""
    if table.empty:
        return pd.DataFrame(columns=["model"])
    frame = table.copy()
    frame["column"] = frame["metric"] + " (" + frame["scorer"] + ")"
    order = (frame[["metric", "scorer", "column"]].drop_duplicates()
             .assign(o=lambda f: f["metric"].map(_METRIC_ORDER)).sort_values(["o", "scorer"])["column"].tolist())
    values = frame.pivot_table(index="model", columns="column", values="value", aggfunc="first")
    counts = frame.pivot_table(index="model", columns="column", values="n", aggfunc="first")
    out = pd.DataFrame(index=values.index)
    for column in order:
        out[column] = values[column] if column in values.columns else np.nan
        out[f"n {column}"] = counts[column].astype("Int64") if column in counts.columns else pd.NA
    return out.reset_index()


def inspect_filter(outputs: pd.DataFrame, ratings: pd.DataFrame, *, task: str | None = None,
                   model: str | None = None, judge: str | None = None, dimension: str | None = None,
                   value: float | None = None, disagree_only: bool = False) -> pd.DataFrame:
    """The (item_id, model, task) keys of the outputs that pass the Inspect page's filters, sorted.

    ``judge`` keeps outputs that judge rated; ``dimension`` keeps outputs rated on it (by ``judge`` if given);
    ``value`` keeps those where such a rating equals ``value``; ``disagree_only`` keeps outputs on which the
    judges disagree about ``dimension`` (ignored without a dimension).
    """
    keys = outputs[["item_id", "model", "task"]].copy()
    if task is not None:
        keys = keys[keys["task"] == task]
    if model is not None:
        keys = keys[keys["model"] == model]
    chosen = ratings
    if judge is not None:
        chosen = chosen[chosen["rater"] == judge]
    if dimension is not None:
        chosen = chosen[chosen["dimension"] == dimension]
        if value is not None:
            chosen = chosen[np.isclose(chosen["value"].to_numpy(dtype=float), float(value))]
    if judge is not None or dimension is not None:
        allowed = pd.MultiIndex.from_frame(chosen[["item_id", "model"]])
        keys = keys[pd.MultiIndex.from_frame(keys[["item_id", "model"]]).isin(allowed)]
    if disagree_only and dimension is not None:
        table = disagreement(ratings, dimension)
        table = table[table["disagree"]]
        allowed = pd.MultiIndex.from_frame(table[["item_id", "model"]])
        keys = keys[pd.MultiIndex.from_frame(keys[["item_id", "model"]]).isin(allowed)]
    return keys.sort_values(["task", "item_id", "model"]).reset_index(drop=True)
