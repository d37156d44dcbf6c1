"""Benchmark: what one decision costs the server, against Potato 2.12.1 on the same job, in Chromium.

The job (issue 25 item 3): relabel conflict avoidance (CA, 0/1) on 2,000 outputs (10 models x 200 items, 3 LLM
judges: ``bench_relabel_keypress.paper_data``). Each server is driven by Debian's Chromium through Playwright:
open the page, sign in (ours: the sidebar's name; Potato: its login form), a few keys to warm up, then ``--keys``
keys (200) ``--pace`` seconds apart (0.4 s), each a 0 or a 1 for the output on screen when it goes down. Measured
on the server process (``/proc/<pid>/stat``, every thread): its CPU seconds from just before the first timed key
until every key is stored (ours: the queue shows none pending; Potato: its page done loading after the last key,
then 3 s for its background saves), divided by the keys; its peak resident set (``VmHWM``) at the end. Also
counted: the keys stored on the output that was on screen when they went down (read back from each server's own
store: ours from the override store, Potato's from its ``user_state.json`` and annotation exports,
:func:`potato_stored`), and the
seconds from opening the page to the first output on screen.

* **ours**: ``streamlit run app.py`` of this tree (``--baseline REF``: also the tree at a git revision, app and
  package, extracted into a temporary folder, run in the same session, alternating), with ``--decided N``
  decisions by other annotators already in its store (``0,1000,10000``: more decisions than outputs go to more
  annotators, as a team's ledger grows); the data set's texts are parsed into the servers' shared cache first (its
  first analysis is not what is measured: it would fall on the first server only);
* **Potato**: ``potato-annotation==2.12.1`` from PyPI, installed with pip into its own virtualenv
  (``--potato-venv``, default ``$EMPATHY_CACHE_DIR/bench/potato-2.12.1`` or ``~/.cache/empathy/bench/...``), serving
  the same 2,000 outputs (reference and generation as the instance's text) with a radio scheme 0/1 on keys 0 and 1
  and its review mode advancing at once (``delay_ms: 0``, in its favour). When it cannot be installed or started the
  Potato rows say why and the script still measures ours (exit 0).

``--first-item [ROUNDS]``: also the seconds from loading a new 2,000-output data set whose 4,000 texts were never
parsed (an empty distancing cache) to its first output on Relabel, ours only (issue 25 item 5: <= 5 s), on a new
server with compiled modules, from opening the Data page and from pressing *Load from path* (:func:`first_item`).

Run: ``python bench/bench_decision_cost.py [--decided 0,1000,10000] [--keys 200] [--pace 0.4] [--baseline main]
[--first-item [ROUNDS]] [--no-potato]``; prints the machine, the load and a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))
from bench_app_rerun import variant_tree  # noqa: E402
from bench_relabel_keypress import (  # noqa: E402
    CHROMIUM,
    RECORDER,
    decided_by_another,
    open_relabel,
    paper_data,
    peak_rss_mib,
)
from browser_support import stop_app, wait_for_http  # noqa: E402
from machine import machine  # noqa: E402

POTATO = "potato-annotation==2.12.1"
TARGET_MS = 100.0
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (every thread), from ``/proc/<pid>/stat``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime (fields 14 and 15 of proc(5))


# ------------------------------------------------------------------------------------------ Potato

def install_potato(venv: Path) -> tuple[Path | None, str]:
    """``potato`` installed from PyPI into its own virtualenv ``venv`` (kept for the next run); (None, why) when
    it cannot be."""
    exe = venv / "bin" / "potato"
    if exe.exists():
        return exe, ""
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=300)
        done = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", POTATO],
                              capture_output=True, text=True, timeout=1800)
    except (OSError, subprocess.SubprocessError) as error:
        return None, f"cannot create its virtualenv: {error}"
    if done.returncode != 0 or not exe.exists():
        return None, "pip install failed: " + (done.stderr.strip().splitlines() or ["?"])[-1]
    return exe, ""


POTATO_CONFIG = """annotation_task_name: "CA relabel"
task_dir: .
output_annotation_dir: annotation_output/
output_annotation_format: jsonl
data_files:
  - data.jsonl
