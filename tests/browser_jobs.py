"""Driving the app in Chromium through the three jobs the tool is for (issue 16), shared by
``tests/test_browser_jobs.py`` (which checks the answers) and ``bench/bench_browser_jobs.py`` (which times them).

The jobs, on the bundled demo data, as a researcher does them with the visible controls only:

(a) *worst SA item of the worst model*: download the results in Table 6 layout on Overview, take the model
    with the largest SA under the Items page's default judge, filter the Items page to that model and read
    the first row (worst SA first);
(b) *relabel 20 CA items*: commit an annotator name on Relabel, then 20 times press the visible ``ca = 0`` or
    ``ca = 1`` button and wait until the progress line counts the decision (whatever the keyboard handling);
(c) *one example of each mechanism*: on Items, sort worst first by SA, EGM, CA and LD in turn and read the output
    the sort opens (the table's top row: that mechanism's worst), with its texts side by side.

Every wait is on a condition (text, the script runner's status) with generous timeouts, never a fixed long
sleep, so a loaded machine makes it slower, not flaky. Timings are wall-clock seconds per job.
"""

from __future__ import annotations

import csv
import io
import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

# CHROMIUM and chromium are re-exported: bench/bench_browser_jobs.py reaches them through this module.
from browser_support import CHROMIUM, WAIT_MS, chromium, commit_name, running_app, settle  # noqa: F401

ANNOTATOR = "jobs-script"


@dataclass
class JobResult:
    """One job's answer and how long it took."""

    name: str
    seconds: float
    answer: dict = field(default_factory=dict)


# ------------------------------------------------------------------------------------------------ server

@contextmanager
def app_server(folder: Path, *, timeout_s: float = 180.0) -> Iterator[str]:
    """``streamlit run app.py`` on a free port with its store, caches and settings in ``folder``; yields the URL.

    The process (started here) is terminated on exit, by its own id.
    """
    folder.mkdir(parents=True, exist_ok=True)
    env = {"EMPATHY_STORE": str(folder / "overrides.sqlite"),
           "EMPATHY_CACHE_DIR": os.environ.get("EMPATHY_CACHE_DIR", str(folder / "cache")),
           "EMPATHY_SETTINGS": str(folder / "settings" / "app-settings.json")}
    with running_app(env, folder / "streamlit.log", timeout_s=timeout_s) as url:
        yield url


def _wait_until(condition: Callable[[], bool], what: str, timeout_s: float = WAIT_MS / 1000) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.1)


def selected(page, label: str) -> str:
    """The value a selectbox labelled ``label`` shows."""
    return page.get_by_label(label, exact=True).first.input_value().strip()


def choose(page, label: str, option: str) -> None:
    """Pick ``option`` in the selectbox or multiselect labelled ``label`` (click, type, click the option)."""
    field_ = page.get_by_label(label, exact=True)
    field_.click()
    field_.fill(option)
    page.get_by_role("option", name=option, exact=True).first.click(timeout=WAIT_MS)


OUTPUT_PICK = "Output (in the table's order)"


def _open_output(page) -> tuple[str, str]:
    """(item_id, model) of the output open on the Items page."""
    value = selected(page, OUTPUT_PICK)
    item, _, model = value.partition(" · ")
    return item.strip(), model.strip()


def pool_tasks(page) -> None:
    """Turn the sidebar's "Pool the tasks" on (the demo holds three tasks, which the app keeps apart by
    default): the jobs ask for the worst model and the worst outputs over the whole demo."""
    label = page.locator("[data-testid=stSidebar] label").filter(has_text="Pool the tasks").first
    label.wait_for(state="visible", timeout=WAIT_MS)
    toggle = label.locator("input").first
    if not toggle.is_checked():
        label.click()
        _wait_until(toggle.is_checked, "the tasks pooled")
    # the page's caption says so once it has rerun pooled (before that the per-task tables are still shown)
    settle(page, "Tasks pooled")


# ------------------------------------------------------------------------------------------------ jobs

def job_worst_sa(page, url: str) -> JobResult:
    """(a) The worst SA item of the worst model, via the Table 6 download and the Items page."""
    page.set_default_timeout(WAIT_MS)
    start = time.monotonic()
    page.goto(f"{url}/Overview")
    settle(page, "Download as the paper's Table 6")
    pool_tasks(page)
    with page.expect_download(timeout=WAIT_MS) as info:
        page.get_by_role("button", name="Download as the paper's Table 6 (CSV)").click()
    rows = list(csv.reader(io.StringIO(Path(info.value.path()).read_text(encoding="utf-8"))))
    page.goto(f"{url}/Items")
    settle(page, "One output")
    sort_label = selected(page, "Worst first by")  # the page's default: SA under its first judge
    judge = sort_label.split("judge", 1)[1].strip()
    column = next(i for i, (scorer, metric) in enumerate(zip(rows[0], rows[1], strict=True))
                  if scorer == judge and metric == "SA")
    values = {row[0]: float(row[column]) for row in rows[2:] if row[column] != ""}
    worst_model = max(values, key=values.get)
    choose(page, "Models", worst_model)
    page.keyboard.press("Escape")
    _wait_until(lambda: _open_output(page)[1] == worst_model, f"the Items page filtered to {worst_model}")
    settle(page)
    item, model = _open_output(page)  # a new filter opens the table's top row: the model's worst SA
    return JobResult("a: worst SA item of the worst model", time.monotonic() - start,
                     {"judge": judge, "model": model, "item_id": item, "sa_of_model": values[worst_model],
                      "table6_header": rows[:2]})


