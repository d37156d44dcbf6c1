"""What every tool importer shares: the mapping of a flattened log onto the data model, validation and writing.

An importer (:mod:`empathy.importers.inspect_logs`, :mod:`~empathy.importers.lm_eval`, :mod:`~empathy.importers.hf`)
reads its tool's files into a *source table*: one row per output, under the tool's own field names (``input``,
``target``, ``output``, ...), with the tool's scores as wide rating columns ``<rater>:<dimension>``. Then
:func:`finish` maps it onto the outputs table with the importer's default :class:`~empathy.importers.mapping.ColumnMap`
overridden by the user's ``--columns`` (:meth:`ColumnMap.over`), runs the same validators as every file
(:func:`empathy.io.validate_outputs`, :func:`empathy.io.validate_ratings`, :func:`empathy.io.build_dataset`), and
signs each imported rating with the tool, its version, the file and the mapping, so that every results table
computed on the import names where its labels came from.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from empathy.importers.mapping import ColumnMap
from empathy.io import DataError, build_dataset, validate_outputs, validate_ratings, write_people_csv, write_ratings

#: Where an imported output row came from (a metadata column of the outputs table).
SOURCE_COLUMN = "import_source"


@dataclass
class ToolImport:
    """Validated outputs and ratings of an import, with what was read, changed and dropped.

    Attributes
    ----------
    tool, version
        The tool whose files were read (``inspect-ai``, ``lm-eval``, ``hf-datasets``) and the version that
        wrote them (or that read them, when the files do not say).
    sources
        The files read.
    columns
        The mapping applied (the importer's defaults with the user's ``--columns`` over them).
    outputs, ratings
        Exactly what :func:`empathy.io.load_dataset` accepts (the tables :meth:`write` writes).
    notes
        One line per thing counted, changed or dropped, with the reason (printed by :meth:`format`).
    """

    tool: str
    version: str
    sources: list[str]
    columns: ColumnMap
    outputs: pd.DataFrame
    ratings: pd.DataFrame
    notes: list[str] = field(default_factory=list)

    def signature(self) -> str:
        """The import's signature, stored with each imported rating: ``<tool>-<version>;columns=...``."""
        return rating_signature(self.tool, self.version, self.columns)

    def to_dict(self) -> dict[str, object]:
        """A JSON-serialisable account of the import."""
        return {
            "tool": self.tool, "version": self.version, "sources": self.sources,
            "columns": self.columns.as_dict(), "signature": self.signature(),
            "outputs": len(self.outputs), "ratings": len(self.ratings),
            "models": sorted(self.outputs["model"].unique()),
            "tasks": sorted(t for t in self.outputs["task"].unique() if t),
            "raters": sorted(self.ratings["rater"].unique()) if len(self.ratings) else [],
            "dimensions": sorted(self.ratings["dimension"].unique()) if len(self.ratings) else [],
            "notes": self.notes,
        }

    def format(self) -> str:
        """The account as plain text for a terminal."""
        info = self.to_dict()
        lines = [f"{self.tool} {self.version} import of {len(self.sources)} file(s)"]
        lines += [f"  {source}" for source in self.sources]
        lines.append("columns: " + ", ".join(f"{s} -> {t}" for s, t in self.columns.pairs))
        lines.append(f"{info['outputs']} outputs of {len(info['models'])} model(s): " + ", ".join(info["models"]))
        if info["tasks"]:
            lines.append("tasks: " + ", ".join(info["tasks"]))
        lines.append(f"{info['ratings']} ratings" + (f" by {', '.join(info['raters'])} on "
                                                     f"{', '.join(info['dimensions'])}" if info["ratings"] else ""))
        lines += [f"note: {note}" for note in self.notes]
        return "\n".join(lines)

    def write(self, out_dir: str | Path) -> dict[str, Path]:
        """Write ``outputs.csv``, ``ratings.csv`` (spreadsheet-safe, read back exactly by
        :func:`empathy.io.read_table`) and ``import_report.json`` into ``out_dir``."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = {"outputs": out / "outputs.csv", "ratings": out / "ratings.csv", "report": out / "import_report.json"}
        write_people_csv(self.outputs, paths["outputs"])
        write_ratings(self.ratings, paths["ratings"])
        paths["report"].write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")
        return paths


def rating_signature(tool: str, version: str, columns: ColumnMap) -> str:
    """``<tool>-<version>;columns=<mapping>``: what an imported rating's ``signature`` cell says."""
    return f"{tool}-{version};columns={columns.signature_value()}"


