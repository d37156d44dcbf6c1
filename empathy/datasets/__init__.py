"""Importers that turn published multi-annotator data sets into the empathy data model (:mod:`empathy.io`).

:data:`IMPORTERS` is the registry the command line (``empathy import NAME``) and the app's Data page both read:
one :class:`Importer` per data set (its name, label, folder under ``shared/datasets``, run function, options
and what the Data page says of it). Every run function returns an :class:`empathy.datasets.report.ImportResult`
whose ``report`` (:class:`empathy.datasets.report.ImportReport`) accounts for every row read, dropped or merged.

Importing this package is cheap (no pandas): the importers' modules load when one runs, so that building the
CLI's parser stays light. A new importer is a module with its run function plus one entry here.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from empathy.datasets.report import ImportResult


@dataclass(frozen=True)
class ImporterOption:
    """One option of an importer: a CLI flag passed to the run function as keyword ``parameter``.

    ``switch``: a flag without value (``store_true``); else a value among ``choices`` with ``default``.
    The app runs every importer with the defaults.
    """

    flag: str
    parameter: str
    help: str
    choices: tuple[str, ...] = ()
    default: object = None
    switch: bool = False


@dataclass(frozen=True)
class Importer:
    """A data set importer as the CLI and the app see it.

    Attributes
    ----------
    name
        The CLI sub-command (``empathy import NAME``), the app's source kind and the data set's name in the
        override store.
    label
        How the Data page offers it; ``title`` names the loaded data set (sidebar, Data page).
    folder
        The data set's folder under ``shared/datasets`` (:func:`empathy.paths.shared_dataset`).
    run
        ``"module:function"``; the function takes the folder and the options' keywords and returns an
        :class:`~empathy.datasets.report.ImportResult`, raising :class:`empathy.io.DataError` for bad files.
    summary, description
        One line for ``--help``; a Markdown paragraph (no data in it) for the Data page.
    doc
        The document describing the data set and the import's choices.
    options
        Its CLI options (:class:`ImporterOption`).
    steps
        ``"module:function"`` giving how many steps the run reports to a ``progress`` keyword (the app's
        progress bar), or ``""`` when the run reports none.
    """

    name: str
    label: str
    title: str
    folder: str
    run: str
    summary: str
    description: str
    doc: str = ""
    options: tuple[ImporterOption, ...] = ()
    steps: str = ""

    @property
    def module(self) -> str:
        """The module holding the run function (named in the imported data set's sources)."""
        return self.run.partition(":")[0]

    @property
    def store_file(self) -> str:
        """The override store's file name when ``$EMPATHY_STORE`` is unset (the data folder is read-only
        third-party data, so the store goes to the user's cache folder)."""
        return f"overrides-{self.name}.sqlite"

    def directory(self) -> Path | None:
        """The data set's folder under ``shared/datasets``, or ``None`` when absent."""
        from empathy.paths import shared_dataset

        return shared_dataset(self.folder)

    def expected_location(self) -> str:
        """Where the folder would be found (for a note when it is absent)."""
        from empathy.paths import PROJECT_ROOT, shared_dir

        return str((shared_dir() or PROJECT_ROOT.parent / "shared") / "datasets" / self.folder)

    def progress_steps(self) -> int | None:
        """How many steps the run reports to its ``progress`` keyword, ``None`` when it reports none."""
        if not self.steps:
            return None
        module, _, function = self.steps.partition(":")
        return int(getattr(importlib.import_module(module), function)())

    def __call__(self, directory: str | Path, **options: Any) -> ImportResult:
        """Run the import of ``directory`` with ``options`` (defaults for those not given)."""
        module, _, function = self.run.partition(":")
        return getattr(importlib.import_module(module), function)(directory, **options)


#: Every importer, by name.
IMPORTERS: dict[str, Importer] = {
    "kumar2025": Importer(
        name="kumar2025",
        label="Kumar et al. 2025 (expert / crowd / LLM annotations)",
        title="Kumar et al. 2025",
        folder="kumar2025-empathic-communication",
        run="empathy.datasets.kumar2025:import_kumar2025",
        steps="empathy.datasets.kumar2025:import_steps",
        summary="Kumar et al. (2025): expert, crowd and LLM ratings of 200 support conversations",
        description="The expert, crowd and LLM annotations of Kumar et al. (2025): 200 conversations of four "
                    "corpora (the *models*), each rated on its corpus' own dimensions by `expert1..3`, `crowd`, "
                    "`gpt`, `claude` and `gemini`.",
        doc="docs/kumar2025.md",
        options=(
            ImporterOption("--runs", "runs", "repeated LLM runs of one conversation: keep their mean (default) "
                           "or the first run", choices=("mean", "first"), default="mean"),
            ImporterOption("--with-seeker", "include_seeker", "also import the Perceived Empathy seekers' own "
                           "ratings as rater 'seeker'", switch=True),
        ),
    ),
}


def get_importer(name: str) -> Importer:
    """The importer called ``name``; raises ``ValueError`` naming the known ones otherwise."""
    try:
        return IMPORTERS[name]
    except KeyError:
        raise ValueError(f"unknown importer {name!r}; known: {', '.join(sorted(IMPORTERS))}") from None


_LAZY = {"CORPORA": "empathy.datasets.kumar2025", "RATERS": "empathy.datasets.kumar2025",
         "import_kumar2025": "empathy.datasets.kumar2025", "ImportReport": "empathy.datasets.report",
         "ImportResult": "empathy.datasets.report"}


def __getattr__(name: str) -> Any:
    # The importers' modules need pandas: load them on first use, not when the registry is read.
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["CORPORA", "IMPORTERS", "RATERS", "ImportReport", "ImportResult", "Importer", "ImporterOption",
           "get_importer", "import_kumar2025"]