item_properties:
  id_key: id
  text_key: text
user_config:
  allow_all_users: true
  users: []
require_password: false
alert_time_each_instance: 10000000
review_mode:
  enabled: true
  auto_advance: true
  delay_ms: 0
annotation_schemes:
  - annotation_type: radio
    name: ca
    description: "Conflict avoidance (1 avoids the conflict, 0 engages)"
    labels:
      - name: "0"
        key_value: "0"
      - name: "1"
        key_value: "1"
html_layout: default
base_html_template: default
header_file: default
site_dir: default
"""


def potato_task(folder: Path, data: Path) -> Path:
    """The Potato task of the same outputs (id ``item|model``, text: reference then generation); its folder."""
    import html

    import pandas as pd

    folder.mkdir(parents=True, exist_ok=True)
    outputs = pd.read_csv(data / "outputs.csv", dtype=str, keep_default_na=False)
    with (folder / "data.jsonl").open("w") as handle:
        for row in outputs.itertuples():
            text = f"{html.escape(row.reference)}<br><br>{html.escape(row.generation)}"
            handle.write(json.dumps({"id": f"{row.item_id}|{row.model}", "text": text}) + "\n")
    (folder / "config.yaml").write_text(POTATO_CONFIG)
    return folder


def start_potato(exe: Path, task: Path, port: int, timeout_s: float = 300.0) -> subprocess.Popen:
    """``potato start config.yaml -p PORT`` in ``task``; returns once its login page answers."""
    log = (task / "potato-server.log").open("a")
    process = subprocess.Popen([str(exe), "start", "config.yaml", "-p", str(port)], cwd=task, stdout=log,
                               stderr=subprocess.STDOUT)
    wait_for_http(process, f"http://127.0.0.1:{port}/", name="potato", log_path=task / "potato-server.log",
                  timeout_s=timeout_s, healthy=lambda response: response.status == 200,
                  stop=lambda started: started.kill())
    return process


def _potato_warmup(tab, warmup: int) -> list[dict]:
    """Record every key with the instance on screen when it went down (Potato reloads the page per instance, so
    the record goes to Python at once), then press ``warmup`` keys; returns the record."""
    pressed: list[dict] = []
    tab.context.expose_binding("recordKey", lambda _source, entry: pressed.append(entry))
    tab.context.add_init_script("""
      window.addEventListener('keydown', (ev) => {
        const shown = document.getElementById('instance_id');
        window.recordKey({key: ev.key, instance: shown ? shown.value : null});
      }, true);""")
    tab.reload()
    tab.locator("#instance_id").wait_for(state="attached")
    for k in range(warmup):
        tab.keyboard.press(str(k % 2))
        tab.wait_for_timeout(1500)
    return pressed


def drive_potato(browser, url: str, keys: int, pace: float, warmup: int, pid: int) -> dict:
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    tab = context.new_page()
    tab.set_default_timeout(120_000)
    started = time.perf_counter()
    tab.goto(url + "/")
    tab.fill("#login-email", "bench")
    tab.click("button.potato-form-submit")
    tab.locator("#instance_id").wait_for(state="attached")
    first = time.perf_counter() - started
    pressed = _potato_warmup(tab, warmup)
    pressed.clear()
    return {"first_item": first, **_paced(tab, keys, pace, pid, lambda: _potato_settled(tab)), "pressed": pressed}


def _potato_settled(tab) -> None:
    """Potato's last instance on screen (its page reloads per instance) and 3 s for its background saves."""
    tab.wait_for_function("() => { const s = document.getElementById('loading-state');"
                          " return document.getElementById('instance_id') && s && s.style.display === 'none'; }",
                          timeout=120_000)
    tab.wait_for_timeout(3000)


