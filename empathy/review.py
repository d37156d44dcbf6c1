"""Human review of judge ratings: fast live recompute, disagreement, relabel queues and what overrides changed.

Queue orders: :func:`relabel_queue` puts judge disagreements first (for error analysis: it uses the judges'
labels); :func:`blind_queue` orders the same rows by a seeded random permutation, or by an audit design's
order, and never by anything the judges said (what blind mode needs: the order would otherwise leak what the
page hides); :func:`annotator_queue` keeps an annotator's assigned outputs and puts their skips last.

The app recomputes every metric after each human override. :class:`Recompute` keeps the data set's metric
plan (:class:`empathy.evaluate.MetricPlan`: the dense rating matrix, each metric's item scope and groups, LD,
the judge signatures), built once; a recompute patches the overridden values into the rating matrix and
evaluates the same plan :func:`empathy.evaluate.compute_metrics` evaluates, so the two agree by construction
(also checked in ``tests/test_review.py``).

Human-human agreement (:func:`human_agreement`) lives here too: it is a statistic over the labels package's
annotator ratings (:func:`empathy.labels.ledger.annotator_ratings`), so it sits above that layer.
"""

from __future__ import annotations

import hashlib
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from types import ModuleType

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from empathy import metrics as m
from empathy.agreement import krippendorff_by_dimension, pairwise_agreement
from empathy.audit import AuditDesign
from empathy.evaluate import (
    LiveMetrics,
    MetricPlan,
    MetricsReport,
    TextFeatures,
    compute_metrics,
    plan_metrics,
    rank_by_direction,
)
from empathy.labels.decisions import decision_count, pair_decisions
from empathy.labels.schema import KEY_COLUMNS

#: Name of the human rater in agreement tables built from overrides.
HUMAN = "human"


def _ledger() -> ModuleType:
    """:mod:`empathy.labels.ledger`, imported at first use: it loads the override stores' modules, which a
    ``metrics`` run without a store (the common case, and the one a warm run's budget is measured on) never opens."""
    import empathy.labels.ledger as ledger

    return ledger


class Recompute:
    """Metrics of one data set under any set of overrides, recomputed in milliseconds.

    Holds the data set's :class:`empathy.evaluate.MetricPlan` (built once) and a
    :class:`empathy.evaluate.LiveMetrics` of it: each report writes the overrides that changed since the previous
    one into the rating values and recomputes the terms of the units they touch and the sums of those units'
    groups only, with the terms functions of :func:`empathy.evaluate.compute_metrics` (the same values, bit for
    bit). An override that adds a rating absent from the data changes a metric's scope; then the full
    ``compute_metrics`` runs on the effective ratings instead.

    Parameters
    ----------
    outputs, ratings
        The validated outputs and the judge-only ratings (:class:`empathy.io.Dataset`).
    features
        Sentence counts and distancing densities (:func:`empathy.evaluate.text_features`).
    by_task, include_ld, ld_standardization, egm_both_zero
        As for :func:`empathy.evaluate.compute_metrics`.
    """

    def __init__(self, outputs: pd.DataFrame, ratings: pd.DataFrame, features: TextFeatures, *,
                 by_task: bool = False, include_ld: bool = True, ld_standardization: str = "separate",
                 egm_both_zero: str = "zero", plan: MetricPlan | None = None):
        self.outputs = outputs
        self.ratings = ratings
        self.features = features
        self.include_ld = include_ld
        self.ld_standardization = ld_standardization
        self.settings = {"by_task": by_task, "include_ld": include_ld, "ld_standardization": ld_standardization,
                         "egm_both_zero": egm_both_zero}
        # ``plan``: this data set's plan under these settings, already built (see :meth:`reading`)
        self.plan = plan or plan_metrics(outputs, ratings, features=features, **self.settings)
        self.live = LiveMetrics(self.plan)

    def reading(self, *, egm_both_zero: str | None = None, ld_standardization: str | None = None) -> Recompute:
        """The engine of the same data set under other readings of the open cases (``None``: this one's): its
        plan is :meth:`empathy.evaluate.MetricPlan.reading` of this one's, so it shares the layout and every
        metric the changed readings do not touch; the same numbers as an engine built from scratch."""
        settings = {**self.settings, **{k: v for k, v in (("egm_both_zero", egm_both_zero),
                                                           ("ld_standardization", ld_standardization))
                                        if v is not None}}
        options = m.MetricOptions(ld_standardization=str(settings["ld_standardization"]),
                                egm_both_zero=str(settings["egm_both_zero"]))
        return Recompute(self.outputs, self.ratings, self.features, **settings, plan=self.plan.reading(options))

    def report(self, overrides: pd.DataFrame | None = None, *, decisions: bool = False) -> MetricsReport:
        """The metrics report with ``overrides`` applied (``None`` or empty: judge-only).

        The signature counts the judge labels replaced (``overridden_ratings``), as
        :func:`empathy.evaluate.compute_metrics` does; with ``decisions`` also the human decisions behind them
        (``decisions``: :func:`empathy.labels.decisions.decision_count`; what a person reads).
        """
        n_overrides = 0 if overrides is None else len(overrides)
        report = self.live.report(overrides, n_overrides=n_overrides)
        if report is None:
            report = compute_metrics(self.outputs, _ledger().apply_overrides(self.ratings, overrides),
                                     features=self.features, n_overrides=n_overrides, **self.settings)
        if not decisions:
            return report
        return replace(report, signature=replace(report.signature, decisions=known_decision_count(overrides)))


