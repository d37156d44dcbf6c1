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
    CommandFailed,
    add_cluster_options,
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

    from empathy.evaluate import TextFeatures

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
    from empathy.io import DataError, load_dataset

    dataset = load_dataset(args.outputs, args.ratings or [])
    ratings = dataset.ratings
    n_overrides = None
    ledger = None
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
        ratings = apply_ledger(ratings, ledger)
        n_overrides = len(ledger.applied)
        print(terminal_literal(f"empathy: {ledger.summary()}"), file=sys.stderr)
    from empathy.evaluate import compute_metrics, default_by_task, text_rows  # SciPy, spaCy: once the input is good

    # The paper reports per task: with several tasks the default is per task, and pooling is an explicit,
    # labelled choice (pooled LD standardises across genres).
    # The plan names pooled tasks in the signature ('tasks:pooled').
    by_task = args.by_task or (not args.pooled and default_by_task(dataset.outputs))

    try:
        # only the texts a computed metric reads are parsed (none for --no-ld without EGM ratings)
        rows = text_rows(dataset.outputs, ratings, include_ld=not args.no_ld)
        features = _cluster_features(args, dataset.outputs, rows) if args.scheduler is not None else None
        report = compute_metrics(dataset.outputs, ratings, features=features, by_task=by_task,
                                 include_ld=not args.no_ld,
                                 ld_standardization=args.ld_standardization, egm_both_zero=args.egm_both_zero,
                                 n_overrides=n_overrides)
    except ValueError as exc:
        raise _located(exc, dataset.outputs, args.outputs) from None
    if ledger is not None:
        report = replace(report, signature=replace(report.signature, decisions=ledger.applied_decisions,
                                                   extra={**report.signature.extra, **ledger.signature_fields()}))
    from empathy.review import PROVENANCE_COLUMNS, agreement_labels

    agreement = agreement_labels(report.agreement, ledger.applied if ledger is not None else None,
                                 dataset.outputs if by_task else None)
    if args.format == "json":
        payload = report.to_json()
        for row, record in zip(payload["agreement"], agreement.to_dict("records"), strict=True):
            row.update({column: record[column] for column in PROVENANCE_COLUMNS})
        print_json(payload)
        return 0
    table = report.table if by_task else report.table.drop(columns="task")
    emit(table, args.format, str(report.signature))
    if args.format == "table" and len(agreement):
        print("\ninter-judge Spearman over models:")
        print_table(agreement.drop(columns=["warning", *([] if by_task else ["task"])]))
        for warning in agreement["warning"].dropna().unique():
            print(f"warning: {terminal_literal(warning)}")
    return 0


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
