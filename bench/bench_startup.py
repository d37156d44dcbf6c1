"""Benchmark: how fast the command line answers when it has nothing heavy to do.

``python -m empathy --version``, ``--help`` and an error on an empty outputs file, each timed as a fresh
process against ``python -c pass`` (the interpreter's own start-up) measured in the same run, interleaved, and
reported as medians over ``--runs`` runs: wall time, CPU time (user + system of the child) and the ratio to the
baseline. Two reference rows show what the commands would cost if they imported up front: pandas alone (every
command that reads a file needs it) and the libraries the old CLI imported before parsing its arguments
(spaCy, SciPy, openai, pandas).

Run: ``python bench/bench_startup.py [--runs 15]``; prints a Markdown table, the machine and the load average.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _cases(empty: Path) -> dict[str, list[str]]:
    python = sys.executable
    return {
        "python -c pass (baseline)": [python, "-c", "pass"],
        "empathy --version": [python, "-m", "empathy", "--version"],
        "empathy --help": [python, "-m", "empathy", "--help"],
        "empathy metrics EMPTY.csv (error, exit 2)": [python, "-m", "empathy", "metrics", str(empty)],
        "empathy metrics --format yaml (usage error)": [python, "-m", "empathy", "metrics", str(empty),
                                                        "--format", "yaml"],
        "reference: python -c 'import pandas'": [python, "-c", "import pandas"],
        "reference: import spacy, scipy.stats, openai, pandas (old eager CLI)":
            [python, "-c", "import spacy, scipy.stats, openai, pandas"],
    }


def _run_once(command: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, env=env, cwd=ROOT)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryDirectory() as folder:
        empty = Path(folder) / "empty.csv"
        empty.write_text("")
        cases = _cases(empty)
        walls: dict[str, list[float]] = {name: [] for name in cases}
        cpus: dict[str, list[float]] = {name: [] for name in cases}
        codes: dict[str, int] = {}
        for name, command in cases.items():  # warm the file cache once
            codes[name] = _run_once(command, env)[2]
        for _ in range(args.runs):  # interleaved, so load changes hit every case alike
            for name, command in cases.items():
                wall, cpu, _ = _run_once(command, env)
                walls[name].append(wall)
                cpus[name].append(cpu)
    base_wall = statistics.median(walls["python -c pass (baseline)"])
    base_cpu = statistics.median(cpus["python -c pass (baseline)"])
    print(f"{args.runs} runs each, interleaved; medians. Python {platform.python_version()}, "
          f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.platform()}; "
          f"load average {' / '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
    print("| command | exit | wall ms | CPU ms | wall / baseline | CPU / baseline |")
    print("|---|---|---|---|---|---|")
    for name in cases:
        wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        print(f"| {name} | {codes[name]} | {wall * 1000:.0f} | {cpu * 1000:.0f} | {wall / base_wall:.1f}x | "
              f"{cpu / base_cpu:.1f}x |")


if __name__ == "__main__":
    main()
