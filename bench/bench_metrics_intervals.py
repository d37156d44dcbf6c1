"""Benchmark: the cost of ``metrics``' bootstrap intervals (issue 23) at up to 200,000 outputs (2 x 10^6 rating rows).

Same synthetic data as ``bench/bench_scaling_rows.py`` (two LLM judges rating all five dimensions of N outputs, demo
rows copied with distinct texts; three tasks, five models). Two parts, each with its baseline in the same run:

* **API, one process per size**: the engine's own work, ``plan_metrics(...).evaluate()`` (the baseline; given text
  features, which the intervals do not read: sentence counts and densities are drawn at random here, nothing is
  parsed), then ``plan.item_terms`` of the judge metrics and :func:`empathy.bootstrap.table_intervals` with 0, 200,
  1,000 and 2,000 resamples (every per-model interval, rank interval and Table 6 row: one item resample per task
  for all models and judges). CPU seconds of each step (best of ``--repeats``) and the peak traced allocation of
  the 1,000-resample step (``tracemalloc``).
* **CLI, warm** (``--cli``): ``python -m empathy metrics OUTPUTS --ratings A --ratings B --format json`` at the
  largest size, with ``--resamples 0`` (the baseline: no bootstrap, what ``metrics`` computed before) and with the
  default (1,000), alternating, ``--repeats`` times each; the distancing cache is filled as in
  ``bench_scaling_rows.py`` (the template texts parsed for real, each variant stored under its own key), so the
  runs do all the work except parsing. Medians of wall and CPU seconds and the peak RSS.

Run: ``python bench/bench_metrics_intervals.py [--outputs 10000 100000 200000] [--repeats 3] [--cli]``; prints
Markdown tables, the machine and the load averages.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from bench_cli_scaling import ROOT, load, machine, run_child
from bench_scaling_rows import fill_cache, synthetic

RESAMPLES = (0, 200, 1000, 2000)


def api_child(outputs_path: str, ratings_a: str, ratings_b: str, repeats: int) -> None:
    """The engine and the intervals on one data set (run in a fresh process); prints one JSON object."""
    import numpy as np

    from empathy import metrics as registry
    from empathy.bootstrap import table_intervals
    from empathy.evaluate import TextFeatures, plan_metrics
    from empathy.io import load_dataset

    data = load_dataset(outputs_path, [ratings_a, ratings_b])
    n = len(data.outputs)
    rng = np.random.default_rng(0)
    features = TextFeatures(rng.integers(1, 6, n).astype(float), rng.integers(1, 6, n).astype(float),
                            rng.uniform(size=(n, 3)), rng.uniform(size=(n, 3)), "synthetic")

    def best(step) -> tuple[object, float]:
        times = []
        for _ in range(repeats):
            start = time.process_time()
            result = step()
            times.append(time.process_time() - start)
        return result, min(times)

    report: dict[str, object] = {"outputs": n, "rows": len(data.ratings)}
    plan, report["plan_metrics + evaluate"] = best(
        lambda: (lambda p: (p.evaluate(), p)[1])(plan_metrics(data.outputs, data.ratings, features=features,
                                                              by_task=True)))
    terms, report["item_terms (judge metrics)"] = best(lambda: plan.item_terms(metrics=registry.judged_metrics()))
    report["items per task"] = {str(k): int(v) for k, v in terms.groupby("task")["item_id"].nunique().items()}
    for resamples in RESAMPLES:
        _, report[f"table_intervals ({resamples:,} resamples)"] = best(
            lambda r=resamples: table_intervals(terms, n_resamples=r, seed=0))
    tracemalloc.start()
    table_intervals(terms, n_resamples=1000, seed=0)
    report["peak traced MiB (1,000 resamples)"] = tracemalloc.get_traced_memory()[1] / 2 ** 20
    tracemalloc.stop()
    print(json.dumps(report))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outputs", type=int, nargs="+", default=[10_000, 100_000, 200_000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cli", action="store_true", help="also the warm CLI at the largest size")
    parser.add_argument("--api-child", nargs=4, metavar=("OUTPUTS", "A", "B", "REPEATS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.api_child:
        api_child(*args.api_child[:3], int(args.api_child[3]))
        return
    python = sys.executable
    print(f"# {machine()}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "bench")]),
               "EMPATHY_CACHE_DIR": str(folder / "cache")}
        api = []
        for n in sorted(args.outputs):
            paths = synthetic(n, folder)
            before = load()
            run = run_child([python, "-m", "bench_metrics_intervals", "--api-child", *map(str, paths),
                             str(args.repeats)], env)
            if run["rc"] != 0:
                raise SystemExit(f"API at {n}: {run['stderr'].decode()[-2000:]}")  # type: ignore[union-attr]
            api.append((json.loads(run["stdout"]), before))  # type: ignore[arg-type]
            print(f"# API {n:,}: {run['stdout'].decode().strip()} ({load()})", flush=True)  # type: ignore[union-attr]
        cli = []
        if args.cli:
            n = max(args.outputs)
            stored, seconds = fill_cache(n, folder / "cache")
            print(f"# cache filled: {stored:,} variant texts in {seconds:.1f} s ({load()})", flush=True)
            outputs, ratings_a, ratings_b = synthetic(n, folder)
            base = [python, "-m", "empathy", "metrics", str(outputs), "--ratings", str(ratings_a), "--ratings",
                    str(ratings_b), "--format", "json"]
            runs: dict[str, list[dict[str, object]]] = {"--resamples 0": [], "default (1,000)": []}
            for _ in range(args.repeats):
                for name, command in (("--resamples 0", [*base, "--resamples", "0"]), ("default (1,000)", base)):
                    run = run_child(command, env)
                    if run["rc"] != 0:
                        raise SystemExit(f"{name}: {run['stderr'].decode()[-2000:]}")  # type: ignore[union-attr]
                    runs[name].append(run)
                    print(f"# metrics {name}: {run['wall']:.1f} s wall, {run['cpu']:.1f} s CPU, "
                          f"{run['rss_mib']:.0f} MiB ({load()})", flush=True)
            cli = [(name, n, statistics.median(r["wall"] for r in rs), statistics.median(r["cpu"] for r in rs),
                    max(r["rss_mib"] for r in rs)) for name, rs in runs.items()]
    print(f"# end: {load()}\n")
    print("| outputs | rating rows | items per task | plan + evaluate (CPU s) | item_terms | "
          + " | ".join(f"intervals, {r:,} resamples" for r in RESAMPLES) + " | peak traced (1,000) |")
    print("|---:|---:|---|---:|---:|" + "---:|" * len(RESAMPLES) + "---:|")
    for result, _ in api:
        baseline = result["plan_metrics + evaluate"]
        seconds = [result[f"table_intervals ({r:,} resamples)"] for r in RESAMPLES]
        cells = [f"{s:.2f} ({s / baseline:.1f}x)" for s in seconds]
        print(f"| {result['outputs']:,} | {result['rows']:,} | "
              f"{', '.join(f'{v:,}' for v in result['items per task'].values())} | {baseline:.2f} | "
              f"{result['item_terms (judge metrics)']:.2f} | " + " | ".join(cells)
              + f" | {result['peak traced MiB (1,000 resamples)']:.0f} MiB |")
    if cli:
        print("\n| `metrics` (warm) | outputs | wall (s, median) | CPU (s, median) | peak RSS (MiB) |")
        print("|---|---:|---:|---:|---:|")
        for name, n, wall, cpu, rss in cli:
            print(f"| {name} | {n:,} | {wall:.2f} | {cpu:.2f} | {rss:.0f} |")
        ratio = cli[1][3] / cli[0][3]
        print(f"\nCPU with the default bootstrap / without: {ratio:.3f} (+{cli[1][3] - cli[0][3]:.2f} s)")


if __name__ == "__main__":
    main()
