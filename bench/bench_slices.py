"""Scaling of :func:`empathy.slices.slice_map`: time against outputs x permutations (issue 12).

Usage::

    python bench/bench_slices.py [--repeat 3]

Synthetic data (no spaCy, no data files): n outputs with 3 judges each, 12 numeric features and a task, binary
disagreement events; three quantile bins per feature. The baseline is 1,000 outputs x 200 permutations,
measured in the same run; every other case is reported as a ratio to it, beside the ratio of outputs x
permutations (the cost the design promises to be linear in). Prints a Markdown table with the machine and
load average.
"""

from __future__ import annotations

import argparse
import os
import platform

import numpy as np
import pandas as pd
from machine import best_of

from empathy.slices import slice_map

N_FEATURES = 12


def _data(n_outputs: int, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    features = pd.DataFrame({"item_id": [str(i) for i in range(n_outputs)], "model": "m"})
    for k in range(N_FEATURES):
        features[f"f{k}"] = rng.gamma(1.0 + k % 3, 1.0, n_outputs)
    features["task"] = rng.choice(["news", "story", "support"], n_outputs)
    events = pd.DataFrame({"item_id": np.repeat(features["item_id"].to_numpy(), 3), "model": "m",
                           "judge": np.tile(["a", "b", "c"], n_outputs),
                           "event": (rng.random(3 * n_outputs) < 0.25).astype(int)})
    return features, events


def _best(repeat: int, features: pd.DataFrame, events: pd.DataFrame, permutations: int) -> float:
    names = [f"f{k}" for k in range(N_FEATURES)] + ["task"]
    return best_of(repeat, slice_map, features, events, outcome="judge_human", dimension="ca", feature_names=names,
                   n_permutations=permutations, seed=0)


def main(argv: list[str] | None = None) -> int:
    """Print the timings as a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    cases = [(1000, 200), (2000, 200), (4000, 200), (8000, 200), (1000, 400), (1000, 800), (4000, 800)]
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
          f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print()
    print("| outputs | permutations | seconds | ratio to baseline | outputs x permutations ratio |")
    print("| --- | --- | --- | --- | --- |")
    base = None
    for n_outputs, permutations in cases:
        features, events = _data(n_outputs)
        seconds = _best(args.repeat, features, events, permutations)
        if base is None:
            base = seconds
        work = (n_outputs * permutations) / (cases[0][0] * cases[0][1])
        print(f"| {n_outputs:,} | {permutations:,} | {seconds:.3f} | {seconds / base:.2f} | {work:.0f} |")
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
