"""Import lm-evaluation-harness ``--log_samples`` output as outputs and ratings.

``lm_eval --model M --tasks T --output_path OUT --log_samples`` writes, per model, a folder holding
``results_<time>.json`` (the run's configuration: ``model_name``, ``lm_eval_version``, ...) and one
``samples_<task>_<time>.jsonl`` per task, a line per document: ``doc_id``, ``doc`` (the data set row),
``target``, ``arguments`` (the prompt), ``resps`` and ``filtered_resps`` (the model's answers, before and after
the task's filter), ``filter``, ``metrics`` (the names of its per-sample metrics) and each metric's value. This
module reads those files as written by lm-eval 0.4 (no lm-eval import is needed to read them).

One outputs row per (task, document), read through these default fields (each re-mappable with ``--columns``):

=============  ======================================================================  ===============
field          what it holds                                                           default target
=============  ======================================================================  ===============
``id``         ``<task>:<doc_id>`` (so several tasks of one model never collide)       ``item_id``
``model``      ``--model``, else ``model_name`` of the results file, else the folder   ``model``
``task``       the task, from the file name ``samples_<task>_<time>.jsonl``            ``task``
``target``     the document's target (a list: one per line)                            ``reference``
``output``     the filtered response (``filtered_resps[0]``)                           ``generation``
``prompt``     the prompt the model was given (``arguments``)                          (metadata)
``doc.<key>``  each scalar field of the document                                       (metadata)
=============  ======================================================================  ===============

Each per-sample metric becomes a rating of rater ``lm-eval`` on dimension ``<metric>`` (a boolean as 1 / 0, as
lm-eval's mean takes it; a value that is not a number, like the (reference, prediction) pair a corpus metric
logs, is a missing rating, counted in the notes). A task whose answers are not generated text (a loglikelihood
task logs log-probabilities) is an error naming the file, line and field, as is a file logged under several
filters (choose one with ``--filter``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path

import pandas as pd

from empathy.importers.common import SOURCE_COLUMN, ToolImport, finish, text_of
from empathy.importers.mapping import ColumnMap
from empathy.io import DataError, iter_jsonl

TOOL = "lm-eval"
RATER = "lm-eval"
DEFAULT_COLUMNS = ColumnMap((("id", "item_id"), ("model", "model"), ("task", "task"), ("target", "reference"),
                             ("output", "generation")))
_SAMPLES = re.compile(r"^samples_(?P<task>.+)_(?P<time>\d{4}-\d{2}-\d{2}T[\d.\-]+)\.jsonl$")


def samples_files(paths: Iterable[str | Path]) -> list[Path]:
    """The samples files of ``paths``: each a ``samples_*.jsonl`` file, or a folder searched (with its
    sub-folders, one per model) for them. :class:`DataError` for anything else."""
    found: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            files = sorted(p for p in path.rglob("samples_*.jsonl") if p.is_file())
            if not files:
                raise DataError(str(path), "no lm-eval samples file (samples_<task>_<time>.jsonl) in this folder; "
                                "run lm_eval with --log_samples")
            found += files
        elif not path.is_file():
            raise DataError(str(path), "file not found")
        elif path.suffix.lower() != ".jsonl":
            raise DataError(str(path), "not an lm-eval samples file: expected samples_<task>_<time>.jsonl")
        else:
            found.append(path)
    if not found:
        raise DataError("<lm-eval samples>", "no samples file given")
    return found


def task_of(path: Path) -> tuple[str, str]:
    """``(task, time)`` from a samples file's name; :class:`DataError` for another name."""
    match = _SAMPLES.match(path.name)
    if match is None:
        raise DataError(str(path), "not an lm-eval samples file name (expected samples_<task>_<time>.jsonl)")
    return match.group("task"), match.group("time")


