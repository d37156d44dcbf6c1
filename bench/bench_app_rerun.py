"""Benchmark: CPU time and peak memory of every app page at a lab's scale: first visit, rerun, rerun after a decision.

What a user waits for after every click or keystroke is a rerun of the page's script. This drives the real
app with Streamlit's ``AppTest`` (the same script runner as ``streamlit run``, without the browser), one session
visiting every page of ``app.py``'s navigation in turn (Home, then :func:`empathy_app.frame.navigation`: a page
added to ``app_pages/`` is measured without editing this script), and measures ``time.process_time()`` (CPU of
every thread of the process) of

- the *first visit* of the page (the data set already loaded on Home, and its distinct texts already parsed
  into the distancing disk cache: this is the page's own first computation, after the data set's first analysis);
- a *rerun* of the same page with nothing changed (the median of ``--reruns``): the cost of every click;
- the rerun right after *one decision*: another annotator's CA decision on a new output, written to the store
  (every judge of that output, bound to its text, so it applies), as a team member's key would be.

After each page the process's peak resident set size (``ru_maxrss``) is recorded: the worker's peak is the
app server's memory at that point of the session.

Data (``--data``, comma-separated):

- ``lab:N``: the paper's shape at N outputs: 10 models x N/10 items, 3 LLM judges (``judge0``-``judge2``) rating
  every output on ``e_ref``, ``e_gen``, ``u_ref``, ``u_gen`` and ``ca`` (15 rating rows per output: 3 million at
  200,000 outputs), texts reused from the demo's 3 tasks (the reference of an item is the same for its 10
  models), so the parse of the distinct texts (146) is not what is measured; N = 2,000 is the paper's scale;
- ``demo:K``: the demo data replicated K times (item ids ``<id>~<copy>``; ``--scales K,...`` is the same).

Each variant and data set runs in a fresh process, so no Streamlit cache is shared. The *baseline* is the app
and package as they were at a git revision (``--baseline REF``: ``app.py``, ``app_pages/``, ``empathy_app/`` and
``empathy/`` extracted with ``git archive`` into a temporary folder and imported before the current tree's),
measured in the same run, alternating with the current app per data set.

Run: ``python bench/bench_app_rerun.py --baseline main --data lab:2000,lab:20000,lab:200000 [--reruns 3]
[--pages Overview,Agreement]``;
prints the machine, the load and a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from machine import machine  # noqa: E402

TARGET_RERUN_S = 1.0
TARGET_FIRST_S = 5.0
TARGET_RSS_MIB = 2048.0
#: Outputs decided (CA, every judge) by another annotator before the session starts.
DECIDED_BEFORE = 20


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


def lab_data(folder: Path, n_outputs: int, *, n_models: int = 10, n_judges: int = 3, seed: int = 0) -> Path:
    """Write a paper-shaped data set of ``n_outputs`` outputs (see the module docstring) into ``folder``."""
    import numpy as np
    import pandas as pd

    from empathy.paths import DEMO_DIR

    folder.mkdir(parents=True, exist_ok=True)
    demo = pd.read_csv(DEMO_DIR / "outputs.csv", dtype=str, keep_default_na=False)
    tasks = sorted(demo["task"].unique())
    references = {t: sorted(demo.loc[demo["task"] == t, "reference"].unique()) for t in tasks}
    generations = {t: sorted(demo.loc[demo["task"] == t, "generation"].unique()) for t in tasks}
    n_items = max(1, n_outputs // n_models)
    item = np.repeat(np.arange(n_items), n_models)
    model = np.tile(np.arange(n_models), n_items)
    task = [tasks[k % len(tasks)] for k in item]
    outputs = pd.DataFrame({
        "item_id": [f"i{k:06d}" for k in item], "model": [f"model{m:02d}" for m in model], "task": task,
        "reference": [references[t][(k // len(tasks)) % len(references[t])] for t, k in zip(task, item, strict=True)],
        "generation": [generations[t][(7 * k + m) % len(generations[t])]
                       for t, k, m in zip(task, item, model, strict=True)]})
    outputs.to_csv(folder / "outputs.csv", index=False)
    rng = np.random.default_rng(seed)
    n = len(outputs)
    base = {"e_ref": rng.random(n), "e_gen": rng.random(n), "u_ref": rng.integers(0, 7, n).astype(float),
            "u_gen": rng.integers(0, 7, n).astype(float), "ca": rng.integers(0, 2, n).astype(float)}
    frames = []
    for judge in range(n_judges):
        for dimension, values in base.items():
            if dimension == "ca":  # judges agree on about 80 % of the labels
                values = np.where(rng.random(n) < 0.2, 1.0 - values, values)
            elif dimension.startswith("e_"):
                values = np.clip(values + rng.normal(0, 0.1, n), 0.0, 1.0).round(3)
            else:
                values = np.clip(values + rng.integers(-1, 2, n), 0, None)
            frames.append(pd.DataFrame({"item_id": outputs["item_id"], "model": outputs["model"],
                                        "rater": f"judge{judge}", "dimension": dimension, "value": values,
                                        "rater_kind": "llm", "reason": "", "signature": f"judge{judge}-v1"}))
    pd.concat(frames, ignore_index=True).to_csv(folder / "ratings.csv", index=False)
    return folder


def make_data(folder: Path, spec: str) -> Path:
    """The data set of one ``--data`` entry (``lab:N`` or ``demo:K``) written into ``folder``."""
    kind, _, size = spec.partition(":")
    if kind == "lab":
        return lab_data(folder, int(size))
    if kind == "demo":
        return replicate(folder, int(size or 1))
    raise SystemExit(f"--data: {spec!r} is neither lab:N nor demo:K")


def decisions_file(data: Path, store: Path, count: int, target: Path) -> int:
    """Write ``count`` CA decisions (one output each, every judge, the opposite of the first judge's label, bound
    to the output's text) as JSON lines into ``target``: the first :data:`DECIDED_BEFORE` are stored in ``store``
    now, the others by the worker, one per page. Returns the number stored now."""
    import pandas as pd

    from empathy.labels.records import dataset_name, text_hash

    outputs = pd.read_csv(data / "outputs.csv", dtype=str, keep_default_na=False)
    ratings = pd.concat(pd.read_csv(p, dtype={"item_id": str, "model": str}, keep_default_na=False)
                        for p in sorted(data.glob("ratings*.csv")))
    ca = ratings[ratings["dimension"] == "ca"]
    kinds = ca["rater_kind"].astype(str) if "rater_kind" in ca.columns else pd.Series("llm", index=ca.index)
    ca = ca[kinds.isin(["llm", "lexicon"])]
    texts = outputs.set_index(["item_id", "model"])[["reference", "generation"]]
    chosen = ca.drop_duplicates(["item_id", "model"]).iloc[::max(1, len(ca) // (3 * count))].head(count)
    name = dataset_name(data / "outputs.csv", store_path=store)
    with target.open("w") as handle:
        for row in chosen.itertuples():
            reference, generation = texts.loc[(row.item_id, row.model)]
            mine = ca[(ca["item_id"] == row.item_id) & (ca["model"] == row.model)]
            handle.write(json.dumps({"dataset": name, "changes": [
                {"item_id": row.item_id, "model": row.model, "rater": r.rater, "dimension": "ca",
                 "value": 1.0 - float(row.value), "text_hash": text_hash(reference, generation),
                 "judge_value": float(r.value), "judge_signature": str(r.signature)}
                for r in mine.itertuples()]}) + "\n")
    return _store_decisions(store, target, 0, DECIDED_BEFORE)


def _store_decisions(store: Path | str, source: Path, start: int, count: int) -> int:
    """Store the decisions ``start`` to ``start + count`` of ``source`` (JSON lines) as annotator ``other``."""
    from empathy.labels.backends import open_store
    from empathy.labels.records import Change

    lines = source.read_text().splitlines()[start:start + count]
    target = open_store(str(store))
    for line in lines:
        entry = json.loads(line)
        target.set_overrides(entry["dataset"], [Change(**c) for c in entry["changes"]], annotator="other")
    return len(lines)


def peak_rss_mib() -> float:
    """This process's peak resident set size so far (``ru_maxrss``, KiB on Linux), in MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _timed(at) -> float:
    start = time.process_time()
    at.run()
    return time.process_time() - start


def path_source(data: Path) -> dict[str, object]:
    """The session's data source for the data set written in ``data`` (as the Data page's *Load from path* sets it)."""
    return {"kind": "path", "outputs": str(data / "outputs.csv"),
            "ratings": [str(p) for p in sorted(data.glob("ratings*.csv"))]}


def worker(app_root: Path, data: Path, reruns: int, decisions: Path, only: list[str] | None = None
           ) -> dict[str, dict[str, float]]:
    """Visit every page of ``app_root``'s navigation in one AppTest session on ``data``; CPU seconds per page.

    ``only``: visit Home and the pages whose path contains one of these strings (every page when ``None``)."""
    sys.path.insert(0, str(app_root))  # the variant's empathy_app and empathy, not the current tree's
    from streamlit.testing.v1 import AppTest

    from empathy_app.frame import navigation

    pages = ["Home", *(path for path, _title, _url in navigation(app_root)
                       if only is None or any(part in path for part in only))]
    at = AppTest.from_file(str(app_root / "app.py"), default_timeout=3600)
    at.session_state["source"] = path_source(data)
    at.session_state["annotator"] = "bench"
    results: dict[str, dict[str, float]] = {}
    for number, page in enumerate(pages):
        if page != "Home":
            at.switch_page(page)
        first = _timed(at)
        errors = [str(e.value)[:300] for e in at.exception]
        samples = [_timed(at) for _ in range(reruns)]
        _store_decisions(os.environ["EMPATHY_STORE"], decisions, DECIDED_BEFORE + number, 1)
        decided = _timed(at)
        results[page] = {"first": first, "rerun": statistics.median(samples), "decision": decided,
                         "rss": peak_rss_mib(), "errors": errors + [str(e.value)[:300] for e in at.exception]}
    return results


def variant_tree(ref: str, folder: Path) -> Path:
    """The app and the package at git revision ``ref`` (``app.py``, ``app_pages/``, ``empathy_app/``, ``empathy/``,
    ``.streamlit/`` and, where the revision has it, ``data/``: the demo the app opens on, so that a baseline server
    does the same first work as this tree's) extracted into ``folder``: a baseline run from there imports them
    before this tree's."""
    paths = ["app.py", "app_pages", "empathy_app", "empathy", ".streamlit"]
    if subprocess.run(["git", "ls-tree", "-d", ref, "data"], cwd=ROOT, check=True, capture_output=True).stdout:
        paths.append("data")
    archive = subprocess.run(["git", "archive", ref, *paths], cwd=ROOT, check=True, capture_output=True).stdout
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def _run_variant(app_root: Path, data: Path, store: Path, cache: Path, reruns: int, decisions: Path,
                 pages: str | None = None) -> dict:
    env = {**os.environ, "EMPATHY_STORE": str(store), "EMPATHY_CACHE_DIR": str(cache),
           "EMPATHY_SETTINGS": str(store.parent / f"{store.stem}-settings.json")}
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", str(app_root), "--folder", str(data),
               "--reruns", str(reruns), "--decisions", str(decisions), *(["--pages", pages] if pages else [])]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False, cwd=str(app_root))
    if done.returncode != 0:
        raise RuntimeError(f"worker failed for {app_root}:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _parse_texts(data: Path, cache: Path) -> None:
    """The data set's first analysis: its distinct texts parsed into the distancing disk cache and, where the
    tree has one (:mod:`empathy.dataset_cache`), its files validated into the data set cache."""
    script = ("import sys, pandas as pd; from empathy.distancing import analyze; "
              "o = pd.read_csv(sys.argv[1], dtype=str, keep_default_na=False); "
              "list(analyze(pd.unique(pd.concat([o['reference'], o['generation']])).tolist()))")
    env = {**os.environ, "EMPATHY_CACHE_DIR": str(cache)}
    subprocess.run([sys.executable, "-c", script, str(data / "outputs.csv")], check=True, env=env)
    validate = ("import sys; from pathlib import Path\n"
                "try:\n    from empathy.dataset_cache import load_dataset_cached\n"
                "except ImportError:\n    sys.exit(0)\n"
                "load_dataset_cached(Path(sys.argv[1]), sorted(Path(sys.argv[2]).glob('ratings*.csv')))")
    subprocess.run([sys.executable, "-c", validate, str(data / "outputs.csv"), str(data)], check=True, env=env,
                   cwd=str(ROOT))


def _cell(before: dict | None, after: dict, field: str) -> str:
    now = f"{after[field]:.2f}" if field != "rss" else f"{after[field]:.0f}"
    if before is None:
        return now
    was = f"{before[field]:.2f}" if field != "rss" else f"{before[field]:.0f}"
    return f"{was} → **{now}**"


def report(rows: dict[tuple[str, str], dict], specs: list[str], variants: list[str]) -> None:
    """Print the table (one row per page and data set) and the pages over budget."""
    print("| page | data | first visit (s) | rerun (s) | rerun after one decision (s) | peak RSS after the page "
          "(MiB) |")
    print("|---|---|---:|---:|---:|---:|")
    pages = list(dict.fromkeys(page for (variant, _), result in rows.items() if variant == "after" for page in result))
    for page in pages:
        for spec in specs:
            after = rows[("after", spec)].get(page)
            if after is None:
                continue
            before = rows.get(("before", spec), {}).get(page) if "before" in variants else None
            name = page.removeprefix("app_pages/").removesuffix(".py")
            flag = " (error: " + "; ".join(after["errors"]) + ")" if after["errors"] else ""
            print(f"| {name}{flag} | {spec} | {_cell(before, after, 'first')} | {_cell(before, after, 'rerun')} | "
                  f"{_cell(before, after, 'decision')} | {_cell(before, after, 'rss')} |")
    largest = rows[("after", specs[-1])]
    over = [f"{page.removeprefix('app_pages/')} {field} {value[field]:.2f}"
            for page, value in largest.items() if page != "Home"
            for field, limit in (("first", TARGET_FIRST_S), ("rerun", TARGET_RERUN_S), ("decision", TARGET_RERUN_S))
            if value[field] > limit]
    peak = max(value["rss"] for value in largest.values())
    print(f"\nAt {specs[-1]}: over budget: {', '.join(over) or 'none'}; worker peak {peak:.0f} MiB "
          f"({'within' if peak <= TARGET_RSS_MIB else 'OVER'} {TARGET_RSS_MIB:.0f}).")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="lab:2000,lab:20000", help="lab:N and demo:K entries, comma-separated")
    parser.add_argument("--scales", help="demo:K for each K (the earlier form of --data)")
    parser.add_argument("--reruns", type=int, default=3)
    parser.add_argument("--baseline", help="git revision of the app to compare with (same run)")
    parser.add_argument("--pages", help="visit Home and only the pages whose path contains one of these "
                        "comma-separated strings (e.g. Overview,Agreement); every page by default")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    parser.add_argument("--decisions", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        only = args.pages.split(",") if args.pages else None
        print(json.dumps(worker(Path(args.worker), Path(args.folder), args.reruns, Path(args.decisions), only)))
        return
    specs = [f"demo:{k}" for k in args.scales.split(",")] if args.scales else args.data.split(",")
    print(f"Machine: {machine()}; load average at the start {', '.join(f'{v:.2f}' for v in os.getloadavg())}")
    rows: dict[tuple[str, str], dict] = {}
    with tempfile.TemporaryDirectory(prefix="bench-app-") as folder:
        tmp = Path(folder)
        variants = [("after", ROOT)]
        if args.baseline:
            variants.insert(0, ("before", variant_tree(args.baseline, tmp / "baseline")))
        for spec in specs:
            data = make_data(tmp / spec.replace(":", "-"), spec)
            cache = tmp / f"cache-{spec.replace(':', '-')}"
            _parse_texts(data, cache)
            for name, app_root in variants:
                store = tmp / f"store-{name}-{spec.replace(':', '-')}.sqlite"
                decisions = tmp / f"decisions-{name}-{spec.replace(':', '-')}.jsonl"
                decisions_file(data, store, DECIDED_BEFORE + 40, decisions)
                load = os.getloadavg()[0]
                rows[(name, spec)] = _run_variant(app_root, data, store, cache, args.reruns, decisions, args.pages)
                print(f"done {name} {spec} (load {load:.2f} -> {os.getloadavg()[0]:.2f})", file=sys.stderr,
                      flush=True)
    print(f"Load average at the end {', '.join(f'{v:.2f}' for v in os.getloadavg())}; {args.reruns} reruns per "
          "page (median); CPU seconds (process_time of the AppTest process); before → **after**.\n")
    report(rows, specs, [name for name, _ in variants])
    print("\n" + json.dumps({f"{k[0]}|{k[1]}": v for k, v in rows.items()}))


if __name__ == "__main__":
    main()
