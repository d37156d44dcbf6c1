"""Benchmark: what the app's progress-reporting text analysis costs against the plain one.

The app parses in rounds of 128 texts (``batch_size=32``), each stored in the distancing cache before the next,
and reports every text to a :class:`empathy.progress.Tracker` (so a bar shows counts and an ETA, and a click
elsewhere loses at most one round). Baseline, measured in the same run: ``analyze`` as the command line calls it
(``batch_size=256``: rounds of 1,024 texts) without a progress callback. Both parse the same fresh texts (the
demo's texts with a numbered suffix, so none is cached) into a fresh cache; the variants alternate, and the
median of ``--repeats`` is reported.

Run: ``python bench/bench_progress_rounds.py [--copies 3] [--repeats 3]``; prints a Markdown table.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pandas as pd  # noqa: E402

from empathy.distancing import DistancingCache, analyze  # noqa: E402
from empathy.paths import DEMO_DIR  # noqa: E402
from empathy.progress import Tracker  # noqa: E402


def _texts(copies: int, tag: str) -> list[str]:
    outputs = pd.read_csv(DEMO_DIR / "outputs.csv", keep_default_na=False)
    base = list(pd.unique(pd.concat([outputs["reference"], outputs["generation"]], ignore_index=True)))
    return [f"{text} ({tag} {k})" for k in range(copies) for text in base]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=3, help="copies of the demo's 146 distinct texts")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    list(analyze(["Warm-up: the model loads once."], cache=False))
    before = os.getloadavg()
    times: dict[str, list[float]] = {"plain": [], "app": []}
    reports: list[int] = []
    with tempfile.TemporaryDirectory() as folder:
        for repeat in range(args.repeats):
            for variant in (("plain", "app") if repeat % 2 == 0 else ("app", "plain")):
                texts = _texts(args.copies, f"{variant}-{repeat}")  # fresh texts: nothing is cached
                cache = DistancingCache(Path(folder) / f"{variant}-{repeat}.sqlite")
                start = time.perf_counter()
                if variant == "plain":
                    list(analyze(texts, cache=cache))
                else:
                    calls: list[int] = []
                    tracker = Tracker(len(texts), lambda progress, calls=calls: calls.append(progress.done),
                                      stage="texts", min_interval=0.25)
                    tracker.start()
                    list(analyze(texts, cache=cache, batch_size=32, progress=tracker.advance))
                    reports.append(len(calls))
                times[variant].append(time.perf_counter() - start)
    after = os.getloadavg()
    plain, app = statistics.median(times["plain"]), statistics.median(times["app"])
    count = len(_texts(args.copies, "x"))
    print(f"Machine: {platform.machine()}, {os.cpu_count()} logical CPUs, Python {platform.python_version()}; load "
          f"average {before[0]:.1f}/{before[1]:.1f}/{before[2]:.1f} before, {after[0]:.1f}/{after[1]:.1f}/"
          f"{after[2]:.1f} after. {count} fresh texts, median of {args.repeats}.\n")
    print("| variant | median s | runs (s) | ratio to plain |")
    print("|---|---:|---|---:|")
    print(f"| plain `analyze` (rounds of 1,024, no callback) | {plain:.2f} | "
          f"{', '.join(f'{t:.2f}' for t in times['plain'])} | 1.00 |")
    print(f"| app: rounds of 128, Tracker per text | {app:.2f} | {', '.join(f'{t:.2f}' for t in times['app'])} | "
          f"{app / plain:.2f} |")
    print(f"\nReports drawn per app run (at most 4 a second): median {statistics.median(reports):.0f}.")


if __name__ == "__main__":
    main()
