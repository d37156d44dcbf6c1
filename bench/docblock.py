"""Shared command line of the scripts that generate a Markdown block of docs/ from the data.

Each script builds its block from a data set folder and either prints it or replaces the block between its
BEGIN/END markers in a Markdown file (appending it when the file has none), so the docs can be regenerated
and a test can check they match the code.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path

from empathy.paths import shared_dataset


def replace_block(path: Path, block: str, begin: str, end: str) -> None:
    """Put ``block`` between ``begin`` and ``end`` in ``path``, replacing what was there or appending."""
    text = path.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
    replacement = f"{begin}\n{block}\n{end}"
    if pattern.search(text):
        text = pattern.sub(lambda _: replacement, text)
    else:
        text = text.rstrip("\n") + "\n\n" + replacement + "\n"
    path.write_text(text, encoding="utf-8")


def main(description: str, build_block: Callable[[Path], str], begin: str, end: str,
         argv: list[str] | None = None) -> int:
    """Print the block for the Kumar et al. data set, or write it into a Markdown file with ``--write``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("directory", nargs="?", help="the data set folder (default: the shared copy)")
    parser.add_argument("--write", metavar="MARKDOWN", help="replace (or append) the generated block in this file")
    args = parser.parse_args(argv)
    directory = Path(args.directory) if args.directory else shared_dataset("kumar2025-empathic-communication")
    if directory is None:
        print("kumar2025 data set not found; pass its folder", file=sys.stderr)
        return 2
    block = build_block(directory)
    if not args.write:
        print(block)
        return 0
    replace_block(Path(args.write), block, begin, end)
    print(f"updated {args.write}")
    return 0
