"""Benchmark: from a keypress on Relabel to the next output visible *with the CA value on the page updated*.

Measured in a real browser (Debian's chromium driven by Playwright) against ``streamlit run app.py``:

* ``keydown``: the event's own timestamp (``event.timeStamp``), taken by a listener installed before the page's
  scripts (window, capture phase), which also records the output on screen when the key went down;
* ``next item``: the first animation frame after the key at which another output is on screen;
* ``next item + CA``: the moment (polled every animation frame) at which another output is on screen **and**
  the live metric beside the queue says ``Last decision <item> / <model>: CA (<judge>) of <model> <before> →
  <after>``: the metric with this decision is on the page (computed in the browser from the labels now and
  after that the server sent with the window, ``empathy_app.keyqueue.live_state``);
* ``saved + server's CA``: the moment the key is saved and the table on the page is the server's
  recomputation (no key pending in the queue or in the live table): the round trip through Streamlit.

Each key is the opposite of the live judge's label of the output on screen, so CA really changes. Keys are
pressed one at a time (the next one after the page has acknowledged the previous one and drawn its metric), so
this is the latency of one decision, not of a burst (the browser tests cover bursts). A few decisions are made
first and not counted (spaCy model load, first window).

Data: ``paper:K`` = 10 models x 3 LLM judges x (200 K) items rated on CA (texts from a pool of 200 distinct
references and 200 distinct generations, so the first visit's text analysis is not the subject);
``demo:K`` = the demo data replicated K times (``bench_app_rerun.replicate``: item ids ``<id>~<copy>``).

Run: ``python bench/bench_relabel_keypress.py [--scales paper:1,paper:10,demo:1,demo:10,demo:100] [--keys 25]``;
prints one Markdown row per scale, the machine and the load averages.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))
from browser_support import commit_name, stop_app  # noqa: E402
from machine import machine  # noqa: E402

CHROMIUM = Path("/usr/bin/chromium")
TARGET_MS = 250.0

RECORDER = """
window.__keys = [];
window.addEventListener('keydown', (ev) => {
  const shown = document.querySelector('[data-testid="relabel-item"]');
  const entry = {key: ev.key, down: ev.timeStamp, item: shown ? shown.getAttribute('data-item') : null,
                 model: shown ? shown.getAttribute('data-model') : null, frame: null};
  window.__keys.push(entry);
  const check = () => {
    const now = document.querySelector('[data-testid="relabel-item"]');
    if (now && (now.getAttribute('data-item') !== entry.item || now.getAttribute('data-model') !== entry.model)) {
      entry.frame = performance.now();
    } else { requestAnimationFrame(check); }
  };
  requestAnimationFrame(check);
}, true);
"""


def paper_data(folder: Path, scale: int, *, models: int = 10, judges: int = 3, items: int = 200, seed: int = 3,
               distinct: bool = False) -> tuple[Path, str]:
    """10 models x 3 LLM judges x ``items * scale`` items on CA; returns the folder and the live judge.

    ``distinct``: every output's reference and generation are the demo's texts, each with a sentence of its own
    appended (``bench_cli_scaling.variant_sentence``): two distinct texts per output to parse, as in a new data
    set of real outputs (else 200 short references and 200 short generations, repeated).
    """
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    n_items = items * scale
    item_ids = np.array([f"p{i:06d}" for i in range(n_items)])
    names = [f"model{k:02d}" for k in range(models)]
    item_col = np.tile(item_ids, models)
    model_col = np.repeat(names, n_items)
    pool = np.arange(len(item_col)) % 200
    outputs = pd.DataFrame({
        "item_id": item_col, "model": model_col, "task": "counseling",
        "reference": [f"Case {k}: I lost my job last month and I cannot tell my family; I feel ashamed."
                      for k in np.tile(np.arange(n_items), models) % 200],
        "generation": [f"Reply {k}: that is a heavy thing to carry alone; what would you want them to know?"
                       for k in pool]})
    if distinct:
        from bench_cli_scaling import variant_sentence

        from empathy.paths import DEMO_DIR

        demo = pd.read_csv(DEMO_DIR / "outputs.csv", dtype=str, keep_default_na=False)
        own = [variant_sentence(k) for k in range(len(outputs))]
        outputs["reference"] = [demo["reference"].iat[k % len(demo)] + own[k] for k in range(len(outputs))]
        outputs["generation"] = [demo["generation"].iat[k % len(demo)] + own[k] for k in range(len(outputs))]
    outputs.to_csv(folder / "outputs.csv", index=False)
    frames = []
    base = rng.integers(0, 2, len(outputs))
    for j in range(judges):
        flip = rng.random(len(outputs)) < 0.2  # judges agree on about 80 % of the outputs
        frames.append(pd.DataFrame({"item_id": item_col, "model": model_col, "rater": f"judge{j}", "dimension": "ca",
                                    "value": np.where(flip, 1 - base, base), "rater_kind": "llm", "reason": "",
                                    "signature": f"judge{j}-v1"}))
    pd.concat(frames).to_csv(folder / "ratings.csv", index=False)
    return folder, "judge0"


def demo_data(folder: Path, scale: int) -> tuple[Path, str]:
    sys.path.insert(0, str(ROOT / "bench"))
    from bench_app_rerun import replicate

    return replicate(folder, scale), "lexicon"


def start_server(store: Path, log: Path, *, post_script_gc: bool = False) -> tuple[subprocess.Popen, str]:
    """The app on a free port with its own store (tests/browser_support.start_app).

    ``post_script_gc``: Streamlit's full garbage collection after every script run (its default, which the app's
    ``.streamlit/config.toml`` turns off), for the comparison in docs/benchmarks.md.
    """
    sys.path.insert(0, str(ROOT / "tests"))
    from browser_support import start_app

    return start_app({"EMPATHY_STORE": str(store), "PYTHONUNBUFFERED": "1"}, log,
                     options=["--runner.postScriptGC", "true"] if post_script_gc else [])


def peak_rss_mib(pid: int) -> float:
    """The process's peak resident set size so far (``VmHWM`` of /proc/<pid>/status), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _idle(tab, timeout: float) -> None:
    tab.wait_for_function(
        "() => { const s = document.querySelector('[data-testid=\"relabel-queue-status\"]');"
        " const w = document.querySelector('[data-testid=\"stStatusWidget\"]');"
        " return s && s.getAttribute('data-pending') === '0' && !(w && w.innerText.includes('Running')); }",
        timeout=timeout)


