"""May a judge replace the annotators: ``empathy alt-test RATINGS ...`` and ``empathy judge-report RATINGS ...``.

Contract (scripts depend on it): ``alt-test RATINGS --dimension D --judge RATER [--annotators A,B,... |
--annotator-kind KIND] [--scoring accuracy|neg-rmse|rank] [--epsilon E] --format json`` prints a list with one
object per judge (and dimension, ``--dimension`` and ``--judge`` being repeatable) holding ``judge``,
``dimension``, ``winning_rate``, ``advantage_probability``, ``passed``, ``epsilon``, ``scoring``,
``n_instances``, ``annotators`` (each with ``p_value``, ``p_adjusted`` and ``won``) and ``signature``
(:meth:`empathy.judge_report.alt_test.AltTestResult.to_dict`).
"""

from __future__ import annotations

import argparse
import math
import re

from empathy.cli.common import (
    FORMATS,
    bounded_int,
    check_inputs,
    load_inputs,
    print_csv,
    print_json,
    print_signature,
    print_table,
    set_handler,
)
from empathy.escaping import terminal_literal

_DECIMAL = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def margin(text: str) -> float:
    """An argparse ``type`` for ``--epsilon``: an ASCII decimal in [0, 1)."""
    stripped = text.strip()
    if not (stripped.isascii() and _DECIMAL.fullmatch(stripped)):
        raise argparse.ArgumentTypeError(f"{text!r} is not a decimal number")
    value = float(stripped)
    if not (math.isfinite(value) and 0 <= value < 1):
        raise argparse.ArgumentTypeError(f"{value:g} is out of range: epsilon is in [0, 1)")
    return value


def names(text: str) -> list[str]:
    """``"a, b"`` -> ``["a", "b"]`` (an argparse ``type`` for comma-separated rater names)."""
    found = [part.strip() for part in text.split(",") if part.strip()]
    if not found:
        raise argparse.ArgumentTypeError(f"{text!r} names no rater")
    return found