def run_info(path: Path, time: str) -> dict[str, object]:
    """The results file written with the samples (``results_<time>.json`` beside them), or ``{}`` when absent."""
    results = path.with_name(f"results_{time}.json")
    if not results.is_file():
        return {}
    try:
        info = json.loads(results.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(str(results), f"unreadable lm-eval results file ({' '.join(str(exc).split())})") from None
    return info if isinstance(info, dict) else {}


def prompt_of(arguments: object) -> str:
    """The prompt of a sample's ``arguments`` (lm-eval 0.4's ``{"gen_args_0": {"arg_0": ...}}`` or the older
    ``[[prompt, {...}]]``)."""
    if isinstance(arguments, dict):
        first = next(iter(arguments.values()), {})
        return text_of(first.get("arg_0", "")) if isinstance(first, dict) else ""
    if isinstance(arguments, list) and arguments:
        first = arguments[0]
        return text_of(first[0] if isinstance(first, list) and first else first)
    return ""


def metric_value(value: object) -> object:
    """A per-sample metric as a rating cell: numbers (and their exact texts) as they are, a boolean as 1 / 0,
    anything else ``None`` (missing)."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float | str):
        return value
    return None


def _file_rows(path: Path, model: str | None, wanted_filter: str | None, notes: list[str]
               ) -> tuple[list[dict], list[int], str]:
    """The source-table rows of one samples file, their line numbers and the lm-eval version that wrote it."""
    task, time = task_of(path)
    info = run_info(path, time)
    name = model or str(info.get("model_name") or "") or path.parent.name
    version = str(info.get("lm_eval_version") or "unknown")
    records = list(iter_jsonl(path, str(path)))
    if not records:
        raise DataError(str(path), "no sample in the file")
    filters = list(dict.fromkeys(str(r.get("filter", "none")) for _, r in records))
    if wanted_filter is None and len(filters) > 1:
        raise DataError(str(path), f"samples logged under {len(filters)} filters ({', '.join(filters)}): choose "
                        "one with --filter", column="filter")
    rows: list[dict] = []
    lines: list[int] = []
    not_numbers = 0
    for line, record in records:
        if wanted_filter is not None and str(record.get("filter", "none")) != wanted_filter:
            continue
        for field in ("doc_id", "filtered_resps"):
            if field not in record:
                raise DataError(str(path), f"no {field!r}: not an lm-eval samples line", row=line, column=field)
        answers = record["filtered_resps"]
        answer = answers[0] if isinstance(answers, list) and answers else answers
        if not isinstance(answer, str):
            raise DataError(str(path), "the answer is not generated text (a loglikelihood or multiple-choice task "
                            "logs log-probabilities): only generate_until tasks have outputs to measure",
                            row=line, column="filtered_resps")
        row: dict[str, object] = {
            "id": f"{task}:{record['doc_id']}", "model": name, "task": task, "target": text_of(record.get("target")),
            "output": answer, "prompt": prompt_of(record.get("arguments")), "doc_id": str(record["doc_id"]),
            "filter": str(record.get("filter", "none")), SOURCE_COLUMN: f"{TOOL}:{path.name}",
        }
        doc = record.get("doc")
        for key, value in (doc.items() if isinstance(doc, dict) else ()):
            if isinstance(value, str | int | float) and not isinstance(value, bool):
                row[f"doc.{key}"] = value
        for metric in record.get("metrics") or ():
            value = metric_value(record.get(str(metric)))
            not_numbers += value is None
            row[f"{RATER}:{metric}"] = value
        rows.append(row)
        lines.append(line)
    if not rows:
        raise DataError(str(path), f"no sample under filter {wanted_filter!r} (filters: {', '.join(filters)})",
                        column="filter")
    if not_numbers:
        notes.append(f"{path.name}: {not_numbers} metric value(s) are not numbers (a corpus metric's pair): "
                     "kept as missing ratings")
    notes.append(f"{path.name}: task {task!r}, model {name!r}, {len(rows)} samples (filter {rows[0]['filter']!r})")
    return rows, lines, version


def import_lm_eval(paths: Iterable[str | Path] | str | Path, *, model: str | None = None,
                   filter: str | None = None, columns: ColumnMap | None = None,
                   progress: Callable[[int], None] | None = None) -> ToolImport:
    """Import lm-eval ``--log_samples`` files (or the ``--output_path`` folder) as outputs and ratings.

    Parameters
    ----------
    paths
        ``samples_<task>_<time>.jsonl`` files, or folders searched for them.
    model
        The model's name for every file (default: each file's results ``model_name``).
    filter
        The filter whose answers to read, when a task logged several.
    columns
        The user's mapping over :data:`DEFAULT_COLUMNS`.
    progress
        Called with ``1`` after each file.

    Raises
    ------
    DataError
        A file that is not a samples file, a line without ``doc_id`` or with a non-text answer, several filters
        without ``filter``, or a table the validators refuse; the line names the file, line and field.
    """
    files = samples_files([paths] if isinstance(paths, str | Path) else paths)
    rows: list[dict] = []
    lines: list[int] = []
    notes: list[str] = []
    versions: set[str] = set()
    for path in files:
        file_rows, file_lines, version = _file_rows(path, model, filter, notes)
        rows += file_rows
        lines += file_lines
        versions.add(version)
        if progress is not None:
            progress(1)
    table = pd.DataFrame(rows)
    ratings = [c for c in table.columns if c.startswith(f"{RATER}:")]
    table = table[[c for c in table.columns if c not in ratings] + ratings]
    if len(files) == 1:
        table.attrs["lines"] = lines  # errors then name the file's own line
    label = str(files[0]) if len(files) == 1 else f"{files[0]} (+{len(files) - 1} files)"
    return finish(table, label=label, tool=TOOL, version="+".join(sorted(versions)), sources=[str(p) for p in files],
                  defaults=DEFAULT_COLUMNS, user=columns, notes=notes)


__all__ = ["DEFAULT_COLUMNS", "RATER", "import_lm_eval", "metric_value", "prompt_of", "samples_files", "task_of"]
