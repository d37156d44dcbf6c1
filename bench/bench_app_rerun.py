"""Benchmark: CPU time of one app rerun per page at 1x, 10x and 100x the demo data, before and after.

What a user waits for after every click or keystroke is a rerun of the page's script. This drives the real
app with Streamlit's ``AppTest`` (the same script runner as ``streamlit run``, without the browser) on the
demo data replicated ``k`` times (every output copied under the item id ``<id>~<copy>``, its ratings with
it; 20 CA overrides in the store), visits every page in turn as one session and measures
``time.process_time()`` (CPU of every thread of the process) of

- the *first visit* of the page (the data set already loaded on Home, so this is the page's own first
  computation: Overview's charts, Agreement's alpha...), and
- a *rerun* of the same page with nothing changed (the median of ``--reruns``): the cost of every click;
- on the pages that compute from the overrides (Overview, Agreement, Workbench), the rerun right after one
  new CA override is written to the store (what the page costs after a relabel: its caches are keyed on the
  overrides, so this is a real recompute, of the changed dimension only where the page allows).

The *baseline* is the app as it was at a git revision (``--baseline REF``: ``app.py``, ``app_pages/`` and
``empathy_app/`` extracted with ``git archive`` into a temporary folder; the ``empathy`` package is the
current one for both), measured in the same run, each variant and scale in a fresh process so no Streamlit
cache is shared. Text analysis (spaCy) hits a shared on-disk distancing cache after the first parse, since
the copies repeat the demo texts; the per-rerun cost does not depend on that.

Run: ``python bench/bench_app_rerun.py --baseline 869f450 [--scales 1,10,100] [--reruns 3]``; prints a
Markdown table.
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
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = ("Home", "app_pages/1_Data.py", "app_pages/2_Overview.py", "app_pages/3_Inspect.py",
         "app_pages/4_Relabel.py", "app_pages/5_Agreement.py", "app_pages/6_Workbench.py", "app_pages/7_Judge.py")
TARGET_S = 1.0


def replicate(folder: Path, scale: int) -> Path:
    """Write the demo data ``scale`` times over (item ids ``<id>~<copy>``) into ``folder``; return it."""
    import pandas as pd

    from empathy.paths import DEMO_DIR

    folder.mkdir(parents=True, exist_ok=True)
    outputs = pd.read_csv(DEMO_DIR / "outputs.csv", dtype=str, keep_default_na=False)
    copies = [outputs.assign(item_id=outputs["item_id"] + ("" if k == 0 else f"~{k}")) for k in range(scale)]
    pd.concat(copies, ignore_index=True).to_csv(folder / "outputs.csv", index=False)
    for path in sorted(DEMO_DIR.glob("ratings*.csv")):
        ratings = pd.read_csv(path, dtype=str, keep_default_na=False)
        copies = [ratings.assign(item_id=ratings["item_id"] + ("" if k == 0 else f"~{k}")) for k in range(scale)]
        pd.concat(copies, ignore_index=True).to_csv(folder / path.name, index=False)
    return folder


def _overrides(store_path: Path, data: Path, count: int = 20) -> None:
    import pandas as pd

    from empathy.labels.records import Change, dataset_id
    from empathy.labels.sqlite import OverrideStore

    outputs = pd.read_csv(data / "outputs.csv", dtype=str, keep_default_na=False)
    ratings = pd.concat([pd.read_csv(p, dtype=str, keep_default_na=False) for p in sorted(data.glob("ratings*"))])
    ca = ratings[ratings["dimension"] == "ca"].drop_duplicates(["item_id", "model", "rater"]).head(count)
    store = OverrideStore(store_path)
    key = dataset_id(outputs)
    for row in ca.itertuples():
        store.set_overrides(key, [Change(row.item_id, row.model, row.rater, "ca", 1.0 - float(row.value))],
                            annotator="bench")


AFTER_OVERRIDE = ("app_pages/2_Overview.py", "app_pages/5_Agreement.py", "app_pages/6_Workbench.py")


def _one_more_override(data: Path, count: int) -> None:
    """Write the ``count``-th next CA override (flip of a judge label) into ``$EMPATHY_STORE``."""
    import pandas as pd

    from empathy.labels.backends import open_store
    from empathy.labels.records import Change, dataset_id

    outputs = pd.read_csv(data / "outputs.csv", dtype=str, keep_default_na=False)
    ratings = pd.read_csv(sorted(data.glob("ratings*"))[0], dtype=str, keep_default_na=False)
    row = ratings[ratings["dimension"] == "ca"].iloc[-1 - count]
    open_store(os.environ["EMPATHY_STORE"]).set_overrides(
        dataset_id(outputs), [Change(row["item_id"], row["model"], row["rater"], "ca", 1.0 - float(row["value"]))],
        annotator="bench")


def worker(app_root: Path, data: Path, reruns: int, pages: list[str]) -> dict[str, dict[str, float]]:
    """Visit ``pages`` in one AppTest session of ``app_root/app.py`` on ``data``; CPU seconds per page."""
    from streamlit.testing.v1 import AppTest

    source = {"kind": "path", "outputs": str(data / "outputs.csv"),
              "ratings": [str(p) for p in sorted(data.glob("ratings*.csv"))]}
    at = AppTest.from_file(str(app_root / "app.py"), default_timeout=3600)
    at.session_state["source"] = source
    at.session_state["annotator"] = "bench"
    results: dict[str, dict[str, float]] = {}
    for page in pages:
        if page != "Home":
            at.switch_page(page)
        start = time.process_time()
        at.run()
        first = time.process_time() - start
        if at.exception:
            raise RuntimeError(f"{page}: {[e.value for e in at.exception]}")
        samples = []
        for _ in range(reruns):
            start = time.process_time()
            at.run()
            samples.append(time.process_time() - start)
        results[page] = {"first": first, "rerun": statistics.median(samples)}
        if page in AFTER_OVERRIDE:
            _one_more_override(data, len(results))
            start = time.process_time()
            at.run()
            results[page]["override"] = time.process_time() - start
    return results


def fmt(value: float) -> str:
    return f"{value:.2f}"


def _baseline_tree(ref: str, folder: Path) -> Path:
    archive = subprocess.run(["git", "archive", ref, "app.py", "app_pages", "empathy_app", ".streamlit"],
                             cwd=ROOT, check=True, capture_output=True).stdout
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def _run_variant(app_root: Path, data: Path, store: Path, cache: Path, reruns: int, pages: list[str]) -> dict:
    env = {**os.environ, "EMPATHY_STORE": str(store), "EMPATHY_CACHE_DIR": str(cache),
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", str(app_root), "--data", str(data),
               "--reruns", str(reruns), "--pages", ",".join(pages)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"worker failed for {app_root}:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", default="1,10,100")
    parser.add_argument("--reruns", type=int, default=3)
    parser.add_argument("--baseline", help="git revision of the app to compare with (same run)")
    parser.add_argument("--baseline-scales", help="scales for the baseline (default: --scales)")
    parser.add_argument("--pages", default=",".join(PAGES))
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    args = parser.parse_args()
    pages = [p for p in args.pages.split(",") if p]
    if args.worker:
        print(json.dumps(worker(Path(args.worker), Path(args.data), args.reruns, pages)))
        return
    scales = [int(s) for s in args.scales.split(",")]
    baseline_scales = [int(s) for s in (args.baseline_scales or args.scales).split(",")]
    load_start = os.getloadavg()
    rows: dict[tuple[str, int], dict] = {}
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        cache = tmp / "cache"
        variants = [("after", ROOT)]
        if args.baseline:
            variants.insert(0, ("before", _baseline_tree(args.baseline, tmp / "baseline")))
        for scale in scales:
            data = replicate(tmp / f"data{scale}", scale)
            for name, app_root in variants:
                if name == "before" and scale not in baseline_scales:
                    continue
                store = tmp / f"store-{name}-{scale}.sqlite"
                _overrides(store, data)
                rows[(name, scale)] = _run_variant(app_root, data, store, cache, args.reruns, pages)
                print(f"done {name} {scale}x", file=sys.stderr, flush=True)
    load_end = os.getloadavg()
    print(f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs; load average "
          f"{load_start[0]:.2f} at the start, {load_end[0]:.2f} at the end; {args.reruns} reruns per page "
          f"(median); CPU seconds (process_time).\n")
    print("| page | scale | first visit before | first visit after | rerun before | rerun after | rerun ratio "
          "| after an override before | after an override after |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for page in pages:
        for scale in scales:
            after = rows[("after", scale)][page]
            before = rows.get(("before", scale), {}).get(page)
            ratio = f"{after['rerun'] / before['rerun']:.3f}" if before and before["rerun"] > 0 else "-"
            changed_before = fmt(before["override"]) if before and "override" in before else "-"
            changed_after = fmt(after["override"]) if "override" in after else "-"
            print(f"| {page.removeprefix('app_pages/')} | {scale}x | {fmt(before['first']) if before else '-'} | "
                  f"{fmt(after['first'])} | {fmt(before['rerun']) if before else '-'} | {fmt(after['rerun'])} | "
                  f"{ratio} | {changed_before} | {changed_after} |")
    largest = rows[("after", max(scales))]
    worst = max(largest[p]["rerun"] for p in pages)
    worst_override = max((largest[p]["override"] for p in pages if "override" in largest[p]), default=0.0)
    verdict = "meets" if worst <= TARGET_S else "MISSES"
    print(f"\nSlowest rerun after, at {max(scales)}x: {worst:.2f} s CPU, which {verdict} the {TARGET_S:.0f} s target; "
          f"slowest rerun after an override: {worst_override:.2f} s CPU.")


if __name__ == "__main__":
    main()
