"""Benchmark: ``python -m empathy audit draw`` with and without ``--store`` against the number of drawn outputs.

One synthetic data set (``--models`` models x ``--items`` items, one short reference and generation each, a judge
``bench-judge`` rating every output on ``ca`` with 0 or 1) is written once; the frame is therefore the same for
every size and only the number of drawn outputs changes. For each ``--per-model`` the command runs as a fresh
process without ``--store`` and with ``--store`` (a new SQLite store each run), ``--format csv`` to stdout, and
records wall time and CPU time (user + system of that child, from ``os.wait4``); the median of ``--repeat`` runs.
The digest of the two runs is checked to be the same, and the stored design is read back (``audit list``) to
check it holds every drawn output.

``--code DIR`` runs the ``empathy`` package found in ``DIR`` instead of this checkout (e.g. an export of an older
commit: ``git archive COMMIT empathy | tar -x -C DIR``), to measure a before/after pair on one machine.

Run: ``python bench/bench_audit_draw.py [--per-model 100 200 400 1000] [--repeat 3] [--code DIR]``;
prints the machine, a Markdown table and the CPU per drawn output of the ``--store`` runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pandas as pd
from machine import machine

ROOT = Path(__file__).resolve().parent.parent


def write_data(folder: Path, models: int, items: int) -> tuple[Path, Path]:
    """The outputs CSV and the judge's ratings CSV of ``models`` x ``items`` outputs (labels alternate 0/1)."""
    keys = [(f"item-{i:05d}", f"model-{m:02d}") for m in range(models) for i in range(items)]
    outputs = pd.DataFrame({"item_id": [k[0] for k in keys], "model": [k[1] for k in keys], "task": "news",
                            "reference": [f"Reference account number {i}." for i, _ in enumerate(keys)],
                            "generation": [f"A generated answer number {i}." for i, _ in enumerate(keys)]})
    ratings = pd.DataFrame({"item_id": outputs["item_id"], "model": outputs["model"], "rater": "bench-judge",
                            "dimension": "ca", "value": [i % 2 for i in range(len(keys))]})
    out_path, ratings_path = folder / "outputs.csv", folder / "ratings.csv"
    outputs.to_csv(out_path, index=False)
    ratings.to_csv(ratings_path, index=False)
    return out_path, ratings_path


def run_child(command: list[str], env: dict[str, str], cwd: Path) -> dict[str, object]:
    """Run ``command`` in ``cwd``; wall seconds, CPU seconds of that child (``os.wait4``) and its stdout.

    ``python -m`` puts the working folder first on ``sys.path``: ``cwd`` is the folder whose package runs.
    """
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd)
    chunks: dict[str, bytes] = {}
    # drain both pipes (a full pipe would block the child), then reap it with wait4 for its own rusage
    readers = [threading.Thread(target=lambda n=name, f=pipe: chunks.__setitem__(n, f.read()))
               for name, pipe in (("out", process.stdout), ("err", process.stderr))]
    for reader in readers:
        reader.start()
    for reader in readers:
        reader.join()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"{' '.join(command)} failed ({code}): {chunks['err'].decode()[-2000:]}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "stdout": chunks["out"].decode()}


def signature_digest(stdout: str) -> str:
    """The ``audit:<12 hex>`` field of the CSV's signature line."""
    signature = next(line for line in stdout.splitlines() if "audit:" in line)
    return signature.split("audit:", 1)[1][:12]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-model", type=int, nargs="+", default=[100, 200, 400, 1000])
    parser.add_argument("--models", type=int, default=10)
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--code", type=Path, default=ROOT, help="folder holding the empathy package to run")
    args = parser.parse_args()
    code = args.code.resolve()
    env = {**os.environ, "PYTHONPATH": str(code)}
    print(f"# {machine()}", flush=True)
    print(f"# code: {code}; frame: {args.models} models x {args.items} items", flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        outputs, ratings = write_data(folder, args.models, args.items)
        for per_model in args.per_model:
            base = [sys.executable, "-m", "empathy", "audit", "draw", str(outputs), "--ratings", str(ratings),
                    "--judge", "bench-judge", "--dimension", "ca", "--per-model", str(per_model), "--seed", "1",
                    "--format", "csv"]
            plain, stored = [], []
            for attempt in range(args.repeat):
                plain.append(run_child(base, env, code))
                store = folder / f"store-{per_model}-{attempt}.sqlite"
                stored.append(run_child([*base, "--store", str(store)], env, code))
                listed = json.loads(run_child([sys.executable, "-m", "empathy", "audit", "list", str(outputs),
                                               "--store", str(store), "--format", "json"], env, code)["stdout"])
                n_drawn = per_model * args.models
                if [d["n_drawn"] for d in listed["designs"]] != [n_drawn]:
                    raise SystemExit(f"the store holds {listed['designs']}, not one design of {n_drawn} outputs")
            digests = {signature_digest(r["stdout"]) for r in (*plain, *stored)}  # type: ignore[arg-type]
            if len(digests) != 1:
                raise SystemExit(f"per-model {per_model}: the runs gave different digests {sorted(digests)}")
            row = (per_model * args.models, *(statistics.median(r[k] for r in runs)  # type: ignore[misc]
                                              for runs in (plain, stored) for k in ("wall", "cpu")))
            rows.append(row)
            print(f"# {row[0]} drawn: without --store {row[1]:.2f} s wall / {row[2]:.2f} s CPU; with --store "
                  f"{row[3]:.2f} s wall / {row[4]:.2f} s CPU; load {os.getloadavg()[0]:.2f}", flush=True)
    print()
    print("| drawn outputs | without `--store`: wall (s) | CPU (s) | with `--store`: wall (s) | CPU (s) | "
          "`--store` CPU minus without (s) | per 1,000 drawn (s) |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for drawn, wall, cpu, store_wall, store_cpu in rows:
        extra = store_cpu - cpu
        print(f"| {drawn:,} | {wall:.2f} | {cpu:.2f} | {store_wall:.2f} | {store_cpu:.2f} | {extra:.2f} | "
              f"{extra / drawn * 1000:.3f} |")


if __name__ == "__main__":
    main()
