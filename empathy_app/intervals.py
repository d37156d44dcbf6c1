"""Intervals where people look: the item-cluster bootstrap of the results tables, and the audits' corrected values.

The numbers are the library's: :func:`empathy.bootstrap.table_intervals` (each value's expanded percentile
interval over item resamples, its rank interval, and Table 6's rho interval, exact permutation p and Kendall's
tau-b, from one set of item resamples per task), :func:`empathy.inference.ppi_estimates` (every stored audit
design of the data set, from the judges' *own* ratings and the decisions made in audit order,
:func:`empathy.labels.audits.audit_decisions`) and :func:`empathy.label_budget.label_budget`. This module caches
them and shapes them for the Overview, Agreement and Relabel pages:

* the bootstrap per data set, task scope, EGM reading, resamples and seed (:class:`empathy.bootstrap.
  LiveIntervals`: the items resampled and the judges' own intervals computed once), kept current per set of
  overrides: a decision recomputes the terms it changes and the one (task, metric) they belong to, never the
  resampling; a rerun that changes nothing reads the cached table;
* the PPI estimates per design and its audit labels (a decision outside the audit, or a rerun, leaves them
  cached), so the Relabel queue's fragment can show them after every decision.

Under the sidebar's task filter the results table is one task's, named ``all``: each audit's rows of that task
take the place of its pooled rows (:func:`scoped_reports`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from empathy.audit import AuditDesign
from empathy.bootstrap import LiveIntervals, TableIntervals, plan_intervals
from empathy.evaluate import TextFeatures, plan_metrics
from empathy.inference import (
    ALL_TASKS,
    ESTIMATOR_PPI,
    PPIReport,
    estimator_signature_fields,
    estimator_table,
    ppi_estimates,
)
from empathy.label_budget import LabelBudget, label_budget
from empathy.labels.audits import AuditDecisions, audit_decisions, design_list, load_design
from empathy.labels.ledger import apply_overrides
from empathy.labels.locations import StoreError
from empathy.metrics import get_metric, judged_metrics, registry_token
from empathy.review import Recompute
from empathy_app import compute, overrides
from empathy_app.loading import NO_TASK, Loaded
from empathy_app.markup import md

#: The bootstrap's resamples and seed, as the command line's ``metrics`` defaults (``--resamples``, ``--seed``).
RESAMPLES = 1000
SEED = 0
#: The key columns of a results row.
KEYS = ["task", "model", "scorer", "metric"]
#: Below this many audited outputs a PPI interval is a rough normal approximation (docs/statistics.md, *Small n*:
#: 0.89-0.93 coverage at 30 for skewed terms; a handful of binary labels can give a degenerate, far too narrow one).
SMALL_AUDIT = 30
SMALL_AUDIT_NOTE = (f"With fewer than {SMALL_AUDIT} audited outputs a corrected interval is a rough normal "
                    "approximation: it can be far too narrow (every audited label agreeing with the judge) or reach "
                    "outside the metric's range; read it as too few decisions, not as a result.")
#: The columns an audit's corrected value adds to a judge's row (:func:`value_table`).
CORRECTED_COLUMNS = ("corrected", "corrected_low", "corrected_high", "n_audit", "human", "audit")


# ------------------------------------------------------------------------------------------ the bootstrap

@st.cache_resource(show_spinner="Resampling items for the intervals…", max_entries=2)
def _live(key: str, scope: str, n_resamples: int, seed: int, _engine: Recompute) -> LiveIntervals:
    # once per data set, scope and bootstrap: the resamples drawn, the judges' own labels' intervals computed
    # (about 75 MB of arrays at 200,000 outputs: two held, e.g. both EGM readings or two data sets)
    return LiveIntervals(_engine.plan, metrics=judged_metrics(), n_resamples=n_resamples, seed=seed)


@st.cache_data(show_spinner=False, max_entries=8)
def _intervals(key: str, okey: str, scope: str, n_resamples: int, seed: int, _engine: Recompute,
               _overrides: pd.DataFrame | None) -> TableIntervals:
    values = _live(key, scope, n_resamples, seed, _engine).table(_overrides)
    if values is None:  # an override adds a rating the plan has no place for: plan the effective ratings
        plan = plan_metrics(_engine.outputs, apply_overrides(_engine.ratings, _overrides), features=_engine.features,
                            **{**_engine.settings, "include_ld": False})
        values = plan_intervals(plan, metrics=judged_metrics(), n_resamples=n_resamples, seed=seed)
    return values


def intervals(data: Loaded, *, with_overrides: bool | None = None, egm_both_zero: str = "zero",
              n_resamples: int = RESAMPLES, seed: int = SEED) -> TableIntervals:
    """:func:`empathy.bootstrap.table_intervals` of the results table :func:`empathy_app.compute.report` shows
    (the same overrides, task scope and EGM reading), from its per-item terms (LD has none: its
    standardisation ties a model's terms together).

    The bootstrap is drawn once per data set, task scope, EGM reading, resamples and seed and kept current per set
    of overrides (:class:`empathy.bootstrap.LiveIntervals`); the table is cached per set of overrides too, and both
    are shared by the sessions.
    """
    current = compute.overrides_used(data, with_overrides)
    scope = f"by_task={compute.by_task(data)}|egm={egm_both_zero}|metrics={registry_token()}"
    return _intervals(data.content_key, overrides.overrides_key(current), scope, int(n_resamples), int(seed),
                      compute.engine(data, egm_both_zero=egm_both_zero), current)


#: What ``p_better`` means, in plain words (under the Overview's table of adjacent models).
P_BETTER_MEANING = (
    "**p_better**: the models of each metric and judge in order, each with the next one. p_better is the share "
    "of the bootstrap's resamples of the items in which the model ranked better stays better than the next "
    "(a tie counts half): 0.5 means these items cannot tell the two apart, near 1 that the order holds whichever "
    "items are drawn. It is support for the order from resampling, not the probability that the model is truly "
    "better, and it says nothing about a judge's errors. *difference*: worse minus better in the metric's "
    "direction (0 or more), with its 95 % interval.")


def settings_caption(values: TableIntervals) -> str:
    """One line saying what the intervals are and what they rest on (for under a table)."""
    if not values.n_resamples:
        return "No bootstrap (0 resamples): no interval."
    return (f"95 % intervals: item-cluster bootstrap ({values.n_resamples:,} resamples, seed {values.seed}; an "
            "item's outputs of every model resampled together), expanded percentile; rank intervals from the same "
            "resamples (1 = the least failure). They cover the sampling of items, not a judge's errors: that is "
            "what an audit corrects.")


# ------------------------------------------------------------------------------------------ the audits

@dataclass(frozen=True)
class AuditEstimates:
    """The data set's stored audits, newest first: the estimable ones' PPI reports and labels, and a line (escaped
    Markdown) for each design that could not be read or estimated (damaged, or drawn from other outputs)."""

    reports: tuple[PPIReport, ...]
    labels: tuple[AuditDecisions, ...]
    problems: tuple[str, ...]

    def report_of(self, digest: str) -> PPIReport | None:
        """The report of the design with this full digest (``None``: not estimable or not stored)."""
        return next((r for r in self.reports if r.design.digest == digest), None)

    def labels_of(self, digest: str) -> AuditDecisions | None:
        """The audit labels of the design with this full digest."""
        return next((lab for lab in self.labels if lab.design.digest == digest), None)


def stored_designs(data: Loaded) -> tuple[list[AuditDesign], list[str]]:
    """The audit designs stored for the data set, newest first, and a line (escaped Markdown) for each damaged one."""
    try:
        listed = design_list(data.store, data.dataset_id)
    except StoreError as error:
        return [], [f"The audit designs cannot be read: {md(error)}"]
    designs, problems = [], []
    for digest in reversed(listed["digest"].tolist()):
        try:
            designs.append(load_design(data.store, data.dataset_id, str(digest)))
        except StoreError as error:
            problems.append(f"Audit {md(str(digest)[:12])} is not used: {md(error)}")
    return designs, problems


@st.cache_data(show_spinner=False, max_entries=64)
def _estimate(key: str, digest: str, labels_key: str, egm_both_zero: str, _outputs: pd.DataFrame,
              _ratings: pd.DataFrame, _design: AuditDesign, _decisions: pd.DataFrame, _features: TextFeatures
              ) -> tuple[PPIReport | None, str]:
    try:
        # the judges' own ratings: with the overrides applied the audited values would equal the humans'
        return ppi_estimates(_outputs, _ratings, _design, _decisions, sentences=_features.frame(_outputs),
                             egm_both_zero=egm_both_zero), ""
    except ValueError as error:
        return None, str(error)


def estimate(data: Loaded, design: AuditDesign, labels: AuditDecisions, *, egm_both_zero: str = "zero"
             ) -> tuple[PPIReport | None, str]:
    """:func:`empathy.inference.ppi_estimates` of one design on the whole data set (every task), or why not.

    Cached per data set, design and its audit labels: a decision outside the audit leaves it cached.
    """
    outputs = data.all_data.outputs
    return _estimate(data.content_key, design.digest, f"{labels.rule}|{overrides.overrides_key(labels.decisions)}",
                     egm_both_zero, outputs, data.all_data.ratings, design, labels.decisions,
                     compute.all_features(data))


def audit_estimates(data: Loaded, *, egm_both_zero: str = "zero") -> AuditEstimates:
    """Every stored audit of the data set with its PPI estimates (newest first), from the ledger's fresh decisions
    under the session's label rule; the designs that cannot be estimated are named in ``problems``."""
    designs, problems = stored_designs(data)
    if not designs:
        return AuditEstimates((), (), tuple(problems))
    ledger = overrides.ledger(data)
    reports, labels = [], []
    for design in designs:
        decided = audit_decisions(ledger.status.fresh, design, rule=ledger.rule, stale=ledger.status.stale)
        report, problem = estimate(data, design, decided, egm_both_zero=egm_both_zero)
        if report is None:
            problems.append(f"Audit {md(design.short_digest)} ({md(design.judge)} on {md(design.dimension)}) is not "
                            f"used: {md(problem)}")
            continue
        reports.append(report)
        labels.append(decided)
    return AuditEstimates(tuple(reports), tuple(labels), tuple(problems))


def scoped_reports(reports: Sequence[PPIReport], data: Loaded) -> list[PPIReport]:
    """The reports as the results table shown reads them: under the sidebar's task filter, each report's rows of
    that task become its pooled rows (the filtered table's one group is ``all``); otherwise unchanged."""
    if not data.filtered:
        return list(reports)
    task = "(none)" if data.task == NO_TASK else data.task  # ppi_estimates' name of outputs without a task
    scoped = []
    for report in reports:
        table = report.table
        part = table[table["task"] == task]
        if part.empty and {o.task for o in report.design.outputs} == {"" if data.task == NO_TASK else data.task}:
            part = table[table["task"] == ALL_TASKS]  # a frame of this one task has pooled rows only
        scoped.append(dataclasses.replace(report, table=part.assign(task=ALL_TASKS).reset_index(drop=True)))
    return scoped


# ------------------------------------------------------------------------------------------ tables

def value_table(table: pd.DataFrame, values: TableIntervals, reports: Sequence[PPIReport], *, by_task: bool
                ) -> pd.DataFrame:
    """Every row of a results table with its interval and rank interval and, beside an audited judge's value, the
    value corrected by the audit (:func:`empathy.inference.estimator_table`'s PPI row folded into columns).

    Columns: task, model, scorer, metric, value, ci_low, ci_high, n, rank, rank_low, rank_high and
    :data:`CORRECTED_COLUMNS` (``corrected`` the PPI++ value, ``corrected_low``/``corrected_high`` its interval,
    ``n_audit`` the audited outputs it uses, ``human`` the human-only value, ``audit`` the design's short digest),
    and ``warning`` (a bootstrap interval to read with care). With several audits of one judge and dimension,
    the first of ``reports`` (the newest) is shown.
    """
    rows = estimator_table(table, values.values, reports, by_task=by_task)
    corrected = rows[rows["estimator"] == ESTIMATOR_PPI].drop_duplicates(KEYS, keep="first")
    corrected = corrected[[*KEYS, "value", "ci_low", "ci_high", "n_audit", "human", "audit"]].rename(
        columns={"value": "corrected", "ci_low": "corrected_low", "ci_high": "corrected_high"})
    plain = rows[rows["estimator"] != ESTIMATOR_PPI].drop(columns=["n_audit", "human", "audit"])
    shown = plain.merge(corrected, on=KEYS, how="left")
    return shown[[*KEYS, "value", "ci_low", "ci_high", "n", "rank", "rank_low", "rank_high", *CORRECTED_COLUMNS,
                  "warning"]].reset_index(drop=True)


def rank_range(low: object, high: object) -> str:
    """A rank interval as text (``2-4``, ``1`` when it is one rank, empty when unknown)."""
    if pd.isna(low) or pd.isna(high):
        return ""
    return f"{int(low)}" if int(low) == int(high) else f"{int(low)}–{int(high)}"


def with_rank_intervals(ranks: pd.DataFrame, shown: pd.DataFrame) -> pd.DataFrame:
    """The rankings table (index task/model, one column ``metric (scorer)`` each) with each column's rank interval
    beside it (``<column> 95 %``, text such as ``1–3``), from :func:`value_table`'s ``rank_low``/``rank_high``."""
    index = list(ranks.index.names)
    ranges = shown.assign(column=shown["metric"] + " (" + shown["scorer"] + ")",
                          ranks=[rank_range(low, high) for low, high in zip(shown["rank_low"], shown["rank_high"],
                                                                            strict=True)])
    ranges = ranges.pivot_table(index=index, columns="column", values="ranks", aggfunc="first")
    out = pd.DataFrame(index=ranks.index)
    for column in ranks.columns:
        out[column] = ranks[column]
        if column in ranges.columns and (ranges[column].fillna("") != "").any():  # LD has no interval
            out[f"{column} 95 %"] = ranges[column].reindex(ranks.index).fillna("")
    return out


def chart_frame(table: pd.DataFrame, shown: pd.DataFrame) -> pd.DataFrame:
    """The bars of the Overview's charts: each judge's value with its bootstrap interval and, beside an audited
    judge, a bar ``<judge> corrected by the audit`` with its PPI interval."""
    bars = table.merge(shown[[*KEYS, "ci_low", "ci_high"]], on=KEYS, how="left")
    audited = shown[shown["corrected"].notna()]
    if audited.empty:
        return bars
    extra = audited.assign(scorer=audited["scorer"] + " corrected by the audit", value=audited["corrected"],
                           ci_low=audited["corrected_low"], ci_high=audited["corrected_high"], n=audited["n_audit"],
                           n_missing=0)
    return pd.concat([bars, extra[[c for c in bars.columns if c in extra.columns]]], ignore_index=True)


def signature_fields(values: TableIntervals, reports: Sequence[PPIReport] = ()) -> dict[str, str]:
    """The signature's fields of a table with these intervals and audits: the estimator, each audit's digest,
    judge, dimension and decisions, and the bootstrap's unit, interval, resamples and seed."""
    return {**values.signature_fields(), **estimator_signature_fields(reports)}


# ------------------------------------------------------------------------------------------ the label budget

def budget(report: PPIReport) -> LabelBudget:
    """:func:`empathy.label_budget.label_budget` of a report, the pairs of each metric ordered in that metric's
    direction (:attr:`empathy.metrics.MetricSpec.better`)."""
    names = [str(name) for name in report.table["metric"].unique()]
    parts = []
    for direction in sorted({get_metric(name).better for name in names}) or ["lower"]:
        whole = label_budget(report, direction=direction)
        mine = [name for name in names if get_metric(name).better == direction]
        parts.append(dataclasses.replace(whole, models=whole.models[whole.models["metric"].isin(mine)],
                                         pairs=whole.pairs[whole.pairs["metric"].isin(mine)]))
    if len(parts) == 1:
        return parts[0]
    return dataclasses.replace(parts[0], models=pd.concat([p.models for p in parts], ignore_index=True),
                               pairs=pd.concat([p.pairs for p in parts], ignore_index=True))


def half_width(low: object, high: object) -> float:
    """Half the width of an interval (NaN when either end is missing)."""
    if pd.isna(low) or pd.isna(high):
        return math.nan
    return (float(high) - float(low)) / 2