def decided_by_another(folder: Path, store: Path, count: int) -> int:
    """Store ``count`` CA decisions (one output each, every judge of it, the opposite of its label) by other
    annotators: a ledger of that size and, in the bench annotator's window, outputs another annotator decided.
    More decisions than outputs go to more annotators (``other``, ``other2``, ...: each decides every output once
    more, as a team of annotators would). Returns the number of decision rows."""
    import pandas as pd

    from empathy.labels.records import dataset_name
    from empathy.labels.rules import make_changes
    from empathy.labels.sqlite import OverrideStore

    outputs = pd.read_csv(folder / "outputs.csv", dtype={"item_id": str, "model": str}, keep_default_na=False)
    ratings = pd.read_csv(folder / "ratings.csv", dtype={"item_id": str, "model": str})
    ratings = ratings[ratings["dimension"] == "ca"]
    name = dataset_name(folder / "outputs.csv", store_path=store)
    target = OverrideStore(store)
    groups = list(ratings.groupby(["item_id", "model"], sort=True))
    rows = 0
    for start in range(0, count, len(groups)):
        annotator = "other" if start == 0 else f"other{start // len(groups) + 1}"
        changes = []
        for (item, model), group in groups[:count - start]:
            value = 1.0 - float(group["value"].iloc[0])
            changes.extend(make_changes(outputs, ratings, item, model, sorted(group["rater"]), "ca", value))
        for first in range(0, len(changes), 500):
            target.set_overrides(name, changes[first:first + 500], annotator=annotator)
        rows += len(changes)
    return rows


def team_store(folder: Path, work: Path, count: int) -> tuple[Path | None, int]:
    """A store of ``count`` decisions by other annotators (:func:`decided_by_another`) to copy to ``work /
    "store.sqlite"`` for each run (:func:`fresh_store`), and its decision rows; ``(None, 0)`` for none. Written in
    ``work`` (the data set's name depends on the store's folder), every write checkpointed into the file, and
    checked to be under the name that store gives the data set."""
    import sqlite3

    from empathy.labels.records import dataset_name
    from empathy.labels.sqlite import OverrideStore

    if not count:
        return None, 0
    template = work / f"template-{count}.sqlite"
    rows = decided_by_another(folder, template, count)
    with sqlite3.connect(template) as connection:  # every write in the file itself, none in its log
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    name = dataset_name(folder / "outputs.csv", store_path=work / "store.sqlite")
    held = OverrideStore(template).decisions()
    if int((held["dataset_id"] == name).sum()) != rows:
        raise RuntimeError(f"the store's {len(held)} decision rows are not all under {name!r}")
    return template, rows


