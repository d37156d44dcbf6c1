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


def test_every_file_the_app_reads_beside_its_modules_is_package_data():
    # a wheel carries a non-Python file only when [tool.setuptools.package-data] names it (a clean clone has no
    # egg-info to fall back on): the key queue's browser code and the page icon are read at run time
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    package = ROOT / "empathy_app"
    covered = {path for pattern in config["empathy_app"] for path in package.glob(pattern)}
    wanted = {path for path in (package / "static").rglob("*") if path.is_file()} | {package / "icon.png"}
    assert len(wanted) >= 5  # the queue's script, its stylesheet, two HTML roots, the icon
    assert sorted(map(str, wanted - covered)) == []
