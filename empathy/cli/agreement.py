"""Rater comparison: ``empathy agreement RATINGS ...`` and ``empathy panels INPUT ...``."""

from __future__ import annotations

import argparse
import sys

from empathy.cli.common import (
    FORMATS,
    MAX_RESAMPLES,
    bounded_int,
    check_inputs,
    emit,
    json_rows,
    load_inputs,
    print_json,
    print_signature,
    set_handler,
)
from empathy.escaping import terminal_literal


def add_pairwise_options(parser: argparse.ArgumentParser, *, bootstrap: int, bootstrap_help: str) -> None:
    """The options every rater-comparison command shares: --dimension, --bootstrap, --seed, --format."""
    parser.add_argument("--dimension", action="append", help="only this dimension (repeatable)")
    parser.add_argument("--bootstrap", type=bounded_int(0, MAX_RESAMPLES), default=bootstrap, metavar="N",
                        help=f"{bootstrap_help}; at most {MAX_RESAMPLES:,}")
    parser.add_argument("--seed", type=bounded_int(0), default=0)
    parser.add_argument("--format", choices=FORMATS, default="table")


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``agreement`` and ``panels`` sub-commands."""
    agreement = commands.add_parser("agreement", help="instance-level agreement between raters")
    agreement.add_argument("ratings", nargs="+", help="long-form ratings file(s) or an outputs file with "
                           "rater:dimension columns")
    add_pairwise_options(agreement, bootstrap=0,
                         bootstrap_help="bootstrap resamples for Spearman confidence intervals (0 = none)")
    set_handler(agreement, run_agreement)

    panels = commands.add_parser(
        "panels", help="panels (mean of the experts, of the LLMs) compared with each other and the crowd",
        description="Add panel raters (panel:experts, panel:llms by rater_kind, or --panel NAME=a,b) and "
                    "report Spearman (bootstrap CI), Pearson and kappa of every pair of panels and crowd.")
    panels.add_argument("input", help="long ratings file, or an outputs file with --ratings / wide columns")
    panels.add_argument("--ratings", action="append", metavar="FILE", help="more ratings files (repeatable)")
    panels.add_argument("--panel", action="append", metavar="NAME=R1,R2",
                        help="a panel and its raters (repeatable; default: by rater_kind)")
    add_pairwise_options(panels, bootstrap=1000,
                         bootstrap_help="bootstrap resamples for the Spearman interval (0 = none)")
    set_handler(panels, run_panels)


def _signature(ratings, args: argparse.Namespace) -> str:  # noqa: ANN001 - a pandas DataFrame
    from empathy.signature import Signature, judge_signatures

    return str(Signature(judges=judge_signatures(ratings), seed=args.seed if args.bootstrap else None,
                         extra={"bootstrap": str(args.bootstrap)} if args.bootstrap else {}))


def run_agreement(args: argparse.Namespace) -> int:
    """Handler of ``agreement``: every pair of raters per dimension, with Krippendorff's alpha."""
    check_inputs(*args.ratings)
    import pandas as pd

    from empathy.cli.common import print_table
    from empathy.io import DataError

    ratings = pd.concat([load_inputs(path)[1] for path in args.ratings], ignore_index=True)
    if ratings.duplicated(["item_id", "model", "rater", "dimension"]).any():
        raise DataError(", ".join(args.ratings), "the same rating appears in more than one file", column="rater")
    from empathy.agreement import krippendorff_by_dimension, pairing_notice, pairwise_agreement

    dimensions = args.dimension or None
    chosen = ratings if dimensions is None else ratings[ratings["dimension"].isin(dimensions)]
    notice = pairing_notice(chosen.groupby("dimension")["rater"].nunique().to_dict(), "raters")
    if notice:
        print(terminal_literal(f"empathy: note: the agreement table {notice}"), file=sys.stderr)
    pairs = pairwise_agreement(ratings, dimensions=dimensions, bootstrap=args.bootstrap, seed=args.seed)
    alphas = krippendorff_by_dimension(ratings if dimensions is None
                                       else ratings[ratings["dimension"].isin(dimensions)])
    pairs = pairs.merge(alphas[["dimension", "alpha", "level"]].rename(
        columns={"alpha": "krippendorff_alpha", "level": "alpha_level"}), on="dimension", how="left")
    # the raters' own labels: this command applies no human override (``metrics --overrides`` does)
    pairs["labels"] = "judges"
    signature = _signature(ratings, args)
    if args.format == "json":
        print_json(json_rows(pairs, signature=signature))
        return 0
    emit(pairs, args.format, signature)
    if args.format == "table":
        print("\nKrippendorff's alpha over all raters:")
        print_table(alphas)
    return 0


def parse_panel(text: str) -> tuple[str, list[str]]:
    """``"experts=a, b"`` -> ``("experts", ["a", "b"])``; ValueError for anything else."""
    name, sep, members = text.partition("=")
    if not sep or not name.strip() or not members.strip():
        raise ValueError(f"--panel: expected NAME=rater1,rater2, got {text!r}")
    return name.strip(), [m.strip() for m in members.split(",") if m.strip()]


def run_panels(args: argparse.Namespace) -> int:
    """Handler of ``panels``: panels against each other and the crowd."""
    from empathy.cli.common import print_csv, print_table

    panels = dict(parse_panel(p) for p in args.panel) if args.panel else None
    check_inputs(args.input, *(args.ratings or []))
    _, ratings = load_inputs(args.input, args.ratings)
    from empathy.panels import compare_panels

    table = compare_panels(ratings, panels, dimensions=args.dimension or None, bootstrap=args.bootstrap,
                           seed=args.seed)
    signature = _signature(ratings, args)
    if args.format == "json":
        print_json(json_rows(table, signature=signature))
    elif args.format == "csv":
        print_csv(table, signature)
    else:
        if table.empty:
            print("no panels to compare (panels need two or more raters of one rater_kind, or --panel)")
        else:
            print_table(table)
        print_signature(signature)
    return 0
