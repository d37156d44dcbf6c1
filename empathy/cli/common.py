"""What every command shares: exit codes, the error-to-exit-code mapping, output formats, size parsing, loaders.

Nothing here imports pandas, numpy, SciPy, spaCy or openai at module level: ``python -m empathy --help`` and
``--version`` build the parser from this module and the command modules alone (see ``bench/bench_startup.py``).

Exit codes: :data:`EXIT_OK` (0) success; :data:`EXIT_FAILED` (1) the input was fine but a service refused
(an LLM endpoint answering 401, say; raised as :class:`CommandFailed`); :data:`EXIT_BAD_INPUT` (2) bad input,
options or configuration, reported as one line on stderr naming the file, row and column; 130 after Ctrl-C;
:data:`EXIT_BROKEN_PIPE` (141, as a shell reports a process ended by SIGPIPE) when the reader of stdout went away
(``| head``), without a message.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sqlite3
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, NoReturn

from empathy.escaping import terminal_literal
from empathy.importers.mapping import ColumnMap, columns_option_help

if TYPE_CHECKING:
    import pandas as pd

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_BROKEN_PIPE = 0, 1, 2, 130, 141
#: Output formats of the table commands: ``json`` for machines (exact), ``table`` and ``csv`` for people.
FORMATS: tuple[str, ...] = ("json", "table", "csv")
#: Upper bound of ``--bootstrap`` and ``--resamples``: every resample holds one index per unit, so memory grows
#: with resamples x units; 100,000 resamples (ten times what a 95 % interval needs) bounds the run.
MAX_RESAMPLES = 100_000
#: Shown in place of a missing value in ``--format table``.
NA_REP = "-"

Handler = Callable[[argparse.Namespace], int]


class CommandFailed(Exception):
    """The input was valid but the command could not do its work (a judge endpoint refused): exit code 1."""


class Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line (names escaped for the terminal) with exit code 2."""

    def error(self, message: str) -> NoReturn:
        line = terminal_literal(message.replace("\n", " "))
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {line}\n")


