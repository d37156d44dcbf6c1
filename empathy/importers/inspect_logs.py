"""Import Inspect AI evaluation logs (``.eval`` or ``.json``) as outputs and ratings.

Each log is read with :func:`inspect_ai.log.read_eval_log` (the package ``inspect-ai``; without it, one line says
how to install it). One outputs row per sample and epoch, read through these default fields (each one can be
re-mapped with ``--columns FIELD=COLUMN``):

============  ==========================================================================================
field         what it holds                                  default target
============  ==========================================================================================
``id``        the sample's id (``<id>#<epoch>`` when the log   ``item_id``
              ran more than one epoch)
``model``     the log's model (``eval.model``)                 ``model``
``task``      the log's task name (``eval.task``)              ``task``
``target``    the sample's target (a list: one per line)       ``reference``
``output``    the model's completion (``output.completion``)   ``generation``
``input``     the sample's input: the text, or the user        (metadata; ``--columns input=reference`` for tasks
              messages' texts, one paragraph each              whose reference is the prompt, like counseling)
============  ==========================================================================================

Every score becomes a rating of rater ``<scorer>``: a dict value gives one rating per key (dimension = the key),
a scalar one rating on dimension ``<scorer>`` (``--columns match:match=match:ca`` reads it as ``ca``). Values go
through Inspect's own :func:`inspect_ai.scorer.value_to_float` (``C`` 1, ``I`` 0, ``P`` 0.5, ``N`` 0, yes/no,
true/false, numbers); any other value is a missing rating, counted in the notes. Samples that errored (no output)
are left out and counted; a log with no sample at all, or not an Inspect log, is an error naming the file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import pandas as pd

from empathy.importers.common import SOURCE_COLUMN, ToolImport, finish, require, text_of
from empathy.importers.mapping import ColumnMap
from empathy.io import DataError

TOOL = "inspect-ai"
#: Log file types Inspect writes.
LOG_SUFFIXES: tuple[str, ...] = (".eval", ".json")
#: The importer's reading of a log's fields (``--columns`` overrides it target by target).
DEFAULT_COLUMNS = ColumnMap((("id", "item_id"), ("model", "model"), ("task", "task"), ("target", "reference"),
                             ("output", "generation")))
_SCORE_WORDS = frozenset({"c", "i", "p", "n", "yes", "no", "true", "false"})

_inspect_log = require("inspect_ai.log", "inspect-ai", "reading Inspect logs")


def log_files(paths: Iterable[str | Path]) -> list[Path]:
    """The log files of ``paths``: each a log file, or a folder whose ``*.eval`` and ``*.json`` logs are taken in
    name order. Raises :class:`DataError` for a path that is neither, or a folder without logs."""
    found: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            logs = sorted(p for p in path.iterdir() if p.suffix.lower() in LOG_SUFFIXES and p.is_file()
                          and p.name != "logs.json")  # Inspect's folder index, not a log
            if not logs:
                raise DataError(str(path), "no Inspect log (*.eval, *.json) in this folder")
            found += logs
        elif not path.exists():
            raise DataError(str(path), "file not found")
        elif path.suffix.lower() not in LOG_SUFFIXES:
            raise DataError(str(path), f"not an Inspect log: expected .eval or .json, got '{path.suffix or '(none)'}'")
        else:
            found.append(path)
    if not found:
        raise DataError("<inspect logs>", "no log given")
    return found


def message_text(value: object) -> str:
    """A sample's input as text: a string as is, chat messages as their user turns' texts, one paragraph each."""
    if isinstance(value, str):
        return value
    parts = []
    for message in value or ():
        if getattr(message, "role", "user") == "user":
            parts.append(str(getattr(message, "text", "") or ""))
    return "\n\n".join(p for p in parts if p)


def score_value(value: object, to_float: Callable[[object], float]) -> float | None:
    """A scalar score as a number by Inspect's own conversion, or ``None`` when it has none (an unknown word,
    a list): never the 0 that :func:`inspect_ai.scorer.value_to_float` gives them with a warning."""
    if isinstance(value, bool | int | float):
        return float(to_float(value))
    if isinstance(value, str):
        text = value.strip()
        if text.lower() in _SCORE_WORDS:
            return float(to_float(text))
        try:
            return float(text) if text.isascii() else None
        except ValueError:
            return None
    return None


def _read_log(path: Path) -> object:
    log_module = _inspect_log()
    try:
        return log_module.read_eval_log(str(path))  # type: ignore[attr-defined]
    except (ValueError, KeyError, OSError, TypeError) as exc:
        first = " ".join(str(exc).split())[:200] or type(exc).__name__
        raise DataError(str(path), f"not a readable Inspect log ({first})") from None
    except Exception as exc:  # a damaged zip, a pydantic schema error: any failure of the reader is the file's
        first = " ".join(str(exc).split())[:200] or type(exc).__name__
        raise DataError(str(path), f"not a readable Inspect log ({type(exc).__name__}: {first})") from None


def _log_rows(path: Path, log: object, to_float: Callable[[object], float], notes: list[str]) -> list[dict]:
    """One source-table row per scored sample of ``log``."""
    spec = log.eval  # type: ignore[attr-defined]
    samples = log.samples or []  # type: ignore[attr-defined]
    if not samples:
        status = getattr(log, "status", "")
        raise DataError(str(path), f"the log holds no sample (status {status!r}; a log read header-only or a run "
                        "that failed before any sample)")
    if getattr(log, "status", "success") != "success":
        notes.append(f"{path.name}: the run's status is {log.status!r}: its finished samples are imported")  # type: ignore[attr-defined]
    epochs = max(int(getattr(s, "epoch", 1) or 1) for s in samples)
    rows: list[dict] = []
    errored = unscored = 0
    for sample in samples:
        if sample.error is not None or sample.output is None:
            errored += 1
            continue
        sample_id = str(sample.id)
        row: dict[str, object] = {
            "id": sample_id if epochs == 1 else f"{sample_id}#{sample.epoch}",
            "model": str(spec.model), "task": str(spec.task), "target": text_of(sample.target),
            "output": sample.output.completion or "", "input": message_text(sample.input),
            "sample_id": sample_id, "epoch": int(sample.epoch or 1), SOURCE_COLUMN: f"{TOOL}:{path.name}",
        }
        for name, value in (sample.metadata or {}).items():
            if isinstance(value, str | int | float) and not isinstance(value, bool) and str(name) not in row:
                row[f"metadata.{name}"] = value
        for scorer, score in (sample.scores or {}).items():
            values = score.value if isinstance(score.value, dict) else {scorer: score.value}
            for key, raw in values.items():
                number = score_value(raw, to_float)
                if number is None:
                    unscored += 1
                row[f"{scorer}:{key}"] = number
        rows.append(row)
    if errored:
        notes.append(f"{path.name}: {errored} sample(s) left out: they errored and have no output")
    if unscored:
        notes.append(f"{path.name}: {unscored} score value(s) are not numbers (Inspect's value_to_float): "
                     "kept as missing ratings")
    if not rows:
        raise DataError(str(path), "every sample of the log errored: no output to import")
    return rows


def import_inspect(paths: Iterable[str | Path] | str | Path, *, columns: ColumnMap | None = None,
                   progress: Callable[[int], None] | None = None) -> ToolImport:
    """Import Inspect AI logs (files or folders of them) as outputs and ratings (see the module docstring).

    Parameters
    ----------
    paths
        Log files (``.eval``, ``.json``) or folders holding them; one log per model is the usual layout.
    columns
        The user's mapping over :data:`DEFAULT_COLUMNS` (``--columns input=reference``).
    progress
        Called with ``1`` after each log is read.

    Raises
    ------
    DataError
        ``inspect-ai`` missing, a file that is not an Inspect log, a log without samples, or a mapped table the
        validators refuse (two logs of one model holding the same sample id, say); the line names the file.
    """
    files = log_files([paths] if isinstance(paths, str | Path) else paths)
    scorer_module = require("inspect_ai.scorer", "inspect-ai", "reading Inspect logs")()
    to_float = scorer_module.value_to_float()  # type: ignore[attr-defined]
    rows: list[dict] = []
    notes: list[str] = []
    versions: set[str] = set()
    for path in files:
        log = _read_log(path)
        versions.add(str(getattr(getattr(log, "eval", None), "packages", {}).get("inspect_ai", "") or "unknown"))
        rows += _log_rows(path, log, to_float, notes)
        if progress is not None:
            progress(1)
    table = pd.DataFrame(rows)
    score_columns = [c for c in table.columns if ":" in c]
    table = table[[c for c in table.columns if c not in score_columns] + score_columns]
    label = str(files[0]) if len(files) == 1 else f"{files[0]} (+{len(files) - 1} logs)"
    return finish(table, label=label, tool=TOOL, version="+".join(sorted(versions)), sources=[str(p) for p in files],
                  defaults=DEFAULT_COLUMNS, user=columns, notes=notes)


__all__ = ["DEFAULT_COLUMNS", "LOG_SUFFIXES", "import_inspect", "log_files", "message_text", "score_value"]