def potato_stored(task: Path, user: str = "bench") -> dict[str, str]:
    """Potato's saved CA label of each instance for ``user``, by instance id, read from its own files.

    Potato 2.12.1 keeps each user's state in ``annotation_output/<user>/user_state.json``
    (``instance_id_to_label_to_value``: ``{id: [[{"schema": "ca", "name": "1"}, "1"], ...]}``) and exports the
    annotations as JSON lines (``annotation_output/exports/jsonl/annotations.jsonl``: ``{"instance_id", "user_id",
    "labels": {"ca": {"1": "1"}}}``); older versions wrote ``{"id", "label_annotations": {"ca": {...}}}`` lines.
    The user state wins (it is what Potato itself reloads); the exports fill in what it lacks. (The first version of
    this driver read only the old line format, so it counted none of Potato's keys.)
    """
    labels: dict[str, str] = {}
    for path in sorted((task / "annotation_output").rglob("*.jsonl")):
        for line in path.read_text().splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if not isinstance(record, dict) or record.get("user_id", user) != user:
                continue
            instance = record.get("instance_id", record.get("id"))
            chosen = (record.get("labels") or record.get("label_annotations") or {}).get("ca", {})
            if instance is not None and isinstance(chosen, dict) and chosen:
                labels[str(instance)] = str(next(reversed(chosen)))
    state = task / "annotation_output" / user / "user_state.json"
    if state.exists():
        try:
            saved = json.loads(state.read_text()).get("instance_id_to_label_to_value", {})
        except ValueError:
            saved = {}
        for instance, pairs in saved.items():
            chosen = [str(label.get("name")) for label, _value in pairs
                      if isinstance(label, dict) and label.get("schema") == "ca"]
            if chosen:
                labels[str(instance)] = chosen[-1]
    return labels


# ------------------------------------------------------------------------------------------ ours

def _paced(tab, keys: int, pace: float, pid: int, settle) -> dict:
    """``keys`` keys ``pace`` apart (0, 1, 0, ...: each decides the output on screen); the server's CPU from just
    before the first until ``settle()`` returns (every key stored)."""
    before = cpu_seconds(pid)
    start = time.perf_counter()
    for k in range(keys):
        delay = start + k * pace - time.perf_counter()
        if delay > 0:
            time.sleep(delay)  # the pace of an annotator's keys, not a wait for a result
        tab.keyboard.press(str(k % 2))
    settle()
    return {"cpu_s": cpu_seconds(pid) - before, "wall_s": time.perf_counter() - start, "rss_mib": peak_rss_mib(pid)}


def _ours_pending_zero(tab) -> None:
    tab.wait_for_function(
        "() => { const s = document.querySelector('[data-testid=\"relabel-queue-status\"]');"
        " const w = document.querySelector('[data-testid=\"stStatusWidget\"]');"
        " return s && s.getAttribute('data-pending') === '0' && !(w && w.innerText.includes('Running')); }",
        timeout=600_000)


def drive_ours(browser, url: str, folder: Path, keys: int, pace: float, warmup: int, pid: int) -> dict:
    context = browser.new_context(viewport={"width": 1440, "height": 1400})
    context.add_init_script(RECORDER)
    tab = context.new_page()
    tab.set_default_timeout(600_000)
    first = open_relabel(tab, url, folder)
    for k in range(warmup):
        _ours_pending_zero(tab)
        tab.keyboard.press(str(k % 2))
    _ours_pending_zero(tab)
    tab.evaluate("() => { window.__keys = []; }")
    result = _paced(tab, keys, pace, pid, lambda: _ours_pending_zero(tab))
    pressed = tab.evaluate("() => window.__keys.map(k => ({key: k.key, item: k.item, model: k.model}))")
    context.close()
    return {"first_item": first, **result, "pressed": pressed}


def ours_stored(store: Path, folder: Path) -> dict[str, str]:
    """Our stored CA decisions of annotator ``bench`` by ``item|model`` (the value as the key typed it)."""
    from empathy.labels.records import dataset_name
    from empathy.labels.sqlite import OverrideStore

    decisions = OverrideStore(store, read_only=True).decisions(dataset_name(folder / "outputs.csv", store_path=store))
    mine = decisions[(decisions["annotator"] == "bench") & (decisions["dimension"] == "ca")]
    return {f"{r.item_id}|{r.model}": f"{r.value:g}" for r in mine.itertuples()}


def on_the_right_output(pressed: list[dict], stored: dict[str, str], key) -> int:
    """How many of the keys are stored with their value on the output that was on screen when they went down."""
    return sum(1 for entry in pressed if stored.get(key(entry)) == entry["key"])


