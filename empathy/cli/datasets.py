"""The data set importers: ``empathy import NAME DIR --out OUT`` for every importer of
:data:`empathy.datasets.IMPORTERS`.

Writes outputs.csv, ratings.csv and import_report.json to OUT and prints the report of what was read, dropped
and merged; a bad input directory or file exits 2 with one line naming the file.
"""

from __future__ import annotations

import argparse

from empathy.cli.common import set_handler
from empathy.datasets import IMPORTERS, get_importer


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``import`` sub-command (with the data set as its own sub-choice, one per importer)."""
    parser = commands.add_parser(
        "import", help="import a published multi-annotator data set into outputs.csv + ratings.csv",
        description="Import a published data set into the empathy data model (outputs.csv, ratings.csv and "
                    "import_report.json in --out); the report of what was read, dropped and merged is printed.")
    datasets = parser.add_subparsers(dest="dataset", metavar="DATASET", parser_class=type(parser))
    datasets.required = True
    for importer in IMPORTERS.values():
        command = datasets.add_parser(
            importer.name, help=importer.summary,
            description=f"Import shared/datasets/{importer.folder}" + (f" (see {importer.doc})." if importer.doc
                                                                          else "."))
        command.add_argument("directory", metavar="DIR", help="the data set folder")
        command.add_argument("--out", required=True, metavar="OUT", help="output folder (created if needed)")
        for option in importer.options:
            if option.switch:
                command.add_argument(option.flag, dest=option.parameter, action="store_true", help=option.help)
            else:
                command.add_argument(option.flag, dest=option.parameter, choices=option.choices or None,
                                     default=option.default, help=option.help)
        command.add_argument("--json", action="store_true", help="print the report as JSON instead of text")
        set_handler(command, run_import)


def run_import(args: argparse.Namespace) -> int:
    """Run the import ``args.dataset`` for parsed ``args``; return the exit code."""
    from empathy.cli.common import print_json

    importer = get_importer(args.dataset)
    result = importer(args.directory, **{o.parameter: getattr(args, o.parameter) for o in importer.options})
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