def fresh_store(template: Path | None, work: Path) -> Path:
    """``work / "store.sqlite"``: a copy of ``template`` (:func:`team_store`), or absent (a new store) for ``None``."""
    import shutil

    for leftover in work.glob("store.sqlite*"):
        leftover.unlink()
    store = work / "store.sqlite"
    if template is not None:
        shutil.copy(template, store)
    return store


def team_job(temp: Path, baseline: str | None, scale: int = 1) -> tuple[Path, list[tuple[str, Path]]]:
    """The paper-scale data set (:func:`paper_data`, ``scale`` times the items) in ``temp / "data"``, and the trees
    to run it on: this one, and the tree at the git revision ``baseline`` (extracted into ``temp / "baseline"``)
    when given."""
    from bench_app_rerun import variant_tree

    folder = temp / "data"
    paper_data(folder, scale)
    trees = [("this tree", ROOT)]
    if baseline:
        trees.append((f"baseline ({baseline})", variant_tree(baseline, temp / "baseline")))
    return folder, trees


def worker_result(script: str, args: list[str], root: Path, *, cwd: Path,
                  env: dict[str, str] | None = None) -> dict:
    """``script`` run in a fresh interpreter (``python -c``) with ``args``: its last line of output, as JSON.
    Raises RuntimeError naming the tree ``root`` and the exit code, with the end of the worker's error output."""
    done = subprocess.run([sys.executable, "-c", script, *args], env=env, capture_output=True, text=True,
                          check=False, cwd=str(cwd))
    if done.returncode != 0:
        raise RuntimeError(f"worker failed for {root} (exit {done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(folder: Path, judge: str, keys: int, warmup: int, workdir: Path, decided: int = 0, *,
            post_script_gc: bool = False) -> dict:
    from playwright.sync_api import sync_playwright

    rows = decided_by_another(folder, workdir / "overrides.sqlite", decided) if decided else 0
    process, url = start_server(workdir / "overrides.sqlite", workdir / "streamlit.log",
                                post_script_gc=post_script_gc)
    result: dict = {"ledger_rows": rows}
    timeout = float(os.environ.get("BENCH_TIMEOUT_MS", "1800000"))
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM),
                                                 args=["--no-sandbox", "--disable-gpu"])
            context = browser.new_context(viewport={"width": 1440, "height": 1400})
            context.add_init_script(RECORDER)
            tab = context.new_page()
            tab.set_default_timeout(timeout)
            try:
                return {**result, **_drive(tab, url, folder, judge, keys, warmup, timeout),
                        "peak_rss_mib": peak_rss_mib(process.pid)}
            except Exception:
                tab.screenshot(path=str(workdir / "failure.png"), full_page=True)
                raise
    finally:
        stop_app(process)


def load_on_data_page(tab, url: str, folder: Path) -> tuple[float, float]:
    """Open the Data page, choose a path on this machine, type ``folder`` and press *Load from path*, until the
    data set is loaded; returns the seconds from opening the page until the source choice was clickable and until
    the path was typed."""
    started = time.perf_counter()
    tab.goto(f"{url}/Data")
    choice = tab.get_by_text("Path on this machine", exact=True)
    choice.wait_for()
    page = time.perf_counter() - started
    choice.click()
    box = tab.get_by_label("Folder or outputs file")
    box.fill(str(folder))
    box.press("Tab")
    load = time.perf_counter() - started
    tab.get_by_role("button", name="Load from path").click()
    tab.get_by_text("ratings file(s)", exact=False).first.wait_for()
    return page, load


def open_relabel(tab, url: str, folder: Path, marks: dict[str, float] | None = None) -> float:
    """Load ``folder`` on the Data page, open Relabel, commit the name; seconds until the first output shows.

    ``marks``, when given, receives the seconds of each step from opening the page: ``page`` (the Data page's
    source choice clickable: Streamlit's frontend and the session's first run), ``load`` (*Load from path*
    pressed, the path typed) and ``first_item`` (the first output on Relabel)."""
    started = time.perf_counter()
    page, load = load_on_data_page(tab, url, folder)
    tab.locator('[data-testid="stSidebarNav"]').get_by_text("Relabel", exact=True).click()
    commit_name(tab, "bench")
    tab.locator('[data-testid="relabel-item"]').wait_for()
    seconds = time.perf_counter() - started
    if marks is not None:
        marks.update(page=page, load=load, first_item=seconds)
    return seconds


