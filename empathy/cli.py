"""Command line: ``python -m empathy COMMAND ...`` (also installed as ``empathy``).

Contract (scripts depend on it; see the README):

* ``metrics OUTPUTS [--ratings FILE ...] --format json`` prints ``{"metrics": [...], "agreement": [...],
  "signature": "..."}``.
* ``agreement RATINGS --format json`` prints a list with one object per (dimension, rater pair).
* Bad input exits with code 2 and one line on stderr naming the file, the row and the column.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence
from typing import NoReturn

import pandas as pd

from empathy import __version__
from empathy.agreement import krippendorff_by_dimension, pairwise_agreement
from empathy.io import DataError, load_dataset, read_table, validate_outputs, validate_ratings
from empathy.signature import Signature, judge_signatures

EXIT_BAD_INPUT = 2
FORMATS = ("json", "table", "csv")
#: Subcommands contributed by other modules: "module:function" taking the subparsers object.
EXTENSIONS: tuple[str, ...] = (
    "empathy.distancing:register_cli",
    "empathy.judges.cli:register_cli",
    "empathy.datasets.cli:register_cli",
    "empathy.workbench_cli:register_cli",
)


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line and exit with code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def _json_value(value: object) -> object:
    if isinstance(value, float) and value != value:
        return None
    if hasattr(value, "item"):
        return _json_value(value.item())  # numpy scalars
    return value


def _emit_table(frame: pd.DataFrame, fmt: str, signature: str) -> None:
    if fmt == "csv":
        frame.assign(signature=signature).to_csv(sys.stdout, index=False)
    else:
        with pd.option_context("display.max_rows", None, "display.max_columns", None, "display.width", 200):
            print(frame.to_string(index=False, float_format=lambda x: f"{x:.3f}", na_rep="-"))
        print(f"\nsignature: {signature}")


def _cmd_metrics(args: argparse.Namespace) -> int:
    from empathy.evaluate import compute_metrics

    dataset = load_dataset(args.outputs, args.ratings or [])
    ratings = dataset.ratings
    n_overrides = None
    if args.overrides:
        from empathy.store import OverrideStore, apply_overrides, dataset_id

        store = OverrideStore(args.overrides)
        overrides = store.overrides(dataset_id(dataset.outputs))
        ratings = apply_overrides(ratings, overrides)
        n_overrides = len(overrides)
    report = compute_metrics(dataset.outputs, ratings, by_task=args.by_task, include_ld=not args.no_ld,
                             ld_standardization=args.ld_standardization, n_overrides=n_overrides)
    if args.format == "json":
        print(json.dumps(report.to_json(), indent=2))
        return 0
    table = report.table if args.by_task else report.table.drop(columns="task")
    _emit_table(table, args.format, str(report.signature))
    if args.format == "table" and len(report.agreement):
        print("\ninter-judge Spearman over models:")
        agreement = report.agreement if args.by_task else report.agreement.drop(columns="task")
        print(agreement.to_string(index=False, float_format=lambda x: f"{x:.3f}", na_rep="-"))
    return 0


def _load_ratings_any(path: str) -> pd.DataFrame:
    """A long ratings file, or an outputs file whose ``rater:dimension`` columns hold the ratings."""
    frame = read_table(path)
    if "rater" in frame.columns or "dimension" in frame.columns:
        return validate_ratings(frame)
    if "generation" in frame.columns:
        return validate_outputs(frame)[1]
    return validate_ratings(frame)


def _cmd_agreement(args: argparse.Namespace) -> int:
    ratings = pd.concat([_load_ratings_any(path) for path in args.ratings], ignore_index=True)
    if ratings.duplicated(["item_id", "model", "rater", "dimension"]).any():
        raise DataError(", ".join(args.ratings), "the same rating appears in more than one file", column="rater")
    dimensions = args.dimension or None
    pairs = pairwise_agreement(ratings, dimensions=dimensions, bootstrap=args.bootstrap, seed=args.seed)
    alphas = krippendorff_by_dimension(ratings if dimensions is None
                                       else ratings[ratings["dimension"].isin(dimensions)])
    pairs = pairs.merge(alphas[["dimension", "alpha", "level"]].rename(
        columns={"alpha": "krippendorff_alpha", "level": "alpha_level"}), on="dimension", how="left")
    signature = str(Signature(judges=judge_signatures(ratings), seed=args.seed if args.bootstrap else None,
                              extra={"bootstrap": str(args.bootstrap)} if args.bootstrap else {}))
    if args.format == "json":
        rows = [{k: _json_value(v) for k, v in row.items()} for row in pairs.to_dict("records")]
        for row in rows:
            row["signature"] = signature
        print(json.dumps(rows, indent=2))
        return 0
    _emit_table(pairs, args.format, signature)
    if args.format == "table":
        print("\nKrippendorff's alpha over all raters:")
        print(alphas.to_string(index=False, float_format=lambda x: f"{x:.3f}", na_rep="-"))
    return 0


def add_pairwise_options(parser: argparse.ArgumentParser, *, bootstrap: int, bootstrap_help: str) -> None:
    """The options every rater-comparison command shares: --dimension, --bootstrap, --seed, --format."""
    parser.add_argument("--dimension", action="append", help="only this dimension (repeatable)")
    parser.add_argument("--bootstrap", type=int, default=bootstrap, metavar="N", help=bootstrap_help)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--format", choices=FORMATS, default="table")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="empathy", description="Measure empathic failure in LLM outputs (SA, EGM, CA, LD).")
    parser.add_argument("--version", action="version", version=f"empathy {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    metrics = commands.add_parser("metrics", help="SA, EGM, CA per model and judge; LD per model")
    metrics.add_argument("outputs", help="outputs file (CSV, JSONL or Parquet)")
    metrics.add_argument("--ratings", action="append", metavar="FILE",
                         help="long-form ratings file (repeat for several)")
    metrics.add_argument("--overrides", metavar="SQLITE", help="apply the human overrides stored in this file")
    metrics.add_argument("--by-task", action="store_true", help="compute every value within each task")
    metrics.add_argument("--no-ld", action="store_true", help="skip Linguistic Distancing")
    metrics.add_argument("--ld-standardization", choices=("separate", "reference"), default="separate",
                         help="Eq. 4 as written (each side its own mean and sd) or both sides with the "
                         "reference's statistics")
    metrics.add_argument("--format", choices=FORMATS, default="table")
    metrics.set_defaults(handler=_cmd_metrics)

    agreement = commands.add_parser("agreement", help="instance-level agreement between raters")
    agreement.add_argument("ratings", nargs="+", help="long-form ratings file(s) or an outputs file with "
                           "rater:dimension columns")
    add_pairwise_options(agreement, bootstrap=0,
                         bootstrap_help="bootstrap resamples for Spearman confidence intervals (0 = none)")
    agreement.set_defaults(handler=_cmd_agreement)

    for spec in EXTENSIONS:
        module_name, _, function = spec.partition(":")
        getattr(importlib.import_module(module_name), function)(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except DataError as exc:
        print(f"empathy: error: {exc}", file=sys.stderr)
    except (ValueError, TypeError, OSError) as exc:
        message = str(exc).replace("\n", " ") or type(exc).__name__
        print(f"empathy: error: {message}", file=sys.stderr)
    except KeyboardInterrupt:
        print("empathy: interrupted", file=sys.stderr)
        return 130
    return EXIT_BAD_INPUT


if __name__ == "__main__":
    raise SystemExit(main())
