"""Command line for the judges and the standard metrics.

``python -m empathy judge OUTPUTS --judge NAME [--config FILE] --out RATINGS`` rates an outputs file (with a
progress bar on stderr) and writes long-form ratings (CSV, JSONL or Parquet by the extension of RATINGS).
``python -m empathy standard OUTPUTS [--format json|csv|table]`` prints ROUGE-L, chrF, CIDEr-D and Sem-Sim.

The lead's ``empathy/cli.py`` calls :func:`register_cli` with its sub-parsers; the chosen sub-command's
``handler(args)`` returns the exit code: 0 on success, 2 for bad input or configuration (one line on stderr
naming the file, row and column, never a traceback), 1 when the endpoint refuses the judge.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import pandas as pd

from empathy.io import DataError, load_outputs

from .config import JudgeConfigError, available_judges
from .llm import JudgeRunError
from .prompts import PROTOCOLS

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2
RATINGS_SUFFIXES = (".csv", ".jsonl", ".parquet", ".pq")


class ProgressBar:
    """A one-line progress bar on a stream (stderr), redrawn at most ten times a second."""

    def __init__(self, label: str, stream=None, width: int = 30):  # noqa: ANN001 - any text stream
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self._last = 0.0
        self._start = time.perf_counter()

    def __call__(self, done: int, total: int) -> None:
        now = time.perf_counter()
        if done < total and now - self._last < 0.1:
            return
        self._last = now
        fraction = done / total if total else 1.0
        filled = int(round(self.width * fraction))
        bar = "#" * filled + "-" * (self.width - filled)
        self.stream.write(f"\r{self.label} [{bar}] {done}/{total} {now - self._start:5.1f}s")
        if done >= total:
            self.stream.write("\n")
        self.stream.flush()


def _error(message: str) -> None:
    print(f"empathy: error: {' '.join(str(message).split())}", file=sys.stderr)


def _exit_code(exc: Exception) -> int:
    """Report a failure in one line and return its exit code: 1 when the endpoint refused the judge, else 2."""
    if isinstance(exc, OSError):
        _error(f"{exc.filename}: {exc.strerror or exc}" if exc.filename else str(exc.strerror or exc))
    else:
        _error(str(exc))
    return EXIT_FAILED if isinstance(exc, JudgeRunError) else EXIT_BAD_INPUT


def write_ratings(ratings: pd.DataFrame, path: str | Path) -> None:
    """Write long-form ratings as CSV, JSONL or Parquet, chosen by the file extension."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in RATINGS_SUFFIXES:
        raise ValueError(f"{path}: unsupported ratings file type {suffix or '(none)'!r}; "
                         "use .csv, .jsonl or .parquet")
    path.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".csv":
        ratings.to_csv(path, index=False)
    elif suffix == ".jsonl":
        ratings.to_json(path, orient="records", lines=True, force_ascii=False)
    else:
        ratings.to_parquet(path, index=False)


def run_judge_command(args: argparse.Namespace) -> int:
    """Handler of ``judge``: rate OUTPUTS and write RATINGS; return the exit code."""
    from .run import PAPER_TASK_PROTOCOLS, run_judge

    try:
        if args.list:
            for name, judge in sorted(available_judges(args.config).items()):
                where = "offline" if judge.kind == "lexicon" else f"{judge.model} @ {judge.endpoint}"
                print(f"{name}\t{judge.kind}\t{where}")
            return EXIT_OK
        if not args.outputs or not args.out:
            _error("judge needs OUTPUTS and --out RATINGS (or --list)")
            return EXIT_BAD_INPUT
        if Path(args.out).suffix.lower() not in RATINGS_SUFFIXES:
            _error(f"{args.out}: unsupported ratings file type; use .csv, .jsonl or .parquet")
            return EXIT_BAD_INPUT
        outputs, _ = load_outputs(args.outputs)
        cache: object = None if args.no_cache else (args.cache or True)
        progress = None if args.quiet else ProgressBar(f"judge {args.judge}")
        result = run_judge(outputs, args.judge, protocols=args.protocols, progress=progress, cache=cache,
                           config=args.config, concurrency=args.concurrency,
                           task_protocols=PAPER_TASK_PROTOCOLS if args.paper_tasks else None)
        write_ratings(result.ratings, args.out)
    except OSError as exc:
        if exc.filename is None:
            exc.filename = args.out  # a write error without a name is about the ratings file
        return _exit_code(exc)
    except (DataError, JudgeConfigError, JudgeRunError, ValueError, TypeError) as exc:
        return _exit_code(exc)
    missing = int(result.ratings["value"].isna().sum())
    print(f"{result.judge.name}: {len(result.ratings)} ratings ({missing} missing) -> {args.out}",
          file=sys.stderr)
    print(result.stats.summary(), file=sys.stderr)
    if missing:
        reasons = result.missing["reason"].value_counts().head(3)
        for reason, count in reasons.items():
            print(f"  missing x{count}: {reason}", file=sys.stderr)
    return EXIT_OK


