"""The data set importers: ``empathy import NAME DIR --out OUT`` for every importer of
:data:`empathy.datasets.IMPORTERS`.

Writes outputs.csv, ratings.csv and import_report.json to OUT and prints the report of what was read, dropped
and merged; a bad input directory or file exits 2 with one line naming the file.
"""

from __future__ import annotations

import argparse

from empathy.cli.common import add_columns_option, set_handler
from empathy.datasets import IMPORTERS, get_importer
from empathy.importers import TOOL_IMPORTERS


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``import`` sub-command (with the data set as its own sub-choice, one per importer)."""
    parser = commands.add_parser(
        "import", help="import a published data set, or an evaluation tool's outputs (Inspect, lm-eval, HF datasets), "
        "into outputs.csv + ratings.csv",
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
    register_tools(datasets)  # the importers of what evaluation tools write (Inspect, lm-eval, HF datasets)


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


def register_tools(datasets: argparse._SubParsersAction) -> None:
    """Add one sub-command of ``import`` per tool importer."""
    for importer in TOOL_IMPORTERS.values():
        command = datasets.add_parser(importer.name, help=importer.summary,
                                      description=f"Import {importer.label} into the empathy data model "
                                      "(outputs.csv, ratings.csv and import_report.json in --out); see "
                                      "docs/importers.md.")
        command.add_argument("paths", nargs="+", metavar="PATH", help=importer.inputs)
        command.add_argument("--out", required=True, metavar="OUT", help="output folder (created if needed)")
        add_columns_option(command)
        for flag, keyword, text in importer.options:
            command.add_argument(flag, dest=keyword, default=None, help=text)
        command.add_argument("--json", action="store_true", help="print the report as JSON instead of text")
        command.set_defaults(tool_importer=importer.name)
        set_handler(command, run_tool_import)


def run_tool_import(args: argparse.Namespace) -> int:
    """Handler of ``import inspect|lm-eval|hf``."""
    from empathy.cli.common import print_json
    from empathy.importers import run_tool_import as run
    from empathy.importers.mapping import ColumnMap

    importer = TOOL_IMPORTERS[args.tool_importer]
    keywords = {keyword: getattr(args, keyword) for _, keyword, _ in importer.options}
    result = run(importer.name, args.paths, columns=ColumnMap.parse(args.columns), **keywords)
    paths = result.write(args.out)  # type: ignore[attr-defined]
    if args.json:
        print_json(result.to_dict())  # type: ignore[attr-defined]
    else:
        print(result.format())  # type: ignore[attr-defined]
        print(f"wrote {len(result.outputs)} outputs to {paths['outputs']}")  # type: ignore[attr-defined]
        print(f"wrote {len(result.ratings)} ratings to {paths['ratings']}")  # type: ignore[attr-defined]
        print(f"wrote the report to {paths['report']}")
    return 0
