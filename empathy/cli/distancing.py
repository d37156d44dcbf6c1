"""``empathy distancing FILE --format jsonl``: one text per line in, one JSON object per line out.

Bad input (missing or unreadable file, bytes that are not UTF-8) ends with exit code 2 and one line on stderr
naming the file and, for decoding errors, the line; never a traceback. The whole file is checked before any
output is written, so a failing run prints nothing on stdout. ``python -m empathy.distancing FILE`` runs the
same command without the main ``empathy`` command (:func:`main`).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from empathy.cli.common import CommandFailed, Parser, add_cluster_options, bounded_int, set_handler


class InputError(ValueError):
    """An input problem, reported as one line with exit code 2."""


def register(subparsers: Any) -> None:
    """Add the ``distancing`` subcommand to an ``argparse`` subparsers object."""
    parser = subparsers.add_parser(
        "distancing",
        help="detect linguistic-distancing spans (one text per line) and print one JSON object per line",
        description="Read one text per line (UTF-8) and print, per line, the sentence count, the counts of "
        "nominalization / impersonal / agentless constructions and every span with the rule that fired.",
    )
    parser.add_argument("file", help="UTF-8 text file, one text per line ('-' for stdin)")
    parser.add_argument("--format", choices=["jsonl"], default="jsonl", help="output format (default jsonl)")
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the result cache")
    parser.add_argument("--cache-dir", default=None, help="cache folder (default $EMPATHY_CACHE_DIR/distancing "
                        "or ~/.cache/empathy/distancing)")
    parser.add_argument("--batch-size", type=bounded_int(1), default=256, help="nlp.pipe batch size (default 256)")
    parser.add_argument("--n-process", type=bounded_int(1), default=1,
                        help="parser worker processes (default 1)")
    add_cluster_options(parser)
    parser.add_argument("--output-dir", default=None, metavar="DIR",
                        help="with --scheduler: folder of the Parquet partitions and their completion markers (a "
                        "re-run resumes from it); the JSON lines are then printed from it in input order")
    set_handler(parser, run)


def _strip_newline(line: str) -> str:
    """The line without its line terminator."""
    if line.endswith("\r\n"):
        return line[:-2]
    if line.endswith("\n") or line.endswith("\r"):
        return line[:-1]
    return line


def _check_file(path: Path) -> None:
    """Raise :class:`InputError` when the file is missing, unreadable or not UTF-8 (naming the line)."""
    if not path.exists():
        raise InputError(f"{path}: no such file")
    if path.is_dir():
        raise InputError(f"{path}: is a directory, expected a text file")
    try:
        with path.open("rb") as handle:
            for number, raw in enumerate(handle, start=1):
                try:
                    raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise InputError(f"{path}:{number}: not valid UTF-8 ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None


def _read_lines(path: Path) -> Iterator[str]:
    """The file's lines without terminators (already checked to decode)."""
    with path.open("r", encoding="utf-8", newline="") as handle:
        for line in handle:
            yield _strip_newline(line)


def _read_stdin(stream: TextIO) -> Iterator[str]:
    """Lines of stdin, decoded strictly; a bad line raises :class:`InputError` naming it."""
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        for line in stream:
            yield _strip_newline(line)
        return
    for number, raw in enumerate(buffer, start=1):
        try:
            yield _strip_newline(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise InputError(f"<stdin>:{number}: not valid UTF-8 ({exc.reason} at byte {exc.start})") from None


def run(args: argparse.Namespace) -> int:
    """Run the ``distancing`` subcommand; returns the process exit code."""
    if args.file == "-":
        lines: Iterator[str] = _read_stdin(sys.stdin)
    else:
        path = Path(args.file)
        _check_file(path)
        lines = _read_lines(path)
    if args.scheduler is not None:
        return _run_distributed(args, lines)
    if args.output_dir is not None:
        raise InputError("--output-dir needs --scheduler (the single-process run prints to stdout)")
    from empathy.distancing import DistancingCache, analyze  # spaCy: only once the input is known good

    cache: DistancingCache | bool = False
    if not args.no_cache:
        cache = DistancingCache(args.cache_dir) if args.cache_dir else True
    out = sys.stdout
    try:
        for result in analyze(lines, cache=cache, batch_size=args.batch_size, n_process=args.n_process):
            out.write(json.dumps(result.to_json(), ensure_ascii=False))
            out.write("\n")
    except InputError:
        raise
    except ValueError as exc:
        # the parser names a text by its 0-based position; here that is the line number minus one
        found = re.match(r"text #(\d+) (.*)", str(exc))
        where = f"{args.file}:{int(found.group(1)) + 1}: text {found.group(2)}" if found else f"{args.file}: {exc}"
        raise InputError(where) from None
    out.flush()
    return 0


def _run_distributed(args: argparse.Namespace, lines: Iterator[str]) -> int:
    """``--scheduler``: parse on the cluster into ``--output-dir``, then print the JSON lines from it."""
    if args.output_dir is None:
        raise InputError("--scheduler needs --output-dir DIR (the Parquet partitions, reused by a re-run)")
    from empathy.cluster import PartitionFailed, PartitionStore, open_client, parse_to_partitions, read_results

    PartitionStore(args.output_dir)  # a folder that is not ours fails here, before a cluster starts
    cache_dir: str | bool | None = False if args.no_cache else args.cache_dir
    try:
        with open_client(args.scheduler) as client:
            stats = parse_to_partitions(lines, args.output_dir, client, partition_size=args.partition_size,
                                        cache_dir=cache_dir, batch_size=args.batch_size, retries=args.retries)
    except PartitionFailed as exc:
        raise CommandFailed(str(exc)) from None
    except ValueError as exc:
        found = re.match(r"text #(\d+) (.*)", str(exc))
        if found is None:
            raise
        raise InputError(f"{args.file}:{int(found.group(1)) + 1}: text {found.group(2)}") from None
    print(f"empathy: {stats.summary()} in {args.output_dir}", file=sys.stderr)
    out = sys.stdout
    for result in read_results(args.output_dir):
        out.write(json.dumps(result.to_json(), ensure_ascii=False))
        out.write("\n")
    out.flush()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Stand-alone entry point: ``python -m empathy.distancing FILE [--format jsonl]``."""
    parser = Parser(prog="python -m empathy.distancing")
    subparsers = parser.add_subparsers(dest="command", parser_class=Parser)
    register(subparsers)
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] != "distancing":
        argv = ["distancing", *argv]
    args = parser.parse_args(argv)
    return int(args.handler(args))