def run_standard_command(args: argparse.Namespace) -> int:
    """Handler of ``standard``: print the standard metrics of OUTPUTS; return the exit code."""
    from empathy.standard import compute_standard

    try:
        outputs, _ = load_outputs(args.outputs)
        result = compute_standard(outputs, metrics=args.metrics, embedding=args.embedding, config=args.config)
    except (DataError, JudgeConfigError, JudgeRunError, ValueError, TypeError) as exc:
        return _exit_code(exc)
    table = result.per_item if args.per_item else result.per_model
    if args.format == "json":
        payload = result.to_json()
        if args.per_item:
            records = table.astype(object).where(table.notna(), None).to_dict("records")
            payload["per_item"] = [{k: (v.item() if hasattr(v, "item") else v) for k, v in r.items()}
                                   for r in records]
        print(json.dumps(payload, indent=2))
    elif args.format == "csv":
        table.assign(signature=result.signature).to_csv(sys.stdout, index=False)
    else:
        shown = table if table["task"].astype(bool).any() else table.drop(columns="task")
        with pd.option_context("display.max_rows", None, "display.max_columns", None, "display.width", 200):
            print(shown.to_string(index=False, float_format=lambda x: f"{x:.3f}", na_rep="-"))
        print(f"\nsignature: {result.signature}")
    return EXIT_OK


def register_judge_cli(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``judge`` sub-command and return its parser."""
    parser = subparsers.add_parser(
        "judge", help="rate outputs with an LLM judge or the offline lexicon judge",
        description="Rate every (item, model) of OUTPUTS with a judge (Appendices B-D protocols) and write "
                    "long-form ratings. Judges come from a TOML/JSON config (--config, $EMPATHY_JUDGES_CONFIG "
                    "or ./judges.toml); the built-in offline judge 'lexicon' needs none.")
    parser.add_argument("outputs", nargs="?", metavar="OUTPUTS", help="outputs file (CSV, JSONL or Parquet)")
    parser.add_argument("--judge", default="lexicon", metavar="NAME", help="judge name (default: lexicon)")
    parser.add_argument("--config", metavar="FILE", help="judges config file (.toml or .json)")
    parser.add_argument("--out", metavar="RATINGS", help="ratings file to write (.csv, .jsonl or .parquet)")
    parser.add_argument("--protocols", default=",".join(PROTOCOLS), metavar="LIST",
                        help=f"comma-separated subset of {','.join(PROTOCOLS)} (default: all)")
    parser.add_argument("--paper-tasks", action="store_true",
                        help="rows of task news: affect+disturbing; translation: affect; counseling: "
                             "affect+conflict (as in the paper); other tasks: --protocols")
    parser.add_argument("--concurrency", type=int, metavar="N", help="override the judge's concurrency limit")
    parser.add_argument("--cache", metavar="SQLITE", help="cache file (default: ~/.cache/empathy/judges.sqlite)")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--list", action="store_true", help="list the available judges and exit")
    parser.set_defaults(handler=run_judge_command, func=run_judge_command)
    return parser


def register_standard_cli(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``standard`` sub-command and return its parser."""
    parser = subparsers.add_parser(
        "standard", help="ROUGE-L, chrF, CIDEr-D and semantic similarity per model",
        description="Standard quality metrics per (task, model). Sem-Sim uses an embeddings endpoint from the "
                    "config (--embedding NAME) or, offline, TF-IDF cosine ('tfidf-cosine').")
    parser.add_argument("outputs", metavar="OUTPUTS", help="outputs file (CSV, JSONL or Parquet)")
    parser.add_argument("--format", choices=("json", "csv", "table"), default="table")
    parser.add_argument("--per-item", action="store_true", help="one row per (item, model) instead of means")
    parser.add_argument("--metrics", metavar="LIST", help="comma-separated subset of rouge_l,chrf,cider_d,sem_sim")
    parser.add_argument("--embedding", metavar="NAME", help="embeddings endpoint from the config for Sem-Sim")
    parser.add_argument("--config", metavar="FILE", help="config file holding [embeddings.NAME]")
    parser.set_defaults(handler=run_standard_command, func=run_standard_command)
    return parser


def register_cli(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``judge`` and ``standard`` sub-commands to the lead's CLI."""
    register_judge_cli(subparsers)
    register_standard_cli(subparsers)