#: Decision counts already known, by the overrides frame they count (held weakly: a frame gone is forgotten).
_KNOWN_COUNTS: dict[int, tuple[weakref.ref, int]] = {}


def remember_decision_count(overrides: pd.DataFrame, count: int) -> None:
    """Say that :func:`empathy.labels.decisions.decision_count` of the frame ``overrides`` (not to be modified) is
    ``count``, kept up to date without counting (:attr:`empathy.labels.ledger.Ledger.decision_counts` of a ledger
    brought up to date counts only the changed rows): :func:`known_decision_count` of that frame returns it."""
    for key in [key for key, (ref, _count) in _KNOWN_COUNTS.items() if ref() is None]:
        del _KNOWN_COUNTS[key]
    _KNOWN_COUNTS[id(overrides)] = (weakref.ref(overrides), int(count))


def known_decision_count(overrides: pd.DataFrame | None) -> int:
    """:func:`empathy.labels.decisions.decision_count` of ``overrides``: the count given by
    :func:`remember_decision_count` for this very frame, else counted."""
    if overrides is not None:
        known = _KNOWN_COUNTS.get(id(overrides))
        if known is not None and known[0]() is overrides:
            return known[1]
    return decision_count(overrides)


#: What the labels behind an inter-judge agreement row are: the judges' own, or with human overrides applied.
LABEL_SOURCES: tuple[str, ...] = ("judges", "with_overrides")
#: The columns :func:`agreement_labels` adds to an agreement table (the CLI's JSON rows carry them too).
PROVENANCE_COLUMNS: tuple[str, ...] = ("labels", "human_decisions", "same_human_label", "warning")


