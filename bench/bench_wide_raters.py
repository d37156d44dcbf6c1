"""Benchmark: ``metrics --no-ld --resamples 0`` on wide inputs with many raters (2 rows per model, a ``<rater>:ca``
column per rater), and a 2-row file with 100,000 rating columns.

Each size is a fresh process on a fresh cache folder; the figures are wall and CPU seconds of that child
(``os.wait4``) and the number of Table 6 rows it printed. Baselines in the same run: ``python -c pass`` and the
smallest size. With the pairs table capped at ``MAX_PAIRED_SCORERS`` judges the cost past the cap should grow
about linearly in the raters (every rater is still scored), where uncapped it grew with the square.

Run: ``python bench/bench_wide_raters.py [--raters 10 125 250 500 1000] [--wide-columns 100000]``; prints a
Markdown table, the machine and the load averages.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import cpu_model

ROOT = Path(__file__).resolve().parent.parent


def write_wide(path: Path, n_raters: int, *, items: int = 2, models: int = 3) -> None:
    """``items`` x ``models`` outputs, each with a 0/1 CA label from every one of ``n_raters`` raters."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["item_id", "model", "reference", "generation", *(f"r{k:05d}:ca" for k in range(n_raters))])
        for i in range(items):
            for m in range(models):
                writer.writerow([f"i{i}", f"m{m}", "I lost my job.", "That sounds hard.",
                                 *(((i * 7 + m * 3 + k) % 5 == 0) * 1 for k in range(n_raters))])


def run(args: list[str], cache: Path) -> tuple[float, float, str, int]:
    """Wall seconds, CPU seconds, stdout and the exit code of one child process."""
    start = time.perf_counter()
    child = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                             env={**os.environ, "EMPATHY_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)})
    out = child.stdout.read() if child.stdout else ""
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    return wall, usage.ru_utime + usage.ru_stime, out, os.waitstatus_to_exitcode(status)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--raters", type=int, nargs="+", default=[10, 125, 250, 500, 1000])
    parser.add_argument("--wide-columns", type=int, default=100_000)
    options = parser.parse_args()
    python = sys.executable
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        empty_wall, empty_cpu, _, _ = run([python, "-c", "pass"], base / "c0")
        print(f"# machine: {cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
              f"python -c pass: {empty_wall:.2f} s wall")
        print("\n| raters | rows | wall s | CPU s | x smallest (CPU) | Table 6 rows | exit |")
        print("|---|---|---|---|---|---|---|")
        smallest = None
        sizes = [(n, 2) for n in options.raters] + ([(options.wide_columns, 1)] if options.wide_columns else [])
        for n_raters, items in sizes:
            path = base / f"wide-{n_raters}-{items}.csv"
            write_wide(path, n_raters, items=items, models=2 if items == 1 else 3)
            wall, cpu, out, code = run([python, "-m", "empathy", "metrics", str(path), "--no-ld", "--resamples", "0",
                                        "--format", "json"], base / f"c{n_raters}")
            rows = len(json.loads(out)["agreement"]) if code == 0 else 0
            smallest = smallest or cpu
            print(f"| {n_raters:,} | {items * (2 if items == 1 else 3)} | {wall:.2f} | {cpu:.2f} | "
                  f"{cpu / smallest:.1f} | {rows:,} | {code} |")
        print(f"\n# load average at the end: {', '.join(f'{v:.2f}' for v in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
