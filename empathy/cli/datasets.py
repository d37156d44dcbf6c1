"""The data set importers: ``empathy import kumar2025 DIR --out OUT``.

Writes outputs.csv, ratings.csv and import_report.json to OUT and prints the report of what was read, dropped
and merged; a bad input directory or file exits 2 with one line naming the file.
"""

from __future__ import annotations

import argparse

from empathy.cli.common import set_handler


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``import`` sub-command (with the data set as its own sub-choice)."""
    parser = commands.add_parser(
        "import", help="import a published multi-annotator data set into outputs.csv + ratings.csv",
        description="Import a published data set into the empathy data model (outputs.csv, ratings.csv and "
                    "import_report.json in --out); the report of what was read, dropped and merged is printed.")
    datasets = parser.add_subparsers(dest="dataset", metavar="DATASET", parser_class=type(parser))
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
    set_handler(kumar, run_kumar2025)


def run_kumar2025(args: argparse.Namespace) -> int:
    """Run the Kumar et al. (2025) import for parsed ``args``; return the exit code."""
    from empathy.cli.common import print_json
    from empathy.datasets.kumar2025 import import_kumar2025

    result = import_kumar2025(args.directory, runs=args.runs, include_seeker=args.with_seeker)
    try:
        paths = result.write(args.out)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, exc.filename or args.out) from None
    if args.json:
        print_json(result.report.to_dict())
    else:
        print(result.report.format())
        print()
        print(f"wrote {len(result.outputs)} outputs to {paths['outputs']}")
        print(f"wrote {len(result.ratings)} ratings to {paths['ratings']}")
        print(f"wrote the report to {paths['report']}")
    return 0