def _decided_by_another_with(root: Path, folder: Path, store: Path, count: int) -> int:
    """:func:`bench_relabel_keypress.decided_by_another` with the store code of the tree at ``root`` (a subprocess):
    a store made by a newer schema is refused by an older tree, as it should be."""
    if root == ROOT:
        return decided_by_another(folder, store, count)
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import empathy.labels.sqlite, empathy.labels.rules, "
            "empathy.labels.records; sys.path.insert(0, sys.argv[2]); from pathlib import Path; "
            "from bench_relabel_keypress import decided_by_another; "
            "print(decided_by_another(Path(sys.argv[3]), Path(sys.argv[4]), int(sys.argv[5])))")
    done = subprocess.run([sys.executable, "-c", code, str(root), str(ROOT / "bench"), str(folder), str(store),
                           str(count)], capture_output=True, text=True, check=True)
    return int(done.stdout.split()[-1])


def measure_ours(root: Path, work: Path, folder: Path, decided: int, args) -> dict:
    from browser_support import chromium, start_app

    work.mkdir(parents=True, exist_ok=True)
    store = work / "overrides.sqlite"
    rows = _decided_by_another_with(root, folder, store, decided) if decided else 0
    process, url = start_app({"EMPATHY_STORE": str(store), "EMPATHY_CACHE_DIR": str(work.parent / "cache")},
                             work / "streamlit.log", root=root)
    try:
        with chromium() as browser:
            result = drive_ours(browser, url, folder, args.keys, args.pace, args.warmup, process.pid)
    finally:
        stop_app(process)
    stored = ours_stored(store, folder)
    right = on_the_right_output(result.pop("pressed"), stored, lambda e: f"{e['item']}|{e['model']}")
    return {**result, "rows": rows, "right": right}


def measure_potato(work: Path, folder: Path, args) -> dict:
    from browser_support import chromium, free_port

    exe, why = install_potato(Path(args.potato_venv))
    if exe is None:
        return {"skipped": why}
    task = potato_task(work / "potato", folder)
    port = free_port()
    try:
        process = start_potato(exe, task, port)
    except RuntimeError as error:
        return {"skipped": str(error)}
    try:
        with chromium() as browser:
            result = drive_potato(browser, f"http://127.0.0.1:{port}", args.keys, args.pace, args.warmup,
                                  process.pid)
    finally:
        stop_app(process)
    right = on_the_right_output(result.pop("pressed"), potato_stored(task), lambda e: str(e["instance"]))
    return {**result, "right": right}


