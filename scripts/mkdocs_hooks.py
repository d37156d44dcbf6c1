"""MkDocs hooks of the documentation site (``mkdocs.yml``): generated pages, never a hand-written copy.

A page holding the marker ``<!-- generated: cli-reference -->`` gets the command-line reference in its place, made
from the argparse parsers (:func:`empathy.cli.reference.cli_markdown`).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

CLI_MARKER = "<!-- generated: cli-reference -->"
ROOT = Path(__file__).resolve().parent.parent


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Replace the CLI marker with the reference generated from the parsers."""
    if CLI_MARKER not in markdown:
        return markdown
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))  # the checkout's package, the one the site documents
    from empathy.cli import build_parser
    from empathy.cli.reference import cli_markdown

    return markdown.replace(CLI_MARKER, cli_markdown(build_parser()))