def bounded_int(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse ``type``: a whole number in ``[low, high]`` (ASCII digits), else a one-line usage error."""
    def parse(text: str) -> int:
        stripped = text.strip()
        digits = stripped[1:] if stripped[:1] in "+-" else stripped
        if not (digits.isascii() and digits.isdigit()):
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number")
        value = int(stripped)
        if value < low or (high is not None and value > high):
            bound = f"between {low} and {high:,}" if high is not None else f"at least {low}"
            raise argparse.ArgumentTypeError(f"{value} is out of range: use a number {bound}")
        return value
    parse.__name__ = "whole number"  # argparse names the type in its message
    return parse


def judged_metrics_option(names: list[str] | None, option: str = "--metric") -> list[str]:
    """The judge metrics an option names (repeats dropped), checked against the metric registry at run time.

    The parser takes any name, so that building it imports nothing heavy (the registry lives beside NumPy);
    this raises ``ValueError`` naming the option and the culprit (exit 2, one line) for an unknown metric or a
    text-only one (LD reads no judge rating). ``None`` or empty: every judge metric of the registry.
    """
    from empathy import metrics

    judged = metrics.judged_metrics()
    for name in names or ():
        if name not in judged:
            why = (f"{name} reads no judge rating" if name in metrics.METRIC_SPECS else "not a registered metric")
            raise ValueError(f"{option}: invalid choice {name!r} ({why}); choose from {', '.join(judged)}")
    return list(dict.fromkeys(names or judged))


def scheduler_option(text: str) -> object:
    """An argparse ``type`` for ``--scheduler``: a :class:`empathy.scheduler.SchedulerSpec`, else a usage error."""
    from empathy.scheduler import parse_scheduler

    try:
        return parse_scheduler(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_cluster_options(parser: argparse.ArgumentParser) -> None:
    """``--scheduler``, ``--partition-size`` and ``--retries``: the options of a run on a Dask cluster."""
    group = parser.add_argument_group("distributed parsing (Dask)")
    group.add_argument("--scheduler", type=scheduler_option, default=None, metavar="ADDRESS",
                       help="parse on a Dask cluster: tcp://HOST:PORT of a running scheduler, or local:N for N "
                       "worker processes on this machine")
    group.add_argument("--partition-size", type=bounded_int(1), default=1000, metavar="N",
                       help="texts per partition (one task, one Parquet file) with --scheduler (default 1000)")
    group.add_argument("--retries", type=bounded_int(0, 100), default=2, metavar="N",
                       help="times a failed partition is retried with --scheduler (default 2)")


def error_message(exc: BaseException) -> str:
    """One terminal-safe line describing ``exc`` (an OSError names its file)."""
    if isinstance(exc, OSError) and not isinstance(exc, BrokenPipeError):
        text = f"{exc.filename}: {exc.strerror or exc}" if exc.filename else str(exc.strerror or exc)
    else:
        text = str(exc) or type(exc).__name__
    # terminal_literal shows \r and ANSI escapes from ids as \x0d, \x1b instead of letting them act
    return terminal_literal(text.replace("\n", " "))


def report(exc: BaseException) -> int:
    """Print ``exc`` as ``empathy: error: ...`` on stderr and return its exit code."""
    print(f"empathy: error: {error_message(exc)}", file=sys.stderr)
    return EXIT_FAILED if isinstance(exc, CommandFailed) else EXIT_BAD_INPUT


def run_handler(handler: Handler, args: argparse.Namespace) -> int:
    """Run a command's handler and map what it raises to an exit code (never a traceback for bad input).

    DataError, ValueError, TypeError, OverflowError, RecursionError, MemoryError, OSError and sqlite3 errors (a
    cache or store file that is not a database) are input problems (exit 2), :class:`CommandFailed` exits 1; a
    closed stdout exits quietly with :data:`EXIT_BROKEN_PIPE`.
    """
    try:
        return int(handler(args) or 0)
    except BrokenPipeError:
        return _broken_pipe()
    except CommandFailed as exc:
        return report(exc)
    except (ValueError, TypeError, OSError, OverflowError, RecursionError, MemoryError, sqlite3.Error) as exc:
        return report(exc)
    except KeyboardInterrupt:
        print("empathy: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def action_parsers(parser: argparse.ArgumentParser) -> argparse._SubParsersAction:
    """The required ``ACTION`` sub-commands of a command that has several (``store``, ``audit``), built with the
    command's own parser class so that an action's usage error is reported like every other."""
    actions = parser.add_subparsers(dest="action", metavar="ACTION", parser_class=type(parser))
    actions.required = True
    return actions


def set_handler(parser: argparse.ArgumentParser, handler: Handler) -> None:
    """Make ``handler`` the command of ``parser``, guarded by :func:`run_handler`.

    The parsed namespace carries it as ``handler`` (and ``func``, the argparse idiom): ``args.handler(args)``
    runs the command and returns the exit code, whether called from :func:`empathy.cli.main` or directly.
    """
    guarded = functools.partial(run_handler, handler)
    parser.set_defaults(handler=guarded, func=guarded)


def _broken_pipe() -> int:
    # Python flushes stdout again at exit and would print "Exception ignored ... BrokenPipeError": point the
    # descriptor at /dev/null so that flush succeeds silently (the recipe of the signal module's docs).
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
    return EXIT_BROKEN_PIPE


# --- output -------------------------------------------------------------------------------------------------
def print_json(payload: object) -> None:
    """Machine output: exact JSON, indented, non-ASCII kept as is (no escaping of data strings)."""
    print(json.dumps(payload, indent=2))


def json_rows(frame: pd.DataFrame, **extra: object) -> list[dict[str, object]]:
    """``frame`` as JSON-ready rows (NaN -> null, numpy -> Python), each with the ``extra`` keys appended."""
    from empathy.io import json_records

    return [{**row, **extra} for row in json_records(frame)]


def print_table(frame: pd.DataFrame) -> None:
    """People's table on stdout: three decimals, ``-`` for missing, names made terminal-safe.

    A ``warning`` column (e.g. an interval to distrust) is printed under the table, one line per row that has
    one, the row named by its leading text columns, instead of as a wide column.
    """
    import pandas as pd

    if "warning" not in frame.columns:
        _print_frame(frame)
        return
    warnings = frame["warning"].reset_index(drop=True)
    frame = frame.drop(columns="warning").reset_index(drop=True)
    _print_frame(frame)
    names = []
    for column in frame.columns:
        if pd.api.types.is_numeric_dtype(frame[column].dtype):
            break
        names.append(column)
    for position, warning in warnings.items():
        if isinstance(warning, str) and warning:
            label = " / ".join(str(frame.at[position, c]) for c in names) or f"row {position + 1}"
            print(terminal_literal(f"warning: {label}: {warning}"))


def _print_frame(frame: pd.DataFrame) -> None:
    import pandas as pd

    shown = frame.copy()
    for column in shown.columns:
        values = shown[column]
        if isinstance(values.dtype, pd.Int64Dtype):
            # whole numbers (ranks, counts) stay whole; pandas would print a gap as <NA>
            shown[column] = values.astype(object).where(values.notna(), NA_REP)
            continue
        if values.dtype == object and values.map(lambda v: v is None or isinstance(v, float | int)).all():
            shown[column] = values.astype(float)  # None where undefined prints '-' like every other gap
        elif not (pd.api.types.is_numeric_dtype(values.dtype) or pd.api.types.is_bool_dtype(values.dtype)):
            shown[column] = values.map(lambda v: terminal_literal(v) if isinstance(v, str) else v)
    shown.columns = [terminal_literal(c) for c in shown.columns]
    with pd.option_context("display.max_rows", None, "display.max_columns", None, "display.width", 200):
        print(shown.to_string(index=False, float_format=lambda x: f"{x:.3f}", na_rep=NA_REP))


def print_csv(frame: pd.DataFrame, signature: str | None = None) -> None:
    """People's CSV on stdout: formula-like text cells neutralised, the signature in a last column."""
    from empathy.io import write_people_csv

    if signature is not None:
        frame = frame.assign(signature=signature)
    write_people_csv(frame, sys.stdout)


def print_signature(signature: object) -> None:
    """The ``signature:`` line under a people's table, terminal-safe as the table is (judge and rater names from
    data are in it: control and bidirectional characters are shown as ``\\x1b``, ``\\u202e``)."""
    print(f"\nsignature: {terminal_literal(signature)}")


def emit(frame: pd.DataFrame, fmt: str, signature: str) -> None:
    """``csv``: :func:`print_csv`; ``table``: :func:`print_table` and the signature line."""
    if fmt == "csv":
        print_csv(frame, signature)
    else:
        print_table(frame)
        print_signature(signature)


# --- inputs -------------------------------------------------------------------------------------------------
def check_inputs(*paths: str | None) -> None:
    """Check every input file exists, is not empty and has a supported type, before pandas is even imported."""
    from empathy.files import check_data_file

    for path in paths:
        if path:
            check_data_file(path)


def load_inputs(path: str, extra_ratings: list[str] | None = None) -> tuple[pd.DataFrame | None, pd.DataFrame]:
    """``(outputs or None, ratings)`` from an outputs file (plus ratings files) or a long ratings file.

    An outputs file (a ``generation`` column, no ``rater``/``dimension`` column) gives its wide
    ``rater:dimension`` ratings joined with ``extra_ratings``; anything else is read as long ratings.
    """
    import pandas as pd

    from empathy.io import DataError, build_dataset, read_table, validate_outputs, validate_ratings

    frame = read_table(path)
    tables = [(p, validate_ratings(read_table(p))) for p in (extra_ratings or [])]
    if "generation" in frame.columns and not {"rater", "dimension"} & set(frame.columns):
        outputs, wide = validate_outputs(frame)
        dataset = build_dataset(outputs, wide, tables, sources=[path, *(p for p, _ in tables)])
        return dataset.outputs, dataset.ratings
    ratings = pd.concat([validate_ratings(frame)] + [t for _, t in tables], ignore_index=True)
    duplicate = ratings.duplicated(["item_id", "model", "rater", "dimension"])
    if duplicate.any():
        row = ratings[duplicate].iloc[0]
        raise DataError(", ".join([path, *(extra_ratings or [])]),
                        f"rater '{row['rater']}' rates ({row['item_id']}, {row['model']}, {row['dimension']}) "
                        "more than once", column="rater")
    return None, ratings


def add_columns_option(parser: argparse.ArgumentParser) -> None:
    """``--columns SOURCE=TARGET`` (repeatable, or comma-separated): read a file's columns under the data model's
    names."""
    parser.add_argument("--columns", dest="columns", action="append", metavar="SOURCE=TARGET",
                        help=columns_option_help())


def column_map(args: argparse.Namespace) -> ColumnMap:
    """The mapping ``--columns`` gave (empty without it); ``ValueError`` naming ``--columns`` for a malformed one."""
    return ColumnMap.parse(getattr(args, "columns", None))
