"""Every audit digest the README and docs quote (``audit:<hex>``) is the one the ``audit draw`` command beside it
prints: the closest such command before the digest in the same file is run (without ``--store``) and its short
digest compared."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from empathy.cli import main

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
DIGEST = re.compile(r"audit:([0-9a-f]{12})\b")
# a command in a code block (continued with a backslash) or in inline code
COMMAND = re.compile(r"python -m empathy audit draw((?:[^\n`\\]|\\\n)+)")


def _quoted() -> list[tuple[str, int, str, str]]:
    """``(file, line, digest, command arguments)`` of every quoted digest."""
    found = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for match in DIGEST.finditer(text):
            before = list(COMMAND.finditer(text, 0, match.start()))
            line = text.count("\n", 0, match.start()) + 1
            assert before, f"{path.name}:{line}: audit:{match.group(1)} has no 'audit draw' command before it"
            arguments = before[-1].group(1).replace("\\\n", " ").split("#")[0]
            found.append((path.name, line, match.group(1), arguments))
    return found


QUOTED = _quoted()


def test_the_docs_quote_digests() -> None:
    assert len(QUOTED) >= 2  # statistics.md: the command-line example's and the worked example's


@pytest.mark.parametrize(("name", "line", "digest", "arguments"), QUOTED,
                         ids=[f"{q[0]}:{q[1]}" for q in QUOTED])
def test_each_quoted_digest_is_what_its_command_prints(name: str, line: int, digest: str, arguments: str,
                                                       capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(ROOT)  # the docs' paths are relative to the repository
    monkeypatch.setenv("EMPATHY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("EMPATHY_STORE", raising=False)
    argv = [a for a in shlex.split(arguments) if a != "--store"]  # print the design, store nothing
    assert "..." not in argv, f"{name}:{line}: the command is not complete"
    assert main(["audit", "draw", *argv, "--format", "json"]) == 0
    printed = json.loads(capsys.readouterr().out)["design"]["short_digest"]
    assert printed == digest, f"{name}:{line}: the command prints audit:{printed}, the doc says audit:{digest}"