def agreement_labels(agreement: pd.DataFrame, overrides: pd.DataFrame | None,
                     outputs: pd.DataFrame | None = None) -> pd.DataFrame:
    """Table 6 rows saying which labels they rest on: ``agreement`` with :data:`PROVENANCE_COLUMNS` added.

    ``overrides`` are the applied overrides the rows were computed with (``Ledger.applied``), or ``None`` for
    the judges' own labels. ``outputs``: for a per-task table, the outputs with their ``task``, so that a row
    counts only its task's decisions (``None`` for a pooled table). Per row (``metric``, ``scorer_a``,
    ``scorer_b``, ``task``): ``labels`` (``judges`` or ``with_overrides``), ``human_decisions`` (distinct
    decisions on either judge's labels of the metric's dimensions) and ``same_human_label`` (outputs on which
    both judges carry the same human label, with a ``warning`` then: agreement a human created), from
    :func:`empathy.labels.decisions.pair_decisions`. A metric that reads no judge dimension (LD) gets 0.
    """
    table = agreement.copy()
    with_overrides = overrides is not None
    if not with_overrides or len(overrides) == 0:  # no decision to count: every row rests on the labels as they are
        for column, value, dtype in zip(PROVENANCE_COLUMNS, (LABEL_SOURCES[with_overrides], 0, 0, None),
                                        (object, "int64", "int64", object), strict=True):
            table[column] = pd.Series([value] * len(table), index=table.index, dtype=dtype)
        return table
    # a task's outputs are looked for once per task
    task_names = outputs["task"].astype(str) if outputs is not None and "task" in outputs.columns else None
    scopes: dict[str, pd.DataFrame] = {}
    rows = []
    for record in table.to_dict("records"):
        spec = m.METRIC_SPECS.get(str(record.get("metric")))
        scope = None
        task = record.get("task")
        if task_names is not None and isinstance(task, str) and task:
            if task not in scopes:
                scopes[task] = outputs[(task_names == task).to_numpy()]
            scope = scopes[task]
        found = pair_decisions(overrides, str(record["scorer_a"]), str(record["scorer_b"]),
                               spec.dimensions if spec is not None else (), scope)
        rows.append((LABEL_SOURCES[with_overrides], found.decisions, found.shared, found.warning))
    for position, (column, dtype) in enumerate(zip(PROVENANCE_COLUMNS, (object, "int64", "int64", object),
                                                   strict=True)):
        table[column] = pd.Series([row[position] for row in rows], index=table.index, dtype=dtype)
    return table


class _KeyIndex:
    """Row of each key of a frame's key columns, as one int64 code per row (the product of the columns' codes)
    sorted once: a lookup is a binary search.

    A ``MultiIndex`` of 3 million rating keys held a hash table of about 100 MiB once looked up, and its
    ``is_unique`` as much again for a moment; this holds the sorted codes and their rows (48 MiB). Missing key
    values are a value of their own, as in a ``MultiIndex`` lookup.
    """

    def __init__(self, frame: pd.DataFrame, columns: Sequence[str]) -> None:
        self.levels: list[pd.Index] = []
        code = np.zeros(len(frame), dtype=np.int64)
        size = 1
        for column in columns:
            codes, level = pd.factorize(frame[column], use_na_sentinel=False)
            size *= max(len(level), 1)
            if size >= 2 ** 62:
                raise OverflowError("too many distinct keys for one int64 code")
            code = code * max(len(level), 1) + codes
            self.levels.append(pd.Index(level))
        order = np.argsort(code, kind="stable")
        # 32 bits where the codes and rows fit (3 million ratings' keys: 46 -> 23 MiB held per data set)
        narrow = size < 2 ** 31 and len(code) < 2 ** 31
        self.order = order.astype(np.int32) if narrow else order
        self.sorted = code[order].astype(np.int32) if narrow else code[order]
        self.unique = bool(len(self.sorted) < 2 or (self.sorted[1:] != self.sorted[:-1]).all())

    def rows_of(self, table: pd.DataFrame) -> NDArray[np.int64]:
        """Row of each of ``table``'s keys (same columns, same order), -1 where the frame has none."""
        code = np.zeros(len(table), dtype=np.int64)
        known = np.ones(len(table), dtype=bool)
        for level, column in zip(self.levels, table.columns, strict=False):
            found = np.asarray(level.get_indexer(table[column]), dtype=np.int64)
            known &= found >= 0
            code = code * max(len(level), 1) + np.maximum(found, 0)
        # the query's codes in the index's own width (they are below its size): searchsorted would otherwise copy the
        # whole sorted array into the wider type at every call
        at = np.minimum(np.searchsorted(self.sorted, code.astype(self.sorted.dtype)), max(len(self.sorted) - 1, 0))
        hit = known & (len(self.sorted) > 0)
        if len(self.sorted):
            hit &= self.sorted[at] == code
        return np.where(hit, self.order[at] if len(self.sorted) else -1, -1).astype(np.int64, copy=False)


