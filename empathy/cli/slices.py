"""Why judges and humans disagree: ``empathy slices OUTPUTS ...`` and ``empathy calibration INPUT ...``."""

from __future__ import annotations

import argparse
import sqlite3
import sys
from typing import TYPE_CHECKING

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
    print_table,
    set_handler,
)
from empathy.vocabulary import DEFAULT_LABEL_RULE, LABEL_RULES

if TYPE_CHECKING:
    import pandas as pd

OUTCOME_CHOICES = ("judge_human", "override", "judge_judge")
#: Features whose values come from parsing the texts (spaCy): only these need the distancing detectors.
_TEXT_FEATURE_PREFIXES = ("nominalization", "impersonal", "agentless", "disturbing")


def _add_rater_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dimension", required=True, help="the judge dimension to study (e.g. ca, e_gen)")
    parser.add_argument("--judge", action="append", metavar="RATER",
                        help="only this judge (repeatable; default: every rater of kind llm or lexicon)")
    parser.add_argument("--human-kinds", default="expert,human,author", metavar="KINDS",
                        help="rater kinds whose mean is the human side (default: expert,human,author)")
    parser.add_argument("--seed", type=bounded_int(0), default=0)
    parser.add_argument("--format", choices=FORMATS, default="table")


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``slices`` and ``calibration`` sub-commands."""
    slices = commands.add_parser(
        "slices", help="where judges and humans disagree: rates by distancing, affect, length and task, with "
                       "permutation p-values (Holm)",
        description="Slice judge-human disagreement, the override rate or judge-judge disagreement by each "
                    "output's features (distancing densities of both sides and their difference, disturbing "
                    "density, affect gap, length, task) and rank the slices that depart most from the whole.")
    slices.add_argument("outputs", help="outputs file (CSV, JSONL or Parquet)")
    slices.add_argument("--ratings", action="append", metavar="FILE", help="long-form ratings file (repeatable)")
    slices.add_argument("--outcome", choices=OUTCOME_CHOICES, default="judge_human",
                        help="what to explain (override needs --overrides)")
    slices.add_argument("--overrides", metavar="SQLITE",
                        help="the override store: its human decisions join the human side, and --outcome "
                             "override reads it")
    slices.add_argument("--label-rule", choices=LABEL_RULES, default=DEFAULT_LABEL_RULE)
    slices.add_argument("--store-name", metavar="NAME", help="the data set's name in the store")
    slices.add_argument("--feature", action="append", metavar="NAME", help="only this feature (repeatable)")
    slices.add_argument("--bins", type=bounded_int(2, 20), default=3, help="quantile bins per feature (default 3)")
    slices.add_argument("--cut", action="append", metavar="FEATURE=T1,T2",
                        help="cut FEATURE at these thresholds instead of its quantiles (repeatable)")
    slices.add_argument("--disagree-at", type=float, metavar="X",
                        help="values this far apart disagree (default: 0.5 for labels, 1 for whole-number "
                             "scales, a fifth of the range for scores)")
    slices.add_argument("--permutations", type=bounded_int(1, MAX_RESAMPLES), default=1000, metavar="N",
                        help=f"permutations per feature where no exact p-value is computable (exact when a slice "
                             f"has at most N arrangements); at most {MAX_RESAMPLES:,}")
    slices.add_argument("--monte-carlo", action="store_true",
                        help="skip the exact null distributions (by default every p-value that can be computed "
                             "exactly is; the others are Monte Carlo, with their standard error in p_se)")
    slices.add_argument("--per-judge", action="store_true", help="map every judge on its own as well as pooled")
    slices.add_argument("--top", type=bounded_int(1), default=10, help="ranked slices to list (default 10)")
    slices.add_argument("--min-units", type=bounded_int(1), default=5,
                        help="smallest slice (in units) that is ranked (default 5)")
    _add_rater_options(slices)
    set_handler(slices, run_slices)

    calibration = commands.add_parser(
        "calibration", help="judge vs human per model: confusion cells with their items, bias and slope with "
                            "bootstrap intervals, calibration bins, the items every rater splits on")
    calibration.add_argument("input", help="outputs file (with --ratings or wide columns) or a long ratings file")
    calibration.add_argument("--ratings", action="append", metavar="FILE", help="more ratings files (repeatable)")
    calibration.add_argument("--bins", type=bounded_int(1, 50), default=5, help="calibration bins (default 5)")
    calibration.add_argument("--bootstrap", type=bounded_int(0, MAX_RESAMPLES), default=1000, metavar="N",
                             help=f"bootstrap resamples of items for the bias and slope intervals (0 = none); at "
                                  f"most {MAX_RESAMPLES:,}")
    calibration.add_argument("--splits", type=bounded_int(0), default=20, metavar="N",
                             help="items the raters split on to list (default 20; JSON lists every item)")
    _add_rater_options(calibration)
    set_handler(calibration, run_calibration)


def _kinds(text: str) -> tuple[str, ...]:
    kinds = tuple(k.strip() for k in text.split(",") if k.strip())
    if not kinds:
        raise ValueError("--human-kinds: give at least one rater kind (e.g. expert,human,author)")
    return kinds


def _parse_cuts(cuts: list[str] | None) -> dict[str, list[float]]:
    """``["agentless_gen=0.5,1"]`` -> ``{"agentless_gen": [0.5, 1.0]}``; ValueError naming a bad entry."""
    parsed: dict[str, list[float]] = {}
    for text in cuts or []:
        name, sep, values = text.partition("=")
        try:
            numbers = [float(v) for v in values.split(",") if v.strip()]
        except ValueError:
            numbers = []
        if not sep or not name.strip() or not numbers or not all(abs(n) < float("inf") for n in numbers):
            raise ValueError(f"--cut: expected FEATURE=T1,T2 with numbers, got {text!r}")
        parsed[name.strip()] = numbers
    return parsed


def _check_choices(ratings: pd.DataFrame, dimension: str, judges: list[str] | None) -> None:
    known = sorted(set(ratings["dimension"].astype(str)))
    if dimension not in known:
        raise ValueError(f"no ratings of dimension {dimension!r}; the ratings hold {', '.join(known) or 'none'}")
    raters = set(ratings.loc[ratings["dimension"] == dimension, "rater"].astype(str))
    for judge in judges or []:
        if judge not in raters:
            raise ValueError(f"--judge {judge!r} did not rate {dimension!r}; its raters are "
                             f"{', '.join(sorted(raters))}")


def _signature(ratings: pd.DataFrame, seed: int, extra: dict[str, str], distancing: str | None = None) -> str:
    from empathy.signature import Signature, judge_signatures

    return str(Signature(distancing=distancing, judges=judge_signatures(ratings), seed=seed, extra=extra))


def _keys_text(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """The list-of-outputs column as ``item / model; ...`` text, for table and CSV output."""
    return frame.assign(**{column: frame[column].map(lambda keys: "; ".join(f"{i} / {m}" for i, m in keys))})


def run_slices(args: argparse.Namespace) -> int:  # noqa: C901 - one flat sequence of option checks, each a one-line exit-2 message; splitting scatters them
    """Handler of ``slices``: the map, the ranked slices and the signature."""
    human_kinds = _kinds(args.human_kinds)
    cuts = _parse_cuts(args.cut)
    if args.outcome == "override" and not args.overrides:
        raise ValueError("--outcome override needs --overrides SQLITE (the store of human decisions)")
    check_inputs(args.outputs, *(args.ratings or []))
    import pandas as pd

    from empathy.io import DataError, load_dataset

    dataset = load_dataset(args.outputs, args.ratings or [])
    outputs, ratings = dataset.outputs, dataset.ratings
    if ratings.empty:
        raise DataError(args.outputs, "no ratings: give --ratings FILE or rater:dimension columns")
    extra: dict[str, str] = {"outcome": args.outcome, "human": "+".join(human_kinds)}
    applied = None
    if args.overrides:
        from empathy.labels.ledger import annotator_ratings, ledger_for_files

        try:
            ledger = ledger_for_files(args.overrides, args.outputs, outputs, rule=args.label_rule,
                                      name=args.store_name)
        except sqlite3.Error as exc:
            raise DataError(args.overrides, f"cannot read the override store ({exc})") from None
        applied = ledger.applied
        humans = annotator_ratings(ledger.status.fresh)
        if args.outcome == "judge_human" and len(humans):
            ratings = pd.concat([ratings, humans], ignore_index=True)
        extra.update(ledger.signature_fields())
        print(f"empathy: {ledger.summary()}", file=sys.stderr)
    _check_choices(ratings, args.dimension, args.judge)
    from empathy import slices as sl

    chosen = args.feature or list(sl.FEATURES)
    unknown = [f for f in chosen if f not in sl.FEATURES]
    if unknown:
        raise ValueError(f"--feature {unknown[0]!r} is not a feature; features are {', '.join(sl.FEATURES)}")
    for name in cuts:
        if name not in chosen:
            raise ValueError(f"--cut {name!r}: not a mapped feature; features are {', '.join(chosen)}")
        if name in sl.CATEGORICAL_FEATURES:
            raise ValueError(f"--cut {name!r}: a categorical feature has one slice per value and no thresholds")
    if args.outcome == "judge_human":
        events, threshold = sl.judge_human_events(ratings, args.dimension, threshold=args.disagree_at,
                                                  human_kinds=human_kinds, judges=args.judge)
    elif args.outcome == "judge_judge":
        events, threshold = sl.judge_judge_events(ratings, args.dimension, threshold=args.disagree_at,
                                                  judges=args.judge)
    else:
        events, threshold = sl.override_events(ratings, applied, args.dimension, judges=args.judge), None
    if events.empty:
        need = {"judge_human": f"a judge and a human (kinds {', '.join(human_kinds)}) that rated the same output",
                "judge_judge": "two judges that rated the same output",
                "override": "a judge rating"}[args.outcome]
        raise ValueError(f"nothing to slice: no output of {args.dimension!r} has {need}")
    distancing = None
    if any(f.startswith(_TEXT_FEATURE_PREFIXES) for f in chosen):
        from empathy.evaluate import text_features

        text = text_features(outputs)
        distancing = text.signature
        parts = (text.sentences_ref, text.sentences_gen, text.densities_ref, text.densities_gen)
    else:
        import numpy as np

        n = len(outputs)
        parts = (np.full(n, np.nan), np.full(n, np.nan), np.full((n, 3), np.nan), np.full((n, 3), np.nan))
    features = sl.output_features(outputs, ratings, *parts)
    result = sl.slice_map(features, events, outcome=args.outcome, dimension=args.dimension, feature_names=chosen,
                          bins=args.bins, thresholds=cuts, n_permutations=args.permutations, seed=args.seed,
                          per_judge=args.per_judge, threshold=threshold, exact=not args.monte_carlo)
    ranked = sl.ranked_slices(result.table, top=args.top, min_units=args.min_units)
    signature = _signature(ratings, args.seed, {**extra, **result.signature_fields()}, distancing)
    if result.holm_floor >= 0.05:
        print(f"empathy: note: {len(result.table)} slices and {args.permutations:,} permutations: no Holm p-value can "
              f"fall below {result.holm_floor:.3g}; use --permutations {20 * len(result.table):,} or more",
              file=sys.stderr)
    if args.format == "json":
        print_json({"slices": json_rows(_json_keys(result.table)), "ranked": json_rows(_json_keys(ranked)),
                    "findings": [sl.describe(row) for row in ranked.to_dict("records")],
                    "threshold": threshold, "holm_floor": result.holm_floor,
                    "n_units": len(events), "n_events": int(events["event"].sum()),
                    "signature": signature})
        return 0
    if args.format == "csv":
        emit(_keys_text(result.table, "outputs"), "csv", signature)
        return 0
    print(f"{int(events['event'].sum())} of {len(events)} units disagree "
          f"({args.outcome}, {args.dimension}); the slices that depart most from the whole:")
    print_table(ranked.drop(columns=["outcome", "dimension", "outputs", "low", "high"]))
    print(_p_note(result.table, args.permutations))
    print_signature(signature)
    return 0


def _p_note(table: pd.DataFrame, permutations: int) -> str:
    """How the map's p-values were computed: how many exactly, how many by Monte Carlo and its largest error."""
    carlo = table[table["p_method"] == "monte-carlo"]
    line = f"\np-values: {len(table) - len(carlo)} of {len(table)} exact"
    if len(carlo):
        line += (f"; {len(carlo)} by Monte Carlo over {permutations:,} permutations (standard error in p_se, at "
                 f"most {float(carlo['p_se'].max()):.3f})")
    return line


