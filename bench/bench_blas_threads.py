"""Benchmark: the intervals of a results table on one BLAS thread against the threads BLAS starts with (issue 25).

``empathy.blas.one_blas_thread`` runs the bootstrap's and the permutation tests' matrix products on one BLAS
thread. This measures what that saves and what it costs: :func:`empathy.bootstrap.plan_intervals` of the judge
metrics (1,000 item resamples, the CLI's and the app's default) on the demo data scaled ``--scales`` times
(``bench_cli_scaling.scaled_demo``: 436 outputs per copy; 459 copies are 200,124 outputs), with sentence counts
drawn at random (the intervals read no parse; LD has no per-item terms), in two cases:

* ``one BLAS thread (now)``: the package as it is;
* ``BLAS threads as found``: the same call with ``one_blas_thread`` replaced by a block that does nothing, so the
  products run on every thread OpenBLAS started (one per core).

Each case runs in the same process, interleaved over ``--runs`` rounds after one untimed call (the resamples'
count matrices are drawn afresh each call; nothing is cached between calls). CPU is the process's user + system
time over the call and the ``--idle`` seconds after it: OpenBLAS's idle threads spin after a product, and a server
pays that spin whether or not the next request comes. Wall is the call alone. The two cases' tables are checked
equal. Medians are reported with the machine and the load.

Run: ``python bench/bench_blas_threads.py [--scales 1 10 46 459] [--runs 5] [--idle 0.5]``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from bench_cli_scaling import load, machine, scaled_demo

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import empathy.agreement as agreement_module  # noqa: E402
import empathy.bootstrap as bootstrap_module  # noqa: E402
from empathy.bootstrap import plan_intervals  # noqa: E402
from empathy.evaluate import TextFeatures, default_by_task, plan_metrics  # noqa: E402
from empathy.io import load_dataset  # noqa: E402
from empathy.metrics import judged_metrics  # noqa: E402


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@contextlib.contextmanager
def _threads_as_found() -> object:
    """``one_blas_thread`` replaced where the package calls it by a block that changes nothing."""
    saved = bootstrap_module.one_blas_thread, agreement_module.one_blas_thread
    bootstrap_module.one_blas_thread = agreement_module.one_blas_thread = contextlib.nullcontext
    try:
        yield
    finally:
        bootstrap_module.one_blas_thread, agreement_module.one_blas_thread = saved


def _plan(copies: int, folder: Path) -> tuple[object, int]:
    outputs, author, lexicon, _ = scaled_demo(copies, folder)
    dataset = load_dataset(outputs, [author, lexicon])
    n = len(dataset.outputs)
    rng = np.random.default_rng(0)
    features = TextFeatures(rng.integers(1, 8, n).astype(float), rng.integers(1, 8, n).astype(float),
                            np.zeros((n, 3)), np.zeros((n, 3)), "bench")
    plan = plan_metrics(dataset.outputs, dataset.ratings, features=features, by_task=default_by_task(dataset.outputs),
                        include_ld=False)
    return plan, n


def _measure(plan: object, idle: float) -> tuple[float, float, object]:
    cpu, wall = _cpu(), time.perf_counter()
    result = plan_intervals(plan, metrics=judged_metrics())
    wall = time.perf_counter() - wall
    time.sleep(idle)  # the spin of BLAS's idle threads after the last product, if any, falls in here
    return _cpu() - cpu, wall, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", type=int, nargs="+", default=[1, 10, 46])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--idle", type=float, default=0.5)
    args = parser.parse_args()
    print(machine())
    print(load())
    print("| outputs | case | CPU (s), call + idle | wall (s), call | CPU / now's | wall / now's |")
    print("|---:|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="empathy-blas-") as scratch:
        for copies in args.scales:
            plan, n = _plan(copies, Path(scratch))
            cases = {"one BLAS thread (now)": contextlib.nullcontext, "BLAS threads as found": _threads_as_found}
            results: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
            tables = {}
            for name, block in cases.items():  # untimed: first-call costs (imports, the threadpool controller)
                with block():
                    tables[name] = _measure(plan, 0.0)[2]
            first, second = tables.values()
            pd.testing.assert_frame_equal(first.values, second.values)
            pd.testing.assert_frame_equal(first.agreement, second.agreement)
            for _ in range(args.runs):
                for name, block in cases.items():
                    with block():
                        cpu, wall, _ = _measure(plan, args.idle)
                    results[name].append((cpu, wall))
            medians = {name: (statistics.median(c for c, _ in runs), statistics.median(w for _, w in runs))
                       for name, runs in results.items()}
            base_cpu, base_wall = medians["one BLAS thread (now)"]
            for name, (cpu, wall) in medians.items():
                print(f"| {n:,} | {name} | {cpu:.3f} | {wall:.3f} | {cpu / base_cpu:.2f} | {wall / base_wall:.2f} |")
            del plan
    print(f"{load()}; {os.cpu_count()} logical CPUs")


if __name__ == "__main__":
    main()