def first_item(root: Path, work: Path, n_items: int = 200) -> dict[str, float]:
    """Seconds from opening the Data page to each step of loading a new data set of 2,000 outputs with 4,000 texts
    never parsed (an empty distancing cache) and seeing its first output on Relabel
    (:func:`bench_relabel_keypress.open_relabel`'s marks), on a new server.

    The server writes and reads bytecode, as a user's does (this machine's environment sets
    ``PYTHONDONTWRITEBYTECODE``; compiling the app's 50-odd modules from source in every new server is not what
    a user's second start does): the tree is compiled first."""
    import compileall

    from browser_support import chromium, start_app

    for part in ("empathy", "empathy_app", "app_pages", "app.py"):
        target = root / part
        if target.is_dir():
            compileall.compile_dir(target, quiet=1)
        elif target.exists():
            compileall.compile_file(target, quiet=1)
    folder, _ = paper_data(work / "fresh-data", n_items // 200, distinct=True)
    process, url = start_app({"EMPATHY_STORE": str(work / "fresh.sqlite"),
                              "EMPATHY_CACHE_DIR": str(work / "fresh-cache"), "PYTHONDONTWRITEBYTECODE": ""},
                             work / "fresh.log", root=root)
    try:
        with chromium() as browser:
            tab = browser.new_context(viewport={"width": 1440, "height": 1400}).new_page()
            tab.set_default_timeout(900_000)
            marks: dict[str, float] = {}
            open_relabel(tab, url, folder, marks)
            return marks
    finally:
        stop_app(process)


def _row(name: str, result: dict, keys: int) -> str:
    if "skipped" in result:
        return f"| {name} | skipped: {result['skipped']} | | | | | |"
    per = result["cpu_s"] / keys * 1000
    return (f"| {name} | {result.get('rows', 0):,} | **{per:.0f}** | {result['rss_mib']:.0f} | "
            f"{result['right']} of {keys} | {result['first_item']:.1f} | {result['wall_s']:.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decided", default="0,1000,10000")
    parser.add_argument("--keys", type=int, default=200)
    parser.add_argument("--pace", type=float, default=0.4)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--baseline", help="git revision to compare with (same run, alternating)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--no-potato", action="store_true")
    parser.add_argument("--first-item", type=int, nargs="?", const=1, default=0, metavar="ROUNDS",
                        help="also time a new data set's first output on Relabel, ROUNDS times per tree (ABBA)")
    cache = Path(os.environ.get("EMPATHY_CACHE_DIR") or Path.home() / ".cache" / "empathy")
    parser.add_argument("--potato-venv", default=str(cache / "bench" / "potato-2.12.1"))
    args = parser.parse_args()
    if not CHROMIUM.exists():
        raise SystemExit(f"skipped: needs {CHROMIUM}")
    print(f"Machine: {machine()}; load average {', '.join(f'{v:.2f}' for v in os.getloadavg())}")
    lines: list[str] = []
    firsts: list[str] = []
    with tempfile.TemporaryDirectory(prefix="bench-decision-") as tmp:
        work = Path(tmp)
        folder, _ = paper_data(work / "data", 1)
        # the data set's first analysis, into the servers' shared cache: the first server would parse its 4,000
        # texts (spaCy loaded, 100 MiB more at its peak) and the others not
        from bench_app_rerun import _parse_texts

        _parse_texts(folder, work / "cache")
        variants = [("now", ROOT)]
        if args.baseline:
            variants.insert(0, (f"before ({args.baseline})", variant_tree(args.baseline, work / "baseline")))
        for round_ in range(args.rounds):
            for decided in (int(d) for d in args.decided.split(",")):
                for name, root in variants:
                    load = os.getloadavg()[0]
                    result = measure_ours(root, work / f"{name[:6]}-{decided}-{round_}", folder, decided, args)
                    lines.append(_row(f"ours, {name}, {decided:,} decided before", result, args.keys)
                                 + f" {load:.1f} |")
                    print(lines[-1], file=sys.stderr, flush=True)
            if not args.no_potato:
                load = os.getloadavg()[0]
                lines.append(_row("Potato 2.12.1", measure_potato(work / f"potato-{round_}", folder, args), args.keys)
                             + f" {load:.1f} |")
                print(lines[-1], file=sys.stderr, flush=True)
        for round_ in range(args.first_item):
            for name, root in variants if round_ % 2 == 0 else variants[::-1]:  # ABBA: drift in load cancels
                marks = first_item(root, work / f"first-{name[:6]}-{round_}")
                firsts.append(f"| ours, {name} | {marks['page']:.1f} | {marks['first_item']:.1f} | "
                              f"**{marks['first_item'] - marks['load']:.1f}** | {os.getloadavg()[0]:.1f} |")
                print(firsts[-1], file=sys.stderr, flush=True)
    print(f"{args.keys} keys {args.pace * 1000:.0f} ms apart; CPU of the server process per key; load average at the "
          f"end {', '.join(f'{v:.2f}' for v in os.getloadavg())}\n")
    print("| server | decision rows in the ledger before | server CPU per decision (ms) | server peak RSS (MiB) | "
          "keys stored on the output on screen | first output on screen (s) | wall for the keys (s) | load |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    print("\n".join(lines))
    if firsts:
        print("\nA new data set of 2,000 outputs (4,000 texts never parsed), on a new server, seconds from opening the "
              "Data page:\n")
        print("| server | source choice clickable | first output on Relabel | from *Load from path* to the first "
              "output | load |")
        print("|---|---:|---:|---:|---:|")
        print("\n".join(firsts))


if __name__ == "__main__":
    main()