class EffectiveRatings:
    """:func:`empathy.labels.ledger.apply_overrides` of one data set's ratings, prepared once per data set.

    ``apply_overrides`` hashes every rating's key on each call (0.4 s of CPU at 3 million rating rows, after every
    decision on every page that reads the effective ratings); here the keys are indexed once, and a call looks up
    the overrides' keys (O(overrides)) and copies the value column. Returns the same frame as ``apply_overrides``
    (the columns other than ``value`` shared with ``ratings``, copy-on-write), and calls it when an override adds
    a rating no judge gave (a gap filled: a new row) or the ratings hold a key twice.
    """

    def __init__(self, ratings: pd.DataFrame) -> None:
        self.ratings = ratings
        keys = list(KEY_COLUMNS)
        self._ready = all(column in ratings.columns for column in (*keys, "value"))
        if self._ready:
            try:
                self._index = _KeyIndex(ratings, keys)
            except OverflowError:  # keys too many to code in an int64: apply_overrides on each call
                self._ready = False
                return
            self._ready = self._index.unique

    def __call__(self, overrides: pd.DataFrame | None) -> pd.DataFrame:
        """The effective ratings under ``overrides`` (as ``apply_overrides(ratings, overrides)``)."""
        keys = list(KEY_COLUMNS)
        if (not self._ready or overrides is None or len(overrides) == 0
                or not all(column in overrides.columns for column in (*keys, "value"))):
            return _ledger().apply_overrides(self.ratings, overrides)  # its result, or its error naming the column
        table = overrides[[*keys, "value"]].drop_duplicates(keys, keep="last")
        rows = self._index.rows_of(table)
        if (rows < 0).any():
            return _ledger().apply_overrides(self.ratings, overrides)
        # read from the ratings at each call (a copy), not kept beside them: 23 MiB at 3 million ratings
        values = self.ratings["value"].to_numpy(dtype=float, copy=True)
        values[rows] = table["value"].to_numpy(dtype=float)
        overridden = np.zeros(len(values), dtype=bool)
        overridden[rows] = True
        out = self.ratings.copy(deep=False)
        out["value"] = values
        out["overridden"] = overridden
        return out


def judge_labels(ratings: pd.DataFrame, dimension: str) -> pd.DataFrame:
    """One row per rated (item_id, model) with each judge's value of ``dimension`` as a column (NaN where absent).

    Only outputs with at least one rating row of ``dimension`` have a row (a missing rating, NaN, counts as a
    row): not the full item x model grid, which would count outputs that do not exist (a model that lacks an
    item) in every denominator built on this table.
    """
    subset = ratings[ratings["dimension"] == dimension]
    if subset.empty:
        return pd.DataFrame(columns=["item_id", "model"])
    # groupby keeps only the (item, model, rater) combinations present; pivot_table(dropna=False) built the
    # product of the levels
    wide = (subset.assign(value=subset["value"].astype(float))
            .groupby(["item_id", "model", "rater"], sort=True)["value"].first().unstack("rater"))
    wide.columns = [str(c) for c in wide.columns]
    wide.columns.name = None
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


def blind_seed(dataset_id: str, dimension: str, annotator: str) -> int:
    """A seed for :func:`blind_queue` of one annotator's queue: stable across reloads, different per data set,
    dimension and annotator (the first 8 bytes of a SHA-256 over the three, length-prefixed)."""
    digest = hashlib.sha256()
    for part in (dataset_id, dimension, annotator):
        encoded = str(part).encode("utf-8", "surrogatepass")
        digest.update(len(encoded).to_bytes(8, "big") + encoded)
    return int.from_bytes(digest.digest()[:8], "big") >> 1  # below 2**63


