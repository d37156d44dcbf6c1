"""Build step of the package (the metadata is in ``pyproject.toml``): a wheel carries the app's frame and pages.

``streamlit run app.py`` runs the checkout's ``app.py`` and ``app_pages/`` (where the tests and every page's path
name them); a wheel copies them, the app's Streamlit settings and the demo ``data/`` into ``empathy_app/bundle/``,
the folder ``empathy app`` runs from an installed package (:data:`empathy.paths.PROJECT_ROOT`). The sdist carries
the same files (``MANIFEST.in``), so a wheel built from it is the same.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
#: What the bundle holds, relative to the repository root (a folder: its files, recursively).
BUNDLED = ("app.py", "app_pages", "data", ".streamlit/config.toml")


def bundle_files(root: Path = ROOT) -> list[Path]:
    """Every file the bundle copies, relative to ``root`` (caches and hidden files aside, the settings file apart)."""
    files: list[Path] = []
    for name in BUNDLED:
        path = root / name
        if path.is_file():
            files.append(Path(name))
        elif path.is_dir():
            files += sorted(p.relative_to(root) for p in path.rglob("*") if p.is_file()
                            and "__pycache__" not in p.parts and not p.name.startswith("."))
    return files


class BuildWithBundle(build_py):
    """``build_py`` that also copies :data:`BUNDLED` into ``empathy_app/bundle/`` of the build."""

    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "empathy_app" / "bundle"
        files = bundle_files()
        if not any(f.name == "app.py" for f in files):
            raise SystemExit("setup.py: app.py is missing: build from a checkout or from the sdist")
        for relative in files:
            destination = target / relative
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / relative, destination)


setup(cmdclass={"build_py": BuildWithBundle})
