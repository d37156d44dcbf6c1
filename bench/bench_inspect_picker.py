"""Benchmark: a click of *Next* on Inspect at a lab's scale, in Chromium and in the server (issue 25).

Inspect's output picker is a selectbox: its options go to the browser with every run of the page. This measures,
on a data set of ``--data`` (``lab:N`` of :mod:`bench_app_rerun`: 10 models x N/10 items, 3 judges; 200,000
outputs by default), with its texts parsed into the cache first (the data set's first analysis is not measured):

- **browser**: a new server (``streamlit run app.py`` of the tree), the data set loaded on the Data page by path,
  Inspect opened, then ``--clicks`` clicks of *Next*, each timed until the caption names the next output and
  Streamlit's status widget is gone; with the bytes the page received over the websocket per click;
- **server**: the same clicks in Streamlit's ``AppTest`` (the script runner without the browser): CPU seconds of
  each run and the bytes of the messages it produced, and how many outputs the picker lists.

``--baseline REF`` measures the app at a git revision too (:func:`bench_app_rerun.variant_tree`), in the same run.

Run: ``python bench/bench_inspect_picker.py [--data lab:200000] [--clicks 8] [--baseline REF]``; prints the
machine, the load and a Markdown table. Skips the browser part (saying so) without Debian's Chromium.
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
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))
from bench_app_rerun import _parse_texts, make_data, path_source, variant_tree  # noqa: E402
from bench_relabel_keypress import load_on_data_page  # noqa: E402
from machine import machine  # noqa: E402

CHROMIUM = Path("/usr/bin/chromium")


def browser_clicks(app_root: Path, data: Path, cache: Path, work: Path, clicks: int) -> dict[str, object]:
    """Seconds from each click of *Next* to the next output on screen, and the bytes received per click."""
    from browser_support import chromium, start_app, stop_app

    work.mkdir(parents=True, exist_ok=True)
    process, url = start_app({"EMPATHY_STORE": str(work / "store.sqlite"), "EMPATHY_CACHE_DIR": str(cache),
                              "EMPATHY_SETTINGS": str(work / "settings.json")}, work / "app.log", root=app_root,
                             timeout_s=600)
    received: list[int] = []
    try:
        with chromium() as browser:
            tab = browser.new_context(viewport={"width": 1440, "height": 1400}).new_page()
            tab.set_default_timeout(900_000)
            tab.on("websocket", lambda ws: ws.on("framereceived", lambda payload: received.append(len(payload))))
            load_on_data_page(tab, url, data)
            tab.locator('[data-testid="stSidebarNav"]').get_by_text("Inspect", exact=True).click()
            caption = tab.get_by_text(re.compile(r"^Output \d+ of "))
            caption.first.wait_for()
            seconds, sent = [], []
            for _ in range(clicks):
                shown = int(re.match(r"Output (\d+) of", caption.first.inner_text()).group(1))
                received.clear()
                started = time.perf_counter()
                tab.get_by_role("button", name="Next ▶").click()
                tab.get_by_text(re.compile(rf"^Output {shown + 1} of ")).first.wait_for()
                tab.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')",
                                      timeout=600_000)
                seconds.append(time.perf_counter() - started)
                sent.append(sum(received))
        return {"seconds": seconds, "bytes": sent}
    finally:
        stop_app(process)


def _worker(app_root: Path, data: Path, clicks: int) -> None:
    """In a process of its own (its caches cold): AppTest on Inspect, ``clicks`` clicks of *Next*."""
    sys.path.insert(0, str(app_root))
    os.chdir(app_root)
    from streamlit.runtime import forward_msg_queue
    from streamlit.testing.v1 import AppTest

    produced: list[int] = []
    enqueue = forward_msg_queue.ForwardMsgQueue.enqueue

    def counted(self, message):  # type: ignore[no-untyped-def]
        produced.append(message.ByteSize())
        return enqueue(self, message)

    forward_msg_queue.ForwardMsgQueue.enqueue = counted
    at = AppTest.from_file(str(app_root / "app.py"), default_timeout=3600)
    at.session_state["source"] = path_source(data)
    at.run()
    at.switch_page("app_pages/3_Inspect.py").run()
    if at.exception:
        raise SystemExit(f"Inspect failed: {at.exception[0].value}")
    listed = len(at.selectbox(key="_w_inspect_pick").options)
    cpu, sent = [], []
    for _ in range(clicks):
        produced.clear()
        started = time.process_time()
        at.button(key="inspect_next").click().run()
        cpu.append(time.process_time() - started)
        sent.append(sum(produced))
    print(json.dumps({"listed": listed, "cpu": cpu, "bytes": sent}))


def server_clicks(app_root: Path, data: Path, cache: Path, work: Path, clicks: int) -> dict[str, object]:
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "EMPATHY_STORE": str(work / "apptest.sqlite"), "EMPATHY_CACHE_DIR": str(cache),
           "EMPATHY_SETTINGS": str(work / "apptest-settings.json")}
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", str(app_root), "--folder",
                           str(data), "--clicks", str(clicks)], env=env, capture_output=True, text=True, check=False,
                          cwd=str(app_root))
    if done.returncode != 0:
        raise RuntimeError(f"worker failed for {app_root}:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="lab:200000")
    parser.add_argument("--clicks", type=int, default=8)
    parser.add_argument("--baseline", help="git revision of the app to compare with (same run)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        _worker(Path(args.worker), Path(args.folder), args.clicks)
        return
    print(f"Machine: {machine()}; load average at the start {', '.join(f'{v:.2f}' for v in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="bench-inspect-") as tmp:
        folder = Path(tmp)
        data = make_data(folder / "data", args.data)
        cache = folder / "cache"
        _parse_texts(data, cache)
        variants = [("now", ROOT)]
        if args.baseline:
            variants.insert(0, (f"before ({args.baseline})", variant_tree(args.baseline, folder / "baseline")))
        rows = []
        for name, app_root in variants:
            loads = [os.getloadavg()[0]]
            server = server_clicks(app_root, data, cache, folder / f"work-{len(rows)}", args.clicks)
            browser = (browser_clicks(app_root, data, cache, folder / f"work-{len(rows)}", args.clicks)
                       if CHROMIUM.exists() else None)
            loads.append(os.getloadavg()[0])
            rows.append((name, server, browser, loads))
    print(f"\nInspect at {args.data}, {args.clicks} clicks of Next; medians (range):\n")
    print("| app | outputs listed | browser: click to the next output (s) | bytes received per click | "
          "server: CPU per run (s) | bytes produced per run | load |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for name, server, browser, loads in rows:
        if browser is None:
            shown, received = "skipped: no /usr/bin/chromium", ""
        else:
            shown = (f"{statistics.median(browser['seconds']):.2f} ({min(browser['seconds']):.2f}-"
                     f"{max(browser['seconds']):.2f})")
            received = f"{statistics.median(browser['bytes']):,.0f}"
        print(f"| {name} | {server['listed']:,} | {shown} | {received} | {statistics.median(server['cpu']):.3f} | "
              f"{statistics.median(server['bytes']):,.0f} | {min(loads):.1f}-{max(loads):.1f} |")


if __name__ == "__main__":
    main()
