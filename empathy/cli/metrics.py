"""``empathy metrics OUTPUTS [--ratings FILE ...]``: SA, EGM, CA per model and judge; LD per model."""

from __future__ import annotations

import argparse
import re
import sqlite3
import sys
from dataclasses import replace
from typing import TYPE_CHECKING

from empathy.cli.common import (
    FORMATS,
    MAX_RESAMPLES,
    CommandFailed,
    add_cluster_options,
    bounded_int,
    check_inputs,
    emit,
    print_json,
    print_table,
    set_handler,
)
from empathy.escaping import terminal_literal
from empathy.vocabulary import DEFAULT_LABEL_RULE, EGM_BOTH_ZERO, LABEL_RULES, LD_STANDARDIZATIONS

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    from numpy.typing import NDArray

    from empathy.audit import AuditDesign
    from empathy.evaluate import MetricsReport, TextFeatures
    from empathy.inference import PPIReport
    from empathy.io import Dataset
    from empathy.labels.ledger import Ledger

# The parser's message for a text longer than spaCy's limit names the text by its position in the analysed
# list; the command finds the cell of that length to name its file, row and column instead.
_TOO_LONG = re.compile(r"^text #\d+ has (\d+) characters")


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``metrics`` sub-command."""
    metrics = commands.add_parser("metrics", help="SA, EGM, CA per model and judge; LD per model")
    metrics.add_argument("outputs", help="outputs file (CSV, JSONL or Parquet)")
    metrics.add_argument("--ratings", action="append", metavar="FILE",
                         help="long-form ratings file (repeat for several)")
    metrics.add_argument("--overrides", "--store", dest="overrides", metavar="STORE", nargs="?", const="",
                         help="apply the human overrides of this store: a SQLite file or a postgresql:// URL "
                         "(without a value: $EMPATHY_STORE, else the store beside the outputs)")
    metrics.add_argument("--label-rule", choices=LABEL_RULES, default=DEFAULT_LABEL_RULE,
                         help="which human label counts where several annotators decided one rating")
    metrics.add_argument("--store-name", metavar="NAME",
                         help="the data set's name in the store (default: the outputs file, relative to the store)")
    metrics.add_argument("--egm-both-zero", choices=EGM_BOTH_ZERO, default=EGM_BOTH_ZERO[0],
                         help="EGM of an item with a + b = 0, where Eq. 2 is 0/0: 0 (default; this project's "
                              "choice), or left out as undefined")
    scope = metrics.add_mutually_exclusive_group()
    scope.add_argument("--by-task", action="store_true",
                       help="compute every value within each task (the default when the outputs have tasks)")
    scope.add_argument("--pooled", action="store_true",
                       help="pool all tasks into one value per model (LD then standardises across genres); "
                       "named 'tasks:pooled' in the signature")
    metrics.add_argument("--no-ld", action="store_true", help="skip Linguistic Distancing")
    metrics.add_argument("--ld-standardization", choices=LD_STANDARDIZATIONS, default=LD_STANDARDIZATIONS[0],
                         help="Eq. 4 as written (each side its own mean and sd) or both sides with the "
                         "reference's statistics")
    metrics.add_argument("--resamples", type=bounded_int(0, MAX_RESAMPLES), default=1000, metavar="N",
                         help="item-cluster bootstrap resamples of every value's interval (ci_low, ci_high), its rank "
                         f"interval and the inter-judge rho's interval (default 1000; 0 = none; at most "
                         f"{MAX_RESAMPLES:,})")
    metrics.add_argument("--seed", type=bounded_int(0), default=0,
                         help="seed of the bootstrap and of Monte Carlo rank tests (default 0)")
    metrics.add_argument("--audit", action="append", metavar="DIGEST",
                         help="with --store: add the PPI rows of this stored audit design (its digest or a prefix "
                         "of 6+ hex digits; repeatable; default: every audit design of the data set)")
    metrics.add_argument("--format", choices=FORMATS, default="table")
    add_cluster_options(metrics)
    metrics.add_argument("--features-dir", default=None, metavar="DIR",
                         help="with --scheduler: keep the parse partitions in DIR so a re-run resumes from them "
                         "(default: a temporary folder, removed afterwards)")
    set_handler(metrics, run)


def run(args: argparse.Namespace) -> int:
    """Handler of ``metrics``: print the results table, agreement and signature; return the exit code."""
    check_inputs(args.outputs, *(args.ratings or []))
    if args.features_dir is not None and args.scheduler is None:
        raise ValueError("--features-dir needs --scheduler (the single-process run keeps its parses in the cache)")
    if args.audit and args.overrides is None:
        raise ValueError("--audit needs --store (the audit designs and decisions live in the override store)")
    from empathy.io import DataError, load_dataset

    dataset = load_dataset(args.outputs, args.ratings or [])
    ratings = dataset.ratings
    n_overrides = None
    ledger = None
    designs: list[AuditDesign] = []
    if args.overrides is not None:
        from pathlib import Path

        from empathy.labels.ledger import apply_ledger, ledger_for_files
        from empathy.labels.locations import default_store_path, mask_location

        location = args.overrides or default_store_path(Path(args.outputs).resolve().parent)
        try:
            ledger = ledger_for_files(location, args.outputs, dataset.outputs, rule=args.label_rule,
                                      name=args.store_name)
        except sqlite3.Error as exc:  # a corrupt or foreign file given as the store
            raise DataError(mask_location(location), f"cannot read the override store ({exc})") from None
        designs = _stored_designs(args, ledger)  # a damaged design stops the run here, before any output
        ratings = apply_ledger(ratings, ledger)
        n_overrides = len(ledger.applied)
        print(terminal_literal(f"empathy: {ledger.summary()}"), file=sys.stderr)
    from empathy.evaluate import default_by_task, plan_metrics, text_features, text_rows  # SciPy, spaCy: only now

    # The paper reports per task: with several tasks the default is per task, and pooling is an explicit,
    # labelled choice (pooled LD standardises across genres).
    # The plan names pooled tasks in the signature ('tasks:pooled').
    by_task = args.by_task or (not args.pooled and default_by_task(dataset.outputs))

    try:
        # only the texts a computed metric reads are parsed (none for --no-ld without EGM ratings)
        rows = text_rows(dataset.outputs, ratings, include_ld=not args.no_ld)
        features = _cluster_features(args, dataset.outputs, rows) if args.scheduler is not None else None
        if features is None:
            features = text_features(dataset.outputs, rows=rows)
        plan = plan_metrics(dataset.outputs, ratings, features=features, by_task=by_task, include_ld=not args.no_ld,
                            ld_standardization=args.ld_standardization, egm_both_zero=args.egm_both_zero)
        report = plan.evaluate(n_overrides=n_overrides)
    except ValueError as exc:
        raise _located(exc, dataset.outputs, args.outputs) from None
    from empathy.agreement import table6_notice

    notice = table6_notice(report.table)
    if notice:
        print(terminal_literal(f"empathy: note: {notice}"), file=sys.stderr)
    from empathy import metrics as registry
    from empathy.bootstrap import plan_intervals
    from empathy.inference import estimator_signature_fields, estimator_table
    from empathy.review import agreement_labels

    intervals = plan_intervals(plan, metrics=registry.judged_metrics(), n_resamples=args.resamples, seed=args.seed)
    audits = _audit_reports(args, dataset, features, ledger, designs) if designs else []
    extra = {**(ledger.signature_fields() if ledger is not None else {}), **intervals.signature_fields(),
             **estimator_signature_fields(audits)}
    signature = replace(report.signature, extra={**report.signature.extra, **extra})
    if ledger is not None:  # the human decisions counted as decisions (one "(all judges)" decision is one)
        signature = replace(signature, decisions=ledger.applied_decisions)
    report = replace(report, signature=signature)
    rows = estimator_table(report.table, intervals.values, audits, by_task=by_task)
    agreement = intervals.beside(report.agreement)
    # which labels each Table 6 row rests on, and where a human gave both judges the same label
    agreement = agreement_labels(agreement, ledger.applied if ledger is not None else None,
                                 dataset.outputs if by_task else None)
    if args.format == "json":
        print_json(_payload(report, rows, agreement, by_task, intervals.pairs))
        return 0
    shown = rows if args.format == "csv" else rows[[c for c in _TABLE_COLUMNS if audits or c not in _AUDIT_COLUMNS]]
    emit(shown if by_task else shown.drop(columns="task"), args.format, str(report.signature))
    if args.format == "table" and len(agreement):
        print("\ninter-judge Spearman over models (rho's interval over item resamples, exact p over orderings):")
        table = agreement[_AGREEMENT_TABLE]
        print_table(table if by_task else table.drop(columns="task"))
        for warning in agreement["warning"].dropna().unique():
            print(f"warning: {terminal_literal(warning)}")
    return 0


#: Columns of ``--format table`` (CSV has all of :data:`empathy.inference.ESTIMATOR_COLUMNS`).
_TABLE_COLUMNS = ("task", "model", "scorer", "metric", "estimator", "value", "ci_low", "ci_high", "n", "rank",
                  "rank_low", "rank_high", "n_audit", "human", "ess_gain", "audit", "warning")
_AUDIT_COLUMNS = ("n_audit", "human", "ess_gain", "audit")
_AGREEMENT_TABLE = ["task", "metric", "scorer_a", "scorer_b", "spearman", "ci_low", "ci_high", "n_models",
                    "p_exact", "kendall_tau_b", "p_kendall", "labels", "human_decisions"]
#: Keys of each row kind in the JSON contract, after the original keys (appended: old readers see no change).
_INTERVAL_KEYS = ["estimator", "ci_low", "ci_high", "rank", "rank_low", "rank_high", "warning"]
_PPI_KEYS = ["estimator", "ci_low", "ci_high", "n_audit", "n_decided", "n_pending", "n_skipped", "n_unusable", "human",
             "human_low", "human_high", "lam", "n_effective", "ess_gain", "scheme", "audit"]
_AGREEMENT_KEYS = ["ci_low", "ci_high", "p_exact", "p_method", "p_se", "kendall_tau_b", "p_kendall", "n_items"]


def _payload(report: MetricsReport, rows: pd.DataFrame, agreement: pd.DataFrame, by_task: bool,
             pairs: pd.DataFrame) -> dict[str, object]:
    """The JSON contract: ``metrics`` (each row's original keys, then its interval keys; PPI rows beside), the
    ``agreement`` rows with their interval, exact p and tau-b, the adjacent ``pairs`` of each (task, scorer,
    metric) with ``p_better`` (the share of item resamples in which the better model stays better, ties
    half; :data:`empathy.bootstrap.TABLE_PAIR_COLUMNS`), and the ``signature``."""
    from empathy.inference import ESTIMATOR_PPI
    from empathy.io import json_value
    from empathy.review import PROVENANCE_COLUMNS

    first = ["task"] if by_task else []
    plain = [*first, "model", "scorer", "metric", "value", "n", "n_missing", "n_undefined", *_INTERVAL_KEYS]
    audited = [*first, "model", "scorer", "metric", "value", "n", *_PPI_KEYS]
    metrics_rows = [{k: json_value(row[k]) for k in (audited if row["estimator"] == ESTIMATOR_PPI else plain)}
                    for row in rows.to_dict("records")]
    keys = [*first, "metric", "scorer_a", "scorer_b", "spearman", "n_models", *_AGREEMENT_KEYS, *PROVENANCE_COLUMNS]
    agreement_rows = [{k: json_value(row[k]) for k in keys} for row in agreement.to_dict("records")]
    pair_keys = [*first, "scorer", "metric", "better", "worse", "value_better", "value_worse", "difference",
                 "difference_low", "difference_high", "n", "p_better"]
    pair_rows = [{k: json_value(row[k]) for k in pair_keys} for row in pairs.to_dict("records")]
    return {"metrics": metrics_rows, "agreement": agreement_rows, "pairs": pair_rows,
            "signature": str(report.signature)}


def _stored_designs(args: argparse.Namespace, ledger: Ledger) -> list[AuditDesign]:
    """The audit designs to estimate: ``--audit``'s, or every design of the data set (each validated)."""
    from pathlib import Path

    from empathy.labels.audits import load_design, load_designs
    from empathy.labels.backends import open_for_reading
    from empathy.labels.locations import default_store_path

    store = open_for_reading(args.overrides or default_store_path(Path(args.outputs).resolve().parent))
    if args.audit:
        return [load_design(store, ledger.name, digest) for digest in args.audit]
    return load_designs(store, ledger.name)


def _audit_reports(args: argparse.Namespace, dataset: Dataset, features: TextFeatures, ledger: Ledger,
                   designs: list[AuditDesign]) -> list[PPIReport]:
    """The PPI estimates of the audits, from the judges' own ratings and the audit decisions made in audit order; a
    design whose frame changed since it was drawn is named on stderr and skipped unless ``--audit`` asked for it."""
    from empathy.inference import ppi_estimates
    from empathy.labels.audits import audit_decisions

    sentences = features.frame(dataset.outputs)
    reports = []
    for design in designs:
        labels = audit_decisions(ledger.status.fresh, design, rule=ledger.rule, stale=ledger.status.stale)
        try:
            # the judges' own ratings: with the overrides applied the audited values would equal the humans'
            reports.append(ppi_estimates(dataset.outputs, dataset.ratings, design, labels.decisions,
                                         sentences=sentences, egm_both_zero=args.egm_both_zero))
        except ValueError as exc:
            if args.audit:
                raise
            print(terminal_literal(f"empathy: note: audit {design.short_digest} skipped: {exc}"), file=sys.stderr)
            continue
        print(terminal_literal(f"empathy: {labels.summary()}"), file=sys.stderr)
    return reports


def _cluster_features(args: argparse.Namespace, outputs: pd.DataFrame, rows: NDArray[np.bool_]
                      ) -> TextFeatures | None:
    """The text features (sentence counts, distancing densities) of ``rows`` parsed on the ``--scheduler``
    cluster; ``None`` (no cluster started) when no row needs them."""
    if not rows.any():
        return None
    import tempfile

    from empathy.cluster import PartitionFailed, cluster_analyser, open_client
    from empathy.distancing import detector_signature
    from empathy.evaluate import text_features

    with tempfile.TemporaryDirectory(prefix="empathy-features-") as scratch:
        folder = args.features_dir or scratch
        try:
            with open_client(args.scheduler) as client:
                analyser = cluster_analyser(client, folder, partition_size=args.partition_size,
                                            retries=args.retries)
                return text_features(outputs, analyser, signature=detector_signature(), rows=rows)
        except PartitionFailed as exc:
            raise CommandFailed(str(exc)) from None


def _located(exc: ValueError, outputs: pd.DataFrame, path: str) -> ValueError:
    """A text-too-long error as a :class:`~empathy.io.DataError` naming the file, row and column of the text."""
    from empathy.io import DataError, file_row

    found = _TOO_LONG.match(str(exc))
    if found is None:
        return exc
    length = int(found.group(1))
    for column in ("reference", "generation"):
        hits = (outputs[column].str.len() == length).to_numpy().nonzero()[0]
        if len(hits):
            limit = str(exc).split(", ", 1)[-1]  # "more than the parser's limit of N; split it ..."
            return DataError(path, f"text has {length:,} characters, {limit}", row=file_row(outputs, int(hits[0])),
                             column=column)
    return exc
