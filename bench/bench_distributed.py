"""Benchmark: distancing parse throughput on a Dask ``LocalCluster`` of 1 and 2 workers (issue 13 item 2).

Texts: the demo's 121 generations and 25 references, copy ``c`` of each with the sentence of
:func:`bench_cli_scaling.variant_sentence` appended so that every text is distinct (``--texts`` of them, in
copy order). Every run parses every text: the parse cache is off (``cache_dir=False``) and each run writes a
fresh partition folder, so a run measures the parse, the task round trips and the Parquet writes.

Configurations, measured interleaved (``--repeats`` rounds; in each round every configuration once, the order
rotated) because other processes share this machine's cores:

* ``single``: :func:`empathy.distancing.analyze` in this process (the baseline of the ratios);
* ``dask-1``, ``dask-2``: :func:`empathy.cluster.parse_to_partitions` on a ``LocalCluster`` of 1 or 2
  single-threaded worker processes, started once before the rounds (start-up and model load reported apart).

Reported per configuration: median wall time, texts/s, words/s (whitespace-separated words), ratio to the
single-process time of the same round (median over rounds), and CPU seconds: of this process for ``single``;
of the worker processes (``psutil``, read on each worker before and after) and, apart, of the driver (this
process: reading, submitting, collecting, Parquet writes) for ``dask-N``.
Wall times on a shared machine mostly measure the other processes; words per worker CPU-second is the rate a
dedicated core would deliver, and it is the rate behind the plan for 32 and more workers.

Run: ``python bench/bench_distributed.py [--texts 300] [--partition-size 25] [--repeats 3]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cli_scaling import DATA, ROOT, load, variant_sentence  # noqa: E402
from bench_judges import machine  # noqa: E402

sys.path.insert(0, str(ROOT))


def texts(n: int) -> list[str]:
    """``n`` distinct demo-length texts (see the module docstring)."""
    demo = pd.read_csv(DATA / "outputs.csv", dtype=str, keep_default_na=False)
    base = list(pd.unique(pd.concat([demo["generation"], demo["reference"]])))
    return [base[i % len(base)] + variant_sentence(i // len(base)) for i in range(n)]


def _worker_cpu() -> float:
    """User + system CPU seconds of the calling process (run on each worker with ``client.run``)."""
    import psutil

    times = psutil.Process().cpu_times()
    return times.user + times.system


def main() -> None:
    import logging

    import distributed

    logging.getLogger("distributed").setLevel(logging.ERROR)

    from empathy.cluster import parse_to_partitions
    from empathy.distancing import analyze

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=300)
    parser.add_argument("--partition-size", type=int, default=25)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    corpus = texts(args.texts)
    words = sum(len(t.split()) for t in corpus)
    list(analyze(corpus[:5], cache=False))  # the driver's model load, outside the timings
    clusters = {}
    for workers in (1, 2):
        start = time.perf_counter()
        cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                           dashboard_address=":0", silence_logs=40)
        client = distributed.Client(cluster)
        with tempfile.TemporaryDirectory() as warm:   # registers the plugin: every worker loads the model
            parse_to_partitions(corpus[:workers], Path(warm) / "o", client, partition_size=1, cache_dir=False)
        clusters[f"dask-{workers}"] = (cluster, client, time.perf_counter() - start)
    names = ["single", "dask-1", "dask-2"]
    walls: dict[str, list[float]] = {name: [] for name in names}
    cpus: dict[str, list[float]] = {name: [] for name in names}
    drivers: dict[str, list[float]] = {name: [] for name in names}
    ratios: dict[str, list[float]] = {name: [] for name in names}
    loads = []
    for round_ in range(args.repeats):
        order = names[round_ % 3:] + names[:round_ % 3]
        loads.append(os.getloadavg()[0])
        this: dict[str, float] = {}
        for name in order:
            before = sum(clusters[name][1].run(_worker_cpu).values()) if name in clusters else 0.0
            start, cpu_start = time.perf_counter(), time.process_time()
            if name == "single":
                results = list(analyze(corpus, cache=False))
                assert len(results) == len(corpus)
            else:
                with tempfile.TemporaryDirectory() as folder:
                    stats = parse_to_partitions(corpus, Path(folder) / "o", clusters[name][1],
                                                partition_size=args.partition_size, cache_dir=False)
                    assert stats.computed == stats.partitions
            this[name] = time.perf_counter() - start
            after = sum(clusters[name][1].run(_worker_cpu).values()) if name in clusters else 0.0
            drivers[name].append(time.process_time() - cpu_start)
            cpus[name].append(after - before if name in clusters else drivers[name][-1])
        for name in names:
            walls[name].append(this[name])
            ratios[name].append(this["single"] / this[name])
        print(f"round {round_ + 1}: " + ", ".join(f"{n} {this[n]:.1f} s" for n in names), file=sys.stderr)
    for cluster, client, _ in clusters.values():
        client.close()
        cluster.close()
    print(f"machine: {machine()}; load average 1 min during the rounds: "
          f"{', '.join(f'{x:.2f}' for x in loads)} ({load()} at the end)\n")
    print(f"{len(corpus):,} distinct texts, {words:,} words; partitions of {args.partition_size}; "
          f"{args.repeats} interleaved rounds\n")
    print("| configuration | cluster start + model loads (s) | wall per round (s) | median wall (s) | texts/s | "
          "words/s | speed-up vs single (median of rounds) | parse CPU (s, median) | driver CPU (s, median) | "
          "words per parse CPU-second |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    rate = {}
    for name in names:
        wall = statistics.median(walls[name])
        cpu = statistics.median(cpus[name])
        start = f"{clusters[name][2]:.1f}" if name in clusters else "-"
        rate[name] = words / cpu
        print(f"| {name} | {start} | {', '.join(f'{w:.1f}' for w in walls[name])} | {wall:.1f} | "
              f"{len(corpus) / wall:.1f} | {words / wall:,.0f} | {statistics.median(ratios[name]):.2f} | {cpu:.1f} | "
              f"{statistics.median(drivers[name]) if name in clusters else 0:.1f} | {rate[name]:,.0f} |")
    per_worker = rate["dask-2"]
    driver_per_text = statistics.median(drivers["dask-2"]) / len(corpus)
    total_words = 4e8  # 10^6 outputs x (200 words of generation + 200 of reference), references not shared
    print(f"\nplan at {per_worker:,.0f} words per worker CPU-second (dask-2, driver included) for 10^6 outputs of "
          f"~200 words a side (4 x 10^8 words), one dedicated core per worker, scaling linearly:")
    texts_total = 2e6
    driver_hours = driver_per_text * texts_total / 3600
    for workers in (1, 32, 64, 128):
        print(f"- {workers} workers: {total_words / per_worker / workers / 3600:,.2f} h of parsing")
    partitions = -(-len(corpus) // args.partition_size)
    print(f"- the driver (one process: reading, hashing, submitting, collecting, Parquet writes): "
          f"{driver_per_text * 1000:.2f} ms CPU per text at {args.partition_size} texts per partition "
          f"({driver_per_text * len(corpus) / partitions * 1000:.0f} ms per partition); as a per-text cost that is "
          f"{driver_hours:.2f} h for 2 x 10^6 texts, the floor of the run whatever the number of workers "
          f"(compare runs with different --partition-size to split it into per-text and per-partition parts)")


if __name__ == "__main__":
    main()
