"""``empathy fragility OUTPUTS [--ratings FILE ...]``: how few labels or how small a score change reorders models."""

from __future__ import annotations

import argparse
import sqlite3
import sys

from empathy.cli.common import (
    FORMATS,
    bounded_int,
    check_inputs,
    judged_metrics_option,
    print_csv,
    print_json,
    print_signature,
    print_table,
    set_handler,
)
from empathy.vocabulary import DEFAULT_LABEL_RULE, EGM_BOTH_ZERO, LABEL_RULES


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``fragility`` sub-command."""
    parser = commands.add_parser(
        "fragility", help="fewest CA flips / smallest SA, EGM shift that reorders adjacent models; influential items")
    parser.add_argument("outputs", help="outputs file (CSV, JSONL or Parquet)")
    parser.add_argument("--ratings", action="append", metavar="FILE", help="long-form ratings file (repeatable)")
    parser.add_argument("--overrides", metavar="SQLITE", help="apply the human overrides stored in this file")
    parser.add_argument("--label-rule", choices=LABEL_RULES, default=DEFAULT_LABEL_RULE,
                        help="which human label counts where several annotators decided one rating")
    parser.add_argument("--store-name", metavar="NAME",
                        help="the data set's name in the store (default: the outputs file, relative to the store)")
    # checked against the metric registry when the command runs, so that --help imports nothing heavy
    parser.add_argument("--metric", action="append", metavar="METRIC",
                        help="examine only this judge metric (repeatable; default: every metric of the registry "
                             "that reads judge ratings; a text-only one like LD has no labels to flip)")
    parser.add_argument("--top", type=bounded_int(1, 1000), default=5, metavar="N",
                        help="most influential items kept per model, metric and judge (default 5)")
    parser.add_argument("--egm-both-zero", choices=EGM_BOTH_ZERO, default=EGM_BOTH_ZERO[0],
                        help="EGM of an item with a + b = 0, where Eq. 2 is 0/0: 0 (default; this project's "
                             "choice) or left out as undefined")
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument("--by-task", action="store_true",
                       help="rank within each task (the default when the outputs have several tasks)")
    scope.add_argument("--pooled", action="store_true", help="rank over all tasks pooled")
    parser.add_argument("--format", choices=FORMATS, default="table",
                        help="json: pairs, influence, ratio_of_means, order and signature; table/csv: the pairs")
    set_handler(parser, run)


def run(args: argparse.Namespace) -> int:
    """Handler of ``fragility``: print the report; return the exit code."""
    metrics = judged_metrics_option(args.metric)
    check_inputs(args.outputs, *(args.ratings or []))
    from empathy.io import DataError, load_dataset

    dataset = load_dataset(args.outputs, args.ratings or [])
    ratings = dataset.ratings
    extra: dict[str, str] = {}
    n_overrides = None
    if args.overrides:
        from empathy.labels.ledger import apply_ledger, ledger_for_files

        try:
            ledger = ledger_for_files(args.overrides, args.outputs, dataset.outputs, rule=args.label_rule,
                                      name=args.store_name)
        except sqlite3.Error as exc:  # a corrupt or foreign file given as the store
            raise DataError(args.overrides, f"cannot read the override store ({exc})") from None
        ratings = apply_ledger(ratings, ledger)
        n_overrides = len(ledger.applied)
        extra.update(ledger.signature_fields())
        print(f"empathy: {ledger.summary()}", file=sys.stderr)
    if ratings.empty:
        raise DataError(args.outputs, "has no judge ratings: fragility needs ratings (--ratings or "
                        "<rater>:<dimension> columns)")
    from dataclasses import replace

    import numpy as np

    from empathy import metrics as registry
    from empathy.evaluate import default_by_task, plan_metrics, text_features, text_rows
    from empathy.fragility import fragility

    by_task = args.by_task or (not args.pooled and default_by_task(dataset.outputs))
    if not by_task and dataset.outputs["task"].nunique() > 1:
        extra["tasks"] = "pooled"
    # Only a metric that reads sentence counts (EGM) reads the texts, and only those of the outputs it scores;
    # without one spaCy is not loaded at all.
    reads_texts = any(registry.get_metric(name).needs_sentences for name in metrics)
    rows = text_rows(dataset.outputs, ratings, include_ld=False) if reads_texts else np.zeros(
        len(dataset.outputs), dtype=bool)
    features = text_features(dataset.outputs, rows=rows)
    plan = plan_metrics(dataset.outputs, ratings, features=features, by_task=by_task, include_ld=False,
                        egm_both_zero=args.egm_both_zero)
    report = fragility(plan, metrics=metrics, top=args.top)
    signature = plan.evaluate(n_overrides=n_overrides).signature
    if args.overrides:
        signature = replace(signature, decisions=ledger.applied_decisions)
    if not reads_texts:
        signature = replace(signature, distancing=None)
    signature = str(replace(signature, extra={**signature.extra, **extra}))
    pairs = report.pairs if by_task else report.pairs.drop(columns="task")
    if args.format == "json":
        print_json({**report.to_json(), "signature": signature})
    elif args.format == "csv":
        print_csv(pairs, signature)
    else:
        print_table(pairs)
        if len(report.ratio_of_means) and report.ratio_of_means["differs"].any():
            names = ", ".join(dict.fromkeys(report.ratio_of_means["metric"]))
            print(f"\n{names} rankings that differ as a ratio of means (1 - sum E(g) / sum E(t)):")
            print_table(report.ratio_of_means[report.ratio_of_means["differs"]])
        print_signature(signature)
    return 0