def effective_columns(table: pd.DataFrame, defaults: ColumnMap, user: ColumnMap | None) -> ColumnMap:
    """The user's mapping over the importer's defaults, less the defaults whose source the table lacks (a log
    without tasks has no ``task`` to map)."""
    present = set(table.columns)
    usable = ColumnMap(tuple((s, t) for s, t in defaults.pairs if s in present))
    return (user or ColumnMap()).over(usable)


def finish(table: pd.DataFrame, *, label: str, tool: str, version: str, sources: list[str],
           defaults: ColumnMap, user: ColumnMap | None = None, notes: list[str] | None = None,
           rater_kinds: dict[str, str] | None = None) -> ToolImport:
    """Map ``table`` onto the data model, validate it and sign its ratings (see the module docstring).

    Parameters
    ----------
    table
        The source table: one row per output, the tool's field names, scores as ``<rater>:<dimension>`` columns.
    label
        How errors name the input (the file, or the files, read).
    defaults, user
        The importer's reading of its fields and the user's ``--columns`` over it.
    rater_kinds
        The ``rater_kind`` of each rater (default: empty, unknown).

    Raises
    ------
    DataError
        A mapping that does not fit the table, or a row the validators refuse, naming ``label`` and the column.
    """
    columns = effective_columns(table, defaults, user)
    columns.check(table.columns, label)  # the user's own mapping errors first: they name what to change
    missing = [t for t in ("item_id", "model", "reference", "generation") if columns.source_of(t) is None
               and t not in table.columns]
    if missing:
        raise DataError(label, f"nothing is read as {', '.join(repr(m) for m in missing)}: map a field onto it "
                        f"(--columns FIELD={missing[0]}); fields: {', '.join(map(str, table.columns))}",
                        column=missing[0])
    frame = columns.apply(table, name=label) if columns else table
    frame.attrs.update({"source": label, "suffix": ".jsonl"})
    outputs, wide = validate_outputs(frame, name=label)
    signature = rating_signature(tool, version, columns)
    ratings = wide.copy()
    if len(ratings):
        ratings["signature"] = signature
        kinds = rater_kinds or {}
        ratings["rater_kind"] = ratings["rater"].map(lambda r: kinds.get(r, ""))
    ratings = validate_ratings(ratings, name=label)
    dataset = build_dataset(outputs, ratings, sources=sources)
    return ToolImport(tool=tool, version=version, sources=sources, columns=columns, outputs=dataset.outputs,
                      ratings=dataset.ratings, notes=list(notes or []))


def missing_package(package: str, purpose: str) -> DataError:
    """The one-line error when an optional reader is not installed (exit 2, no traceback)."""
    return DataError(package, f"{purpose} needs the Python package '{package}': pip install {package}")


def require(module: str, package: str, purpose: str) -> Callable[[], object]:
    """A loader of optional ``module`` that raises :func:`missing_package` when it is absent."""
    def load() -> object:
        import importlib

        try:
            return importlib.import_module(module)
        except ImportError:
            raise missing_package(package, purpose) from None
    return load


def text_of(value: object) -> str:
    """A cell as text: ``None`` as empty, a list of strings one per line, anything else ``str``."""
    if value is None:
        return ""
    if isinstance(value, list | tuple):
        return "\n".join(text_of(v) for v in value)
    return str(value)


__all__ = ["SOURCE_COLUMN", "ToolImport", "effective_columns", "finish", "missing_package", "rating_signature",
           "require", "text_of"]
