"""Packaging: requirements.txt holds plain requirements (installable from any directory) equal to pyproject's."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")


def _requirements(path: Path) -> list[str]:
    return [line.split("#", 1)[0].strip() for line in path.read_text().splitlines()
            if line.split("#", 1)[0].strip()]


def test_requirements_are_plain_and_equal_to_the_package_dependencies():
    lines = _requirements(ROOT / "requirements.txt")
    # no editable or path line: pip reads those relative to the working directory, not to the file
    assert not [line for line in lines if line.startswith("-") or re.match(r"^[./~]", line)]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert sorted(lines) == sorted(project["dependencies"])
    names = {re.split(r"[<>=!~ ]", line, maxsplit=1)[0].lower() for line in lines}
    assert {"streamlit", "plotly"} <= names  # the package holds empathy_app, which imports them


def test_the_development_requirements_include_the_runtime_ones():
    assert "-r requirements.txt" in _requirements(ROOT / "requirements-dev.txt")