def add_alt_test_options(parser: argparse.ArgumentParser) -> None:
    """The options of one Alt-Test: judge, dimension, annotators, scoring, epsilon and the paper's defaults."""
    from empathy.judge_report.defaults import (
        DEFAULT_MIN_HUMANS,
        DEFAULT_MIN_INSTANCES,
        SCORINGS,
        T_TEST_MIN,
    )

    parser.add_argument("ratings", help="long ratings file, or an outputs file with rater:dimension columns")
    parser.add_argument("--more-ratings", action="append", metavar="FILE", dest="more_ratings",
                        help="more long ratings files joined to the first (repeatable)")
    parser.add_argument("--dimension", action="append", required=True, metavar="D",
                        help="the dimension tested (repeatable)")
    parser.add_argument("--judge", action="append", required=True, metavar="RATER", type=names,
                        help="the judge tested (repeatable, or comma-separated)")
    who = parser.add_mutually_exclusive_group()
    who.add_argument("--annotators", type=names, metavar="A,B,...",
                     help="the human annotators (default: every rater of kind expert, human or author)")
    who.add_argument("--annotator-kind", metavar="KIND", help="the annotators are the raters of this rater_kind")
    parser.add_argument("--scoring", choices=SCORINGS, default=None,
                        help="alignment with the remaining annotators: accuracy (categories; default for a "
                             "0/1 dimension), neg-rmse (scales; the default otherwise) or rank (neg-rmse on rank "
                             "percentiles)")
    parser.add_argument("--epsilon", type=margin, default=None, metavar="E",
                        help="cost-benefit margin (default by the annotators' kind: expert 0.2, human/author "
                             "0.15, crowd 0.1; mixed kinds: the smallest)")
    parser.add_argument("--min-instances", type=bounded_int(2, 1_000_000), default=DEFAULT_MIN_INSTANCES,
                        metavar="N", help=f"instances each annotator needs (default {DEFAULT_MIN_INSTANCES}, as the "
                        f"paper; below {T_TEST_MIN} the Wilcoxon signed-rank test replaces the t-test)")
    parser.add_argument("--min-humans", type=bounded_int(2, 1000), default=DEFAULT_MIN_HUMANS, metavar="N",
                        help=f"annotators an instance needs (default {DEFAULT_MIN_HUMANS})")


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``alt-test`` and ``judge-report`` sub-commands."""
    parser = commands.add_parser(
        "alt-test", help="the Alternative Annotator Test: may a judge replace the human annotators?",
        description="Leave one annotator out; per instance, does the judge or the excluded annotator agree better "
                    "with the remaining annotators? One-sided test against the margin epsilon, Benjamini-Yekutieli "
                    "over annotators (q = 0.05); the judge passes when it wins against at least half of them "
                    "(Calderon, Reichart & Dror, ACL 2025).")
    add_alt_test_options(parser)
    parser.add_argument("--format", choices=FORMATS, default="table",
                        help="json: one object per judge and dimension; table/csv: one row per annotator test")
    set_handler(parser, run_alt_test)

    report = commands.add_parser(
        "judge-report", help="one verdict line per judge and dimension (Alt-Test, order effect), with signature",
        description="The judge report's verdict per judge and dimension: the Alt-Test against the annotators and, "
                    "where the ratings hold both affect orders, the order effect with its interval.")
    add_alt_test_options(report)
    report.add_argument("--outputs", metavar="FILE",
                        help="the outputs file (for the length dependence) when RATINGS is a long ratings file")
    report.add_argument("--checks", action="append", metavar="FILE",
                        help="a judge-check JSON file (repeatable): its order effect, repeatability and probes "
                             "join the judge's verdict lines")
    report.add_argument("--format", choices=FORMATS, default="table",
                        help="json: one object per verdict; csv: one row per verdict; table: the lines")
    set_handler(report, run_judge_report)

    check = commands.add_parser(
        "judge-check", help="re-run, order and counterfactual probes of a judge (cost shown and capped first)",
        description="Run a judge k times on a sample (flip rate, alpha across runs), in both affect orders (order "
                    "effect) and through the CheckList probes; the requests are counted and printed to stderr "
                    "before any call, and the run refuses when they exceed --max-calls.")
    check.add_argument("outputs", metavar="OUTPUTS", help="outputs file (CSV, JSONL or Parquet)")
    check.add_argument("--judge", default="lexicon", metavar="NAME", help="judge name (default: lexicon)")
    check.add_argument("--config", metavar="FILE", help="judges config file (.toml or .json)")
    check.add_argument("--checks", default="repeatability,order,probes", metavar="LIST",
                       help="comma-separated subset of repeatability,order,probes (default: all)")
    check.add_argument("--repeat", type=bounded_int(2, 100), default=3, metavar="K", help="runs (default 3)")
    check.add_argument("--sample", type=bounded_int(2, 10_000_000), default=None, metavar="N",
                       help="outputs re-run for repeatability (default: all)")
    check.add_argument("--seed", type=bounded_int(0, 2**31 - 1), default=0, metavar="S",
                       help="seed of the sample and the bootstrap (default 0)")
    check.add_argument("--max-calls", type=bounded_int(0, 10_000_000), default=1000, metavar="N",
                       help="refuse when the checks need more requests than this (default 1000)")
    check.add_argument("--cache", metavar="SQLITE", help="answer cache for the order and probe runs (repeatability "
                       "never reads it); default: none")
    check.add_argument("--format", choices=FORMATS, default="table",
                       help="json: the judge-check object (for judge-report --checks); csv: one row per probe")
    set_handler(check, run_judge_check)


def _judges(args: argparse.Namespace) -> list[str]:
    return list(dict.fromkeys(name for group in args.judge for name in group))


def _load(args: argparse.Namespace):  # noqa: ANN202 - (outputs or None, ratings) DataFrames
    outputs_path = getattr(args, "outputs", None)
    check_inputs(args.ratings, *(args.more_ratings or []), outputs_path)
    outputs, ratings = load_inputs(args.ratings, args.more_ratings)
    if outputs_path:
        from empathy.io import load_outputs

        outputs = load_outputs(outputs_path)[0]
    return outputs, ratings


def alt_tests(ratings, args: argparse.Namespace) -> list:  # noqa: ANN001 - a pandas DataFrame
    """Every Alt-Test the options ask for: each dimension, then each judge."""
    from empathy.judge_report.alt_test import alt_test

    return [alt_test(ratings, dimension, judge, annotators=args.annotators, annotator_kind=args.annotator_kind,
                     scoring=args.scoring, epsilon=args.epsilon, min_humans=args.min_humans,
                     min_instances=args.min_instances)
            for dimension in dict.fromkeys(args.dimension) for judge in _judges(args)]


def run_alt_test(args: argparse.Namespace) -> int:
    """Handler of ``alt-test``."""
    ratings = _load(args)[1]
    results = alt_tests(ratings, args)
    if args.format == "json":
        print_json([r.to_dict() for r in results])
        return 0
    from empathy.judge_report.alt_test import annotators_frame, results_frame

    if args.format == "csv":
        frame = annotators_frame(results).merge(results_frame(results), on=["dimension", "judge"])
        frame["signature"] = [r.signature for r in results for _ in r.annotators]
        print_csv(frame)
        return 0
    print_table(results_frame(results))
    print("\nper annotator (the judge wins against an annotator when H0 is rejected after Benjamini-Yekutieli):")
    print_table(annotators_frame(results))
    for result in results:
        print_signature(result.signature)
    return 0


def run_judge_report(args: argparse.Namespace) -> int:
    """Handler of ``judge-report``: the verdict lines."""
    from empathy.judge_report.verdict import verdicts, verdicts_frame

    outputs, ratings = _load(args)
    checks = _read_checks(args.checks or [])
    found = verdicts(ratings, alt_tests(ratings, args), outputs, checks)
    if args.format == "json":
        print_json([v.to_dict() for v in found])
        return 0
    frame = verdicts_frame(found)
    if args.format == "csv":
        print_csv(frame)
        return 0
    for verdict in found:
        print(terminal_literal(f"{verdict.judge} on {verdict.dimension}: {verdict.line}"))
    print()
    print_table(frame.drop(columns=["signature", "line"]))
    for verdict in found:
        print_signature(verdict.signature)
    return 0


def _read_checks(paths: list[str]) -> dict[str, dict]:
    """judge name -> its judge-check object, from ``--checks`` files (a bad file: one line, exit 2)."""
    import json
    from pathlib import Path

    found = {}
    for path in paths:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"{path}: not a judge-check JSON file ({type(exc).__name__})") from None
        if not isinstance(data, dict) or not isinstance(data.get("judge"), str):
            raise ValueError(f"{path}: not a judge-check JSON file (no judge)")
        found[data["judge"]] = data
    return found


def run_judge_check(args: argparse.Namespace) -> int:
    """Handler of ``judge-check``: the plan on stderr, then the checks (or a refusal above ``--max-calls``)."""
    import sys

    from empathy.judge_report.checks import CHECKS, plan_checks, run_checks

    chosen = [c.strip() for c in args.checks.split(",") if c.strip()]
    unknown = [c for c in chosen if c not in CHECKS]
    if unknown or not chosen:
        raise ValueError(f"--checks: unknown check(s) {', '.join(unknown) or '(none)'}; "
                         f"choose from {', '.join(CHECKS)}")
    check_inputs(args.outputs)
    from empathy.io import load_outputs
    from empathy.judge_report.repeatability import sample_outputs
    from empathy.judges.config import resolve_judge

    outputs = load_outputs(args.outputs)[0]
    judge = resolve_judge(args.judge, args.config)
    sample = sample_outputs(outputs, args.sample, args.seed)
    plan = plan_checks(outputs, judge, chosen, k=args.repeat, sample=sample)
    print(terminal_literal(plan.describe(judge) + f"; cap --max-calls {args.max_calls}"), file=sys.stderr)
    if plan.total > args.max_calls:
        raise ValueError(f"--max-calls: the checks need {plan.total} requests, more than the cap {args.max_calls} "
                         "(raise it, or use --sample / --checks)")
    from empathy.judges.cache import JudgeCache

    cache = JudgeCache(args.cache) if args.cache else None
    try:
        found = run_checks(outputs, judge, chosen, k=args.repeat, sample=sample, sample_size=args.sample,
                           seed=args.seed, cache=cache)
    finally:
        if cache is not None:
            cache.close()
    if args.format == "json":
        print_json(found)
        return 0
    import pandas as pd

    if args.format == "csv":
        frame = pd.DataFrame(found.get("probes", []))
        frame["signature"] = found["signature"]
        print_csv(frame)
        return 0
    for name in chosen:
        rows = found.get(name) or []
        print(f"{name}:")
        if rows:
            print_table(pd.DataFrame(rows))
        else:
            print("  nothing to measure")
        print()
    if found.get("failures"):
        print("failing outputs:")
        print_table(pd.DataFrame(found["failures"]))
    print_signature(found["signature"])
    return 0
