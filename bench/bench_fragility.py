"""Benchmark: ranking fragility (:func:`empathy.fragility.fragility`) against one metric evaluation, by size.

Scale: 10 models x 3 judges x N items (every judge rating e_ref, e_gen, u_ref, u_gen and ca: 150 N rating rows),
N = 100, 400, 1600, 6400. For each size, in the same process and alternating: the plan's
:meth:`empathy.evaluate.MetricPlan.evaluate` (the baseline: one results table) and ``fragility(plan)`` (every
adjacent pair of every SA, EGM and CA ranking, leave-one-out influence, the by-influence order, SA ratio of
means). Reported: medians, their ratio, and the fragility time per rating row, which stays flat when the cost is
linear in the input. Synthetic sentence counts stand in for spaCy (text analysis is cached once per data set).

Run: ``python bench/bench_fragility.py [--repeats 5]``; prints a Markdown table.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bench_recompute import synthetic  # noqa: E402
from empathy.evaluate import plan_metrics  # noqa: E402
from empathy.fragility import fragility  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sizes", default="100,400,1600,6400")
    args = parser.parse_args()
    print(f"machine: {platform.machine()} {platform.processor() or ''} · python {platform.python_version()} · "
          f"load average {os.getloadavg()[0]:.2f}")
    print("\n| items | rating rows | evaluate (ms) | fragility (ms) | ratio | fragility us / row |")
    print("|---|---|---|---|---|---|")
    for size in (int(s) for s in args.sizes.split(",")):
        outputs, ratings, features = synthetic(n_items=size)
        plan = plan_metrics(outputs, ratings, features=features, include_ld=False)
        fragility(plan)  # warm-up
        base, frag = [], []
        for _ in range(args.repeats):
            start = time.perf_counter()
            plan.evaluate()
            base.append(time.perf_counter() - start)
            start = time.perf_counter()
            fragility(plan)
            frag.append(time.perf_counter() - start)
        b, f = statistics.median(base), statistics.median(frag)
        print(f"| {size} | {len(ratings):,} | {b * 1e3:.1f} | {f * 1e3:.1f} | {f / b:.1f} | "
              f"{f / len(ratings) * 1e6:.2f} |")
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
