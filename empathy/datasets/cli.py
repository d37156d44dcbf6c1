"""Command line for the data set importers: ``python -m empathy import kumar2025 DIR --out OUT``.

The lead's ``empathy/cli.py`` calls :func:`register_cli` with its sub-parsers; the chosen sub-command's
``handler(args)`` returns the exit code (0 on success, 2 for a bad input directory or file, with a one-line
message naming the file on stderr and never a traceback).
"""

from __future__ import annotations

import argparse
import sys

from empathy.io import DataError


def register_cli(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``import`` sub-command (with the data set as its own sub-choice) and return its parser."""
    parser = subparsers.add_parser(
        "import", help="import a published multi-annotator data set into outputs.csv + ratings.csv",
        description="Import a published data set into the empathy data model (outputs.csv, ratings.csv and "
                    "import_report.json in --out); the report of what was read, dropped and merged is printed.")
    datasets = parser.add_subparsers(dest="dataset", metavar="DATASET")
    datasets.required = True
    kumar = datasets.add_parser(
        "kumar2025", help="Kumar et al. (2025): expert, crowd and LLM ratings of 200 support conversations",
        description="Import shared/datasets/kumar2025-empathic-communication (see docs/kumar2025.md).")
    kumar.add_argument("directory", metavar="DIR", help="the data set folder (holding annotations/ and original_data/)")
    kumar.add_argument("--out", required=True, metavar="OUT", help="output folder (created if needed)")
    kumar.add_argument("--runs", choices=("mean", "first"), default="mean",
                       help="repeated LLM runs of one conversation: keep their mean (default) or the first run")
    kumar.add_argument("--with-seeker", action="store_true",
                       help="also import the Perceived Empathy seekers' own ratings as rater 'seeker'")
    kumar.add_argument("--json", action="store_true", help="print the report as JSON instead of text")
    # the lead's empathy/cli.py dispatches on `handler`; `func` is the argparse idiom, kept as an alias
    kumar.set_defaults(handler=run_kumar2025, func=run_kumar2025)
    return parser


def run_kumar2025(args: argparse.Namespace) -> int:
    """Run the Kumar et al. (2025) import for parsed ``args``; return the exit code."""
    import json

    from empathy.datasets.kumar2025 import import_kumar2025

    try:
        result = import_kumar2025(args.directory, runs=args.runs, include_seeker=args.with_seeker)
        paths = result.write(args.out)
    except DataError as exc:
        print(f"empathy: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"empathy: error: cannot write {args.out}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result.report.to_dict(), indent=2))
    else:
        print(result.report.format())
        print()
        print(f"wrote {len(result.outputs)} outputs to {paths['outputs']}")
        print(f"wrote {len(result.ratings)} ratings to {paths['ratings']}")
        print(f"wrote the report to {paths['report']}")
    return 0
