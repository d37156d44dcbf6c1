"""The judges and the standard metrics: ``empathy judge OUTPUTS --out RATINGS`` and ``empathy standard OUTPUTS``.

``judge`` rates an outputs file (with a progress bar on stderr) and writes long-form ratings (CSV, JSONL or
Parquet by the extension of RATINGS); ``standard`` prints ROUGE-L, chrF, CIDEr-D and Sem-Sim. Exit codes as in
:mod:`empathy.cli.common`: 1 when the endpoint refuses the judge, 2 for bad input or configuration.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from empathy.cli.common import (
    EXIT_OK,
    CommandFailed,
    check_inputs,
    print_csv,
    print_json,
    print_signature,
    print_table,
    set_handler,
)
from empathy.escaping import terminal_literal
from empathy.files import RATINGS_SUFFIXES

if TYPE_CHECKING:
    import pandas as pd

# The judges' protocol names, spelled out so the parser does not import the judges package (and openai);
# tests/test_judges_cli.py checks they equal empathy.judges.prompts.PROTOCOLS.
PROTOCOL_NAMES: tuple[str, ...] = ("affect", "disturbing", "conflict")


class ProgressBar:
    """A one-line progress bar on a stream (stderr), redrawn at most ten times a second."""

    def __init__(self, label: str, stream: TextIO | None = None, width: int = 30):
        self.label = terminal_literal(label)
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


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``judge`` and ``standard`` sub-commands."""
    parser = commands.add_parser(
        "judge", help="rate outputs with an LLM judge or the offline lexicon judge",
        description="Rate every (item, model) of OUTPUTS with a judge (Appendices B-D protocols) and write "
                    "long-form ratings. Judges come from a TOML/JSON config (--config, $EMPATHY_JUDGES_CONFIG "
                    "or ./judges.toml); the built-in offline judge 'lexicon' needs none.")
    parser.add_argument("outputs", nargs="?", metavar="OUTPUTS", help="outputs file (CSV, JSONL or Parquet)")
    parser.add_argument("--judge", default="lexicon", metavar="NAME", help="judge name (default: lexicon)")
    parser.add_argument("--config", metavar="FILE", help="judges config file (.toml or .json)")
    parser.add_argument("--out", metavar="RATINGS", help="ratings file to write (.csv, .jsonl or .parquet; "
                        "text cells of a CSV that look like formulas get a leading apostrophe)")
    parser.add_argument("--protocols", default=",".join(PROTOCOL_NAMES), metavar="LIST",
                        help=f"comma-separated subset of {','.join(PROTOCOL_NAMES)} (default: all)")
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument("--paper-tasks", dest="tasks", action="store_const", const="paper", default="paper",
                       help="the default: rows of task news get affect+disturbing, translation affect, counseling "
                            "affect+conflict (the paper's Section 4), each among --protocols; rows of other tasks "
                            "get --protocols (signature: tasks=paper)")
    scope.add_argument("--all-tasks", dest="tasks", action="store_const", const="all",
                       help="every protocol of --protocols on every row, CA and EGM included where the paper "
                            "does not score them (signature: tasks=all)")
    parser.add_argument("--concurrency", type=int, metavar="N", help="override the judge's concurrency limit")
    parser.add_argument("--cache", metavar="SQLITE", help="cache file (default: ~/.cache/empathy/judges.sqlite)")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--list", action="store_true", help="list the available judges and exit")
    parser.add_argument("--overrides", metavar="SQLITE",
                        help="override store whose decisions this run is classified against (confirmed, still "
                        "disputed, stale, orphaned); default: $EMPATHY_STORE or the store beside OUTPUTS when it "
                        "exists")
    parser.add_argument("--store-name", metavar="NAME",
                        help="the data set's name in the store (default: the outputs file, relative to the store)")
    parser.add_argument("--rerun-of", metavar="RATER",
                        help="the rater whose human decisions this run re-rates (default: the judge's own name)")
    set_handler(parser, run_judge)

    standard = commands.add_parser(
        "standard", help="ROUGE-L, chrF, CIDEr-D and semantic similarity per model",
        description="Standard quality metrics per (task, model). Sem-Sim uses an embeddings endpoint from the "
                    "config (--embedding NAME) or, offline, TF-IDF cosine ('tfidf-cosine').")
    standard.add_argument("outputs", metavar="OUTPUTS", help="outputs file (CSV, JSONL or Parquet)")
    standard.add_argument("--format", choices=("json", "csv", "table"), default="table")
    standard.add_argument("--per-item", action="store_true", help="one row per (item, model) instead of means")
    standard.add_argument("--metrics", metavar="LIST", help="comma-separated subset of rouge_l,chrf,cider_d,sem_sim")
    standard.add_argument("--embedding", metavar="NAME", help="embeddings endpoint from the config for Sem-Sim")
    standard.add_argument("--config", metavar="FILE", help="config file holding [embeddings.NAME]")
    set_handler(standard, run_standard)


