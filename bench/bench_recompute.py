"""Benchmark: the app's live recompute after a human override, at the paper's scale.

Scale: 10 models x 3 judges x 200 items, every judge rating e_ref, e_gen, u_ref, u_gen and ca (30,000 rating
rows), with 50 overrides in the SQLite store. What one rerun of an app page does after an override:

1. read the data set's overrides from SQLite (:meth:`empathy.store.OverrideStore.overrides`);
2. recompute every metric, ranking input and inter-judge Spearman (:meth:`empathy.review.Recompute.report`).

Text analysis (spaCy) is not part of the recompute: it depends on the texts only and is cached once per data
set, so synthetic sentence counts and densities stand in for it. For comparison the full
:func:`empathy.evaluate.compute_metrics` on the effective ratings is timed too.

Run: ``python bench/bench_recompute.py [--repeats 30]``; prints a Markdown table.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from empathy.evaluate import TextFeatures, compute_metrics
from empathy.review import Recompute
from empathy.store import Change, OverrideStore, apply_overrides, dataset_id

TARGET_MS = 50.0


def synthetic(n_models: int = 10, n_judges: int = 3, n_items: int = 200, seed: int = 0
              ) -> tuple[pd.DataFrame, pd.DataFrame, TextFeatures]:
    """Outputs, long ratings and text features of the paper's scale."""
    rng = np.random.default_rng(seed)
    models = [f"model-{i}" for i in range(n_models)]
    items = [f"item-{k:03d}" for k in range(n_items)]
    outputs = pd.DataFrame([(i, m, "counseling", f"ref {i}", f"gen {i} {m}") for m in models for i in items],
                           columns=["item_id", "model", "task", "reference", "generation"])
    size = n_models * n_items
    parts = []
    for j in range(n_judges):
        values = {"e_ref": rng.random(size), "e_gen": rng.random(size), "u_ref": rng.integers(0, 5, size),
                  "u_gen": rng.integers(0, 5, size), "ca": rng.integers(0, 2, size)}
        for dimension, column in values.items():
            parts.append(pd.DataFrame({"item_id": outputs["item_id"], "model": outputs["model"],
                                       "rater": f"judge-{j}", "dimension": dimension,
                                       "value": np.asarray(column, dtype=float)}))
    ratings = pd.concat(parts, ignore_index=True).assign(rater_kind="llm", reason="", signature="bench")
    n = len(outputs)
    features = TextFeatures(rng.integers(1, 9, n).astype(float), rng.integers(1, 9, n).astype(float),
                            rng.random((n, 3)), rng.random((n, 3)), "bench-analyser")
    return outputs, ratings, features


def _time(function, repeats: int) -> list[float]:
    function()  # warm-up
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--overrides", type=int, default=50)
    args = parser.parse_args()
    outputs, ratings, features = synthetic()
    key = dataset_id(outputs)
    rng = np.random.default_rng(1)
    with tempfile.TemporaryDirectory() as folder:
        store = OverrideStore(Path(folder) / "bench.sqlite")
        picks = ratings[ratings["dimension"] == "ca"].sample(args.overrides, random_state=1)
        for row in picks.itertuples():
            store.set_overrides(key, [Change(row.item_id, row.model, row.rater, "ca", float(rng.integers(0, 2)))],
                                annotator="bench")
        start = time.perf_counter()
        engine = Recompute(outputs, ratings, features)
        prepare_ms = (time.perf_counter() - start) * 1000

        def rerun() -> None:
            engine.report(store.overrides(key))

        def read_only() -> None:
            store.overrides(key)

        def full() -> None:
            current = store.overrides(key)
            compute_metrics(outputs, apply_overrides(ratings, current), features=features,
                            n_overrides=len(current))

        def write_one() -> None:
            store.set_override(key, "item-000", "model-0", "judge-0", "ca", 1.0, annotator="bench")

        rows = [("SQLite write of one override (committed, synchronous=FULL)", _time(write_one, args.repeats)),
                ("SQLite read of the overrides", _time(read_only, args.repeats)),
                ("**App recompute after an override** (read + Recompute.report)", _time(rerun, args.repeats)),
                ("Full compute_metrics on effective ratings (reference path)", _time(full, max(5, args.repeats // 3)))]
        check = engine.report(store.overrides(key))
        reference = compute_metrics(outputs, apply_overrides(ratings, store.overrides(key)), features=features,
                                    n_overrides=store.count(key))
        pd.testing.assert_frame_equal(check.table, reference.table, check_exact=False, rtol=1e-12, atol=1e-12)
    print(f"Scale: {outputs['model'].nunique()} models x {ratings['rater'].nunique()} judges x "
          f"{outputs['item_id'].nunique()} items ({len(ratings)} rating rows), {args.overrides} overrides; "
          f"{args.repeats} repeats; Python {platform.python_version()}, pandas {pd.__version__}, "
          f"{platform.machine()}.")
    print(f"One-off preparation per data set (Recompute.__init__): {prepare_ms:.1f} ms.\n")
    print("| step | median ms | p95 ms | max ms |")
    print("|---|---:|---:|---:|")
    for name, samples in rows:
        ordered = sorted(samples)
        p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
        print(f"| {name} | {statistics.median(samples):.1f} | {p95:.1f} | {max(samples):.1f} |")
    recompute = statistics.median(rows[2][1])
    verdict = "meets" if recompute < TARGET_MS else "MISSES"
    print(f"\nRecompute median {recompute:.1f} ms {verdict} the {TARGET_MS:.0f} ms target; the fast path's table "
          "equals compute_metrics (checked above).")


if __name__ == "__main__":
    main()
