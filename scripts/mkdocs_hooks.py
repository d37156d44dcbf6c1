"""MkDocs hooks of the documentation site (``mkdocs.yml``): generated pages, never a hand-written copy.

A page holding the marker ``<!-- generated: cli-reference -->`` gets the command-line reference in its place, made
from the argparse parsers (:func:`empathy.cli.reference.cli_markdown`). The docstrings are written for Sphinx-style
readers (``:func:`name```); in the rendered API pages the role prefix is dropped, leaving the name as code.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

CLI_MARKER = "<!-- generated: cli-reference -->"
ROOT = Path(__file__).resolve().parent.parent
#: A Sphinx cross-reference role as rendered from a docstring: ``:func:<code>~a.b</code>``.
SPHINX_ROLE = re.compile(r":(?:py:)?(?:attr|class|data|exc|func|meth|mod|obj|const):(<code>)~?")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Replace the CLI marker with the reference generated from the parsers."""
    if CLI_MARKER not in markdown:
        return markdown
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))  # the checkout's package, the one the site documents
    from empathy.cli import build_parser
    from empathy.cli.reference import cli_markdown

    return markdown.replace(CLI_MARKER, cli_markdown(build_parser()))


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    """Drop the Sphinx role prefixes the docstrings' cross-references carry (the name stays, as code)."""
    return SPHINX_ROLE.sub(r"\1", html)
