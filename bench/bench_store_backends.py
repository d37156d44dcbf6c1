"""Benchmark: decisions per second into the override store, SQLite against PostgreSQL, 1 and 4 writers.

Each writer is its own process (an annotator's app session or CLI) that records ``--decisions`` CA decisions
through :meth:`empathy.labels.sqlite.OverrideStore.set_override`, one transaction each (as the Relabel page does), all
writers deciding the same items under their own names. The clock runs from the moment every writer has opened
its store (a barrier) until the last one finishes; decisions/s = all decisions / that time. Both backends are
durable: SQLite with ``synchronous=FULL`` in WAL mode, PostgreSQL with its defaults (``fsync=on``,
``synchronous_commit=on``) on a throwaway local server (tests/postgres_server.py: initdb + pg_ctl, TCP on
127.0.0.1 with password authentication). Every run checks that no decision was lost.

Run: ``python bench/bench_store_backends.py [--decisions 200] [--repeats 3]``; prints a Markdown table.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from postgres_server import PostgresServer, unavailable_reason  # noqa: E402

from empathy.labels.backends import open_store  # noqa: E402

DATASET = "bench/outputs.csv"


def _writer(location: str, annotator: str, count: int, ready, start) -> None:
    store = open_store(location)
    store.version()  # connected (PostgreSQL) / file opened before the clock starts
    ready.wait()
    start.wait()
    for index in range(count):
        store.set_override(DATASET, f"item-{index:04d}", "model-a", "judge", "ca", float(index % 2),
                           annotator=annotator, text_hash="h", judge_value=1.0, judge_signature="bench")


def run_once(location: str, writers: int, count: int) -> float:
    """Seconds for ``writers`` processes to record ``count`` decisions each into a fresh store."""
    open_store(location)
    context = multiprocessing.get_context("spawn")
    ready = context.Barrier(writers + 1)
    start = context.Event()
    processes = [context.Process(target=_writer, args=(location, f"ann{k}", count, ready, start))
                 for k in range(writers)]
    for process in processes:
        process.start()
    ready.wait()
    began = time.perf_counter()
    start.set()
    for process in processes:
        process.join()
        if process.exitcode != 0:
            raise RuntimeError(f"a writer failed (exit {process.exitcode})")
    elapsed = time.perf_counter() - began
    store = open_store(location)
    kept = len(store.decisions(DATASET))
    if kept != writers * count or len(store.audit(DATASET)) != writers * count:
        raise RuntimeError(f"lost writes: {kept} of {writers * count} decisions kept")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=200, help="decisions per writer (default 200)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per cell; the median is reported")
    args = parser.parse_args()
    reason = unavailable_reason()
    if reason is not None:
        print(f"no PostgreSQL server: {reason}", file=sys.stderr)
        return 2
    server = PostgresServer(durable=True).start()
    results: dict[tuple[str, int], float] = {}
    try:
        with tempfile.TemporaryDirectory() as folder:
            for repeat in range(args.repeats):
                for writers in (1, 4):
                    for backend in ("sqlite", "postgresql"):
                        location = (str(Path(folder) / f"s{repeat}-{writers}.sqlite") if backend == "sqlite"
                                    else server.create_database())
                        seconds = run_once(location, writers, args.decisions)
                        results.setdefault((backend, writers), []).append(writers * args.decisions / seconds)
                        if backend == "postgresql":
                            server.drop_database(location)
    finally:
        server.stop()
    print(f"{platform.platform()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"load average {os.getloadavg()[0]:.2f}; {args.decisions} decisions per writer, median of "
          f"{args.repeats}\n")
    print("| writers | SQLite decisions/s | PostgreSQL decisions/s | PostgreSQL / SQLite |")
    print("|---:|---:|---:|---:|")
    for writers in (1, 4):
        sqlite = statistics.median(results[("sqlite", writers)])
        postgres = statistics.median(results[("postgresql", writers)])
        print(f"| {writers} | {sqlite:,.0f} | {postgres:,.0f} | {postgres / sqlite:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
