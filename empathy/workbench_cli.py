"""Command line of the agreement workbench: ``python -m empathy stability ...`` and ``python -m empathy panels ...``.

``empathy/cli.py`` calls :func:`register_cli` with its sub-parsers; each sub-command's ``handler(args)``
returns the exit code. Bad input raises :class:`empathy.io.DataError` (or ``ValueError``), which the main
CLI prints as one line on stderr with exit code 2.

``stability INPUT`` takes one of four kinds of input (choose with the mode flag):

* ``--dimension D``: a long ratings file (or an outputs file with ``rater:dimension`` columns, or outputs
  plus ``--ratings``); groups are the raters (and the panels with ``--with-panels``);
* ``--metric SA|EGM|CA``: an outputs file with ``--ratings``; groups are the models under one ``--judge``;
* ``--per-item``: a wide per-item table, one row per item (``item_id`` or the first column) and one numeric
  column per group (a model's per-item terms computed elsewhere, say);
* ``--summary``: a per-group summary table like the paper's Table 7 (first column the group, one column per
  size, cells ``mean ± sd`` or numbers); only the rank Spearman across sizes is computed.
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np
import pandas as pd

from empathy.cli import FORMATS, add_pairwise_options
from empathy.io import DataError, build_dataset, read_table, validate_outputs, validate_ratings
from empathy.signature import Signature, judge_signatures


def _fmt(value: float) -> str:
    return f"{value:.3f}"


def _print_frame(frame: pd.DataFrame) -> None:
    frame = frame.copy()
    for column in frame.columns:
        # agreement columns hold None where undefined; as floats they print as '-' like every other gap
        if frame[column].dtype == object and frame[column].map(lambda v: v is None or isinstance(v, float | int)).all():
            frame[column] = frame[column].astype(float)
    with pd.option_context("display.max_rows", None, "display.max_columns", None, "display.width", 200):
        print(frame.to_string(index=False, float_format=_fmt, na_rep="-"))


def _json_rows(frame: pd.DataFrame) -> list[dict[str, object]]:
    def clean(value: object) -> object:
        if isinstance(value, np.integer):
            return int(value)
        if isinstance(value, float | np.floating):
            return None if np.isnan(value) else float(value)
        return value
    return [{k: clean(v) for k, v in row.items()} for row in frame.to_dict("records")]


def load_inputs(path: str, extra_ratings: list[str] | None = None) -> tuple[pd.DataFrame | None, pd.DataFrame]:
    """``(outputs or None, ratings)`` from an outputs file (plus ratings files) or a long ratings file."""
    frame = read_table(path)
    tables = [(p, validate_ratings(read_table(p))) for p in (extra_ratings or [])]
    if "generation" in frame.columns and "rater" not in frame.columns:
        outputs, wide = validate_outputs(frame)
        dataset = build_dataset(outputs, wide, tables, sources=[path, *(p for p, _ in tables)])
        return dataset.outputs, dataset.ratings
    parts = [validate_ratings(frame)] + [t for _, t in tables]
    ratings = pd.concat(parts, ignore_index=True)
    duplicate = ratings.duplicated(["item_id", "model", "rater", "dimension"])
    if duplicate.any():
        row = ratings[duplicate].iloc[0]
        raise DataError(", ".join([path, *(extra_ratings or [])]),
                        f"rater '{row['rater']}' rates ({row['item_id']}, {row['model']}, {row['dimension']}) "
                        "more than once", column="rater")
    return None, ratings


def _row_number(position: int, frame: pd.DataFrame) -> int:
    return position + 2 if frame.attrs.get("suffix", ".csv") == ".csv" else position + 1


def load_per_item(path: str) -> pd.DataFrame:
    """A wide per-item table: ``item_id`` (or the first column) as the index, numeric group columns."""
    frame = read_table(path)
    label = frame.attrs.get("source", path)
    if frame.shape[1] < 2:
        raise DataError(label, "a per-item table needs an item column and at least one group column")
    unit = "item_id" if "item_id" in frame.columns else frame.columns[0]
    if frame[unit].duplicated().any():
        position = int(np.flatnonzero(frame[unit].duplicated())[0])
        raise DataError(label, f"duplicate item {frame[unit].iat[position]!r}", row=_row_number(position, frame),
                        column=str(unit))
    out = pd.DataFrame(index=frame[unit].astype(str))
    for column in frame.columns:
        if column == unit:
            continue
        numbers = pd.to_numeric(frame[column], errors="coerce")
        bad = numbers.isna() & frame[column].notna() & (frame[column].astype(str).str.strip() != "")
        if bad.any():
            position = int(np.flatnonzero(bad)[0])
            raise DataError(label, f"not a number: {frame[column].iat[position]!r}",
                            row=_row_number(position, frame), column=str(column))
        out[str(column)] = numbers.to_numpy(dtype=float)
    out.index.name = str(unit)
    return out


def _sizes(text: str | None, n_units: int) -> list[int]:
    from empathy.stability import default_sizes

    if text is None:
        return default_sizes(n_units)
    sizes = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            sizes.append(int(part))
        except ValueError:
            raise ValueError(f"--sizes: {part!r} is not a whole number (use e.g. --sizes 50,100,150,200)") from None
    if not sizes:
        raise ValueError("--sizes: give at least one size (e.g. --sizes 50,100,150,200)")
    return sizes


def _cmd_stability(args: argparse.Namespace) -> int:
    from empathy.panels import is_panel, panel_ratings
    from empathy.stability import (
        dimension_matrix,
        metric_matrix,
        metric_terms,
        parse_summary_table,
        rank_stability,
        sample_size_stability,
    )

    ratings = None
    if args.summary:
        frame = read_table(args.input)
        means = parse_summary_table(frame, name=frame.attrs.get("source", args.input))
        ranks = rank_stability(means)
        signature = str(Signature())
        if args.format == "json":
            print(json.dumps({"rank_spearman": _json_rows(ranks), "signature": signature}, indent=2))
        elif args.format == "csv":
            ranks.assign(signature=signature).to_csv(sys.stdout, index=False)
        else:
            _print_frame(ranks)
            print(f"\nsignature: {signature}")
        return 0
    if args.per_item:
        matrix = load_per_item(args.input)
        what = {"input": "per-item"}
    else:
        outputs, ratings = load_inputs(args.input, args.ratings)
        if args.dimension:
            if args.with_panels or (args.reference or "").startswith("panel:"):
                ratings = panel_ratings(ratings[~ratings["rater"].map(is_panel)])
            matrix = dimension_matrix(ratings, args.dimension)
            what = {"dimension": args.dimension}
        else:
            if outputs is None:
                raise DataError(args.input, "--metric needs an outputs file (with --ratings FILE ...), "
                                "got a ratings file")
            sentences = None
            if args.metric == "EGM":
                from empathy.evaluate import text_features

                sentences = text_features(outputs).frame(outputs)
            terms = metric_terms(outputs, ratings, args.metric, sentences=sentences)
            if terms.empty:
                raise DataError(args.input, f"no ratings for {args.metric} (needs dimensions of that metric)")
            judges = sorted(terms["judge"].unique())
            if args.judge is None and len(judges) > 1:
                raise ValueError(f"--metric {args.metric}: several judges rated it; choose one with --judge "
                                 f"({', '.join(judges)})")
            matrix = metric_matrix(terms, args.judge)
            judge = args.judge or str(terms["judge"].iat[0])
            what = {"metric": args.metric, "judge": judge}
            ratings = ratings[ratings["rater"] == judge]
    groups = [g.strip() for g in args.groups.split(",") if g.strip()] if args.groups else None
    result = sample_size_stability(matrix, _sizes(args.sizes, len(matrix)), n_resamples=args.resamples,
                                   seed=args.seed, statistic=args.statistic, reference=args.reference,
                                   groups=groups)
    signature = str(Signature(judges=judge_signatures(ratings) if ratings is not None else {}, seed=args.seed,
                              extra={"resamples": str(args.resamples), "stability": args.statistic}))
    if args.format == "json":
        print(json.dumps({**what, **result.to_json(), "signature": signature}, indent=2))
        return 0
    if args.format == "csv":
        result.table.assign(signature=signature).to_csv(sys.stdout, index=False)
        return 0
    label = ", ".join(f"{k} {v}" for k, v in what.items())
    print(f"{result.statistic} per group and sample size ({label}; {result.n_resamples} subsets per size "
          f"without replacement, seed {result.seed}, {result.n_units} units):")
    _print_frame(result.wide())
    print("\nSpearman of the group rankings across sizes (of the mean columns, as the paper reads Table 7):")
    _print_frame(result.rank_spearman)
    print("\nper subset: Spearman of the groups' values on one subset with the full-data values:")
    _print_frame(result.resample_rank)
    print(f"\nsignature: {signature}")
    return 0


def _parse_panel(text: str) -> tuple[str, list[str]]:
    name, sep, members = text.partition("=")
    if not sep or not name.strip() or not members.strip():
        raise ValueError(f"--panel: expected NAME=rater1,rater2, got {text!r}")
    return name.strip(), [m.strip() for m in members.split(",") if m.strip()]


def _cmd_panels(args: argparse.Namespace) -> int:
    from empathy.panels import compare_panels

    _, ratings = load_inputs(args.input, args.ratings)
    panels = dict(_parse_panel(p) for p in args.panel) if args.panel else None
    table = compare_panels(ratings, panels, dimensions=args.dimension or None, bootstrap=args.bootstrap,
                           seed=args.seed)
    signature = str(Signature(judges=judge_signatures(ratings), seed=args.seed if args.bootstrap else None,
                              extra={"bootstrap": str(args.bootstrap)} if args.bootstrap else {}))
    if args.format == "json":
        rows = _json_rows(table)
        for row in rows:
            row["signature"] = signature
        print(json.dumps(rows, indent=2))
    elif args.format == "csv":
        table.assign(signature=signature).to_csv(sys.stdout, index=False)
    else:
        if table.empty:
            print("no panels to compare (panels need two or more raters of one rater_kind, or --panel)")
        else:
            _print_frame(table)
        print(f"\nsignature: {signature}")
    return 0


def register_cli(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``stability`` and ``panels`` sub-commands."""
    from empathy.stability import DEFAULT_RESAMPLES, STATISTICS

    stability = subparsers.add_parser(
        "stability", help="sample-size stability (the paper's Table 7): mean +- sd per group and size",
        description="Resample subsets of each size without replacement (seeded) and report mean +- sd of a "
                    "statistic per model or rater, and the Spearman of the rankings across sizes.")
    stability.add_argument("input", help="ratings or outputs file (or a per-item / summary table)")
    stability.add_argument("--ratings", action="append", metavar="FILE", help="more ratings files (repeatable)")
    mode = stability.add_mutually_exclusive_group(required=True)
    mode.add_argument("--dimension", help="a rating dimension: groups are the raters")
    mode.add_argument("--metric", choices=("SA", "EGM", "CA"), help="a judge metric: groups are the models")
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
    stability.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES, metavar="N")
    stability.add_argument("--seed", type=int, default=0)
    stability.add_argument("--format", choices=FORMATS, default="table")
    stability.set_defaults(handler=_cmd_stability)

    panels = subparsers.add_parser(
        "panels", help="panels (mean of the experts, of the LLMs) compared with each other and the crowd",
        description="Add panel raters (panel:experts, panel:llms by rater_kind, or --panel NAME=a,b) and "
                    "report Spearman (bootstrap CI), Pearson and kappa of every pair of panels and crowd.")
    panels.add_argument("input", help="long ratings file, or an outputs file with --ratings / wide columns")
    panels.add_argument("--ratings", action="append", metavar="FILE", help="more ratings files (repeatable)")
    panels.add_argument("--panel", action="append", metavar="NAME=R1,R2",
                        help="a panel and its raters (repeatable; default: by rater_kind)")
    add_pairwise_options(panels, bootstrap=1000,
                         bootstrap_help="bootstrap resamples for the Spearman interval (0 = none)")
    panels.set_defaults(handler=_cmd_panels)