def _json_keys(frame: pd.DataFrame) -> pd.DataFrame:
    """Output keys as ``[item_id, model]`` lists (JSON has no tuples)."""
    return frame.assign(outputs=frame["outputs"].map(lambda keys: [list(k) for k in keys]))


def run_calibration(args: argparse.Namespace) -> int:
    """Handler of ``calibration``: confusion cells, bias and slope, calibration bins, item splits."""
    human_kinds = _kinds(args.human_kinds)
    check_inputs(args.input, *(args.ratings or []))
    _, ratings = load_inputs(args.input, args.ratings)
    _check_choices(ratings, args.dimension, args.judge)
    from empathy import calibration as cal

    pairs = cal.paired(ratings, args.dimension, human_kinds=human_kinds, judges=args.judge)
    if pairs.empty:
        raise ValueError(f"no output of {args.dimension!r} was rated by both a judge and a human (rater kinds "
                         f"{', '.join(human_kinds)}); set --human-kinds or --judge")
    try:
        confusion = cal.confusion_cells(ratings, args.dimension, human_kinds=human_kinds, judges=args.judge)
    except ValueError:
        confusion = None  # a continuous score: calibration bins, not a confusion matrix
    bias = cal.calibration_bias(ratings, args.dimension, human_kinds=human_kinds, judges=args.judge,
                                bootstrap=args.bootstrap, seed=args.seed)
    bins = cal.calibration_bins(ratings, args.dimension, bins=args.bins, human_kinds=human_kinds, judges=args.judge)
    splits = cal.item_splits(ratings, args.dimension)
    extra = {"human": "+".join(human_kinds), "bootstrap": str(args.bootstrap), "items": "cluster"}
    signature = _signature(ratings, args.seed, extra)
    if args.format == "json":
        print_json({"dimension": args.dimension,
                    "confusion": json_rows(_json_keys(confusion)) if confusion is not None else None,
                    "bias": json_rows(bias), "bins": json_rows(_json_keys(bins)), "splits": json_rows(splits),
                    "signature": signature})
        return 0
    if args.format == "csv":
        emit(bias, "csv", signature)
        return 0
    if confusion is not None:
        print(f"confusion cells ({args.dimension}: human label x judge label, per model and judge):")
        print_table(_keys_text(confusion, "outputs"))
    print(f"\nbias (judge - human) and slope of judge on human, {args.bootstrap} item resamples:")
    print_table(bias)
    print("human_slope: one human's slope on the mean of the other humans (regression dilution; '-' with fewer "
          "than two humans). A judge's slope below 1 means compression only where it is also below this.")
    print("\ncalibration bins of the human score:")
    print_table(bins.drop(columns=["outputs"]))
    print(f"\nitems the raters split on ({int(splits['split'].sum())} of {len(splits)}):")
    print_table(splits[splits["split"]].head(args.splits))
    print_signature(signature)
    return 0
