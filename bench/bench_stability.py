"""Timing of :func:`empathy.stability.sample_size_stability` at the paper's Table 7 scale and beyond.

Usage::

    python bench/bench_stability.py [--repeat 3]

Synthetic per-item terms (no data needed): 200 items x 10 models, sizes 50/100/150/200 (Table 7), 200
resamples, for the ``mean`` and the ``spearman`` (against a reference column) statistics; then 2,000 items.
Prints the best of ``--repeat`` runs in seconds. Kept short: the machine is shared.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from machine import best_of

from empathy.stability import sample_size_stability


def _terms(n_items: int, n_models: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    data = {f"model{k}": rng.normal(0.3 + 0.02 * k, 0.3, n_items) for k in range(n_models)}
    data["reference"] = rng.normal(0.4, 0.3, n_items)
    return pd.DataFrame(data)


def main(argv: list[str] | None = None) -> int:
    """Print the timings."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    cases = [
        ("Table 7 scale, mean", 200, [50, 100, 150, 200], "mean"),
        ("Table 7 scale, spearman vs reference", 200, [50, 100, 150, 200], "spearman"),
        ("2,000 items, mean", 2000, [500, 1000, 1500, 2000], "mean"),
    ]
    print("| case | items x models | sizes | resamples | seconds |")
    print("| --- | --- | --- | --- | --- |")
    for label, n_items, sizes, statistic in cases:
        data = _terms(n_items, 10)
        if statistic == "mean":
            data = data.drop(columns="reference")
        seconds = best_of(args.repeat, sample_size_stability, values_by_unit=data, sizes=sizes, n_resamples=200, seed=0,
                        statistic=statistic, reference="reference" if statistic == "spearman" else None)
        print(f"| {label} | {n_items} x 10 | {','.join(map(str, sizes))} | 200 | {seconds:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