def blind_queue(queue: pd.DataFrame, *, seed: int, audit: AuditDesign | None = None) -> pd.DataFrame:
    """The rows of a relabel queue in an order that says nothing the judges said: for blind mode.

    Without ``audit``: a uniformly random order, ``np.random.default_rng(seed).permutation`` of the rows sorted by
    ``(item_id, model)`` (so the order depends on the set of outputs and the seed only, never on the queue's own
    order, which :func:`relabel_queue` builds from judge disagreement). With ``audit`` (an
    :class:`empathy.audit.AuditDesign`): its drawn outputs first, in audit order (its own random order, drawn
    before anyone looked), then the others in the seeded random order. Columns are kept (the caller hides the
    judges' labels); the index is reset. Raises ``ValueError`` when the queue lacks ``item_id`` or ``model``,
    ``TypeError``/``ValueError`` for a seed that is not an integer in ``[0, 2**63)``.
    """
    missing = [c for c in ("item_id", "model") if c not in queue.columns]
    if missing:
        raise ValueError(f"blind_queue: the queue has no {', '.join(missing)} column")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise TypeError(f"blind_queue: seed must be an integer, got {seed!r}")
    if not 0 <= int(seed) < 2 ** 63:
        raise ValueError(f"blind_queue: seed must be in [0, 2**63), got {seed}")
    ordered = queue.assign(_item=queue["item_id"].astype(str), _model=queue["model"].astype(str))
    ordered = ordered.sort_values(["_item", "_model"], kind="stable").reset_index(drop=True)
    ordered = ordered.iloc[np.random.default_rng(int(seed)).permutation(len(ordered))]
    if audit is not None:
        place = {(o.item_id, o.model): o.position for o in audit.outputs}
        rank = [place.get(pair, len(place)) for pair in zip(ordered["_item"], ordered["_model"], strict=True)]
        ordered = ordered.assign(_rank=rank).sort_values("_rank", kind="stable").drop(columns="_rank")
    return ordered.drop(columns=["_item", "_model"]).reset_index(drop=True)


def annotator_queue(queue: pd.DataFrame, *, assigned: pd.DataFrame | None = None,
                    skipped: pd.DataFrame | None = None) -> pd.DataFrame:
    """One annotator's queue: ``queue`` (in its own order) kept to their assigned outputs, their skips last.

    ``assigned``: the annotator's rows of :func:`empathy.labels.queue_state.assignments` (``None`` or empty: no
    assignment design, every output of the queue stays); ``skipped``: their rows of
    :func:`empathy.labels.queue_state.skipped_outputs` for the queue's dimension, moved to the end in the order
    they were skipped. Columns are kept; the index is reset.
    """
    has_assigned = assigned is not None and len(assigned) > 0
    has_skipped = skipped is not None and len(skipped) > 0
    if not has_assigned and not has_skipped:
        return queue.reset_index(drop=True)  # every output, in the queue's order
    # vectorised (hash look-ups over the whole queue: a queue of 200,000 outputs is rebuilt on every decision)
    keys = _pair_index(queue)
    keep = keys.isin(_pair_index(assigned)) if has_assigned else np.ones(len(queue), dtype=bool)
    rank = np.full(len(queue), -1, dtype=np.int64)
    if has_skipped:
        order = _pair_index(skipped)
        order = order[~order.duplicated(keep="first")]  # a pair's first skip is its place
        rank = order.get_indexer(keys).astype(np.int64)
    return (queue[keep].assign(_late=rank[keep]).sort_values("_late", kind="stable").drop(columns="_late")
            .reset_index(drop=True))


def _pair_index(frame: pd.DataFrame) -> pd.MultiIndex:
    """The ``(item_id, model)`` of each row of ``frame`` as text."""
    return pd.MultiIndex.from_arrays([frame["item_id"].astype(str), frame["model"].astype(str)])


