"""Benchmark: ``python -m empathy metrics`` end to end on the demo data scaled to 1x, 10x and 100x (issue 17).

Every copy of the demo data gets distinct texts: copy ``k`` appends one short sentence naming its number to
every reference and generation (and its items are renamed ``ITEM~k``), so the parse cache cannot dedupe the
copies while the texts stay realistic (references still repeat across the models of an item, as in the demo).
The two demo rating files are copied along (same values, renamed items).

Each size runs ``python -m empathy metrics OUTPUTS --ratings R1 --ratings R2 --format json`` as a fresh
process, cold (empty ``EMPATHY_CACHE_DIR``: every distinct text parsed by spaCy) and then warm (same cache
folder, second and later runs), and records wall time, CPU time (user + system of that child, from
``os.wait4``) and the child's peak RSS. Baselines in the same run: ``python -c pass`` and the 1x warm run.
The warm result is checked to equal the cold one.

Run: ``python bench/bench_cli_scaling.py [--scales 1 10 100] [--warm-runs 3]``;
prints a Markdown table, the machine and the load averages.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pandas as pd
from machine import cpu_model

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"


def variant_sentence(copy: int) -> str:
    """The short sentence that makes copy ``copy``'s texts distinct from every other copy's."""
    return f" This account was filed as report {copy + 1}."


def scaled_demo(copies: int, folder: Path) -> tuple[Path, Path, Path, int]:
    """Write the demo outputs and both rating files scaled to ``copies`` copies with distinct texts.

    Returns the outputs path, the two ratings paths and the number of distinct texts.
    """
    outputs = pd.read_csv(DATA / "outputs.csv", dtype=str, keep_default_na=False)
    frames = []
    for copy in range(copies):
        part = outputs.copy()
        sentence = variant_sentence(copy)
        part["item_id"] = part["item_id"] + f"~{copy}"
        part["reference"] = part["reference"] + sentence
        part["generation"] = part["generation"] + sentence
        frames.append(part)
    scaled = pd.concat(frames, ignore_index=True)
    out_path = folder / f"outputs_{copies}x.csv"
    scaled.to_csv(out_path, index=False)
    paths = []
    for name in ("ratings_author.csv", "ratings_lexicon.csv"):
        ratings = pd.read_csv(DATA / name, dtype=str, keep_default_na=False)
        copied = pd.concat([ratings.assign(item_id=ratings["item_id"] + f"~{copy}") for copy in range(copies)],
                           ignore_index=True)
        path = folder / f"{Path(name).stem}_{copies}x.csv"
        copied.to_csv(path, index=False)
        paths.append(path)
    n_texts = len(pd.unique(pd.concat([scaled["reference"], scaled["generation"]])))
    return out_path, paths[0], paths[1], n_texts


# The child's peak RSS is read from its own /proc/self/status (VmHWM, per address space, reset by exec) at
# exit: ru_maxrss of a child counts the parent's resident pages at fork, so it would report this script's size.
_WRAPPER = """
import atexit, runpy, sys
def _report():
    with open('/proc/self/status') as status:
        peak = next(line.split()[1] for line in status if line.startswith('VmHWM'))
    sys.stderr.write('\\nBENCH_VMHWM_KB=' + peak + '\\n')
atexit.register(_report)
if sys.argv[1] == '-c':
    exec(sys.argv[2])
else:
    module = sys.argv[1]
    sys.argv = [sys.argv[0]] + sys.argv[2:]
    runpy.run_module(module, run_name='__main__', alter_sys=True)
