"""Benchmark: full metrics recompute at paper scale and at 100x, against a naive per-group baseline.

Paper scale (Section 4.4): 10 models x 3 judges x 200 items, five judge dimensions per item. The 100x case
has 20,000 items per model (3 million rating rows). Text features (sentence counts, distancing densities)
are computed once and cached by the app and the CLI, so both runs start from ratings + features, which is
what a recompute after a human override costs.

The baseline, measured in the same run, is the straightforward implementation: for every (model, judge)
filter the long table with boolean masks and call the aggregate metric functions of ``empathy.metrics``.

Run: ``python bench/bench_metrics.py [--repeats 5]``; prints a Markdown table for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import numpy as np
import pandas as pd

from empathy import metrics as m
from empathy.evaluate import TextFeatures, compute_metrics

SEED = 20261129


def synthetic(n_models: int, n_judges: int, n_items: int, seed: int = SEED) -> tuple[pd.DataFrame, pd.DataFrame,
                                                                                         TextFeatures]:
    rng = np.random.default_rng(seed)
    models = [f"model-{i:02d}" for i in range(n_models)]
    judges = [f"judge-{j}" for j in range(n_judges)]
    items = [f"item-{i:05d}" for i in range(n_items)]
    outputs = pd.DataFrame({"item_id": np.tile(items, n_models), "model": np.repeat(models, n_items),
                            "task": "counseling"})
    outputs["reference"] = ""
    outputs["generation"] = ""
    n = len(outputs)
    features = TextFeatures(rng.integers(1, 8, n).astype(float), rng.integers(1, 8, n).astype(float),
                            rng.gamma(2, 0.2, (n, 3)), rng.gamma(2, 0.2, (n, 3)), "bench")
    frames = []
    for judge in judges:
        values = {
            "e_ref": rng.uniform(0.05, 1, n), "e_gen": rng.uniform(0, 1, n),
            "u_ref": rng.integers(0, 6, n).astype(float), "u_gen": rng.integers(0, 6, n).astype(float),
            "ca": rng.integers(0, 2, n).astype(float),
        }
        values["ca"][rng.random(n) < 0.01] = np.nan  # a few failed judge calls
        for dimension, column in values.items():
            frames.append(pd.DataFrame({"item_id": outputs["item_id"], "model": outputs["model"], "rater": judge,
                                        "dimension": dimension, "value": column}))
    ratings = pd.concat(frames, ignore_index=True)
    ratings["rater_kind"] = "llm"
    ratings["reason"] = ""
    ratings["signature"] = "bench"
    return outputs, ratings, features


def naive(outputs: pd.DataFrame, ratings: pd.DataFrame, features: TextFeatures) -> list[m.MetricResult]:
    results = []
    keyed_sentences = features.frame(outputs).set_index(["item_id", "model"])
    for model in outputs["model"].unique():
        mask_o = (outputs["model"] == model).to_numpy()
        for judge in ratings["rater"].unique():
            sub = ratings[(ratings["model"] == model) & (ratings["rater"] == judge)]

            def get(dimension: str, part: pd.DataFrame = sub) -> pd.Series:
                return part[part["dimension"] == dimension].set_index("item_id")["value"]

            e_ref, e_gen = get("e_ref").align(get("e_gen"))
            results.append(m.sentiment_attenuation(e_ref, e_gen))
            u_ref, u_gen = get("u_ref").align(get("u_gen"))
            sentences = keyed_sentences.xs(model, level="model").loc[u_ref.index]
            results.append(m.granularity_mismatch(u_ref, u_gen, sentences["sentences_ref"],
                                                  sentences["sentences_gen"]))
            results.append(m.conflict_avoidance(get("ca")))
        results.append(m.linguistic_distancing(features.densities_ref[mask_o], features.densities_gen[mask_o]))
    return results


def timed(function, repeats: int) -> float:
    durations = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        durations.append(time.perf_counter() - start)
    return statistics.median(durations)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, {platform.system()}, python "
          f"{platform.python_version()}, pandas {pd.__version__}, numpy {np.__version__}")
    print("| case | rating rows | empathy.evaluate (median) | naive per-group loop | ratio (ours / naive) |")
    print("|---|---:|---:|---:|---:|")
    for label, n_items, repeats in (("paper scale: 10 models x 3 judges x 200 items", 200, args.repeats),
                                    ("100x: 10 models x 3 judges x 20,000 items", 20_000, max(1, args.repeats // 2))):
        outputs, ratings, features = synthetic(10, 3, n_items)
        ours = timed(lambda o=outputs, r=ratings, f=features: compute_metrics(o, r, features=f), repeats)
        baseline = timed(lambda o=outputs, r=ratings, f=features: naive(o, r, f), repeats)
        # same numbers both ways: the benchmark compares like with like
        table = compute_metrics(outputs, ratings, features=features).table
        reference = naive(outputs, ratings, features)
        ours_sa = table.query("metric == 'SA'").sort_values(["model", "scorer"])["value"].to_numpy()
        naive_sa = np.array([r.value for r in reference if r.metric == "SA"])
        assert np.allclose(np.sort(ours_sa), np.sort(naive_sa)), "implementations disagree"
        print(f"| {label} | {len(ratings):,} | {ours * 1000:.1f} ms | {baseline * 1000:.1f} ms | "
              f"{ours / baseline:.3f} |")


if __name__ == "__main__":
    main()
