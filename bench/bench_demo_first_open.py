"""Benchmark: what the generated demo costs on first open, against the bundled hand-written demo.

The first open of a data set parses every distinct text with spaCy (the distancing detectors and the sentence
counts of Eq. 2); later opens read the parses from the cache. Both are timed here as what a researcher runs,
``python -m empathy metrics outputs.csv --ratings ratings_author.csv --ratings ratings_lexicon.csv``, each run a
fresh process: *cold* with an empty ``$EMPATHY_CACHE_DIR`` (the first open), *warm* with the cache the cold run
filled. The baseline is the bundled demo (``data/``, 121 outputs), measured in the same run, interleaved with
the generated demo (``scripts/make_demo.py``, written to a temporary folder first unless ``--demo`` names one).
Reported: medians of wall time and CPU time (user + system of the child) and the ratios to the baseline's cold
run.

Run: ``python bench/bench_demo_first_open.py [--runs 5] [--demo DIR]``; prints a Markdown table, the machine
and the load average.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import machine

ROOT = Path(__file__).resolve().parent.parent


def _command(folder: Path) -> list[str]:
    return [sys.executable, "-m", "empathy", "metrics", str(folder / "outputs.csv"),
            "--ratings", str(folder / "ratings_author.csv"), "--ratings", str(folder / "ratings_lexicon.csv"),
            "--format", "json"]


def _run(command: list[str], cache: Path) -> tuple[float, float]:
    env = {**os.environ, "EMPATHY_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env=env, cwd=ROOT)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _texts(folder: Path) -> tuple[int, int]:
    import pandas as pd

    outputs = pd.read_csv(folder / "outputs.csv")
    return len(outputs), len(set(outputs["reference"]) | set(outputs["generation"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--demo", type=Path, help="an already generated demo folder")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        demo = args.demo
        if demo is None:
            demo = Path(scratch) / "demo"
            subprocess.run([sys.executable, str(ROOT / "scripts" / "make_demo.py"), "--out", str(demo)], check=True,
                           capture_output=True, cwd=ROOT)
        cases = {"bundled demo (data/, baseline)": ROOT / "data", "generated demo (scripts/make_demo.py)": demo}
        times: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for run in range(args.runs):  # interleaved, so load changes hit every case alike
            for index, (name, folder) in enumerate(cases.items()):
                cache = Path(scratch) / f"cache-{run}-{index}"
                times.setdefault((name, "cold"), []).append(_run(_command(folder), cache))
                times.setdefault((name, "warm"), []).append(_run(_command(folder), cache))
    medians = {key: (statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs))
               for key, runs in times.items()}
    base_wall, base_cpu = medians[("bundled demo (data/, baseline)", "cold")]
    print(f"{args.runs} runs each, interleaved; medians. {machine()}; "
          f"load average {' / '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
    print("| data set | outputs | distinct texts | open | wall s | CPU s | wall / baseline | CPU / baseline |")
    print("|---|---:|---:|---|---:|---:|---:|---:|")
    for (name, state), (wall, cpu) in medians.items():
        outputs, texts = _texts(cases[name])
        print(f"| {name} | {outputs} | {texts} | {state} | {wall:.1f} | {cpu:.1f} | {wall / base_wall:.2f} | "
              f"{cpu / base_cpu:.2f} |")


if __name__ == "__main__":
    main()
