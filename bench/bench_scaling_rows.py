"""Benchmark: ``metrics`` and ``agreement`` on 10^4 to 2 x 10^6 rating rows (issues 13 item 1 and 17).

Synthetic data set of N outputs built from the demo data: output ``i`` is demo row ``i % 121`` of copy
``i // 121``, whose reference and generation get one distinct appended sentence (see
:func:`bench_cli_scaling.variant_sentence`), so every copy's texts are distinct. Two judges (``judge_a``,
``judge_b``, kind ``llm``) rate every output on the five dimensions: ``e_ref``/``u_ref`` once per item (the same
value for each model of the item), ``e_gen``/``u_gen``/``ca`` per output; ``e_*`` are continuous in [0, 1]
(judge b = judge a plus noise, so interval alpha is exercised), ``u_*`` whole counts 0-6, ``ca`` 0/1. That is
10 rating rows per output: 10^6 rows = 100,000 outputs.

**The distancing cache is filled, not parsed** (parsing 400,000 texts cold takes hours on this machine): the
121 demo generations and 25 demo references are parsed for real with :func:`empathy.distancing.analyze`, and
each variant text's cache key (model, model version, rules version, sha256 of the variant text, exactly the
key :func:`~empathy.distancing.analyze` looks up) gets its template's result via
:meth:`~empathy.distancing.cache.DistancingCache.put_many`. The warm runs therefore measure everything but
parsing: reading and validating the files, hashing every text, the cache lookups (in a cache holding the
largest set's rows), loading the spaCy model, the metrics and the JSON output. The cache is filled once for
the largest size; smaller sets are prefixes of it.

Measured per size, each in a fresh process (wall, CPU of that child, its peak RSS):

* CLI ``python -m empathy metrics OUTPUTS --ratings A --ratings B --format json`` (warm cache);
* CLI ``python -m empathy agreement A B --format json``;
* Python API in one child per size: ``load_ratings`` (both files), ``text_features`` (warm cache),
  ``compute_metrics(features=...)``, ``pairwise_agreement``, ``krippendorff_by_dimension``: wall and CPU per
  step, then each step again under ``tracemalloc`` for its peak traced allocation (numpy and pandas buffers
  are traced).

Run: ``python bench/bench_scaling_rows.py [--outputs 1000 10000 100000 200000] [--repeats 1] [--no-api]``;
prints Markdown tables.
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
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
from bench_cli_scaling import DATA, ROOT, load, machine, run_child, variant_sentence

DEMO_ROWS = 121


def synthetic(n_outputs: int, folder: Path, seed: int = 0) -> tuple[Path, Path, Path]:
    """Write the outputs file and the two judges' rating files of ``n_outputs`` synthetic outputs."""
    demo = pd.read_csv(DATA / "outputs.csv", dtype=str, keep_default_na=False)
    index = np.arange(n_outputs)
    template = index % DEMO_ROWS
    copy = index // DEMO_ROWS
    sentences = pd.Series([variant_sentence(k) for k in range(int(copy.max()) + 1)])[copy].to_numpy()
    outputs = demo.iloc[template].reset_index(drop=True)
    suffix = pd.Series(copy).astype(str).radd("~")
    outputs["item_id"] = outputs["item_id"] + suffix
    outputs["reference"] = outputs["reference"] + sentences
    outputs["generation"] = outputs["generation"] + sentences
    out_path = folder / f"outputs_{n_outputs}.csv"
    outputs.to_csv(out_path, index=False)
    rng = np.random.default_rng(seed)
    items, item_of = np.unique(outputs["item_id"].to_numpy(), return_inverse=True)
    e_ref_a = rng.uniform(0.0, 1.0, len(items))
    u_ref_a = rng.integers(0, 7, len(items)).astype(float)
    e_gen_a = rng.uniform(0.0, 1.0, n_outputs)
    u_gen_a = rng.integers(0, 7, n_outputs).astype(float)
    ca_a = rng.integers(0, 2, n_outputs).astype(float)
    judges = {
        "judge_a": (e_ref_a, u_ref_a, e_gen_a, u_gen_a, ca_a),
        "judge_b": (np.clip(e_ref_a + rng.normal(0, 0.15, len(items)), 0, 1),
                    np.clip(u_ref_a + rng.integers(-1, 2, len(items)), 0, None),
                    np.clip(e_gen_a + rng.normal(0, 0.15, n_outputs), 0, 1),
                    np.clip(u_gen_a + rng.integers(-1, 2, n_outputs), 0, None),
                    np.where(rng.uniform(size=n_outputs) < 0.8, ca_a, 1 - ca_a)),
    }
    paths = []
    for rater, (e_ref, u_ref, e_gen, u_gen, ca) in judges.items():
        parts = [pd.DataFrame({"item_id": outputs["item_id"], "model": outputs["model"], "dimension": name,
                               "value": values})
                 for name, values in (("e_ref", e_ref[item_of]), ("u_ref", u_ref[item_of]), ("e_gen", e_gen),
                                      ("u_gen", u_gen), ("ca", ca))]
        ratings = pd.concat(parts, ignore_index=True)
        ratings.insert(2, "rater", rater)
        ratings["rater_kind"] = "llm"
        path = folder / f"ratings_{rater}_{n_outputs}.csv"
        ratings.to_csv(path, index=False, float_format="%.4f")
        paths.append(path)
    return out_path, paths[0], paths[1]


