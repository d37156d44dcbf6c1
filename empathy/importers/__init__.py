"""Importers of the outputs that evaluation tools write, and the column mapping every table can be read through.

* :mod:`empathy.importers.mapping`: :class:`~empathy.importers.mapping.ColumnMap`, ``--columns SOURCE=TARGET``;
* :mod:`empathy.importers.inspect_logs`: Inspect AI ``.eval`` / ``.json`` logs;
* :mod:`empathy.importers.lm_eval`: lm-evaluation-harness ``--log_samples`` files;
* :mod:`empathy.importers.hf`: Hugging Face ``datasets`` (saved with ``save_to_disk``, or its Parquet/JSON files);
* :mod:`empathy.importers.hf_export`: the relabeled set as a Hugging Face dataset with a dataset card.

Each importer returns an :class:`empathy.importers.common.ToolImport`, validated as any outputs file is. The
registry :data:`TOOL_IMPORTERS` is what ``empathy import NAME`` and the Data page offer; importing this package is
cheap (no pandas, no tool package): an importer's module loads when it runs.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ToolImporter:
    """One tool importer as the CLI and the app see it.

    ``run`` is ``"module:function"`` taking the paths and ``columns=`` (plus the keywords of ``options``, each
    ``(flag, keyword, help)``); ``package`` is the optional package it reads through (``""``: none).
    """

    name: str
    label: str
    run: str
    summary: str
    inputs: str
    package: str = ""
    options: tuple[tuple[str, str, str], ...] = ()


TOOL_IMPORTERS: dict[str, ToolImporter] = {
    "inspect": ToolImporter(
        name="inspect", label="Inspect AI logs (.eval, .json)", run="empathy.importers.inspect_logs:import_inspect",
        summary="Inspect AI evaluation logs (.eval/.json): samples as outputs, scores as ratings",
        inputs="Inspect log files (.eval, .json) or folders of them", package="inspect-ai"),
    "lm-eval": ToolImporter(
        name="lm-eval", label="lm-evaluation-harness samples (--log_samples)",
        run="empathy.importers.lm_eval:import_lm_eval",
        summary="lm-evaluation-harness --log_samples output: samples as outputs, per-sample metrics as ratings",
        inputs="samples_<task>_<time>.jsonl files or the --output_path folder",
        options=(("--model", "model", "the model's name (default: model_name of the results file beside the "
                  "samples, else the samples' folder name)"),
                 ("--filter", "filter", "the filter whose answers to read, when a task logged several"))),
    "hf": ToolImporter(
        name="hf", label="Hugging Face dataset (save_to_disk folder, Parquet, JSON)",
        run="empathy.importers.hf:import_hf",
        summary="a Hugging Face dataset (a save_to_disk folder, or its Parquet / JSON Lines files)",
        inputs="a save_to_disk folder, or .parquet / .json / .jsonl files", package="datasets",
        options=(("--split", "split", "the split of a saved DatasetDict (default: the only one)"),
                 ("--model", "model", "the model's name when the dataset has no model column"))),
}


def run_tool_import(name: str, paths: list[str], **keywords: object) -> object:
    """Run the importer ``name`` on ``paths`` (an :class:`empathy.importers.common.ToolImport`)."""
    import importlib

    importer = TOOL_IMPORTERS[name]
    module, _, function = importer.run.partition(":")
    return getattr(importlib.import_module(module), function)(paths, **keywords)


__all__ = ["TOOL_IMPORTERS", "ToolImporter", "run_tool_import"]