def human_vs_judges(judge_ratings: pd.DataFrame, overrides: pd.DataFrame | None,
                    dimensions: Sequence[str] | None = None) -> pd.DataFrame:
    """Instance-level agreement of the human verdicts (from overrides) with each judge's own ratings.

    Rows of :func:`empathy.agreement.pairwise_agreement` with ``rater_a == "human"``; empty without overrides.
    Kappa is the statistic for binary CA, Spearman for the scores.
    """
    ledger = _ledger()
    human = (ledger.human_ratings(overrides, rater=HUMAN) if overrides is not None
             else ledger.human_ratings(pd.DataFrame()))
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


@dataclass(frozen=True)
class HumanAgreement:
    """Human-human agreement on the outputs decided by two or more annotators."""

    pairs: pd.DataFrame = field(default_factory=pd.DataFrame)
    alpha: pd.DataFrame = field(default_factory=pd.DataFrame)
    n_items: int = 0


def human_agreement(decisions: pd.DataFrame) -> HumanAgreement:
    """Agreement between annotators, on the ``(item_id, model, dimension)`` decided by two or more of them.

    ``pairs``: :func:`empathy.agreement.pairwise_agreement` of every annotator pair (n, Cohen's kappa, percent
    agreement, Spearman...); ``alpha``: Krippendorff's alpha per dimension over all annotators
    (:func:`empathy.agreement.krippendorff_by_dimension`, nominal for binary labels). ``n_items``: how many
    ``(item, model, dimension)`` had two or more annotators.
    """
    ratings = _ledger().annotator_ratings(decisions)
    if ratings.empty:
        return HumanAgreement(pd.DataFrame(), pd.DataFrame(), 0)
    size = ratings.groupby(["item_id", "model", "dimension"])["rater"].transform("nunique")
    shared = ratings[size >= 2]
    n_items = int(len(shared.drop_duplicates(["item_id", "model", "dimension"])))
    if shared.empty:
        return HumanAgreement(pd.DataFrame(), pd.DataFrame(), 0)
    return HumanAgreement(pairwise_agreement(shared), krippendorff_by_dimension(shared), n_items)


