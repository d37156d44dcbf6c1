"""Benchmark: what the shipped demo costs on first open, against the first, hand-written demo.

The first open of a data set parses every distinct text with spaCy (the distancing detectors and the sentence
counts of Eq. 2); later opens read the parses from the cache. Both are timed here as what a researcher runs,
``python -m empathy metrics outputs.csv --ratings ratings_author.csv --ratings ratings_lexicon.csv``, each run a
fresh process: *cold* with an empty ``$EMPATHY_CACHE_DIR`` (the first open), *warm* with the cache the cold run
filled. The baseline is the first demo (``tests/demo_v1/data/``, 121 outputs, the demo ``data/`` held until
issue 26), measured in the same run, interleaved with the shipped demo (``data/``, written by
``scripts/make_demo.py``; ``--demo DIR`` measures another folder instead). Reported: medians of wall time and CPU
time (user + system of the child) and the ratios to the baseline's cold run.

``--app`` also times the app itself, as a researcher first opens it: ``streamlit run app.py`` with the demo folder
as its demo (``$EMPATHY_DEMO_DIR``), an empty cache and store, started and healthy before the clock starts; a
headless Chromium then opens the home page (timed until the data set's summary is drawn and the script is idle)
and then the Overview (timed until its metric table is drawn and the script is idle: the first page that needs
every text parsed). Each run is a fresh server, the two demos interleaved.

Run: ``python bench/bench_demo_first_open.py [--runs 5] [--demo DIR] [--app] [--app-runs 3]``; prints Markdown
tables, the machine and the load average.
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
BASELINE = "first demo (tests/demo_v1/data/, baseline)"


def _shown(folder: Path) -> str:
    try:
        return f"{folder.resolve().relative_to(ROOT)}/"
    except ValueError:
        return str(folder)


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


def _app_open(folder: Path, scratch: Path) -> tuple[float, float]:
    """Seconds from opening the home page to its data summary, then from opening the Overview to its table, on a
    fresh app whose demo is ``folder`` (empty cache, store and settings)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from browser_support import chromium, running_app, settle

    scratch.mkdir(parents=True)
    env = {"EMPATHY_DEMO_DIR": str(folder), "EMPATHY_CACHE_DIR": str(scratch / "cache"),
           "EMPATHY_STORE": str(scratch / "overrides.sqlite"), "EMPATHY_SETTINGS": str(scratch / "settings.json")}
    with running_app(env, scratch / "streamlit.log") as url, chromium() as browser:
        tab = browser.new_context(viewport={"width": 1440, "height": 1600}).new_page()
        start = time.perf_counter()
        tab.goto(url)
        settle(tab, "Outputs", timeout=600_000)
        home = time.perf_counter() - start
        start = time.perf_counter()
        tab.goto(f"{url}/Overview")
        settle(tab, "Values with 95 % intervals", timeout=600_000)
        overview = time.perf_counter() - start
    return home, overview


def _texts(folder: Path) -> tuple[int, int]:
    import pandas as pd

    outputs = pd.read_csv(folder / "outputs.csv")
    return len(outputs), len(set(outputs["reference"]) | set(outputs["generation"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--demo", type=Path, default=ROOT / "data",
                        help="the demo folder to measure (default: the shipped data/)")
    parser.add_argument("--app", action="store_true", help="also time the app's first open in Chromium")
    parser.add_argument("--app-runs", type=int, default=3)
    args = parser.parse_args()
    cases = {BASELINE: ROOT / "tests" / "demo_v1" / "data", f"shipped demo ({_shown(args.demo)})": args.demo}
    with tempfile.TemporaryDirectory() as scratch:
        times: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for run in range(args.runs):  # interleaved, so load changes hit every case alike
            for index, (name, folder) in enumerate(cases.items()):
                cache = Path(scratch) / f"cache-{run}-{index}"
                times.setdefault((name, "cold"), []).append(_run(_command(folder), cache))
                times.setdefault((name, "warm"), []).append(_run(_command(folder), cache))
    medians = {key: (statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs))
               for key, runs in times.items()}
    base_wall, base_cpu = medians[(BASELINE, "cold")]
    print(f"{args.runs} runs each, interleaved; medians. {machine()}; "
          f"load average {' / '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
    print("| data set | outputs | distinct texts | open | wall s | CPU s | wall / baseline | CPU / baseline |")
    print("|---|---:|---:|---|---:|---:|---:|---:|")
    for (name, state), (wall, cpu) in medians.items():
        outputs, texts = _texts(cases[name])
        print(f"| {name} | {outputs} | {texts} | {state} | {wall:.1f} | {cpu:.1f} | {wall / base_wall:.2f} | "
              f"{cpu / base_cpu:.2f} |")
    if args.app:
        _app_table(cases, args.app_runs)


def _app_table(cases: dict[str, Path], runs: int) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        opens: dict[str, list[tuple[float, float]]] = {}
        for run in range(runs):  # interleaved, a fresh server and an empty cache every time
            for index, (name, folder) in enumerate(cases.items()):
                opens.setdefault(name, []).append(_app_open(folder, Path(scratch) / f"app-{run}-{index}"))
    medians = {name: (statistics.median(h for h, _ in values), statistics.median(o for _, o in values))
               for name, values in opens.items()}
    base_home, base_overview = medians[BASELINE]
    print(f"\nThe app, first open in Chromium: {runs} runs each, interleaved; medians. "
          f"Load average {' / '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
    print("| data set | home page s | Overview s | home / baseline | Overview / baseline |")
    print("|---|---:|---:|---:|---:|")
    for name, (home, overview) in medians.items():
        print(f"| {name} | {home:.1f} | {overview:.1f} | {home / base_home:.2f} | {overview / base_overview:.2f} |")


if __name__ == "__main__":
    main()