def fill_cache(n_outputs: int, cache_root: Path) -> tuple[int, float]:
    """Parse the demo texts for real, then store each variant text's template result under its own key.

    Returns the number of variant texts stored and the seconds the filling took.
    """
    os.environ["EMPATHY_CACHE_DIR"] = str(cache_root)
    from empathy.distancing import DistancingCache, analyze, model_info, resolve_model_name, text_key

    start = time.perf_counter()
    demo = pd.read_csv(DATA / "outputs.csv", dtype=str, keep_default_na=False)
    cache = DistancingCache()
    templates = list(pd.unique(pd.concat([demo["reference"], demo["generation"]], ignore_index=True)))
    parsed = dict(zip(templates, analyze(templates, cache=cache), strict=True))
    info = model_info(resolve_model_name(None))
    copies = -(-n_outputs // DEMO_ROWS)
    stored = 0
    for copy in range(copies):
        rows = demo.iloc[: min(DEMO_ROWS, n_outputs - copy * DEMO_ROWS)]
        sentence = variant_sentence(copy)
        texts = pd.unique(pd.concat([rows["reference"], rows["generation"]], ignore_index=True))
        cache.put_many(info["model"], info["version"], info["rules"],
                       ((text_key(text + sentence), parsed[text]) for text in texts))
        stored += len(texts)
    cache.close()
    return stored, time.perf_counter() - start


def _step(function: Callable[[], object]) -> tuple[object, float, float, float]:
    """Run ``function`` twice: timed, then under tracemalloc; (result, wall s, CPU s, peak traced MiB)."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = function()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    del result
    tracemalloc.start()
    result = function()
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return result, wall, cpu, peak


def api_child(outputs_path: str, ratings_a: str, ratings_b: str) -> None:
    """The Python API steps on one data set (run in a fresh process); prints one JSON object."""
    from empathy.agreement import krippendorff_by_dimension, pairwise_agreement
    from empathy.evaluate import compute_metrics, text_features
    from empathy.io import load_outputs, load_ratings

    outputs, _ = load_outputs(outputs_path)
    report: dict[str, object] = {}
    ratings, *report["load_ratings (2 files)"] = _step(  # type: ignore[misc]
        lambda: pd.concat([load_ratings(ratings_a), load_ratings(ratings_b)], ignore_index=True))
    features, *report["text_features (warm cache)"] = _step(lambda: text_features(outputs))  # type: ignore[misc]
    _, *report["compute_metrics (given features)"] = _step(  # type: ignore[misc]
        lambda: compute_metrics(outputs, ratings, features=features))
    _, *report["pairwise_agreement"] = _step(lambda: pairwise_agreement(ratings))  # type: ignore[misc]
    alphas, *report["krippendorff_by_dimension"] = _step(  # type: ignore[misc]
        lambda: krippendorff_by_dimension(ratings))
    report["rows"] = len(ratings)
    report["alpha"] = {str(r.dimension): [r.level, r.alpha] for r in alphas.itertuples()}  # type: ignore[union-attr]
    print(json.dumps(report))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outputs", type=int, nargs="+", default=[1000, 10_000, 100_000, 200_000])
    parser.add_argument("--no-api", action="store_true", help="only the CLI runs")
    parser.add_argument("--repeats", type=int, default=1, help="CLI runs per command and size (median reported)")
    parser.add_argument("--api-child", nargs=3, metavar=("OUTPUTS", "A", "B"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.api_child:
        api_child(*args.api_child)
        return
    python = sys.executable
    print(f"# {machine()}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        cache_root = folder / "cache"
        stored, seconds = fill_cache(max(args.outputs), cache_root)
        print(f"# cache filled: {stored:,} variant texts in {seconds:.1f} s ({load()})", flush=True)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "bench")]),
               "EMPATHY_CACHE_DIR": str(cache_root)}
        baseline = run_child([python, "-c", "pass"], env)
        print(f"# python -c pass: {baseline['wall']:.3f} s wall, {baseline['cpu']:.3f} s CPU, "
              f"{baseline['rss_mib']:.0f} MiB", flush=True)
        cli_rows, api_rows = [], []
        for n in sorted(args.outputs):
            outputs, ratings_a, ratings_b = synthetic(n, folder)
            commands = {
                "metrics": [python, "-m", "empathy", "metrics", str(outputs), "--ratings", str(ratings_a),
                            "--ratings", str(ratings_b), "--format", "json"],
                "agreement": [python, "-m", "empathy", "agreement", str(ratings_a), str(ratings_b),
                              "--format", "json"],
            }
            for name, command in commands.items():
                before = load()
                runs = []
                for _ in range(args.repeats):
                    run = run_child(command, env)
                    if run["rc"] != 0:
                        raise SystemExit(f"{name} at {n}: {run['stderr'].decode()[-2000:]}")  # type: ignore[union-attr]
                    runs.append(run)
                    print(f"# {name} {n:,} outputs: {run['wall']:.1f} s wall, {run['cpu']:.1f} s CPU, "
                          f"{run['rss_mib']:.0f} MiB ({load()})", flush=True)
                cli_rows.append((name, n, 10 * n, statistics.median(r["wall"] for r in runs),
                                 statistics.median(r["cpu"] for r in runs), max(r["rss_mib"] for r in runs), before))
            if not args.no_api:
                before = load()
                run = run_child([python, "-m", "bench_scaling_rows", "--api-child", str(outputs), str(ratings_a),
                                 str(ratings_b)], env)
                if run["rc"] != 0:
                    raise SystemExit(f"API at {n}: {run['stderr'].decode()[-2000:]}")  # type: ignore[union-attr]
                result = json.loads(run["stdout"])  # type: ignore[arg-type]
                api_rows.append((n, result, run["rss_mib"], before))
                print(f"# API {n:,}: {json.dumps(result)} peak RSS {run['rss_mib']:.0f} MiB", flush=True)
            for path in (outputs, ratings_a, ratings_b):
                path.unlink()
        # Every text the runs looked up was stored by fill_cache; a miss would have been parsed and added a row.
        from empathy.distancing import DistancingCache

        with DistancingCache(cache_root / "distancing") as cache:
            print(f"# cache rows after the runs: {len(cache):,} (filled: {stored:,} variants + the parsed "
                  "templates; more would mean texts were parsed during the runs)", flush=True)
    print(f"# end: {load()}")
    print()
    print("| command | outputs | rating rows | wall (s) | CPU (s) | peak RSS (MiB) | load avg before |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for name, n, rows, wall, cpu, rss, before in cli_rows:
        print(f"| {name} | {n:,} | {rows:,} | {wall:.2f} | {cpu:.2f} | {rss:.0f} | "
              f"{before.removeprefix('load average ')} |")
    if api_rows:
        print()
        print("| rating rows | step | wall (s) | CPU (s) | peak traced (MiB) |")
        print("|---:|---|---:|---:|---:|")
        for _n, result, rss, _ in api_rows:
            for step, value in result.items():
                if isinstance(value, list) and len(value) == 3:
                    print(f"| {result['rows']:,} | {step} | {value[0]:.3f} | {value[1]:.3f} | {value[2]:.1f} |")
            print(f"| {result['rows']:,} | (whole child: peak RSS {rss:.0f} MiB) | | | |")


if __name__ == "__main__":
    main()
