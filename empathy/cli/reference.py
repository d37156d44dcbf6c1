"""The command-line reference as Markdown, generated from the argparse parsers (the docs site's CLI page).

Every command and sub-command is one section holding its ``--help`` text, so the reference is the parser itself:
an option added to a command shows up in the docs with nothing written by hand (``scripts/mkdocs_hooks.py``).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from contextlib import contextmanager

#: Width of the help text in the reference: a terminal's, which fits the page's code column (argparse wraps at the
#: width of the terminal that builds the site otherwise).
HELP_WIDTH = 80


@contextmanager
def _help_width(columns: int) -> Iterator[None]:
    # argparse's formatter reads COLUMNS when a help text is formatted: fix it so the page does not depend on the
    # terminal that built it
    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(columns + 2)
    try:
        yield
    finally:
        if before is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = before


def subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    """The sub-commands a parser registers, as ``(name, parser)`` in the order ``--help`` lists them."""
    found: list[tuple[str, argparse.ArgumentParser]] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            seen: set[int] = set()
            for name, child in action.choices.items():
                if id(child) not in seen:  # an alias names the same parser twice
                    seen.add(id(child))
                    found.append((name, child))
    return found


def _sections(parser: argparse.ArgumentParser, path: str, level: int) -> Iterator[str]:
    yield f"{'#' * level} `{path}`\n"
    yield f"```text\n{parser.format_help().rstrip()}\n```\n"
    for name, child in subcommands(parser):
        yield from _sections(child, f"{path} {name}", min(level + 1, 6))


def cli_markdown(parser: argparse.ArgumentParser, *, level: int = 2, width: int = HELP_WIDTH) -> str:
    """Markdown of ``parser`` and every sub-command under it: a heading per command and its ``--help`` text.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The top-level parser (``empathy.cli.build_parser()``).
    level : int
        The heading level of the top-level command; sub-commands go one level down each.
    width : int
        The width the help texts are wrapped at.

    Returns
    -------
    str
        The reference, headings in the order ``--help`` lists the commands.
    """
    with _help_width(width):
        return "\n".join(_sections(parser, parser.prog, level))