def run_judge(args: argparse.Namespace) -> int:
    """Handler of ``judge``: rate OUTPUTS and write RATINGS; return the exit code."""
    if args.list:
        from empathy.judges.config import available_judges

        for name, judge in sorted(available_judges(args.config).items()):
            where = "offline" if judge.kind == "lexicon" else f"{judge.model} @ {judge.endpoint}"
            print("\t".join(terminal_literal(field) for field in (name, judge.kind, where, judge.description)))
        return EXIT_OK
    if not args.outputs or not args.out:
        raise ValueError("judge needs OUTPUTS and --out RATINGS (or --list)")
    if Path(args.out).suffix.lower() not in RATINGS_SUFFIXES:
        raise ValueError(f"{args.out}: unsupported ratings file type; use .csv, .jsonl or .parquet")
    check_inputs(args.outputs)
    from empathy.io import load_outputs, write_ratings

    outputs, _ = load_outputs(args.outputs)
    from empathy.judges.llm import JudgeRunError  # openai: only once the input is known good
    from empathy.judges.run import PAPER_TASK_PROTOCOLS
    from empathy.judges.run import run_judge as judge_outputs

    if args.tasks == "paper":
        other = outputs.loc[~outputs["task"].isin(list(PAPER_TASK_PROTOCOLS)), "task"]
        if len(other):
            names = ", ".join(sorted(repr(t) if t else "no task" for t in set(other))[:5])
            print(terminal_literal(f"note: {len(other)} outputs of tasks the paper does not score ({names}) get "
                                   f"every protocol of --protocols"), file=sys.stderr)
    cache: object = None if args.no_cache else (args.cache or True)
    progress = None if args.quiet else ProgressBar(f"judge {args.judge}")
    try:
        result = judge_outputs(outputs, args.judge, protocols=args.protocols, progress=progress, cache=cache,
                               config=args.config, concurrency=args.concurrency, task_protocols=args.tasks)
    except JudgeRunError as exc:
        raise CommandFailed(str(exc)) from None
    try:
        write_ratings(result.ratings, args.out)
    except OSError as exc:
        if exc.filename is None:
            exc.filename = args.out  # a write error without a name is about the ratings file
        raise
    missing = int(result.ratings["value"].isna().sum())
    print(terminal_literal(f"{result.judge.name}: {len(result.ratings)} ratings ({missing} missing) -> {args.out}"),
          file=sys.stderr)
    print(result.stats.summary(), file=sys.stderr)
    if missing:
        reasons = result.missing["reason"].value_counts().head(3)
        for reason, count in reasons.items():
            print(f"  missing x{count}: {terminal_literal(reason)}", file=sys.stderr)
    summary = _ledger_summary(args, outputs, result.ratings)
    if summary:
        print(terminal_literal(summary), file=sys.stderr)
    return EXIT_OK


def _store_of(args: argparse.Namespace) -> Path | str | None:
    """The override store a ``judge`` run meets: ``--overrides``, else the data set's default store if it exists
    (a run never creates one); a server location as its string."""
    from empathy.labels.locations import default_store_path, is_server_location, store_location

    given = bool(args.overrides)
    location = store_location(args.overrides) if given else default_store_path(Path(args.outputs).resolve().parent)
    if is_server_location(location):
        return str(location)
    if not Path(location).is_file():
        if given:
            raise ValueError(f"{location}: override store not found")
        return None
    return Path(location)


def _ledger_summary(args: argparse.Namespace, outputs: pd.DataFrame, ratings: pd.DataFrame) -> str:
    """The re-run against the human decisions (as ``metrics --overrides`` applies them), or ``""`` without a store.

    Decisions of the rater ``--rerun-of`` (default: the rater this run wrote) are confirmed when the new judge
    value equals the human's, still disputed when it differs, stale when the text changed since, orphaned when
    the output is gone (:func:`empathy.labels.ledger.rerun_against_ledger`).
    """
    path = _store_of(args)
    if path is None:
        return ""
    import sqlite3

    from empathy.io import DataError
    from empathy.labels.ledger import ledger_for_files, rerun_against_ledger

    try:
        ledger = ledger_for_files(path, args.outputs, outputs, name=args.store_name)
    except sqlite3.Error as exc:  # a corrupt or foreign file given as the store
        raise DataError(str(path), f"cannot read the override store ({exc})") from None
    raters = sorted(set(ratings["rater"].astype(str)))
    mapping = {args.rerun_of: raters[0]} if args.rerun_of and len(raters) == 1 else None
    rerun = rerun_against_ledger(ledger, ratings, outputs, rater_map=mapping)
    return f"{rerun.summary()} [store {path}]"


def run_standard(args: argparse.Namespace) -> int:
    """Handler of ``standard``: print the standard metrics of OUTPUTS; return the exit code."""
    from empathy.cli.common import json_rows

    check_inputs(args.outputs)
    from empathy.io import load_outputs

    outputs, _ = load_outputs(args.outputs)
    from empathy.judges.llm import JudgeRunError
    from empathy.standard import compute_standard

    try:
        result = compute_standard(outputs, metrics=args.metrics, embedding=args.embedding, config=args.config)
    except JudgeRunError as exc:
        raise CommandFailed(str(exc)) from None
    table = result.per_item if args.per_item else result.per_model
    if args.format == "json":
        payload = result.to_json()
        if args.per_item:
            payload["per_item"] = json_rows(table)
        print_json(payload)
    elif args.format == "csv":
        print_csv(table, result.signature)
    else:
        print_table(table if table["task"].astype(bool).any() else table.drop(columns="task"))
        print_signature(result.signature)
    return EXIT_OK
