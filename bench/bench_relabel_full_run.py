"""Benchmark: a full run of the Relabel page with a team's ledger in the store, against a baseline tree.

A key reruns Relabel's fragment only (``bench_decision_cost.py``); the whole page runs when the annotator opens it,
changes a control above the queue or reloads. This measures that run at ``--decided N`` decisions by other
annotators (``bench_relabel_keypress.decided_by_another`` on the CA job of 2,000 outputs, 3 rows per decision):
in a fresh process per tree (Streamlit's ``AppTest``, the page opened with the data set loaded and a committed
name), the CPU seconds (``resource.getrusage``, user + system of the process) of ``--reruns`` full reruns with
nothing changed, and the process's peak resident set (``ru_maxrss``) at the end. The data set's texts are parsed
and its files validated first (``bench_app_rerun._parse_texts``, shared caches), so that is not what is measured.

``--baseline REF``: the app and package at a git revision (``bench_app_rerun.variant_tree``), run in the same
session; the trees alternate (this, baseline, baseline, this).

Run: ``python bench/bench_relabel_full_run.py [--decided 0,10000] [--reruns 3] [--baseline REF]``; prints the
machine, the load and a Markdown table.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from machine import machine  # noqa: E402

WORKER = r"""
import glob, json, logging, os, resource, sys
root, folder, reruns = sys.argv[1], sys.argv[2], int(sys.argv[3])
sys.path.insert(0, root)
os.chdir(root)
logging.disable(logging.WARNING)
import empathy
assert empathy.__file__.startswith(root), empathy.__file__
from streamlit.testing.v1 import AppTest
page = AppTest.from_file(root + "/app.py", default_timeout=600)
page.session_state["source"] = {"kind": "path", "outputs": folder + "/outputs.csv",
                                "ratings": sorted(glob.glob(folder + "/ratings*.csv"))}
page.session_state["annotator"] = "bench"
page.run()
page.switch_page("app_pages/4_Relabel.py").run()
assert not page.exception, page.exception
def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
costs = []
for _ in range(reruns):
    start = cpu()
    page.run()
    costs.append(cpu() - start)
    assert not page.exception, page.exception
print(json.dumps({"costs": costs, "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}), flush=True)
os._exit(0)  # measured and printed: the interpreter's teardown after AppTest's threads may crash (seen: SIGSEGV)
"""


def run_tree(root: Path, template: Path | None, folder: Path, reruns: int, work: Path) -> dict:
    """One fresh process: Relabel opened on a copy of ``template`` (``None``: a new store), ``reruns`` full runs."""
    from bench_relabel_keypress import fresh_store, worker_result

    store = fresh_store(template, work)
    env = {**os.environ, "EMPATHY_STORE": str(store), "EMPATHY_CACHE_DIR": str(work.parent / "cache"),
           "EMPATHY_SETTINGS": str(work / "settings.json")}
    return worker_result(WORKER, [str(root), str(folder), str(reruns)], root, cwd=root, env=env)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decided", default="0,10000", help="decisions by others in the store, comma-separated")
    parser.add_argument("--reruns", type=int, default=3)
    parser.add_argument("--baseline", default=None, help="a git revision to compare with (same session)")
    args = parser.parse_args(argv)
    from bench_app_rerun import _parse_texts
    from bench_relabel_keypress import team_job, team_store

    with tempfile.TemporaryDirectory(prefix="bench-relabel-run-") as temp:
        temp_path = Path(temp)
        folder, trees = team_job(temp_path, args.baseline)
        work = temp_path / "work"
        work.mkdir()
        _parse_texts(folder, temp_path / "cache")  # the data set's first analysis, shared: not what is measured
        print(f"Machine: {machine()}; load average {os.getloadavg()[0]:.1f} at the start", flush=True)
        print("| tree | decision rows | full run CPU, median (s) | each run (s) | peak RSS (MiB) | load |")
        print("|---|---:|---:|---|---:|---:|")
        for decided in (int(n) for n in args.decided.split(",")):
            template, rows = team_store(folder, work, decided)
            order = trees + trees[::-1] if len(trees) > 1 else trees
            for label, root in order:
                result = run_tree(root, template, folder, args.reruns, work)
                each = ", ".join(f"{cost:.2f}" for cost in result["costs"])
                print(f"| {label} | {rows:,} | {statistics.median(result['costs']):.2f} | {each} | "
                      f"{result['peak_mib']:.0f} | {os.getloadavg()[0]:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
