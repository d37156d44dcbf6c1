"""``empathy stability INPUT``: sample-size stability (the paper's Table 7).

``stability INPUT`` takes one of four kinds of input (choose with the mode flag):

* ``--dimension D``: a long ratings file (or an outputs file with ``rater:dimension`` columns, or outputs
  plus ``--ratings``); groups are the raters (and the panels with ``--with-panels``);
* ``--metric NAME``: a judge metric of the registry (SA, EGM, CA, or one registered with
  :func:`empathy.metrics.register_metric`), checked when the command runs; an outputs file with ``--ratings``;
  groups are the models under one ``--judge``;
* ``--per-item``: a wide per-item table, one row per item (``item_id`` or the first column) and one numeric
  column per group (a model's per-item terms computed elsewhere, say);
* ``--summary``: a per-group summary table like the paper's Table 7 (first column the group, one column per
  size, cells ``mean ± sd`` or numbers); only the rank Spearman across sizes is computed.
"""

from __future__ import annotations

import argparse

from empathy.cli.common import (
    FORMATS,
    MAX_RESAMPLES,
    bounded_int,
    check_inputs,
    json_rows,
    judged_metrics_option,
    load_inputs,
    print_csv,
    print_json,
    print_signature,
    print_table,
    set_handler,
)
from empathy.escaping import terminal_literal

