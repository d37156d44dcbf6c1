"""Benchmark: wall time of the three jobs of issue 16 in Chromium on the demo data, with the load average.

The jobs are driven by ``tests/browser_jobs.py``, the same code as ``tests/test_browser_jobs.py`` (which checks
their answers): (a) the worst SA item of the worst model (Table 6 download on Overview, then Items), (b) 20
CA decisions on Relabel with the visible buttons, (c) the worst example of SA, EGM, CA and LD on Items.

Baseline, measured in the same run: one plain page load (``/`` until the script runner is idle, median of
``--loads``), so each job is also given in page loads, a unit that moves with the machine's load as the jobs
do. Each repeat starts a fresh app server with an empty override store (the distancing cache is shared, so
only the first repeat's first page parses the texts); the load average is read before and after.

Run: ``python bench/bench_browser_jobs.py [--repeats 2] [--loads 5]``; prints a Markdown section.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

import browser_jobs  # noqa: E402


def _page_load(browser, url: str) -> float:
    context = browser.new_context(viewport={"width": 1440, "height": 1600})
    try:
        page = context.new_page()
        start = time.monotonic()
        page.goto(url)
        browser_jobs.settle(page, "Pages")
        return time.monotonic() - start
    finally:
        context.close()


def _screenshot(browser, url: str, target: Path) -> None:
    """Job (a) on a fresh store, then the Items page's filters and table (not the rest of the page) as a PNG."""
    context = browser.new_context(viewport={"width": 1440, "height": 1600})
    try:
        page = context.new_page()
        browser_jobs.job_worst_sa(page, url)
        page.mouse.move(0, 0)  # no hover highlight in the picture
        page.wait_for_timeout(1500)  # the data grid draws on a canvas after the script has finished
        top = page.get_by_text("Search", exact=True).first.bounding_box()
        table = page.locator("[data-testid=stDataFrame]").first.bounding_box()
        target.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(target), clip={"x": table["x"] - 24, "y": top["y"] - 24,
                                                "width": table["width"] + 48,
                                                "height": table["y"] + table["height"] - top["y"] + 48})
    finally:
        context.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=2, help="fresh servers, each running the three jobs")
    parser.add_argument("--loads", type=int, default=5, help="page loads for the baseline per repeat")
    parser.add_argument("--relabel", type=int, default=20, help="CA decisions in job (b)")
    parser.add_argument("--screenshot", type=Path, default=None,
                        help="also save the Items table at the end of job (a) as this PNG (docs/reference/app.md's)")
    args = parser.parse_args()
    if not browser_jobs.CHROMIUM.exists():
        raise SystemExit(f"needs Chromium at {browser_jobs.CHROMIUM}")
    loads_before = os.getloadavg()
    timings: dict[str, list[float]] = {}
    decisions: list[float] = []
    baseline: list[float] = []
    with tempfile.TemporaryDirectory() as folder, browser_jobs.chromium() as browser:
        os.environ.setdefault("EMPATHY_CACHE_DIR", str(Path(folder) / "cache"))
        for repeat in range(args.repeats):
            with browser_jobs.app_server(Path(folder) / f"run{repeat}") as url:
                _page_load(browser, url)  # warm-up: the first visit loads spaCy and analyses the texts
                baseline += [_page_load(browser, url) for _ in range(args.loads)]
                for result in browser_jobs.run_jobs(browser, url, relabel=args.relabel):
                    timings.setdefault(result.name, []).append(result.seconds)
                    if "median_decision_s" in result.answer:
                        decisions.append(result.answer["median_decision_s"])
        if args.screenshot is not None:
            with browser_jobs.app_server(Path(folder) / "screenshot") as url:
                _screenshot(browser, url, args.screenshot)
    loads_after = os.getloadavg()
    unit = statistics.median(baseline)
    print("## Browser jobs (`bench/bench_browser_jobs.py`)\n")
    print(f"Machine: {platform.machine()}, {os.cpu_count()} logical CPUs, Python {platform.python_version()}, "
          f"Linux; load average (1/5/15 min) {loads_before[0]:.1f}/{loads_before[1]:.1f}/{loads_before[2]:.1f} "
          f"before and {loads_after[0]:.1f}/{loads_after[1]:.1f}/{loads_after[2]:.1f} after. {args.repeats} "
          f"repeat(s), each on a fresh server; baseline: one page load, median {unit:.2f} s of "
          f"{len(baseline)}.\n")
    print("| job | median s | max s | in page loads |")
    print("|---|---:|---:|---:|")
    for name, values in sorted(timings.items()):
        median = statistics.median(values)
        print(f"| {name} | {median:.1f} | {max(values):.1f} | {median / unit:.1f} |")
    if decisions:
        print(f"\nMedian time per CA decision in (b) (click to the next item counted): "
              f"{statistics.median(decisions):.2f} s.")


if __name__ == "__main__":
    main()