def _drive(tab, url: str, folder: Path, judge: str, keys: int, warmup: int, timeout: float) -> dict:
    started = time.perf_counter()
    open_relabel(tab, url, folder)
    tab.get_by_text(f"Live CA per model ({judge})", exact=False).first.wait_for()
    first_visit = time.perf_counter() - started  # until the live table is on the page too
    label = re.compile(re.escape(judge) + r": ([01])")
    samples, frames, confirmed = [], [], []
    for k in range(warmup + keys):
        _idle(tab, timeout)
        head = tab.locator('[data-testid="relabel-item"] .rq-head').inner_text()
        found = label.search(head)
        key = "1" if found is None or found.group(1) == "0" else "0"  # flip the judge: CA changes
        count = tab.evaluate("() => window.__keys.length")
        tab.keyboard.press(key)
        done = tab.wait_for_function(
            """([count, judge]) => {
              const k = window.__keys[count];
              if (!k || k.frame === null) return false;
              const want = `Last decision ${k.item} / ${k.model}: CA (${judge}) of ${k.model} `;
              const line = document.querySelector('[data-testid="relabel-live-last"]');
              return line && line.textContent.includes(want) ? performance.now() : false;
            }""", arg=[count, judge], polling="raf", timeout=timeout).json_value()
        # the server's recomputation on the page: the key saved and the table from the server's values
        saved = tab.wait_for_function(
            """() => {
              const s = document.querySelector('[data-testid="relabel-queue-status"]');
              const live = document.querySelector('[data-testid="relabel-live"]');
              return s && live && s.getAttribute('data-pending') === '0'
                && live.getAttribute('data-pending') === '0' ? performance.now() : false;
            }""", polling="raf", timeout=timeout).json_value()
        entry = tab.evaluate("(count) => window.__keys[count]", count)
        if k >= warmup:
            samples.append(done - entry["down"])
            frames.append(entry["frame"] - entry["down"])
            confirmed.append(saved - entry["down"])
    return {"samples": samples, "frames": frames, "confirmed": confirmed, "first_visit": first_visit}


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", default="paper:1,paper:10")
    parser.add_argument("--keys", type=int, default=25)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--decided", type=int, default=0,
                        help="outputs decided by another annotator before the run (a ledger of that size)")
    parser.add_argument("--post-script-gc", action="store_true",
                        help="run the server with Streamlit's garbage collection after every script run (its "
                             "default; the app's config turns it off)")
    args = parser.parse_args()
    if not CHROMIUM.exists():
        raise SystemExit(f"needs {CHROMIUM}")
    print(f"Machine: {machine()}")
    print("| data | outputs | CA rating rows | first visit (s) | next item: median / p90 (ms) | next item + CA "
          "updated: median / p90 (ms) | max (ms) | saved + server's CA on the page: median / p90 (ms) | n | "
          "server peak RSS (MiB) | load avg before | load avg after |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
    for spec in args.scales.split(","):
        kind, _, factor = spec.partition(":")
        scale = int(factor or 1)
        with tempfile.TemporaryDirectory(prefix="bench-relabel-") as tmp:
            work = Path(tmp)
            folder, judge = (paper_data if kind == "paper" else demo_data)(work / "data", scale)
            import pandas as pd

            n_outputs = len(pd.read_csv(folder / "outputs.csv", usecols=["item_id"]))
            ratings = pd.concat(pd.read_csv(p, usecols=["dimension"]) for p in sorted(folder.glob("ratings*")))
            n_ca = int((ratings["dimension"] == "ca").sum())
            before = ", ".join(f"{v:.2f}" for v in os.getloadavg())
            result = measure(folder, judge, args.keys, args.warmup, work, args.decided,
                             post_script_gc=args.post_script_gc)
            after = ", ".join(f"{v:.2f}" for v in os.getloadavg())
        samples, frames = result["samples"], result["frames"]
        label = f"{spec}, {result['ledger_rows']:,} decisions by another" if result["ledger_rows"] else spec
        label += ", gc after every run" if args.post_script_gc else ""
        print(f"| {label} | {n_outputs:,} | {n_ca:,} | {result['first_visit']:.1f} | "
              f"{statistics.median(frames):.0f} / {_quantile(frames, 0.9):.0f} | "
              f"**{statistics.median(samples):.0f}** / {_quantile(samples, 0.9):.0f} | {max(samples):.0f} | "
              f"{statistics.median(result['confirmed']):.0f} / {_quantile(result['confirmed'], 0.9):.0f} | "
              f"{len(samples)} | {result['peak_rss_mib']:.0f} | {before} | {after} |", flush=True)


if __name__ == "__main__":
    main()