def _decided(page) -> int | None:
    """The Relabel progress line's count of decisions, or ``None`` while it is not shown."""
    for text in page.get_by_text(re.compile(r"\d+ of \d+ decided by you")).all_inner_texts():
        found = re.search(r"(\d+) of \d+ decided by you", text)
        if found:
            return int(found.group(1))
    return None


def _refused(page) -> bool:
    """Whether the Relabel page refused the last key or click (it was for an output no longer on screen)."""
    return page.get_by_text("Refused:", exact=False).count() > 0


def job_relabel(page, url: str, count: int = 20) -> JobResult:
    """(b) Relabel ``count`` CA items with the visible decision buttons, waiting for each to be counted."""
    page.set_default_timeout(WAIT_MS)
    start = time.monotonic()
    page.goto(f"{url}/Relabel")
    settle(page, "Annotator name")
    commit_name(page, ANNOTATOR)  # the sidebar's one name box, a form: typing there never decides
    settle(page, "decided by you")
    _wait_until(lambda: _decided(page) is not None, "the Relabel progress line")
    first = _decided(page)
    decided: list[str] = []
    per_decision = []
    for position in range(count):
        before = _decided(page)
        tick = time.monotonic()
        value = position % 2  # alternate, so the store holds both labels
        for attempt in range(3):
            settle(page)  # the buttons on screen are the current output's (a stale one would be refused)
            clicked = time.monotonic()
            page.get_by_role("button", name=re.compile(rf"^ca\s*=\s*{value}\b")).first.click(timeout=WAIT_MS)
            # a refusal message left from an earlier attempt stays until this click's rerun replaces it
            _wait_until(lambda before=before, clicked=clicked, attempt=attempt: (_decided(page) or -1) > before
                        or (_refused(page) and (attempt == 0 or time.monotonic() - clicked > 5)),
                        f"decision {position + 1} counted")
            if (_decided(page) or -1) > before:
                break
        else:
            raise AssertionError(f"decision {position + 1} was refused three times")
        per_decision.append(time.monotonic() - tick)
        decided.append(str(value))
    settle(page)
    return JobResult(f"b: relabel {count} CA items", time.monotonic() - start,
                     {"first_count": first, "last_count": _decided(page), "values": decided,
                      "median_decision_s": sorted(per_decision)[len(per_decision) // 2],
                      "max_decision_s": max(per_decision)})


#: The mechanisms of job (c), in the paper's order.
MECHANISMS = ("SA", "EGM", "CA", "LD")


def job_mechanisms(page, url: str) -> JobResult:
    """(c) One example of each mechanism: its worst output on Items, texts side by side."""
    page.set_default_timeout(WAIT_MS)
    start = time.monotonic()
    page.goto(f"{url}/Items")
    settle(page, "One output")
    pool_tasks(page)
    judge = selected(page, "Worst first by").split("judge", 1)[1].strip()
    seen = {}
    for metric in MECHANISMS:
        option = "LD" if metric == "LD" else f"{metric} · judge {judge}"
        before = _open_output(page)
        if selected(page, "Worst first by") != option:
            choose(page, "Worst first by", option)
            _wait_until(lambda option=option: selected(page, "Worst first by") == option, f"sorting by {option}")
        # the table's caption names the sort once the page has rerun with it (before that the previous sort's
        # list is still on screen and nothing is stale yet); the output open under it is then the table's top
        # row, the sort's worst (issue 26 item 4: it used to stay the output open before, so the job opened the
        # first row itself and hid that)
        settle(page, f"worst {option} first")
        item, model = _open_output(page)
        # The reference and generation side by side: both headings are on the page with the open output.
        page.get_by_text("Generation", exact=False).first.wait_for(state="visible", timeout=WAIT_MS)
        seen[metric] = {"item_id": item, "model": model, "before": before}
    return JobResult("c: one example of each mechanism", time.monotonic() - start, {"judge": judge, "examples": seen})


def run_jobs(browser, url: str, *, relabel: int = 20) -> list[JobResult]:
    """Run (a), (c), then (b) (relabelling changes CA, so it comes last) in one fresh browser context each."""
    results = []
    for job in (job_worst_sa, job_mechanisms, lambda page, url: job_relabel(page, url, relabel)):
        context = browser.new_context(viewport={"width": 1440, "height": 1600})
        try:
            results.append(job(context.new_page(), url))
        finally:
            context.close()
    return sorted(results, key=lambda r: r.name)