# Kept here rather than imported from empathy.stability (which imports SciPy) so that building the parser
# stays instant; tests/test_cli.py checks both equal the library's STATISTICS and DEFAULT_RESAMPLES.
STATISTICS: tuple[str, ...] = ("mean", "median", "spearman", "pearson", "kappa_quadratic")
DEFAULT_RESAMPLES = 100


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``stability`` sub-command."""
    stability = commands.add_parser(
        "stability", help="sample-size stability (the paper's Table 7): mean +- sd per group and size",
        description="Resample subsets of each size without replacement (seeded) and report mean +- sd of a "
                    "statistic per model or rater, and the Spearman of the rankings across sizes.")
    stability.add_argument("input", help="ratings or outputs file (or a per-item / summary table)")
    stability.add_argument("--ratings", action="append", metavar="FILE", help="more ratings files (repeatable)")
    mode = stability.add_mutually_exclusive_group(required=True)
    mode.add_argument("--dimension", help="a rating dimension: groups are the raters")
    # checked against the metric registry when the command runs (judged_metrics_option): --help stays light
    mode.add_argument("--metric", metavar="METRIC",
                      help="a judge metric of the registry (one that reads judge ratings): groups are the models")
    mode.add_argument("--per-item", action="store_true", help="INPUT is items x groups (numeric columns)")
    mode.add_argument("--summary", action="store_true",
                      help="INPUT is a per-group table of means per size (like Table 7): rank Spearman only")
    stability.add_argument("--judge", help="the judge whose metric terms to use (--metric)")
    stability.add_argument("--statistic", choices=STATISTICS, default="mean")
    stability.add_argument("--reference", help="column compared with for spearman/pearson/kappa_quadratic "
                           "(e.g. panel:experts)")
    stability.add_argument("--with-panels", action="store_true",
                           help="add the panels (mean of the experts, of the LLMs) as groups (--dimension)")
    stability.add_argument("--groups", metavar="A,B,...", help="only these raters/models (default: all but "
                           "the reference)")
    stability.add_argument("--sizes", help="comma-separated sizes (default: a quarter, half, three quarters "
                           "and all of the units)")
    stability.add_argument("--resamples", type=bounded_int(1, MAX_RESAMPLES), default=DEFAULT_RESAMPLES,
                           metavar="N", help=f"subsets per size (default {DEFAULT_RESAMPLES}, at most "
                           f"{MAX_RESAMPLES:,})")
    stability.add_argument("--seed", type=bounded_int(0), default=0)
    stability.add_argument("--format", choices=FORMATS, default="table")
    set_handler(stability, run)


def load_per_item(path: str):  # noqa: ANN201 - a pandas DataFrame
    """A wide per-item table: ``item_id`` (or the first column) as the index, numeric group columns."""
    import numpy as np
    import pandas as pd

    from empathy.io import DataError, parse_numbers, read_table

    frame = read_table(path)
    label = frame.attrs.get("source", path)
    offset = 2 if frame.attrs.get("suffix", ".csv") == ".csv" else 1
    if frame.shape[1] < 2:
        raise DataError(label, "a per-item table needs an item column and at least one group column")
    unit = "item_id" if "item_id" in frame.columns else frame.columns[0]
    if frame[unit].duplicated().any():
        position = int(np.flatnonzero(frame[unit].duplicated())[0])
        raise DataError(label, f"duplicate item {frame[unit].iat[position]!r}", row=position + offset,
                        column=str(unit))
    out = pd.DataFrame(index=frame[unit].astype(str))
    for column in frame.columns:
        if column == unit:
            continue
        numbers = parse_numbers(frame[column])  # the ratings' reader: ASCII decimals, a boolean is no number
        bad = numbers.not_a_number | numbers.boolean
        if bad.any():
            position = int(np.flatnonzero(bad)[0])
            raise DataError(label, f"not a number: {frame[column].iat[position]!r}", row=position + offset,
                            column=str(column))
        out[str(column)] = numbers.values
    out.index.name = str(unit)
    return out


def _summary(args: argparse.Namespace) -> int:
    from empathy.io import read_table
    from empathy.signature import Signature
    from empathy.stability import parse_summary_table, rank_stability

    frame = read_table(args.input)
    ranks = rank_stability(parse_summary_table(frame, name=frame.attrs.get("source", args.input)))
    signature = str(Signature())
    if args.format == "json":
        print_json({"rank_spearman": json_rows(ranks), "signature": signature})
    elif args.format == "csv":
        print_csv(ranks, signature)
    else:
        print_table(ranks)
        print_signature(signature)
    return 0


def _matrix(args: argparse.Namespace):  # noqa: ANN202 - (DataFrame, dict, DataFrame | None)
    """The units x groups matrix the mode asks for, what it is, and the ratings it came from."""
    if args.per_item:
        return load_per_item(args.input), {"input": "per-item"}, None
    outputs, ratings = load_inputs(args.input, args.ratings)
    from empathy.io import DataError
    from empathy.panels import is_panel, panel_ratings
    from empathy.stability import dimension_matrix, metric_matrix, metric_terms

    if args.dimension:
        if args.with_panels or (args.reference or "").startswith("panel:"):
            ratings = panel_ratings(ratings[~ratings["rater"].map(is_panel)])
        return dimension_matrix(ratings, args.dimension), {"dimension": args.dimension}, ratings
    if outputs is None:
        raise DataError(args.input, "--metric needs an outputs file (with --ratings FILE ...), got a ratings file")
    from empathy.metrics import get_metric

    sentences = None
    if get_metric(args.metric).needs_sentences:
        from empathy.evaluate import text_features

        sentences = text_features(outputs).frame(outputs)
    terms = metric_terms(outputs, ratings, args.metric, sentences=sentences)
    if terms.empty:
        raise DataError(args.input, f"no ratings for {args.metric} (needs dimensions of that metric)")
    judges = sorted(terms["judge"].unique())
    if args.judge is None and len(judges) > 1:
        raise ValueError(f"--metric {args.metric}: several judges rated it; choose one with --judge "
                         f"({', '.join(judges)})")
    judge = args.judge or str(terms["judge"].iat[0])
    return (metric_matrix(terms, args.judge), {"metric": args.metric, "judge": judge},
            ratings[ratings["rater"] == judge])


def run(args: argparse.Namespace) -> int:
    """Handler of ``stability``: mean +- sd per group and size, and the rank Spearman across sizes."""
    if args.metric is not None:
        judged_metrics_option([args.metric])
    check_inputs(args.input, *(args.ratings or []))
    from empathy.stability import parse_sizes  # SciPy: only once the input files are known good

    sizes = parse_sizes(args.sizes, option="--sizes") if args.sizes is not None else None
    if args.summary:
        return _summary(args)
    matrix, what, ratings = _matrix(args)
    from empathy.signature import Signature, judge_signatures
    from empathy.stability import default_sizes, sample_size_stability

    groups = [g.strip() for g in args.groups.split(",") if g.strip()] if args.groups else None
    result = sample_size_stability(matrix, sizes or default_sizes(len(matrix)), n_resamples=args.resamples,
                                   seed=args.seed, statistic=args.statistic, reference=args.reference,
                                   groups=groups)
    signature = str(Signature(judges=judge_signatures(ratings) if ratings is not None else {}, seed=args.seed,
                              extra={"resamples": str(args.resamples), "stability": args.statistic}))
    if args.format == "json":
        print_json({**what, **result.to_json(), "signature": signature})
        return 0
    if args.format == "csv":
        print_csv(result.table, signature)
        return 0
    label = terminal_literal(", ".join(f"{k} {v}" for k, v in what.items()))
    print(f"{result.statistic} per group and sample size ({label}; {result.n_resamples} subsets per size "
          f"without replacement, seed {result.seed}, {result.n_units} units):")
    print_table(result.wide())
    print("\nSpearman of the group rankings across sizes (of the mean columns, as the paper reads Table 7):")
    print_table(result.rank_spearman)
    print("\nper subset: Spearman of the groups' values on one subset with the full-data values:")
    print_table(result.resample_rank)
    print_signature(signature)
    return 0