"""


def run_child(command: list[str], env: dict[str, str], cwd: Path = ROOT) -> dict[str, object]:
    """Run ``python -m MODULE ARGS`` or ``python -c CODE`` given as ``[python, "-m"|"-c", ...]`` in ``cwd`` (first
    on the child's ``sys.path``: another folder holding an ``empathy/`` runs that version of the package).

    Returns wall seconds, CPU seconds (user + system of that child, from ``os.wait4``), its peak RSS (MiB),
    exit code, stdout and stderr.
    """
    python, flag, *rest = command
    command = [python, "-c", _WRAPPER, *(["-c"] if flag == "-c" else []), *rest]
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd)
    chunks: dict[str, bytes] = {}
    # Drain both pipes (a full pipe would block the child), then reap this child with wait4 for its own rusage.
    readers = [threading.Thread(target=lambda n=name, f=pipe: chunks.__setitem__(n, f.read()))
               for name, pipe in (("out", process.stdout), ("err", process.stderr))]
    for reader in readers:
        reader.start()
    for reader in readers:
        reader.join()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    stdout, stderr = chunks["out"], chunks["err"]
    stderr, _, peak = stderr.rpartition(b"\nBENCH_VMHWM_KB=")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_mib": int(peak) / 1024,
            "rc": process.returncode, "stdout": stdout, "stderr": stderr}


def machine() -> str:
    """CPU model, cores, memory and Python / library versions, for the results section."""
    model = cpu_model()
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    import numpy

    return (f"{model}, {os.cpu_count()} logical CPUs, {memory:.0f} GiB, {platform.system()} {platform.machine()}, "
            f"Python {platform.python_version()}, pandas {pd.__version__}, numpy {numpy.__version__}")


def load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def _result(run: dict[str, object]) -> object:
    """The JSON report without the signature (it names the run's cache-independent settings only)."""
    if run["rc"] != 0:
        raise SystemExit(f"command failed ({run['rc']}): {run['stderr'].decode()[-2000:]}")  # type: ignore[union-attr]
    return json.loads(run["stdout"])  # type: ignore[arg-type]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", type=int, nargs="+", default=[1, 10, 100])
    parser.add_argument("--warm-runs", type=int, default=3)
    parser.add_argument("--baseline-runs", type=int, default=5)
    args = parser.parse_args()
    python = sys.executable
    base_env = {**os.environ, "PYTHONPATH": str(ROOT)}
    rows = []
    print(f"# {machine()}", flush=True)
    print(f"# start: {load()}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        baseline = [run_child([python, "-c", "pass"], base_env) for _ in range(args.baseline_runs)]
        base_wall = statistics.median(r["wall"] for r in baseline)  # type: ignore[misc]
        base_cpu = statistics.median(r["cpu"] for r in baseline)  # type: ignore[misc]
        rows.append(("python -c pass (baseline)", "-", "-", "-", base_wall, base_cpu,
                     max(r["rss_mib"] for r in baseline), load()))  # type: ignore[type-var]
        warm_1x: tuple[float, float] | None = None
        for scale in sorted(set(args.scales)):
            outputs, r1, r2, n_texts = scaled_demo(scale, folder)
            n_outputs = 121 * scale
            cache = folder / f"cache_{scale}x"
            cache.mkdir()
            env = {**base_env, "EMPATHY_CACHE_DIR": str(cache)}
            command = [python, "-m", "empathy", "metrics", str(outputs), "--ratings", str(r1), "--ratings", str(r2),
                       "--format", "json"]
            before = load()
            cold = run_child(command, env)
            cold_result = _result(cold)
            rows.append((f"{scale}x cold", n_outputs, n_texts, "cold", cold["wall"], cold["cpu"], cold["rss_mib"],
                         before))
            print(f"# {scale}x cold: {cold['wall']:.1f} s wall, {cold['cpu']:.1f} s CPU ({before})", flush=True)
            warms = []
            for _ in range(args.warm_runs):
                before = load()
                warm = run_child(command, env)
                if _result(warm) != cold_result:
                    raise SystemExit(f"{scale}x: the warm result differs from the cold one")
                warms.append((warm, before))
            wall = statistics.median(w["wall"] for w, _ in warms)  # type: ignore[misc]
            cpu = statistics.median(w["cpu"] for w, _ in warms)  # type: ignore[misc]
            rss = max(w["rss_mib"] for w, _ in warms)  # type: ignore[type-var]
            if scale == 1:
                warm_1x = (wall, cpu)
            rows.append((f"{scale}x warm (median of {args.warm_runs})", n_outputs, n_texts, "warm", wall, cpu, rss,
                         warms[0][1]))
            print(f"# {scale}x warm: {wall:.1f} s wall, {cpu:.1f} s CPU", flush=True)
        baseline_end = [run_child([python, "-c", "pass"], base_env) for _ in range(args.baseline_runs)]
        end_wall = statistics.median(r["wall"] for r in baseline_end)  # type: ignore[misc]
    print(f"# end: {load()}; python -c pass at the end: {end_wall * 1000:.0f} ms wall")
    print()
    print("| run | outputs | distinct texts | wall (s) | CPU (s) | peak RSS (MiB) | CPU / python -c pass | "
          "CPU / 1x warm | load avg before |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for name, n_outputs, n_texts, _, wall, cpu, rss, before in rows:
        ratio_1x = f"{cpu / warm_1x[1]:.1f}" if warm_1x else "-"
        loadavg = before.removeprefix("load average ")
        if n_outputs == "-":
            print(f"| {name} | - | - | {wall:.3f} | {cpu:.3f} | {rss:.0f} | 1 | - | {loadavg} |")
        else:
            print(f"| {name} | {n_outputs:,} | {n_texts:,} | {wall:.2f} | {cpu:.2f} | {rss:.0f} | "
                  f"{cpu / base_cpu:.0f} | {ratio_1x} | {loadavg} |")


if __name__ == "__main__":
    main()
