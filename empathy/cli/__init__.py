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

from collections.abc import Sequence

from empathy import __version__
from empathy.cli import agreement, audit, datasets, distancing, fragility, judges, metrics, slices, stability, store
from empathy.cli.common import Parser

#: The command groups in the order ``--help`` lists them.
COMMAND_GROUPS = (metrics, agreement, distancing, judges, datasets, stability, slices, fragility, store, audit)


def build_parser() -> Parser:
    """The ``empathy`` argument parser with every sub-command."""
    parser = Parser(prog="empathy", description="Measure empathic failure in LLM outputs (SA, EGM, CA, LD).")
    parser.add_argument("--version", action="version", version=f"empathy {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for group in COMMAND_GROUPS:
        group.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (0 ok, 1 service refused, 2 bad input; see common)."""
    args = build_parser().parse_args(argv)
    return int(args.handler(args))


__all__ = ["build_parser", "main"]