def ranking_shift(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    """How each model's rank moved per (scorer, metric) between two results tables, under the one rank convention
    (:func:`empathy.evaluate.rank_by_direction`: 1 = the best value in the metric's direction, the least failure).

    Columns: scorer, metric, model, value_before, value_after, rank_before, rank_after, moved (before - after;
    positive means the model moved up the ranking); first ``task`` for per-task tables (ranks within a task).
    """
    tasks = ["task"] if per_task(before) or per_task(after) else []

    def ranked(table: pd.DataFrame) -> pd.DataFrame:
        frame = table.dropna(subset=["value"])[[*tasks, "scorer", "metric", "model", "value"]].copy()
        frame["rank"] = rank_by_direction(frame, [*tasks, "scorer", "metric"]).astype(float)
        return frame

    merged = ranked(before).merge(ranked(after), on=[*tasks, "scorer", "metric", "model"], how="outer",
                                  suffixes=("_before", "_after"))
    merged["moved"] = merged["rank_before"] - merged["rank_after"]
    merged["metric_order"] = merged["metric"].map(m.registry_position)
    merged = merged.sort_values([*tasks, "metric_order", "scorer", "rank_after", "model"]).drop(columns="metric_order")
    return merged.reset_index(drop=True)


def egm_readings(zero: pd.DataFrame, exclude: pd.DataFrame, metric: str | None = None) -> pd.DataFrame:
    """EGM per (model, judge) under both readings of an item with a + b = 0, where they differ.

    ``zero`` and ``exclude`` are results tables computed with ``egm_both_zero="zero"`` (the item counts as 0,
    the default: Eq. 2 is 0/0 there, so 0 is this project's choice) and ``"exclude"`` (the item is left out as
    undefined). ``metric``: the metric compared (default: the registry's metric that reads ``egm_both_zero``,
    EGM). Columns: ``task`` (per-task tables only), ``model``, ``scorer``, ``EGM (a+b=0 as 0)``, ``n (as 0)``,
    ``EGM (a+b=0 left out)``, ``n (left out)`` (named after ``metric``); only rows whose values differ (beyond
    1e-12, or defined under one reading only).
    """
    if metric is None:
        metric = next(iter(m.metrics_reading("egm_both_zero")), None)
    tasks = ["task"] if per_task(zero) else []
    keys = [*tasks, "model", "scorer"]
    columns = [*keys, f"{metric} (a+b=0 as 0)", "n (as 0)", f"{metric} (a+b=0 left out)", "n (left out)"]

    def values(table: pd.DataFrame) -> pd.DataFrame:
        return table.loc[table["metric"] == metric, [*keys, "value", "n"]]

    merged = values(zero).merge(values(exclude), on=keys, how="outer", suffixes=("_zero", "_exclude"))
    a, b = merged["value_zero"].to_numpy(dtype=float), merged["value_exclude"].to_numpy(dtype=float)
    differ = np.where(np.isnan(a) | np.isnan(b), np.isnan(a) != np.isnan(b), np.abs(a - b) > 1e-12)
    merged = merged[differ].rename(columns={"value_zero": columns[-4], "n_zero": columns[-3],
                                            "value_exclude": columns[-2], "n_exclude": columns[-1]})
    return merged[columns].reset_index(drop=True)


def per_task(table: pd.DataFrame) -> bool:
    """Whether a results table was computed per task (its ``task`` column names tasks, not the one group ``all``)."""
    return "task" in table.columns and len(table) > 0 and set(table["task"]) != {"all"}


def metric_pivot(table: pd.DataFrame) -> pd.DataFrame:
    """Wide view of a results table: one row per model (per task and model for a per-task table), one column
    per ``METRIC (scorer)`` and its n."""
    if table.empty:
        return pd.DataFrame(columns=["model"])
    frame = table.copy()
    frame["column"] = frame["metric"] + " (" + frame["scorer"] + ")"
    order = (frame[["metric", "scorer", "column"]].drop_duplicates()
             .assign(o=lambda f: f["metric"].map(m.registry_position)).sort_values(["o", "scorer"])["column"].tolist())
    index = ["task", "model"] if per_task(table) else "model"
    values = frame.pivot_table(index=index, columns="column", values="value", aggfunc="first")
    counts = frame.pivot_table(index=index, columns="column", values="n", aggfunc="first")
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


def focus_queue(queue: pd.DataFrame, keys: Sequence[tuple[str, str]]) -> tuple[pd.DataFrame, list[tuple[str, str]]]:
    """The Relabel ``queue`` kept to the outputs ``keys`` (e.g. one confusion cell's), in the queue's own order.

    Returns the kept rows (index reset) and the keys the queue does not hold (outputs of another task, or
    without a judge rating of the queue's dimension), in the order given, so the caller can say why fewer rows
    than keys are shown. Duplicate keys count once. Raises TypeError when a key is not an (item_id, model) pair
    of strings, and ValueError when the queue lacks its item_id or model column.
    """
    missing_columns = [c for c in ("item_id", "model") if c not in queue.columns]
    if missing_columns:
        raise ValueError(f"focus_queue: the queue has no {', '.join(missing_columns)} column")
    wanted: dict[tuple[str, str], None] = {}
    for position, key in enumerate(keys):
        if (not isinstance(key, (tuple, list)) or len(key) != 2
                or not all(isinstance(part, str) for part in key)):
            raise TypeError(f"focus_queue: key {position} is {key!r}, not an (item_id, model) pair of strings")
        wanted[(key[0], key[1])] = None
    held = list(zip(queue["item_id"].astype(str), queue["model"].astype(str), strict=True))
    kept = queue[[pair in wanted for pair in held]].reset_index(drop=True)
    present = set(held)
    return kept, [pair for pair in wanted if pair not in present]
