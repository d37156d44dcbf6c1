"""The coverage table of docs/statistics.md: PPI++, human-only and bootstrap intervals at audit sizes 10-80.

Simulates every cell of :mod:`validation.small_audits` (fixed seeds; about 10 s on one core) and prints the
block, writes it between the markers of docs/statistics.md (``--write``), or checks that the document holds it
(``--check``: exit 1 when it differs). tests/test_coverage.py checks the document the same way.

    python scripts/coverage_table.py [--write | --check] [--doc docs/statistics.md]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script: the project's packages beside it
sys.path.insert(0, str(ROOT / "bench"))  # the shared docblock helper of the generated blocks

import docblock  # noqa: E402

from validation.small_audits import BEGIN, END, block  # noqa: E402

DOC = ROOT / "docs" / "statistics.md"


def documented(path: Path) -> str | None:
    """The block between the markers of ``path`` (``None`` when it has none)."""
    found = re.search(re.escape(BEGIN) + r"\n(.*?)\n" + re.escape(END), path.read_text(encoding="utf-8"), re.S)
    return found.group(1) if found else None


def main(argv: list[str] | None = None) -> int:
    """Print, write or check the coverage block."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="replace the block in the document")
    mode.add_argument("--check", action="store_true", help="exit 1 when the document's block differs")
    parser.add_argument("--doc", type=Path, default=DOC, help="the Markdown file (default: docs/statistics.md)")
    args = parser.parse_args(argv)
    text = block()
    if args.write:
        docblock.replace_block(args.doc, text, BEGIN, END)
        print(f"updated {args.doc}")
        return 0
    if args.check:
        if documented(args.doc) != text:
            print(f"{args.doc}: the coverage table differs from the simulation; run scripts/coverage_table.py "
                  "--write", file=sys.stderr)
            return 1
        return 0
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
