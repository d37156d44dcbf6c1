"""Command line: ``python -m empathy COMMAND ...`` (also installed as ``empathy``).

One module per command group, each with ``register(subparsers)`` and handlers that raise on bad input:

* :mod:`empathy.cli.metrics`: ``metrics``;
* :mod:`empathy.cli.agreement`: ``agreement``, ``panels``;
* :mod:`empathy.cli.stability`: ``stability``;
* :mod:`empathy.cli.judges`: ``judge``, ``standard``;
* :mod:`empathy.cli.datasets`: ``import``;
* :mod:`empathy.cli.slices`: ``slices``, ``calibration`` (why judges and humans disagree);
* :mod:`empathy.cli.store`: ``store info``, ``store migrate`` (the override store, SQLite or PostgreSQL);
* :mod:`empathy.cli.audit`: ``audit draw``, ``list``, ``show``, ``estimate``, ``budget`` (a random audit of a judge);
* :mod:`empathy.cli.distancing`: ``distancing`` (also ``python -m empathy.distancing``);
* :mod:`empathy.cli.fragility`: ``fragility``;
* :mod:`empathy.cli.judge_report`: ``alt-test``, ``judge-report``, ``judge-check`` (may a judge replace the annotators);
* :mod:`empathy.cli.app`: ``app`` (start the Streamlit app, :mod:`empathy.launch`);
* :mod:`empathy.cli.common`: exit codes and the error-to-exit-code mapping, output formats (JSON exact; table and
  CSV for people, escaped), size parsing, loaders.

Contract (scripts depend on it; see the README):

* ``metrics OUTPUTS [--ratings FILE ...] --format json`` prints ``{"metrics": [...], "agreement": [...],
  "signature": "..."}``.
* ``agreement RATINGS --format json`` prints a list with one object per (dimension, rater pair).
* Bad input exits with code 2 and one line on stderr naming the file, the row and the column.

Building the parser imports none of pandas, SciPy, spaCy or openai: each handler imports what it needs, so
``--help``, ``--version`` and usage errors answer at Python's start-up speed.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from types import ModuleType

from empathy import __version__
from empathy.cli.common import Parser

#: The command groups' modules in the order ``--help`` lists them.
GROUP_MODULES: tuple[str, ...] = tuple(f"empathy.cli.{name}" for name in (
    "metrics", "agreement", "distancing", "judges", "datasets", "stability", "slices", "fragility", "store", "audit",
    "judge_report", "app"))
#: Each command -> the module that registers it: a light name -> import table, so that a run imports the module of
#: its own command only (``tests/test_cli.py`` keeps it equal to what the modules register).
COMMAND_MODULES: dict[str, str] = {
    "metrics": "empathy.cli.metrics", "agreement": "empathy.cli.agreement", "panels": "empathy.cli.agreement",
    "distancing": "empathy.cli.distancing", "judge": "empathy.cli.judges", "standard": "empathy.cli.judges",
    "import": "empathy.cli.datasets", "stability": "empathy.cli.stability", "slices": "empathy.cli.slices",
    "calibration": "empathy.cli.slices", "fragility": "empathy.cli.fragility", "store": "empathy.cli.store",
    "audit": "empathy.cli.audit", "alt-test": "empathy.cli.judge_report", "judge-report": "empathy.cli.judge_report",
    "judge-check": "empathy.cli.judge_report", "app": "empathy.cli.app",
}


def _group(module: str) -> ModuleType:
    return importlib.import_module(module)


def build_parser(command: str | None = None) -> Parser:
    """The ``empathy`` argument parser: with ``command`` (a name of :data:`COMMAND_MODULES`) only the module that
    registers it, otherwise every sub-command (``--help``, usage errors)."""
    parser = Parser(prog="empathy", description="Measure empathic failure in LLM outputs (SA, EGM, CA, LD).")
    parser.add_argument("--version", action="version", version=f"empathy {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    groups = (COMMAND_MODULES[command],) if command in COMMAND_MODULES else GROUP_MODULES
    for group in groups:
        _group(group).register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (0 ok, 1 service refused, 2 bad input; see common)."""
    import sys

    from empathy.blas import one_blas_thread_from_start

    arguments = list(sys.argv[1:] if argv is None else argv)
    command = next((a for a in arguments if not a.startswith("-")), None)
    args = build_parser(command).parse_args(arguments)
    # a command's products are small blocks (empathy.blas): BLAS threads started at NumPy's import only spin
    with one_blas_thread_from_start():
        return int(args.handler(args))


__all__ = ["COMMAND_MODULES", "GROUP_MODULES", "build_parser", "main"]
